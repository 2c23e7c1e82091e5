@testable import FlapDaemon
import FlapGPIO
import FlapSerial
@testable import FlapBoard
import Testing

/// Issue 12: `/status` names module states one way for every output (a splitflap display said
/// `sensorError`, flapbus `fault`, GPIO `faulty`; a splitflap module homing counted as faulty).
@Suite struct ModuleConditionTests {
    @Test func everyOutputsStatesMapOntoOneVocabulary() {
        let gpio: [String] = [HomeTracker.State.normal, .unhomed, .homing, .faulty].map { ModuleCondition($0).rawValue }
        let splitflap: [String] = [SplitflapProtocol.ModuleState.State.normal, .lookForHome, .sensorError, .panic, .disabled]
            .map { ModuleCondition($0).rawValue }
        let bus: [String] = (0...5).map { ModuleCondition(flapbus: UInt8($0)).rawValue }
        #expect(gpio == ["normal", "unhomed", "homing", "faulty"] as [String])
        #expect(splitflap == ["normal", "homing", "sensor_error", "faulty", "disabled"] as [String])
        let unknownIsFaulty: [String] = ["normal", "homing", "sensor_error", "faulty", "disabled", "faulty"]
        #expect(bus == unknownIsFaulty)
        #expect([ModuleCondition.normal, .unhomed, .homing].allSatisfy { !$0.isFaulty })
        #expect([ModuleCondition.sensorError, .faulty, .disabled].allSatisfy { $0.isFaulty })
    }
}
