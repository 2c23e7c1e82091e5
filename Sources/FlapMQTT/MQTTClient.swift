import CMosquitto
import FlapWiring
import Foundation
import Synchronization

/// One connection to an MQTT broker through Eclipse Mosquitto's client library (libmosquitto),
/// on the library's own network thread: it connects in the background, keeps the connection
/// alive, and reconnects after a loss with exponential backoff (`MQTTBrokerConfig.retryMin`…`retryMax`), for as long as
/// it runs — a broker that is down at start or restarts later is found again.
///
/// Callbacks come on the library's thread, one at a time: `connected` after every (re)connect,
/// before any message (subscribe and republish there); `disconnected` after every loss;
/// `message` for each message on a subscribed topic. `publish` may be called from any thread; a
/// publish while disconnected is dropped (its error is returned), as state is republished on
/// every connect.
public final class MQTTClient: Sendable {
    /// How to reach and sign in to the broker (flapd.yaml's `mqtt:`, plain values in
    /// FlapWiring), and the last will: published by the broker when the connection is lost
    /// without a goodbye.
    public struct Settings: Sendable, Equatable {
        public var broker: MQTTBrokerConfig
        public var will: Message?
        public init(_ broker: MQTTBrokerConfig, will: Message? = nil) { self.broker = broker; self.will = will }
    }

