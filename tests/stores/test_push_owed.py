"""Push notifications owed across crashes: the SQL stores' bookkeeping.

A status event marks the task's configs owed it (``owed_seq``) in the
transaction that logs it, claimed by the writing process for
``push_claim_ttl``; ``claim_owed_pushes`` hands out what is owed and no one
claims, by a partial index (its cost does not grow with the configs stored);
``push_delivered`` ends it. Migration 11 adds the columns: rows of an older
database start owed nothing, and an older version refuses the database.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_models import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.server import InMemoryTaskStore, PushNotificationSender, TaskStore
from a2a_models.server._push import PushDispatcher
from a2a_models.stores import (
    PostgresTaskStore,
    SchemaVersionError,
    SQLiteTaskStore,
    _migrations,
)


def _task(task_id: str, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=task_id, context_id="ctx", status=TaskStatus(state=state))


def _status(task_id: str, state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id=task_id, context_id="ctx", status=TaskStatus(state=state))


async def _write(store: TaskStore, task_id: str, event: StreamResponse) -> int:
    """Log ``event`` on the task (its snapshot: the status it carries); its seq."""
    stored = await store.get(task_id, None)
    assert stored is not None
    task = stored.task
    if isinstance(event, TaskStatusUpdateEvent):
        task = _task(task_id, event.status.state)
    await store.update(task, stored.version, event=event)
    return stored.last_seq + 1


async def _configs(store: TaskStore, task_id: str, *ids: str) -> None:
    for config_id in ids:
        url = f"https://hooks.example/{config_id}"
        await store.set_push_config(task_id, TaskPushNotificationConfig(id=config_id, url=url))


@pytest.fixture(params=["sqlite", "postgres"])
async def two(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    """Two handles on one database (two processes)."""
    if request.param == "sqlite":
        a: Any = SQLiteTaskStore(tmp_path / "owed.db")
        b: Any = SQLiteTaskStore(tmp_path / "owed.db")
    else:
        dsn, schema = request.getfixturevalue("pg_dsn"), request.getfixturevalue("pg_schema")
        a, b = PostgresTaskStore(dsn, schema=schema), PostgresTaskStore(dsn, schema=schema)
    try:
        yield await a.open(), await b.open()
    finally:
        await a.aclose()
        await b.aclose()


async def test_a_status_is_owed_from_its_commit_until_its_delivery_ends(
    two: tuple[Any, Any],
) -> None:
    a, b = two
    await a.create(_task("t"), None, event=_task("t"))
    await a.create(_task("bare"), None, event=_task("bare"))
    await _configs(a, "t", "c1", "c2")
    assert await b.claim_owed_pushes(30, 10) == []  # configs start owed nothing

    a.push_claim_ttl = 30.0
    assert await _write(a, "t", _status("t", TaskState.WORKING)) == 2
    assert await b.claim_owed_pushes(30, 10) == []  # the writer's to deliver for 30 s
    artifact = TaskArtifactUpdateEvent(
        task_id="t",
        context_id="ctx",
        artifact=Artifact(artifact_id="a", parts=(TextPart(text="x"),)),
    )
    assert await _write(a, "t", artifact) == 3  # no status: owes nothing more
    assert await _write(a, "bare", _status("bare", TaskState.COMPLETED)) == 2  # no config

    a.push_claim_ttl = 0.0  # the writer died at once: its claim lapses now
    assert await _write(a, "t", _status("t", TaskState.COMPLETED)) == 4
    # The latest status only (2 is coalesced into 4); ttl 0: claimable again at once.
    assert sorted(await b.claim_owed_pushes(0, 10)) == [("t", "c1", 4), ("t", "c2", 4)]
    assert len(await b.claim_owed_pushes(0, 1)) == 1  # bounded
    await b.push_delivered("t", "c1", 4)
    await b.push_delivered("t", "c2", 2)  # an older delivery ending late: 4 still owed
    await b.push_delivered("t", "c1", 3)  # never moves back
    assert await a.claim_owed_pushes(30, 10) == [("t", "c2", 4)]
    assert await b.claim_owed_pushes(30, 10) == []  # a claimed it for 30 s
    await a.push_delivered("t", "c2", 4)
    await asyncio.sleep(0.01)
    assert await a.claim_owed_pushes(0, 10) == []
    await a.delete_push_config("t", "c2")
    assert await b.claim_owed_pushes(0, 10) == []


# --- the dispatcher --------------------------------------------------------------------


class _Hook(PushNotificationSender):
    """Fails while ``down``; records what it delivered."""

    def __init__(self) -> None:
        self.down = True
        self.sent: list[StreamResponse] = []

    async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
        if self.down:
            raise ConnectionError("503")
        self.sent.append(item)


async def test_a_failed_delivery_stays_owed_and_resume_sends_the_latest_status(
    tmp_path: Path,
) -> None:
    store = SQLiteTaskStore(tmp_path / "resume.db")
    await store.create(_task("t"), None, event=_task("t"))
    await _configs(store, "t", "c1")
    hook = _Hook()
    push = PushDispatcher(hook, store)
    store.push_claim_ttl = 0.0
    for state in (TaskState.WORKING, TaskState.COMPLETED):
        event = _status("t", state)
        push.dispatch("t", event, await _write(store, "t", event))
    await push.idle()
    assert hook.sent == []
    hook.down = False
    assert await push.resume(30) == 1
    await push.idle()
    assert [getattr(s, "status", None) for s in hook.sent] == [
        _status("t", TaskState.COMPLETED).status
    ]
    assert await push.resume(0) == 0  # delivered: owed nothing
    await store.aclose()
    assert PushDispatcher(hook, InMemoryTaskStore()).durable is False
    assert await PushDispatcher(hook, InMemoryTaskStore()).resume(30) == 0


# --- cost: the owed rows only ----------------------------------------------------------


def _fill_sqlite(path: Path, n: int) -> None:
    """``n`` configs owed nothing (delivered) and 3 owed, on task ``t``."""
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO a2a_push_configs (task_id, config_id, position, config, owed_seq,"
            " delivered_seq) VALUES ('t', ?, ?, ?, 5, 5)",
            [(f"done{i}", 10 + i, json.dumps({"url": "https://h.example/"})) for i in range(n)],
        )
        db.execute("UPDATE a2a_push_configs SET owed_seq = 6 WHERE config_id IN ('c1', 'c2', 'c3')")


async def _claim_steps(path: Path, n: int) -> int:
    """SQLite VM steps of one claim over ``n`` delivered configs and 3 owed."""
    async with SQLiteTaskStore(path) as store:
        await store.create(_task("t"), None, event=_task("t"))
        await _configs(store, "t", "c1", "c2", "c3")
    _fill_sqlite(path, n)
    async with SQLiteTaskStore(path) as store:
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0

        await store._run(lambda db: db.set_progress_handler(count, 1))
        claimed = await store.claim_owed_pushes(30, 100)
        await store._run(lambda db: db.set_progress_handler(None, 1))
    assert sorted(claimed) == [("t", "c1", 6), ("t", "c2", 6), ("t", "c3", 6)]
    return steps[0]


async def test_sqlite_resume_reads_the_owed_rows_only(tmp_path: Path) -> None:
    few = await _claim_steps(tmp_path / "few.db", 10)
    many = await _claim_steps(tmp_path / "many.db", 10_000)
    # A pass over the configs costs at least one step per row: 10,000 more.
    assert many <= few + 50, (few, many)


def _plan_rows(node: dict[str, Any]) -> Iterator[int]:
    yield int(node.get("Actual Rows", 0)) + int(node.get("Rows Removed by Filter", 0))
    for child in node.get("Plans", []):
        yield from _plan_rows(child)


async def test_postgres_resume_reads_the_owed_rows_only(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await store.create(_task("t"), None, event=_task("t"))
        await _configs(store, "t", "c1", "c2", "c3")
        statement = store._claim_owed
    q = f'"{pg_schema}"'
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(
            f"INSERT INTO {q}.a2a_push_configs (task_id, config_id, config, owed_seq,"
            " delivered_seq) SELECT 't', 'done' || i, '{}'::jsonb, 5, 5"
            " FROM generate_series(1, 10000) i"
        )
        conn.execute(f"UPDATE {q}.a2a_push_configs SET owed_seq = 6 WHERE config_id LIKE 'c_'")
        conn.execute(f"ANALYZE {q}.a2a_push_configs")
        row = conn.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) "
            + statement.replace("%s", "30", 1).replace("%s", "100")
        ).fetchone()
        conn.rollback()
    assert row is not None
    plan = row[0][0]["Plan"]
    # A scan of the table would read (or filter out) the 10,000 delivered rows.
    assert max(_plan_rows(plan)) <= 10, json.dumps(plan)[:2000]
    assert "a2a_push_owed" in json.dumps(plan)


# --- migration 11 ---------------------------------------------------------------------


async def test_sqlite_upgrade_to_11_owes_nothing_old_and_version_10_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v10.db"
    ten = _migrations.MIGRATIONS[:10]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        async with SQLiteTaskStore(path) as store:
            done = _task("t", TaskState.COMPLETED)
            await store.create(done, None, event=done)
            await _configs(store, "t", "c1")
    async with SQLiteTaskStore(path) as store:
        store.push_claim_ttl = 0.0
        assert await store.claim_owed_pushes(0, 10) == []  # an upgrade sends nothing old
        await _write(store, "t", Message.agent("late"))
        await store.create(_task("u"), None, event=_task("u"))
        await _configs(store, "u", "c1")
        await _write(store, "u", _status("u", TaskState.COMPLETED))
        assert await store.claim_owed_pushes(0, 10) == [("u", "c1", 2)]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        old = SQLiteTaskStore(path)
        with pytest.raises(SchemaVersionError, match="version 11"):
            await old.get("t", None)
        await old.aclose()


async def test_postgres_upgrade_to_11_owes_nothing_old_and_version_10_refuses_it(
    pg_dsn: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ten = _migrations.MIGRATIONS[:10]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
            done = _task("t", TaskState.COMPLETED)
            await store.create(done, None, event=done)
            await _configs(store, "t", "c1")
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        store.push_claim_ttl = 0.0
        assert await store.claim_owed_pushes(0, 10) == []
        await store.create(_task("u"), None, event=_task("u"))
        await _configs(store, "u", "c1")
        await _write(store, "u", _status("u", TaskState.COMPLETED))
        assert await store.claim_owed_pushes(0, 10) == [("u", "c1", 2)]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        old = PostgresTaskStore(pg_dsn, schema=pg_schema)
        with pytest.raises(SchemaVersionError, match="version 11"):
            await old.open()
        await old.aclose()
