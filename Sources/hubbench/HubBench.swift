import ArgumentParser
import AsyncHTTPClient
import FlapHub
import Foundation
import Logging
import NIOCore
import PostgresTesting
import Synchronization
import WSClient
#if canImport(Glibc)
import Glibc
#endif

/// flaphub at scale, on loopback only and bounded in count and time: accepted messages per
/// second and POST → board-received latency with `boards` WebSocket clients connected and
/// `senders` sending at once, for SQLite (one instance) and PostgreSQL (one and two instances)
/// in one run, and each instance's memory per connected board. The PostgreSQL server is one
/// made for the run (Debian's packages, as the tests make it).
@main
struct HubBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hubbench", abstract: "flaphub at scale: SQLite and PostgreSQL, one and two instances, many boards and senders.")
    @Option(help: "Boards connected by WebSocket.") var boards = 1000
    @Option(help: "Senders posting at once (each to the boards it is a friend of).") var senders = 100
    @Option(help: "Seconds each store is loaded, saturated and then at --rate.") var seconds = 10.0
    @Option(help: "Messages a second offered in the second phase, whatever the answers (an open loop: latency below saturation); 0 skips it.")
    var rate = 100.0
    @Option(help: "Only one store: sqlite or postgresql (default both).") var only: String?
    @Option(help: "Seconds between a board's pings, as flapd's ping_seconds (0: boards never ping).") var ping = 20.0
    @Option(help: "Boards that connect a second at first (0: all at once). A burst's peak stays in the allocator's pages; paced, the RSS per board is what a board holds.")
    var connectRate = 0.0
    @Option(help: "Seconds the idle phase lasts, every board connected (0: the larger of 2 and --ping, so each board pings in it).")
    var idle = 0.0
    @Option(help: "Boards that connect to one address of 127.0.0.0/8 (a port each: a loopback address has some 28,000 for connections made to it). More boards than this: flaphub listens on 0.0.0.0 — a machine or guest with no other network — and the boards connect to 127.0.0.1, .2, ….")
    var boardsPerAddress = 25_000
    @Flag(help: "At the end of each store's run, restart its first instance under its boards: how they come back (the reconnect curve) and whether a message answered just before is lost.")
    var restart = false

    func run() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let flaphub = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("flaphub").path
        print("== flaphub at scale: \(boards) boards\(connectRate > 0 ? String(format: " (connecting %.0f a second)", connectRate) : ""), \(senders) senders, "
              + "\(Int(seconds)) s each, loopback (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
        guard only == nil || only == "sqlite" || only == "postgresql" else { throw ValidationError("--only is sqlite or postgresql") }
        guard connectRate >= 0, connectRate.isFinite else { throw ValidationError("--connect-rate is 0 (all at once) or boards a second") }
        guard idle >= 0, idle <= 3600 else { throw ValidationError("--idle is 0 (the default) or at most 3600 seconds") }
        guard boardsPerAddress >= 1 else { throw ValidationError("--boards-per-address is at least 1") }
        let addresses = (boards + boardsPerAddress - 1) / boardsPerAddress
        guard addresses <= 254 else { throw ValidationError("more than 254 addresses: raise --boards-per-address") }
        let postgres = only == "sqlite" ? nil : try PostgresServer()
        var rates: [String: Double] = [:], twoInstances: Scenario.Phase?
        for (label, usePostgres, instances) in [("SQLite, 1 instance", false, 1), ("PostgreSQL, 1 instance", true, 1), ("PostgreSQL, 2 instances", true, 2)]
            where only == nil || (only == "postgresql") == usePostgres {
            let scenario = Scenario(flaphub: flaphub, boards: boards, senders: senders, seconds: seconds, rate: rate, ping: ping, restart: restart, connectRate: connectRate,
                                    addresses: addresses,
                                    idleSeconds: idle > 0 ? idle : max(2, ping),
                                    database: usePostgres ? try postgres.map { $0.address(try $0.createDatabase()) } : nil,
                                    postmaster: usePostgres ? postgres?.postmasterPID : nil, instances: instances)
            let r = try await scenario.run()
            rates[label] = r.saturated.rate
            if instances == 2 { twoInstances = r.saturated }
            print((label + ", idle").padding(toLength: 36, withPad: " ", startingAt: 0)
                  + String(format: "CPU a second with every board connected%@: flaphub %.1f ms, PostgreSQL %.1f ms",
                           ping > 0 ? String(format: " (each pinging every %.0f s)", ping) : "", r.idle.flaphub, r.idle.postgres))
            for (phase, p) in [("saturated", r.saturated), (String(format: "at %.0f/s", rate), r.atRate)] {
                guard let p else { continue }
                let name = (label + ", " + phase).padding(toLength: 36, withPad: " ", startingAt: 0)
                print(name + String(format: "%7.0f accepted/s  p50 %6.1f ms  p99 %6.1f ms  received %d of %d  %5.1f KiB RSS per board",
                                    p.rate, p.p50, p.p99, p.received, p.accepted, r.kibPerBoard))
                let c = p.cpuPerMessage
                print(String(repeating: " ", count: 36) + String(format: "CPU per message: flaphub %.3f ms, PostgreSQL %.3f ms, bench %.3f ms; %.2f of %d cores busy",
                                                                   c.flaphub, c.postgres, c.bench, p.coresBusy, ProcessInfo.processInfo.activeProcessorCount))
            }
            r.restart.map { print($0.report(label)) }
        }
        if let base = rates["SQLite, 1 instance"], base > 0, let two = rates["PostgreSQL, 2 instances"], let one = rates["PostgreSQL, 1 instance"] {
            print(String(format: "PostgreSQL 2 instances / SQLite 1 instance: %.2f×  (1 instance: %.2f×; the goal is ≥ 3×)", two / base, one / base))
            // What these cores could carry if the database cost nothing: flaphub's own work and
            // the bench's (its boards and senders) per message are left, and every core on them.
            if let c = twoInstances?.cpuPerMessage, c.flaphub + c.bench > 0 {
                let cores = ProcessInfo.processInfo.activeProcessorCount, ceiling = Double(cores) * 1000 / (c.flaphub + c.bench)
                print(String(format: "on %d cores, with a database that cost nothing: at most %.0f/s = %.2f× (flaphub %.2f + bench %.2f ms of CPU a message)",
                             cores, ceiling, ceiling / base, c.flaphub, c.bench))
            }
        }
    }
}

