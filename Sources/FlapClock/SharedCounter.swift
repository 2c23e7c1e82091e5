import CRealtime

/// 64-bit counters in memory that threads share (a mapped file's, or an allocation): added to
/// by one thread (the conductor's: a relaxed atomic add, no fence, no system call, no
/// allocation) and read by others, never torn and never a data race.
public enum SharedCounter {
    @inline(__always) public static func add(_ n: UInt64, to counter: UnsafeMutablePointer<UInt64>) { flap_counter_add(counter, n) }
    @inline(__always) public static func load(_ counter: UnsafeMutablePointer<UInt64>) -> UInt64 { flap_counter_load(counter) }
}