    /// A message sent or received.
    public struct Message: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
        public var retain: Bool
        public var qos: Int32
        public init(topic: String, payload: [UInt8], retain: Bool = false, qos: Int32 = 1) {
            self.topic = topic; self.payload = payload; self.retain = retain; self.qos = qos
        }
        public init(topic: String, _ text: String, retain: Bool = false, qos: Int32 = 1) {
            self.init(topic: topic, payload: Array(text.utf8), retain: retain, qos: qos)
        }
        public var text: String { String(decoding: payload, as: UTF8.self) }
    }

    /// A libmosquitto call that failed: which, and the library's error (with errno where it is one).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var call: String
        public var code: Int32
        public var errno: Int32
        public var description: String {
            let what = code == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(code))
            return "\(call): \(what)"
        }
    }

    /// Each is given the client, to subscribe or publish from it.
    public struct Handlers: Sendable {
        public var connected: @Sendable (MQTTClient) -> Void = { _ in }
        public var disconnected: @Sendable (_ reason: String) -> Void = { _ in }
        public var message: @Sendable (MQTTClient, Message) -> Void = { _, _ in }
        public init() {}
    }

    // The handle: a pointer libmosquitto's threads share; it is thread-safe once `loop_start`ed.
    private nonisolated(unsafe) let handle: OpaquePointer
    private let handlers: Handlers
    private let started = Atomic<Bool>(false)

    /// Connected now (the last callback was a connect).
    public var isConnected: Bool { connectedNow.load(ordering: .acquiring) }
    private let connectedNow = Atomic<Bool>(false)

    public init(_ settings: Settings, handlers: Handlers) throws(Failure) {
        _ = MQTTClient.libraryReady
        guard let mosq = mosquitto_new(settings.broker.clientID, true, nil) else {
            throw Failure(call: "mosquitto_new", code: MOSQ_ERR_ERRNO.rawValue, errno: errno)
        }
        handle = mosq
        self.handlers = handlers
        self.settings = settings
        mosquitto_user_data_set(mosq, Unmanaged.passUnretained(self).toOpaque())
        try check("mosquitto_int_option(protocol 3.1.1)", mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311))
        if let user = settings.broker.username {
            try check("mosquitto_username_pw_set", mosquitto_username_pw_set(mosq, user, settings.broker.password))
        }
        if let tls = settings.broker.tls {
            try check("mosquitto_tls_set", mosquitto_tls_set(mosq, tls.caFile, nil, tls.certFile, tls.keyFile, nil))
            if tls.insecure { try check("mosquitto_tls_insecure_set", mosquitto_tls_insecure_set(mosq, true)) }
        }
        if let will = settings.will {
            try check("mosquitto_will_set", will.payload.withUnsafeBytes {
                mosquitto_will_set(mosq, will.topic, Int32($0.count), $0.baseAddress, will.qos, will.retain)
            })
        }
        try check("mosquitto_reconnect_delay_set", mosquitto_reconnect_delay_set(mosq, UInt32(settings.broker.retryMin), UInt32(settings.broker.retryMax), true))
        mosquitto_connect_callback_set(mosq) { mosq, object, rc in
            guard let client = MQTTClient.client(object) else { return }
            guard rc == 0 else { client.handlers.disconnected(String(cString: mosquitto_connack_string(rc))); return }
            client.connectedNow.store(true, ordering: .releasing)
            client.handlers.connected(client)
        }
        mosquitto_disconnect_callback_set(mosq) { _, object, rc in
            guard let client = MQTTClient.client(object) else { return }
            client.connectedNow.store(false, ordering: .releasing)
            client.handlers.disconnected(rc == 0 ? "disconnected" : String(cString: mosquitto_strerror(rc)))
        }
        mosquitto_message_callback_set(mosq) { _, object, message in
            guard let client = MQTTClient.client(object), let m = message?.pointee, let topic = m.topic else { return }
            let payload = m.payloadlen > 0 && m.payload != nil
                ? Array(UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))) : []
            client.handlers.message(client, Message(topic: String(cString: topic), payload: payload, retain: m.retain, qos: m.qos))
        }
    }

    private let settings: Settings

    /// Starts the network thread and the first connection attempt (in the background: a broker
    /// that is not there yet is retried with backoff).
    public func start() throws(Failure) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try check("mosquitto_loop_start", mosquitto_loop_start(handle))
        let rc = mosquitto_connect_async(handle, settings.broker.host, Int32(settings.broker.port), Int32(settings.broker.keepaliveSeconds))
        // A refused first attempt is retried by the network thread; any other error is the config's.
        if rc != MOSQ_ERR_SUCCESS.rawValue, rc != MOSQ_ERR_ERRNO.rawValue {
            throw Failure(call: "mosquitto_connect_async(\(settings.broker.host):\(settings.broker.port))", code: rc, errno: errno)
        }
    }

    /// Sends a message (queued on the network thread).
    @discardableResult
    public func publish(_ message: Message) -> Failure? {
        let rc = message.payload.withUnsafeBytes {
            mosquitto_publish(handle, nil, message.topic, Int32($0.count), $0.baseAddress, message.qos, message.retain)
        }
        return rc == MOSQ_ERR_SUCCESS.rawValue ? nil : Failure(call: "mosquitto_publish(\(message.topic))", code: rc, errno: errno)
    }

    /// Subscribes to a topic filter (call from `connected`: a clean session forgets subscriptions).
    @discardableResult
    public func subscribe(_ filter: String, qos: Int32 = 1) -> Failure? {
        let rc = mosquitto_subscribe(handle, nil, filter, qos)
        return rc == MOSQ_ERR_SUCCESS.rawValue ? nil : Failure(call: "mosquitto_subscribe(\(filter))", code: rc, errno: errno)
    }

    /// Says goodbye (the broker then does not publish the will) and stops the network thread,
    /// waiting at most `within` seconds (monotonic) for queued messages to leave. Blocks: call it
    /// off the async executors.
    public func stop(within seconds: Double = 2) {
        guard started.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        // QoS 1 messages still in flight: give them the time they need, no more.
        while mosquitto_want_write(handle), ContinuousClock.now < deadline { usleep(10_000) }
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
    }

    deinit {
        if started.load(ordering: .acquiring) { mosquitto_loop_stop(handle, true) }
        mosquitto_destroy(handle)
    }

    private static func client(_ object: UnsafeMutableRawPointer?) -> MQTTClient? {
        object.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let libraryReady: Void = { mosquitto_lib_init() }()
}

private func check(_ call: String, _ rc: Int32) throws(MQTTClient.Failure) {
    guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTClient.Failure(call: call, code: rc, errno: errno) }
}