/// One store's run: its instances, boards connected, senders sending for a while.
struct Scenario {
    let flaphub: String, boards: Int, senders: Int, seconds: Double, rate: Double
    /// How often each board pings (0: never); whether the first instance is restarted at the end.
    let ping: Double, restart: Bool
    /// Boards that connect a second at first (0: all at once).
    let connectRate: Double
    /// Addresses the boards connect to, 127.0.0.1 and on (more than one: flaphub listens on 0.0.0.0).
    let addresses: Int
    /// How long the idle phase lasts.
    let idleSeconds: Double
    /// PostgreSQL's address and its server's main process, or nil for a SQLite file.
    let database: String?, postmaster: Int32?
    let instances: Int

    /// One phase's figures: accepted messages a second, POST → received latency (ms).
    struct Phase {
        var offered: Double?
        var rate: Double, p50: Double, p99: Double
        var received: Int, accepted: Int
        /// Processor time per accepted message, by part; the cores kept busy on average.
        var cpuPerMessage = CPUTime(), coresBusy = 0.0
    }
    struct Result {
        var saturated: Phase, atRate: Phase?, restart: Restart?, kibPerBoard: Double
        /// Processor time a second with every board connected and no message (ms/s).
        var idle: CPUTime
    }

    func run() async throws -> Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hubbench-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = HubConfig()
        config.database = database ?? dir + "/hub.db"
        // Users: sender i is a friend of the boards b with b % senders == i.
        var boardTokens: [String] = [], senderTokens: [String] = [], senderIDs: [String] = [], boardNames: [String] = []
        try await config.withDatabase(logger: Logger(label: "hubbench")) { db in
            let store = try await HubStore(db)
            for i in 0..<senders { let (u, t) = try await store.addUser("s\(i)", now: 0); senderIDs.append(u.id); senderTokens.append(t) }
            for b in 0..<boards {
                let (u, t) = try await store.addUser("b\(b)", now: 0)
                boardTokens.append(t); boardNames.append(u.username)
                try await store.befriend(senderIDs[b % senders], u.id, now: 0)
            }
        }

