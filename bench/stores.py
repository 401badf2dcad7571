"""Store benchmark: costs as conversations and task counts grow, and disk per task,
this project's stores side by side with the official SDK's ``DatabaseTaskStore``.

Run: ``PYTHONPATH=src .venv/bin/python bench/stores.py`` (needs PostgreSQL at
``A2A_BENCH_POSTGRES``, default ``postgresql://postgres@127.0.0.1:5432/test``;
``--no-postgres`` skips it). Every section prints its targets and the SDK's
figures measured in the same run:

* append: one more message on a task holding 1 and 5,000 messages, the way the
  engine writes an agent event (read without history, apply, write back what
  changed) -- the SDK's way is its TaskManager's: ``get`` the task, ``save`` it.
  Target: at 5,000 <= 1.5x at 1.
* get: GetTask(historyLength=10) on a task with 10 and with 5,000 messages.
  Target: at 5,000 <= 1.5x at 10.
* list: first page (50) of ListTasks at 1k and 100k tasks, no filter and each
  filter (context, status, timestamp), the two sizes measured in turns.
  Target: 100k <= 2x 1k, every store. The plan of PostgreSQL's page statement
  (EXPLAIN ANALYZE) must not read more rows in a sequential scan than the
  bounded counts allow.
* artifacts: one artifact-update event (replace an artifact) on a task holding
  1 and 200 artifacts. Target: <= 1.5x.
* chunks: one appended chunk (``append``, a short text part, as an LLM streams
  an artifact) on an artifact holding 1 and 5,000 parts, the way the engine
  writes it -- the SDK's way: ``get``, add the part, ``save``. Target: <= 1.5x
  for the database stores (the memory store's few microseconds are the copy
  of the parts tuple, some 2 ns a part; printed, no target).
* disk: bytes per typical task (a user message, a working update with a
  message, an artifact, completed) through the engine, vs the SDK store
  holding the same final tasks, over 1,000 tasks (so a table's first pages
  weigh little). Target: <= 1.5x the SDK.

Medians of repeated operations; the machine may be loaded (2 CPUs shared).
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from a2a_models import (
    Artifact,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    codec,
)
from a2a_models.server import InMemoryTaskStore, TaskStore, apply_event
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore

PG = os.environ.get("A2A_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
T0 = datetime(2025, 6, 1, tzinfo=UTC)
USER_TEXT = "Please summarise the attached quarterly figures and flag anything unusual. " * 2
AGENT_TEXT = "Looking at the figures now; revenue is up 4% and costs are flat. " * 3
ARTIFACT_TEXT = "Summary: revenue +4%, costs flat, one unusual item in travel expenses. " * 7
results: list[tuple[str, str, float, float, float, bool]] = []


def _msg(i: int, task_id: str, ctx: str = "ctx") -> Message:
    text = USER_TEXT if i % 2 == 0 else AGENT_TEXT
    m = (
        Message.user(text, task_id=task_id, context_id=ctx)
        if i % 2 == 0
        else Message.agent(text, task_id=task_id, context_id=ctx)
    )
    return attrs.evolve(m, message_id=f"{task_id}-m{i}")


def _task(
    task_id: str, n: int, *, ctx: str = "ctx", state: TaskState = TaskState.WORKING, minute: int = 0
) -> Task:
    return Task(
        id=task_id,
        context_id=ctx,
        status=TaskStatus(state=state, timestamp=T0 + timedelta(seconds=minute)),
        history=tuple(_msg(i, task_id, ctx) for i in range(n)),
    )


async def _median(op: Callable[[], Awaitable[Any]], repeats: int) -> float:
    return (await _medians([op], repeats))[0]


async def _medians(ops: list[Callable[[], Awaitable[Any]]], repeats: int) -> list[float]:
    """Median microseconds of each op, run in turns (so machine load hits all alike)."""
    for op in ops:
        for _ in range(3):
            await op()
    times: list[list[float]] = [[] for _ in ops]
    for _ in range(repeats):
        for op, sample in zip(ops, times, strict=True):
            t0 = time.perf_counter()
            await op()
            sample.append(time.perf_counter() - t0)
    return [statistics.median(sample) * 1e6 for sample in times]


def _row(
    section: str, name: str, small: float, big: float, target: float, unit: str = "us"
) -> None:
    ratio = big / small
    ok = ratio <= target
    results.append((section, name, small, big, ratio, ok))
    print(
        f"  {name:<34} {small:>10,.0f} {unit} {big:>10,.0f} {unit}  {ratio:>6.2f}x  "
        f"(target <= {target:g}x) {'ok' if ok else 'MISSED'}",
        flush=True,
    )


# =========================================================================== ours


async def _our_stores(tmp: str, pg: bool) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
    async def memory() -> TaskStore:
        return InMemoryTaskStore(max_tasks=None, terminal_ttl=None)

    async def sqlite() -> TaskStore:
        return await SQLiteTaskStore(Path(tmp) / f"ours-{uuid.uuid4().hex[:6]}.db").open()

    async def postgres() -> TaskStore:
        return await PostgresTaskStore(PG, schema=f"bench_{uuid.uuid4().hex[:10]}").open()

    out: list[tuple[str, Callable[[], Awaitable[Any]]]] = [("memory", memory), ("sqlite", sqlite)]
    if pg:
        out.append(("postgres", postgres))
    return out


async def _drop(store: Any) -> None:
    if isinstance(store, PostgresTaskStore):
        import psycopg

        await store.aclose()
        async with await psycopg.AsyncConnection.connect(PG, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{store.schema}" CASCADE')
    elif hasattr(store, "aclose"):
        await store.aclose()


async def our_ops(store: TaskStore, n: int) -> tuple[Callable[[], Awaitable[None]], ...]:
    """(append one message, GetTask(historyLength=10)) on a task created with n messages."""
    task_id = f"conv-{n}-{uuid.uuid4().hex[:6]}"
    await store.create(_task(task_id, n), None)
    counter = [n]

    async def append() -> None:
        event = _msg(counter[0], task_id)
        counter[0] += 1
        stored = await store.get(task_id, None, history_length=0)
        assert stored is not None
        task = apply_event(stored.task, event)
        await store.update(task, stored.version, history_offset=stored.history_offset)

    async def get10() -> None:
        stored = await store.get(task_id, None, history_length=10)
        assert stored is not None and len(stored.task.history) == 10

    return append, get10


# =========================================================================== the SDK


def _sdk_engine(url: str) -> Any:
    from sqlalchemy.ext.asyncio import create_async_engine

    return create_async_engine(url)


def _to_pb(task: Task) -> Any:
    import json

    from a2a.types import a2a_pb2 as pb
    from google.protobuf.json_format import ParseDict

    return ParseDict(json.loads(codec.encode(task, "1.0")), pb.Task(), ignore_unknown_fields=True)


async def sdk_store(kind: str, tmp: str) -> tuple[Any, Any, Callable[[], Awaitable[None]]]:
    from a2a.server.context import ServerCallContext
    from a2a.server.tasks.database_task_store import DatabaseTaskStore

    if kind == "sqlite":
        engine = _sdk_engine(f"sqlite+aiosqlite:///{tmp}/sdk-{uuid.uuid4().hex[:6]}.db")
        table = "tasks"
    else:
        engine = _sdk_engine(PG.replace("postgresql://", "postgresql+asyncpg://"))
        table = f"sdk_tasks_{uuid.uuid4().hex[:8]}"
    store = DatabaseTaskStore(engine, table_name=table)
    await store.initialize()

    async def close() -> None:
        if kind != "sqlite":
            from sqlalchemy import text

            async with engine.begin() as conn:
                await conn.execute(text(f'DROP TABLE IF EXISTS "{table}"'))
        await engine.dispose()

    return store, ServerCallContext(), close


async def sdk_ops(store: Any, ctx: Any, n: int) -> tuple[Callable[[], Awaitable[None]], ...]:
    from a2a.types import a2a_pb2 as pb

    task_id = f"conv-{n}-{uuid.uuid4().hex[:6]}"
    await store.save(_to_pb(_task(task_id, n)), ctx)
    counter = [n]
    one = _to_pb(_task(task_id, 1)).history[0]

    async def append() -> None:
        task = await store.get(task_id, ctx)
        message = pb.Message()
        message.CopyFrom(one)
        message.message_id = f"{task_id}-m{counter[0]}"
        counter[0] += 1
        task.history.append(message)
        await store.save(task, ctx)

    async def get10() -> None:
        task = await store.get(task_id, ctx)
        del task.history[:-10]  # what its handler does with historyLength=10

    return append, get10


async def _engine_write(store: TaskStore, task_id: str, event: TaskArtifactUpdateEvent) -> None:
    """What the engine does with an agent's event: read without history, apply, write back."""
    stored = await store.get(task_id, None, history_length=0)
    assert stored is not None
    await store.update(
        apply_event(stored.task, event),
        stored.version,
        event=event,
        history_offset=stored.history_offset,
    )


