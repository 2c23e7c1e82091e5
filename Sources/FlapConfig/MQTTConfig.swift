import FlapWiring
import Foundation

/// `mqtt:` in flapd.yaml — the board as a Home Assistant device over an MQTT broker.
public struct MQTTConfig: Sendable, Equatable {
    /// The broker, the sign-in and TLS (the will is flapd's own: its availability topic).
    public var broker: MQTTBrokerConfig
    /// The device's id in Home Assistant and in topics (letters, digits, `_`, `-`).
    public var nodeID = "flapd"
    /// Where flapd's own topics live: `<topic>/availability`, `<topic>/message/set`, …
    public var topic = "flapd"
    /// Home Assistant's discovery prefix (its MQTT integration's setting; `homeassistant` unless changed).
    public var discoveryPrefix = "homeassistant"

    public init(broker: MQTTBrokerConfig) { self.broker = broker }
}

extension ConfigLoader {
    /// `mqtt: {host, port, node_id, topic, discovery_prefix, client_id, username, password
    /// (_env, _file), tls: {ca_file, cert_file, key_file, insecure}, keepalive_seconds,
    /// retry_seconds: [min, max]}`.
    static func mqtt(_ node: ConfigNode, environment: [String: String]) -> MQTTConfig? {
        guard node.node != nil else { return nil }
        let host = node.string("host")
        if host == nil { node.issues.add(node.sub("host"), node.node, "missing (the broker's host name or address, e.g. 127.0.0.1)") }
        let tlsNode = node.child("tls")
        var tls: MQTTBrokerConfig.TLS?
        if tlsNode.node != nil {
            let ca = tlsNode.string("ca_file")
            if ca == nil { tlsNode.issues.add(tlsNode.sub("ca_file"), tlsNode.node, "missing (the CA certificate that signs the broker's)") }
            let cert = tlsNode.string("cert_file"), key = tlsNode.string("key_file")
            if (cert == nil) != (key == nil) {
                tlsNode.issues.add(tlsNode.sub(cert == nil ? "cert_file" : "key_file"), tlsNode.node, "a client certificate needs both cert_file and key_file")
            }
            for (k, path) in [("ca_file", ca), ("cert_file", cert), ("key_file", key)] {
                if let path, !FileManager.default.isReadableFile(atPath: path) {
                    tlsNode.issues.add(tlsNode.sub(k), tlsNode.value(k), "cannot read the file \(path)")
                }
            }
            if let ca { tls = .init(caFile: ca, certFile: cert, keyFile: key, insecure: tlsNode.bool("insecure", default: false)) }
            tlsNode.rejectUnknownKeys()
        }
        let port = node.int("port", default: tls == nil ? 1883 : 8883, in: 1...65_535)
        let nodeID = node.string("node_id") ?? "flapd"
        if !nodeID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) || nodeID.isEmpty || nodeID.count > 64 {
            node.issues.add(node.sub("node_id"), node.value("node_id"), "'\(nodeID)' is not 1–64 letters, digits, _ or - (Home Assistant's rule for a node id)")
        }
        let topic = node.string("topic") ?? "flapd/\(nodeID)"
        if topic.isEmpty || topic.count > 128 || topic.contains(where: { "+#\0".contains($0) }) || topic.hasPrefix("/") || topic.hasSuffix("/") || topic.hasPrefix("$") {
            node.issues.add(node.sub("topic"), node.value("topic"), "'\(topic)' is not a topic flapd can live under (1–128 characters, no +, # or $, no / at either end)")
        }
        let prefix = node.string("discovery_prefix") ?? "homeassistant"
        if prefix.isEmpty || prefix.count > 64 || prefix.contains(where: { "+#/\0".contains($0) }) {
            node.issues.add(node.sub("discovery_prefix"), node.value("discovery_prefix"), "'\(prefix)' is not a discovery prefix (1–64 characters, no +, # or /)")
        }
        var broker = MQTTBrokerConfig(host: host ?? "", port: port, clientID: node.string("client_id") ?? "flapd-\(nodeID)")
        if broker.clientID.utf8.count > 64 { node.issues.add(node.sub("client_id"), node.value("client_id"), "longer than 64 bytes") }
        broker.tls = tls
        broker.keepaliveSeconds = node.int("keepalive_seconds", default: 30, in: 5...3600)
        broker.username = node.string("username")
        broker.password = SecretFile.secret(node, "password", environment: environment)
        if broker.password != nil, broker.username == nil {
            node.issues.add(node.sub("username"), node.node, "missing (a password is sent only with a username)")
        }
        if let v = node.value("retry_seconds") {
            if let pair = v.sequence?.compactMap(\.wholeNumber), pair.count == 2, v.sequence?.count == 2, pair[0] >= 1, pair[0] <= pair[1], pair[1] <= 3600 {
                (broker.retryMin, broker.retryMax) = (pair[0], pair[1])
            } else {
                node.issues.add(node.sub("retry_seconds"), v, "expected [min, max] seconds between reconnects, 1 ≤ min ≤ max ≤ 3600")
            }
        }
        node.rejectUnknownKeys()
        guard host != nil else { return nil }
        var config = MQTTConfig(broker: broker)
        config.nodeID = nodeID
        config.topic = topic
        config.discoveryPrefix = prefix
        return config
    }
}
