/// flaphub's tables, the same in SQLite and PostgreSQL (PostgreSQL's types named as it names
/// them; a username unique whatever its case in both). Times are seconds since 1970.
enum HubSchema {
    /// In order; each runs once per database, at the first start after an upgrade.
    static let migrations = [
        Migration(version: 1, sqlite: v1(real: "REAL", username: "username TEXT NOT NULL UNIQUE COLLATE NOCASE", index: ""),
                  postgres: v1(real: "DOUBLE PRECISION", username: "username TEXT NOT NULL",
                               index: "CREATE UNIQUE INDEX IF NOT EXISTS users_username ON users(lower(username));")),
        // transition, arriveAt, duration, forced (JSON)
        Migration(version: 2, sqlite: "ALTER TABLE messages ADD COLUMN options TEXT;", postgres: "ALTER TABLE messages ADD COLUMN options TEXT;"),
        // The sender's page: boards' faces, one-time sign-in links, sessions, a sender's messages.
        Migration(version: 3, sqlite: v3(real: "REAL"), postgres: v3(real: "DOUBLE PRECISION")),
        // Vestaboard's Cloud and Read/Write APIs: tokens, what each board shows, its transition.
        Migration(version: 4, sqlite: v4(real: "REAL"), postgres: v4(real: "DOUBLE PRECISION")),
        // PostgreSQL: a send in one statement (issue 37) — SQLite's sends are batched in-process.
        Migration(version: 5, sqlite: "", postgres: v5),
        // SQLite: a user found by name (`lower(username) = lower(?)`, every send's recipient) used
        // no index — the column's own is NOCASE, not lower(): each lookup read every user (a send
        // to one of 10,000 boards cost flaphub 1.85 ms against 0.48 with 1,000). PostgreSQL has
        // had this index since version 1.
        Migration(version: 6, sqlite: "CREATE INDEX IF NOT EXISTS users_lower_username ON users(lower(username));", postgres: ""),
        // PostgreSQL: a send's recipient and a batch of delivery marks as server-side functions,
        // whose plans PL/pgSQL keeps (issue 37): as statements of their own, each was parsed and
        // planned again every time — 29 % of PostgreSQL's processor time in a saturated run.
        Migration(version: 7, sqlite: "", postgres: v7),
        // Each send of a sender numbered in order (`sends.n`), so the hourly limit reads the
        // latest and the limit-th latest by the index, not every send of the hour (issue 37: a
        // sender under a limit of 1,000,000 stepped over up to all its sends of the hour at each
        // send). The sends kept (an hour's) are numbered as they were made.
        Migration(version: 8, sqlite: v8(rowID: "rowid", order: "at, rowid", function: ""), postgres: v8(rowID: "ctid", order: "at", function: v8Send)),
        // PostgreSQL: a send to recipients this instance already knows, checked and stored in one
        // round trip (issue 37: the recipient's own round trip was most of what a send cost flaphub
        // beside HTTP).
        Migration(version: 9, sqlite: "", postgres: v9),
        // PostgreSQL: sends to known recipients in batches, one statement and one commit for the
        // sends asked while the one before was stored (issue 37: a round trip a send was most of
        // what PostgreSQL's path cost flaphub beyond SQLite's).
        Migration(version: 10, sqlite: "", postgres: v10),
    ]

