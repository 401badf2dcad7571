"""Agents in worker processes against agents in the server process, on PostgreSQL.

    .venv/bin/python bench/workers.py            # ~1-2 min
    .venv/bin/python bench/workers.py --quick    # fewer tasks, smaller queues

Part 1, throughput: the same load (``--clients`` keep-alive clients sending
blocking ``SendMessage`` of ``stream 2``: a task with two ``working`` updates
and ``completed``, the agent of ``bench_echo_agent.py``) against

* ``serve``: one ``a2a-models serve`` on PostgreSQL, agent in process;
* ``serve x2``: two of them on the same schema (clients split over both);
* ``front end + 2 workers``: one ``serve --front-end`` and two ``a2a-models worker``;
* ``2 front ends + 2 workers``.

printed side by side (tasks/s, p50 and p99 latency). Each setup gets a
fresh schema. The machine's other load hits every setup: compare the ratios
of one run, not numbers across runs.

Part 2, queue pull cost: ``PostgresTurnQueue.pull`` (one statement: take the
oldest turn ``FOR UPDATE SKIP LOCKED``, delete it, lease its task) timed with
10 to 100,000 turns waiting, and again after churning through a batch of
turns (deleted rows the autovacuum has not yet removed).

PostgreSQL: ``A2A_BENCH_POSTGRES_DSN`` (default: the local ``test`` database).
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, bench/ comes first on sys.path: a sibling (http.py) would shadow the stdlib.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import argparse
import asyncio
import os
import re
import signal
import socket
import statistics
import subprocess
import threading
import time
import uuid

try:
    import a2a_models  # noqa: F401
except ImportError:  # a bare checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

HERE = Path(__file__).resolve().parent
DSN = os.environ.get("A2A_BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
AGENT = "bench_echo_agent:Echo"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _store_url(schema: str) -> str:
    sep = "&" if "?" in DSN else "?"
    return f"{DSN}{sep}schema={schema}&channel={schema}"


def _start(args: list[str], ready: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
    }
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("a2a-models")), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        # The agent module is found in the working directory (not on sys.path at
        # start-up: bench/http.py would shadow the standard library's http).
        cwd=str(HERE),
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if re.search(ready, line):
            # Keep reading: a full pipe would block the process.
            threading.Thread(target=_drain, args=(args[0], proc), daemon=True).start()
            return proc
    raise RuntimeError(f"{args[0]} exited ({proc.wait()}) while starting")


def _drain(name: str, proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if "Traceback" in line or "ERROR" in line or "WARNING" in line:
            print(f"  [{name} {proc.pid}] {line.rstrip()}", file=sys.stderr)


def _setup(
    schema: str, front_ends: int, workers: int
) -> tuple[list[str], list[subprocess.Popen[str]]]:
    """Start the processes; the front ends' URLs and every process."""
    store = _store_url(schema)
    common = ["--store", store, "--agent", AGENT, "--log-level", "warning"]
    procs: list[subprocess.Popen[str]] = []
    urls = []
    for _ in range(front_ends):
        port = _free_port()
        extra = ["--front-end"] if workers else []
        # Start the first alone: it creates the schema.
        procs.append(
            _start(
                [
                    "serve",
                    "--port",
                    str(port),
                    *extra,
                    *common,
                    "--max-active-tasks-per-owner",
                    "0",
                ],
                "serving",
            )
        )
        urls.append(f"http://127.0.0.1:{port}")
    for _ in range(workers):
        procs.append(_start(["worker", *common, "--concurrency", "32"], "running"))
    return urls, procs


