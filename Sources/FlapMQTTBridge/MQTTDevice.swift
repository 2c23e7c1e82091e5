import FlapConfig
import Foundation
import FlapMQTT
import FlapNet

/// What flapd shows of itself over MQTT, as Home Assistant's MQTT discovery describes a device:
/// its topics and its discovery messages. Pure: no broker, no clock.
///
/// One device per flapd (`node_id`), with
/// - `text` **Message**: what the local API's board shows; a text (or a local API body as JSON)
///   sent to `<topic>/message/set` goes into the inbox as the local sender's message;
/// - per board, `sensor` **Shows** (its text; rows, sender and message id as attributes) and
///   `binary_sensor` **Moving** (`device_class: moving`);
/// - `button` **Home all modules** (`<topic>/home/press`), `switch` **Quiet hours** (`<topic>/quiet/set`:
///   `ON`, `OFF`, or `AUTO` for the clock).
/// Every entity is available while flapd is connected (`<topic>/availability`, whose `offline` is
/// also the connection's last will); a board's entities also while that board is reachable
/// (`<topic>/<board>/availability`: `offline` while its serial link is down).
struct MQTTDevice: Sendable {
    let config: MQTTConfig
    let boards: [String]
    let localBoard: String
    let version: String

    var availability: String { "\(config.topic)/availability" }
    var messageSet: String { "\(config.topic)/message/set" }
    var homePress: String { "\(config.topic)/home/press" }
    var quietSet: String { "\(config.topic)/quiet/set" }
    var quietState: String { "\(config.topic)/quiet" }
    /// Where a refused command's reason goes (not retained).
    var errors: String { "\(config.topic)/error" }
    /// Home Assistant's own availability: `online` when it (re)starts → discovery again.
    var homeAssistantStatus: String { "\(config.discoveryPrefix)/status" }
    func state(_ board: String) -> String { "\(config.topic)/\(board)/state" }
    func moving(_ board: String) -> String { "\(config.topic)/\(board)/moving" }
    func availability(_ board: String) -> String { "\(config.topic)/\(board)/availability" }

    /// The will: flapd gone without a goodbye is `offline`, retained.
    var will: MQTTClient.Message { .init(topic: availability, "offline", retain: true) }

    /// Every discovery message (retained JSON objects under the discovery prefix).
    func discovery() -> [MQTTClient.Message] {
        let device: [String: Any] = [
            "identifiers": ["flapd_\(config.nodeID)"], "name": "Flapboard \(config.nodeID)",
            "manufacturer": "Flapboard", "model": "flapd", "sw_version": version,
        ]
        let daemon: [[String: Any]] = [["topic": availability]]
        func entity(_ component: String, _ object: String, _ fields: [String: Any], boardAvailability: String? = nil) -> MQTTClient.Message {
            var payload = fields
            payload["unique_id"] = "flapd_\(config.nodeID)_\(object)"
            payload["device"] = device
            payload["availability"] = daemon + (boardAvailability.map { [["topic": $0]] } ?? [])
            payload["availability_mode"] = "all"
            return .init(topic: "\(config.discoveryPrefix)/\(component)/\(config.nodeID)/\(object)/config",
                         payload: Array(SortedJSON.data(payload)), retain: true)
        }
        var all = [
            entity("text", "message", [
                "name": "Message", "icon": "mdi:message-text", "command_topic": messageSet,
                "state_topic": state(localBoard), "value_template": "{{ value_json.text }}",
                "min": 0, "max": 255, "mode": "text",
            ], boardAvailability: availability(localBoard)),
            entity("button", "home", [
                "name": "Home all modules", "icon": "mdi:home-import-outline", "command_topic": homePress,
                "payload_press": "PRESS", "entity_category": "config",
            ]),
            entity("switch", "quiet", [
                "name": "Quiet hours", "icon": "mdi:sleep", "command_topic": quietSet, "state_topic": quietState,
                "payload_on": "ON", "payload_off": "OFF", "state_on": "ON", "state_off": "OFF",
            ]),
        ]
        for board in boards {
            all.append(entity("sensor", "\(board)_shows", [
                "name": "\(board) shows", "icon": "mdi:card-text-outline", "state_topic": state(board),
                "value_template": "{{ value_json.text }}", "json_attributes_topic": state(board),
            ], boardAvailability: availability(board)))
            all.append(entity("binary_sensor", "\(board)_moving", [
                "name": "\(board) moving", "device_class": "moving", "state_topic": moving(board),
                "payload_on": "ON", "payload_off": "OFF",
            ], boardAvailability: availability(board)))
        }
        return all
    }

    /// The text of a board as a sensor's state (Home Assistant keeps at most 255 characters):
    /// its non-blank rows, trimmed, one space between them.
    static func text(rows: [String]) -> String {
        let words = rows.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        return String(words.prefix(255))
    }
}
