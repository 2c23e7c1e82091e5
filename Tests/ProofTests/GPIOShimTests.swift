import EndToEndSupport
import Foundation
import Testing

/// The libgpiod shim (Sources/CGPIOD/shim.h) speaks libgpiod v1 (bookworm, built here) and v2
/// (trixie): `hardware/sim/shim-check.c` is compiled against each — v2 from trixie's packages,
/// unpacked by `hardware/sim/fetch-libgpiod-v2` — and both run on the kernel's gpio-sim in a
/// QEMU guest: chip lines, outputs as the chip sees them, a busy line, a missing chip, inputs
/// with pull-up bias and their edges. Both must see exactly the same.
@Suite struct GPIOShimTests {
    static let expected = [
        "lines 8", "missing-chip 2", "outputs-start 110", "outputs-a 101", "outputs-b 011", "busy 16",
        "inputs-start 11", "no-edge 0", "edge-1 1 line 0 rising 0 stamped 1", "edge-2 1 line 0 rising 1",
        "edge-3 1 line 1 rising 0", "inputs-end 10", "done",
    ]

    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func theShimBehavesTheSameOnLibgpiodV1AndV2() async throws {
        let dir = try scratchDirectory("flap-shim")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sim = QEMUGuest.repository.path + "/hardware/sim"
        let fetch = try FlapdProcess([sim + "/fetch-libgpiod-v2"], executable: "/bin/bash")
        #expect(await fetch.waitForSlowExit() == 0, "\(fetch.stderr)")
        let v2 = fetch.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let shim = QEMUGuest.repository.path + "/Sources/CGPIOD"
        let lib = v2 + "/usr/lib/x86_64-linux-gnu"
        for (name, flags) in [("v1", ["-I", shim]), ("v2", ["-I", v2 + "/usr/include", "-I", shim, "-L", lib, "-Wl,-rpath," + lib])] {
            let cc = try FlapdProcess(["-O1", "-Wall", "-Wextra", "-Werror"] + flags + ["-o", "\(dir)/shim-check-\(name)", sim + "/shim-check.c", "-lgpiod"],
                                      executable: "/usr/bin/cc")
            #expect(await cc.waitForExit() == 0, "\(name): \(cc.stderr)")
        }
        let modules = try await QEMUGuest.gpioSimModules(into: dir)
        let guest = try await QEMUGuest(dir: dir, script: QEMUGuest.gpioSim(lines: 8) + """
            /shim-check-v1 /dev/$chip $sim | sed 's/^/V1 /'
            echo 0 > $b/live && echo 1 > $b/live
            /shim-check-v2 /dev/$chip $sim | sed 's/^/V2 /'
            """, files: ["\(dir)/shim-check-v1", "\(dir)/shim-check-v2"] + modules)
        let qemu = try guest.boot(memoryMB: 512)
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)
        for v in ["V1", "V2"] {
            let seen = console.filter { $0.hasPrefix("\(v) CHECK ") }.map { String($0.dropFirst("\(v) CHECK ".count)) }
            #expect(seen == ["api \(v.lowercased())"] + Self.expected, "\(qemu.stdout)")
        }
    }

    /// flapd's own GPIO code (the `FlapGPIO` module, through the shim) built with SwiftPM against
    /// trixie's libgpiod 2.x — pkg-config pointed at the unpacked packages, a build folder of its
    /// own (`.build-v2`) — and run in the guest on gpio-sim: `flapgpio bench` writes the lines
    /// through v2 and a missing chip is named as on v1.
    @Test(.timeLimit(.minutes(45)), .enabled(if: QEMUGuest.hostIsX86_64, "the QEMU guest is x86_64: runs on x86_64 hosts only"))
    func flapGPIOBuiltAgainstLibgpiodV2DrivesTheSimulator() async throws {
        let dir = try scratchDirectory("flap-v2")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let repo = QEMUGuest.repository.path, sim = repo + "/hardware/sim"
        let fetch = try FlapdProcess([sim + "/fetch-libgpiod-v2"], executable: "/bin/bash")
        #expect(await fetch.waitForSlowExit() == 0, "\(fetch.stderr)")
        let v2 = fetch.stdout.trimmingCharacters(in: .whitespacesAndNewlines), lib = v2 + "/usr/lib/x86_64-linux-gnu"
        let env = ["PKG_CONFIG_PATH": lib + "/pkgconfig", "PKG_CONFIG_SYSROOT_DIR": v2]
        let build = try FlapdProcess(["swift", "build", "--package-path", repo, "--build-path", repo + "/.build-v2", "--product", "flapgpio"],
                                     environment: env, executable: "/usr/bin/env")
        #expect(await build.waitForSlowExit() == 0, "\(build.stdout)\n\(build.stderr)")
        try FileManager.default.copyItem(atPath: repo + "/.build-v2/debug/flapgpio", toPath: dir + "/flapgpio-v2")
        let modules = try await QEMUGuest.gpioSimModules(into: dir)
        let script = QEMUGuest.gpioSim(lines: 8) + """
            export LD_LIBRARY_PATH=\(lib)
            /flapgpio-v2 bench --chip $chip --lines 0,1,2 --count 2000
            /flapgpio-v2 bench --chip gpiochip9 --lines 0 2>&1
            """
        try script.write(toFile: dir + "/script", atomically: true, encoding: .utf8)
        // build-guest finds libgpiod.so.3 for the binary through LD_LIBRARY_PATH and copies it in.
        let guestBuild = try FlapdProcess([sim + "/build-guest", dir, dir + "/script", dir + "/flapgpio-v2"] + modules,
                                          environment: ["LD_LIBRARY_PATH": lib], executable: "/bin/bash")
        #expect(await guestBuild.waitForSlowExit() == 0, "\(guestBuild.stderr)")
        let qemu = try QEMUGuest(built: dir).boot(memoryMB: 512)
        #expect(await qemu.waitForSlowExit() == 0, "\(qemu.stderr)")
        let console = qemu.stdout.components(separatedBy: .newlines)
        #expect(console.contains { $0.hasPrefix("FLAPGPIO {\"libgpiod\":\"v2\",\"lines\":3,\"writes\":2000") }, "\(qemu.stdout)")
        #expect(console.contains("flapgpio: no GPIO chip gpiochip9 (/dev/gpiochip9 does not exist; `gpiodetect` lists the chips)"), "\(qemu.stdout)")
    }
}
