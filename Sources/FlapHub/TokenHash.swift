import Crypto

/// The SHA-256 of a bearer token, as lowercase hex (swift-crypto): what the store keeps and
/// looks a caller up by, so the database never holds a token.
enum TokenHash {
    static func hex(_ token: String) -> String {
        SHA256.hash(data: Array(token.utf8)).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
        }.joined()
    }
}
