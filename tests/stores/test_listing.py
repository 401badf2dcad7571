"""ListTasks on every store: exact totals from counters / ordered indexes, checked
against a brute-force listing after random creates, state changes and deletions."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from a2a_models import Task, TaskState, TaskStatus
from a2a_models.errors import InvalidParamsError
from a2a_models.server import InMemoryTaskStore, TaskStore
from a2a_models.server._store import status_key
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore, _migrations
from a2a_models.stores._common import encode_task, scope_key

T0 = datetime(2025, 6, 1, tzinfo=UTC)
STATES = (TaskState.SUBMITTED, TaskState.WORKING, TaskState.INPUT_REQUIRED, TaskState.COMPLETED)
OWNERS = (None, "alice")
CONTEXTS = ("c1", "c2", "c3")


def _task(task_id: str, context: str, state: TaskState, minute: int | None) -> Task:
    ts = None if minute is None else T0 + timedelta(minutes=minute)
    return Task(id=task_id, context_id=context, status=TaskStatus(state=state, timestamp=ts))


async def _all_pages(
    store: TaskStore, owner: str | None, **filters: object
) -> tuple[list[str], set[int]]:
    ids: list[str] = []
    totals: set[int] = set()
    token = None
    while True:
        page = await store.list(owner, page_size=3, page_token=token, **filters)  # type: ignore[arg-type]
        ids += [t.id for t in page.tasks]
        totals.add(page.total_size)
        token = page.next_page_token
        if not token:
            return ids, totals


def _expected(
    model: dict[str, tuple[str | None, Task]], owner: str | None, **f: object
) -> list[str]:
    after = f.get("status_timestamp_after")
    rows = [
        t
        for o, t in model.values()
        if o == owner
        and (f.get("context_id") is None or t.context_id == f["context_id"])
        and (f.get("status") is None or t.status.state is f["status"])
        and (
            after is None or (t.status.timestamp is not None and t.status.timestamp >= after)  # type: ignore[operator]
        )
    ]
    rows.sort(key=lambda t: (-status_key(t), t.id))
    return [t.id for t in rows]


FILTERS: list[dict[str, object]] = [
    {},
    {"context_id": "c2"},
    {"status": TaskState.WORKING},
    {"context_id": "c1", "status": TaskState.COMPLETED},
    {"status_timestamp_after": T0 + timedelta(minutes=5)},
    {"context_id": "c3", "status_timestamp_after": T0 + timedelta(minutes=3)},
    {"context_id": "nope"},
]


async def test_random_changes_keep_every_listing_exact(store: TaskStore) -> None:
    rng = random.Random(7)
    model: dict[str, tuple[str | None, Task]] = {}
    versions: dict[str, int] = {}
    for step in range(120):
        if model and rng.random() < 0.45:
            task_id = rng.choice(sorted(model))
            owner, old = model[task_id]
            new = _task(task_id, old.context_id, rng.choice(STATES), rng.choice([None, *range(10)]))
            versions[task_id] = await store.update(new, versions[task_id])
            model[task_id] = (owner, new)
        else:
            task_id = f"t{step:03d}"
            owner = rng.choice(OWNERS)
            task = _task(
                task_id, rng.choice(CONTEXTS), rng.choice(STATES), rng.choice([None, *range(10)])
            )
            versions[task_id] = (await store.create(task, owner)).version
            model[task_id] = (owner, task)
        if step % 40 == 39:
            for owner in OWNERS:
                for filters in FILTERS:
                    ids, totals = await _all_pages(store, owner, **filters)
                    expected = _expected(model, owner, **filters)
                    assert ids == expected, filters
                    assert totals == {len(expected)}, filters


async def test_deleting_finished_tasks_keeps_totals_exact(
    tmp_path: Path, pg_dsn: str, pg_schema: str
) -> None:
    stores: list[TaskStore] = [
        SQLiteTaskStore(tmp_path / "d.db"),
        PostgresTaskStore(pg_dsn, schema=pg_schema),
    ]
    for store in stores:
        async with store:  # type: ignore[attr-defined]
            for i in range(10):
                state = TaskState.COMPLETED if i % 2 else TaskState.WORKING
                await store.create(_task(f"t{i}", "c1", state, i), "alice")
            assert (await store.list("alice")).total_size == 10
            assert await store.delete_terminal_older_than(0) == 5  # type: ignore[attr-defined]
            page = await store.list("alice")
            assert page.total_size == 5 == len(page.tasks)
            assert (await store.list("alice", status=TaskState.COMPLETED)).total_size == 0
            assert (await store.list("alice", context_id="c1")).total_size == 5


# --- a database written by schema version 1 gets its counts on migration --------------------


def _v1_rows() -> list[tuple[object, ...]]:
    rows = []
    for i in range(7):
        state = (TaskState.WORKING, TaskState.COMPLETED)[i % 2]
        task = _task(f"old{i}", f"c{i % 3}", state, i)
        scope = scope_key("alice" if i < 5 else None, None)
        rows.append(
            (
                task.id,
                scope,
                task.context_id,
                state.value,
                status_key(task),
                encode_task(task).decode(),
            )
        )
    return rows


async def test_sqlite_database_of_schema_v1_migrates_with_exact_counts(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE a2a_schema_migrations (version INTEGER NOT NULL PRIMARY KEY,"
        " name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for statement in _migrations.MIGRATIONS[0].sqlite:
        db.execute(statement)
    db.execute(
        "INSERT INTO a2a_schema_migrations VALUES (1, 'tasks, event log and push configs', 'x')"
    )
    for row in _v1_rows():
        db.execute(
            "INSERT INTO a2a_tasks (id, scope, context_id, state, status_key, version, last_seq,"
            " terminal_at, created_at, updated_at, task) VALUES (?, ?, ?, ?, ?, 1, 0, NULL, 0, 0, ?)",
            row,
        )
    db.commit()
    db.close()
    async with SQLiteTaskStore(path) as store:
        await _check_migrated(store)


async def test_postgres_schema_v1_migrates_with_exact_counts(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{pg_schema}"')
        conn.execute(
            f'CREATE TABLE "{pg_schema}".a2a_schema_migrations (version integer NOT NULL PRIMARY KEY,'
            " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for statement in _migrations.MIGRATIONS[0].postgres:
            conn.execute(statement.replace("{schema}", f'"{pg_schema}"'))
        conn.execute(
            f'INSERT INTO "{pg_schema}".a2a_schema_migrations (version, name) VALUES (1, %s)',
            ("tasks, event log and push configs",),
        )
        for row in _v1_rows():
            conn.execute(
                f'INSERT INTO "{pg_schema}".a2a_tasks (id, scope, context_id, state, status_key,'
                " version, last_seq, task) VALUES (%s, %s, %s, %s, %s, 1, 0, %s::jsonb)",
                row,
            )
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await _check_migrated(store)


async def _check_migrated(store: TaskStore) -> None:
    page = await store.list("alice")
    assert (page.total_size, len(page.tasks)) == (5, 5)
    assert (await store.list(None)).total_size == 2
    assert (await store.list("alice", status=TaskState.WORKING)).total_size == 3
    assert (await store.list("alice", context_id="c1")).total_size == 2
    assert (await store.list("alice", context_id="c1", status=TaskState.COMPLETED)).total_size == 1
    # And the counters follow later writes.
    await store.create(_task("new", "c1", TaskState.WORKING, 99), "alice")
    assert (await store.list("alice", context_id="c1")).total_size == 3


async def test_in_memory_eviction_leaves_the_index(tmp_path: Path) -> None:
    now = [0.0]
    store = InMemoryTaskStore(max_tasks=3, terminal_ttl=10, clock=lambda: now[0])
    for i in range(3):
        await store.create(_task(f"t{i}", "c1", TaskState.COMPLETED, i), None)
    await store.create(_task("t3", "c1", TaskState.WORKING, 3), None)  # evicts t0
    page = await store.list(None)
    assert ([t.id for t in page.tasks], page.total_size) == (["t3", "t2", "t1"], 3)
    now[0] = 11.0  # t1, t2 expire
    page = await store.list(None, context_id="c1")
    assert ([t.id for t in page.tasks], page.total_size) == (["t3"], 1)
    with pytest.raises(InvalidParamsError):
        await store.list(None, page_token="bogus")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_timestamp_totals_are_exact_whichever_side_is_counted(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small bounds so every branch (probe, bound, full count; after or before) is taken."""
    from a2a_models.stores._common import ListSQL

    monkeypatch.setattr(ListSQL, "COUNT_PROBE", 2)
    monkeypatch.setattr(ListSQL, "COUNT_BOUND", 5)
    if kind == "sqlite":
        store: SQLiteTaskStore | PostgresTaskStore = SQLiteTaskStore(tmp_path / "ts.db")
    else:
        store = PostgresTaskStore(
            request.getfixturevalue("pg_dsn"), schema=request.getfixturevalue("pg_schema")
        )
    async with store:
        tasks = [_task(f"t{i:02d}", "c1", STATES[i % 4], i) for i in range(20)]
        tasks.append(_task("none", "c1", TaskState.WORKING, None))
        for task in tasks:
            await store.create(task, None)
        for minute in range(-1, 22):
            after = T0 + timedelta(minutes=minute)
            page = await store.list(None, status_timestamp_after=after, page_size=1)
            expected = sum(1 for t in tasks if t.status.timestamp and t.status.timestamp >= after)
            assert page.total_size == expected, minute
            page = await store.list(
                None, status_timestamp_after=after, status=TaskState.WORKING, page_size=1
            )
            expected = sum(
                1
                for t in tasks
                if t.status.timestamp
                and t.status.timestamp >= after
                and t.status.state is TaskState.WORKING
            )
            assert page.total_size == expected, minute


