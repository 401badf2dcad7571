"""Retention (batched deletes, the background loop, ``store prune``) and the per-owner
limit on active tasks, on every store."""

from __future__ import annotations

import asyncio
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from _procs import a2a_command

from a2a_models import Task, TaskState, TaskStatus
from a2a_models.server import ActiveTaskLimitError, InMemoryTaskStore, TaskStore
from a2a_models.stores import PostgresTaskStore, Retention, SQLiteTaskStore, parse_age

T0 = datetime(2025, 6, 1, tzinfo=UTC)


def _task(task_id: str, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state, timestamp=T0))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("7d", 7 * 86400),
        ("12h", 43200),
        ("30m", 1800),
        ("45s", 45),
        ("90", 90),
        ("1w", 604800),
        ("1d12h", 129600),
        ("0", 0),
        ("off", None),
        ("Never", None),
    ],
)
def test_parse_age(text: str, seconds: float | None) -> None:
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "7x", "d", "-1d", "7 d", "1.5.2h"])
def test_parse_age_refuses_nonsense(text: str) -> None:
    with pytest.raises(ValueError, match="not an age"):
        parse_age(text)


async def _sql_stores(tmp_path: Path, pg_dsn: str, pg_schema: str) -> list[TaskStore]:
    return [
        await SQLiteTaskStore(tmp_path / "r.db").open(),
        await PostgresTaskStore(pg_dsn, schema=pg_schema).open(),
    ]


async def test_delete_in_batches_removes_only_old_finished_tasks(
    tmp_path: Path, pg_dsn: str, pg_schema: str
) -> None:
    for store in await _sql_stores(tmp_path, pg_dsn, pg_schema):
        try:
            for i in range(11):
                await store.create(_task(f"done{i}", TaskState.COMPLETED), None)
            await store.create(_task("active"), None)
            assert await store.delete_terminal_older_than(3600, batch_size=3) == 0  # type: ignore[attr-defined]
            assert await store.delete_terminal_older_than(0, batch_size=3) == 11  # type: ignore[attr-defined]
            page = await store.list(None)
            assert [t.id for t in page.tasks] == ["active"] and page.total_size == 1
            with pytest.raises(ValueError, match="batch_size"):
                await store.delete_terminal_older_than(0, batch_size=0)  # type: ignore[attr-defined]
        finally:
            await store.aclose()  # type: ignore[attr-defined]


async def test_retention_runs_in_the_background_until_closed(tmp_path: Path) -> None:
    async with SQLiteTaskStore(tmp_path / "bg.db") as store:
        retention = Retention(store, 0, interval=0.05)
        retention.start()
        try:
            await store.create(_task("t1", TaskState.COMPLETED), None)
            for _ in range(100):
                if await store.get("t1", None) is None:
                    break
                await asyncio.sleep(0.02)
            assert await store.get("t1", None) is None
            assert retention.deleted == 1
        finally:
            await retention.aclose()
        await store.create(_task("t2", TaskState.COMPLETED), None)
        await asyncio.sleep(0.15)
        assert await store.get("t2", None) is not None  # stopped: no more passes
    with pytest.raises(TypeError, match="cannot delete"):
        Retention(InMemoryTaskStore(), 10)


def test_store_prune_command(tmp_path: Path) -> None:
    path = tmp_path / "prune.db"

    async def fill() -> None:
        async with SQLiteTaskStore(path) as store:
            for i in range(4):
                await store.create(_task(f"t{i}", TaskState.FAILED), None)
            await store.create(_task("live"), None)

    asyncio.run(fill())
    cmd = a2a_command()
    kept = subprocess.run(
        [*cmd, "store", "prune", f"sqlite:///{path}", "--older-than", "7d"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (kept.returncode, kept.stdout) == (0, "deleted 0 finished tasks older than 7d\n")
    done = subprocess.run(
        [*cmd, "store", "prune", f"sqlite:///{path}", "--older-than", "0s"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "deleted 4 finished tasks older than 0s\n"), (
        done.stderr
    )
    bad = subprocess.run(
        [*cmd, "store", "prune", f"sqlite:///{path}", "--older-than", "soon"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "not an age" in bad.stderr
    missing = tmp_path / "no-such-folder" / "prune.db"
    unopened = subprocess.run(
        [*cmd, "store", "prune", f"sqlite:///{missing}", "--older-than", "7d"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unopened.returncode == 1
    assert unopened.stderr == (
        f"a2a-models store prune: cannot open the task store sqlite:///{missing}: unable to "
        f"open database file (the folder {missing.parent} does not exist)\n"
    )

    async def left() -> list[str]:
        async with SQLiteTaskStore(path) as store:
            return [t.id for t in (await store.list(None)).tasks]

    assert asyncio.run(left()) == ["live"]


# --- fair share ---------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def limited(request: pytest.FixtureRequest, tmp_path: Path) -> object:
    kind = request.param
    if kind == "memory":
        yield InMemoryTaskStore(max_active_tasks_per_owner=2)
        return
    if kind == "sqlite":
        store: TaskStore = SQLiteTaskStore(tmp_path / "l.db", max_active_tasks_per_owner=2)
    else:
        from .conftest import PG_DSN

        schema = request.getfixturevalue("pg_schema")
        store = PostgresTaskStore(PG_DSN, schema=schema, max_active_tasks_per_owner=2)
    try:
        yield store
    finally:
        await store.aclose()  # type: ignore[attr-defined]


async def test_active_task_limit_per_owner(limited: TaskStore) -> None:
    store = limited
    await store.create(_task("a1"), "alice")
    a2 = await store.create(_task("a2", TaskState.INPUT_REQUIRED), "alice")
    with pytest.raises(ActiveTaskLimitError) as caught:
        await store.create(_task("a3"), "alice")
    error = caught.value
    assert (error.code, error.http_status, error.grpc_status) == (-32603, 429, "RESOURCE_EXHAUSTED")
    assert "2 active tasks" in error.message
    assert await store.get("a3", "alice") is None
    # Other owners and tenants have their own share; finished tasks do not count.
    await store.create(_task("b1"), "bob")
    await store.create(_task("a-other-tenant"), "alice", "t2")
    await store.create(_task("a-done", TaskState.REJECTED), "alice")
    # When one finishes, there is room again.
    await store.update(_task("a2", TaskState.COMPLETED), a2.version)
    await store.create(_task("a3"), "alice")


def test_limit_must_be_positive(tmp_path: Path) -> None:
    for make in (
        lambda: InMemoryTaskStore(max_active_tasks_per_owner=0),
        lambda: SQLiteTaskStore(tmp_path / "x.db", max_active_tasks_per_owner=0),
    ):
        with pytest.raises(ValueError, match="at least 1"):
            make()


async def test_postgres_limit_holds_under_concurrent_creates(pg_dsn: str, pg_schema: str) -> None:
    stores = [
        PostgresTaskStore(pg_dsn, schema=pg_schema, max_active_tasks_per_owner=5) for _ in range(3)
    ]
    try:
        await stores[0].open()

        async def create(i: int) -> bool:
            try:
                await stores[i % 3].create(_task(f"t{i}"), "alice")
            except ActiveTaskLimitError:
                return False
            return True

        results = await asyncio.gather(*(create(i) for i in range(30)))
        assert sum(results) == 5
        assert (await stores[0].list("alice")).total_size == 5
    finally:
        for store in stores:
            await store.aclose()
