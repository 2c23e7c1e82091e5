@testable import FlapConfig
@testable import FlapMQTTBridge
import Foundation
import Testing
@testable import FlapDaemon

/// Issue 16, item 3: the `mqtt:` section and what flapd announces — pure, no broker (the broker
/// is in ProofTests/MQTTTests).
@Suite struct MQTTConfigTests {
    @Test func aFullSection() throws {
        let c = try ConfigLoader.parse("""
            mqtt:
              host: broker.lan
              node_id: hallway
              username: flapd
              password_env: MQTT_PW
              keepalive_seconds: 60
              retry_seconds: [2, 60]
            boards: [{ id: wall }, { id: door, rows: 2, cols: 8 }]
            """, environment: ["MQTT_PW": "pw"])
        let m = try #require(c.mqtt)
        #expect(m.broker.host == "broker.lan" && m.broker.port == 1883 && m.broker.clientID == "flapd-hallway")
        #expect(m.broker.username == "flapd" && m.broker.password == "pw" && m.broker.keepaliveSeconds == 60)
        #expect(m.broker.retryMin == 2 && m.broker.retryMax == 60 && m.broker.tls == nil)
        #expect(m.topic == "flapd/hallway" && m.discoveryPrefix == "homeassistant")
        #expect(try ConfigLoader.parse("boards: [{ id: wall }]").mqtt == nil)
    }

    @Test func tlsTakesPort8883AndNeedsReadableFiles() throws {
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID()).pem").path
        try "x".write(toFile: ca, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: ca) }
        let c = try ConfigLoader.parse("mqtt: { host: b, tls: { ca_file: \(ca) } }")
        #expect(c.mqtt?.broker.port == 8883 && c.mqtt?.broker.tls?.caFile == ca)
        #expect(issues("mqtt: { host: b, tls: { ca_file: /nonexistent/ca.pem } }")
            == ["mqtt.tls.ca_file: cannot read the file /nonexistent/ca.pem (line 1)"])
        #expect(issues("mqtt: { host: b, tls: { ca_file: \(ca), cert_file: \(ca) } }")
            == ["mqtt.tls.key_file: a client certificate needs both cert_file and key_file (line 1)"])
    }

    @Test func hostileSectionsAreRefusedByName() {
        #expect(issues("mqtt: { port: 1883 }") == ["mqtt.host: missing (the broker's host name or address, e.g. 127.0.0.1) (line 1)"])
        #expect(issues("mqtt: { host: b, node_id: \"a/b\" }").first?.hasPrefix("mqtt.node_id: 'a/b' is not 1–64 letters") == true)
        #expect(issues("mqtt: { host: b, topic: \"flapd/#\" }").first?.hasPrefix("mqtt.topic: 'flapd/#' is not a topic") == true)
        #expect(issues("mqtt: { host: b, discovery_prefix: \"a/b\" }").first?.hasPrefix("mqtt.discovery_prefix: 'a/b' is not a discovery prefix") == true)
        #expect(issues("mqtt: { host: b, port: 70000 }").first?.hasPrefix("mqtt.port: 70000") == true)
        #expect(issues("mqtt: { host: b, retry_seconds: [5, 1] }").first?.hasPrefix("mqtt.retry_seconds: expected [min, max]") == true)
        #expect(issues("mqtt: { host: b, password: x }") == ["mqtt.username: missing (a password is sent only with a username) (line 1)"])
        #expect(issues("mqtt: { host: b, hots: c }").first?.contains("hots") == true)
    }

    @Test func theDeviceAnnouncesEveryEntityWithAvailability() throws {
        let c = try ConfigLoader.parse("mqtt: { host: b, node_id: hall }\nboards: [{ id: wall }, { id: door, rows: 2, cols: 8 }]")
        let device = MQTTDevice(config: try #require(c.mqtt), boards: ["wall", "door"], localBoard: "wall", version: "9")
        let messages = device.discovery()
        #expect(messages.map(\.topic) == [
            "homeassistant/text/hall/message/config", "homeassistant/button/hall/home/config", "homeassistant/switch/hall/quiet/config",
            "homeassistant/sensor/hall/wall_shows/config", "homeassistant/binary_sensor/hall/wall_moving/config",
            "homeassistant/sensor/hall/wall_faulty_modules/config",
            "homeassistant/sensor/hall/door_shows/config", "homeassistant/binary_sensor/hall/door_moving/config",
            "homeassistant/sensor/hall/door_faulty_modules/config",
        ])
        #expect(messages.allSatisfy { $0.retain })
        let payloads = messages.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.payload))) as? [String: Any] }
        #expect(payloads.count == messages.count)
        #expect(Set(payloads.compactMap { $0["unique_id"] as? String }).count == messages.count)
        let door = payloads[7]
        #expect((door["availability"] as? [[String: String]])?.compactMap { $0["topic"] } == ["flapd/hall/availability", "flapd/hall/door/availability"])
        #expect(door["state_topic"] as? String == "flapd/hall/door/moving" && door["device_class"] as? String == "moving")
        let faulty = payloads[8]
        #expect(faulty["state_topic"] as? String == "flapd/hall/door/modules" && faulty["json_attributes_topic"] as? String == "flapd/hall/door/modules"
                && faulty["entity_category"] as? String == "diagnostic" && faulty["value_template"] as? String == "{{ value_json.faulty }}")
        #expect(device.will == .init(topic: "flapd/hall/availability", "offline", retain: true))
    }

    @Test func theSensorTextIsTheRowsReadAsOneLine() {
        #expect(MQTTDevice.text(rows: ["      ", "  GOOD MORNING  ", "", "   ALL   "]) == "GOOD MORNING ALL")
        #expect(MQTTDevice.text(rows: Array(repeating: String(repeating: "X", count: 60), count: 6)).count == 255)
    }
}
