/// One entity's discovery document, as Home Assistant's MQTT discovery reads it: the fields this
/// device uses, each left out when nil.
struct DiscoveryConfig: Encodable, Sendable {
    var name: String
    var icon: String?
    var deviceClass: String?
    var entityCategory: String?
    var commandTopic: String?
    var stateTopic: String?
    var valueTemplate: String?
    var jsonAttributesTopic: String?
    var payloadOn: String?
    var payloadOff: String?
    var payloadPress: String?
    var stateOn: String?
    var stateOff: String?
    var min: Int?
    var max: Int?
    var mode: String?
    var options: [String]?
    // Set by the device for each of its entities.
    var uniqueID = ""
    var device = Device()
    var availability: [Availability] = []
    var availabilityMode = "all"

    struct Device: Encodable, Sendable {
        var identifiers: [String] = []
        var name = ""
        var manufacturer = "Flapboard"
        var model = "flapd"
        var swVersion = ""

        enum CodingKeys: String, CodingKey {
            case identifiers, name, manufacturer, model
            case swVersion = "sw_version"
        }
    }

    struct Availability: Encodable, Sendable {
        let topic: String
    }

    enum CodingKeys: String, CodingKey {
        case name, icon, min, max, mode, device, availability, options
        case deviceClass = "device_class", entityCategory = "entity_category", commandTopic = "command_topic"
        case stateTopic = "state_topic", valueTemplate = "value_template", jsonAttributesTopic = "json_attributes_topic"
        case payloadOn = "payload_on", payloadOff = "payload_off", payloadPress = "payload_press"
        case stateOn = "state_on", stateOff = "state_off", uniqueID = "unique_id", availabilityMode = "availability_mode"
    }
}