    /// `flaphub_send_known`: `flaphub_send` (same arguments first) for recipients as the caller
    /// knew them — by id, with their board's transition (`p_transitions`, `p_speeds`; '' none) —
    /// checked first in the same statement: each recipient's status, 0 when still as known, 1 no
    /// such user, 2 blocks the sender, 3 not a friend, 4 another transition. Nothing is stored when
    /// any is not 0 (`statuses` says which); else `full_at` is `flaphub_send`'s answer.
    static let v9 = """
        CREATE OR REPLACE FUNCTION flaphub_send_known(p_sender TEXT, p_now DOUBLE PRECISION, p_per_hour INTEGER,
            p_ids TEXT[], p_recipients TEXT[], p_contents TEXT[], p_types TEXT[], p_created DOUBLE PRECISION[],
            p_unlocks DOUBLE PRECISION[], p_expires DOUBLE PRECISION[], p_options TEXT[], p_channel TEXT, p_payloads TEXT[],
            p_transitions TEXT[], p_speeds TEXT[], OUT full_at DOUBLE PRECISION, OUT statuses INTEGER[])
        LANGUAGE plpgsql AS $$
        DECLARE i INTEGER; status INTEGER; stale BOOLEAN := false; known_transition TEXT; known_speed TEXT;
        BEGIN
            -- A recipient at a time, each by its primary keys (as a join over unnest() the check
            -- cost PostgreSQL 0.56 ms a send, against 0.36 so).
            statuses := '{}';
            FOR i IN 1 .. coalesce(array_length(p_recipients, 1), 0) LOOP
                IF NOT EXISTS(SELECT 1 FROM users u WHERE u.id = p_recipients[i]) THEN status := 1;
                ELSIF EXISTS(SELECT 1 FROM blocks b WHERE b.user_id = p_recipients[i] AND b.blocked_id = p_sender) THEN status := 2;
                ELSIF NOT EXISTS(SELECT 1 FROM friendships f WHERE f.user_id = p_sender AND f.friend_id = p_recipients[i]) THEN status := 3;
                ELSE
                    known_transition := NULL; known_speed := NULL;
                    SELECT t.transition, t.speed INTO known_transition, known_speed FROM board_transitions t WHERE t.user_id = p_recipients[i];
                    status := CASE WHEN coalesce(known_transition, '') = p_transitions[i] AND coalesce(known_speed, '') = p_speeds[i] THEN 0 ELSE 4 END;
                END IF;
                statuses := statuses || status;
                stale := stale OR status <> 0;
            END LOOP;
            IF stale THEN RETURN; END IF;
            full_at := flaphub_send(p_sender, p_now, p_per_hour, p_ids, p_recipients, p_contents, p_types, p_created,
                p_unlocks, p_expires, p_options, p_channel, p_payloads);
        END $$
        """

    /// `flaphub_send_known_batch`: `flaphub_send_known` for each of several sends, in order, in
    /// one statement — each send's messages the next `p_counts[s]` of the message arrays (its
    /// notifications too when there is one a message), each send's answer a row: its `full_at`
    /// and its statuses joined by commas. The senders' locks are taken first, in the order of
    /// their keys, so two batches (of two instances) that share senders never wait for each other
    /// in a circle.
    static let v10 = """
        CREATE OR REPLACE FUNCTION flaphub_send_known_batch(p_senders TEXT[], p_nows DOUBLE PRECISION[], p_per_hours INTEGER[],
            p_counts INTEGER[], p_ids TEXT[], p_recipients TEXT[], p_contents TEXT[], p_types TEXT[], p_created DOUBLE PRECISION[],
            p_unlocks DOUBLE PRECISION[], p_expires DOUBLE PRECISION[], p_options TEXT[], p_channel TEXT, p_payloads TEXT[],
            p_transitions TEXT[], p_speeds TEXT[])
        RETURNS TABLE(full_at DOUBLE PRECISION, statuses TEXT) LANGUAGE plpgsql AS $$
        DECLARE s INTEGER; k INTEGER; lo INTEGER := 1; hi INTEGER; notifying BOOLEAN; r RECORD;
        BEGIN
            FOR k IN SELECT DISTINCT hashtext('sends:' || x) FROM unnest(p_senders) AS x ORDER BY 1 LOOP
                PERFORM pg_advisory_xact_lock(k);
            END LOOP;
            notifying := cardinality(p_payloads) = cardinality(p_ids);
            FOR s IN 1 .. coalesce(array_length(p_senders, 1), 0) LOOP
                hi := lo + p_counts[s] - 1;
                SELECT * INTO r FROM flaphub_send_known(p_senders[s], p_nows[s], p_per_hours[s], p_ids[lo:hi],
                    p_recipients[lo:hi], p_contents[lo:hi], p_types[lo:hi], p_created[lo:hi], p_unlocks[lo:hi], p_expires[lo:hi],
                    p_options[lo:hi], p_channel, CASE WHEN notifying THEN p_payloads[lo:hi] ELSE '{}' END,
                    p_transitions[lo:hi], p_speeds[lo:hi]);
                full_at := r.full_at;
                statuses := array_to_string(r.statuses, ',');
                RETURN NEXT;
                lo := hi + 1;
            END LOOP;
        END $$
        """

    /// Numbers the sends kept, by sender in the order they were made; the unique index by sender
    /// and number replaces the one by sender and instant.
    private static func v8(rowID: String, order: String, function: String) -> String {
        """
        ALTER TABLE sends ADD COLUMN n INTEGER;
        UPDATE sends SET n = r.n FROM (SELECT \(rowID) AS row_id,
            row_number() OVER (PARTITION BY sender_id ORDER BY \(order)) AS n FROM sends) AS r
            WHERE sends.\(rowID) = r.row_id;
        CREATE UNIQUE INDEX IF NOT EXISTS sends_by_sender_n ON sends(sender_id, n);
        DROP INDEX IF EXISTS sends_by_sender;
        \(function)
        """
    }

