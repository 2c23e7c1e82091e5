import Synchronization

/// Users by the SHA-256 of their own bearer token, as the store read them: a token that names a
/// user always names that user (no route changes a token or a user), so an entry never goes
/// stale. Bounded: past `capacity` entries it starts again empty (the users are read again, once
/// each), so a hub's memory does not grow with anything but its users.
final class OwnTokens: Sendable {
    let capacity: Int
    private let users = Mutex<[String: HubStore.User]>([:])

    init(capacity: Int = 200_000) { self.capacity = capacity }

    func user(_ tokenHash: String) -> HubStore.User? { users.withLock { $0[tokenHash] } }

    func keep(_ tokenHash: String, _ user: HubStore.User) {
        users.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[tokenHash] = user
        }
    }
}