# --- PostgreSQL: counter rows only for contexts with many tasks (migration 7) ---------------


async def _counter_rows(dsn: str, schema: str) -> tuple[dict[tuple[str, str], int], ...]:
    """The context rows of ``a2a_task_counts``, and what they should hold."""
    import psycopg

    q = f'"{schema}"'
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cursor = await conn.execute(
            f"SELECT dim, key, n FROM {q}.a2a_task_counts WHERE dim IN ('c', 'cs')"
        )
        stored = {(dim, key): n for dim, key, n in await cursor.fetchall()}
        cursor = await conn.execute(
            f"SELECT context_id, state, count(*) FROM {q}.a2a_tasks GROUP BY 1, 2"
        )
        truth: dict[tuple[str, str], int] = {}
        for context, state, n in await cursor.fetchall():
            truth[("c", context)] = truth.get(("c", context), 0) + n
            truth[("cs", f"{state.removeprefix('TASK_STATE_')} {context}")] = n
    # A marked context (row "c") has exact rows; any other has at most the mark.
    # (A context keeps its rows when it shrinks below the mark, until emptied.)
    marked = {k[1] for k in stored if k[0] == "c"}
    for dim, key in truth:
        if dim == "c" and key not in marked:
            assert truth[dim, key] <= _migrations.CONTEXT_COUNTED, key
    expected = {
        k: n
        for k, n in truth.items()
        if (k[0] == "c" and k[1] in marked) or (k[0] == "cs" and k[1].split(" ", 1)[1] in marked)
    }
    return stored, expected


