"""The versioned schema of the database stores.

Each :class:`Migration` has a version (1, 2, ...), a name and the statements
that take a database from the previous version to it, once for SQLite and
once for PostgreSQL. A store applies, in one transaction per migration, the
ones its database has not recorded yet in ``a2a_schema_migrations(version,
name, applied_at)``, so a fresh database gets the whole schema and an
existing one only what is new. Migrations are append-only: never edit one
that has shipped, add the next version instead.

PostgreSQL statements contain ``{schema}``, replaced by the quoted schema
name. Text columns compared or ordered by the stores use ``COLLATE "C"`` so
ordering is by code point, exactly as Python orders ``str``.

Tables (both databases):

* ``a2a_tasks``: one row per task: ``id``, ``scope`` (the owner and tenant
  as the JSON text ``[owner, tenant]``), ``context_id``, ``state``,
  ``status_key`` (the status timestamp in microseconds since the epoch, the
  listing order), ``version``, ``last_seq``, ``terminal_at`` (when the task
  first reached a terminal state), ``created_at``, ``updated_at`` and the
  snapshot ``task`` (the A2A 1.0 JSON of the Task); since migration 13
  ``started_by`` (the digest of the scope and messageId of the client's message
  that created the task, unique per scope: see v13 below).
* ``a2a_task_events``: the event log, primary key ``(task_key, seq)``
  (``task_id`` before migration 5), each ``event`` the 1.0 JSON of a
  StreamResponse, since migration 5 in the stored form of ``_eventlog``.
* ``a2a_task_messages`` / ``a2a_task_artifacts``: history messages and
  artifacts, one row each (migrations 3 and 5); since migration 9 an
  artifact streamed in appended chunks has more rows, its pieces (``_pieces``).
* ``a2a_push_configs``: push-notification configs, primary key
  ``(task_id, config_id)``, ``position`` keeping creation order; since
  migration 11 ``owed_seq``, ``delivered_seq`` and ``claim_expires``: what
  push notification the config is owed (see v11 below); since migration 12
  ``dialect`` (``1.0`` or ``0.3``: the protocol the config was set through).

The listing indexes of ``a2a_tasks`` serve every ListTasks filter in the listing
order (``status_key`` descending): ``a2a_tasks_list`` (none), ``_context``,
``_state`` and, since migration 14, ``_context_state`` (context and status).

Events, history, artifacts and push configs are deleted with their task
(``ON DELETE CASCADE``).
In PostgreSQL the push configs are ``jsonb``; the few values ``jsonb``
cannot keep exactly (``\\u0000``, lone surrogates, floats written with a
positive exponent, ``-0.0``) are kept in a ``*_raw bytea`` column beside it,
which the store reads instead. Since migration 7 the snapshot, history and
artifact columns are ``bytea``, the exact JSON bytes (nothing queries inside
them), and the event log keeps a task's consecutive events in chunk rows
(``_eventlog``).
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from ..errors import A2AError

__all__ = [
    "CONTEXT_COUNTED",
    "MIGRATIONS",
    "POSTGRES_RECOUNT",
    "Migration",
    "POSTGRES_MIN_VERSION",
    "SchemaVersionError",
    "check_postgres_version",
    "latest_version",
]


class SchemaVersionError(A2AError, RuntimeError):
    """The database is not one this a2a-models can use: migrated by a newer a2a-models
    than this one, or a PostgreSQL server older than :data:`POSTGRES_MIN_VERSION`."""


#: The oldest PostgreSQL server the store runs on (``server_version_num``): 13 brought
#: ``pg_current_xact_id``/``pg_xact_status``, which tell whether a write whose COMMIT
#: answer was lost took effect.
POSTGRES_MIN_VERSION = 130000


def check_postgres_version(server_version: int) -> None:
    """Raise :class:`SchemaVersionError` for a server older than :data:`POSTGRES_MIN_VERSION`
    (``server_version`` as libpq gives it: 150020 for 15.20), naming both."""
    if server_version < POSTGRES_MIN_VERSION:
        major, minor = divmod(server_version, 10000)
        if major < 10:  # 9.6.24 is 90624
            major, minor = divmod(server_version, 100)
            shown = f"{major // 100}.{major % 100}.{minor}"
        else:
            shown = f"{major}.{minor}"
        raise SchemaVersionError(
            f"the task store needs PostgreSQL 13 or later; this server is {shown}"
        )


@attrs.frozen
class Migration:
    version: int
    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


_SQLITE_V1 = (
    """
    CREATE TABLE a2a_tasks (
        id          TEXT    NOT NULL PRIMARY KEY,
        scope       TEXT    NOT NULL,
        context_id  TEXT,
        state       TEXT    NOT NULL,
        status_key  INTEGER NOT NULL,
        version     INTEGER NOT NULL,
        last_seq    INTEGER NOT NULL,
        terminal_at REAL,
        created_at  REAL    NOT NULL,
        updated_at  REAL    NOT NULL,
        task        TEXT    NOT NULL
    )
    """,
    "CREATE INDEX a2a_tasks_list ON a2a_tasks (scope, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_context ON a2a_tasks (scope, context_id, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_state ON a2a_tasks (scope, state, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_terminal ON a2a_tasks (terminal_at) WHERE terminal_at IS NOT NULL",
    """
    CREATE TABLE a2a_task_events (
        task_id    TEXT    NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        event      TEXT    NOT NULL,
        created_at REAL    NOT NULL,
        PRIMARY KEY (task_id, seq)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE a2a_push_configs (
        task_id   TEXT    NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        config_id TEXT    NOT NULL,
        position  INTEGER NOT NULL,
        config    TEXT    NOT NULL,
        PRIMARY KEY (task_id, config_id)
    )
    """,
)

_POSTGRES_V1 = (
    """
    CREATE TABLE {schema}.a2a_tasks (
        id          text COLLATE "C" NOT NULL PRIMARY KEY,
        scope       text COLLATE "C" NOT NULL,
        context_id  text COLLATE "C",
        state       text   NOT NULL,
        status_key  bigint NOT NULL,
        version     bigint NOT NULL,
        last_seq    bigint NOT NULL,
        terminal_at timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now(),
        task        jsonb  NOT NULL,
        task_raw    bytea
    )
    """,
    "CREATE INDEX a2a_tasks_list ON {schema}.a2a_tasks (scope, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_context ON {schema}.a2a_tasks (scope, context_id, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_state ON {schema}.a2a_tasks (scope, state, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_terminal"
    " ON {schema}.a2a_tasks (terminal_at) WHERE terminal_at IS NOT NULL",
    """
    CREATE TABLE {schema}.a2a_task_events (
        task_id    text COLLATE "C" NOT NULL
                   REFERENCES {schema}.a2a_tasks (id) ON DELETE CASCADE,
        seq        bigint NOT NULL,
        event      jsonb  NOT NULL,
        event_raw  bytea,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, seq)
    )
    """,
    """
    CREATE TABLE {schema}.a2a_push_configs (
        task_id    text COLLATE "C" NOT NULL
                   REFERENCES {schema}.a2a_tasks (id) ON DELETE CASCADE,
        config_id  text COLLATE "C" NOT NULL,
        position   bigint GENERATED ALWAYS AS IDENTITY,
        config     jsonb NOT NULL,
        config_raw bytea,
        PRIMARY KEY (task_id, config_id)
    )
    """,
)

# --- v2: task counts for an exact ListTasks totalSize that does not grow with the tasks ----
#
# ``a2a_task_counts(scope, dim, key, n)``: how many tasks of ``scope`` have
# ``dim`` = ``key``: dim ``all`` (key ``''``), ``context`` (the context_id
# column), ``state``, and ``context_state`` (``state || ' ' || context_id``).
# Triggers on ``a2a_tasks`` keep them exact in the writing transaction (rows
# reaching 0 are deleted); the migration counts the tasks already stored.
# PostgreSQL takes the counter rows in one global order (dim, then key), so
# concurrent writers cannot deadlock on them.

_SQLITE_COUNT_ROWS = """
    SELECT {r}.scope, 'all', '', {d} WHERE true
    UNION ALL SELECT {r}.scope, 'context', {r}.context_id, {d} WHERE {r}.context_id IS NOT NULL
    UNION ALL SELECT {r}.scope, 'state', {r}.state, {d} WHERE true
    UNION ALL SELECT {r}.scope, 'context_state', {r}.state || ' ' || {r}.context_id, {d}
        WHERE {r}.context_id IS NOT NULL
