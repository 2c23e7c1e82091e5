import Synchronization

/// Group commit: work that callers ask while a batch is being committed waits and goes together,
/// as the next batch. One caller at a time leads — commits everything queued, its own job
/// first — then hands the lead to the first job that came meanwhile (whose caller waits), and
/// returns; the others wait only for their own batch, not for each other's turns. SQLite's
/// writes (`SQLiteDatabase`) and PostgreSQL's sends to known recipients (`KnownSends`).
final class GroupCommit<Job: GroupCommitTurn>: Sendable {
    /// Jobs waiting for the next batch, in the order they came, and whether a batch is being
    /// committed (then its leader, or the one it hands the lead to, takes them).
    private let queue = Mutex<(jobs: [Job], committing: Bool)>(([], false))

    /// How many jobs wait for the next batch.
    var queued: Int { queue.withLock { $0.jobs.count } }

    /// Returns once `job` has been committed by `commit` — in a batch this caller led, or another's.
    func run(_ job: Job, commit: ([Job]) async -> Void) async {
        let leads = queue.withLock { q in
            q.jobs.append(job)
            if q.committing { return false }
            q.committing = true
            return true
        }
        let turn = leads ? .lead : await job.turn()
        guard turn == .lead else { return }
        let jobs = queue.withLock { q in defer { q.jobs = [] }; return q.jobs }
        await commit(jobs)
        for other in jobs where other !== job { other.resume(.done) }
        let next = queue.withLock { q -> Job? in
            if q.jobs.isEmpty { q.committing = false }
            return q.jobs.first
        }
        next?.resume(.lead)
    }
}

/// A job's turn in a group commit: its caller waits (`turn`) until the job is done, or it is to
/// lead the next batch.
class GroupCommitTurn: @unchecked Sendable {
    enum Turn: Sendable { case done, lead }
    private let state = Mutex<(turn: Turn?, waiter: CheckedContinuation<Turn, Never>?)>((nil, nil))

    /// Waits until the job is done, or its caller is to lead the next batch.
    func turn() async -> Turn {
        await withCheckedContinuation { (c: CheckedContinuation<Turn, Never>) in
            let now = state.withLock { s -> Turn? in
                if let turn = s.turn { return turn }
                s.waiter = c
                return nil
            }
            if let now { c.resume(returning: now) }
        }
    }

    func resume(_ turn: Turn) {
        let waiter = state.withLock { s in
            s.turn = turn
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: turn)
    }
}