def _artifact(task_id: str, i: int, text: str = ARTIFACT_TEXT) -> Artifact:
    return Artifact(parts=[TextPart(text=text)], artifact_id=f"{task_id}-a{i}", name=f"part {i}")


async def our_artifact_op(store: TaskStore, n: int) -> Callable[[], Awaitable[None]]:
    """Replace artifact 0 (an artifact-update event) of a task holding n artifacts."""
    task_id = f"art-{n}-{uuid.uuid4().hex[:6]}"
    task = attrs.evolve(_task(task_id, 1), artifacts=tuple(_artifact(task_id, i) for i in range(n)))
    await store.create(task, None)
    flip = [0]

    async def replace() -> None:
        flip[0] ^= 1
        event = TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id="ctx",
            artifact=_artifact(task_id, 0, ARTIFACT_TEXT[flip[0] :]),
        )
        await _engine_write(store, task_id, event)

    return replace


async def sdk_artifact_op(store: Any, ctx: Any, n: int) -> Callable[[], Awaitable[None]]:
    from a2a.types import a2a_pb2 as pb

    task_id = f"art-{n}-{uuid.uuid4().hex[:6]}"
    task = attrs.evolve(_task(task_id, 1), artifacts=tuple(_artifact(task_id, i) for i in range(n)))
    await store.save(_to_pb(task), ctx)
    flip = [0]

    async def replace() -> None:
        flip[0] ^= 1
        stored = await store.get(task_id, ctx)
        stored.artifacts[0].parts[0].text = ARTIFACT_TEXT[flip[0] :]
        await store.save(stored, ctx)
        assert isinstance(stored, pb.Task)

    return replace


