"""How each served operation's cost grows with the data, through ``a2a-models serve``.

Run: ``PYTHONPATH=src .venv/bin/python bench/serve_growth.py`` (``--stores sqlite`` to
skip PostgreSQL; ``--sizes 1000 10000 50000``, ``--history 10 100 1000``,
``--subscribers 1 10 100``, ``--repeats 40``). About five minutes per store.

For each store (SQLite, serve's default, and PostgreSQL at ``A2A_BENCH_POSTGRES``, in
a database of its own) and each number of tasks stored, the database is filled
directly (bulk rows: tasks in contexts of ten, a "probe" context of 200 tasks spread
over the whole time range, half of them ``input-required``), then the real CLI process
is started through ``bench/counted_serve.py`` (``serve`` with counters inside the
process) and each operation is sent ``--repeats`` times, one at a time, over JSON-RPC:

* SendMessage making a task (``stream 1``), continuing a task of H messages
  (``turn``), making a task that streams 20 appended artifact chunks;
* GetTask of a task with H messages, with and without ``historyLength=10``;
* ListTasks (pages of 50): no filter, the probe context, ``input-required``, both,
  the second page, and ``statusTimestampAfter`` the newest 100 tasks and half of them;
* CancelTask; SubscribeToTask (until its first event) of a task with H messages;
* push config create / get / list / delete;
* a turn on a task with 1, 10, 100 subscribers (SSE streams) attached.

Per request: the server process's CPU (``time.process_time`` inside it), the SQL
statements it ran (``BEGIN``/``COMMIT`` included), and the pages it read: SQLite's
pager look-ups (``sqlite3_db_status`` cache hits + misses), PostgreSQL's shared
buffers (hit + read) of the last request's statements replayed under
``EXPLAIN (ANALYZE, BUFFERS)`` in rolled-back transactions (plan nodes only: trigger
bodies not counted; a replayed INSERT of a row that now exists fails and is skipped,
the same at every size). Ratios are the largest size against the smallest; a
statement or page count that grows more than 2x with the tasks stored, and more than
1.5x in the last step (10k -> 50k), by more than 20 pages or one statement, is marked GROWS and makes the script exit 1 (a B-tree one level deeper costs every look-up a
page more: SQLite's pages grow some 1.3-1.5x from 1k to 50k tasks, logarithmically).
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.append(sys.path.pop(0))  # bench/http.py must not shadow the standard library

import argparse
import asyncio
import base64
import contextlib
import itertools
import json
import os
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import attrs
import httpx

from a2a_models import Task, TaskState, TaskStatus
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
PG = os.environ.get("A2A_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
PROBE = "ctx-probe"
PROBE_TASKS = 200
STATES = (TaskState.COMPLETED, TaskState.INPUT_REQUIRED, TaskState.FAILED, TaskState.CANCELED)
#: Pages and statements at the largest size against the smallest (50x the tasks): a
#: B-tree one level deeper adds a page to each look-up (some 1.3-1.5x in SQLite, all
#: logarithmic); a cost that grows with the tasks stored shows as tens of times.
GROWTH_LIMIT = 2.0
#: ... and at the largest size against the one before it (5x the tasks).
LAST_STEP_LIMIT = 1.5
#: ... and by more than this many pages (or one statement).
MIN_ADDED_PAGES = 20


def _stores_module() -> Any:
    import stores  # bench/stores.py: its task builders and bulk loaders

    return stores


# =========================================================================== data


def bulk_tasks(count: int) -> list[Task]:
    """``count`` tasks 1 s apart: contexts of ten, and the probe context's 200 spread
    evenly over them (alternately completed and input-required)."""
    st = _stores_module()
    step = max(1, count // PROBE_TASKS)
    tasks, probe = [], 0
    for i in range(count):
        if i % step == 0 and probe < PROBE_TASKS:
            ctx, state = PROBE, STATES[probe % 2]
            probe += 1
        else:
            ctx, state = f"ctx-{i // 10}", STATES[i % 4]
        tasks.append(st._task(f"task-{i:07d}", 1, ctx=ctx, state=state, minute=i))
    return tasks


def conversation(task_id: str, messages: int) -> Task:
    """An ``input-required`` task whose history has ``messages`` messages."""
    st = _stores_module()
    ctx = f"ctx-{task_id}"
    return attrs.evolve(
        st._task(task_id, messages, ctx=ctx, state=TaskState.INPUT_REQUIRED, minute=10**7),
        # Older than every bulk task: the first pages of ListTasks are bulk tasks (ListTasks
        # runs before the operations that move these to the front).
        status=TaskStatus(state=TaskState.INPUT_REQUIRED, timestamp=st.T0 - timedelta(days=1)),
    )


@attrs.define
class Plan:
    """What the operations need from a filled database."""

    histories: tuple[int, ...]
    subscribers: tuple[int, ...]
    repeats: int

    def specials(self) -> list[Task]:
        out = []
        for h in self.histories:
            out += [conversation(f"hist-{h}", h), conversation(f"turn-{h}", h)]
        out += [conversation(f"fan-{k}", 2) for k in self.subscribers]
        spare = self.repeats + 4
        out += [conversation(f"cancel-{j}", 1) for j in range(spare)]
        out += [conversation(f"push-{j}", 1) for j in range(spare)]
        return out


async def fill(kind: str, target: str, count: int, plan: Plan) -> float:
    st = _stores_module()
    t0 = time.perf_counter()
    store: Any
    if kind == "sqlite":
        store = await SQLiteTaskStore(Path(target)).open()
    else:
        store = await PostgresTaskStore(target).open()
    try:
        tasks = bulk_tasks(count)
        if kind == "sqlite":
            await st._bulk_sqlite(store, tasks)
        else:
            await st._bulk_postgres(store, tasks)
        for task in plan.specials():
            await store.create(task, None)
    finally:
        await store.aclose()
    return time.perf_counter() - t0


# =========================================================================== the server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``bench/counted_serve.py`` running ``a2a-models serve`` on ``store_url``."""

    def __init__(self, store_url: str) -> None:
        self.port, self.counter_port = _free_port(), _free_port()
        self.log = tempfile.TemporaryFile("w+")
        command = [
            sys.executable,
            str(HERE / "counted_serve.py"),
            str(self.counter_port),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--store",
            store_url,
            "--agent",
            "bench_echo_agent:Echo",
            "--log-level",
            "warning",
            "--retain-terminal",
            "off",
            "--max-active-tasks-per-owner",
            "0",
            "--push-allow",
            "127.0.0.1",
        ]
        # counted_serve.py adds bench/ last; PYTHONPATH, if set, names the code to measure.
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(SRC)}
        self.proc = subprocess.Popen(
            command, env=env, cwd=str(HERE), stdout=self.log, stderr=subprocess.STDOUT
        )

    async def ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient() as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError("serve exited:\n" + self.output())
                with contextlib.suppress(httpx.HTTPError):
                    url = f"http://127.0.0.1:{self.port}/.well-known/agent-card.json"
                    if (await client.get(url)).status_code == 200:
                        return
                await asyncio.sleep(0.1)
        raise RuntimeError("serve did not start:\n" + self.output())

    def counters(self, command: str = "snap") -> Any:
        with socket.create_connection(("127.0.0.1", self.counter_port)) as sock:
            sock.sendall(command.encode() + b"\n")
            return json.loads(sock.makefile("rb").readline())

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()[-3000:]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


