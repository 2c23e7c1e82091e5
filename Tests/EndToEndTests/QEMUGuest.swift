import Foundation

/// A QEMU guest of the hardware-in-the-loop tests: Debian's amd64 kernel and an initramfs
/// holding the given files, whose script runs and powers off (`hardware/sim/build-guest`).
struct QEMUGuest {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The guest runs the host's own x86_64 builds, so the host must be x86_64 (these machines
    /// and CI are); an arm64 Pi would need an aarch64 guest, which is not written yet.
    static var hostIsX86_64: Bool {
        #if arch(x86_64)
        true
        #else
        false
        #endif
    }

    /// A program built beside flapd (flapserial, flapgpio …).
    static func sibling(_ name: String) -> String {
        URL(fileURLWithPath: FlapdProcess.executable).deletingLastPathComponent().appendingPathComponent(name).path
    }

    let dir: String

    /// Builds the guest in `dir`: `script` is run by its /bin/sh; `files` land in its /.
    init(dir: String, script: String, files: [String]) async throws {
        self.dir = dir
        try script.write(toFile: dir + "/script", atomically: true, encoding: .utf8)
        let build = try FlapdProcess([Self.repository.path + "/hardware/sim/build-guest", dir, dir + "/script"] + files, executable: "/bin/bash")
        guard await build.waitForExit() == 0 else { throw HarnessError("build-guest failed: \(build.stderr)") }
    }

    /// A guest already built in `dir` (by `hardware/sim/build-guest`).
    init(built dir: String) { self.dir = dir }

    /// Boots it; its console is stdout. `serial`: QEMU arguments for a second UART.
    func boot(memoryMB: Int = 1024, cpus: Int = 1, extra: [String] = []) throws -> FlapdProcess {
        try FlapdProcess([
            "-accel", "tcg", "-cpu", "max", "-m", "\(memoryMB)", "-smp", "\(cpus)", "-display", "none", "-no-reboot", "-monitor", "none",
            "-kernel", dir + "/vmlinuz", "-initrd", dir + "/initrd.cpio", "-append", "console=ttyS0 panic=-1 quiet",
            "-serial", "stdio",
        ] + extra, executable: "/usr/bin/qemu-system-x86_64")
    }
}