def _stop(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _drop(schema: str) -> None:
    import psycopg

    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def _load(urls: list[str], tasks: int, clients: int) -> tuple[float, list[float]]:
    """Run ``tasks`` blocking sends over ``clients`` connections; (seconds, latencies)."""
    from a2a_models import Message, Task, TaskState
    from a2a_models.adapters.http import HTTPClient

    conns = [HTTPClient(urls[i % len(urls)], timeout=60.0) for i in range(clients)]
    latencies: list[float] = []
    left = tasks

    async def client(conn: HTTPClient) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            started = time.perf_counter()
            task = await conn.send_message(Message.user("stream 2"))
            latencies.append(time.perf_counter() - started)
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED, task

    try:
        for conn in conns:  # warm up: card fetched, connection open
            await conn.send_message(Message.user("stream 2"))
        started = time.perf_counter()
        await asyncio.gather(*(client(conn) for conn in conns))
        return time.perf_counter() - started, latencies
    finally:
        for conn in conns:
            await conn.aclose()


def throughput(tasks: int, clients: int) -> None:
    setups = [
        ("serve", 1, 0),
        ("serve x2", 2, 0),
        ("front end + 2 workers", 1, 2),
        ("2 front ends + 2 workers", 2, 2),
    ]
    print(f"\nthroughput: {tasks} blocking SendMessage ('stream 2'), {clients} clients, PostgreSQL")
    print(f"{'setup':<28}{'tasks/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'vs serve':>10}")
    base = None
    for name, front_ends, workers in setups:
        schema = f"a2a_bench_workers_{uuid.uuid4().hex[:10]}"
        try:
            urls, procs = _setup(schema, front_ends, workers)
            try:
                seconds, latencies = asyncio.run(_load(urls, tasks, clients))
            finally:
                _stop(procs)
        finally:
            _drop(schema)
        rate = tasks / seconds
        base = base or rate
        latencies.sort()
        p50 = statistics.median(latencies) * 1000
        p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
        print(f"{name:<28}{rate:>10.0f}{p50:>10.1f}{p99:>10.1f}{rate / base:>9.2f}x")


def _fill(q: str, total: int, taken: int) -> None:
    """A queue of ``total`` turns (submitted tasks, bulk SQL), after ``taken`` were taken."""
    import psycopg

    from a2a_models import Message, SendMessageRequest
    from a2a_models.server import CallContext, Turn

    turn = Turn("t", SendMessageRequest(message=Message.user("hi")), CallContext(), None)
    with psycopg.connect(DSN, autocommit=True) as conn:
        # Bulk rows without the per-row count triggers (minutes at 100k): the
        # counts do not matter here. Needs a superuser, as the test database has.
        conn.execute("SET session_replication_role = replica")
        conn.execute(f"TRUNCATE {q}.a2a_tasks CASCADE")
        conn.execute(
            f"INSERT INTO {q}.a2a_tasks (id, scope, state, status_key, version, last_seq,"
            " task, lease_owner, lease_expires) SELECT 't' || i, '[null,null]',"
            " 'TASK_STATE_SUBMITTED', i, 1, 1, '{}'::jsonb, 'queue', 'infinity'"
            " FROM generate_series(1, %s) AS i",
            (total + taken,),
        )
        conn.execute(
            f"INSERT INTO {q}.a2a_turns (task_id, turn)"
            " SELECT 't' || i, %s FROM generate_series(1, %s) AS i",
            (turn.to_json(), total + taken),
        )
        conn.execute(f"ANALYZE {q}.a2a_turns")
        conn.execute(f"ANALYZE {q}.a2a_tasks")
        if taken:
            conn.execute(
                f"DELETE FROM {q}.a2a_turns WHERE id IN"
                f" (SELECT id FROM {q}.a2a_turns ORDER BY id LIMIT %s)",
                (taken,),
            )


async def _pull_cost(lengths: list[int], pulls: int, dead: int) -> None:
    from a2a_models.stores import PostgresTaskStore, PostgresTurnQueue

    print(f"\nqueue pull cost (median of {pulls} pulls, one statement each)")
    print(f"{'turns waiting':>14}{'pull ms':>10}{f'after {dead:,} taken ms':>24}")
    for length in lengths:
        schema = f"a2a_bench_queue_{uuid.uuid4().hex[:10]}"
        store = PostgresTaskStore(DSN, schema=schema)
        await store.open()
        queue = PostgresTurnQueue(store, _store_url(schema))
        try:
            medians = []
            # Then: turns taken since the last vacuum leave dead index entries at
            # the head of the queue, which every pull steps over.
            for taken in (0, dead):
                await asyncio.to_thread(_fill, f'"{schema}"', length + pulls, taken)
                timings = []
                for _ in range(pulls):
                    started = time.perf_counter()
                    got = await queue.pull("bench", 60.0)
                    timings.append(time.perf_counter() - started)
                    assert got is not None
                medians.append(statistics.median(timings) * 1000)
            print(f"{length:>14,}{medians[0]:>10.2f}{medians[1]:>24.2f}")
        finally:
            await queue.aclose()
            await store.aclose()
            _drop(schema)


# --- cost as the number of processes grows (--scale) ---------------------------------------


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of ``pids`` so far (Linux /proc)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _connections_by_pid(pids: list[int]) -> dict[int, int]:
    """Open TCP connections of each of ``pids`` to the database's port (``ss``)."""
    from urllib.parse import urlsplit

    port = urlsplit(DSN).port or 5432
    out = subprocess.run(
        ["ss", "-tnpH", "state", "established", f"( dport = :{port} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts = dict.fromkeys(pids, 0)
    for pid in re.findall(r"pid=(\d+)", out):
        if int(pid) in counts:
            counts[int(pid)] += 1
    return counts


def _statements(conn: object) -> int:
    """Statements run in the bench's database so far (pg_stat_statements, counted at
    once, unlike pg_stat_database), not counting the bench's own."""
    row = conn.execute(  # type: ignore[attr-defined]
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d"
        " ON d.oid = s.dbid WHERE d.datname = current_database()"
        " AND s.query NOT LIKE '%pg_stat%' AND s.query NOT LIKE 'LISTEN%'"
    ).fetchone()
    return int(row[0])


def _top_statements(conn: object, before: dict[str, int]) -> dict[str, int]:
    """The statements run since ``before`` (an earlier result; ``{}``: all so far), most first."""
    rows = conn.execute(  # type: ignore[attr-defined]
        "SELECT left(regexp_replace(s.query, '\\s+', ' ', 'g'), 70), sum(calls)"
        " FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
        " WHERE d.datname = current_database() AND s.query NOT LIKE '%pg_stat%'"
        " GROUP BY 1"
    ).fetchall()
    now = {query: int(calls) for query, calls in rows}
    grown = {q: c - before.get(q, 0) for q, c in now.items() if c - before.get(q, 0)}
    if not before:
        return now
    return dict(sorted(grown.items(), key=lambda kv: -kv[1]))


class _NotifyCounter:
    """Counts the NOTIFYs sent on the bench's channels (a listener of its own)."""

    def __init__(self, channels: list[str]) -> None:
        import psycopg

        self.count = 0
        self._conn = psycopg.connect(DSN, autocommit=True)
        for channel in channels:
            self._conn.execute(f'LISTEN "{channel}"')
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for _ in self._conn.notifies(timeout=0.2):
                self.count += 1

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()


async def _operations(urls: list[str], kind: str, count: int, clients: int) -> None:
    """``count`` operations of ``kind`` (blocking, streaming, subscribe) over ``clients``
    keep-alive clients, each client on its own front end in turn."""
    from a2a_models import Message, Task, TaskState
    from a2a_models.adapters.http import HTTPClient

    conns = [HTTPClient(url, timeout=60.0) for url in urls]
    left = count

    async def one(i: int) -> None:
        here, there = conns[i % len(conns)], conns[(i + 1) % len(conns)]
        if kind == "blocking":
            task = await here.send_message(Message.user("stream 2"))
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED, task
        elif kind == "streaming":
            states = [
                event.status.state
                async for event in here.send_streaming_message(Message.user("stream 2"))
                if hasattr(event, "status")
            ]
            assert states[-1] is TaskState.COMPLETED, states
        else:  # a stream on one front end follows a turn sent through another
            task = await here.send_message(Message.user("turn 1"))
            assert isinstance(task, Task)
            stream = there.subscribe(task.id)
            events = stream.__aiter__()
            await events.__anext__()  # the task as it is now
            reply = Message.user("turn 2", task_id=task.id, context_id=task.context_id)
            sent = asyncio.ensure_future(here.send_message(reply))
            async for event in events:
                status = getattr(event, "status", None)
                if status is not None and status.state is TaskState.INPUT_REQUIRED:
                    break
            await stream.aclose()
            await sent

    async def client(i: int) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await one(i + left)

    try:
        await asyncio.gather(*(client(i) for i in range(clients)))
    finally:
        for conn in conns:
            await conn.aclose()


def _measure(
    procs: list[subprocess.Popen[str]], work: object, notes: _NotifyCounter, conn: object
) -> tuple[float, int, int, dict[str, int]]:
    """(CPU seconds of every process, statements, NOTIFYs, top statements) while ``work`` runs."""
    pids = [proc.pid for proc in procs]
    cpu, stmts, sent = _cpu_seconds(pids), _statements(conn), notes.count
    top = _top_statements(conn, {})
    work()  # type: ignore[operator]
    time.sleep(0.5)  # the last NOTIFYs reach the counter
    return (
        _cpu_seconds(pids) - cpu,
        _statements(conn) - stmts,
        notes.count - sent,
        _top_statements(conn, top),
    )


class _PeakConnections:
    """The most connections ``pids`` held at once while it ran (sampled every 0.2 s)."""

    def __init__(self, pids: list[int]) -> None:
        self.peak = 0
        self._pids = pids
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(_connections_by_pid(self._pids).values()))
            time.sleep(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _scale_row(
    conn: object, name: str, front_ends: int, workers: int, ops: int, idle: float, clients: int
) -> str:
    schema = f"a2a_bench_scale_{uuid.uuid4().hex[:10]}"
    notes = _NotifyCounter([schema, f"a2a_turns_{schema}"[:63]])
    tops = {}
    cells = []
    try:
        urls, procs = _setup(schema, front_ends, workers)
        try:
            asyncio.run(_operations(urls, "blocking", clients, clients))  # warm up
            time.sleep(1.0)
            idle_conns = sum(_connections_by_pid([p.pid for p in procs]).values())
            peak = _PeakConnections([p.pid for p in procs])
            for kind in ("blocking", "streaming", "subscribe"):
                cpu, stmts, sent, top = _measure(
                    procs,
                    lambda kind=kind: asyncio.run(_operations(urls, kind, ops, clients)),
                    notes,
                    conn,
                )
                tops[kind] = top
                if kind == "blocking":
                    pulls = sum(c for q, c in top.items() if q.startswith("WITH t AS (DEL"))
                cells.append(f"{cpu * 1000 / ops:>8.1f}/{stmts / ops:>5.1f}/{sent / ops:>4.1f}")
            load_conns = peak.stop()
            cpu, stmts, _, tops["idle"] = _measure(procs, lambda: time.sleep(idle), notes, conn)
        finally:
            _stop(procs)
    finally:
        notes.close()
        _drop(schema)
    if os.environ.get("A2A_BENCH_VERBOSE"):
        for kind, top in tops.items():
            print(f"    {kind}: {dict(list(top.items())[:6])}")
    return (
        f"{name:<22}{idle_conns:>11}{load_conns:>11}"
        + "".join(f"{c:>22}" for c in cells)
        + f"{cpu * 1000 / idle:>14.1f}{stmts / idle:>10.1f}{pulls / ops:>11.1f}"
    )


def scale(counts: list[int], ops: int, idle: float = 10.0, clients: int = 8) -> None:
    """Per-request and idle cost at ``counts`` replicas, and 1 front end + ``counts`` workers."""
    import psycopg

    print(f"\nscale: {ops} operations of each kind, {clients} clients; idle {idle:.0f} s")
    print("per op: CPU ms of all processes, statements, NOTIFYs sent; idle: per second")
    print(
        f"{'setup':<22}{'conns idle':>11}{'conns load':>11}"
        + "".join(f"{k + ' cpu/st/nt':>22}" for k in ("blocking", "streaming", "subscribe"))
        + f"{'idle cpu ms/s':>14}{'idle st/s':>10}{'pulls/turn':>11}"
    )
    setups = [(f"{n} x serve", n, 0) for n in counts]
    setups += [(f"front end + {n} workers", 1, n) for n in counts]
    with psycopg.connect(DSN, autocommit=True) as conn:
        for name, front_ends, workers in setups:
            print(_scale_row(conn, name, front_ends, workers, ops, idle, clients), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer tasks, smaller queues")
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument(
        "--scale", action="store_true", help="cost per request and idle at 1-8 replicas / workers"
    )
    parser.add_argument("--counts", default="1,2,4,8", help="--scale: the process counts")
    args = parser.parse_args()
    if args.scale:
        scale([int(n) for n in args.counts.split(",")], args.tasks or 120)
        return
    tasks = args.tasks or (300 if args.quick else 1500)
    print("machine: shared and loaded; compare ratios within this run")
    throughput(tasks, args.clients)
    lengths = [10, 1_000, 10_000] if args.quick else [10, 1_000, 10_000, 100_000]
    asyncio.run(_pull_cost(lengths, 100 if args.quick else 300, 2_000 if args.quick else 20_000))


if __name__ == "__main__":
    main()
