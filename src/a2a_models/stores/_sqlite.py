"""A :class:`~a2a_models.server.TaskStore` in an SQLite file (stdlib ``sqlite3``)."""

from __future__ import annotations

import asyncio
import builtins
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Self, TypeVar

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
from ._eventlog import NO_END, expand_events, inline_artifact, referenced_rows, with_context
from ._pieces import ArtifactAppend, next_piece, whole_artifacts, with_head
from ._sqlstore import FIRST_EPOCH, NewTask, Owed, SQLTaskStore, TaskRead, TaskWrite

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SQLiteTaskStore"]

T = TypeVar("T")
Synchronous = Literal["NORMAL", "FULL", "EXTRA"]


@contextmanager
def _transaction(db: sqlite3.Connection, *, write: bool = True) -> Iterator[None]:
    # IMMEDIATE takes the write lock up front: no deadlock-prone lock upgrade
    # when several processes share the file.
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class SQLiteTaskStore(SQLTaskStore):
    """A :class:`~a2a_models.server.TaskStore` in one SQLite database file.

    The embedded default for a single server process: no server to run, the
    schema is created and migrated by the store itself on first use (tracked
    in ``a2a_schema_migrations``). ``sqlite3`` is blocking, so every
    operation runs on one dedicated worker thread that owns the store's
    single connection: operations are serialized, and each is one
    transaction.

    Durability: the database is in WAL mode with ``synchronous=FULL`` by
    default, so once a write has returned it survives a crash of the process
    *and* of the machine (power loss): the WAL is fsynced at every commit.
    ``synchronous="NORMAL"`` is faster and still survives a killed process
    (the committed WAL frames are in the OS's page cache), but the last
    commits may be lost if the machine itself goes down.

    Several processes may open the same file (writes wait up to
    ``busy_timeout`` seconds for each other); live streams across processes
    need a shared broker, which SQLite does not provide. ``":memory:"`` gives
    a private in-memory database (for tests).

    Finished tasks are kept until :meth:`delete_terminal_older_than` removes them.
    """

    PLACEHOLDER = "?"
    NUL = True
    BAD_TASK_ID = "SQLite cannot store a task id with lone surrogates"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 5.0,
        max_active_tasks_per_owner: int | None = None,
    ) -> None:
        mode = synchronous.upper()
        if mode not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError("synchronous must be 'NORMAL', 'FULL' or 'EXTRA'")
        if busy_timeout < 0:
            raise ValueError("busy_timeout must not be negative")
        self.max_active_tasks_per_owner = check_active_limit(max_active_tasks_per_owner)
        self.path = os.fspath(path)
        self.synchronous = mode
        self.busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="a2a-sqlite")
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"SQLiteTaskStore({self.path!r})"

    # -- connection ----------------------------------------------------------------------

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise RuntimeError("the store is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, fn)

    def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            db = self._db if self._db is not None else self._connect()
            return fn(db)

    def _connect(self) -> sqlite3.Connection:
        import sqlite3

        db = sqlite3.connect(
            self.path,
            timeout=self.busy_timeout,
            isolation_level=None,  # we issue BEGIN/COMMIT ourselves
            check_same_thread=False,  # only ever used by the worker thread, under the lock
        )
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute(f"PRAGMA synchronous = {self.synchronous}")
            db.execute("PRAGMA foreign_keys = ON")
            self._migrate(db)
        except BaseException:
            db.close()
            raise
        self._db = db
        return db

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        migrations = _migrations.MIGRATIONS
        _migrations.check_order(migrations)
        with _transaction(db):
            db.execute(
                "CREATE TABLE IF NOT EXISTS a2a_schema_migrations ("
                " version INTEGER NOT NULL PRIMARY KEY,"
                " name TEXT NOT NULL,"
                " applied_at TEXT NOT NULL)"
            )
            applied = {row[0] for row in db.execute("SELECT version FROM a2a_schema_migrations")}
            for migration in _migrations.pending(applied, migrations):
                for statement in migration.sqlite:
                    db.execute(statement)
                db.execute(
                    "INSERT INTO a2a_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, datetime.now(UTC).isoformat()),
                )

    async def open(self) -> Self:
        """Open the database and migrate its schema now (otherwise done on first use)."""
        await self._run(lambda db: None)
        return self

    async def aclose(self) -> None:
        """Close the connection and stop the worker thread; idempotent."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close)
        self._executor.shutdown(wait=True)

    def _close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- tasks ---------------------------------------------------------------------------

    async def _fetch_task(self, read: TaskRead) -> FetchedTask | None:
        task_id = read.task_id

        def get(db: sqlite3.Connection) -> FetchedTask | None:
            with _transaction(db, write=False):  # the row and its messages from one snapshot
                row = db.execute(
                    "SELECT task, version, last_seq, history_count, artifact_count, context_id,"
                    " key, created_at FROM a2a_tasks WHERE id = ? AND scope = ?",
                    (task_id, read.scope),
                ).fetchone()
                if row is None:
                    return None
                head, version, last_seq, count, artifact_count, context_id, task_key, at = row
                # A key is max + 1: the key of a deleted newest row can come back.
                incarnation = (task_key, at)
                artifacts: builtins.list[bytes | str] | None
                artifacts = None if artifact_count is None else []
                if artifact_count and read.artifacts and version != read.artifacts_at:
                    artifacts = self._artifacts(db, task_key)
                first = read.first_message(count)
                head = own_head(head, task_id, column_value(context_id))
                if not count or first >= count:
                    return head, version, last_seq, count, [], artifacts, incarnation
                messages = db.execute(
                    "SELECT message FROM a2a_task_messages WHERE task_key = ? AND pos >= ?"
                    " AND pos < ? ORDER BY pos",
                    (task_key, first, count),
                ).fetchall()
            suffix = row_suffix(task_id, column_value(context_id))
            history = [own_message(m[0], suffix) for m in messages]
            return head, version, last_seq, count, history, artifacts, incarnation

        return await self._run(get)

    async def _select_message(
        self, task_id: str, message_id: str
    ) -> tuple[bytes | str, str | None] | None:
        def select(db: sqlite3.Connection) -> tuple[bytes | str, str | None] | None:
            row = db.execute(
                "SELECT m.message, t.context_id FROM a2a_tasks t JOIN a2a_task_messages m"
                " ON m.task_key = t.key WHERE t.id = ? AND m.message_id = ? LIMIT 1",
                (task_id, column_text(message_id)),
            ).fetchone()
            return None if row is None else (row[0], row[1])

        return await self._run(select)

    @staticmethod
    def _artifacts(db: sqlite3.Connection, task_key: int) -> builtins.list[bytes | str]:
        return whole_artifacts(
            row[0]
            for row in db.execute(
                "SELECT artifact FROM a2a_task_artifacts WHERE task_key = ? ORDER BY pos, piece",
                (task_key,),
            )
        )

    @staticmethod
    def _append_messages(
        db: sqlite3.Connection, task_key: int, messages: Sequence[MessageRow], at: int
    ) -> None:
        db.executemany(
            "INSERT INTO a2a_task_messages (task_key, pos, message_id, message)"
            " VALUES (?, ?, ?, ?)",
            [(task_key, at + i, key, row.decode()) for i, (key, _, row) in enumerate(messages)],
        )

    @staticmethod
    def _known(db: sqlite3.Connection, task_key: int) -> Callable[[builtins.list[str]], set[str]]:
        def known(ids: builtins.list[str]) -> set[str]:
            found: set[str] = set()
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                found.update(
                    row[0]
                    for row in db.execute(
                        "SELECT message_id FROM a2a_task_messages"
                        f" WHERE task_key = ? AND message_id IN ({marks})",
                        (task_key, *chunk),
                    )
                )
            return found

        return known

    async def _insert_task(self, new: NewTask) -> Incarnation:
        task, scope = new.task, new.scope
        data = new.snapshot.decode()
        logged = None if new.event is None else new.event.decode()
        context_id, state, key, terminal = task_columns(task)
        limit = self.max_active_tasks_per_owner
        marks = ", ".join("?" * len(ACTIVE_KEYS))
        lease, started_by = new.lease, new.started_by
        # The task a retry of its first message started is found by the statement that
        # looks for the id (the unique index on (scope, started_by)): no statement more.
        taken = (
            "SELECT version, id FROM a2a_tasks WHERE id = ?"
            if started_by is None
            else "SELECT version, id FROM a2a_tasks WHERE id = ? OR"
            " (scope = ? AND started_by = ?) ORDER BY id = ? DESC LIMIT 1"
        )
        found = (task.id,) if started_by is None else (task.id, scope, started_by, task.id)
        # The column only when set: a task without one is inserted as before migration 13.
        started_column, started_value = (
            (", started_by", ", ?") if started_by is not None else ("", "")
        )
        started = () if started_by is None else (started_by,)

        def create(db: sqlite3.Connection) -> Incarnation:
            now = time.time()
            with _transaction(db):
                row = db.execute(taken, found).fetchone()
                if row is not None and row[1] == task.id:
                    raise ConcurrentModificationError(task.id, 0, row[0])
                if row is not None:
                    raise DuplicateMessageError.started(row[1], task)
                if limit is not None and not terminal:
                    (active,) = db.execute(
                        "SELECT coalesce(sum(n), 0) FROM a2a_task_counts"
                        f" WHERE scope = ? AND dim = 'state' AND key IN ({marks})",
                        (scope, *ACTIVE_KEYS),
                    ).fetchone()
                    if active >= limit:
                        raise ActiveTaskLimitError.of(limit)
                (task_key,) = db.execute(
                    "INSERT INTO a2a_tasks (id, scope, context_id, state, status_key, version,"
                    " last_seq, terminal_at, created_at, updated_at, task, history_count,"
                    " artifact_count, lease_owner, lease_expires, lease_epoch, key"
                    + started_column
                    + ") VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                    " (SELECT coalesce(max(key), 0) + 1 FROM a2a_tasks)"
                    + started_value
                    + ") RETURNING key",
                    (
                        task.id,
                        scope,
                        context_id,
                        state,
                        key,
                        0 if logged is None else 1,
                        now if terminal else None,
                        now,
                        now,
                        data,
                        len(new.messages),
                        len(new.artifacts),
                        *(
                            (None, None, 0)
                            if lease is None
                            else (lease[0], now + lease[1], FIRST_EPOCH)
                        ),
                        *started,
                    ),
                ).fetchone()
                self._append_messages(db, task_key, new.messages, 0)
                self._write_artifacts(db, task_key, new.artifact_writes())
                if logged is not None:
                    db.execute(
                        "INSERT INTO a2a_task_events (task_key, seq, event) VALUES (?, 1, ?)",
                        (task_key, logged),
                    )
            return task_key, now

        return await self._run(create)

    @staticmethod
    def _context_moved(
        db: sqlite3.Connection, task_id: str, task_key: int, old: str | None
    ) -> None:
        """Rows that leave out the task's context id get the ``old`` one back (a rare
        write that changes the context; the engine never does)."""
        for seq, data in db.execute(
            "SELECT seq, event FROM a2a_task_events WHERE task_key = ?", (task_key,)
        ).fetchall():
            whole = with_context(data, old)
            if whole is not None:
                db.execute(
                    "UPDATE a2a_task_events SET event = ? WHERE task_key = ? AND seq = ?",
                    (whole.decode(), task_key, seq),
                )
        messages = db.execute(
            "SELECT pos, message FROM a2a_task_messages WHERE task_key = ?", (task_key,)
        ).fetchall()
        db.executemany(
            "UPDATE a2a_task_messages SET message = ? WHERE task_key = ? AND pos = ?",
            [(message, task_key, pos) for pos, message in whole_messages(messages, task_id, old)],
        )

    @staticmethod
    def _write_artifacts(
        db: sqlite3.Connection, task_key: int, writes: Sequence[ArtifactWrite]
    ) -> None:
        db.executemany(
            "INSERT INTO a2a_task_artifacts (task_key, pos, piece, artifact, ref_seq)"
            " VALUES (?, ?, 0, ?, ?) ON CONFLICT (task_key, pos, piece) DO UPDATE SET"
            " artifact = excluded.artifact, ref_seq = excluded.ref_seq"
            " WHERE artifact IS NOT excluded.artifact OR ref_seq IS NOT excluded.ref_seq",
            [(task_key, pos, data.decode(), ref) for pos, data, ref in writes],
        )

    @staticmethod
    def _append_parts(
        db: sqlite3.Connection,
        task_key: int,
        appends: Mapping[int, ArtifactAppend],
        referenced: Mapping[int, object],
    ) -> None:
        """Add the appended parts as pieces (see ``_pieces``); piece 0 loses its
        ``ref_seq`` (its event got the artifact back) and takes a new head."""
        for pos, (parts, head) in appends.items():
            last = db.execute(
                "SELECT piece, artifact FROM a2a_task_artifacts WHERE task_key = ? AND pos = ?"
                " ORDER BY piece DESC LIMIT 1",
                (task_key, pos),
            ).fetchone()
            piece, data = next_piece(last, parts)
            db.execute(
                "INSERT INTO a2a_task_artifacts (task_key, pos, piece, artifact)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (task_key, pos, piece) DO UPDATE SET"
                " artifact = excluded.artifact",
                (task_key, pos, piece, data.decode()),
            )
            if head is not None:
                (first,) = db.execute(
                    "SELECT artifact FROM a2a_task_artifacts"
                    " WHERE task_key = ? AND pos = ? AND piece = 0",
                    (task_key, pos),
                ).fetchone()
                db.execute(
                    "UPDATE a2a_task_artifacts SET artifact = ?, ref_seq = NULL"
                    " WHERE task_key = ? AND pos = ? AND piece = 0",
                    (with_head(first, head).decode(), task_key, pos),
                )
            elif pos in referenced:
                db.execute(
                    "UPDATE a2a_task_artifacts SET ref_seq = NULL"
                    " WHERE task_key = ? AND pos = ? AND piece = 0",
                    (task_key, pos),
                )

    @staticmethod
    def _sync_artifacts(
        db: sqlite3.Connection,
        task: Task,
        task_key: int,
        rows: Mapping[int, bytes],
        full: bool,
        artifact_ref: int | None,
        seq: int,
        appends: Mapping[int, ArtifactAppend],
    ) -> None:
        """Write the artifact rows (``full``: and delete those of removed artifacts)
        and the appended parts, inlining the artifact into the events that referred to
        a row's old content."""
        where = "" if full else " AND pos IN (SELECT value FROM json_each(?))"
        referenced = {
            pos: (data, ref)
            for pos, data, ref in db.execute(
                "SELECT pos, artifact, ref_seq FROM a2a_task_artifacts"
                f" WHERE task_key = ? AND piece = 0 AND ref_seq IS NOT NULL{where}",
                (task_key,) if full else (task_key, json.dumps([*rows, *appends])),
            )
        }
        writes, inline = artifact_writes(rows, referenced, artifact_ref, seq)
        for ref_seq, old in inline:
            logged = db.execute(
                "SELECT event FROM a2a_task_events WHERE task_key = ? AND seq = ?",
                (task_key, ref_seq),
            ).fetchone()
            if logged is not None:
                db.execute(
                    "UPDATE a2a_task_events SET event = ? WHERE task_key = ? AND seq = ?",
                    (inline_artifact(logged[0], old).decode(), task_key, ref_seq),
                )
        if full:
            db.execute(
                "DELETE FROM a2a_task_artifacts WHERE task_key = ? AND (pos >= ? OR piece > 0)",
                (task_key, len(task.artifacts)),
            )
        elif rows:
            db.execute(
                "DELETE FROM a2a_task_artifacts WHERE task_key = ? AND piece > 0"
                " AND pos IN (SELECT value FROM json_each(?))",
                (task_key, json.dumps(builtins.list(rows))),
            )
        SQLiteTaskStore._write_artifacts(db, task_key, writes)
        SQLiteTaskStore._append_parts(db, task_key, appends, referenced)

    async def _update_task(self, write: TaskWrite) -> tuple[int, int, Incarnation, Owed]:
        task = write.task
        data = write.snapshot.decode()
        context_id, state, key, terminal = task_columns(task)
        # The lease epoch was checked first, under the write lock: it is the run's own.
        released = ", lease_owner = NULL, lease_expires = NULL" if write.releases else ""

        def update(db: sqlite3.Connection) -> tuple[int, int, Incarnation, Owed]:
            now = time.time()
            with _transaction(db):
                row = db.execute(
                    "SELECT version, lease_epoch, history_count, last_seq, artifact_count, key,"
                    " context_id, created_at FROM a2a_tasks WHERE id = ?",
                    (task.id,),
                ).fetchone()
                write.check(row)
                _, _, history_count, last_seq, artifact_count, task_key, context, at = row
                stored = history_count or 0  # NULL: an older row, its history moves to rows now
                if context != context_id:
                    self._context_moved(db, task.id, task_key, column_value(context))
                known = self._known(db, task_key)
                messages = new_messages(
                    task, write.history_offset, stored, known, new_message=write.new_message
                )
                self._append_messages(db, task_key, messages, stored)
                full, rows, appends = write.artifact_rows(artifact_count)
                seq = last_seq + 1
                logged, artifact_ref = write.logged(messages, stored, rows)
                if rows or full or appends:
                    self._sync_artifacts(db, task, task_key, rows, full, artifact_ref, seq, appends)
                db.execute(
                    "UPDATE a2a_tasks SET task = ?, context_id = ?, state = ?, status_key = ?,"
                    " version = version + 1, last_seq = last_seq + ?,"
                    " terminal_at = COALESCE(terminal_at, ?), updated_at = ?, history_count = ?,"
                    f" artifact_count = ?{released} WHERE id = ?",
                    (
                        data,
                        context_id,
                        state,
                        key,
                        0 if logged is None else 1,
                        now if terminal else None,
                        now,
                        stored + len(messages),
                        len(task.artifacts),
                        task.id,
                    ),
                )
                if logged is not None:
                    db.execute(
                        "INSERT INTO a2a_task_events (task_key, seq, event) VALUES (?, ?, ?)",
                        (task_key, seq, logged.decode()),
                    )
                owed: Owed = None
                if logged is not None and write.owed:
                    # Owed in the transaction that logs it: no moment where the status
                    # is stored but its webhooks owed nothing (none: no row, no cost).
                    count = db.execute(
                        "UPDATE a2a_push_configs SET owed_seq = ?, claim_expires = ?"
                        " WHERE task_id = ?",
                        (seq, now + self.push_claim_ttl, task.id),
                    ).rowcount
                    owed = (seq, count)
            return stored, len(messages), (task_key, at), owed

        return await self._run(update)

    async def _fetch_page(self, query: ListSQL) -> tuple[int, builtins.list[PageRow]]:
        def select(db: sqlite3.Connection) -> tuple[int, builtins.list[PageRow]]:
            with _transaction(db, write=False):  # one snapshot for the count and the page
                count, count_params = query.count("a2a_tasks", "a2a_task_counts")
                (total,) = db.execute(count, count_params).fetchone()
                rows = db.execute(
                    "SELECT task, history_count, id, artifact_count, context_id, key FROM a2a_tasks"
                    f" WHERE {query.page_where} {ListSQL.ORDER} LIMIT ?",
                    [*query.page_params, query.limit],
                ).fetchall()
                wanted = [
                    (task_key, query.first_message(count))
                    for _, count, _, _, _, task_key in rows[: query.page_size]
                    if count and query.history_length != 0
                ]
                pieces: dict[int, builtins.list[str]] = {}
                with_artifacts = [row[5] for row in rows[: query.page_size] if row[3]]
                if not query.artifacts:
                    with_artifacts = []
                if with_artifacts:
                    marks = ", ".join("?" * len(with_artifacts))
                    for task_key, artifact in db.execute(
                        "SELECT task_key, artifact FROM a2a_task_artifacts"
                        f" WHERE task_key IN ({marks}) ORDER BY task_key, pos, piece",
                        with_artifacts,
                    ):
                        pieces.setdefault(task_key, []).append(artifact)
                artifacts = {key: whole_artifacts(found) for key, found in pieces.items()}
                messages: dict[int, builtins.list[str]] = {}
                if wanted:
                    where = " OR ".join(["(task_key = ? AND pos >= ?)"] * len(wanted))
                    for task_key, message in db.execute(
                        f"SELECT task_key, message FROM a2a_task_messages WHERE {where}"
                        " ORDER BY task_key, pos",
                        [value for pair in wanted for value in pair],
                    ):
                        messages.setdefault(task_key, []).append(message)
            return total, [
                (
                    own_head(head, task_id, column_value(context_id)),
                    count,
                    [
                        own_message(m, row_suffix(task_id, column_value(context_id)))
                        for m in messages.get(task_key, [])
                    ],
                    None if artifact_count is None else artifacts.get(task_key, []),
                )
                for head, count, task_id, artifact_count, context_id, task_key in rows
            ]

        return await self._run(select)

    # -- event log -----------------------------------------------------------------------

    async def append_event(self, task_id: str, event: StreamResponse) -> int:
        logged = encode_event(event).decode()
        if not self._ok(task_id):
            raise TaskNotFoundError.of(task_id)

        def append(db: sqlite3.Connection) -> int:
            with _transaction(db):
                row = db.execute(
                    "UPDATE a2a_tasks SET version = version + 1, last_seq = last_seq + 1,"
                    " updated_at = ? WHERE id = ? RETURNING key, last_seq",
                    (time.time(), task_id),
                ).fetchone()
                if row is None:
                    raise TaskNotFoundError.of(task_id)
                task_key, seq = row
                db.execute(
                    "INSERT INTO a2a_task_events (task_key, seq, event) VALUES (?, ?, ?)",
                    (task_key, seq, logged),
                )
            return int(seq)

        return await self._run(append)

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

        def select(db: sqlite3.Connection) -> builtins.list[LoggedEvent]:
            with _transaction(db, write=False):  # the events and the rows they refer to
                task = db.execute(
                    "SELECT key, context_id FROM a2a_tasks WHERE id = ?", (task_id,)
                ).fetchone()
                if task is None:
                    return []
                task_key, context_id = task
                rows = db.execute(
                    "SELECT seq, event FROM a2a_task_events WHERE task_key = ? AND seq > ?"
                    " AND seq <= ? ORDER BY seq",
                    (task_key, max(seq, 0), until),
                ).fetchall()
                referenced = referenced_rows(data for _, data in rows)
                messages: dict[int, bytes | str] = {}
                artifacts: dict[int, bytes | str] = {}
                if referenced is not None:
                    positions, keys = referenced
                    messages = dict(
                        db.execute(
                            "SELECT pos, message FROM a2a_task_messages WHERE task_key = ?"
                            " AND pos IN (SELECT value FROM json_each(?))",
                            (task_key, json.dumps(sorted(positions))),
                        ).fetchall()
                    )
                    artifacts = dict(
                        db.execute(
                            "SELECT pos, artifact FROM a2a_task_artifacts WHERE task_key = ?"
                            " AND piece = 0 AND pos IN (SELECT value FROM json_each(?))",
                            (task_key, json.dumps(sorted(keys))),
                        ).fetchall()
                    )
            return expand_events(rows, task_id, context_id, messages, artifacts)

        return await self._run(select)

    # -- push configs --------------------------------------------------------------------

    async def _upsert_config(self, task_id: str, config_id: str, data: bytes, dialect: str) -> None:
        def upsert(db: sqlite3.Connection) -> None:
            with _transaction(db):
                if (
                    db.execute("SELECT 1 FROM a2a_tasks WHERE id = ?", (task_id,)).fetchone()
                    is None
                ):
                    raise TaskNotFoundError.of(task_id)
                # Replacing a config keeps its place in the creation order.
                db.execute(
                    "INSERT INTO a2a_push_configs (task_id, config_id, position, config, dialect)"
                    " VALUES (?, ?, (SELECT coalesce(max(position), 0) + 1"
                    "  FROM a2a_push_configs WHERE task_id = ?), ?, ?)"
                    " ON CONFLICT (task_id, config_id) DO UPDATE SET config = excluded.config,"
                    " dialect = excluded.dialect",
                    (task_id, config_id, task_id, data.decode(), dialect),
                )

        await self._run(upsert)

    async def _select_config(self, task_id: str, config_id: str) -> tuple[str, str] | None:
        def select(db: sqlite3.Connection) -> tuple[str, str] | None:
            row: tuple[str, str] | None = db.execute(
                "SELECT config, dialect FROM a2a_push_configs WHERE task_id = ? AND config_id = ?",
                (task_id, config_id),
            ).fetchone()
            return row

        return await self._run(select)

    async def _select_configs(self, task_id: str) -> builtins.list[tuple[str, str]]:
        def select(db: sqlite3.Connection) -> builtins.list[tuple[str, str]]:
            rows: builtins.list[tuple[str, str]] = db.execute(
                "SELECT config, dialect FROM a2a_push_configs WHERE task_id = ? ORDER BY position",
                (task_id,),
            ).fetchall()
            return rows

        return await self._run(select)

    async def _delete_config(self, task_id: str, config_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM a2a_push_configs WHERE task_id = ? AND config_id = ?",
                (task_id, config_id),
            )

        await self._run(delete)

    # -- push notifications owed ------------------------------------------------------

    async def claim_owed_pushes(
        self, ttl: float, limit: int
    ) -> builtins.list[tuple[str, str, int]]:
        def claim(db: sqlite3.Connection) -> builtins.list[tuple[str, str, int]]:
            now = time.time()
            with _transaction(db):
                rows: builtins.list[tuple[str, str, int]] = db.execute(
                    "UPDATE a2a_push_configs SET claim_expires = ? WHERE rowid IN"
                    " (SELECT rowid FROM a2a_push_configs INDEXED BY a2a_push_owed"
                    "  WHERE owed_seq > delivered_seq AND claim_expires <= ?"
                    "  ORDER BY claim_expires LIMIT ?)"
                    " RETURNING task_id, config_id, owed_seq",
                    (now + ttl, now, limit),
                ).fetchall()
            return rows

        return await self._run(claim)

    async def push_delivered(self, task_id: str, config_id: str, seq: int) -> None:
        def delivered(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute(
                    "UPDATE a2a_push_configs SET delivered_seq = max(delivered_seq, ?)"
                    " WHERE task_id = ? AND config_id = ?",
                    (seq, task_id, config_id),
                )

        await self._run(delivered)

    # -- leases --------------------------------------------------------------------------

    async def acquire_lease(self, task_id: str, worker: str, ttl: float) -> int | None:
        """Take (or keep) the lease on a task's turn: the new lease epoch (the fencing
        token of this acquisition), ``None`` if another live worker holds it."""

        def acquire(db: sqlite3.Connection) -> int | None:
            now = time.time()
            with _transaction(db):
                row = db.execute(
                    "UPDATE a2a_tasks SET lease_owner = ?, lease_expires = ?,"
                    " lease_epoch = lease_epoch + 1 WHERE id = ?"
                    " AND (lease_expires IS NULL OR lease_owner = ? OR lease_expires < ?)"
                    " RETURNING lease_epoch",
                    (worker, now + ttl, task_id, worker, now),
                ).fetchone()
            return None if row is None else int(row[0])

        return await self._run(acquire)

    async def renew_leases(self, worker: str, ttl: float) -> builtins.set[str]:
        """Extend every lease ``worker`` holds; the ids of those tasks."""

        def renew(db: sqlite3.Connection) -> builtins.set[str]:
            with _transaction(db):
                rows = db.execute(
                    "UPDATE a2a_tasks SET lease_expires = ? WHERE lease_owner = ?"
                    " AND lease_expires IS NOT NULL RETURNING id",
                    (time.time() + ttl, worker),
                ).fetchall()
            return {row[0] for row in rows}

        return await self._run(renew)

    async def release_lease(self, task_id: str, worker: str, epoch: int | None = None) -> None:
        """Give up ``worker``'s lease on a task (nothing if it holds none; with
        ``epoch``, nothing if the lease was taken again since that acquisition)."""
        where = " WHERE id = ? AND lease_owner = ?" + (
            "" if epoch is None else " AND lease_epoch = ?"
        )
        params = (task_id, worker) if epoch is None else (task_id, worker, epoch)

        def release(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute(
                    "UPDATE a2a_tasks SET lease_owner = NULL, lease_expires = NULL" + where,
                    params,
                )

        await self._run(release)

    async def claim_expired_leases(
        self, worker: str, ttl: float, limit: int = 100
    ) -> builtins.list[tuple[str, str]]:
        """Take over up to ``limit`` running tasks whose worker is gone: ``(task_id, scope)``.

        A task is taken over when its lease lapsed, or when it is submitted or
        working with no lease and unchanged for ``ttl`` seconds (a crash right
        after it was created, or a database from before leases).
        """

        def claim(db: sqlite3.Connection) -> builtins.list[tuple[str, str]]:
            now = time.time()
            with _transaction(db):
                rows = db.execute(
                    "SELECT id, scope FROM a2a_tasks WHERE lease_expires < ?"
                    " UNION SELECT id, scope FROM a2a_tasks WHERE lease_expires IS NULL"
                    f" AND state IN {_migrations._RUNNING} AND updated_at < ?"
                    " LIMIT ?",
                    (now, now - ttl, limit),
                ).fetchall()
                db.executemany(
                    "UPDATE a2a_tasks SET lease_owner = ?, lease_expires = ?,"
                    " lease_epoch = lease_epoch + 1 WHERE id = ?",
                    [(worker, now + ttl, row[0]) for row in rows],
                )
            return [(row[0], row[1]) for row in rows]

        return await self._run(claim)

    # -- maintenance ---------------------------------------------------------------------

    def _terminal_deleter(self, seconds: float, batch_size: int) -> Callable[[], Awaitable[int]]:
        cutoff = time.time() - seconds  # one cutoff for every batch

        def delete(db: sqlite3.Connection) -> int:
            with _transaction(db):
                cursor = db.execute(
                    "DELETE FROM a2a_tasks WHERE id IN (SELECT id FROM a2a_tasks"
                    " WHERE terminal_at IS NOT NULL AND terminal_at <= ?"
                    " ORDER BY terminal_at LIMIT ?)",
                    (cutoff, batch_size),
                )
            return cursor.rowcount

        return lambda: self._run(delete)
