import Foundation
import Testing

/// The libgpiod shim (Sources/CGPIOD/shim.h) speaks libgpiod v1 (bookworm, built here) and v2
/// (trixie): `hardware/sim/shim-check.c` is compiled against each — v2 from trixie's packages,
/// unpacked by `hardware/sim/fetch-libgpiod-v2` — and both run on the kernel's gpio-sim in a
/// QEMU guest: chip lines, outputs as the chip sees them, a busy line, a missing chip, inputs
/// with pull-up bias and their edges. Both must see exactly the same.
@Suite struct GPIOShimTests {
    static let expected = [
        "lines 8", "missing-chip 2", "outputs-start 000", "outputs-a 101", "outputs-b 011", "busy 16",
        "inputs-start 11", "no-edge 0", "edge-1 1 line 0 rising 0 stamped 1", "edge-2 1 line 0 rising 1",
        "edge-3 1 line 1 rising 0", "inputs-end 10", "done",
    ]

    @Test(.timeLimit(.minutes(10)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func theShimBehavesTheSameOnLibgpiodV1AndV2() async throws {
        let dir = try scratchDirectory("flap-shim")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sim = QEMUGuest.repository.path + "/hardware/sim"
        let fetch = try FlapdProcess([sim + "/fetch-libgpiod-v2"], executable: "/bin/bash")
        #expect(await fetch.waitForExit() == 0, "\(fetch.stderr)")
        let v2 = fetch.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let shim = QEMUGuest.repository.path + "/Sources/CGPIOD"
        let lib = v2 + "/usr/lib/x86_64-linux-gnu"
        for (name, flags) in [("v1", ["-I", shim]), ("v2", ["-I", v2 + "/usr/include", "-I", shim, "-L", lib, "-Wl,-rpath," + lib])] {
            let cc = try FlapdProcess(["-O1", "-Wall", "-Wextra", "-Werror"] + flags + ["-o", "\(dir)/shim-check-\(name)", sim + "/shim-check.c", "-lgpiod"],
                                      executable: "/usr/bin/cc")
            #expect(await cc.waitForExit() == 0, "\(name): \(cc.stderr)")
        }
        let modules = try FlapdProcess([sim + "/build-gpio-sim", dir], executable: "/bin/bash")
        #expect(await modules.waitForExit() == 0, "\(modules.stderr)")
        let guest = try await QEMUGuest(dir: dir, script: """
            insmod /configfs.ko && insmod /gpio-sim.ko && mount -t configfs none /sys/kernel/config
            b=/sys/kernel/config/gpio-sim/b
            mkdir $b $b/bank0 && echo 8 > $b/bank0/num_lines && echo 1 > $b/live
            sim=/sys/devices/platform/$(cat $b/dev_name)/$(cat $b/bank0/chip_name)
            /shim-check-v1 /dev/$(cat $b/bank0/chip_name) $sim | sed 's/^/V1 /'
            echo 0 > $b/live && echo 1 > $b/live
            /shim-check-v2 /dev/$(cat $b/bank0/chip_name) $sim | sed 's/^/V2 /'
            """, files: ["\(dir)/shim-check-v1", "\(dir)/shim-check-v2", "\(dir)/gpio-sim.ko", "\(dir)/configfs.ko"])
        let qemu = try guest.boot(memoryMB: 512)
        #expect(await qemu.waitForExit() == 0, "\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)
        for v in ["V1", "V2"] {
            let seen = console.filter { $0.hasPrefix("\(v) CHECK ") }.map { String($0.dropFirst("\(v) CHECK ".count)) }
            #expect(seen == ["api \(v.lowercased())"] + Self.expected, "\(qemu.stdout)")
        }
    }
}
