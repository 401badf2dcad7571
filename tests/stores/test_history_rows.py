"""History as rows: a write appends only new messages, a read takes only the newest
``history_length``; rows of the previous schema (history inside the snapshot) still read
and move to rows on their next write."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import attrs

from a2a_models import Message, Task, TaskState, TaskStatus
from a2a_models.server import TaskStore
from a2a_models.server._store import status_key
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore, _migrations
from a2a_models.stores._common import encode_task, scope_key

T0 = datetime(2025, 6, 1, tzinfo=UTC)


def _msg(i: int, task_id: str = "t") -> Message:
    return attrs.evolve(Message.user(f"m{i}", task_id=task_id, context_id="c"), message_id=f"id{i}")


def _task(n: int, task_id: str = "t") -> Task:
    return Task(
        id=task_id,
        context_id="c",
        status=TaskStatus(state=TaskState.WORKING, timestamp=T0),
        history=tuple(_msg(i, task_id) for i in range(n)),
    )


async def test_partial_reads_and_appends(store: TaskStore) -> None:
    await store.create(_task(5), None)
    stored = await store.get("t", None, history_length=2)
    assert stored is not None
    assert [m.message_id for m in stored.task.history] == ["id3", "id4"]
    assert stored.history_offset == 3
    none = await store.get("t", None, history_length=0)
    assert none is not None and none.task.history == () and none.history_offset == 5
    # A write computed from a read without history appends its new messages.
    task = attrs.evolve(none.task, history=(_msg(5), _msg(6)))
    version = await store.update(task, none.version, history_offset=none.history_offset)
    # A message already in the history (older than what was read) is not added again.
    again = await store.get("t", None, history_length=1)
    assert again is not None and again.history_offset == 6
    task = attrs.evolve(again.task, history=(*again.task.history, _msg(1), _msg(7)))
    await store.update(task, version, history_offset=again.history_offset)
    full = await store.get("t", None)
    assert full is not None and full.history_offset == 0
    assert [m.message_id for m in full.task.history] == [f"id{i}" for i in range(8)]
    page = await store.list(None, history_length=3)
    assert [m.message_id for m in page.tasks[0].history] == ["id5", "id6", "id7"]
    page = await store.list(None, history_length=0)
    assert page.tasks[0].history == ()
    assert len((await store.list(None)).tasks[0].history) == 8


async def test_a_full_rewrite_keeps_the_history(store: TaskStore) -> None:
    await store.create(_task(3), None)
    stored = await store.get("t", None)
    assert stored is not None
    changed = attrs.evolve(stored.task, status=TaskStatus(state=TaskState.COMPLETED, timestamp=T0))
    await store.update(changed, stored.version)
    got = await store.get("t", None)
    assert got is not None
    assert got.task == changed


def _legacy_rows(n: int) -> tuple[object, ...]:
    task = _task(n, "old")
    return (
        task.id,
        scope_key(None, None),
        "c",
        TaskState.WORKING.value,
        status_key(task),
        encode_task(task).decode(),
    )


async def _check_legacy(store: TaskStore) -> None:
    got = await store.get("old", None, history_length=2)
    assert got is not None
    assert len(got.task.history) == 4 and got.history_offset == 0  # read whole, as written
    # The next write moves its history to rows.
    none = await store.get("old", None, history_length=0)
    assert none is not None
    task = attrs.evolve(none.task, history=(*none.task.history, _msg(9, "old")))
    await store.update(task, none.version, history_offset=none.history_offset)
    tail = await store.get("old", None, history_length=2)
    assert tail is not None
    assert [m.message_id for m in tail.task.history] == ["id3", "id9"]
    assert tail.history_offset == 3
    full = await store.get("old", None)
    assert full is not None
    assert [m.message_id for m in full.task.history] == ["id0", "id1", "id2", "id3", "id9"]


async def test_sqlite_rows_of_schema_v2_keep_their_history(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE a2a_schema_migrations (version INTEGER NOT NULL PRIMARY KEY,"
        " name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for migration in _migrations.MIGRATIONS[:2]:
        for statement in migration.sqlite:
            db.execute(statement)
        db.execute(
            "INSERT INTO a2a_schema_migrations VALUES (?, ?, 'x')",
            (migration.version, migration.name),
        )
    db.execute(
        "INSERT INTO a2a_tasks (id, scope, context_id, state, status_key, version, last_seq,"
        " terminal_at, created_at, updated_at, task) VALUES (?, ?, ?, ?, ?, 1, 0, NULL, 0, 0, ?)",
        _legacy_rows(4),
    )
    db.commit()
    db.close()
    async with SQLiteTaskStore(path) as store:
        await _check_legacy(store)


async def test_postgres_rows_of_schema_v2_keep_their_history(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    q = f'"{pg_schema}"'
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {q}")
        conn.execute(
            f"CREATE TABLE {q}.a2a_schema_migrations (version integer NOT NULL PRIMARY KEY,"
            " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for migration in _migrations.MIGRATIONS[:2]:
            for statement in migration.postgres:
                conn.execute(statement.replace("{schema}", q))
            conn.execute(
                f"INSERT INTO {q}.a2a_schema_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
        conn.execute(
            f"INSERT INTO {q}.a2a_tasks (id, scope, context_id, state, status_key, version,"
            " last_seq, task) VALUES (%s, %s, %s, %s, %s, 1, 0, %s::jsonb)",
            _legacy_rows(4),
        )
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await _check_legacy(store)


async def test_a_cached_history_sees_what_another_handle_appended(tmp_path: Path) -> None:
    async with SQLiteTaskStore(tmp_path / "two.db") as a, SQLiteTaskStore(tmp_path / "two.db") as b:
        await a.create(_task(3), None)
        first = await a.get("t", None)  # read whole: remembered
        assert first is not None and len(first.task.history) == 3
        other = await b.get("t", None, history_length=0)
        assert other is not None
        task = attrs.evolve(other.task, history=(_msg(3), _msg(4)))
        await b.update(task, other.version, history_offset=other.history_offset)
        again = await a.get("t", None)
        assert again is not None
        assert [m.message_id for m in again.task.history] == [f"id{i}" for i in range(5)]
        assert again.version == first.version + 1
        # Another owner still sees nothing, cache or not.
        assert await a.get("t", "mallory") is None
