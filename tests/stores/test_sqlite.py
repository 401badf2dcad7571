"""SQLiteTaskStore: durability, pragmas, migrations, several handles, maintenance."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from a2a_models import Message, Task, TaskPushNotificationConfig, TaskState, TaskStatus
from a2a_models.server import ConcurrentModificationError
from a2a_models.stores import Migration, SchemaVersionError, SQLiteTaskStore, _migrations


def _task(task_id: str, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state))


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


# --- durability -------------------------------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from a2a_models import Message, Task, TaskState, TaskStatus
    from a2a_models.stores import SQLiteTaskStore

    async def main() -> None:
        store = SQLiteTaskStore(sys.argv[1])
        task = Task(id="durable", context_id="c", status=TaskStatus(state=TaskState.SUBMITTED))
        await store.create(task, "alice", event=task)
        working = Task(id="durable", context_id="c", status=TaskStatus(state=TaskState.WORKING))
        await store.update(working, 1, event=Message.agent("on it"))
        print("written", flush=True)
        await asyncio.sleep(60)  # killed long before

    asyncio.run(main())
    """
)


async def test_a_returned_write_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "durable.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 20)
        assert line.strip() == "written"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    # Not checkpointed: the commits live in the WAL, which the reopen recovers.
    assert (tmp_path / "durable.db-wal").stat().st_size > 0
    async with SQLiteTaskStore(path) as store:
        stored = await store.get("durable", "alice")
        assert stored is not None
        assert (stored.version, stored.last_seq) == (2, 2)
        assert stored.task.status.state is TaskState.WORKING
        log = await store.events_after("durable", 0)
        assert [seq for seq, _ in log] == [1, 2]
        assert isinstance(log[1][1], Message) and log[1][1].text == "on it"


async def test_wal_and_synchronous_full_by_default(tmp_path: Path) -> None:
    async with SQLiteTaskStore(tmp_path / "a.db") as store:
        pragmas = await store._run(
            lambda db: (
                db.execute("PRAGMA journal_mode").fetchone()[0],
                db.execute("PRAGMA synchronous").fetchone()[0],
                db.execute("PRAGMA foreign_keys").fetchone()[0],
            )
        )
        assert pragmas == ("wal", 2, 1)  # synchronous 2 = FULL
    async with SQLiteTaskStore(tmp_path / "a.db", synchronous="NORMAL") as store:
        assert await store._run(lambda db: db.execute("PRAGMA synchronous").fetchone()[0]) == 1


def test_bad_options_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteTaskStore(tmp_path / "a.db", synchronous="OFF")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="busy_timeout"):
        SQLiteTaskStore(tmp_path / "a.db", busy_timeout=-1)


# --- migrations -------------------------------------------------------------------------------


