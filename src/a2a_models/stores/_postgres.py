"""PostgreSQL: a :class:`~a2a_models.server.TaskStore` and a LISTEN/NOTIFY
:class:`~a2a_models.server.EventBroker` (psycopg 3, imported lazily)."""

from __future__ import annotations

import asyncio
import builtins
import collections
import hashlib
import logging
import re
import select
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from ..errors import TaskNotFoundError
from ..models import StreamResponse, Task, TaskPushNotificationConfig
from ..server import (
    BrokerItem as Notification,
)
from ..server import (
    BrokerSubscription,
    ConcurrentModificationError,
    EventBroker,
    LoggedEvent,
)
from ..server._store import ActiveTaskLimitError, check_active_limit, push_config_id
from . import _migrations
from ._common import (
    ACTIVE_KEYS,
    PRUNE_BATCH,
    ListSQL,
    PageRow,
    SQLTaskStore,
    all_messages,
    as_seconds,
    check_identifier,
    column_text,
    decode_config,
    decode_event,
    encode_config,
    encode_event,
    new_messages,
    task_columns,
)
from ._queue import enqueue_pending

if TYPE_CHECKING:
    import psycopg

__all__ = ["ConnectionPool", "PostgresEventBroker", "PostgresTaskStore", "RESYNC"]

log = logging.getLogger("a2a_models.stores")

T = TypeVar("T")


class ConnectionPool(Protocol):
    """What :class:`PostgresTaskStore` needs of a pool, e.g. ``psycopg_pool.AsyncConnectionPool``."""

    def connection(self) -> AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]: ...


# --- jsonb --------------------------------------------------------------------------------

