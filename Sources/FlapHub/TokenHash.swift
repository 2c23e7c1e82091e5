import Crypto

/// The SHA-256 of a bearer token, as lowercase hex (swift-crypto): what the store keeps and
/// looks a caller up by, so the database never holds a token.
enum TokenHash {
    static func hex(_ token: String) -> String {
        let digest = SHA256.hash(data: Array(token.utf8))
        // The 64 digits written in place: a String and an Array a byte, joined, were 1.5 % of
        // flaphub's processor time a message (every request hashes its token; issue 37).
        return String(unsafeUninitializedCapacity: 2 * SHA256.byteCount) { digits in
            var i = 0
            for byte in digest {
                digits[i] = HexDigits.lowercase[Int(byte >> 4)]; digits[i + 1] = HexDigits.lowercase[Int(byte & 0xF)]
                i += 2
            }
            return i
        }
    }
}

/// The digits of lowercase hex, as UTF-8: a token's hash, a message's id.
enum HexDigits {
    static let lowercase: [UInt8] = Array("0123456789abcdef".utf8)
}