# =========================================================================== requests

_ids = itertools.count()


def message(text: str, task_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "messageId": f"m-{next(_ids)}-{uuid.uuid4().hex[:6]}",
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id is not None:
        out |= {"taskId": task_id, "contextId": f"ctx-{task_id}"}
    return out


async def rpc(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = (await client.post("/", json=body)).json()
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


async def first_event(client: httpx.AsyncClient, task_id: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    headers = {"Accept": "text/event-stream"}
    async with client.stream("POST", "/", json=body, headers=headers) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                if '"error"' in line:
                    raise RuntimeError(line)
                return


Op = Callable[[], Awaitable[Any]]


def _at(second: int) -> str:
    """The status timestamp of bulk task number ``second`` (they are 1 s apart)."""
    at = _stores_module().T0 + timedelta(seconds=second)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def operations(
    client: httpx.AsyncClient, plan: Plan, histories: tuple[int, ...], size: int
) -> list[tuple[str, str, Op]]:
    """(group, name, one request) for every measured operation."""
    ops: list[tuple[str, str, Op]] = []
    counters: dict[str, itertools.count[int]] = {}

    def next_of(name: str) -> int:
        return next(counters.setdefault(name, itertools.count()))

    ops.append(
        (
            "tasks",
            "SendMessage: new task",
            lambda: rpc(client, "SendMessage", {"message": message("stream 1")}),
        )
    )
    ops.append(
        (
            "tasks",
            "SendMessage: 20 artifact chunks",
            lambda: rpc(client, "SendMessage", {"message": message("chunks 20")}),
        )
    )
    for h in histories:
        hist, turn = f"hist-{h}", f"turn-{h}"

        def cont(turn: str = turn) -> Awaitable[Any]:
            return rpc(client, "SendMessage", {"message": message("turn go", turn)})

        def get(hist: str = hist) -> Awaitable[Any]:
            return rpc(client, "GetTask", {"id": hist})

        def get10(hist: str = hist) -> Awaitable[Any]:
            return rpc(client, "GetTask", {"id": hist, "historyLength": 10})

        def sub(hist: str = hist) -> Awaitable[Any]:
            return first_event(client, hist)

        ops += [
            (f"history {h}", "SendMessage: continue task", cont),
            (f"history {h}", "GetTask", get),
            (f"history {h}", "GetTask historyLength=10", get10),
            (f"history {h}", "SubscribeToTask (first event)", sub),
        ]
    lists = {
        "ListTasks": {},
        "ListTasks contextId": {"contextId": PROBE},
        "ListTasks status": {"status": "TASK_STATE_INPUT_REQUIRED"},
        "ListTasks contextId+status": {"contextId": PROBE, "status": "TASK_STATE_INPUT_REQUIRED"},
        # The exact total of a timestamp filter counts the smaller side (matches, or the
        # tasks before): the newest 100 tasks, and half the tasks.
        "ListTasks statusTimestampAfter (newest 100)": {"statusTimestampAfter": _at(size - 100)},
        "ListTasks statusTimestampAfter (half)": {"statusTimestampAfter": _at(size // 2)},
    }
    for name, filters in lists.items():

        def page(filters: dict[str, Any] = filters) -> Awaitable[Any]:
            return rpc(client, "ListTasks", {**filters, "pageSize": 50})

        ops.append(("tasks", name, page))
    token: list[str] = []

    async def page2() -> Any:
        if not token:
            first = await rpc(client, "ListTasks", {"pageSize": 50})
            token.append(first["nextPageToken"])
        return await rpc(client, "ListTasks", {"pageSize": 50, "pageToken": token[0]})

    ops.append(("tasks", "ListTasks page 2", page2))

    def cancel() -> Awaitable[Any]:
        return rpc(client, "CancelTask", {"id": f"cancel-{next_of('cancel')}"})

    ops.append(("tasks", "CancelTask", cancel))

    def push_create() -> Awaitable[Any]:
        j = next_of("create")
        config = {"taskId": f"push-{j}", "id": "c", "url": "http://127.0.0.1:9/hook"}
        return rpc(client, "CreateTaskPushNotificationConfig", config)

    def push_get() -> Awaitable[Any]:
        j = next_of("get") % plan.repeats
        return rpc(client, "GetTaskPushNotificationConfig", {"taskId": f"push-{j}", "id": "c"})

    def push_list() -> Awaitable[Any]:
        j = next_of("list") % plan.repeats
        return rpc(client, "ListTaskPushNotificationConfigs", {"taskId": f"push-{j}"})

    def push_delete() -> Awaitable[Any]:
        j = next_of("delete")
        return rpc(client, "DeleteTaskPushNotificationConfig", {"taskId": f"push-{j}", "id": "c"})

    ops += [
        ("tasks", "push config create", push_create),
        ("tasks", "push config get", push_get),
        ("tasks", "push config list", push_list),
        ("tasks", "push config delete", push_delete),
    ]
    # The listings first: the tasks the other operations touch move to the front.
    return sorted(ops, key=lambda op: not op[1].startswith("ListTasks"))


# =========================================================================== measuring


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"b64"}:
        return base64.b64decode(value["b64"])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        return {k: _decode(v) for k, v in value.items()}
    return value


REPLAYED = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")


async def replay_buffers(dsn: str, statements: list[list[Any]]) -> float:
    """Shared buffers (hit + read) of the statements, each under EXPLAIN (ANALYZE,
    BUFFERS) in a rolled-back transaction."""
    import psycopg

    total = 0
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        for sql, params in statements:
            if sql.lstrip().split(None, 1)[0].upper() not in REPLAYED:
                continue
            try:
                for _ in range(2):  # the second run: the catalog caches warm, as in serve
                    async with conn.transaction(force_rollback=True):
                        cursor = await conn.execute(
                            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, _decode(params)
                        )
                        row = await cursor.fetchone()
            except psycopg.Error:
                continue
            assert row is not None
            plan = row[0][0]["Plan"]  # execution only (planning is cached by serve's statements)
            total += plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
    return float(total)


@attrs.define
class Cost:
    cpu_us: float
    statements: float
    pages: float


async def measure(server: Server, op: Op, repeats: int, pg_dsn: str | None) -> Cost:
    for _ in range(2):
        await op()
    before = server.counters()
    for _ in range(repeats):
        await op()
    after = server.counters()
    pages = (after["pages"] - before["pages"]) / repeats
    if pg_dsn is not None:
        server.counters("record")
        await op()
        pages = await replay_buffers(pg_dsn, server.counters("take"))
    return Cost(
        (after["cpu"] - before["cpu"]) / repeats * 1e6,
        (after["statements"] - before["statements"]) / repeats,
        pages,
    )


async def fan_out(server: Server, client: httpx.AsyncClient, k: int, turns: int) -> Cost:
    """A turn on a task with k subscribers attached; every subscriber sees each turn."""
    task_id = f"fan-{k}"
    got = [0] * k
    opened = [asyncio.Event() for _ in range(k)]
    limits = httpx.Limits(max_connections=k + 1)
    async with httpx.AsyncClient(base_url=client.base_url, timeout=60, limits=limits) as subs:

        async def subscriber(i: int) -> None:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SubscribeToTask",
                "params": {"id": task_id},
            }
            headers = {"Accept": "text/event-stream", "A2A-Version": "1.0"}
            async with subs.stream("POST", "/", json=body, headers=headers) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        got[i] += 1
                        opened[i].set()

        readers = [asyncio.create_task(subscriber(i)) for i in range(k)]
        try:
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in opened)), 60)
            await rpc(client, "SendMessage", {"message": message("turn go", task_id)})
            seen = sum(got)
            before = server.counters()
            for _ in range(turns):
                await rpc(client, "SendMessage", {"message": message("turn go", task_id)})
            after = server.counters()
            deadline = time.monotonic() + 30
            while sum(got) - seen < k * turns and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            after = server.counters()  # the fan-out of the last turn included
            assert sum(got) - seen >= k * turns, (sum(got) - seen, k * turns)
        finally:
            for reader in readers:
                reader.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
    return Cost(
        (after["cpu"] - before["cpu"]) / turns * 1e6,
        (after["statements"] - before["statements"]) / turns,
        (after["pages"] - before["pages"]) / turns,
    )


