import Synchronization

/// Values the store read once and may keep, by key, bounded: past `capacity` entries it starts
/// again empty (each is read again, once), so a hub's memory does not grow with anything but its
/// users. What may be kept, and for how long, is the user's to say (`OwnTokens`, `KnownRecipients`).
final class Kept<Value: Sendable>: Sendable {
    let capacity: Int
    private let values = Mutex<[String: Value]>([:])

    init(capacity: Int = 200_000) { self.capacity = capacity }

    func value(_ key: String) -> Value? { values.withLock { $0[key] } }

    func keep(_ key: String, _ value: Value) {
        values.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[key] = value
        }
    }

    func forget(_ key: String) { _ = values.withLock { $0.removeValue(forKey: key) } }
}

/// Users by the SHA-256 of their own bearer token, as the store read them: a token that names a
/// user always names that user (no route changes a token or a user), so an entry never goes stale.
typealias OwnTokens = Kept<HubStore.User>

/// On PostgreSQL, a send's recipients by the name (or id) a sender gave, lowercased: as last read
/// (`HubStore.recipient`; a send uses the user and their board's transition). A name always names
/// the same user while they exist (no route renames one); whether they are friends, whether they
/// block the sender and the transition may change at any time, so a send that uses an entry has
/// `flaphub_send_known` check all three, and storing nothing when any differs.
typealias KnownRecipients = Kept<HubStore.Recipient>