async def test_postgres_counts_a_context_in_rows_only_past_the_mark(
    pg_dsn: str, pg_schema: str
) -> None:
    mark = _migrations.CONTEXT_COUNTED
    model: dict[str, Task] = {}
    versions: dict[str, int] = {}
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:

        async def check() -> None:
            stored, expected = await _counter_rows(pg_dsn, pg_schema)
            assert stored == expected
            for context in ("big", "small"):
                for state in (None, *STATES):
                    page = await store.list(None, context_id=context, status=state, page_size=1)
                    want = [
                        t
                        for t in model.values()
                        if t.context_id == context and state in (None, t.status.state)
                    ]
                    assert page.total_size == len(want), (context, state)

        async def create(i: int, context: str) -> None:
            task = _task(f"{context}{i:03d}", context, STATES[i % 4], i)
            versions[task.id] = (await store.create(task, None)).version
            model[task.id] = task

        for i in range(mark - 4):
            await create(i, "big")
        for i in range(3):
            await create(i, "small")
        await check()
        # Concurrent writers cross the mark together: the rows made are exact.
        await asyncio.gather(*(create(i, "big") for i in range(mark - 4, mark + 6)))
        stored, _ = await _counter_rows(pg_dsn, pg_schema)
        assert stored[("c", "big")] == mark + 6 and ("c", "small") not in stored
        await check()
        # State changes and deletions keep them exact, in both kinds of context.
        for task_id in sorted(model)[::3]:
            new = _task(task_id, model[task_id].context_id, TaskState.COMPLETED, 99)
            versions[task_id] = await store.update(new, versions[task_id])
            model[task_id] = new
        await check()
        deleted = await store.delete_terminal_older_than(0)
        assert deleted == sum(1 for t in model.values() if t.status.state is TaskState.COMPLETED)
        model = {k: t for k, t in model.items() if t.status.state is not TaskState.COMPLETED}
        await check()
        # Emptied, a context loses its rows.
        for task_id in [k for k, t in model.items() if t.context_id == "big"]:
            done = _task(task_id, "big", TaskState.COMPLETED, 100)
            versions[task_id] = await store.update(done, versions[task_id])
        await store.delete_terminal_older_than(0)
        model = {k: t for k, t in model.items() if t.context_id != "big"}
        stored, _ = await _counter_rows(pg_dsn, pg_schema)
        assert stored == {}
        await check()