        var ports: [Int] = [], processes: [Process] = []
        defer { for p in processes { p.terminate(); p.waitUntilExit() } }
        func start(_ port: Int) throws -> Process {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: flaphub)
            p.arguments = ["serve", "--config", dir + "/hub-\(port).yaml", "--log-level", "error"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        let connections = max(20_000, boards + senders + 1000)
        for _ in 0..<instances {
            let port = try freeLoopbackPort()
            try """
                database: \(config.database)
                port: \(port)
                messages_per_hour: 1000000
                max_connections: \(connections)
                max_connections_per_client: \(connections)
                bind: \(addresses > 1 ? "0.0.0.0" : "127.0.0.1")
                """.write(toFile: dir + "/hub-\(port).yaml", atomically: true, encoding: .utf8)
            processes.append(try start(port))
            ports.append(port)
        }
        for port in ports { try await waitUntilListening(port) }
        let rssBefore = processes.map { rss($0.processIdentifier) }.reduce(0, +)

        // Boards: each on instance b % instances, as flapd is (BenchBoard); a message's latency is
        // taken when it arrives.
        var http = HTTPClient.Configuration()
        http.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: senders)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
        let shared = BoardsShared()
        let connecting = ContinuousClock.now
        let boardTasks = (0..<boards).map { b in
            let port = ports[b % instances], host = "127.0.0.\(1 + b % addresses)"
            let board = BenchBoard(url: "ws://\(host):\(port)/ws", inbox: "http://\(host):\(port)/api/v1/messages/inbox",
                                   token: boardTokens[b], ping: ping, shared: shared, client: client)
            let at = connecting + .seconds(connectRate > 0 ? Double(b) / connectRate : 0)
            return Task {
                try? await Task.sleep(until: at)
                await board.run()
            }
        }
        defer { boardTasks.forEach { $0.cancel() } }
        let connectDeadline = Date().addingTimeInterval(120 + (connectRate > 0 ? Double(boards) / connectRate : 0))
        while shared.online.load(ordering: .relaxed) < boards, Date() < connectDeadline { try await Task.sleep(for: .milliseconds(50)) }
        let connected = shared.online.load(ordering: .relaxed)
        let pids = processes.map { $0.processIdentifier }
        let idleBefore = CPUTime.now(instances: pids, postmaster: postmaster)
        try await Task.sleep(for: .seconds(idleSeconds))
        let idle = CPUTime.now(instances: pids, postmaster: postmaster) - idleBefore
        // Read once every board is connected and the idle phase has passed: what an idle board
        // holds, not what the connecting burst had not yet let go of.
        let rssAfter = processes.map { rss($0.processIdentifier) }.reduce(0, +)

