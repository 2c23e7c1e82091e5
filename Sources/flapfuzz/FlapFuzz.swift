import Foundation

#if FUZZING
/// libFuzzer's driver (from `-sanitize=fuzzer`), run from our own `main`.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

nonisolated(unsafe) var chosen: (@Sendable ([UInt8]) -> Void)?
#endif

/// `flapfuzz TARGET [ARGS…]`. Built with `-sanitize=fuzzer,address -DFUZZING` (see `./fuzz`)
/// it is libFuzzer on TARGET, ARGS going to libFuzzer; built plainly it replays the files and
/// folders in ARGS through TARGET (a regression run over the corpus) and prints how many.
@main
enum FlapFuzz {
    static func main() {
        var arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = FuzzTargets.all[arguments[1]] else {
            FileHandle.standardError.write(Data("usage: flapfuzz TARGET [ARGS…]; targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", "))\n".utf8))
            exit(2)
        }
        arguments.remove(at: 1)
        #if FUZZING
        chosen = target
        var argc = Int32(arguments.count)
        var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let status = pointers.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var argv = buffer.baseAddress
            return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                chosen!(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                return 0
            }
        }
        exit(status)
        #else
        var count = 0
        for path in arguments.dropFirst() {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            let files = isFolder.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 } : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                target(Array(data))
                count += 1
            }
        }
        print("\(count) inputs replayed")
        #endif
    }
}