async def test_a_fresh_database_gets_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    async with SQLiteTaskStore(path):
        pass
    tables = {row[0] for row in _rows(path, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"a2a_schema_migrations", "a2a_tasks", "a2a_task_events", "a2a_push_configs"} <= tables
    indexes = {row[0] for row in _rows(path, "SELECT name FROM sqlite_master WHERE type='index'")}
    assert {
        "a2a_tasks_list",
        "a2a_tasks_context",
        "a2a_tasks_state",
        "a2a_tasks_context_state",
    } <= indexes
    applied = _rows(path, "SELECT version, name, applied_at FROM a2a_schema_migrations")
    assert [(v, n) for v, n, _ in applied] == [(m.version, m.name) for m in _migrations.MIGRATIONS]


async def test_reopening_does_not_rerun_migrations(tmp_path: Path) -> None:
    path = tmp_path / "again.db"
    async with SQLiteTaskStore(path) as store:
        await store.create(_task("t1"), None)
    before = _rows(path, "SELECT * FROM a2a_schema_migrations")
    for _ in range(2):
        async with SQLiteTaskStore(path) as store:
            assert await store.get("t1", None) is not None
    assert _rows(path, "SELECT * FROM a2a_schema_migrations") == before


async def test_a_new_migration_is_applied_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "upgrade.db"
    async with SQLiteTaskStore(path) as store:
        await store.create(_task("t1"), None)
    nxt = len(_migrations.MIGRATIONS) + 1
    v2 = Migration(
        nxt,
        "add a note column",
        ("ALTER TABLE a2a_tasks ADD COLUMN note TEXT",),
        ("ALTER TABLE {schema}.a2a_tasks ADD COLUMN note text",),
    )
    monkeypatch.setattr(_migrations, "MIGRATIONS", (*_migrations.MIGRATIONS, v2))
    for _ in range(2):  # the second open would fail if v2 ran again (duplicate column)
        async with SQLiteTaskStore(path) as store:
            assert await store.get("t1", None) is not None
    versions = [r[0] for r in _rows(path, "SELECT version FROM a2a_schema_migrations")]
    assert versions == list(range(1, nxt + 1))
    assert "note" in {r[1] for r in _rows(path, "PRAGMA table_info(a2a_tasks)")}


async def test_a_failing_migration_leaves_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "broken.db"
    async with SQLiteTaskStore(path):
        pass
    last = len(_migrations.MIGRATIONS)
    bad = Migration(
        last + 1, "broken", ("CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL"), ("SELECT 1",)
    )
    monkeypatch.setattr(_migrations, "MIGRATIONS", (*_migrations.MIGRATIONS, bad))
    store = SQLiteTaskStore(path)
    with pytest.raises(sqlite3.OperationalError):
        await store.open()
    await store.aclose()
    versions = [r[0] for r in _rows(path, "SELECT version FROM a2a_schema_migrations")]
    assert versions == list(range(1, last + 1))
    assert _rows(path, "SELECT name FROM sqlite_master WHERE name = 'half_done'") == []


async def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    async with SQLiteTaskStore(path):
        pass
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO a2a_schema_migrations VALUES (99, 'future', 'later')")
    store = SQLiteTaskStore(path)
    with pytest.raises(SchemaVersionError, match="version 99"):
        await store.get("t1", None)
    await store.aclose()


# --- several handles on one file --------------------------------------------------------------


async def test_two_handles_share_the_file_and_its_versions(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with SQLiteTaskStore(path) as one, SQLiteTaskStore(path) as two:
        await one.create(_task("t1"), None, event=_task("t1"))
        got = await two.get("t1", None)
        assert got is not None and got.version == 1
        results = await asyncio.gather(
            one.update(_task("t1", TaskState.COMPLETED), 1, event=Message.agent("one")),
            two.update(_task("t1", TaskState.FAILED), 1, event=Message.agent("two")),
            return_exceptions=True,
        )
        assert sorted(type(r).__name__ for r in results) == ["ConcurrentModificationError", "int"]
        log = await two.events_after("t1", 0)
        assert [seq for seq, _ in log] == [1, 2]
        with pytest.raises(ConcurrentModificationError):
            await two.create(_task("t1"), None)


async def test_in_memory_database(tmp_path: Path) -> None:
    async with SQLiteTaskStore(":memory:") as store:
        await store.create(_task("t1"), None)
        assert await store.get("t1", None) is not None


# --- maintenance and lifecycle ----------------------------------------------------------------


async def test_delete_terminal_older_than(tmp_path: Path) -> None:
    async with SQLiteTaskStore(tmp_path / "old.db") as store:
        await store.create(_task("done", TaskState.COMPLETED), None, event=_task("done"))
        await store.set_push_config("done", TaskPushNotificationConfig(url="http://h", id="p"))
        await store.create(_task("active"), None)
        await store.create(_task("later"), None)
        await store.update(_task("later", TaskState.FAILED), 1)
        assert await store.delete_terminal_older_than(3600) == 0
        assert await store.delete_terminal_older_than(0) == 2
        assert await store.get("done", None) is None
        assert await store.events_after("done", 0) == []
        assert await store.get_push_config("done", "p") is None
        assert [t.id for t in (await store.list(None)).tasks] == ["active"]
        with pytest.raises(ValueError, match="negative"):
            await store.delete_terminal_older_than(-1)


async def test_a_closed_store_refuses_work(tmp_path: Path) -> None:
    store = SQLiteTaskStore(tmp_path / "closed.db")
    await store.create(_task("t1"), None)
    await store.aclose()
    await store.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("t1", None)


# --- task counts ------------------------------------------------------------------------------


async def test_a_task_write_does_not_go_over_the_callers_count_rows(tmp_path: Path) -> None:
    """A caller has a count row per (state, context); a write must not scan them all
    (before migration 10 the triggers deleted emptied rows by scanning the caller's)."""
    store = SQLiteTaskStore(tmp_path / "counts.db")
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    async def writes(first: int) -> int:
        """SQLite VM steps (in hundreds) of 10 tasks created and completed."""
        await store._run(lambda db: db.set_progress_handler(step, 100))
        steps[0] = 0
        for i in range(first, first + 10):
            created = await store.create(
                Task(id=f"t{i}", context_id=f"c{i}", status=TaskStatus(state=TaskState.WORKING)),
                None,
            )
            done = TaskStatus(state=TaskState.COMPLETED)
            await store.update(Task(id=f"t{i}", context_id=f"c{i}", status=done), created.version)
        await store._run(lambda db: db.set_progress_handler(None, 0))
        return steps[0]

    async with store:
        few = await writes(0)
        for i in range(10, 2_000):  # each in a context of its own: a count row each
            done = TaskStatus(state=TaskState.COMPLETED)
            await store.create(Task(id=f"t{i}", context_id=f"c{i}", status=done), None)
        many = await writes(2_000)
        assert many <= few * 1.5, (few, many)
        page = await store.list(None, context_id="c5")
        assert page.total_size == 1 and page.tasks[0].status.state is TaskState.COMPLETED
    rows = _rows(tmp_path / "counts.db", "SELECT dim, count(*) FROM a2a_task_counts GROUP BY dim")
    zero = _rows(tmp_path / "counts.db", "SELECT count(*) FROM a2a_task_counts WHERE n = 0")
    assert zero == [(0,)]  # emptied rows are deleted
    assert dict(rows) == {"all": 1, "state": 1, "cs": 2_010}  # type: ignore[comparison-overlap]
