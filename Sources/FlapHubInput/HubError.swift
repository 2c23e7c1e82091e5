import Foundation

/// An error with the HTTP status it answers.
public struct HubError: Error, CustomStringConvertible {
    public let status: Int
    public let description: String
    public var retryAfter: Int?
    public init(_ status: Int, _ description: String, retryAfter: Int? = nil) {
        self.status = status
        self.description = description
        self.retryAfter = retryAfter
    }
}
