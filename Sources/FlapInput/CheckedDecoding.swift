import Foundation

extension JSONDecoder {
    /// `type` read from `data` only once it is strict JSON within `limits` (a `JSONInputError`
    /// otherwise): Foundation's decoder traps — no error, the process dies — on a document nested
    /// 513 deep, so nothing from outside reaches it unchecked.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data, checkedWithin limits: JSONLimits) throws -> T {
        try StrictJSON.check(Array(data), limits: limits)
        return try decode(type, from: data)
    }
}
