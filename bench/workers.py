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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer tasks, smaller queues")
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()
    tasks = args.tasks or (300 if args.quick else 1500)
    print("machine: shared and loaded; compare ratios within this run")
    throughput(tasks, args.clients)
    lengths = [10, 1_000, 10_000] if args.quick else [10, 1_000, 10_000, 100_000]
    asyncio.run(_pull_cost(lengths, 100 if args.quick else 300, 2_000 if args.quick else 20_000))


if __name__ == "__main__":
    main()
