"""A process that stalls past its lease (``SIGSTOP``) writes nothing once its task was
taken over (issue #10: no task runs twice at once), with real processes on one
PostgreSQL schema:

* two ``a2a-models serve`` replicas: the one running a task is stopped, the other
  takes the task over and runs its (restartable) turn again, then the stalled one
  is continued;
* one ``serve --front-end`` and two ``a2a-models worker``: the same with workers.

The task's log (a live subscriber's stream and the whole log read back) holds no
event of the stalled process after the first event of the re-run, the final task is
the re-run's, and the stalled process logs that it lost the lease and goes on
serving. The agent is ``worker_agent:RestartableWorkerAgent`` (this directory):
its events carry the pid of the process that made them.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pg_support import PG_DSN, fresh_schema, store_url
from _procs import cli_env, free_port
from test_workers import Proc

from a2a_models import (
    Message,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_models.adapters.http import HTTPClient, Reconnect

HERE = Path(__file__).resolve().parent
TTL = 2.0
AGENT = "worker_agent:RestartableWorkerAgent"
NON_BLOCKING = SendMessageConfiguration(return_immediately=True)
#: Steps of the stalled task, 3 s apart (the stall comes between two of them).
STEPS = 3
DELAY = 3.0
LOST = "lost the lease on task {}"


def _env(tmp: Path) -> dict[str, str]:
    return cli_env({"WORKER_AGENT_LOG": str(tmp / "turns.log")}, pythonpath=HERE)


@pytest.fixture
def schema() -> Iterator[str]:
    with fresh_schema("a2a_stalls", "stall") as name:
        yield name


def _serve(name: str, schema: str, tmp: Path, *, front_end: bool = False) -> tuple[Proc, str]:
    port = free_port()
    args = ["serve", *(["--front-end"] if front_end else []), "--host", "127.0.0.1"]
    args += ["--port", str(port), "--store", store_url(schema), "--agent", AGENT]
    args += ["--lease-ttl", str(TTL), "--log-level", "warning"]
    return Proc(name, args, r"a2a-models: serving ", _env(tmp)), f"http://127.0.0.1:{port}"


def _worker(name: str, schema: str, tmp: Path) -> Proc:
    args = ["worker", "--store", store_url(schema), "--agent", AGENT, "--lease-ttl", str(TTL)]
    args += ["--concurrency", "4", "--log-level", "warning"]
    return Proc(name, args, r"a2a-models: worker .* running", _env(tmp))


def _client(url: str) -> HTTPClient:
    return HTTPClient(url, timeout=30.0, reconnect=Reconnect(attempts=0))


def _pid(item: Any) -> int | None:
    """The process that made a status update of the agent (``None``: another item)."""
    if isinstance(item, TaskStatusUpdateEvent) and item.metadata and "pid" in item.metadata:
        return int(item.metadata["pid"])
    return None


async def _until(ready: Any, timeout: float, what: str, procs: list[Proc]) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}\n" + "\n".join(p.log() for p in procs))
        await asyncio.sleep(0.02)


async def _stall(
    items: list[tuple[int, Any]], task_id: str, schema: str, stalled: Proc, other: Proc
) -> float:
    """Stop ``stalled`` (SIGSTOP) at its lease renewal, once it made its first step;
    continue it (SIGCONT) once ``other`` took the task over and made its first step.
    ``items``: the task's stream, filled meanwhile. Returns when it was stopped.

    The stop comes while the renewal waits for a row lock this test holds: the
    renewal goes through in the database (it is one autocommit statement) and the
    lease lapses a TTL later, but the stalled process reads the renewal's answer,
    which still names the task, only when it is continued. So it learns of the
    take-over from its own renewal only one round (``TTL / 3``) later: meanwhile its
    agent's next step (due long ago) is written, unless the write is fenced.
    """
    import psycopg

    procs = [stalled, other]
    await _until(
        lambda: any(_pid(item) == stalled.pid for _, item in items),
        20,
        "the task made no step",
        procs,
    )
    async with (
        await psycopg.AsyncConnection.connect(PG_DSN) as lock,
        await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True) as watch,
    ):
        await lock.execute(
            f'SELECT 1 FROM "{schema}".a2a_tasks WHERE id = %s FOR UPDATE', (task_id,)
        )
        deadline = time.monotonic() + 10
        while True:
            cursor = await watch.execute(
                "SELECT query FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                (lock.info.backend_pid,),
            )
            waiting = [query for (query,) in await cursor.fetchall()]
            if any("SET lease_expires" in q and "WHERE lease_owner" in q for q in waiting):
                break
            assert time.monotonic() < deadline, f"no renewal waits for the lock: {waiting}"
            await asyncio.sleep(0.01)
        stalled.proc.send_signal(signal.SIGSTOP)
        stopped_at = time.time()
        await lock.rollback()
    await _until(
        lambda: any(_pid(item) == other.pid for _, item in items),
        TTL * 2 + 20,
        "the task was not taken over",
        procs,
    )
    stalled.proc.send_signal(signal.SIGCONT)
    return stopped_at


async def _follow(stream: Any, items: list[tuple[int, Any]]) -> None:
    async with stream:
        async for item in stream:
            items.append((int(stream.last_event_id), item))


def _check_log(items: list[tuple[int, Any]], stalled: int, rerun: int, *, full: bool) -> None:
    """Consecutive ids; the stalled process's events all come before the re-run's first."""
    ids = [seq for seq, _ in items]
    assert ids == list(range(ids[0], ids[0] + len(ids))), f"gap or repeat: {ids}"
    pids = [_pid(item) for _, item in items]
    first = pids.index(rerun)
    late = [
        (seq, item.status.message.text if item.status.message else "")
        for (seq, item), pid in zip(items[first:], pids[first:], strict=True)
        if pid == stalled
    ]
    assert not late, f"events of the stalled process {stalled} after the take-over: {late}"
    assert pids.count(stalled) >= 1 if full else True
    steps = [item.metadata["step"] for (_, item), pid in zip(items, pids, strict=True) if pid]
    assert steps[-STEPS:] == list(range(1, STEPS + 1)), steps  # the re-run, whole
    last = items[-1][1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED
    artifacts = [item for _, item in items if isinstance(item, TaskArtifactUpdateEvent)]
    assert [a.artifact.parts[0].text for a in artifacts] == [f"ran by {rerun}"]


def _check_final(task: Task, rerun: int) -> None:
    assert task.status.state is TaskState.COMPLETED, task.status
    assert [a.parts[0].text for a in task.artifacts] == [f"ran by {rerun}"]
    assert task.status.message is not None
    assert task.status.message.text == f"completed {STEPS} steps"


async def _logged(proc: Proc, text: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not any(text in line for line in proc.output):
        assert time.monotonic() < deadline, f"{proc.name} did not log {text!r}\n{proc.log()}"
        await asyncio.sleep(0.05)


def _check_stalled_events(items: list[tuple[int, Any]], stalled: int, stopped_at: float) -> None:
    """The stalled process made nothing that reached the log after it was stopped."""
    late = [
        item.status.message.text if item.status.message else ""
        for _, item in items
        if _pid(item) == stalled
        and item.status.timestamp is not None
        and item.status.timestamp.timestamp() >= stopped_at
    ]
    assert not late, f"events the stalled process {stalled} made after it woke up: {late}"


async def _whole_log(client: HTTPClient, task_id: str) -> list[tuple[int, Any]]:
    items: list[tuple[int, Any]] = []
    await _follow(client.subscribe(task_id, resume_after="0"), items)
    return items


async def test_a_stalled_replica_writes_nothing_after_its_task_was_taken_over(
    schema: str, tmp_path: Path
) -> None:
    (a, a_url), (b, b_url) = _serve("A", schema, tmp_path), _serve("B", schema, tmp_path)
    procs = [a, b]
    try:
        for proc in procs:
            proc.wait_ready()
        async with asyncio.timeout(90), _client(a_url) as on_a, _client(b_url) as on_b:
            task = await on_a.send_message(
                Message.user(f"work {STEPS} {DELAY}"), configuration=NON_BLOCKING
            )
            assert isinstance(task, Task)
            live: list[tuple[int, Any]] = []
            following = asyncio.ensure_future(_follow(on_b.subscribe(task.id), live))
            stopped_at = await _stall(live, task.id, schema, a, b)
            await _logged(a, LOST.format(task.id))
            await following
            await asyncio.sleep(1.0)  # whatever the stalled run still does, it does now
            _check_log(live, a.pid, b.pid, full=False)
            _check_stalled_events(live, a.pid, stopped_at)
            whole = await _whole_log(on_b, task.id)
            _check_log(whole, a.pid, b.pid, full=True)
            _check_stalled_events(whole, a.pid, stopped_at)
            assert live[1:] == whole[live[0][0] :]
            _check_final(await on_a.get_task(task.id), b.pid)
            _check_final(await on_b.get_task(task.id), b.pid)

            # The stalled replica stays healthy: it serves new requests, runs new turns.
            assert a.proc.poll() is None, a.log()
            reply = await on_a.send_message(Message.user("hello"))
            assert isinstance(reply, Message) and reply.text == "echo: hello"
            done = await on_a.send_message(Message.user("work 3 0.01"))
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
            assert [x.parts[0].text for x in done.artifacts] == [f"ran by {a.pid}"]
    finally:
        for proc in procs:
            if proc.proc.poll() is None:
                proc.proc.send_signal(signal.SIGCONT)
            proc.stop()


async def test_a_stalled_worker_writes_nothing_after_its_task_was_taken_over(
    schema: str, tmp_path: Path
) -> None:
    front, url = _serve("front end", schema, tmp_path, front_end=True)
    workers = [_worker("worker 0", schema, tmp_path), _worker("worker 1", schema, tmp_path)]
    procs = [front, *workers]
    try:
        for proc in procs:
            proc.wait_ready()
        async with asyncio.timeout(90), _client(url) as client:
            task = await client.send_message(
                Message.user(f"work {STEPS} {DELAY}"), configuration=NON_BLOCKING
            )
            assert isinstance(task, Task)
            live: list[tuple[int, Any]] = []
            following = asyncio.ensure_future(_follow(client.subscribe(task.id), live))
            # Which worker pulled the turn: the pid of its first step.
            await _until(lambda: any(_pid(item) for _, item in live), 20, "no step", procs)
            first = next(p for p in (_pid(item) for _, item in live) if p)
            stalled = next(w for w in workers if w.pid == first)
            other = next(w for w in workers if w is not stalled)
            stopped_at = await _stall(live, task.id, schema, stalled, other)
            await _logged(stalled, LOST.format(task.id))
            await following
            await asyncio.sleep(1.0)
            _check_log(live, stalled.pid, other.pid, full=True)
            _check_stalled_events(live, stalled.pid, stopped_at)
            whole = await _whole_log(client, task.id)
            _check_log(whole, stalled.pid, other.pid, full=True)
            _check_stalled_events(whole, stalled.pid, stopped_at)
            _check_final(await client.get_task(task.id), other.pid)

            # The stalled worker stays healthy: it runs new turns (8 at once: 4 each).
            assert stalled.proc.poll() is None, stalled.log()
            quick = await asyncio.gather(
                *(client.send_message(Message.user("work 5 0.2")) for _ in range(8))
            )
            ran = {x.artifacts[0].parts[0].text for x in quick if isinstance(x, Task)}
            assert f"ran by {stalled.pid}" in ran, (ran, stalled.log())
    finally:
        for proc in procs:
            if proc.proc.poll() is None:
                proc.proc.send_signal(signal.SIGCONT)
            proc.stop()
