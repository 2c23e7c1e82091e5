import FlapBoard
import FlapClock
import FlapConfig
import FlapLocalAPI
import FlapMQTT
import FlapNet
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The board as a Home Assistant device over MQTT (see `MQTTDevice` for what it shows): a
/// service that keeps one connection to the broker (libmosquitto reconnects with backoff), sends
/// the discovery messages on every connect and whenever Home Assistant comes online, publishes
/// state from the conductor's timeline (moving when a board flips, what it shows once it settles,
/// the quiet switch, the board's link), and takes commands into the mailroom like every other
/// door. At most `queued` commands wait; a flood beyond that loses its oldest, with a warning.
package final class MQTTBridge: Service, Sendable {
    static let queued = 32
    let device: MQTTDevice
    private let config: MQTTConfig
    private let wall: Wall
    private let mailroom: Mailroom
    private let status: DaemonStatus
    private let motion: MQTTMotion
    private let saved: SavedBoards?
    private let logger: Logger
    /// The saved board last saved or restored (the select's state).
    private let lastSaved = Mutex<String?>(nil)
    /// Set by a (re)connect: every state topic is sent again, changed or not.
    private let resend = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Commands dropped since the last taken (they came faster than they could be taken).
    private let dropped = Atomic<Int>(0)

    package init(config: MQTTConfig, wall: Wall, mailroom: Mailroom, status: DaemonStatus, motion: MQTTMotion,
                 saved: SavedBoards? = nil, logger: Logger) {
        self.config = config
        self.saved = saved
        self.wall = wall
        self.mailroom = mailroom
        self.status = status
        self.motion = motion
        self.logger = logger
        device = MQTTDevice(config: config, boards: wall.config.boards.map(\.id),
                            localBoard: wall.config.boards[wall.config.localBoardIndex].id, version: DaemonStatus.version)
    }

    enum Command: Sendable { case message([UInt8]), home([UInt8]), quiet([UInt8]), restore([UInt8]), save([UInt8]), delete([UInt8]) }

    package func run() async throws {
        let settings = MQTTClient.Settings(config.broker, will: device.will)
        let (commands, inbox) = AsyncStream<Command>.makeStream(bufferingPolicy: .bufferingNewest(Self.queued))
        var handlers = MQTTClient.Handlers()
        handlers.connected = { [self, logger, config] client in
            logger.notice("MQTT connected", metadata: ["broker": "\(config.broker.host):\(config.broker.port)", "topic": "\(config.topic)"])
            for filter in [device.messageSet, device.homePress, device.quietSet, device.homeAssistantStatus]
                + (saved == nil ? [] : [device.savedSet, device.savedSave, device.savedDelete]) {
                if let e = client.subscribe(filter) { logger.warning("MQTT: \(e)") }
            }
            announce(client)
        }
        handlers.disconnected = { [logger] reason in
            logger.warning("MQTT: no connection to the broker; retrying with backoff", metadata: ["reason": "\(reason)"])
        }
        let commandOf: [String: @Sendable ([UInt8]) -> Command] = [
            device.messageSet: Command.message, device.homePress: Command.home, device.quietSet: Command.quiet,
            device.savedSet: Command.restore, device.savedSave: Command.save, device.savedDelete: Command.delete,
        ]
        handlers.message = { [self, logger] client, m in
            if m.topic == device.homeAssistantStatus {
                if m.text == "online" { logger.info("Home Assistant is online: discovery sent again"); announce(client) }
            } else if let command = commandOf[m.topic], case .dropped = inbox.yield(command(m.payload)) {
                dropped.add(1, ordering: .relaxed)
            }
        }
        let client: MQTTClient
        do { client = try MQTTClient(settings, handlers: handlers) } catch { throw MQTTBridgeError(description: "MQTT: \(error)") }
        // The select's options follow the saved boards.
        saved?.onChange { [device] names in client.publish(device.savedSelect(names)) }
        do { try client.start() } catch { logger.error("MQTT: \(error); retrying with backoff") }
        await withDiscardingTaskGroup { group in
            // The state's publisher waits on the conductor's nudge: a thread of its own, awaited here.
            group.addTask { await onThread(named: "flapd-mqtt") { [self] in publishLoop(client) } }
            // The commands, in order; once the last is taken, the publisher's last round.
            group.addTask { [self] in
                for await command in commands {
                    let lost = dropped.exchange(0, ordering: .relaxed)
                    if lost > 0 { logger.warning("MQTT: commands came faster than they could be taken; the oldest were dropped", metadata: ["dropped": "\(lost)"]) }
                    await take(command, client: client)
                    motion.nudge.signal()
                }
                stopping.store(true, ordering: .releasing)
                motion.nudge.signal()
            }
            try? await gracefulShutdown()
            inbox.finish()
        }
        // A goodbye: the will is for a flapd gone without one. (Its wait for the broker is
        // blocking: on a thread of its own.)
        await onThread(named: "flapd-mqtt-stop") { [device] in
            client.publish(.init(topic: device.availability, "offline", retain: true))
            client.stop()
        }
        logger.info("MQTT: said offline and disconnected")
    }

    /// Discovery, then `online`, then every state topic again.
    private func announce(_ client: MQTTClient) {
        for m in device.discovery(saved: saved?.names) { client.publish(m) }
        client.publish(.init(topic: device.availability, "online", retain: true))
        resend.store(true, ordering: .releasing)
        motion.nudge.signal()
    }

    // MARK: Commands

    private func take(_ command: Command, client: MQTTClient) async {
        switch command {
        case .message(let payload):
            let body: Data
            switch MQTTPayload.messageBody(payload) {
            case .failure(let why): return refuse(client, device.messageSet, why.message)
            case .success(let b): body = b
            }
            switch await LocalAPI.accept(body, mailroom: mailroom, wall: wall) {
            case .failure(let e): refuse(client, device.messageSet, e.message)
            case .success(nil): logger.info("MQTT message kept, not shown now", metadata: ["why": "\(mailroom.isCalibrating ? "calibration" : mailroom.isQuietHolding ? "quiet hours" : "no zone takes @local")"])
            case .success(let shown?): logger.info("MQTT message accepted", metadata: ["transition": "\(shown.transition.number)", "flips": "\(shown.transition.plan.flipCount)"])
            }
        case .home(let payload):
            guard payload == Array("PRESS".utf8) else { return refuse(client, device.homePress, "expected PRESS") }
            let boards = await BlockingWork.run { [status, wall] in status.gpio.homeAll(on: wall.conductor) }
            if boards.isEmpty { refuse(client, device.homePress, "no board has home sensors (gpio.home)") } else {
                logger.notice("MQTT: homing", metadata: ["boards": "\(boards)"])
            }
        case .quiet(let payload):
            let on: Bool?
            switch String(decoding: payload, as: UTF8.self) {
            case "ON": on = true
            case "OFF": on = false
            case "AUTO": on = nil
            default: return refuse(client, device.quietSet, "expected ON, OFF or AUTO")
            }
            await mailroom.setQuiet(on)
            logger.notice("MQTT: quiet hours switched", metadata: ["to": "\(on.map { $0 ? "on" : "off" } ?? "by the clock")"])
        case .restore, .save, .delete:
            await takeSaved(command, client: client)
        }
    }

    /// Restores, saves or deletes a saved board named by the payload.
    private func takeSaved(_ command: Command, client: MQTTClient) async {
        guard let saved else { return }
        switch command {
        case .restore(let payload):
            let name = String(decoding: payload, as: UTF8.self)
            let answer = await SavedRoutes.restore(name, body: Data(), saved: saved, mailroom: mailroom, wall: wall, logger: logger)
            if let why = Self.error(answer) { return refuse(client, device.savedSet, why) }
            lastSaved.withLock { $0 = name }
        case .save(let payload):
            let name = String(decoding: payload, as: UTF8.self)
            let answer = await SavedRoutes.save(name, saved: saved, wall: wall, logger: logger)
            if let why = Self.error(answer) { return refuse(client, device.savedSave, why) }
            lastSaved.withLock { $0 = name }
        case .delete(let payload):
            let name = String(decoding: payload, as: UTF8.self)
            let answer = await SavedRoutes.delete(name, saved: saved, logger: logger)
            if let why = Self.error(answer) { return refuse(client, device.savedDelete, why) }
            lastSaved.withLock { if $0 == name { $0 = nil } }
        default: return
        }
    }

    /// A local API answer's error, when it is one.
    static func error(_ answer: LocalHTTPServer.Response) -> String? {
        guard answer.status >= 400 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])?["error"] as? String ?? "refused (\(answer.status))"
    }

    private func refuse(_ client: MQTTClient, _ topic: String, _ why: String) {
        logger.warning("MQTT command refused", metadata: ["topic": "\(topic)", "why": "\(why)"])
        client.publish(.init(topic: device.errors, payload: Array(SortedJSON.data(encoding: ["topic": topic, "error": why])), qos: 0))
    }

    // MARK: State

    /// On its own thread: wakes when a board flips or settles, when a command was taken, after
    /// a (re)connect, and at least once a second (quiet hours by the clock, a serial link), and
    /// sends what changed.
    private func publishLoop(_ client: MQTTClient) {
        var last: [String: String] = [:]
        while !stopping.load(ordering: .acquiring) {
            _ = motion.nudge.wait(timeout: .now() + 1)
            if resend.exchange(false, ordering: .acquiringAndReleasing) { last.removeAll() }
            guard client.isConnected else { continue }
            for (topic, payload) in state(flipped: motion.takeFlipped()) where last[topic] != payload {
                // A failed send is tried again on the next wake.
                last[topic] = client.publish(.init(topic: topic, payload, retain: true)) == nil ? payload : nil
            }
        }
    }

    /// Every state topic and its payload, in order; a board that flipped since the last look
    /// is `ON` first even when it has settled since (so a short transition is seen moving).
    private func state(flipped: UInt64) -> [(String, String)] {
        var out: [(String, String)] = []
        let zones = mailroom.zones()
        for (i, board) in status.boards().enumerated() {
            let grid = wall.config.grids.first { $0.boards.joined().contains(i) }?.id
            if flipped & (UInt64(1) << UInt64(min(i, 63))) != 0 { out.append((device.moving(board.id), "ON")) }
            out.append((device.moving(board.id), board.moving ? "ON" : "OFF"))
            out.append((device.availability(board.id), board.modules.serial?.connected == false ? "offline" : "online"))
            let reported = board.modules.reported ?? []
            func name(_ i: Int) -> String { "\(i / board.cols),\(i % board.cols)" }
            let modules = MQTTModulesState(
                faulty: board.modules.faulty, which: reported.indices.filter { reported[$0].state.isFaulty }.map(name),
                worstMagnetError: Dictionary(uniqueKeysWithValues: reported.indices.compactMap { i in
                    reported[i].worstMagnetError.flatMap { $0 == 0 ? nil : (name(i), $0) }
                }))
            out.append((device.modules(board.id), SortedJSON.string(encoding: modules)))
            guard !board.moving else { continue }
            let here = zones.filter { $0.board == board.id || $0.board == grid }
            let shown = MQTTBoardState(text: MQTTDevice.text(rows: board.shows), rows: board.shows,
                                       sender: here.first?.sender, messageID: here.first?.id,
                                       zones: here.map { .init(rows: $0.rows, cols: $0.cols, sender: $0.sender, messageID: $0.id) },
                                       modulesOK: board.modules.ok, modulesFaulty: board.modules.faulty)
            out.append((device.state(board.id), SortedJSON.string(encoding: shown)))
        }
        out.append((device.quietState, mailroom.quiet()?.active == true ? "ON" : "OFF"))
        if let name = lastSaved.withLock({ $0 }) { out.append((device.savedState, name)) }
        return out
    }
}

struct MQTTBridgeError: Error, CustomStringConvertible { let description: String }