        // Senders: each posts to its boards in turn until the time is up (throughput, saturated);
        // then messages offered at a fixed rate, each from the next sender (latency below saturation).
        let load = Load(client: client, shared: shared, ports: ports, senderTokens: senderTokens, boardNames: boardNames, senders: senders)
        func measured(_ phase: () async -> Phase) async -> Phase {
            let before = CPUTime.now(instances: pids, postmaster: postmaster), start = ContinuousClock.now
            var p = await phase()
            let used = CPUTime.now(instances: pids, postmaster: postmaster) - before, n = Double(max(1, p.accepted))
            let wall = start.duration(to: .now) / .milliseconds(1)
            p.cpuPerMessage = used / n
            p.coresBusy = used.total / wall
            return p
        }
        let saturated = await measured { await load.closedLoop(seconds: seconds) }
        let atRate = rate > 0 ? await measured { await load.openLoop(rate: rate, seconds: seconds) } : nil
        var restarted: Restart?
        if restart {
            restarted = try await self.restart(&processes[0], port: ports[0], boards: (boards + instances - 1) / instances,
                                               load: load, start: start)
        }
        boardTasks.forEach { $0.cancel() }
        try await client.shutdown()
        if connected < boards { print("  (only \(connected) of \(boards) boards connected)") }
        return Result(saturated: saturated, atRate: atRate, restart: restarted,
                      kibPerBoard: connected > 0 ? Double(rssAfter - rssBefore) / 1024 / Double(connected) : .nan,
                      idle: idle / idleSeconds)
    }

    /// Senders posting; a message's latency is taken by the board that receives it.
    struct Load {
        let client: HTTPClient, shared: BoardsShared, ports: [Int], senderTokens: [String], boardNames: [String], senders: Int

        /// Every sender posts back to back for `seconds`.
        func closedLoop(seconds: Double) async -> Phase {
            shared.latencies.withLock { $0 = [] }
            let end = Date().addingTimeInterval(seconds)
            let accepted = await withTaskGroup(of: Int.self) { group in
                for s in 0..<senders {
                    group.addTask {
                        var ok = 0, turn = 0
                        while Date() < end { if await post(from: s, turn: turn) != nil { ok += 1 }; turn += 1 }
                        return ok
                    }
                }
                return await group.reduce(0, +)
            }
            return await settle(accepted: accepted, offered: nil, elapsed: seconds + max(0, -end.timeIntervalSinceNow))
        }

        /// `rate` messages a second for `seconds`, each sent at its instant whatever the others
        /// are doing (an open loop), from senders in turn.
        func openLoop(rate: Double, seconds: Double) async -> Phase {
            shared.latencies.withLock { $0 = [] }
            let count = Int(rate * seconds), start = ContinuousClock.now
            let accepted = await withTaskGroup(of: Int.self) { group in
                for i in 0..<count {
                    try? await Task.sleep(until: start + .seconds(Double(i) / rate), clock: .continuous)
                    group.addTask { await post(from: i % senders, turn: i / senders) != nil ? 1 : 0 }
                }
                return await group.reduce(0, +)
            }
            let took = start.duration(to: .now).components
            let elapsed = Double(took.seconds) + Double(took.attoseconds) / 1e18
            return await settle(accepted: accepted, offered: rate, elapsed: elapsed)
        }

        /// One POST from sender `s` to the `turn`th of its boards, through the instances in turn
        /// (as a proxy takes them: with two, every other message is posted to the instance its
        /// board is not connected to); its content (`prefix` and a number) if it was accepted.
        func post(from s: Int, turn: Int, prefix: String = "M") async -> String? {
            let mine = stride(from: s, to: boardNames.count, by: senders).map { boardNames[$0] }
            guard !mine.isEmpty else { return nil }
            let content = "\(prefix)\(shared.counter.add(1, ordering: .relaxed).newValue)"
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(ports[(s + turn) % ports.count])/api/v1/messages")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(senderTokens[s])")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: #"{"recipients":["\#(mine[turn % mine.count])"],"content":"\#(content)"}"#))
            shared.sent.withLock { $0[content] = DispatchTime.now().uptimeNanoseconds }
            guard let r = try? await client.execute(request, timeout: .seconds(30)) else { return nil }
            _ = try? await r.body.collect(upTo: 1 << 16)
            return r.status.code == 201 ? content : nil
        }

        /// Waits (10 s at most) for what is still on its way; what has not come is not received.
        func settle(accepted: Int, offered: Double?, elapsed: Double) async -> Phase {
            let deadline = Date().addingTimeInterval(10)
            while shared.latencies.withLock({ $0.count }) < accepted, Date() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
            let sorted = shared.latencies.withLock { $0 }.sorted()
            func pct(_ p: Double) -> Double { sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
            return Phase(offered: offered, rate: Double(accepted) / elapsed, p50: pct(0.5), p99: pct(0.99), received: sorted.count, accepted: accepted)
        }
    }

    func waitUntilListening(_ port: Int) async throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_addr.s_addr = inet_addr("127.0.0.1")
            a.sin_port = UInt16(port).bigEndian
            let ok = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 } }
            close(fd)
            if ok { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ValidationError("flaphub did not listen on \(port)")
    }

    /// A process's resident memory in bytes.
    func rss(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let kib = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return kib * 1024
    }
}
