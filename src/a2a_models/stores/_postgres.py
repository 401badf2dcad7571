"""PostgreSQL: a :class:`~a2a_models.server.TaskStore` shareable by server replicas
(psycopg 3, imported lazily)."""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeVar

from ..errors import TaskNotFoundError
from ..models import StreamResponse, Task
from ..server import (
    ActiveTaskLimitError,
    ConcurrentModificationError,
    DuplicateMessageError,
    LoggedEvent,
    check_active_limit,
)
from . import _migrations
from ._common import (
    ACTIVE_KEYS,
    ArtifactWrite,
    FetchedTask,
    Incarnation,
    ListSQL,
    MessageRow,
    PageRow,
    artifact_writes,
    check_identifier,
    column_text,
    column_value,
    encode_event,
    new_messages,
    own_head,
    own_message,
    row_suffix,
    task_columns,
    whole_messages,
)
from ._eventlog import (
    CHUNK_EVENTS,
    NO_END,
    append_to,
    expand_events,
    inline_artifact,
    pack,
    referenced_rows,
    unpack,
    with_context,
)
from ._pg_broker import RESYNC, PostgresEventBroker
from ._pg_leases import PgLeases
from ._pg_pool import XID, ConnectionPool, Xact, bounded, transact
from ._pg_pool import Pool as _Pool
from ._pg_pool import atomic as _atomic
from ._pg_pool import exact as _exact
from ._pg_pool import jsonb as _jsonb
from ._pg_pool import jsonb_text as _jsonb_text
from ._pg_pool import quote as _quote
from ._pg_schema import migrate
from ._pieces import ArtifactAppend, next_piece, whole_artifacts, with_head
from ._queue import enqueue_pending
from ._sqlstore import FIRST_EPOCH, NewTask, Owed, SQLTaskStore, TaskRead, TaskWrite

if TYPE_CHECKING:
    import psycopg

# The broker and the pool protocol moved to their own modules; still importable from here.
__all__ = ["ConnectionPool", "PostgresEventBroker", "PostgresTaskStore", "RESYNC"]

log = logging.getLogger("a2a_models.stores")

T = TypeVar("T")