    /// `flaphub_send` (`v5`) with the hourly limit of version 8 (`HubStore.checkLimit`): the
    /// same arguments and answer, so an instance of an older version calls it as before.
    static let v8Send = """
        CREATE OR REPLACE FUNCTION flaphub_send(p_sender TEXT, p_now DOUBLE PRECISION, p_per_hour INTEGER,
            p_ids TEXT[], p_recipients TEXT[], p_contents TEXT[], p_types TEXT[], p_created DOUBLE PRECISION[],
            p_unlocks DOUBLE PRECISION[], p_expires DOUBLE PRECISION[], p_options TEXT[], p_channel TEXT, p_payloads TEXT[])
        RETURNS DOUBLE PRECISION LANGUAGE plpgsql AS $$
        DECLARE full_at DOUBLE PRECISION; latest INTEGER;
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtext('sends:' || p_sender));
            SELECT coalesce(max(s.n), 0) INTO latest FROM sends s WHERE s.sender_id = p_sender;
            IF latest >= p_per_hour THEN
                SELECT s.at INTO full_at FROM sends s WHERE s.sender_id = p_sender AND s.n = latest - p_per_hour + 1 AND s.at > p_now - 3600;
                IF full_at IS NOT NULL THEN RETURN full_at; END IF;
            END IF;
            INSERT INTO messages(id, sender_id, recipient_id, content, content_type, created_at, unlock_at, expires_at, options)
                SELECT m.id, p_sender, m.recipient, m.content, m.kind, m.created, NULLIF(m.unlock, 'NaN'), m.expires, NULLIF(m.options, '')
                FROM unnest(p_ids, p_recipients, p_contents, p_types, p_created, p_unlocks, p_expires, p_options)
                    AS m(id, recipient, content, kind, created, unlock, expires, options);
            INSERT INTO sends(sender_id, at, n) VALUES(p_sender, p_now, latest + 1);
            PERFORM pg_notify(p_channel, n.payload) FROM unnest(p_payloads) AS n(payload);
            RETURN NULL;
        END $$
        """

    /// `flaphub_send`: what `HubStore.send` does in a transaction, as one server-side function —
    /// one round trip instead of six (BEGIN, the sender's lock, the hourly limit, the messages,
    /// the send, COMMIT) and one more for each recipient's notification to the other instances
    /// (`p_payloads` on `p_channel`, sent at the commit: an event for a message never stored is
    /// never sent); and plans PL/pgSQL keeps. The same lock key as the transaction's
    /// (`hashtext('sends:' || sender)`), so an instance of an older version counts beside it.
    /// Returns NULL when stored, or the instant of the send whose hour must end first (nothing
    /// stored or sent: the 429). One entry per recipient in each message array; an unlock of
    /// NaN and options of '' are NULL (postgres-nio's arrays hold no NULL).
    static let v5 = """
        CREATE OR REPLACE FUNCTION flaphub_send(p_sender TEXT, p_now DOUBLE PRECISION, p_per_hour INTEGER,
            p_ids TEXT[], p_recipients TEXT[], p_contents TEXT[], p_types TEXT[], p_created DOUBLE PRECISION[],
            p_unlocks DOUBLE PRECISION[], p_expires DOUBLE PRECISION[], p_options TEXT[], p_channel TEXT, p_payloads TEXT[])
        RETURNS DOUBLE PRECISION LANGUAGE plpgsql AS $$
        DECLARE full_at DOUBLE PRECISION;
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtext('sends:' || p_sender));
            SELECT s.at INTO full_at FROM sends s WHERE s.sender_id = p_sender AND s.at > p_now - 3600
                ORDER BY s.at DESC LIMIT 1 OFFSET p_per_hour - 1;
            IF full_at IS NOT NULL THEN RETURN full_at; END IF;
            INSERT INTO messages(id, sender_id, recipient_id, content, content_type, created_at, unlock_at, expires_at, options)
                SELECT m.id, p_sender, m.recipient, m.content, m.kind, m.created, NULLIF(m.unlock, 'NaN'), m.expires, NULLIF(m.options, '')
                FROM unnest(p_ids, p_recipients, p_contents, p_types, p_created, p_unlocks, p_expires, p_options)
                    AS m(id, recipient, content, kind, created, unlock, expires, options);
            INSERT INTO sends(sender_id, at) VALUES(p_sender, p_now);
            PERFORM pg_notify(p_channel, n.payload) FROM unnest(p_payloads) AS n(payload);
            RETURN NULL;
        END $$
        """

