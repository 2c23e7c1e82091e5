import Foundation

/// A QEMU guest of the hardware-in-the-loop tests: Debian's amd64 kernel (or trixie's arm64 one,
/// for the aarch64 build) and an initramfs holding the given files, whose script runs and powers
/// off (`hardware/sim/build-guest`).
public struct QEMUGuest {
    /// What the guest is: an x86_64 machine with the host's builds, or an aarch64 `virt` machine
    /// with builds made against `sysroot` (packaging/build-arm64).
    public enum Machine: Equatable {
        case amd64
        case arm64(sysroot: String)
    }

    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The guest runs the host's own x86_64 builds, so the host must be x86_64 (these machines
    /// and CI are); an arm64 Pi would need an aarch64 guest, which is not written yet.
    public static var hostIsX86_64: Bool {
        #if arch(x86_64)
        true
        #else
        false
        #endif
    }

    /// The flapd an amd64 guest runs: the wall's release build (`packaging/build-wall`, what the
    /// package ships), brought up to date with the tree once per test run — as PackageTests does;
    /// never its first build (that is `./setup --test`'s). Under TCG a debug flapd took 10 s to
    /// start its API where this one takes 2, and a GPIO stop scene 28 s of QEMU where this one
    /// takes 22.
    public static let releaseFlapd = Task<String, any Error> {
        let build = try FlapdProcess([repository.path + "/packaging/build-wall"], executable: "/bin/bash")
        guard await build.waitForExit(within: 3600) == 0 else { throw HarnessError("packaging/build-wall failed: \(build.stderr.suffix(3000))") }
        guard let path = build.stdout.split(separator: "\n").last.map(String.init) else { throw HarnessError("packaging/build-wall named no binary") }
        return path
    }

    /// A program built beside flapd (flapserial, flapgpio …).
    public static func sibling(_ name: String) -> String {
        URL(fileURLWithPath: FlapdProcess.executable).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Builds the kernel's gpio-sim (and configfs.ko) for the guest's kernel into `dir`
    /// (`hardware/sim/build-gpio-sim`, cached); the paths of the two modules.
    public static func gpioSimModules(into dir: String, machine: Machine = .amd64) async throws -> [String] {
        let arch = machine == .amd64 ? [] : ["--arch", "arm64"]
        let build = try FlapdProcess([repository.path + "/hardware/sim/build-gpio-sim"] + arch + [dir], executable: "/bin/bash")
        guard await build.waitForSlowExit() == 0 else { throw HarnessError("build-gpio-sim failed: \(build.stderr)") }
        return [dir + "/gpio-sim.ko", dir + "/configfs.ko"]
    }

    /// Guest shell lines that load those modules and make a gpio-sim chip of `lines` lines:
    /// `$b` is its configfs folder, `$chip` its name, `$sim` its sysfs folder (sim_gpioN/…).
    public static func gpioSim(lines: Int) -> String {
        """
        insmod /configfs.ko && insmod /gpio-sim.ko && mount -t configfs none /sys/kernel/config
        b=/sys/kernel/config/gpio-sim/board
        mkdir $b $b/bank0 && echo \(lines) > $b/bank0/num_lines && echo flapsim > $b/bank0/label && echo 1 > $b/live
        chip=$(cat $b/bank0/chip_name)
        sim=/sys/devices/platform/$(cat $b/dev_name)/$chip

        """
    }

    public let dir: String
    public let machine: Machine

    /// Builds the guest in `dir`: `script` is run by its /bin/sh; `files` land in its /.
    public init(dir: String, script: String, files: [String], machine: Machine = .amd64) async throws {
        self.dir = dir
        self.machine = machine
        try script.write(toFile: dir + "/script", atomically: true, encoding: .utf8)
        var arch: [String] = []
        if case .arm64(let sysroot) = machine { arch = ["--arch", "arm64", "--sysroot", sysroot] }
        let build = try FlapdProcess([Self.repository.path + "/hardware/sim/build-guest"] + arch + [dir, dir + "/script"] + files, executable: "/bin/bash")
        guard await build.waitForSlowExit() == 0 else { throw HarnessError("build-guest failed: \(build.stderr)") }
    }

    /// A guest already built in `dir` (by `hardware/sim/build-guest`).
    public init(built dir: String) { self.dir = dir; self.machine = .amd64 }

    /// Boots it; its console is stdout. `serial`: QEMU arguments for a second UART.
    public func boot(memoryMB: Int = 1024, cpus: Int = 1, extra: [String] = []) throws -> FlapdProcess {
        if machine != .amd64 {
            return try FlapdProcess([
                "-M", "virt", "-cpu", "cortex-a72", "-accel", "tcg", "-m", "\(memoryMB)", "-smp", "\(cpus)", "-display", "none", "-no-reboot", "-monitor", "none",
                "-kernel", dir + "/kernel", "-initrd", dir + "/initrd.cpio", "-append", "console=ttyAMA0 panic=-1 quiet",
                "-serial", "stdio",
            ] + extra, executable: "/usr/bin/qemu-system-aarch64")
        }
        return try FlapdProcess([
            "-accel", "tcg", "-cpu", "max", "-m", "\(memoryMB)", "-smp", "\(cpus)", "-display", "none", "-no-reboot", "-monitor", "none",
            "-kernel", dir + "/kernel", "-initrd", dir + "/initrd.cpio", "-append", "console=ttyS0 panic=-1 quiet no_timer_check",
            "-serial", "stdio",
        ] + extra, executable: "/usr/bin/qemu-system-x86_64")
    }
}
