// swift-tools-version: 6.2
import PackageDescription

// Swift 6.2's package manager cannot resolve Hummingbird 2.28 (`product 'Configuration' required
// by package 'hummingbird' target 'HummingbirdTLS' not found`, a package-trait bug of 6.2.x). With
// a 6.2 toolchain — Debian's swiftlang, which builds flapd for the Pi (packaging/build-arm64) —
// the graph is flapd and the wall's tools alone: no flaphub, no hub-backed fuzz targets or tests.
#if compiler(>=6.3)
let withHub = true
#else
let withHub = false
#endif

let package = Package(
    name: "flapboard",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "flapd", targets: ["flapd"]),
        .executable(name: "flapbench", targets: ["flapbench"]),
        .executable(name: "hubbench", targets: ["hubbench"]),
        .executable(name: "flaphub", targets: ["flaphub"]),
        .executable(name: "flapserial", targets: ["flapserial"]),
        .executable(name: "flapgpio", targets: ["flapgpio"]),
        .library(name: "FlapCore", targets: ["FlapCore", "FlapMessages"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // One trait, not Hummingbird's two defaults: with two, SwiftPM 6.3 writes their defines
        // (-DConfigurationSupport, -DFullFoundation) in an order that changes from one run to the
        // next, so `swift test` after `swift build --build-tests` (or any two builds) compiled
        // Hummingbird's modules again one time in two. Its other trait, swift-configuration's
        // readers for Hummingbird's settings, is not used here.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // System libraries: one header shim each, nothing else.
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CSerialPort", pkgConfig: "libserialport", providers: [.apt(["libserialport-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),

        // The release a binary is: its version, and the commit its tree was at (a build plugin).
        .plugin(name: "ReleaseCommit", capability: .buildTool()),
        .target(name: "FlapRelease", plugins: ["ReleaseCommit"]),
        // The pure middle: glyphs, drums, frames, layout, planner. No I/O, no clocks.
        .target(name: "FlapCore"),
        // Messages and where they show: the inbox, zones and the router, the composer, VBML, the
        // message API's frames — pure Swift, no I/O, no clocks.
        .target(name: "FlapMessages", dependencies: ["FlapCore", "FlapInput"]),
        // Checks of hostile input before any decoder sees it: strict JSON within limits.
        .target(name: "FlapInput"),
        // The budget a YAML config is read within (size, nesting, aliases expanded), before Yams
        // composes it: flapd's config and flaphub's.
        .target(name: "FlapYAML", dependencies: [.product(name: "Yams", package: "Yams")]),
        // The front door of the project's HTTP servers: connection limits, a deadline for the
        // first request head, a clear answer to what the HTTP parser refuses.
        .target(name: "FlapDoor", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),
        // Clocks and threads every timed part shares: the monotonic clock, deadline sleeps, the
        // real-time class of timing threads, output queues, lateness histograms, mapped files.
        .target(name: "FlapClock", dependencies: ["CRealtime"]),
        // The conductor: a real-time thread firing flip events at absolute deadlines.
        .target(name: "FlapTiming", dependencies: ["FlapCore", "FlapClock"]),
        .target(name: "CRealtime"),
        // What a board's hardware is, as the config file describes it and the outputs read it:
        // GPIO wiring, serial line settings, the clack's options and model. Plain values, no I/O.
        .target(name: "FlapWiring", dependencies: ["FlapCore"]),
        // The clack: synthesis, mixing, and ALSA playback on a thread of its own.
        .target(name: "FlapSound", dependencies: ["FlapCore", "FlapClock", "FlapWiring", "CALSA"]),
        // Serial module buses: flapbus, the open splitflap protocol, salvaged station modules.
        .target(name: "FlapSerial", dependencies: ["FlapCore", "FlapClock", "FlapWiring", "CSerialPort"]),
        // For tests of serial buses: decoders written apart from the encoders, a scripted display.
        .target(name: "FlapSerialTesting", dependencies: ["FlapSerial"]),
        .target(name: "FlapGPIO", dependencies: ["FlapCore", "FlapClock", "FlapWiring", "CGPIOD"]),
        // An MQTT connection through Eclipse Mosquitto's client library, on its network thread.
        .target(name: "FlapMQTT", dependencies: ["CMosquitto", "FlapWiring"]),
        // The virtual board on a terminal (ANSI) or as plain text frames.
        .target(name: "FlapTerminal", dependencies: ["FlapCore", "FlapClock"]),
        // The message API client: WebSocket subscription and REST catch-up.
        .target(
            name: "FlapNet",
            dependencies: [
                "FlapMessages", "FlapCore", "FlapInput", "FlapDoor", "FlapWiring", "FlapClock",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        // What flaphub reads from outside (a send, a board's frame, the database address), with no
        // server under it: the fuzzer links it without Hummingbird, PostgresNIO or swift-crypto.
        .target(name: "FlapHubInput", dependencies: ["FlapMessages", "FlapCore", "FlapInput"]),
        // The reference server of the message API: SQLite or PostgreSQL store, REST, WebSocket.
        .target(
            name: "FlapHub",
            dependencies: [
                "FlapMessages", "FlapCore", "FlapInput", "FlapDoor", "FlapHubInput", "FlapYAML", "CSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ],
            // The sender's page, built into the binary.
            resources: [.embedInCode("Web/assets/index.html"), .embedInCode("Web/assets/app.js"), .embedInCode("Web/assets/app.css")]
        ),
        // What a person writes in flapd.yaml, as plain values, and its loader (limits, every issue
        // named with its line): no output or network module under it.
        .target(
            name: "FlapConfig",
            dependencies: [
                "FlapMessages", "FlapCore", "FlapWiring", "FlapClock", "FlapInput", "FlapYAML",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The board: the wall of boards, the mailroom (the one way in and the one writer), the
        // outputs it drives, the state kept across restarts, and what it reports (`Status/`: the
        // one report, and its encodings for `/status` and `/metrics`).
        .target(
            name: "FlapBoard",
            dependencies: [
                "FlapMessages", "FlapConfig", "FlapCore", "FlapInput", "FlapClock", "FlapTiming", "FlapTerminal", "FlapSound", "FlapNet", "FlapSerial", "FlapGPIO", "FlapRelease",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The Vestaboard-shaped local API and the web page, on the board.
        .target(
            name: "FlapLocalAPI",
            dependencies: [
                "FlapMessages", "FlapBoard", "FlapCore", "FlapInput", "FlapClock", "FlapNet",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            // The web page, built into the binary.
            resources: [.embedInCode("Web/assets/index.html"), .embedInCode("Web/assets/app.js"), .embedInCode("Web/assets/app.css"),
                        .embedInCode("Web/assets/calibrate.js")]
        ),
        // The board as a Home Assistant device over MQTT.
        .target(
            name: "FlapMQTTBridge",
            dependencies: [
                "FlapBoard", "FlapLocalAPI", "FlapConfig", "FlapCore", "FlapInput", "FlapClock", "FlapNet", "FlapMQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The daemon: its parts in one ServiceGroup, started in order and stopped in reverse;
        // systemd's notify protocol; logging to the journal.
        .target(
            name: "FlapDaemon",
            dependencies: [
                "FlapMessages", "FlapBoard", "FlapLocalAPI", "FlapMQTTBridge", "FlapConfig", "FlapCore", "FlapClock", "FlapTiming", "FlapTerminal",
                "FlapSound", "FlapNet", "FlapSerial",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "flapd",
            dependencies: [
                "FlapMessages", "FlapDaemon", "FlapConfig", "FlapBoard", "FlapLocalAPI", "FlapSound", "FlapCore", "FlapNet", "FlapClock", "FlapTerminal", "FlapRelease",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "flaphub",
            dependencies: [
                "FlapHub", "FlapRelease",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "flapserial",
            dependencies: ["FlapSerial", "FlapWiring", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "flapgpio",
            dependencies: ["FlapGPIO", "FlapClock", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The parsers of every door under libFuzzer (`./fuzz`), or replaying a corpus.
        .executableTarget(
            name: "flapfuzz",
            dependencies: [
                "FlapMessages", "FlapConfig", "FlapBoard", "FlapLocalAPI", "FlapMQTTBridge", "FlapHubInput", "FlapCore", "FlapInput", "FlapNet", "FlapSerial", "FlapClock",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "flapbench",
            dependencies: [
                "FlapCore", "FlapClock", "FlapWiring", "FlapTiming", "FlapSound", "FlapSerial", "FlapGPIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // flaphub at scale: SQLite and PostgreSQL, one and two instances, many boards and senders.
        .executableTarget(
            name: "hubbench",
            dependencies: [
                "FlapHub", "FlapMessages", "FlapNet", "PostgresTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // Unit tests, one target per module.
        .testTarget(name: "FlapCoreTests", dependencies: ["FlapMessages", "FlapCore"]),
        .testTarget(name: "FlapInputTests", dependencies: ["FlapInput"]),
        .testTarget(name: "FlapDoorTests", dependencies: [
            "FlapDoor", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        .testTarget(name: "FlapClockTests", dependencies: ["FlapClock"]),
        .testTarget(name: "FlapTimingTests", dependencies: ["FlapTiming", "FlapClock", "FlapCore", "TestWaits"]),
        .testTarget(name: "FlapTerminalTests", dependencies: ["FlapTerminal", "FlapCore"]),
        .testTarget(name: "FlapSoundTests", dependencies: ["FlapSound", "FlapWiring", "FlapTiming", "FlapClock", "FlapCore", "TestWaits"]),
        .testTarget(name: "FlapDaemonTests", dependencies: [
            "FlapMessages", "FlapDaemon", "FlapConfig", "FlapBoard", "FlapLocalAPI", "FlapMQTTBridge", "FlapClock", "FlapCore", "FlapGPIO", "FlapNet", "FlapSerial", "FlapTerminal", "FlapYAML", "TestWaits",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "FlapNetTests", dependencies: [
            "FlapMessages", "FlapNet", "FlapCore", "FlapWiring", "TestWaits",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        .testTarget(name: "FlapSerialTests", dependencies: ["FlapSerial", "FlapSerialTesting", "FlapTiming", "FlapClock", "FlapCore", "TestWaits"]),
        // A real PostgreSQL server for the tests of flaphub's PostgreSQL store.
        .target(name: "PostgresTesting", dependencies: ["FlapClock"], path: "Tests/PostgresTesting"),
        // Waits for tests that hold no thread of the concurrency pool (which every in-process
        // server of the suite runs on), and a loopback connection: for every test target.
        .target(name: "TestWaits", path: "Tests/TestWaits"),
        .testTarget(name: "FlapHubTests", dependencies: [
            "FlapMessages", "FlapHub", "FlapHubInput", "FlapCore", "PostgresTesting", "TestWaits", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "FlapGPIOTests", dependencies: ["FlapGPIO", "FlapWiring", "FlapTiming", "FlapClock", "FlapCore", "TestWaits"]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["CGPIOD", "CSerialPort", "CALSA", "CMosquitto"]),
        // What the end-to-end suites share: the real executables as child processes, a scripted
        // message API server, a flaphub, a Mosquitto broker, nginx, QEMU guests, a notify socket.
        .target(
            name: "EndToEndSupport",
            dependencies: [
                "PostgresTesting", "FlapClock", "TestWaits",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "WSClient", package: "swift-websocket"),
            ],
            path: "Tests/EndToEndSupport"),
        // End-to-end: the real flapd executable as a process, over real loopback HTTP, against
        // nothing heavier than a pty, a PulseAudio null sink or a Python client. The loop a
        // contributor runs: `swift test --skip ProofTests`.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "FlapMessages", "flapd", "flaphub", "flapserial", "flapgpio", "flapfuzz", "FlapSerialTesting", "EndToEndSupport", "TestWaits", "FlapCore", "FlapInput",
            ]),
        // The proofs on real parts that take minutes or whole machines: QEMU guests (gpio-sim, a
        // UART, systemd), the aarch64 build, Chromium, PostgreSQL and nginx, Mosquitto, the
        // package, kills and a starved machine. `swift test` runs them with everything else.
        .testTarget(
            name: "ProofTests",
            dependencies: [
                "flapd", "flaphub", "flapserial", "flapgpio", "FlapSerialTesting", "PostgresTesting", "EndToEndSupport", "TestWaits",
                "FlapGPIO", "FlapCore",
            ]),
    ]
)

if !withHub {
    let hub: Set = ["CSQLite", "flaphub", "FlapHub", "FlapHubInput", "flapfuzz", "FlapHubTests", "EndToEndTests", "EndToEndSupport", "ProofTests", "PostgresTesting", "hubbench"]
    package.products.removeAll { hub.contains($0.name) }
    package.targets.removeAll { hub.contains($0.name) }
    package.dependencies.removeAll { dependency in
        guard case .sourceControl(_, let location, _) = dependency.kind else { return false }
        return ["hummingbird", "hummingbird-websocket", "swift-nio-extras", "swift-crypto", "postgres-nio", "swift-http-types"].contains { location.hasSuffix("/" + $0) }
    }
}

// `./fuzz` (FLAP_FUZZ=1): the project's own modules built for libFuzzer — coverage and the address
// sanitizer — and their dependencies not: those are then the release build the wall's
// (packaging/build-wall) already is, in the same scratch folder (`.build-wall`), so fuzzing costs
// the project's modules a second time, not the whole graph (issue 33). With the wall's flags comes
// its `-gnone`, last on every command: a report names the functions (symbols), not their lines —
// replaying the input with a debug build (`swift run flapfuzz TARGET FILE`) does.
if Context.environment["FLAP_FUZZ"] == "1" {
    for target in package.targets where target.name.lowercased().hasPrefix("flap") && !target.isTest {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer,address"])]
        if target.name == "flapfuzz" {
            target.swiftSettings! += [.define("FUZZING")]
            target.linkerSettings = [.unsafeFlags(["-sanitize=fuzzer,address"])]
        }
    }
}