"""


# Since v5: without the ``context`` rows (see v5).
_SQLITE_COUNT_ROWS_V5 = """
    SELECT {r}.scope, 'all', '', {d} WHERE true
    UNION ALL SELECT {r}.scope, 'state', {r}.state, {d} WHERE true
    UNION ALL SELECT {r}.scope, 'cs', substr({r}.state, 12) || ' ' || {r}.context_id, {d}
        WHERE {r}.context_id IS NOT NULL
"""


def _sqlite_bump(row: str, delta: str, template: str = _SQLITE_COUNT_ROWS) -> str:
    rows = template.format(r=row, d=delta)
    return (
        f"INSERT INTO a2a_task_counts (scope, dim, key, n) SELECT * FROM ({rows}) WHERE true"
        " ON CONFLICT (scope, dim, key) DO UPDATE SET n = n + excluded.n;"
        " DELETE FROM a2a_task_counts WHERE n = 0 AND scope = "
        f"{row}.scope;"
    )


def _sqlite_count_triggers(template: str) -> tuple[str, ...]:
    return (
        "CREATE TRIGGER a2a_tasks_count_insert AFTER INSERT ON a2a_tasks BEGIN "
        + _sqlite_bump("NEW", "1", template)
        + " END",
        "CREATE TRIGGER a2a_tasks_count_delete AFTER DELETE ON a2a_tasks BEGIN "
        + _sqlite_bump("OLD", "-1", template)
        + " END",
        "CREATE TRIGGER a2a_tasks_count_update AFTER UPDATE OF scope, context_id, state"
        " ON a2a_tasks WHEN OLD.scope IS NOT NEW.scope OR OLD.context_id IS NOT NEW.context_id"
        " OR OLD.state IS NOT NEW.state BEGIN "
        + _sqlite_bump("OLD", "-1", template)
        + " "
        + _sqlite_bump("NEW", "1", template)
        + " END",
    )


_SQLITE_V2 = (
    """
    CREATE TABLE a2a_task_counts (
        scope TEXT    NOT NULL,
        dim   TEXT    NOT NULL,
        key   TEXT    NOT NULL,
        n     INTEGER NOT NULL,
        PRIMARY KEY (scope, dim, key)
    ) WITHOUT ROWID
    """,
    *_sqlite_count_triggers(_SQLITE_COUNT_ROWS),
    """
    INSERT INTO a2a_task_counts (scope, dim, key, n)
    SELECT scope, dim, key, count(*) FROM (
        SELECT scope, 'all' AS dim, '' AS key FROM a2a_tasks
        UNION ALL SELECT scope, 'context', context_id FROM a2a_tasks
            WHERE context_id IS NOT NULL
        UNION ALL SELECT scope, 'state', state FROM a2a_tasks
        UNION ALL SELECT scope, 'context_state', state || ' ' || context_id
            FROM a2a_tasks WHERE context_id IS NOT NULL
    ) GROUP BY scope, dim, key
    """,
)

_POSTGRES_V2 = (
    """
    CREATE TABLE {schema}.a2a_task_counts (
        scope text COLLATE "C" NOT NULL,
        dim   text COLLATE "C" NOT NULL,
        key   text COLLATE "C" NOT NULL,
        n     bigint NOT NULL,
        PRIMARY KEY (scope, dim, key)
    )
    """,
    """
    CREATE FUNCTION {schema}.a2a_count_bump(s text, d text, k text, delta bigint)
    RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        IF k IS NULL OR delta = 0 THEN
            RETURN;
        END IF;
        INSERT INTO {schema}.a2a_task_counts AS c (scope, dim, key, n) VALUES (s, d, k, delta)
            ON CONFLICT (scope, dim, key) DO UPDATE SET n = c.n + excluded.n;
        IF delta < 0 THEN
            DELETE FROM {schema}.a2a_task_counts WHERE scope = s AND dim = d AND key = k AND n = 0;
        END IF;
    END $$
    """,
    """
    CREATE FUNCTION {schema}.a2a_count_move(
        os text, ok text, ns text, nk text, d text
    ) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        IF os IS NOT DISTINCT FROM ns AND ok IS NOT DISTINCT FROM nk THEN
            RETURN;
        END IF;
        -- Lock order: (scope, key) ascending, the same in every transaction.
        IF os IS NULL OR (ns IS NOT NULL AND (ns, nk) < (os, ok)) THEN
            PERFORM {schema}.a2a_count_bump(ns, d, nk, 1);
            PERFORM {schema}.a2a_count_bump(os, d, ok, -1);
        ELSE
            PERFORM {schema}.a2a_count_bump(os, d, ok, -1);
            PERFORM {schema}.a2a_count_bump(ns, d, nk, 1);
        END IF;
    END $$
    """,
    """
    CREATE FUNCTION {schema}.a2a_tasks_count() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        os text; ns text; oc text; nc text; ost text; nst text;
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            os := OLD.scope; oc := OLD.context_id; ost := OLD.state;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            ns := NEW.scope; nc := NEW.context_id; nst := NEW.state;
        END IF;
        PERFORM {schema}.a2a_count_move(os, CASE WHEN os IS NOT NULL THEN '' END,
                                        ns, CASE WHEN ns IS NOT NULL THEN '' END, 'all');
        PERFORM {schema}.a2a_count_move(os, oc, ns, nc, 'context');
        PERFORM {schema}.a2a_count_move(os, ost, ns, nst, 'state');
        PERFORM {schema}.a2a_count_move(os, ost || ' ' || oc, ns, nst || ' ' || nc,
                                        'context_state');
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER a2a_tasks_count AFTER INSERT OR DELETE ON {schema}.a2a_tasks"
    " FOR EACH ROW EXECUTE FUNCTION {schema}.a2a_tasks_count()",
    "CREATE TRIGGER a2a_tasks_count_update AFTER UPDATE OF scope, context_id, state"
    " ON {schema}.a2a_tasks FOR EACH ROW"
    " WHEN (OLD.scope IS DISTINCT FROM NEW.scope OR OLD.context_id IS DISTINCT FROM"
    " NEW.context_id OR OLD.state IS DISTINCT FROM NEW.state)"
    " EXECUTE FUNCTION {schema}.a2a_tasks_count()",
    """
    INSERT INTO {schema}.a2a_task_counts (scope, dim, key, n)
    SELECT scope, dim, key, count(*) FROM (
        SELECT scope, 'all' AS dim, '' AS key FROM {schema}.a2a_tasks
        UNION ALL SELECT scope, 'context', context_id FROM {schema}.a2a_tasks
            WHERE context_id IS NOT NULL
        UNION ALL SELECT scope, 'state', state FROM {schema}.a2a_tasks
        UNION ALL SELECT scope, 'context_state', state || ' ' || context_id
            FROM {schema}.a2a_tasks WHERE context_id IS NOT NULL
    ) AS rows GROUP BY scope, dim, key
    """,
)