class PostgresTaskStore(PgLeases, SQLTaskStore):
    """A :class:`~a2a_models.server.TaskStore` in PostgreSQL, shareable by many server replicas.

    ``conninfo`` is a libpq connection string or URL (the store keeps a small
    pool of up to ``max_connections`` connections; those idle for more than
    ``close_idle_after`` seconds are closed, all but one), or a pool object with an
    ``async with pool.connection() as conn`` method such as
    ``psycopg_pool.AsyncConnectionPool`` (the store does not close it).

    The tables live in ``schema`` (created if missing). The schema is created
    and migrated on first use (or :meth:`open`) under a transaction-level
    advisory lock, so replicas starting together migrate once; applied
    versions are recorded in ``a2a_schema_migrations``.

    Every write is one SQL statement, atomic on its own: ``update`` with an
    event updates the task row (``WHERE version = expected``) and inserts the
    event with the new ``last_seq`` in a single data-modifying CTE, so the
    snapshot and the log never disagree and concurrent writers serialize on
    the task's row lock. Writes are durable when they return (PostgreSQL's
    own ``synchronous_commit``).

    Snapshots, history, artifacts and events are stored as their exact JSON
    bytes (events packed, see :mod:`._eventlog`); push configs are ``jsonb``
    with a ``*_raw`` copy where jsonb would alter them (see :mod:`._migrations`). A task id
    cannot contain NUL characters (a PostgreSQL ``text`` limit): creating
    one raises ``InvalidParamsError``, looking one up finds nothing.

    Finished tasks are kept until :meth:`delete_terminal_older_than` removes them.

    An operation waits at most ``request_timeout`` seconds (``None``: no limit) for the
    database, then drops its connection and raises ``DatabaseTimeout`` (a server answers
    ``TaskStoreUnavailableError``); deleting old tasks and migrating are not limited.
    Connections get TCP keepalives and ``tcp_user_timeout`` unless ``conninfo`` sets them.
    """

    PLACEHOLDER = "%s"
    NUL = False
    BAD_TASK_ID = "PostgreSQL cannot store a task id with NUL characters"

    def __init__(
        self,
        conninfo: str | ConnectionPool,
        *,
        schema: str = "public",
        max_connections: int = 10,
        check_idle_after: float = 30.0,
        close_idle_after: float = 60.0,
        connect_kwargs: Mapping[str, Any] | None = None,
        max_active_tasks_per_owner: int | None = None,
        request_timeout: float | None = 30.0,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if request_timeout is not None and not request_timeout > 0:
            raise ValueError(f"request_timeout must be more than 0 seconds, got {request_timeout}")
        self.request_timeout = request_timeout
        self.schema = check_identifier(schema, "schema")
        self.max_active_tasks_per_owner = check_active_limit(max_active_tasks_per_owner)
        kwargs = {"application_name": "a2a-models store", **(connect_kwargs or {})}
        self._own_pool: _Pool | None = None
        if isinstance(conninfo, str):
            self._own_pool = _Pool(
                conninfo, max_connections, check_idle_after, kwargs, close_idle_after
            )
            self._pool: ConnectionPool = self._own_pool
        else:
            self._pool = conninfo
        self._ready = False
        self._ready_lock: asyncio.Lock | None = None
        q = _quote(self.schema)
        self._q = q
        self._tasks = f"{q}.a2a_tasks"
        self._events = f"{q}.a2a_task_events"
        self._push = f"{q}.a2a_push_configs"
        self._counts = f"{q}.a2a_task_counts"
        self._messages = f"{q}.a2a_task_messages"
        self._artifacts = f"{q}.a2a_task_artifacts"

    def __repr__(self) -> str:
        return f"PostgresTaskStore(schema={self.schema!r})"

    # -- connections and migrations ------------------------------------------------------

    async def _run(
        self,
        fn: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
        *,
        idempotent: bool = False,
        limit: bool = True,
    ) -> T:
        import psycopg

        if not self._ready:
            await self.open()

        async def run(pool: ConnectionPool) -> T:
            attempts = 2 if idempotent else 1
            for attempt in range(attempts):
                try:
                    async with pool.connection() as conn, _atomic(conn):
                        return await fn(conn)
                except psycopg.OperationalError:
                    # A read may go again on a fresh connection; a write may
                    # have committed, so its caller has to find out.
                    if attempt + 1 == attempts:
                        raise
            raise AssertionError("unreachable")

        return await (bounded(self._pool, self.request_timeout, run) if limit else run(self._pool))

    async def _write(self, fn: Callable[[psycopg.AsyncConnection[Any], Xact], Awaitable[T]]) -> T:
        """``fn`` in one transaction, run again or taken as done when the connection is
        lost (see :func:`._pg_pool.transact`); its first statement records its ``XID``."""
        if not self._ready:
            await self.open()
        return await bounded(self._pool, self.request_timeout, lambda pool: transact(pool, fn))

    async def open(self) -> Self:
        """Create or migrate the schema now (otherwise done on first use)."""
        if self._ready:
            return self
        if self._ready_lock is None:
            self._ready_lock = asyncio.Lock()
        async with self._ready_lock:
            if not self._ready:
                async with self._pool.connection() as conn:
                    await migrate(conn, self.schema)
                self._ready = True
        return self

    async def aclose(self) -> None:
        """Close the store's own connections (a pool passed in is left open)."""
        if self._own_pool is not None:
            await self._own_pool.close()

    # -- tasks ---------------------------------------------------------------------------

    def _artifact_columns(self, task: str, *, skip: bool = False) -> str:
        """The artifact rows of the task row ``task`` as an array (JSON bytes);
        ``skip``: none if the row is at the version given as a parameter."""
        when = f"{task}.artifact_count > 0"
        if skip:
            when += f" AND {task}.version IS DISTINCT FROM %s::bigint"
        return (
            f"CASE WHEN {when} THEN (SELECT array_agg(a.artifact"
            f" ORDER BY a.pos, a.piece) FROM {self._artifacts} a WHERE a.task_key = {task}.key)"
            " END"
        )

    @staticmethod
    def _artifact_list(count: int | None, blobs: Any) -> builtins.list[bytes | str] | None:
        return None if count is None else whole_artifacts(bytes(blob) for blob in blobs or ())

    async def _fetch_task(self, read: TaskRead) -> FetchedTask | None:
        task_id = read.task_id
        # One statement: the row and its artifact rows come from one snapshot.
        columns = self._artifact_columns("t", skip=True) if read.artifacts else "NULL"
        select = (
            "SELECT t.task, t.version, t.last_seq, t.history_count,"
            f" t.artifact_count, {columns}, t.context_id,"
            f" t.key FROM {self._tasks} t WHERE t.id = %s AND t.scope = %s"
        )
        params = (
            (read.artifacts_at, task_id, read.scope) if read.artifacts else (task_id, read.scope)
        )

        async def get(conn: psycopg.AsyncConnection[Any]) -> tuple[Any, ...] | None:
            cursor = await conn.execute(select, params)
            row = await cursor.fetchone()
            if row is None:
                return None
            count = row[3]
            first = read.first_message(count)
            if not count or first >= count:
                return (*row, [])
            # Rows below history_count never change: the messages match the row read.
            cursor = await conn.execute(
                f"SELECT message FROM {self._messages}"
                " WHERE task_key = %s AND pos >= %s AND pos < %s ORDER BY pos",
                (row[7], first, count),
            )
            return (*row, await cursor.fetchall())

        row = await self._run(get, idempotent=True)
        if row is None:
            return None
        context = column_value(row[6])
        suffix = row_suffix(task_id, context)
        messages = [own_message(bytes(m[0]), suffix) for m in row[8]]
        artifacts = self._artifact_list(row[4], row[5])
        head = own_head(bytes(row[0]), task_id, context)
        # The key (an identity column) is never given to another row.
        return head, row[1], row[2], row[3], messages, artifacts, row[7]

    async def _version(self, conn: psycopg.AsyncConnection[Any], task_id: str) -> int | None:
        cursor = await conn.execute(f"SELECT version FROM {self._tasks} WHERE id = %s", (task_id,))
        row = await cursor.fetchone()
        return None if row is None else int(row[0])

    async def _append_messages(
        self,
        conn: psycopg.AsyncConnection[Any],
        task_key: int,
        messages: Sequence[MessageRow],
        at: int,
    ) -> None:
        if not messages:
            return
        rows = [
            (task_key, _jsonb_text(str(column_value(i))), at + n, data)
            for n, (i, _, data) in enumerate(messages)
        ]
        async with conn.cursor() as cursor:
            await cursor.executemany(
                f"INSERT INTO {self._messages} (task_key, id_hash, pos, message)"
                " VALUES (%s, hashtextextended(%s, 0), %s, %s)",
                rows,
            )

    async def _known(
        self, conn: psycopg.AsyncConnection[Any], task_key: int, ids: builtins.list[str]
    ) -> set[str]:
        # The index holds a hash of the id as a PostgreSQL text holds it (see
        # ``_jsonb_text``); the ids of the rows it finds are compared here.
        wanted = [_jsonb_text(column_value(i) or "") for i in ids]
        cursor = await conn.execute(
            f"SELECT message FROM {self._messages} WHERE task_key = %s AND id_hash"
            " = ANY(ARRAY(SELECT hashtextextended(w, 0) FROM unnest(%s::text[]) w))",
            (task_key, wanted),
        )
        found = {
            column_text(json.loads(bytes(row[0]))["messageId"]) for row in await cursor.fetchall()
        }
        return {i for i in ids if i in found}

    async def _select_message(
        self, task_id: str, message_id: str
    ) -> tuple[bytes | str, str | None] | None:
        # By the index on the id's hash (see ``_known``); the ids are compared here.
        select = (
            f"SELECT m.message, t.context_id FROM {self._tasks} t JOIN {self._messages} m"
            " ON m.task_key = t.key WHERE t.id = %s AND m.id_hash = hashtextextended(%s, 0)"
        )
        wanted = column_text(message_id)

        async def get(conn: psycopg.AsyncConnection[Any]) -> tuple[bytes, str | None] | None:
            cursor = await conn.execute(select, (task_id, _jsonb_text(message_id)))
            for data, context in await cursor.fetchall():
                data = bytes(data)
                if column_text(json.loads(data)["messageId"]) == wanted:
                    return data, context
            return None

        return await self._run(get, idempotent=True)

    async def _insert_task(self, new: NewTask) -> Incarnation:
        task, scope, logged = new.task, new.scope, new.event
        context_id, state, key, terminal = task_columns(task)
        started_by = new.started_by
        # The column only when set: a task without one is inserted as before migration 13.
        started_column, started_value = (
            (", started_by", ", %s") if started_by is not None else ("", "")
        )
        insert = (
            f"INSERT INTO {self._tasks} (id, scope, context_id, state, status_key, version,"
            " last_seq, terminal_at, task, history_count, artifact_count, lease_owner,"
            " lease_expires, lease_epoch"
            + started_column
            + ") VALUES (%s, %s, %s, %s, %s, 1, %s, CASE WHEN %s THEN now() END, %s,"
            " %s, %s, %s, now() + make_interval(secs => %s), %s"
            + started_value
            # Any conflict: the id, or (scope, started_by) (a retried first message).
            + f") ON CONFLICT DO NOTHING RETURNING key, {XID}"
        )
        params: tuple[Any, ...] = (
            task.id,
            scope,
            context_id,
            state,
            key,
            0 if logged is None else 1,
            terminal,
            new.snapshot,
            len(new.messages),
            len(new.artifacts),
            # No lease: NULL owner and expiry (NULL seconds make a NULL interval).
            *((None, None, 0) if new.lease is None else (*new.lease, FIRST_EPOCH)),
            *(() if started_by is None else (started_by,)),
        )
        if logged is not None:
            insert = (
                f"WITH t AS ({insert}) INSERT INTO {self._events} (task_key, seq, event)"
                f" SELECT key, 1, %s::bytea FROM t RETURNING task_key, {XID}"
            )
            params = (*params, pack([logged]))
        limit = self.max_active_tasks_per_owner if not terminal else None

        async def create(conn: psycopg.AsyncConnection[Any], xact: Xact) -> Incarnation:
            if limit is not None:
                # Creations for one scope take turns, so the count cannot be outrun.
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", (scope,)
                )
                cursor = await conn.execute(
                    f"SELECT coalesce(sum(n), 0) FROM {self._counts}"
                    " WHERE scope = %s AND dim = 'state' AND key = ANY(%s)",
                    (scope, list(ACTIVE_KEYS)),
                )
                row = await cursor.fetchone()
                if row is not None and row[0] >= limit:
                    raise ActiveTaskLimitError.of(limit)
            cursor = await conn.execute(insert, params)
            inserted = await cursor.fetchone()
            if inserted is None:
                if started_by is not None:
                    cursor = await conn.execute(
                        f"SELECT id FROM {self._tasks} WHERE scope = %s AND started_by = %s",
                        (scope, started_by),
                    )
                    found = await cursor.fetchone()
                    if found is not None and found[0] != task.id:
                        raise DuplicateMessageError.started(found[0], task)
                version = await self._version(conn, task.id)
                raise ConcurrentModificationError(task.id, 0, version or 0)
            xact.xid = inserted[1]
            await self._append_messages(conn, inserted[0], new.messages, 0)
            await self._write_artifacts(conn, inserted[0], new.artifact_writes())
            await enqueue_pending(conn, self._q, self.schema, task.id)
            return int(inserted[0])

        return await self._write(create)

    async def _context_moved(
        self, conn: psycopg.AsyncConnection[Any], task_id: str, task_key: int, old: str | None
    ) -> None:
        """Rows that leave out the task's context id get the ``old`` one back (a rare
        write that changes the context; the engine never does)."""
        cursor = await conn.execute(
            f"SELECT seq, event FROM {self._events} WHERE task_key = %s", (task_key,)
        )
        for seq, data in await cursor.fetchall():
            forms = unpack(bytes(data))
            wholes = [with_context(form, old) for form in forms]
            if any(whole is not None for whole in wholes):
                forms = [form if w is None else w for form, w in zip(forms, wholes, strict=True)]
                await self._write_chunk(conn, task_key, seq, forms)
        cursor = await conn.execute(
            f"SELECT pos, message FROM {self._messages} WHERE task_key = %s", (task_key,)
        )
        stored = [(pos, bytes(data)) for pos, data in await cursor.fetchall()]
        for pos, message in whole_messages(stored, task_id, old):
            as_bytes = message.encode() if isinstance(message, str) else message
            await conn.execute(
                f"UPDATE {self._messages} SET message = %s WHERE task_key = %s AND pos = %s",
                (as_bytes, task_key, pos),
            )

    async def _write_artifacts(
        self, conn: psycopg.AsyncConnection[Any], task_key: int, writes: Sequence[ArtifactWrite]
    ) -> None:
        if not writes:
            return
        rows = [(task_key, pos, data, ref) for pos, data, ref in writes]
        # An unchanged row is not written again.
        async with conn.cursor() as cursor:
            await cursor.executemany(
                f"INSERT INTO {self._artifacts} AS a (task_key, pos, piece, artifact, ref_seq)"
                " VALUES (%s, %s, 0, %s, %s) ON CONFLICT (task_key, pos, piece) DO UPDATE SET"
                " artifact = excluded.artifact, ref_seq = excluded.ref_seq"
                " WHERE a.artifact <> excluded.artifact"
                " OR a.ref_seq IS DISTINCT FROM excluded.ref_seq",
                rows,
            )

    async def _append_parts(
        self,
        conn: psycopg.AsyncConnection[Any],
        task_key: int,
        appends: Mapping[int, ArtifactAppend],
        referenced: Mapping[int, object],
    ) -> None:
        """Add the appended parts as pieces (see ``_pieces``); piece 0 loses its
        ``ref_seq`` (its event got the artifact back) and takes a new head."""
        for pos, (parts, head) in appends.items():
            cursor = await conn.execute(
                f"SELECT piece, artifact FROM {self._artifacts} WHERE task_key = %s AND pos = %s"
                " ORDER BY piece DESC LIMIT 1",
                (task_key, pos),
            )
            last = await cursor.fetchone()
            assert last is not None  # the version checked says the artifact is stored
            piece, data = next_piece((int(last[0]), bytes(last[1])), parts)
            await conn.execute(
                f"INSERT INTO {self._artifacts} (task_key, pos, piece, artifact)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (task_key, pos, piece) DO UPDATE SET"
                " artifact = excluded.artifact",
                (task_key, pos, piece, data),
            )
            if head is not None:
                cursor = await conn.execute(
                    f"SELECT artifact FROM {self._artifacts}"
                    " WHERE task_key = %s AND pos = %s AND piece = 0",
                    (task_key, pos),
                )
                first = await cursor.fetchone()
                assert first is not None
                await conn.execute(
                    f"UPDATE {self._artifacts} SET artifact = %s, ref_seq = NULL"
                    " WHERE task_key = %s AND pos = %s AND piece = 0",
                    (with_head(bytes(first[0]), head), task_key, pos),
                )
            elif pos in referenced:
                await conn.execute(
                    f"UPDATE {self._artifacts} SET ref_seq = NULL"
                    " WHERE task_key = %s AND pos = %s AND piece = 0",
                    (task_key, pos),
                )

    def _log_chunk(self, source: str) -> str:
        """The statement end writing a chunk row (parameters: its seq and bytes) for the
        task row ``source`` returns (``key``), new or replacing the row at that seq."""
        return (
            f"INSERT INTO {self._events} (task_key, seq, event) SELECT key, %s, %s::bytea"
            f" FROM {source} ON CONFLICT (task_key, seq) DO UPDATE SET event = excluded.event"
            " RETURNING seq"
        )

    async def _last_chunk(
        self, conn: psycopg.AsyncConnection[Any], task_key: int
    ) -> tuple[int, bytes] | None:
        cursor = await conn.execute(
            f"SELECT seq, event FROM {self._events} WHERE task_key = %s ORDER BY seq DESC LIMIT 1",
            (task_key,),
        )
        row = await cursor.fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    async def _write_chunk(
        self,
        conn: psycopg.AsyncConnection[Any],
        task_key: int,
        seq: int,
        forms: builtins.list[bytes],
    ) -> None:
        await conn.execute(
            f"UPDATE {self._events} SET event = %s WHERE task_key = %s AND seq = %s",
            (pack(forms), task_key, seq),
        )

    async def _sync_artifacts(
        self,
        conn: psycopg.AsyncConnection[Any],
        task: Task,
        task_key: int,
        rows: Mapping[int, bytes],
        full: bool,
        artifact_ref: int | None,
        seq: int,
        appends: Mapping[int, ArtifactAppend],
    ) -> bool:
        """Write the artifact rows (``full``: and delete those of removed artifacts) and
        the appended parts, inlining the artifact into the events that referred to a
        row's old content (True if it did)."""
        where = "" if full else " AND pos = ANY(%s)"
        cursor = await conn.execute(
            f"SELECT pos, artifact, ref_seq FROM {self._artifacts}"
            f" WHERE task_key = %s AND piece = 0 AND ref_seq IS NOT NULL{where}",
            (task_key,) if full else (task_key, [*rows, *appends]),
        )
        referenced: dict[int, tuple[bytes | str, int]] = {
            pos: (bytes(data), ref) for pos, data, ref in await cursor.fetchall()
        }
        writes, inline = artifact_writes(rows, referenced, artifact_ref, seq)
        for ref_seq, old in inline:
            # The chunk holding event ref_seq: the last row starting at or before it.
            cursor = await conn.execute(
                f"SELECT seq, event FROM {self._events} WHERE task_key = %s AND seq <= %s"
                " ORDER BY seq DESC LIMIT 1",
                (task_key, ref_seq),
            )
            logged = await cursor.fetchone()
            if logged is None:
                continue
            forms = unpack(bytes(logged[1]))
            at = ref_seq - logged[0]
            if at < len(forms):
                forms[at] = inline_artifact(forms[at], old)
                await self._write_chunk(conn, task_key, logged[0], forms)
        if full:
            await conn.execute(
                f"DELETE FROM {self._artifacts} WHERE task_key = %s AND (pos >= %s OR piece > 0)",
                (task_key, len(task.artifacts)),
            )
        elif rows:
            await conn.execute(
                f"DELETE FROM {self._artifacts}"
                " WHERE task_key = %s AND piece > 0 AND pos = ANY(%s)",
                (task_key, builtins.list(rows)),
            )
        await self._write_artifacts(conn, task_key, writes)
        await self._append_parts(conn, task_key, appends, referenced)
        return bool(inline)

    async def _update_task(self, write: TaskWrite) -> tuple[int, int, Incarnation, Owed]:
        task, expected_version = write.task, write.expected_version
        context_id, state, key, terminal = task_columns(task)
        update = (
            f"UPDATE {self._tasks} SET task = %s, context_id = %s,"
            " state = %s, status_key = %s, version = version + 1, last_seq = last_seq + %s,"
            " terminal_at = CASE WHEN terminal_at IS NULL AND %s THEN now() ELSE terminal_at END,"
            " updated_at = now(), history_count = %s, artifact_count = %s"
            # The lease epoch was checked first, under the row lock: it is the run's own.
            + (", lease_owner = NULL, lease_expires = NULL" if write.releases else "")
            + " WHERE id = %s AND version = %s RETURNING key, last_seq"
        )
        logged_update = f"WITH u AS ({update}) {self._log_chunk('u')}"

        async def update_(
            conn: psycopg.AsyncConnection[Any], xact: Xact
        ) -> tuple[int, int, Incarnation, Owed]:
            cursor = await conn.execute(
                "SELECT t.version, t.lease_epoch, t.history_count, t.last_seq,"
                f" t.artifact_count, t.key, t.context_id, e.seq, e.event, {XID}"
                f" FROM {self._tasks} t LEFT JOIN LATERAL"
                f" (SELECT seq, event FROM {self._events} WHERE task_key = t.key"
                " ORDER BY seq DESC LIMIT 1) e ON true WHERE t.id = %s FOR UPDATE OF t",
                (task.id,),
            )
            row = await cursor.fetchone()
            # Under the row lock (FOR UPDATE): every lease change waits for this write.
            write.check(row)
            assert row is not None
            xact.xid = row[9]
            version, _, history_count, last_seq, artifact_count, task_key, context = row[:7]
            stored = history_count or 0  # NULL: an older row, its history moves to rows now
            fresh = task.history[max(0, stored - write.history_offset) :]
            ids = [str(column_text(m.message_id)) for m in fresh]
            if context != context_id:
                await self._context_moved(conn, task.id, task_key, column_value(context))
            taken = await self._known(conn, task_key, ids) if ids and stored else set()
            messages = new_messages(
                task,
                write.history_offset,
                stored,
                lambda _: taken,
                new_message=write.new_message,
            )
            await self._append_messages(conn, task_key, messages, stored)
            full, rows, appends = write.artifact_rows(artifact_count)
            logged, artifact_ref = write.logged(messages, stored, rows)
            last = None if row[7] is None else (int(row[7]), bytes(row[8]))
            if rows or full or appends:
                inlined = await self._sync_artifacts(
                    conn, task, task_key, rows, full, artifact_ref, last_seq + 1, appends
                )
                if inlined:  # the last chunk may be one it rewrote
                    last = await self._last_chunk(conn, task_key)
            params: tuple[Any, ...] = (
                write.snapshot,
                context_id,
                state,
                key,
                0 if logged is None else 1,
                terminal,
                stored + len(messages),
                len(task.artifacts),
                task.id,
                expected_version,
            )
            if logged is not None:
                params = (*params, *append_to(last, last_seq + 1, logged))
            cursor = await conn.execute(update if logged is None else logged_update, params)
            if await cursor.fetchone() is None:
                raise ConcurrentModificationError(task.id, expected_version, version)
            owed: Owed = None
            if logged is not None and write.owed:
                # Owed in the transaction that logs it: no moment where the status
                # is stored but its webhooks owed nothing (none: no row, no cost).
                cursor = await conn.execute(
                    f"UPDATE {self._push} SET owed_seq = %s,"
                    " claim_expires = extract(epoch FROM now()) + %s WHERE task_id = %s",
                    (last_seq + 1, self.push_claim_ttl, task.id),
                )
                owed = (last_seq + 1, cursor.rowcount)
            await enqueue_pending(conn, self._q, self.schema, task.id)
            return stored, len(messages), int(task_key), owed

        return await self._write(update_)

    def _page_statement(self, query: ListSQL) -> tuple[str, builtins.list[Any]]:
        """The statement (and parameters) reading a page and its total."""
        count, count_params = query.count(self._tasks, self._counts, _migrations.CONTEXT_COUNTED)
        # One statement, so the count and the page come from one snapshot.
        artifacts = self._artifact_columns("t") if query.artifacts else "NULL"
        select = (
            f"SELECT t.task, ({count}), t.history_count, t.id,"
            f" t.artifact_count, {artifacts}, t.context_id, t.key"
            f" FROM {self._tasks} t WHERE {query.page_where} {ListSQL.ORDER} LIMIT %s"
        )
        return select, [*count_params, *query.page_params, query.limit]

    async def _fetch_page(self, query: ListSQL) -> tuple[int, builtins.list[PageRow]]:
        count, count_params = query.count(self._tasks, self._counts, _migrations.CONTEXT_COUNTED)
        select, params = self._page_statement(query)

        async def select_(conn: psycopg.AsyncConnection[Any]) -> tuple[int, builtins.list[Any]]:
            cursor = await conn.execute(select, params)
            rows = await cursor.fetchall()
            if not rows:
                cursor = await conn.execute(count, count_params)
                row = await cursor.fetchone()
                return (0 if row is None else int(row[0])), []
            wanted = [
                (row[7], query.first_message(row[2]), row[2])
                for row in rows[: query.page_size]
                if row[2] and query.history_length != 0
            ]
            messages: dict[int, builtins.list[bytes | str]] = {}
            if wanted:
                # Rows below history_count never change: they match the page read.
                cursor = await conn.execute(
                    "SELECT m.task_key, m.message"
                    " FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS q(key, first, count)"
                    f" JOIN {self._messages} m"
                    " ON m.task_key = q.key AND m.pos >= q.first AND m.pos < q.count"
                    " ORDER BY m.task_key, m.pos",
                    ([w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted]),
                )
                for task_key, data in await cursor.fetchall():
                    messages.setdefault(task_key, []).append(bytes(data))
            page = [
                (
                    own_head(bytes(row[0]), row[3], column_value(row[6])),
                    row[2],
                    [
                        own_message(m, row_suffix(row[3], column_value(row[6])))
                        for m in messages.get(row[7], [])
                    ],
                    self._artifact_list(row[4], row[5]),
                )
                for row in rows
            ]
            return int(rows[0][1]), page

        return await self._run(select_, idempotent=True)

    # -- event log -----------------------------------------------------------------------

    async def append_event(self, task_id: str, event: StreamResponse) -> int:
        logged = encode_event(event)
        if not self._ok(task_id):
            raise TaskNotFoundError.of(task_id)
        statement = (
            f"WITH u AS (UPDATE {self._tasks} SET version = version + 1,"
            " last_seq = last_seq + 1, updated_at = now() WHERE id = %s RETURNING key)"
            f" {self._log_chunk('u')}"
        )

        async def append(conn: psycopg.AsyncConnection[Any], xact: Xact) -> int:
            cursor = await conn.execute(
                f"SELECT key, last_seq, {XID} FROM {self._tasks} WHERE id = %s FOR UPDATE",
                (task_id,),
            )
            found = await cursor.fetchone()
            if found is None:
                raise TaskNotFoundError.of(task_id)
            xact.xid = found[2]
            seq = int(found[1]) + 1
            chunk = append_to(await self._last_chunk(conn, found[0]), seq, logged)
            await conn.execute(statement, (task_id, *chunk))
            return seq

        return await self._write(append)

    async def events_after(
        self, task_id: str, seq: int, *, limit: int | None = None
    ) -> builtins.list[LoggedEvent]:
        # Seqs are consecutive: the first ``limit`` after ``seq`` end at ``seq + limit``.
        return await self._logged(task_id, seq, NO_END if limit is None else max(seq, 0) + limit)

    async def event_at(self, task_id: str, seq: int) -> StreamResponse | None:
        events = await self._logged(task_id, seq - 1, seq)
        return events[0][1] if events else None

    async def _logged(self, task_id: str, seq: int, until: int) -> builtins.list[LoggedEvent]:
        """The logged events numbered after ``seq`` and up to ``until``, in order."""
        if not self._ok(task_id):
            return []

        async def select(conn: psycopg.AsyncConnection[Any]) -> builtins.list[LoggedEvent]:
            # One snapshot: a write changing an artifact row first inlines it
            # into the events that referred to it.
            async with conn.transaction():
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                cursor = await conn.execute(
                    f"SELECT key, context_id FROM {self._tasks} WHERE id = %s", (task_id,)
                )
                found = await cursor.fetchone()
                if found is None:
                    return []
                task_key, context_id = found
                # A chunk starting up to CHUNK_EVENTS - 1 before seq + 1 may hold it.
                cursor = await conn.execute(
                    f"SELECT seq, event FROM {self._events}"
                    " WHERE task_key = %s AND seq > %s AND seq <= %s ORDER BY seq",
                    (task_key, max(seq, 0) - CHUNK_EVENTS, until),
                )
                rows = [
                    (int(first) + i, form)
                    for first, data in await cursor.fetchall()
                    for i, form in enumerate(unpack(bytes(data)))
                    if seq < int(first) + i <= until
                ]
                referenced = referenced_rows(data for _, data in rows)
                messages: dict[int, bytes | str] = {}
                artifacts: dict[int, bytes | str] = {}
                if referenced is not None:
                    positions, keys = referenced
                    cursor = await conn.execute(
                        f"SELECT pos, message FROM {self._messages}"
                        " WHERE task_key = %s AND pos = ANY(%s)",
                        (task_key, sorted(positions)),
                    )
                    messages = {pos: bytes(m) for pos, m in await cursor.fetchall()}
                    cursor = await conn.execute(
                        f"SELECT pos, artifact FROM {self._artifacts}"
                        " WHERE task_key = %s AND piece = 0 AND pos = ANY(%s)",
                        (task_key, sorted(keys)),
                    )
                    artifacts = {key: bytes(a) for key, a in await cursor.fetchall()}
            return expand_events(rows, task_id, context_id, messages, artifacts)

        return await self._run(select, idempotent=True)

    # -- push configs --------------------------------------------------------------------

    async def _upsert_config(self, task_id: str, config_id: str, data: bytes, dialect: str) -> None:
        import psycopg

        config, raw = _jsonb(data)
        # Replacing a config keeps its place (position) in the creation order.
        statement = (
            f"INSERT INTO {self._push} (task_id, config_id, config, config_raw, dialect)"
            " VALUES (%s, %s, %s::jsonb, %s, %s) ON CONFLICT (task_id, config_id)"
            " DO UPDATE SET config = EXCLUDED.config, config_raw = EXCLUDED.config_raw,"
            " dialect = EXCLUDED.dialect"
        )

        async def upsert(conn: psycopg.AsyncConnection[Any]) -> None:
            try:
                await conn.execute(statement, (task_id, config_id, config, raw, dialect))
            except psycopg.errors.ForeignKeyViolation:
                raise TaskNotFoundError.of(task_id) from None

        await self._run(upsert, idempotent=True)  # writing the same config twice changes nothing

    @property
    def _claim_owed(self) -> str:
        """The statement of :meth:`claim_owed_pushes` (parameters: ttl, limit)."""
        # Rows another process is claiming are skipped, not waited for.
        return (
            # By ctid (a TID scan): a join on the key was planned as a hash join over a
            # scan of the whole table.
            f"UPDATE {self._push} SET claim_expires = extract(epoch FROM now()) + %s"
            f" WHERE ctid = ANY(ARRAY(SELECT ctid FROM {self._push}"
            "  WHERE owed_seq > delivered_seq AND claim_expires <= extract(epoch FROM now())"
            "  ORDER BY claim_expires LIMIT %s FOR UPDATE SKIP LOCKED))"
            " RETURNING task_id, config_id, owed_seq"
        )

    async def claim_owed_pushes(
        self, ttl: float, limit: int
    ) -> builtins.list[tuple[str, str, int]]:
        statement = self._claim_owed

        async def claim(conn: psycopg.AsyncConnection[Any]) -> builtins.list[tuple[str, str, int]]:
            cursor = await conn.execute(statement, (ttl, limit))
            return [(str(t), str(c), int(seq)) for t, c, seq in await cursor.fetchall()]

        return await self._run(claim)

    async def push_delivered(self, task_id: str, config_id: str, seq: int) -> None:
        async def delivered(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(
                f"UPDATE {self._push} SET delivered_seq = greatest(delivered_seq, %s)"
                " WHERE task_id = %s AND config_id = %s",
                (seq, task_id, config_id),
            )

        await self._run(delivered, idempotent=True)

    async def _select_config(self, task_id: str, config_id: str) -> tuple[bytes | str, str] | None:
        async def select(conn: psycopg.AsyncConnection[Any]) -> tuple[Any, ...] | None:
            cursor = await conn.execute(
                f"SELECT config::text, config_raw, dialect FROM {self._push}"
                " WHERE task_id = %s AND config_id = %s",
                (task_id, config_id),
            )
            return await cursor.fetchone()

        row = await self._run(select, idempotent=True)
        return None if row is None else (_exact(row[0], row[1]), str(row[2]))

    async def _select_configs(self, task_id: str) -> builtins.list[tuple[bytes | str, str]]:
        async def select(conn: psycopg.AsyncConnection[Any]) -> builtins.list[tuple[Any, ...]]:
            cursor = await conn.execute(
                f"SELECT config::text, config_raw, dialect FROM {self._push}"
                " WHERE task_id = %s ORDER BY position",
                (task_id,),
            )
            return await cursor.fetchall()

        rows = await self._run(select, idempotent=True)
        return [(_exact(row[0], row[1]), str(row[2])) for row in rows]

    async def _delete_config(self, task_id: str, config_id: str) -> None:
        async def delete(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(
                f"DELETE FROM {self._push} WHERE task_id = %s AND config_id = %s",
                (task_id, config_id),
            )

        await self._run(delete, idempotent=True)

    # -- maintenance ---------------------------------------------------------------------

    def _terminal_deleter(self, seconds: float, batch_size: int) -> Callable[[], Awaitable[int]]:
        # By the database's clock; rows another transaction holds are skipped, so
        # serving never waits on a long delete.
        async def delete(conn: psycopg.AsyncConnection[Any]) -> int:
            cursor = await conn.execute(
                f"DELETE FROM {self._tasks} WHERE id IN (SELECT id FROM {self._tasks}"
                " WHERE terminal_at IS NOT NULL"
                " AND terminal_at <= now() - make_interval(secs => %s)"
                " ORDER BY terminal_at LIMIT %s FOR UPDATE SKIP LOCKED)",
                (seconds, batch_size),
            )
            return cursor.rowcount

        # A batch may take long on a big store: never cut by ``request_timeout``.
        return lambda: self._run(delete, idempotent=True, limit=False)