# =========================================================================== running


Results = dict[tuple[str, str], dict[int, Cost]]


async def run_store(kind: str, args: argparse.Namespace, tmp: str) -> tuple[Results, Results]:
    import psycopg

    plan = Plan(tuple(args.history), tuple(args.subscribers), args.repeats)
    results: Results = {}
    fans: Results = {}
    for size in args.sizes:
        dsn: str | None = None
        if kind == "sqlite":
            path = Path(tmp) / f"growth-{size}.db"
            target, url = str(path), f"sqlite:///{path}"
        else:
            database = f"a2a_growth_{size}_{uuid.uuid4().hex[:6]}"
            async with await psycopg.AsyncConnection.connect(PG, autocommit=True) as conn:
                await conn.execute(f'CREATE DATABASE "{database}"')
            dsn = target = url = PG.rsplit("/", 1)[0] + "/" + database
        try:
            took = await fill(kind, target, size, plan)
            print(f"  ({kind}: {size:,} tasks stored in {took:.1f} s)", flush=True)
            server = Server(url)
            try:
                await server.ready()
                headers = {"A2A-Version": "1.0"}
                base = f"http://127.0.0.1:{server.port}"
                async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:
                    for group, name, op in operations(client, plan, plan.histories, size):
                        if args.only and not any(o in name for o in args.only):
                            continue
                        repeats = args.repeats if group == "tasks" else max(5, args.repeats // 2)
                        cost = await measure(server, op, repeats, dsn)
                        results.setdefault((group, name), {})[size] = cost
                    for k in plan.subscribers if not args.only else ():
                        turns = max(5, args.repeats // 4)
                        fans.setdefault(("subscribers", f"{k}"), {})[size] = await fan_out(
                            server, client, k, turns
                        )
            finally:
                server.stop()
        finally:
            if dsn is not None:
                async with await psycopg.AsyncConnection.connect(PG, autocommit=True) as conn:
                    await conn.execute(
                        f'DROP DATABASE IF EXISTS "{dsn.rsplit("/", 1)[1]}" WITH (FORCE)'
                    )
        print(f"  ({kind}: {size:,} tasks measured)", flush=True)
    return results, fans


def _cell(cost: Cost, pages_name: str) -> str:
    return f"{cost.cpu_us:>7,.0f} us {cost.statements:>5.1f} st {cost.pages:>7,.0f} {pages_name}"


def report(kind: str, results: Results, fans: Results, args: argparse.Namespace) -> list[str]:
    """Print the tables; the operations whose statements or pages grow with tasks stored."""
    pages_name = "pg" if kind == "sqlite" else "buf"
    small, big = args.sizes[0], args.sizes[-1]
    grows: list[str] = []
    print(
        f"\n== {kind}: per request, {small:,} -> {big:,} tasks stored"
        f" (us CPU, statements, {'pages read' if kind == 'sqlite' else 'buffers'})"
    )
    print(
        f"  {'operation':<46} "
        + " | ".join(f"{s:>31,}" for s in args.sizes)
        + " | ratio cpu/st/pages"
    )
    for (group, name), by_size in results.items():
        a, b = by_size[small], by_size[big]
        ratios = [
            b.cpu_us / a.cpu_us,
            b.statements / max(a.statements, 1e-9),
            b.pages / max(a.pages, 1),
        ]
        # The last step (e.g. 10k -> 50k) too: a page of rows spread over more heap
        # pages costs more from 1k to 10k once, then no more (locality, not growth).
        prev = by_size[args.sizes[-2]] if len(args.sizes) > 2 else a
        last = max(b.statements / max(prev.statements, 1e-9), b.pages / max(prev.pages, 1))
        flag = ""
        # A few pages or statements more are no trend (PostgreSQL's 3-7 buffers move with
        # which background statements fall into the recorded request).
        added = max(b.pages - a.pages - MIN_ADDED_PAGES, b.statements - a.statements - 1)
        if max(ratios[1:]) > GROWTH_LIMIT and last > LAST_STEP_LIMIT and added > 0:
            flag = f"  GROWS ({last:.2f}x in the last step)"
            grows.append(f"{kind}: {group}: {name}")
        label = name if group == "tasks" else f"{name} ({group} msgs)"
        cells = " | ".join(_cell(by_size[s], pages_name) for s in args.sizes)
        print(f"  {label:<46} {cells} | {ratios[0]:.2f}x {ratios[1]:.2f}x {ratios[2]:.2f}x{flag}")
    print(f"\n== {kind}: history growth at {big:,} tasks (largest H against smallest)")
    h0, h1 = args.history[0], args.history[-1]
    names = sorted({n for g, n in results if g != "tasks"})
    for name in names:
        costs = [results[(f"history {h}", name)][big] for h in args.history]
        a, b = costs[0], costs[-1]
        cells = " | ".join(_cell(c, pages_name) for c in costs)
        print(
            f"  {name:<32} {cells} | {h0}->{h1}: {b.cpu_us / a.cpu_us:.2f}x cpu,"
            f" {b.pages / max(a.pages, 1):.2f}x pages"
        )
    print(f"\n== {kind}: a turn with subscribers attached (at each size; pages: SQLite only)")
    for (_, k), by_size in fans.items():
        cells = " | ".join(_cell(by_size[s], pages_name) for s in args.sizes)
        per = by_size[big].cpu_us / int(k)
        print(f"  {k:>4} subscribers {cells} | {per:,.0f} us per subscriber at {big:,}")
    return grows


async def main_async(args: argparse.Namespace) -> int:
    grows: list[str] = []
    dump: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="a2a-serve-growth-") as tmp:
        for kind in args.stores:
            results, fans = await run_store(kind, args, tmp)
            grows += report(kind, results, fans, args)
            dump[kind] = {
                "ops": {
                    f"{g}|{n}": {s: attrs.asdict(c) for s, c in v.items()}
                    for (g, n), v in results.items()
                },
                "fans": {
                    k: {s: attrs.asdict(c) for s, c in v.items()} for (_, k), v in fans.items()
                },
            }
    if args.json:
        Path(args.json).write_text(json.dumps(dump, indent=1))
    print(
        "\n"
        + (
            "grows with tasks stored: " + "; ".join(grows)
            if grows
            else "nothing grows with tasks stored"
        )
    )
    return 1 if grows else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--stores", nargs="+", default=["sqlite", "postgres"], choices=["sqlite", "postgres"]
    )
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000, 50000])
    parser.add_argument("--history", nargs="+", type=int, default=[10, 100, 1000])
    parser.add_argument("--subscribers", nargs="+", type=int, default=[1, 10, 100])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--only", nargs="+", help="only the operations whose name has one of these")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