OpMaker = Callable[..., Awaitable[Callable[[], Awaitable[None]]]]


async def _small_vs_big(
    args: argparse.Namespace,
    tmp: str,
    section: str,
    what: str,
    big: int,
    ours: OpMaker,
    sdk: OpMaker,
    *,
    untargeted: tuple[str, ...] = (),
) -> None:
    """``what`` on a small (1) and a big task, ours in every store, then the SDK's."""
    for name, make in await _our_stores(tmp, not args.no_postgres):
        store = await make()
        try:
            one = await ours(store, 1)
            many = await ours(store, big)
            t1, tb = await _medians([one, many], args.repeats)
        finally:
            await _drop(store)
        if name in untargeted:
            print(f"  ours {name}: {what} {t1:,.0f} -> {tb:,.0f} us (no target)")
        else:
            _row(section, f"ours {name}: {what}", t1, tb, 1.5)
    for kind in ("sqlite", *(() if args.no_postgres else ("postgres",))):
        store, ctx, close = await sdk_store(kind, tmp)
        try:
            one = await sdk(store, ctx, 1)
            many = await sdk(store, ctx, big)
            s1, sb = await _medians([one, many], max(5, args.repeats // 6))
        finally:
            await close()
        print(f"  SDK {kind}: {what} {s1:,.0f} -> {sb:,.0f} us ({sb / s1:.1f}x)")


async def section_artifacts(args: argparse.Namespace, tmp: str) -> None:
    big = args.artifacts
    print(f"\n== one artifact-update event on a task with 1 vs {big:,} artifacts")
    await _small_vs_big(
        args, tmp, "artifacts", "artifact event", big, our_artifact_op, sdk_artifact_op
    )


CHUNK_TEXT = "a streamed token "


async def our_chunk_op(store: TaskStore, n: int) -> Callable[[], Awaitable[None]]:
    """Append one chunk to the artifact of a task whose artifact holds n parts."""
    task_id = f"chunks-{n}-{uuid.uuid4().hex[:6]}"
    parts = [TextPart(text=CHUNK_TEXT) for _ in range(n)]
    artifact = Artifact(parts=parts, artifact_id=f"{task_id}-a", name="report")
    await store.create(attrs.evolve(_task(task_id, 1), artifacts=(artifact,)), None)
    chunk = TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id="ctx",
        artifact=Artifact(parts=[TextPart(text=CHUNK_TEXT)], artifact_id=f"{task_id}-a"),
        append=True,
    )

    async def append() -> None:
        await _engine_write(store, task_id, chunk)

    return append


async def sdk_chunk_op(store: Any, ctx: Any, n: int) -> Callable[[], Awaitable[None]]:
    from a2a.types import a2a_pb2 as pb

    task_id = f"chunks-{n}-{uuid.uuid4().hex[:6]}"
    parts = [TextPart(text=CHUNK_TEXT) for _ in range(n)]
    artifact = Artifact(parts=parts, artifact_id=f"{task_id}-a", name="report")
    await store.save(_to_pb(attrs.evolve(_task(task_id, 1), artifacts=(artifact,))), ctx)

    async def append() -> None:
        stored = await store.get(task_id, ctx)
        stored.artifacts[0].parts.append(pb.Part(text=CHUNK_TEXT))
        await store.save(stored, ctx)

    return append


async def section_chunks(args: argparse.Namespace, tmp: str) -> None:
    big = args.parts
    print(f"\n== one appended chunk on an artifact of 1 vs {big:,} parts")
    # The memory store writes nothing: what is left is the model's copy of the parts tuple.
    await _small_vs_big(
        args,
        tmp,
        "chunks",
        "appended chunk",
        big,
        our_chunk_op,
        sdk_chunk_op,
        untargeted=("memory",),
    )


# =========================================================================== sections


async def section_conversation(args: argparse.Namespace, tmp: str) -> None:
    big = args.messages
    print(f"\n== append one message / GetTask(historyLength=10): 1 (10) vs {big:,} messages")
    for name, make in await _our_stores(tmp, not args.no_postgres):
        store = await make()
        try:
            a1, _ = await our_ops(store, 1)
            _, g10 = await our_ops(store, 10)
            ab, _ = await our_ops(store, big)
            _, gb = await our_ops(store, big)  # read a task the appends do not change
            t_a1, t_ab, t_g10, t_gb = await _medians([a1, ab, g10, gb], args.repeats)
        finally:
            await _drop(store)
        _row("append", f"ours {name}: append", t_a1, t_ab, 1.5)
        _row("get", f"ours {name}: GetTask(historyLength=10)", t_g10, t_gb, 1.5)
    for kind in ("sqlite", *(() if args.no_postgres else ("postgres",))):
        store, ctx, close = await sdk_store(kind, tmp)
        try:
            a1, _ = await sdk_ops(store, ctx, 1)
            _, g10 = await sdk_ops(store, ctx, 10)
            ab, gb = await sdk_ops(store, ctx, big)
            s_a1, s_ab, s_g10, s_gb = await _medians([a1, ab, g10, gb], max(5, args.repeats // 6))
        finally:
            await close()
        print(
            f"  SDK {kind}: append {s_a1:,.0f} -> {s_ab:,.0f} us ({s_ab / s_a1:.1f}x); "
            f"GetTask(10) {s_g10:,.0f} -> {s_gb:,.0f} us ({s_gb / s_g10:.1f}x)"
        )


FILTERS: list[tuple[str, dict[str, Any]]] = [
    ("no filter", {}),
    ("context", {"context_id": "ctx-7"}),
    ("status", {"status": TaskState.WORKING}),
    ("timestamp", {"status_timestamp_after": T0 + timedelta(seconds=5)}),
]


async def _fill(store: TaskStore, count: int) -> None:
    """``count`` tasks: 20 contexts, states cycling, status timestamps 1 s apart."""
    states = (TaskState.WORKING, TaskState.COMPLETED, TaskState.INPUT_REQUIRED, TaskState.FAILED)
    tasks = [
        _task(f"task-{i:07d}", 1, ctx=f"ctx-{i % 20}", state=states[i % 4], minute=i)
        for i in range(count)
    ]
    if isinstance(store, SQLiteTaskStore):
        await _bulk_sqlite(store, tasks)
    elif isinstance(store, PostgresTaskStore):
        await _bulk_postgres(store, tasks)
    else:
        for task in tasks:
            await store.create(task, None)


async def _bulk_sqlite(store: SQLiteTaskStore, tasks: list[Task]) -> None:
    from a2a_models.stores._common import encode_head, encode_message, scope_key, task_columns

    scope = scope_key(None, None)
    rows, messages = [], []
    for number, t in enumerate(tasks, start=1):
        ctx, state, key, terminal = task_columns(t)
        rows.append(
            (
                number,
                t.id,
                scope,
                ctx,
                state,
                key,
                1,
                0,
                1.0 if terminal else None,
                0.0,
                0.0,
                encode_head(t).decode(),
                len(t.history),
            )
        )
        messages += [
            (number, i, m.message_id, encode_message(m).decode()) for i, m in enumerate(t.history)
        ]

    def insert(db: Any) -> None:
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO a2a_tasks (key, id, scope, context_id, state, status_key, version,"
            " last_seq, terminal_at, created_at, updated_at, task, history_count, artifact_count)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
            rows,
        )
        db.executemany("INSERT INTO a2a_task_messages VALUES (?, ?, ?, ?)", messages)
        db.execute("COMMIT")

    await store._run(insert)


async def _bulk_postgres(store: PostgresTaskStore, tasks: list[Task]) -> None:
    from a2a_models.stores._common import encode_head, scope_key, task_columns
    from a2a_models.stores._migrations import POSTGRES_RECOUNT

    scope = scope_key(None, None)
    async with store._pool.connection() as conn:
        async with conn.transaction():
            # A bulk load: the counting triggers off, the counts computed once after
            # (as the migration does); one transaction updating one counter row
            # 100k times would measure PostgreSQL's row versions, not the store.
            await conn.execute("SET LOCAL session_replication_role = replica")
            async with conn.cursor() as cur:
                async with cur.copy(
                    f"COPY {store._tasks} (id, scope, context_id, state, status_key, version,"
                    " last_seq, task, history_count, artifact_count) FROM STDIN"
                ) as copy:
                    for t in tasks:
                        ctx, state, key, _ = task_columns(t)
                        await copy.write_row(
                            (t.id, scope, ctx, state, key, 1, 0, encode_head(t), 0, 0)
                        )
            for statement in POSTGRES_RECOUNT:
                await conn.execute(statement.replace("{schema}", store._q))
        await conn.execute(f"ANALYZE {store._tasks}")
        await conn.execute(f"ANALYZE {store._counts}")


async def _seq_scans(store: PostgresTaskStore, filters: dict[str, Any]) -> bool:
    """Whether the store's own page statement (page and total in one) scans a table."""
    from a2a_models.stores._common import ListSQL

    query = ListSQL(
        "%s",
        None,
        None,
        context_id=filters.get("context_id"),
        status=filters.get("status"),
        status_timestamp_after=filters.get("status_timestamp_after"),
        page_size=50,
        page_token=None,
    )
    sql, params = store._page_statement(query)
    async with store._pool.connection() as conn:
        # ANALYZE: only the plan nodes that run count (the full count behind the
        # timestamp filter's bounded ones runs only when both sides are large).
        cursor = await conn.execute("EXPLAIN ANALYZE " + sql, params)
        lines = [row[0] for row in await cursor.fetchall()]
    # A sequential scan that stops early (under a LIMIT: the bounded counts) reads
    # no more rows at 100k tasks than at 1k; one that reads more than the bounds
    # allow grows with the tasks. (a2a_task_counts holds a few rows per caller.)
    limit = 2 * (ListSQL.COUNT_BOUND + 1)
    scans = []
    for i, line in enumerate(lines):
        if "Seq Scan" not in line or "a2a_task_counts" in line or "never executed" in line:
            continue
        found = re.search(r"actual time=\S+ rows=(\d+) loops=(\d+)", line)
        read = int(found[1]) * int(found[2]) if found else limit + 1
        for detail in lines[i + 1 :]:
            if "->" in detail:
                break
            removed = re.search(r"Rows Removed by Filter: (\d+)", detail)
            if removed:
                read += int(removed[1])
        if read > limit:
            scans.append(f"{line.strip()} ({read:,} rows read)")
    if scans:
        print(f"    seq scan with {sorted(filters)}: {scans[0]}")
    return bool(scans)


async def section_listing(args: argparse.Namespace, tmp: str) -> None:
    small, big = 1000, args.tasks
    print(f"\n== ListTasks first page (50): {small:,} vs {big:,} tasks (measured in turns)")
    for name, make in await _our_stores(tmp, not args.no_postgres):
        stores: dict[int, TaskStore] = {}
        scans = False
        try:
            for count in (small, big):
                stores[count] = store = await make()
                t0 = time.perf_counter()
                await _fill(store, count)
                print(
                    f"  ({name}: {count:,} tasks stored in {time.perf_counter() - t0:.1f} s)",
                    flush=True,
                )
            for label, filters in FILTERS:

                def page(store: TaskStore, filters: dict[str, Any] = filters) -> Any:
                    async def run() -> None:
                        result = await store.list(None, page_size=50, **filters)
                        assert len(result.tasks) == 50 and result.total_size >= 50

                    return run

                t_small, t_big = await _medians(
                    [page(stores[small]), page(stores[big])], args.repeats
                )
                _row("list", f"ours {name}: {label}", t_small, t_big, 2.0)
                if isinstance(stores[big], PostgresTaskStore):
                    scans = await _seq_scans(stores[big], filters) or scans
        finally:
            for store in stores.values():
                await _drop(store)
        if name == "postgres":
            print(f"  postgres plans at {big:,}: {'SEQUENTIAL SCAN' if scans else 'no seq scan'}")
            results.append(("list", "postgres: no seq scan", 0, 0, 0, not scans))
    await sdk_listing(args, tmp, small, min(big, args.sdk_tasks))


async def sdk_listing(args: argparse.Namespace, tmp: str, small: int, big: int) -> None:
    from a2a.types import a2a_pb2 as pb
    from sqlalchemy.ext.asyncio import async_sessionmaker

    for kind in ("sqlite", *(() if args.no_postgres else ("postgres",))):
        timings: dict[int, float] = {}
        for count in (small, big):
            store, ctx, close = await sdk_store(kind, tmp)
            try:
                owner = store.owner_resolver(ctx)
                maker = async_sessionmaker(store.engine)
                models = [
                    store._to_orm(
                        _to_pb(_task(f"task-{i:07d}", 1, ctx=f"ctx-{i % 20}", minute=i)), owner
                    )
                    for i in range(count)
                ]
                async with maker.begin() as session:
                    session.add_all(models)

                async def page(store: Any = store, ctx: Any = ctx) -> None:
                    result = await store.list(pb.ListTasksRequest(page_size=50), ctx)
                    assert len(result.tasks) == 50

                timings[count] = await _median(page, max(5, args.repeats // 4))
            finally:
                await close()
        print(
            f"  SDK {kind}: first page {timings[small]:,.0f} us at {small:,}, "
            f"{timings[big]:,.0f} us at {big:,} ({timings[big] / timings[small]:.1f}x)"
        )


def _typical_events(task_id: str, ctx: str, at: datetime = T0) -> list[Any]:
    return [
        TaskStatusUpdateEvent(
            task_id=task_id,
            context_id=ctx,
            status=TaskStatus(
                state=TaskState.WORKING,
                timestamp=at,
                message=attrs.evolve(
                    Message.agent(AGENT_TEXT, task_id=task_id, context_id=ctx),
                    message_id=f"{task_id}-a1",
                ),
            ),
        ),
        TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id=ctx,
            artifact=Artifact(
                parts=[TextPart(text=ARTIFACT_TEXT)], artifact_id=f"{task_id}-art", name="summary"
            ),
        ),
        TaskStatusUpdateEvent(
            task_id=task_id,
            context_id=ctx,
            status=TaskStatus(state=TaskState.COMPLETED, timestamp=at + timedelta(seconds=1)),
        ),
    ]


async def section_disk(args: argparse.Namespace, tmp: str) -> None:
    n = args.disk_tasks
    print(f"\n== disk per typical task ({n} tasks through the engine's write path)")
    from a2a_models.server._writer import TaskWriter

    finals: list[Task] = []
    ours: dict[str, float] = {}
    for name, make in (await _our_stores(tmp, not args.no_postgres))[1:]:
        store = await make()
        try:
            from a2a_models.server import InMemoryEventBroker

            writer = TaskWriter(store, InMemoryEventBroker(), None, lambda: uuid.uuid4().hex)
            for i in range(n):
                task_id, ctx = str(uuid.uuid4()), str(uuid.uuid4())
                first = Task.submitted(
                    attrs.evolve(Message.user(USER_TEXT), message_id=str(uuid.uuid4())),
                    task_id=task_id,
                    context_id=ctx,
                )
                # Each task its own times, as real tasks have (the same time for
                # every task let both sides' timestamp indexes deduplicate it away).
                at = T0 + timedelta(seconds=2 * i)
                first = attrs.evolve(first, status=attrs.evolve(first.status, timestamp=at))
                await store.create(first, None, event=first)
                for event in _typical_events(task_id, ctx, at):
                    await writer.commit(task_id, None, None, event)
                if name == "sqlite" and i < n:
                    got = await store.get(task_id, None)
                    assert got is not None
                    finals.append(got.task)
            ours[name] = await _size(store) / n
        finally:
            await _drop(store)
    for kind in ("sqlite", *(() if args.no_postgres else ("postgres",))):
        store, ctx, close = await sdk_store(kind, tmp)
        try:
            for task in finals:
                await store.save(_to_pb(task), ctx)
            sdk = await _sdk_size(kind, store) / len(finals)
        finally:
            await close()
        _row("disk", f"{kind} bytes/task: SDK, ours", sdk, ours[kind], 1.5, unit="B ")


async def _size(store: Any) -> float:
    if isinstance(store, SQLiteTaskStore):

        def size(db: Any) -> float:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("VACUUM")
            return float(os.path.getsize(store.path))

        return await store._run(size)
    async with store._pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (store.schema,)
        )
        for (table,) in await cursor.fetchall():
            # Packed, as the SDK's table below (only this benchmark's own tables).
            await conn.execute(f'VACUUM FULL {store._q}."{table}"')
        cursor = await conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n"
            " ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
            (store.schema,),
        )
        row = await cursor.fetchone()
        return float(row[0])


async def _sdk_size(kind: str, store: Any) -> float:
    from sqlalchemy import text

    if kind == "sqlite":
        async with store.engine.begin() as conn:
            await conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
        async with store.engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text("VACUUM"))
        path = store.engine.url.database
        return float(os.path.getsize(path))
    table = store.task_model.__tablename__
    async with store.engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text(f'VACUUM FULL "{table}"'))
        size = await conn.execute(text(f"SELECT pg_total_relation_size('\"{table}\"')"))
        return float(size.scalar_one())


async def run(args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory(prefix="a2a-bench-stores-") as tmp:
        if "conversation" in args.sections:
            await section_conversation(args, tmp)
        if "artifacts" in args.sections:
            await section_artifacts(args, tmp)
        if "chunks" in args.sections:
            await section_chunks(args, tmp)
        if "list" in args.sections:
            await section_listing(args, tmp)
        if "disk" in args.sections:
            await section_disk(args, tmp)
    missed = [r for r in results if not r[5]]
    print(
        f"\n{len(results) - len(missed)} of {len(results)} targets met"
        + (": missed " + "; ".join(r[1] for r in missed) if missed else "")
    )
    return not missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--artifacts", type=int, default=200)
    parser.add_argument("--parts", type=int, default=5000)
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument(
        "--sdk-tasks", type=int, default=100_000, help="tasks for the SDK's listing (bulk inserted)"
    )
    parser.add_argument("--disk-tasks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--sections",
        nargs="+",
        default=["conversation", "artifacts", "chunks", "list", "disk"],
        choices=["conversation", "artifacts", "chunks", "list", "disk"],
    )
    args = parser.parse_args(argv)
    return 0 if asyncio.run(run(args)) else 1


if __name__ == "__main__":
    sys.exit(main())