# What jsonb cannot keep exactly: the escapes of NUL and of (lone) surrogates
# (rejected), numbers with a positive exponent (1e+16 comes back as the
# integer 10000000000000000) and -0.0 (comes back as 0.0). A match inside a
# string is a harmless false positive: the exact bytes are simply kept too.
_JSONB_LOSSY = re.compile(
    rb"\\u0000|\\u[dD][89a-fA-F]|[:\[,]-?[0-9]+(?:\.[0-9]+)?[eE]\+|[:\[,]-0\.0[,\]}]"
)
_JSONB_REJECTED = re.compile(rb"\\u0000|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _jsonb(data: bytes) -> tuple[str, bytes | None]:
    """``(jsonb text, exact bytes or None)``: the exact bytes only when jsonb would alter them."""
    if _JSONB_LOSSY.search(data) is None:
        return data.decode(), None
    # The jsonb copy stays queryable; the store reads the exact bytes.
    return _JSONB_REJECTED.sub(rb"\\ufffd", data).decode(), data


def _exact(text: str, raw: bytes | None) -> bytes | str:
    return text if raw is None else bytes(raw)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


# --- a small pool -------------------------------------------------------------------------


def _hung_up(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether the server has (probably) closed this idle connection.

    An idle store connection has nothing to read unless the server spoke on
    its own, almost always a FATAL message before hanging up (a restart, an
    admin kill, ``idle_session_timeout``). Checking costs no round trip, so a
    write is not sent down a dead connection (whether a failed write
    committed could not be known). A rare false alarm (an asynchronous
    notice) only costs a new connection.
    """
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class _Pool:
    """At most ``max_size`` autocommit connections, reused; broken ones are dropped.

    A connection idle for more than ``check_after`` seconds is pinged before
    reuse, so a restarted server costs no failed operation.
    """

    def __init__(
        self, conninfo: str, max_size: int, check_after: float, kwargs: Mapping[str, Any]
    ) -> None:
        self._conninfo = conninfo
        self._kwargs = dict(kwargs)
        self._check_after = check_after
        self._slots = asyncio.Semaphore(max_size)
        self._idle: collections.deque[tuple[psycopg.AsyncConnection[Any], float]] = (
            collections.deque()
        )
        self._closed = False

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if self._closed:
            raise RuntimeError("the store is closed")
        async with self._slots:
            conn = await self._take()
            healthy = False
            try:
                yield conn
                healthy = True
            finally:
                await self._give_back(conn, healthy)

    async def _take(self) -> psycopg.AsyncConnection[Any]:
        import psycopg

        loop = asyncio.get_running_loop()
        while self._idle:
            conn, since = self._idle.pop()
            if conn.closed or conn.broken or _hung_up(conn):
                await conn.close()
                continue
            if loop.time() - since > self._check_after:
                try:
                    await conn.execute("SELECT 1")
                except psycopg.Error:
                    await conn.close()
                    continue
            return conn
        return await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, **self._kwargs
        )

    async def _give_back(self, conn: psycopg.AsyncConnection[Any], healthy: bool) -> None:
        from psycopg import pq

        if conn.broken:
            # The server probably went away: the idle ones are likely dead too.
            await self._drop_idle()
        reusable = (
            not self._closed
            and not conn.closed
            and not conn.broken
            and conn.info.transaction_status == pq.TransactionStatus.IDLE
        )
        if reusable:
            self._idle.append((conn, asyncio.get_running_loop().time()))
        else:
            await conn.close()

    async def _drop_idle(self) -> None:
        while self._idle:
            conn, _ = self._idle.pop()
            await conn.close()

    async def close(self) -> None:
        self._closed = True
        await self._drop_idle()


@asynccontextmanager
async def _atomic(conn: psycopg.AsyncConnection[Any]) -> AsyncIterator[None]:
    """One statement is atomic in autocommit mode; otherwise commit it explicitly."""
    if conn.autocommit:
        yield
    else:
        async with conn.transaction():
            yield


# --- the store ------------------------------------------------------------------------------


class PostgresTaskStore(SQLTaskStore):
    """A :class:`~a2a_models.server.TaskStore` in PostgreSQL, shareable by many server replicas.

    ``conninfo`` is a libpq connection string or URL (the store keeps a small
    pool of up to ``max_connections`` connections), or a pool object with an
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

    Snapshots, events and configs are ``jsonb``; values jsonb would alter are
    kept exactly in a ``*_raw`` column (see :mod:`._migrations`). A task id
    cannot contain NUL characters (a PostgreSQL ``text`` limit): creating
    one raises ``InvalidParamsError``, looking one up finds nothing.

    Finished tasks are kept until :meth:`delete_terminal_older_than` removes them.
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
        connect_kwargs: Mapping[str, Any] | None = None,
        max_active_tasks_per_owner: int | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.schema = check_identifier(schema, "schema")
        self.max_active_tasks_per_owner = check_active_limit(max_active_tasks_per_owner)
        kwargs = {"application_name": "a2a-models store", **(connect_kwargs or {})}
        self._own_pool: _Pool | None = None
        if isinstance(conninfo, str):
            self._own_pool = _Pool(conninfo, max_connections, check_idle_after, kwargs)
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
        self._migrations_table = f"{q}.a2a_schema_migrations"

    def __repr__(self) -> str:
        return f"PostgresTaskStore(schema={self.schema!r})"

    # -- connections and migrations ------------------------------------------------------

    async def _run(
        self,
        fn: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
        *,
        idempotent: bool = False,
    ) -> T:
        import psycopg

        if not self._ready:
            await self.open()
        attempts = 2 if idempotent else 1
        for attempt in range(attempts):
            try:
                async with self._pool.connection() as conn, _atomic(conn):
                    return await fn(conn)
            except psycopg.OperationalError:
                # A read may go again on a fresh connection; a write may
                # have committed, so its caller has to find out.
                if attempt + 1 == attempts:
                    raise
        raise AssertionError("unreachable")

    async def open(self) -> Self:
        """Create or migrate the schema now (otherwise done on first use)."""
        if self._ready:
            return self
        if self._ready_lock is None:
            self._ready_lock = asyncio.Lock()
        async with self._ready_lock:
            if not self._ready:
                async with self._pool.connection() as conn:
                    await self._migrate(conn)
                self._ready = True
        return self

    async def _migrate(self, conn: psycopg.AsyncConnection[Any]) -> None:
        migrations = _migrations.MIGRATIONS
        _migrations.check_order(migrations)
        latest = _migrations.latest_version(migrations)
        if await self._schema_version(conn) == latest:
            return  # the common case: nothing to do, no lock taken
        async with conn.transaction():
            # Serializes replicas migrating the same schema; released at commit.
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(),))
            exists = await conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
            )
            if await exists.fetchone() is None:
                await conn.execute(f"CREATE SCHEMA {self._q}")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self._migrations_table} ("
                " version integer NOT NULL PRIMARY KEY,"
                " name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            cursor = await conn.execute(f"SELECT version FROM {self._migrations_table}")
            applied = {row[0] for row in await cursor.fetchall()}
            for migration in _migrations.pending(applied, migrations):
                for statement in migration.postgres:
                    await conn.execute(statement.replace("{schema}", self._q))
                await conn.execute(
                    f"INSERT INTO {self._migrations_table} (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
                log.info("applied a2a schema migration %d to %s", migration.version, self.schema)

    async def _schema_version(self, conn: psycopg.AsyncConnection[Any]) -> int | None:
        async with _atomic(conn):
            cursor = await conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (f"{self._q}.a2a_schema_migrations",)
            )
            row = await cursor.fetchone()
            if row is None or not row[0]:
                return None
            cursor = await conn.execute(f"SELECT max(version) FROM {self._migrations_table}")
            row = await cursor.fetchone()
        return None if row is None else row[0]

    def _lock_key(self) -> int:
        digest = hashlib.blake2b(f"a2a_models migrations {self.schema}".encode(), digest_size=8)
        return int.from_bytes(digest.digest(), "big", signed=True)

    async def aclose(self) -> None:
        """Close the store's own connections (a pool passed in is left open)."""
        if self._own_pool is not None:
            await self._own_pool.close()

    # -- tasks ---------------------------------------------------------------------------

    async def _fetch_task(
        self, task_id: str, scope: str, history_length: int | None, since: int
    ) -> tuple[bytes | str, int, int, int | None, builtins.list[bytes | str]] | None:
        async def get(conn: psycopg.AsyncConnection[Any]) -> tuple[Any, ...] | None:
            cursor = await conn.execute(
                f"SELECT task::text, task_raw, version, last_seq, history_count FROM {self._tasks}"
                " WHERE id = %s AND scope = %s",
                (task_id, scope),
            )
            row = await cursor.fetchone()
            if row is None:
                return None
            count = row[4]
            first = since if history_length is None else max(0, (count or 0) - history_length)
            if not count or first >= count:
                return (*row, [])
            # Rows below history_count never change: the messages match the row read.
            cursor = await conn.execute(
                f"SELECT message::text, message_raw FROM {self._messages}"
                " WHERE task_id = %s AND pos >= %s AND pos < %s ORDER BY pos",
                (task_id, first, count),
            )
            return (*row, await cursor.fetchall())

        row = await self._run(get, idempotent=True)
        if row is None:
            return None
        messages = [_exact(m[0], m[1]) for m in row[5]]
        return _exact(row[0], row[1]), row[2], row[3], row[4], messages

    async def _version(self, conn: psycopg.AsyncConnection[Any], task_id: str) -> int | None:
        cursor = await conn.execute(f"SELECT version FROM {self._tasks} WHERE id = %s", (task_id,))
        row = await cursor.fetchone()
        return None if row is None else int(row[0])

    async def _append_messages(
        self,
        conn: psycopg.AsyncConnection[Any],
        task_id: str,
        messages: builtins.list[tuple[str, bytes]],
        at: int,
    ) -> None:
        if not messages:
            return
        rows = []
        for i, (key, data) in enumerate(messages):
            text, raw = _jsonb(data)
            rows.append((task_id, at + i, key, text, raw))
        async with conn.cursor() as cursor:
            await cursor.executemany(
                f"INSERT INTO {self._messages} (task_id, pos, message_id, message, message_raw)"
                " VALUES (%s, %s, %s, %s::jsonb, %s)",
                rows,
            )

    async def _known(
        self, conn: psycopg.AsyncConnection[Any], task_id: str, ids: builtins.list[str]
    ) -> set[str]:
        cursor = await conn.execute(
            f"SELECT message_id FROM {self._messages} WHERE task_id = %s AND message_id = ANY(%s)",
            (task_id, ids),
        )
        return {row[0] for row in await cursor.fetchall()}

    async def _insert_task(
        self, task: Task, scope: str, snapshot: bytes, event: bytes | None
    ) -> None:
        data, data_raw = _jsonb(snapshot)
        logged = None if event is None else _jsonb(event)
        context_id, state, key, terminal = task_columns(task)
        messages = all_messages(task.history)
        insert = (
            f"INSERT INTO {self._tasks} (id, scope, context_id, state, status_key, version,"
            " last_seq, terminal_at, task, task_raw, history_count)"
            " VALUES (%s, %s, %s, %s, %s, 1, %s, CASE WHEN %s THEN now() END, %s::jsonb, %s, %s)"
            " ON CONFLICT (id) DO NOTHING RETURNING id"
        )
        params: tuple[Any, ...] = (
            task.id,
            scope,
            context_id,
            state,
            key,
            0 if logged is None else 1,
            terminal,
            data,
            data_raw,
            len(messages),
        )
        if logged is not None:
            insert = (
                f"WITH t AS ({insert}) INSERT INTO {self._events} (task_id, seq, event, event_raw)"
                " SELECT id, 1, %s::jsonb, %s::bytea FROM t RETURNING seq"
            )
            params = (*params, *logged)
        limit = self.max_active_tasks_per_owner if not terminal else None

        async def create(conn: psycopg.AsyncConnection[Any]) -> None:
            async with conn.transaction():
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
                if await cursor.fetchone() is None:
                    version = await self._version(conn, task.id)
                    raise ConcurrentModificationError(task.id, 0, version or 0)
                await self._append_messages(conn, task.id, messages, 0)
                await enqueue_pending(conn, self._q, self.schema, task.id)

        await self._run(create)

    async def _update_task(
        self,
        task: Task,
        expected_version: int,
        snapshot: bytes,
        event: bytes | None,
        history_offset: int,
    ) -> None:
        data, data_raw = _jsonb(snapshot)
        logged = None if event is None else _jsonb(event)
        context_id, state, key, terminal = task_columns(task)
        update = (
            f"UPDATE {self._tasks} SET task = %s::jsonb, task_raw = %s, context_id = %s,"
            " state = %s, status_key = %s, version = version + 1, last_seq = last_seq + %s,"
            " terminal_at = CASE WHEN terminal_at IS NULL AND %s THEN now() ELSE terminal_at END,"
            " updated_at = now(), history_count = %s WHERE id = %s AND version = %s"
            " RETURNING id, last_seq"
        )
        if logged is not None:
            update = (
                f"WITH u AS ({update}) INSERT INTO {self._events} (task_id, seq, event, event_raw)"
                " SELECT id, last_seq, %s::jsonb, %s::bytea FROM u RETURNING seq"
            )

        async def update_(conn: psycopg.AsyncConnection[Any]) -> None:
            async with conn.transaction():
                cursor = await conn.execute(
                    f"SELECT version, history_count FROM {self._tasks} WHERE id = %s FOR UPDATE",
                    (task.id,),
                )
                row = await cursor.fetchone()
                if row is None:
                    raise TaskNotFoundError(f"task {task.id!r} not found")
                if row[0] != expected_version:
                    raise ConcurrentModificationError(task.id, expected_version, row[0])
                stored = row[1] or 0  # NULL: an older row, its history moves to rows now
                fresh = task.history[max(0, stored - history_offset) :]
                ids = [str(column_text(m.message_id)) for m in fresh]
                taken = await self._known(conn, task.id, ids) if ids and stored else set()
                messages = new_messages(task.history, history_offset, stored, lambda _: taken)
                await self._append_messages(conn, task.id, messages, stored)
                params: tuple[Any, ...] = (
                    data,
                    data_raw,
                    context_id,
                    state,
                    key,
                    0 if logged is None else 1,
                    terminal,
                    stored + len(messages),
                    task.id,
                    expected_version,
                )
                if logged is not None:
                    params = (*params, *logged)
                cursor = await conn.execute(update, params)
                if await cursor.fetchone() is None:
                    raise ConcurrentModificationError(task.id, expected_version, row[0])
                await enqueue_pending(conn, self._q, self.schema, task.id)

        await self._run(update_)

    async def _fetch_page(self, query: ListSQL) -> tuple[int, builtins.list[PageRow]]:
        count, count_params = query.count(self._tasks, self._counts)
        # One statement, so the count and the page come from one snapshot.
        select = (
            f"SELECT task::text, task_raw, ({count}), history_count, id FROM {self._tasks}"
            f" WHERE {query.page_where} {ListSQL.ORDER} LIMIT %s"
        )

        async def select_(conn: psycopg.AsyncConnection[Any]) -> tuple[int, builtins.list[Any]]:
            cursor = await conn.execute(select, [*count_params, *query.page_params, query.limit])
            rows = await cursor.fetchall()
            if not rows:
                cursor = await conn.execute(count, count_params)
                row = await cursor.fetchone()
                return (0 if row is None else int(row[0])), []
            wanted = [
                (row[4], query.first_message(row[3]), row[3])
                for row in rows[: query.page_size]
                if row[3] and query.history_length != 0
            ]
            messages: dict[str, builtins.list[bytes | str]] = {}
            if wanted:
                # Rows below history_count never change: they match the page read.
                cursor = await conn.execute(
                    "SELECT m.task_id, m.message::text, m.message_raw"
                    " FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS q(id, first, count)"
                    f" JOIN {self._messages} m"
                    " ON m.task_id = q.id AND m.pos >= q.first AND m.pos < q.count"
                    " ORDER BY m.task_id, m.pos",
                    ([w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted]),
                )
                for task_id, text, raw in await cursor.fetchall():
                    messages.setdefault(task_id, []).append(_exact(text, raw))
            page = [(_exact(row[0], row[1]), row[3], messages.get(row[4], [])) for row in rows]
            return int(rows[0][2]), page

        return await self._run(select_, idempotent=True)

    # -- event log -----------------------------------------------------------------------

    async def append_event(self, task_id: str, event: StreamResponse) -> int:
        logged = _jsonb(encode_event(event))
        if not self._ok(task_id):
            raise TaskNotFoundError(f"task {task_id!r} not found")
        statement = (
            f"WITH u AS (UPDATE {self._tasks} SET version = version + 1,"
            " last_seq = last_seq + 1, updated_at = now() WHERE id = %s RETURNING id, last_seq)"
            f" INSERT INTO {self._events} (task_id, seq, event, event_raw)"
            " SELECT id, last_seq, %s::jsonb, %s::bytea FROM u RETURNING seq"
        )

        async def append(conn: psycopg.AsyncConnection[Any]) -> int:
            cursor = await conn.execute(statement, (task_id, *logged))
            row = await cursor.fetchone()
            if row is None:
                raise TaskNotFoundError(f"task {task_id!r} not found")
            return int(row[0])

        return await self._run(append)

    async def events_after(self, task_id: str, seq: int) -> builtins.list[LoggedEvent]:
        if not self._ok(task_id):
            return []

        async def select(conn: psycopg.AsyncConnection[Any]) -> builtins.list[tuple[Any, ...]]:
            cursor = await conn.execute(
                f"SELECT seq, event::text, event_raw FROM {self._events}"
                " WHERE task_id = %s AND seq > %s ORDER BY seq",
                (task_id, max(seq, 0)),
            )
            return await cursor.fetchall()

        rows = await self._run(select, idempotent=True)
        return [(int(row[0]), decode_event(_exact(row[1], row[2]))) for row in rows]

    # -- push configs --------------------------------------------------------------------

    async def set_push_config(
        self, task_id: str, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        import psycopg

        config_id = push_config_id(config)
        data, raw = _jsonb(encode_config(config))
        if not self._ok(task_id, config_id):
            raise TaskNotFoundError(f"task {task_id!r} not found")
        # Replacing a config keeps its place (position) in the creation order.
        statement = (
            f"INSERT INTO {self._push} (task_id, config_id, config, config_raw)"
            " VALUES (%s, %s, %s::jsonb, %s) ON CONFLICT (task_id, config_id)"
            " DO UPDATE SET config = EXCLUDED.config, config_raw = EXCLUDED.config_raw"
        )

        async def upsert(conn: psycopg.AsyncConnection[Any]) -> None:
            try:
                await conn.execute(statement, (task_id, config_id, data, raw))
            except psycopg.errors.ForeignKeyViolation:
                raise TaskNotFoundError(f"task {task_id!r} not found") from None

        await self._run(upsert)
        return config

    async def get_push_config(
        self, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        if not self._ok(task_id, config_id):
            return None

        async def select(conn: psycopg.AsyncConnection[Any]) -> tuple[Any, ...] | None:
            cursor = await conn.execute(
                f"SELECT config::text, config_raw FROM {self._push}"
                " WHERE task_id = %s AND config_id = %s",
                (task_id, config_id),
            )
            return await cursor.fetchone()

        row = await self._run(select, idempotent=True)
        return None if row is None else decode_config(_exact(row[0], row[1]))

    async def list_push_configs(self, task_id: str) -> builtins.list[TaskPushNotificationConfig]:
        if not self._ok(task_id):
            return []

        async def select(conn: psycopg.AsyncConnection[Any]) -> builtins.list[tuple[Any, ...]]:
            cursor = await conn.execute(
                f"SELECT config::text, config_raw FROM {self._push}"
                " WHERE task_id = %s ORDER BY position",
                (task_id,),
            )
            return await cursor.fetchall()

        rows = await self._run(select, idempotent=True)
        return [decode_config(_exact(row[0], row[1])) for row in rows]

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        if not self._ok(task_id, config_id):
            return

        async def delete(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(
                f"DELETE FROM {self._push} WHERE task_id = %s AND config_id = %s",
                (task_id, config_id),
            )

        await self._run(delete, idempotent=True)

    # -- leases --------------------------------------------------------------------------

    async def acquire_lease(self, task_id: str, worker: str, ttl: float) -> bool:
        """Take (or keep) the lease on a task's turn; False if another live worker holds it."""

        async def acquire(conn: psycopg.AsyncConnection[Any]) -> bool:
            cursor = await conn.execute(
                f"UPDATE {self._tasks} SET lease_owner = %s,"
                " lease_expires = now() + make_interval(secs => %s) WHERE id = %s"
                " AND (lease_expires IS NULL OR lease_owner = %s OR lease_expires < now())",
                (worker, ttl, task_id, worker),
            )
            return cursor.rowcount == 1

        return await self._run(acquire)

    async def renew_leases(self, worker: str, ttl: float) -> builtins.set[str]:
        """Extend every lease ``worker`` holds; the ids of those tasks."""

        async def renew(conn: psycopg.AsyncConnection[Any]) -> builtins.set[str]:
            cursor = await conn.execute(
                f"UPDATE {self._tasks} SET lease_expires = now() + make_interval(secs => %s)"
                " WHERE lease_owner = %s AND lease_expires IS NOT NULL RETURNING id",
                (ttl, worker),
            )
            return {row[0] for row in await cursor.fetchall()}

        return await self._run(renew, idempotent=True)

    async def release_lease(self, task_id: str, worker: str) -> None:
        """Give up ``worker``'s lease on a task (nothing if it holds none)."""

        async def release(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(
                f"UPDATE {self._tasks} SET lease_owner = NULL, lease_expires = NULL"
                " WHERE id = %s AND lease_owner = %s",
                (task_id, worker),
            )

        await self._run(release, idempotent=True)

    async def claim_expired_leases(
        self, worker: str, ttl: float, limit: int = 100
    ) -> builtins.list[tuple[str, str]]:
        """Take over up to ``limit`` running tasks whose worker is gone: ``(task_id, scope)``.

        A task is taken over when its lease lapsed, or when it is submitted or
        working with no lease and unchanged for ``ttl`` seconds (a crash right
        after it was created, or a database from before leases). Rows another
        worker is claiming at the same moment are skipped.
        """

        async def claim(conn: psycopg.AsyncConnection[Any]) -> builtins.list[tuple[str, str]]:
            cursor = await conn.execute(
                f"UPDATE {self._tasks} SET lease_owner = %s,"
                " lease_expires = now() + make_interval(secs => %s)"
                f" WHERE id IN (SELECT id FROM (SELECT id FROM {self._tasks}"
                " WHERE lease_expires < now() LIMIT %s) AS lapsed"
                f" UNION SELECT id FROM (SELECT id FROM {self._tasks} WHERE lease_expires IS NULL"
                f" AND state IN {_migrations._RUNNING}"
                " AND updated_at < now() - make_interval(secs => %s) LIMIT %s) AS orphans)"
                " AND (lease_expires < now() OR lease_expires IS NULL)"
                " RETURNING id, scope",
                (worker, ttl, limit, ttl, limit),
            )
            return [(row[0], row[1]) for row in await cursor.fetchall()]

        return await self._run(claim)

    # -- maintenance ---------------------------------------------------------------------

    async def delete_terminal_older_than(
        self, age: timedelta | float, *, batch_size: int = PRUNE_BATCH
    ) -> int:
        """Delete the tasks that reached a terminal state at least ``age`` ago.

        ``age`` is a ``timedelta`` or seconds (measured by the database's
        clock). Their event logs and push configs go with them. Deletes
        ``batch_size`` tasks per transaction, oldest first, skipping rows
        another transaction holds, so serving never waits on a long delete.
        Returns how many tasks were deleted.
        """
        seconds = as_seconds(age)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")

        async def delete(conn: psycopg.AsyncConnection[Any]) -> int:
            cursor = await conn.execute(
                f"DELETE FROM {self._tasks} WHERE id IN (SELECT id FROM {self._tasks}"
                " WHERE terminal_at IS NOT NULL"
                " AND terminal_at <= now() - make_interval(secs => %s)"
                " ORDER BY terminal_at LIMIT %s FOR UPDATE SKIP LOCKED)",
                (seconds, batch_size),
            )
            return cursor.rowcount

        total = 0
        while True:
            deleted = await self._run(delete, idempotent=True)
            total += deleted
            if deleted < batch_size:
                return total


# --- the broker ---------------------------------------------------------------------------

#: The notification a subscription returns when notifications may have been
#: lost (after a reconnect, or after ``resync_interval`` without any): its seq
#: is beyond every real one and it has no event, so the stream re-reads the
#: store's log after what it has delivered.
RESYNC: Notification = (sys.maxsize, None)

#: NOTIFY payloads must stay below 8000 bytes.
_MAX_PAYLOAD = 7999


class _Subscription(BrokerSubscription):
    def __init__(
        self,
        broker: PostgresEventBroker,
        task_id: str,
        buffer: int,
        resync_interval: float | None,
    ) -> None:
        self._broker = broker
        self._task_id = task_id
        self._resync_interval = resync_interval
        # Overflow drops the oldest: the stream sees the gap and reads the log.
        self._items: collections.deque[Notification] = collections.deque(maxlen=buffer)
        self._ready = asyncio.Event()
        self.closed = False

    def push(self, item: Notification) -> None:
        self._items.append(item)
        self._ready.set()

    async def next(self) -> Notification:
        while not self._items:
            if self.closed:
                raise RuntimeError("subscription is closed")
            self._ready.clear()
            if self._resync_interval is None:
                await self._ready.wait()
                continue
            try:
                await asyncio.wait_for(self._ready.wait(), self._resync_interval)
            except TimeoutError:
                return RESYNC  # quiet for long: check the log, in case a notification was lost
        return self._items.popleft()

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self._broker._remove(self._task_id, self)
            self._ready.set()


class PostgresEventBroker(EventBroker):
    """An :class:`~a2a_models.server.EventBroker` over PostgreSQL ``LISTEN/NOTIFY``.

    Give every server replica its own broker on the database of the shared
    :class:`PostgresTaskStore`: a stream opened on one replica then receives
    the events produced on any other, in order.

    * ``publish`` hands ``(seq, event)`` to this process's subscribers at once
      and queues ``NOTIFY <channel>, '<task_id>:<seq>'``; a background task
      sends the queue (in batches) on one connection, retrying after a
      connection loss. It never waits for the database or for subscribers.
    * ``subscribe`` registers a local subscriber; one listening connection
      per broker (``LISTEN <channel>``, started on the first subscribe)
      fans notifications out to the subscribers of their task as
      ``(seq, None)``, and the stream reads the events from the store's log.
    * When the listening connection is lost, the broker reconnects (with
      backoff from ``reconnect_delay`` to ``max_reconnect_delay`` seconds)
      and then tells every subscriber to re-read the log (:data:`RESYNC`),
      since notifications sent meanwhile are gone. The connection is checked
      every ``health_interval`` seconds without traffic.
    * ``resync_interval``: a subscriber that hears nothing for this long
      re-reads the log anyway, bounding how long a lost notification can
      delay a stream (``None``: never).

    Use a direct (or session-pooled) connection: LISTEN does not work through
    a transaction-pooling proxy. Close the broker with :meth:`aclose`.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        channel: str = "a2a_events",
        buffer: int = 1024,
        resync_interval: float | None = 30.0,
        reconnect_delay: float = 0.1,
        max_reconnect_delay: float = 5.0,
        health_interval: float = 15.0,
        max_pending: int = 100_000,
        connect_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        if resync_interval is not None and resync_interval <= 0:
            raise ValueError("resync_interval must be positive (or None)")
        self.channel = check_identifier(channel, "channel")
        self._conninfo = conninfo
        self._kwargs = dict(connect_kwargs or {})
        self._buffer = buffer
        self._resync_interval = resync_interval
        self._reconnect_delay = reconnect_delay
        self._max_reconnect_delay = max_reconnect_delay
        self._health_interval = health_interval
        self._subscribers: dict[str, set[_Subscription]] = {}
        self._pending: collections.deque[str] = collections.deque(maxlen=max_pending)
        self._wakeup = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._sender: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._listen_conn: psycopg.AsyncConnection[Any] | None = None
        self._publish_conn: psycopg.AsyncConnection[Any] | None = None
        self._start_lock: asyncio.Lock | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"PostgresEventBroker(channel={self.channel!r})"

    # -- inspection ----------------------------------------------------------------------

    def subscriber_count(self, task_id: str) -> int:
        """How many local subscriptions ``task_id`` currently has."""
        return len(self._subscribers.get(task_id, ()))

    @property
    def listener_pid(self) -> int | None:
        """Backend pid of the listening connection (while connected)."""
        conn = self._listen_conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    # -- publishing ----------------------------------------------------------------------

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        if self._closed:
            raise RuntimeError("the broker is closed")
        for subscription in tuple(self._subscribers.get(task_id, ())):
            subscription.push((seq, event))
        payload = f"{task_id}:{seq}"
        if len(payload.encode("utf-8", "surrogatepass")) > _MAX_PAYLOAD:
            log.warning("task id too long for a NOTIFY payload; other replicas will resync")
            return
        if len(self._pending) == self._pending.maxlen:
            log.warning("NOTIFY queue full: dropping the oldest notification")
        self._pending.append(payload)
        self._drained.clear()
        self._wakeup.set()
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_loop(), name="a2a-notify-sender")

    async def flush(self, timeout: float | None = None) -> None:
        """Wait until every published notification has been sent to PostgreSQL."""
        await asyncio.wait_for(self._drained.wait(), timeout)

    async def _send_loop(self) -> None:
        delay = self._reconnect_delay
        while True:
            if not self._pending:
                self._drained.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            batch = [self._pending[i] for i in range(min(len(self._pending), 500))]
            try:
                conn = self._publish_conn
                if conn is None or conn.closed or conn.broken:
                    conn = self._publish_conn = await self._connect("notify")
                # Sent in order, as one transaction: one round trip per batch.
                await conn.execute(
                    "SELECT pg_notify(%s, payload) FROM unnest(%s::text[]) AS payload",
                    (self.channel, batch),
                )
            except Exception as exc:
                log.warning("sending NOTIFY failed (%s); retrying in %.1fs", exc, delay)
                await self._close_quietly(self._publish_conn)
                self._publish_conn = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_reconnect_delay)
                continue
            delay = self._reconnect_delay
            for _ in batch:
                if self._pending:
                    self._pending.popleft()

    # -- subscribing ---------------------------------------------------------------------

    async def subscribe(self, task_id: str) -> BrokerSubscription:
        if self._closed:
            raise RuntimeError("the broker is closed")
        await self._ensure_listening()
        subscription = _Subscription(self, task_id, self._buffer, self._resync_interval)
        self._subscribers.setdefault(task_id, set()).add(subscription)
        return subscription

    def _remove(self, task_id: str, subscription: _Subscription) -> None:
        subscribers = self._subscribers.get(task_id)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._subscribers[task_id]

    async def _ensure_listening(self) -> None:
        if self._listener is not None:
            return  # listening, or reconnecting (subscribers get RESYNC then)
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._listener is None:
                # The first connection is made here, so a bad DSN raises to the caller.
                conn = await self._listen()
                self._listener = asyncio.create_task(
                    self._listen_loop(conn), name="a2a-notify-listener"
                )

    async def _listen(self) -> psycopg.AsyncConnection[Any]:
        from psycopg import sql

        conn = await self._connect("listen")
        try:
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except BaseException:
            await conn.close()
            raise
        self._listen_conn = conn
        return conn

    async def _listen_loop(self, conn: psycopg.AsyncConnection[Any] | None) -> None:
        delay = self._reconnect_delay
        while True:
            try:
                if conn is None:
                    conn = await self._listen()
                    log.info("listening for a2a events again")
                    delay = self._reconnect_delay
                    # Whatever was notified while we were away is lost: re-read the logs.
                    for subscribers in tuple(self._subscribers.values()):
                        for subscription in tuple(subscribers):
                            subscription.push(RESYNC)
                while True:
                    async for notify in conn.notifies(timeout=self._health_interval):
                        self._dispatch(notify.payload, notify.pid)
                    await conn.execute("SELECT 1")  # quiet: is the connection still alive?
            except Exception as exc:
                log.warning("lost the LISTEN connection (%s); reconnecting in %.1fs", exc, delay)
                await self._close_quietly(conn)
                conn = self._listen_conn = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_reconnect_delay)

    def _dispatch(self, payload: str, pid: int) -> None:
        publisher = self._publish_conn
        if publisher is not None and not publisher.closed and pid == publisher.info.backend_pid:
            return  # our own: local subscribers got it, with its event, from publish
        task_id, _, seq_text = payload.rpartition(":")
        subscribers = self._subscribers.get(task_id)
        if not subscribers:
            return
        try:
            seq = int(seq_text)
        except ValueError:
            log.warning("ignoring a malformed a2a notification %r", payload)
            return
        for subscription in tuple(subscribers):
            subscription.push((seq, None))

    # -- connections ---------------------------------------------------------------------

    async def _connect(self, purpose: str) -> psycopg.AsyncConnection[Any]:
        import psycopg

        kwargs = {"application_name": f"a2a-models {purpose}", **self._kwargs}
        return await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True, **kwargs)

    @staticmethod
    async def _close_quietly(conn: psycopg.AsyncConnection[Any] | None) -> None:
        if conn is not None:
            try:
                await conn.close()
            except Exception:  # closing a broken connection may fail; it is gone anyway
                pass

    async def aclose(self, timeout: float = 5.0) -> None:
        """Send what is queued (waiting up to ``timeout``), then stop and disconnect.

        Open subscriptions are closed: their ``next`` raises ``RuntimeError``.
        """
        if self._closed:
            return
        self._closed = True
        if self._sender is not None and not self._sender.done():
            try:
                await self.flush(timeout)
            except TimeoutError:
                log.warning("closing the broker with %d unsent notifications", len(self._pending))
        for task in (self._sender, self._listener):
            if task is not None:
                task.cancel()
        await asyncio.gather(
            *(t for t in (self._sender, self._listener) if t is not None), return_exceptions=True
        )
        await self._close_quietly(self._listen_conn)
        await self._close_quietly(self._publish_conn)
        self._listen_conn = self._publish_conn = None
        for subscribers in tuple(self._subscribers.values()):
            for subscription in tuple(subscribers):
                await subscription.aclose()

    async def __aenter__(self) -> PostgresEventBroker:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
