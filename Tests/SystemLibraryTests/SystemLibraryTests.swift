import CALSA
import CGPIOD
import CMosquitto
import CSerialPort
import Testing

/// The system libraries link and answer: proof that the install step is right.
@Suite struct SystemLibraryTests {
    @Test func libgpiod() {
        let version = String(cString: gpiod_version_string())
        #expect(version.first?.isNumber == true, "libgpiod \(version)")
    }

    @Test func libserialport() {
        let version = String(cString: sp_get_package_version_string())
        #expect(version.split(separator: ".").count >= 3, "libserialport \(version)")
    }

    @Test func alsa() {
        let version = String(cString: snd_asoundlib_version())
        #expect(version.hasPrefix("1."), "alsa-lib \(version)")
    }

    @Test func libmosquitto() {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        #expect(mosquitto_lib_version(&major, &minor, &revision) >= 2_000_000 && major == 2, "libmosquitto \(major).\(minor).\(revision)")
    }
}
