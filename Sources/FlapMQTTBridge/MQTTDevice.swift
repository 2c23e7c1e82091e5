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
///   `binary_sensor` **Moving** (`device_class: moving`), and a diagnostic `sensor` **Faulty
///   modules** (how many; which, and each module's worst magnet error, as attributes);
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
    func modules(_ board: String) -> String { "\(config.topic)/\(board)/modules" }

    /// The will: flapd gone without a goodbye is `offline`, retained.
    var will: MQTTClient.Message { .init(topic: availability, "offline", retain: true) }

    /// Every discovery message (retained JSON objects under the discovery prefix).
    func discovery() -> [MQTTClient.Message] {
        let device = DiscoveryConfig.Device(identifiers: ["flapd_\(config.nodeID)"], name: "Flapboard \(config.nodeID)", swVersion: version)
        func entity(_ component: String, _ object: String, _ config: DiscoveryConfig, boardAvailability: String? = nil) -> MQTTClient.Message {
            var payload = config
            payload.uniqueID = "flapd_\(self.config.nodeID)_\(object)"
            payload.device = device
            payload.availability = [.init(topic: availability)] + (boardAvailability.map { [.init(topic: $0)] } ?? [])
            return .init(topic: "\(self.config.discoveryPrefix)/\(component)/\(self.config.nodeID)/\(object)/config",
                         payload: Array(SortedJSON.data(encoding: payload)), retain: true)
        }
        var all = [
            entity("text", "message", DiscoveryConfig(
                name: "Message", icon: "mdi:message-text", commandTopic: messageSet, stateTopic: state(localBoard),
                valueTemplate: "{{ value_json.text }}", min: 0, max: 255, mode: "text"), boardAvailability: availability(localBoard)),
            entity("button", "home", DiscoveryConfig(
                name: "Home all modules", icon: "mdi:home-import-outline", entityCategory: "config", commandTopic: homePress,
                payloadPress: "PRESS")),
            entity("switch", "quiet", DiscoveryConfig(
                name: "Quiet hours", icon: "mdi:sleep", commandTopic: quietSet, stateTopic: quietState,
                payloadOn: "ON", payloadOff: "OFF", stateOn: "ON", stateOff: "OFF")),
        ]
        for board in boards {
            all.append(entity("sensor", "\(board)_shows", DiscoveryConfig(
                name: "\(board) shows", icon: "mdi:card-text-outline", stateTopic: state(board),
                valueTemplate: "{{ value_json.text }}", jsonAttributesTopic: state(board)), boardAvailability: availability(board)))
            all.append(entity("binary_sensor", "\(board)_moving", DiscoveryConfig(
                name: "\(board) moving", deviceClass: "moving", stateTopic: moving(board), payloadOn: "ON", payloadOff: "OFF"),
                boardAvailability: availability(board)))
            all.append(entity("sensor", "\(board)_faulty_modules", DiscoveryConfig(
                name: "\(board) faulty modules", icon: "mdi:alert-circle-outline", entityCategory: "diagnostic", stateTopic: modules(board),
                valueTemplate: "{{ value_json.faulty }}", jsonAttributesTopic: modules(board))))
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