# --- v3: history messages as rows -----------------------------------------------------------
#
# ``a2a_task_messages(task_id, pos, message_id, message)``: one row per history
# message (positions 0, 1, ...). A write appends a message only if the task
# has no message with its id yet (found through the ``(task_id, message_id)``
# index); a created task's history is stored as given. The task
# row's ``history_count`` says how many; its ``task`` is then the snapshot
# *without* ``history``. ``history_count IS NULL`` marks a row written by an
# older version (history still inside ``task``): the store reads it as is and
# moves its history to rows on the row's next write.

_SQLITE_V3 = (
    "ALTER TABLE a2a_tasks ADD COLUMN history_count INTEGER",
    """
    CREATE TABLE a2a_task_messages (
        task_id    TEXT    NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        pos        INTEGER NOT NULL,
        message_id TEXT    NOT NULL,
        message    TEXT    NOT NULL,
        PRIMARY KEY (task_id, pos)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX a2a_task_messages_id ON a2a_task_messages (task_id, message_id)",
)

_POSTGRES_V3 = (
    "ALTER TABLE {schema}.a2a_tasks ADD COLUMN history_count bigint",
    """
    CREATE TABLE {schema}.a2a_task_messages (
        task_id     text COLLATE "C" NOT NULL
                    REFERENCES {schema}.a2a_tasks (id) ON DELETE CASCADE,
        pos         bigint NOT NULL,
        message_id  text COLLATE "C" NOT NULL,
        message     jsonb NOT NULL,
        message_raw bytea,
        PRIMARY KEY (task_id, pos)
    )
    """,
    "CREATE INDEX a2a_task_messages_id ON {schema}.a2a_task_messages (task_id, message_id)",
)

# --- v4: leases on running turns ---------------------------------------------------------------
#
# ``lease_owner`` (the worker running the task's turn) and ``lease_expires``
# (when the lease lapses unless renewed; NULL: no lease). A lapsed lease means
# the worker died: another one takes the task over. The second index finds
# running tasks that never got a lease (written by an older version, or a
# crash right after creation).

_RUNNING = "('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')"

_SQLITE_V4 = (
    "ALTER TABLE a2a_tasks ADD COLUMN lease_owner TEXT",
    "ALTER TABLE a2a_tasks ADD COLUMN lease_expires REAL",
    "CREATE INDEX a2a_tasks_lease ON a2a_tasks (lease_expires) WHERE lease_expires IS NOT NULL",
    "CREATE INDEX a2a_tasks_unleased ON a2a_tasks (updated_at)"
    f" WHERE lease_expires IS NULL AND state IN {_RUNNING}",
)

_POSTGRES_V4 = (
    "ALTER TABLE {schema}.a2a_tasks ADD COLUMN lease_owner text,"
    " ADD COLUMN lease_expires timestamptz",
    "CREATE INDEX a2a_tasks_lease ON {schema}.a2a_tasks (lease_expires)"
    " WHERE lease_expires IS NOT NULL",
    "CREATE INDEX a2a_tasks_unleased ON {schema}.a2a_tasks (updated_at)"
    f" WHERE lease_expires IS NULL AND state IN {_RUNNING}",
)

# --- v5: artifacts as rows, child rows keyed by a number ------------------------------------------
#
# ``a2a_task_artifacts(task_key, pos, artifact, ref_seq)``: one row per
# artifact, at its position (0, 1, ...); a write rewrites only the rows of the
# artifacts it changed. The task row's ``artifact_count`` says how many; its
# ``task`` is then the snapshot without ``artifacts``. ``artifact_count IS
# NULL`` marks a row written by an older version (artifacts still inside
# ``task``): read as is, moved to rows on the row's next write.
#
# Logged events no longer repeat what these rows and the history rows hold:
# ``ref_seq`` is the event (if any) whose artifact is this row's content, and
# the event log's stored form is described in ``_eventlog``. Events logged
# before are whole and read as they are. History rows of messages carrying
# their task's ids hold them without (``_common.message_row``).
#
# The rows of a task (history, events, artifacts) refer to it by ``a2a_tasks.key``,
# a number, instead of its text id: a text id was repeated in every row and
# index entry. The history and event tables are rebuilt that way (rows
# copied as they are); the events lose ``created_at``, which nothing read.
# The task counts lose the ``context`` rows: a context's count is the sum of
# its rows per state, and the two rows per context took as much room as a
# small task. Those rows get a shorter name too: dim ``cs``, key the state
# without its ``TASK_STATE_`` prefix, a space, the context_id.
#
# Positions and sequence numbers within a task are ``integer``: with the
# ``bigint`` task key first they pack without padding (8 B a row less).
#
# In PostgreSQL a history row no longer repeats its message's id in a column
# of its own, and the index finding it holds a 64-bit hash of the id (a third
# of the room of the id): ``(task_key, hashtextextended(message->>'messageId', 0))``.
# In PostgreSQL the event log is ``bytea`` (the exact JSON bytes): nothing
# queries it, and ``jsonb`` took half again as much room for small events.

_SQLITE_V5 = (
    "ALTER TABLE a2a_tasks ADD COLUMN artifact_count INTEGER",
    "ALTER TABLE a2a_tasks ADD COLUMN key INTEGER",
    "UPDATE a2a_tasks SET key = rowid",
    "CREATE UNIQUE INDEX a2a_tasks_key ON a2a_tasks (key)",
    """
    CREATE TABLE a2a_task_messages_v5 (
        task_key   INTEGER NOT NULL REFERENCES a2a_tasks (key) ON DELETE CASCADE,
        pos        INTEGER NOT NULL,
        message_id TEXT    NOT NULL,
        message    TEXT    NOT NULL,
        PRIMARY KEY (task_key, pos)
    ) WITHOUT ROWID
    """,
    "INSERT INTO a2a_task_messages_v5 (task_key, pos, message_id, message)"
    " SELECT t.key, m.pos, m.message_id, m.message FROM a2a_task_messages m"
    " JOIN a2a_tasks t ON t.id = m.task_id",
    "DROP TABLE a2a_task_messages",
    "ALTER TABLE a2a_task_messages_v5 RENAME TO a2a_task_messages",
    "CREATE INDEX a2a_task_messages_id ON a2a_task_messages (task_key, message_id)",
    """
    CREATE TABLE a2a_task_events_v5 (
        task_key INTEGER NOT NULL REFERENCES a2a_tasks (key) ON DELETE CASCADE,
        seq      INTEGER NOT NULL,
        event    TEXT    NOT NULL,
        PRIMARY KEY (task_key, seq)
    ) WITHOUT ROWID
    """,
    "INSERT INTO a2a_task_events_v5 (task_key, seq, event)"
    " SELECT t.key, e.seq, e.event FROM a2a_task_events e JOIN a2a_tasks t ON t.id = e.task_id",
    "DROP TABLE a2a_task_events",
    "ALTER TABLE a2a_task_events_v5 RENAME TO a2a_task_events",
    """
    CREATE TABLE a2a_task_artifacts (
        task_key INTEGER NOT NULL REFERENCES a2a_tasks (key) ON DELETE CASCADE,
        pos      INTEGER NOT NULL,
        artifact TEXT    NOT NULL,
        ref_seq  INTEGER,
        PRIMARY KEY (task_key, pos)
    ) WITHOUT ROWID
    """,
    "DROP TRIGGER a2a_tasks_count_insert",
    "DROP TRIGGER a2a_tasks_count_delete",
    "DROP TRIGGER a2a_tasks_count_update",
    *_sqlite_count_triggers(_SQLITE_COUNT_ROWS_V5),
    "DELETE FROM a2a_task_counts WHERE dim = 'context'",
    "UPDATE a2a_task_counts SET dim = 'cs', key = substr(key, 12) WHERE dim = 'context_state'",
)

_POSTGRES_V5 = (
    "ALTER TABLE {schema}.a2a_tasks ADD COLUMN artifact_count bigint,"
    " ADD COLUMN key bigint GENERATED BY DEFAULT AS IDENTITY",
    "CREATE UNIQUE INDEX a2a_tasks_key ON {schema}.a2a_tasks (key)",
    """
    CREATE TABLE {schema}.a2a_task_messages_v5 (
        task_key    bigint NOT NULL REFERENCES {schema}.a2a_tasks (key) ON DELETE CASCADE,
        pos         integer NOT NULL,
        message     jsonb NOT NULL,
        message_raw bytea
    )
    """,
    "INSERT INTO {schema}.a2a_task_messages_v5 (task_key, pos, message, message_raw)"
    " SELECT t.key, m.pos, m.message, m.message_raw"
    " FROM {schema}.a2a_task_messages m JOIN {schema}.a2a_tasks t ON t.id = m.task_id",
    "DROP TABLE {schema}.a2a_task_messages",
    "ALTER TABLE {schema}.a2a_task_messages_v5 RENAME TO a2a_task_messages",
    "ALTER TABLE {schema}.a2a_task_messages ADD CONSTRAINT a2a_task_messages_pkey"
    " PRIMARY KEY (task_key, pos)",
    "CREATE INDEX a2a_task_messages_id"
    " ON {schema}.a2a_task_messages (task_key, hashtextextended(message->>'messageId', 0))",
    """
    CREATE TABLE {schema}.a2a_task_events_v5 (
        task_key  bigint NOT NULL REFERENCES {schema}.a2a_tasks (key) ON DELETE CASCADE,
        seq       integer NOT NULL,
        event     bytea   NOT NULL
    )
    """,
    "INSERT INTO {schema}.a2a_task_events_v5 (task_key, seq, event)"
    " SELECT t.key, e.seq, coalesce(e.event_raw, convert_to(e.event::text, 'UTF8'))"
    " FROM {schema}.a2a_task_events e JOIN {schema}.a2a_tasks t ON t.id = e.task_id",
    "DROP TABLE {schema}.a2a_task_events",
    "ALTER TABLE {schema}.a2a_task_events_v5 RENAME TO a2a_task_events",
    "ALTER TABLE {schema}.a2a_task_events ADD CONSTRAINT a2a_task_events_pkey"
    " PRIMARY KEY (task_key, seq)",
    """
    CREATE TABLE {schema}.a2a_task_artifacts (
        task_key     bigint NOT NULL REFERENCES {schema}.a2a_tasks (key) ON DELETE CASCADE,
        pos          integer NOT NULL,
        ref_seq      integer,
        artifact     jsonb  NOT NULL,
        artifact_raw bytea,
        PRIMARY KEY (task_key, pos)
    )
    """,
    """
    CREATE OR REPLACE FUNCTION {schema}.a2a_tasks_count() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        os text; ns text; oc text; nc text; ost text; nst text;
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            os := OLD.scope; oc := OLD.context_id; ost := OLD.state;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            ns := NEW.scope; nc := NEW.context_id; nst := NEW.state;
        END IF;
        PERFORM {schema}.a2a_count_move(os, CASE WHEN os IS NOT NULL THEN '' END,
                                        ns, CASE WHEN ns IS NOT NULL THEN '' END, 'all');
        PERFORM {schema}.a2a_count_move(os, ost, ns, nst, 'state');
        PERFORM {schema}.a2a_count_move(os, substr(ost, 12) || ' ' || oc,
                                        ns, substr(nst, 12) || ' ' || nc, 'cs');
        RETURN NULL;
    END $$
    """,
    "DELETE FROM {schema}.a2a_task_counts WHERE dim = 'context'",
    "UPDATE {schema}.a2a_task_counts SET dim = 'cs', key = substr(key, 12)"
    " WHERE dim = 'context_state'",
)

# --- v6: the queue of turns for worker processes (PostgreSQL only) --------------------------
#
# One row per turn waiting for a worker (``a2a-models worker``), written in the
# transaction of the task write that makes it, deleted by the worker that takes
# it (``FOR UPDATE SKIP LOCKED``, oldest ``id`` first). ``turn`` is the JSON of
# the request and its caller (see ``server.Turn``). SQLite has no workers: the
# version is recorded there with nothing to do.

_POSTGRES_V6 = (
    """
    CREATE TABLE {schema}.a2a_turns (
        id        bigserial PRIMARY KEY,
        task_id   text COLLATE "C" NOT NULL
                  REFERENCES {schema}.a2a_tasks (id) ON DELETE CASCADE,
        turn      bytea NOT NULL,
        queued_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX a2a_turns_task ON {schema}.a2a_turns (task_id)",
)

# --- v7: less room per task in PostgreSQL ---------------------------------------------------
#
# A context's task counts are kept only for contexts holding more than
# ``CONTEXT_COUNTED`` tasks (a context usually has one task or a few, and its
# counter rows took as much room as a small task): such a context has a row
# dim ``c``, key the context_id, ``n`` its tasks (the mark that its ``cs`` rows
# are kept), made by the write that adds its ``CONTEXT_COUNTED + 1``-th task.
# A context without it has at most ``CONTEXT_COUNTED`` tasks, counted from
# the ``a2a_tasks_context`` index. Writes changing a context's tasks take a
# transaction-level advisory lock on it, so the count that makes the mark is
# exact. (SQLite keeps every context's rows: the version is recorded there
# with nothing to do.)

#: Contexts with more tasks than this have counter rows (never change: migration 7 has it).
CONTEXT_COUNTED = 64

_POSTGRES_CONTEXT_RECOUNT = (
    "DELETE FROM {schema}.a2a_task_counts WHERE dim IN ('c', 'cs')",
    "INSERT INTO {schema}.a2a_task_counts (scope, dim, key, n)"
    " SELECT scope, 'c', context_id, count(*) FROM {schema}.a2a_tasks"
    f" WHERE context_id IS NOT NULL GROUP BY scope, context_id HAVING count(*) > {CONTEXT_COUNTED}",
    "INSERT INTO {schema}.a2a_task_counts (scope, dim, key, n)"
    " SELECT t.scope, 'cs', substr(t.state, 12) || ' ' || t.context_id, count(*)"
    " FROM {schema}.a2a_tasks t JOIN {schema}.a2a_task_counts c"
    " ON c.scope = t.scope AND c.dim = 'c' AND c.key = t.context_id"
    " GROUP BY t.scope, t.state, t.context_id",
)

_POSTGRES_V7 = (
    f"""
    CREATE FUNCTION {{schema}}.a2a_context_count(s text, c text, ost text, nst text)
    RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        -- A task of context c (scope s) leaves state ost and enters nst (NULL:
        -- it enters / leaves the context).
        IF c IS NULL OR ost IS NOT DISTINCT FROM nst THEN
            RETURN;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtextextended(s || ' ' || c, 11));
        IF EXISTS (SELECT 1 FROM {{schema}}.a2a_task_counts
                   WHERE scope = s AND dim = 'c' AND key = c) THEN
            IF ost IS NULL THEN
                PERFORM {{schema}}.a2a_count_bump(s, 'c', c, 1);
            ELSIF nst IS NULL THEN
                PERFORM {{schema}}.a2a_count_bump(s, 'c', c, -1);
            END IF;
            PERFORM {{schema}}.a2a_count_move(s, substr(ost, 12) || ' ' || c,
                                            s, substr(nst, 12) || ' ' || c, 'cs');
        ELSIF ost IS NULL AND (SELECT count(*) FROM (SELECT 1 FROM {{schema}}.a2a_tasks
                WHERE scope = s AND context_id = c ORDER BY status_key DESC
                LIMIT {CONTEXT_COUNTED + 1}) AS t)
                > {CONTEXT_COUNTED} THEN
            INSERT INTO {{schema}}.a2a_task_counts (scope, dim, key, n)
            SELECT s, 'c', c, count(*) FROM {{schema}}.a2a_tasks
                WHERE scope = s AND context_id = c
            UNION ALL
            SELECT s, 'cs', substr(state, 12) || ' ' || c, count(*) FROM {{schema}}.a2a_tasks
                WHERE scope = s AND context_id = c GROUP BY state;
        END IF;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION {schema}.a2a_tasks_count() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        os text; ns text; oc text; nc text; ost text; nst text;
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            os := OLD.scope; oc := OLD.context_id; ost := OLD.state;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            ns := NEW.scope; nc := NEW.context_id; nst := NEW.state;
        END IF;
        PERFORM {schema}.a2a_count_move(os, CASE WHEN os IS NOT NULL THEN '' END,
                                        ns, CASE WHEN ns IS NOT NULL THEN '' END, 'all');
        PERFORM {schema}.a2a_count_move(os, ost, ns, nst, 'state');
        IF os IS NOT DISTINCT FROM ns AND oc IS NOT DISTINCT FROM nc THEN
            PERFORM {schema}.a2a_context_count(ns, nc, ost, nst);
        ELSIF os IS NULL OR (ns IS NOT NULL AND nc IS NOT NULL
                             AND (oc IS NULL OR (ns, nc) < (os, oc))) THEN
            -- Lock order: (scope, context) ascending, the same in every transaction.
            PERFORM {schema}.a2a_context_count(ns, nc, NULL, nst);
            PERFORM {schema}.a2a_context_count(os, oc, ost, NULL);
        ELSE
            PERFORM {schema}.a2a_context_count(os, oc, ost, NULL);
            PERFORM {schema}.a2a_context_count(ns, nc, NULL, nst);
        END IF;
        RETURN NULL;
    END $$
    """,
    *_POSTGRES_CONTEXT_RECOUNT,
    # The JSON columns nothing queries become the exact bytes (jsonb took more
    # room, and a copy in *_raw where it could not hold them); counts and
    # versions of one task fit in 32 bits.
    "ALTER TABLE {schema}.a2a_tasks"
    " ALTER COLUMN task TYPE bytea USING coalesce(task_raw, convert_to(task::text, 'UTF8')),"
    " DROP COLUMN task_raw, ALTER COLUMN version TYPE integer,"
    " ALTER COLUMN last_seq TYPE integer, ALTER COLUMN history_count TYPE integer,"
    " ALTER COLUMN artifact_count TYPE integer",
    "ALTER TABLE {schema}.a2a_task_artifacts ALTER COLUMN artifact TYPE bytea"
    " USING coalesce(artifact_raw, convert_to(artifact::text, 'UTF8')),"
    " DROP COLUMN artifact_raw",
    """
    CREATE TABLE {schema}.a2a_task_messages_v7 (
        task_key bigint  NOT NULL REFERENCES {schema}.a2a_tasks (key) ON DELETE CASCADE,
        id_hash  bigint  NOT NULL,
        pos      integer NOT NULL,
        message  bytea   NOT NULL
    )
    """,
    "INSERT INTO {schema}.a2a_task_messages_v7 (task_key, id_hash, pos, message)"
    " SELECT task_key, hashtextextended(message->>'messageId', 0), pos,"
    " coalesce(message_raw, convert_to(message::text, 'UTF8')) FROM {schema}.a2a_task_messages",
    "DROP TABLE {schema}.a2a_task_messages",
    "ALTER TABLE {schema}.a2a_task_messages_v7 RENAME TO a2a_task_messages",
    "ALTER TABLE {schema}.a2a_task_messages ADD CONSTRAINT a2a_task_messages_pkey"
    " PRIMARY KEY (task_key, pos)",
    "CREATE INDEX a2a_task_messages_id ON {schema}.a2a_task_messages (task_key, id_hash)",
    # The listing indexes end at status_key: a page of tasks with the same status
    # timestamp (rare: the engine stamps every status) is put in id order by an
    # incremental sort of just those; the id in every entry took a third of them.
    "DROP INDEX {schema}.a2a_tasks_list",
    "DROP INDEX {schema}.a2a_tasks_context",
    "DROP INDEX {schema}.a2a_tasks_state",
    "CREATE INDEX a2a_tasks_list ON {schema}.a2a_tasks (scope, status_key DESC)",
    "CREATE INDEX a2a_tasks_context ON {schema}.a2a_tasks (scope, context_id, status_key DESC)",
    "CREATE INDEX a2a_tasks_state ON {schema}.a2a_tasks (scope, state, status_key DESC)",
)

#: The statements that recount every ``a2a_task_counts`` row of a PostgreSQL schema
#: at the latest version from its tasks (for a bulk load with the triggers off).
POSTGRES_RECOUNT = (
    "DELETE FROM {schema}.a2a_task_counts",
    "INSERT INTO {schema}.a2a_task_counts (scope, dim, key, n)"
    " SELECT scope, 'all', '', count(*) FROM {schema}.a2a_tasks GROUP BY scope"
    " UNION ALL SELECT scope, 'state', state, count(*) FROM {schema}.a2a_tasks"
    " GROUP BY scope, state",
    *_POSTGRES_CONTEXT_RECOUNT[1:],
)

# --- v8: lease epochs (fencing) ----------------------------------------------------------------
#
# ``lease_epoch`` grows by one each time the task's lease is taken (acquired,
# claimed, pulled from the queue, queued): a run's writes name the epoch of
# its acquisition and are refused once another acquisition came after it
# (see ``TaskStore.update``'s ``lease``).

_SQLITE_V8 = ("ALTER TABLE a2a_tasks ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0",)

_POSTGRES_V8 = ("ALTER TABLE {schema}.a2a_tasks ADD COLUMN lease_epoch bigint NOT NULL DEFAULT 0",)

# --- v9: artifacts in pieces ---------------------------------------------------------------------
#
# An artifact row is a sequence of pieces ``(task_key, pos, piece)``: piece 0
# is the artifact as of its last whole write, pieces 1, 2, ... the parts
# appended since (see ``_pieces``), so an append writes what it adds instead
# of the whole artifact again. The rows already stored become piece 0.

_SQLITE_V9 = (
    """
    CREATE TABLE a2a_task_artifacts_v9 (
        task_key INTEGER NOT NULL REFERENCES a2a_tasks (key) ON DELETE CASCADE,
        pos      INTEGER NOT NULL,
        piece    INTEGER NOT NULL DEFAULT 0,
        artifact TEXT    NOT NULL,
        ref_seq  INTEGER,
        PRIMARY KEY (task_key, pos, piece)
    ) WITHOUT ROWID
    """,
    "INSERT INTO a2a_task_artifacts_v9 (task_key, pos, piece, artifact, ref_seq)"
    " SELECT task_key, pos, 0, artifact, ref_seq FROM a2a_task_artifacts",
    "DROP TABLE a2a_task_artifacts",
    "ALTER TABLE a2a_task_artifacts_v9 RENAME TO a2a_task_artifacts",
)

_POSTGRES_V9 = (
    "ALTER TABLE {schema}.a2a_task_artifacts ADD COLUMN piece integer NOT NULL DEFAULT 0,"
    " DROP CONSTRAINT a2a_task_artifacts_pkey",
    "ALTER TABLE {schema}.a2a_task_artifacts ADD CONSTRAINT a2a_task_artifacts_pkey"
    " PRIMARY KEY (task_key, pos, piece)",
)

# --- v10: task counts emptied by key (SQLite only) ---------------------------------------------
#
# The count triggers deleted the counter rows a write left at zero with
# ``DELETE ... WHERE n = 0 AND scope = ?``: a scan of every counter row of the
# caller, and a caller has a row per (state, context), so each task write cost
# a pass over rows that grow with the tasks stored (20,000 tasks in their own
# contexts: 25 ms a SendMessage). The triggers now delete the rows they
# decremented, by key, and only after a decrement (an increment never empties
# a row). PostgreSQL's count function always did: the version is recorded
# there with nothing to do.


def _sqlite_count_triggers_v10() -> tuple[str, ...]:
    def bump(row: str, delta: str) -> str:
        rows = _SQLITE_COUNT_ROWS_V5.format(r=row, d=delta)
        return (
            f"INSERT INTO a2a_task_counts (scope, dim, key, n) SELECT * FROM ({rows}) WHERE true"
            " ON CONFLICT (scope, dim, key) DO UPDATE SET n = n + excluded.n;"
        )

    def drop_empty(row: str) -> str:
        keys = (
            ("'all'", "''"),
            ("'state'", f"{row}.state"),
            ("'cs'", f"substr({row}.state, 12) || ' ' || {row}.context_id"),
        )
        return " ".join(
            f"DELETE FROM a2a_task_counts WHERE scope = {row}.scope AND dim = {dim}"
            f" AND key = {key} AND n = 0;"
            for dim, key in keys
        )

    return (
        "DROP TRIGGER a2a_tasks_count_insert",
        "DROP TRIGGER a2a_tasks_count_delete",
        "DROP TRIGGER a2a_tasks_count_update",
        f"CREATE TRIGGER a2a_tasks_count_insert AFTER INSERT ON a2a_tasks BEGIN {bump('NEW', '1')}"
        " END",
        "CREATE TRIGGER a2a_tasks_count_delete AFTER DELETE ON a2a_tasks BEGIN "
        f"{bump('OLD', '-1')} {drop_empty('OLD')} END",
        "CREATE TRIGGER a2a_tasks_count_update AFTER UPDATE OF scope, context_id, state"
        " ON a2a_tasks WHEN OLD.scope IS NOT NEW.scope OR OLD.context_id IS NOT NEW.context_id"
        f" OR OLD.state IS NOT NEW.state BEGIN {bump('OLD', '-1')} {drop_empty('OLD')}"
        f" {bump('NEW', '1')} END",
    )


_SQLITE_V10 = _sqlite_count_triggers_v10()

# --- v11: push notifications owed (delivery that survives a crash) ------------------------------
#
# A config row says which of its task's events it is owed: ``owed_seq`` (the
# seq of the task's latest status event, set in the transaction that logs it),
# ``delivered_seq`` (the newest whose delivery ended) and ``claim_expires``
# (seconds since the epoch until which one process delivers it; another may
# take it over after). The partial index holds only the rows owed something,
# so a resume reads those, never every config. Existing rows start 0/0: an
# upgrade sends nothing old.

_SQLITE_V11 = (
    "ALTER TABLE a2a_push_configs ADD COLUMN owed_seq INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE a2a_push_configs ADD COLUMN delivered_seq INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE a2a_push_configs ADD COLUMN claim_expires REAL NOT NULL DEFAULT 0",
    "CREATE INDEX a2a_push_owed ON a2a_push_configs (claim_expires) WHERE owed_seq > delivered_seq",
)

_POSTGRES_V11 = (
    "ALTER TABLE {schema}.a2a_push_configs ADD COLUMN owed_seq bigint NOT NULL DEFAULT 0,"
    " ADD COLUMN delivered_seq bigint NOT NULL DEFAULT 0,"
    " ADD COLUMN claim_expires double precision NOT NULL DEFAULT 0",
    "CREATE INDEX a2a_push_owed ON {schema}.a2a_push_configs (claim_expires)"
    " WHERE owed_seq > delivered_seq",
)

# --- v12: the dialect a push config was created in ----------------------------------------------
#
# A webhook gets what the protocol its config was set through defines: 1.0 a
# StreamResponse, 0.3 (JSON-RPC or HTTP+JSON) the Task itself. Configs stored
# before were all sent 1.0 bodies: they stay 1.0.

_SQLITE_V12 = ("ALTER TABLE a2a_push_configs ADD COLUMN dialect TEXT NOT NULL DEFAULT '1.0'",)

_POSTGRES_V12 = (
    "ALTER TABLE {schema}.a2a_push_configs ADD COLUMN dialect text NOT NULL DEFAULT '1.0'",
)

# --- v13: the task a client's first message started ---------------------------------------------
#
# ``started_by``: a digest of the caller's scope and the messageId of the message
# that created the task (NULL: a task created otherwise, or before this version).
# Unique per scope: a client's retry of that message (same messageId, no taskId)
# finds the task instead of starting a second one. Only rows that have one are
# indexed.

_SQLITE_V13 = (
    "ALTER TABLE a2a_tasks ADD COLUMN started_by BLOB",
    "CREATE UNIQUE INDEX a2a_tasks_started_by ON a2a_tasks (scope, started_by)"
    " WHERE started_by IS NOT NULL",
)

_POSTGRES_V13 = (
    "ALTER TABLE {schema}.a2a_tasks ADD COLUMN started_by bytea",
    "CREATE UNIQUE INDEX a2a_tasks_started_by ON {schema}.a2a_tasks (scope, started_by)"
    " WHERE started_by IS NOT NULL",
)

# --- v14: an index for ListTasks by context and status ------------------------------------------
#
# A listing filtered by both a context and a status had no index with both: it
# walked one of them (SQLite: every task in that state, of every context) and
# dropped the rest, so its cost grew with the tasks stored (the first page of
# 50 read 41x the pages at 50k tasks as at 1k in SQLite: bench/serve_growth.py). This index
# serves both filters in the listing order; it costs an index entry per task.

_SQLITE_V14 = (
    "CREATE INDEX a2a_tasks_context_state"
    " ON a2a_tasks (scope, context_id, state, status_key DESC, id)",
)

_POSTGRES_V14 = (
    "CREATE INDEX a2a_tasks_context_state"
    " ON {schema}.a2a_tasks (scope, context_id, state, status_key DESC)",
)

#: Every migration, in version order (append-only).
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tasks, event log and push configs", _SQLITE_V1, _POSTGRES_V1),
    Migration(2, "task counts for ListTasks totalSize", _SQLITE_V2, _POSTGRES_V2),
    Migration(3, "history messages as rows", _SQLITE_V3, _POSTGRES_V3),
    Migration(4, "leases on running turns", _SQLITE_V4, _POSTGRES_V4),
    Migration(5, "artifacts as rows, a log without copies", _SQLITE_V5, _POSTGRES_V5),
    Migration(6, "queue of turns for workers", (), _POSTGRES_V6),
    Migration(7, "less room per task", (), _POSTGRES_V7),
    Migration(8, "lease epochs for fenced writes", _SQLITE_V8, _POSTGRES_V8),
    Migration(9, "artifacts in pieces", _SQLITE_V9, _POSTGRES_V9),
    Migration(10, "task counts emptied by key", _SQLITE_V10, ()),
    Migration(11, "push notifications owed", _SQLITE_V11, _POSTGRES_V11),
    Migration(12, "push config dialects", _SQLITE_V12, _POSTGRES_V12),
    Migration(13, "the task a first message started", _SQLITE_V13, _POSTGRES_V13),
    Migration(14, "ListTasks by context and status", _SQLITE_V14, _POSTGRES_V14),
)


def latest_version(migrations: tuple[Migration, ...]) -> int:
    return migrations[-1].version if migrations else 0


def check_order(migrations: tuple[Migration, ...]) -> None:
    """Migrations must be numbered 1, 2, 3, ... (a programming error otherwise)."""
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise ValueError(
                f"migration {migration.name!r} has version {migration.version}, expected {expected}"
            )


def pending(applied: Collection[int], migrations: tuple[Migration, ...]) -> list[Migration]:
    """The ``migrations`` a database that recorded ``applied`` still needs, in order.

    Raises :class:`SchemaVersionError` if it has one newer than all of them.
    """
    if max(applied, default=0) > latest_version(migrations):
        raise too_new(max(applied), migrations)
    return [migration for migration in migrations if migration.version not in applied]


def too_new(found: int, migrations: tuple[Migration, ...]) -> SchemaVersionError:
    return SchemaVersionError(
        f"the database schema is at version {found}, newer than this a2a-models "
        f"knows ({latest_version(migrations)}): upgrade a2a-models"
    )
