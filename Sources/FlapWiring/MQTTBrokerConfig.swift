/// How to reach and sign in to an MQTT broker, as `mqtt:` in flapd.yaml says: plain values, read
/// by FlapMQTT's client.
public struct MQTTBrokerConfig: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var clientID: String
    public var keepaliveSeconds = 30
    public var username: String?
    public var password: String?
    /// TLS: the CA file that signs the broker's certificate; with `certFile` and `keyFile`, a
    /// client certificate. `insecure` skips the check of the broker's host name (not of the chain).
    public var tls: TLS?
    /// Backoff between reconnects: from `retryMin` seconds, doubling, at most `retryMax`.
    public var retryMin = 1
    public var retryMax = 30

    public struct TLS: Sendable, Equatable {
        public var caFile: String
        public var certFile: String?
        public var keyFile: String?
        public var insecure = false
        public init(caFile: String, certFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
            self.caFile = caFile; self.certFile = certFile; self.keyFile = keyFile; self.insecure = insecure
        }
    }

    public init(host: String, port: Int, clientID: String) {
        self.host = host; self.port = port; self.clientID = clientID
    }
}
