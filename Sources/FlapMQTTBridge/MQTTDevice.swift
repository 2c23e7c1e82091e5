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
///   `ON`, `OFF`, or `AUTO` for the clock);
/// - `select` **Saved board** (its options the saved boards' names; choosing one, `<topic>/saved/set`,
///   restores it; its state, `<topic>/saved`, the one last saved or restored), and `text` **Save
///   board as** (`<topic>/saved/save`) and **Delete saved board** (`<topic>/saved/delete`).
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
    var savedSet: String { "\(config.topic)/saved/set" }
    var savedState: String { "\(config.topic)/saved" }
    var savedSave: String { "\(config.topic)/saved/save" }
    var savedDelete: String { "\(config.topic)/saved/delete" }
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

    /// One entity's discovery message (retained, under the discovery prefix).
    private func entity(_ component: String, _ object: String, _ config: DiscoveryConfig, boardAvailability: String? = nil) -> MQTTClient.Message {
        var payload = config
        payload.uniqueID = "flapd_\(self.config.nodeID)_\(object)"
        payload.device = DiscoveryConfig.Device(identifiers: ["flapd_\(self.config.nodeID)"], name: "Flapboard \(self.config.nodeID)", swVersion: version)
        payload.availability = [.init(topic: availability)] + (boardAvailability.map { [.init(topic: $0)] } ?? [])
        return .init(topic: "\(self.config.discoveryPrefix)/\(component)/\(self.config.nodeID)/\(object)/config",
                     payload: Array(SortedJSON.data(encoding: payload)), retain: true)
    }

    /// The saved boards' `select`, its options the names (sent again whenever they change).
    func savedSelect(_ names: [String]) -> MQTTClient.Message {
        entity("select", "saved_board", DiscoveryConfig(
            name: "Saved board", icon: "mdi:content-save-outline", commandTopic: savedSet, stateTopic: savedState, options: names))
    }

    /// Every discovery message (retained JSON objects under the discovery prefix); `saved`: the
    /// saved boards' names, or nil when flapd keeps none (no local API).
    func discovery(saved: [String]? = nil) -> [MQTTClient.Message] {
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
        if let saved {
            all.append(savedSelect(saved))
            all.append(entity("text", "save_board", DiscoveryConfig(
                name: "Save board as", icon: "mdi:content-save", entityCategory: "config", commandTopic: savedSave,
                min: 1, max: 40, mode: "text")))
            all.append(entity("text", "delete_saved_board", DiscoveryConfig(
                name: "Delete saved board", icon: "mdi:delete-outline", entityCategory: "config", commandTopic: savedDelete,
                min: 1, max: 40, mode: "text")))
        }
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
