import Logging

extension HubSchema {
    /// `flaphub_instances`: each instance's channel, by the session that listens on it (its
    /// process id and start, as `pg_stat_activity` says; a row whose session has gone is swept).
    /// `flaphub_notify`: `p_payloads`, in order, to every registered channel but `p_channel`, the
    /// caller's own — and to `p_channel` itself when it is not registered (an instance of an
    /// earlier version, which listens on `flaphub_events`, or a test's channel). It holds the
    /// registry's lock shared until its transaction commits, so an instance that registers
    /// (holding it alone) waits for every send that could not see it to commit: its boards (it
    /// closes the sockets of any it served before, to reconnect) find those messages stored
    /// when they catch up.
    /// `flaphub_send` (same arguments) notifies through it.
    static let v10 = """
        CREATE TABLE IF NOT EXISTS flaphub_instances(
            channel TEXT PRIMARY KEY, pid INTEGER NOT NULL, backend_start TIMESTAMPTZ, registered_at DOUBLE PRECISION NOT NULL);
        CREATE OR REPLACE FUNCTION flaphub_notify(p_channel TEXT, p_payloads TEXT[]) RETURNS VOID LANGUAGE plpgsql AS $$
        BEGIN
            IF coalesce(array_length(p_payloads, 1), 0) = 0 THEN RETURN; END IF;
            PERFORM pg_advisory_xact_lock_shared(hashtext('\(PostgresRelay.registryLock)'));
            PERFORM pg_notify(c.channel, n.payload)
                FROM (SELECT i.channel FROM flaphub_instances i WHERE i.channel <> p_channel
                      UNION ALL SELECT p_channel WHERE NOT EXISTS(SELECT 1 FROM flaphub_instances i WHERE i.channel = p_channel)) AS c,
                    unnest(p_payloads) WITH ORDINALITY AS n(payload, k)
                ORDER BY c.channel, n.k;
        END $$;
        \(v8Send(notify: "PERFORM flaphub_notify(p_channel, p_payloads);"))
        """
}

extension PostgresRelay {
    /// The advisory lock (`hashtext` of it) a registration holds alone and a notification shared.
    static let registryLock = "flaphub.instances"

    /// Rows of sessions that have gone (an instance killed, or its listening connection lost):
    /// a session another role holds may hide its start, and then its process id alone counts.
    static let sweep = """
        DELETE FROM flaphub_instances i WHERE NOT EXISTS(SELECT 1 FROM pg_stat_activity a
            WHERE a.pid = i.pid AND (a.backend_start IS NULL OR a.backend_start = i.backend_start))
        """

    /// Registers `channel` as heard by session `pid` (after it listens, before this instance
    /// serves a board or passes a gap on), sweeping gone sessions' rows first.
    func register(listener pid: Int64, now: Double) async throws {
        let channel = channel
        try await database.transaction(lock: Self.registryLock) { c in
            try await c.query(Self.sweep, [])
            try await c.query("""
                INSERT INTO flaphub_instances(channel, pid, backend_start, registered_at)
                    VALUES(?, ?, (SELECT a.backend_start FROM pg_stat_activity a WHERE a.pid = ?), ?)
                    ON CONFLICT (channel) DO UPDATE SET pid = excluded.pid, backend_start = excluded.backend_start,
                        registered_at = excluded.registered_at
                """, [.text(channel), .int(pid), .int(pid), .double(now)])
        }
    }

    /// Sweeps gone sessions' rows every `period` until cancelled (an instance killed is told
    /// nothing more within a period; until then, notifications to it cost the senders a little).
    func sweep(every period: Duration) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: period) } catch { return }
            do { try await database.query(Self.sweep, []) } catch { logger.warning("could not sweep the instances' registry: \(error)") }
        }
    }

    /// Removes this instance's row, as it stops.
    func deregister() async {
        do { try await database.query("DELETE FROM flaphub_instances WHERE channel = ?", [.text(channel)]) } catch {
            logger.warning("could not remove this instance from the registry: \(error)")
        }
    }
}