    /// `flaphub_recipient`: `HubStore.recipient`'s statement — a user by id (`p_id`, lowercased)
    /// or name (`p_name`, any case); whether they block `p_sender`, whether they are friends, and
    /// their board's transition. `flaphub_mark_delivered`: `HubStore.markDelivered`'s — the rows
    /// of the messages of `p_ids` not yet delivered nor expired, now marked delivered at `p_now`.
    static let v7 = """
        CREATE OR REPLACE FUNCTION flaphub_recipient(p_sender TEXT, p_id TEXT, p_name TEXT)
        RETURNS TABLE(r_id TEXT, r_username TEXT, r_display_name TEXT, r_blocks INTEGER, r_friends INTEGER,
            r_transition TEXT, r_speed TEXT)
        LANGUAGE plpgsql STABLE AS $$
        BEGIN
            RETURN QUERY SELECT u.id, u.username, u.display_name,
                CASE WHEN EXISTS(SELECT 1 FROM blocks b WHERE b.user_id = u.id AND b.blocked_id = p_sender) THEN 1 ELSE 0 END,
                CASE WHEN EXISTS(SELECT 1 FROM friendships f WHERE f.user_id = p_sender AND f.friend_id = u.id) THEN 1 ELSE 0 END,
                t.transition, t.speed
            FROM users u LEFT JOIN board_transitions t ON t.user_id = u.id
            WHERE u.id = p_id OR lower(u.username) = lower(p_name);
        END $$;
        CREATE OR REPLACE FUNCTION flaphub_mark_delivered(p_ids TEXT[], p_now DOUBLE PRECISION)
        RETURNS SETOF messages LANGUAGE plpgsql AS $$
        BEGIN
            RETURN QUERY UPDATE messages m SET delivered_at = p_now
                WHERE m.id = ANY(p_ids) AND m.delivered_at IS NULL AND m.expires_at > p_now RETURNING m.*;
        END $$
        """

    private static func v4(real: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS vestaboard_tokens(
            id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            can_read INTEGER NOT NULL, can_write INTEGER NOT NULL, created_at \(real) NOT NULL);
        CREATE TABLE IF NOT EXISTS board_layouts(
            user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, id TEXT NOT NULL,
            layout TEXT NOT NULL, reported_at \(real) NOT NULL);
        CREATE TABLE IF NOT EXISTS board_transitions(
            user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, transition TEXT NOT NULL, speed TEXT NOT NULL);
        """
    }

    private static func v3(real: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS board_faces(
            user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, face TEXT NOT NULL, reported_at \(real) NOT NULL);
        CREATE TABLE IF NOT EXISTS sign_in_links(
            code_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, expires_at \(real) NOT NULL);
        CREATE TABLE IF NOT EXISTS sessions(
            token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at \(real) NOT NULL, expires_at \(real) NOT NULL);
        CREATE INDEX IF NOT EXISTS messages_sent ON messages(sender_id, created_at);
        """
    }

    private static func v1(real: String, username: String, index: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS users(
            id TEXT PRIMARY KEY, \(username), display_name TEXT,
            token_hash TEXT NOT NULL UNIQUE, created_at \(real) NOT NULL);
        \(index)
        CREATE TABLE IF NOT EXISTS friendships(
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            friend_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at \(real) NOT NULL, PRIMARY KEY(user_id, friend_id));
        CREATE TABLE IF NOT EXISTS friend_requests(
            id TEXT PRIMARY KEY, from_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            to_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            status TEXT NOT NULL DEFAULT 'pending', created_at \(real) NOT NULL, UNIQUE(from_id, to_id));
        CREATE TABLE IF NOT EXISTS blocks(
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            blocked_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, PRIMARY KEY(user_id, blocked_id));
        CREATE TABLE IF NOT EXISTS messages(
            id TEXT PRIMARY KEY, sender_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            recipient_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            content TEXT NOT NULL, content_type TEXT NOT NULL, created_at \(real) NOT NULL, unlock_at \(real),
            expires_at \(real) NOT NULL, delivered_at \(real), displayed_at \(real));
        CREATE INDEX IF NOT EXISTS messages_inbox ON messages(recipient_id, sender_id, created_at);
        CREATE TABLE IF NOT EXISTS sends(sender_id TEXT NOT NULL, at \(real) NOT NULL);
        CREATE INDEX IF NOT EXISTS sends_by_sender ON sends(sender_id, at);
        """
    }
}