# --- artifacts a listing drops are not read -------------------------------------------------


async def test_list_tasks_reads_artifacts_only_when_asked_for(store: TaskStore) -> None:
    """ListTasks leaves artifacts out unless includeArtifacts (spec): a database store
    then reads no artifact row (it read every listed task's, to have them dropped)."""
    from a2a_models import Artifact, ListTasksRequest, TextPart
    from a2a_models.server import RequestHandler

    from ._support import FuncAgent, make_card

    report = Artifact(parts=[TextPart(text="a long report " * 500)], artifact_id="r")
    for i in range(3):
        task = _task(f"t{i}", "c1", TaskState.COMPLETED, i)
        await store.create(Task(id=task.id, status=task.status, artifacts=(report,)), None)
    read: list[list[object]] = []
    fetch = getattr(store, "_fetch_page", None)
    if fetch is not None:

        async def counted(query: object) -> object:
            total, rows = await fetch(query)
            read.extend(list(row[3] or ()) for row in rows)
            return total, rows

        store._fetch_page = counted  # type: ignore[attr-defined]

    async def no_artifact_default() -> None:
        raise AssertionError("never called")

    handler = RequestHandler(FuncAgent(no_artifact_default), make_card(), store=store)  # type: ignore[arg-type]
    plain = await handler.on_list_tasks(ListTasksRequest())
    assert [t.artifacts for t in plain.tasks] == [(), (), ()]
    if fetch is not None:
        assert read == [[], [], []]
        read.clear()
    full = await handler.on_list_tasks(ListTasksRequest(include_artifacts=True))
    assert [t.artifacts for t in full.tasks] == [(report,)] * 3
    if fetch is not None:
        assert [len(found) for found in read] == [1, 1, 1]


async def test_a_store_written_before_include_artifacts_still_lists() -> None:
    """A store whose ``list`` does not take ``include_artifacts`` is not given it."""
    from a2a_models import ListTasksRequest
    from a2a_models.server import RequestHandler

    from ._support import FuncAgent, make_card

    class OlderStore(InMemoryTaskStore):
        async def list(  # type: ignore[override]
            self, owner: str | None, tenant: str | None = None, *, page_size: int = 50,
            page_token: str | None = None, context_id: str | None = None,
            status: TaskState | None = None, status_timestamp_after: datetime | None = None,
            history_length: int | None = None,
        ):  # fmt: skip
            return await super().list(
                owner, tenant, page_size=page_size, page_token=page_token,
                context_id=context_id, status=status,
                status_timestamp_after=status_timestamp_after, history_length=history_length,
            )  # fmt: skip

    async def never(context: object) -> None:
        raise AssertionError("never called")

    store = OlderStore()
    await store.create(_task("t", "c1", TaskState.COMPLETED, 1), None)
    handler = RequestHandler(FuncAgent(never), make_card(), store=store)  # type: ignore[arg-type]
    assert [t.id for t in (await handler.on_list_tasks(ListTasksRequest())).tasks] == ["t"]


def test_accepts_keyword_sees_through_a_wrapper() -> None:
    import functools

    from a2a_models.server._store import accepts_keyword

    def old(owner: str, *, page_size: int = 50) -> None: ...

    def new(owner: str, *, include_artifacts: bool = True) -> None: ...

    def forwarding(method):  # type: ignore[no-untyped-def]
        @functools.wraps(method)
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            return method(*args, **kwargs)

        return call

    assert not accepts_keyword(old, "include_artifacts")
    assert accepts_keyword(new, "include_artifacts")
    assert not accepts_keyword(forwarding(old), "include_artifacts")
    assert accepts_keyword(forwarding(new), "include_artifacts")
    assert accepts_keyword(lambda **kwargs: None, "include_artifacts")
