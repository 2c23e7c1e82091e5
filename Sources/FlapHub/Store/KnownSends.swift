import PostgresNIO
import Synchronization

/// On PostgreSQL, sends to recipients this instance knows (`HubStore.sendKnown`), stored in
/// batches by group commit: the sends asked while a batch is being stored wait and go together
/// as the next, one statement and one commit (`flaphub_send_known_batch`, HubSchema.v10) —
/// each checked, counted against its sender's hourly limit and stored as `flaphub_send_known`
/// does it alone, in the order they came, and each answered only once its batch has committed.
/// A send alone goes at once, as a batch of one. A batch waits for the database no longer than
/// the address's wait less what its first send has waited already (for the batch before), so
/// each send is answered within the wait, as it would be alone. When a batch fails for a reason
/// of the database's (unavailable: then so would each send), each of its sends fails with it;
/// for any other, each is tried again alone, so that one send's failure is its own.
final class KnownSends: Sendable {
    private let batch = GroupCommit<KnownSend>()
    /// How many batches have been stored (or tried): fewer than the sends under load.
    let batches = Atomic<Int>(0)
    /// How many sends wait for the next batch.
    var queued: Int { batch.queued }

    /// What the database answered for `send`: its `full_at` (the 429's instant) and each
    /// recipient's status, as `flaphub_send_known` answers.
    func store(_ send: KnownSend, on postgres: PostgresDatabase) async throws -> KnownSend.Answer {
        // The batch is stored in a task of its own: a caller that leads it and is cancelled (its
        // request gone) does not take the other senders' sends down with it.
        await batch.run(send) { sends in
            batches.add(1, ordering: .relaxed)
            await Task { await Self.commit(sends, on: postgres) }.value
        }
        guard let outcome = send.outcome else { throw DatabaseUnavailable(cause: "a batch ended without this send") }
        return try outcome.get()
    }

    /// Each of `sends` answered, or failed.
    static func commit(_ sends: [KnownSend], on postgres: PostgresDatabase) async {
        do {
            let answers = try await storeTogether(sends, on: postgres)
            for (send, answer) in zip(sends, answers) { send.outcome = .success(answer) }
        } catch {
            guard sends.count > 1, !(error is DatabaseUnavailable) else {
                for send in sends { send.outcome = .failure(error) }
                return
            }
            for send in sends {
                do { send.outcome = .success(try await storeTogether([send], on: postgres)[0]) } catch { send.outcome = .failure(error) }
            }
        }
    }

    /// One statement for `sends`; an answer for each.
    static func storeTogether(_ sends: [KnownSend], on postgres: PostgresDatabase) async throws -> [KnownSend.Answer] {
        let waited = ContinuousClock.now - (sends.map(\.asked).min() ?? .now)
        let messages = sends.flatMap(\.messages), transitions = sends.flatMap(\.transitions)
        var b = PostgresBindings(capacity: 16)
        b.append(sends.map(\.sender)); b.append(sends.map(\.now)); b.append(sends.map { Int32(clamping: $0.perHour) })
        b.append(sends.map { Int32($0.messages.count) })
        HubStore.appendMessages(messages, to: &b)
        b.append(sends.first?.channel ?? ""); b.append(sends.flatMap(\.payloads))
        b.append(transitions.map { $0?.transition ?? "" }); b.append(transitions.map { $0?.speed ?? "" })
        let rows = try await postgres.query(PostgresQuery(
            unsafeSQL: "SELECT full_at, statuses FROM flaphub_send_known_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
            binds: b), within: postgres.deadline - waited)
        guard rows.count == sends.count, rows.allSatisfy({ $0.count == 2 }) else {
            throw SQLFailure(message: "flaphub_send_known_batch answered \(rows.count) rows for \(sends.count) sends", sqlState: nil)
        }
        return rows.map { row in
            KnownSend.Answer(fullAt: row[0].double, statuses: (row[1].text ?? "").split(separator: ",").map { Int($0) ?? -1 })
        }
    }
}

/// One send of a batch (`KnownSends`): its messages, one a recipient, with the board transition
/// each was made with; and, once its batch is over, what the database answered or why it did
/// not. (`@unchecked Sendable`: `outcome` is written by the batch's leader before the send's
/// turn, and read by its caller after it.)
final class KnownSend: GroupCommitTurn, @unchecked Sendable {
    struct Answer: Sendable {
        var fullAt: Double?
        var statuses: [Int]
    }
    let messages: [HubStore.Message]
    let transitions: [HubStore.BoardTransition?]
    let sender: String
    let now: Double
    let perHour: Int
    let channel: String?
    let payloads: [String]
    /// When it was asked: its wait for the database counts from here.
    let asked: ContinuousClock.Instant
    var outcome: Result<Answer, any Error>?

    init(_ messages: [HubStore.Message], transitions: [HubStore.BoardTransition?], by sender: String, now: Double,
         perHour: Int, notifying: (channel: String, payloads: [String])?, asked: ContinuousClock.Instant = .now) {
        self.messages = messages
        self.transitions = transitions
        self.sender = sender
        self.now = now
        self.perHour = perHour
        channel = notifying?.channel
        payloads = notifying?.payloads ?? []
        self.asked = asked
    }
}
