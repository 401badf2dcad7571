"""Agents in worker processes: 2 ``serve --front-end`` + 2 ``a2a-models worker`` on one
PostgreSQL schema, as real subprocesses.

Front ends queue turns, workers pull them (``FOR UPDATE SKIP LOCKED``) and
publish events through the broker. Checked: 500 tasks spread over both
workers, streams on either front end carry every event in order, a cancel
made on a front end stops the agent in the worker, and after ``kill -9`` of a
worker its tasks are failed with the clear message within the lease time
while the other worker keeps going (or, for a restartable agent, run again
by the other worker, where a cancel stops them as promptly). The agent (:mod:`worker_agent`) logs when
each turn starts and ends, in which process: no task ever runs in two
processes at once, and none runs twice.

PostgreSQL: ``A2A_TEST_POSTGRES_DSN`` (default: the local ``test`` database);
required (these tests fail, rather than skip, without it).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _client_support import serve_in_thread
from _pg_support import fresh_schema, store_url
from _procs import CliProcess, cli_env, free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_models import (
    Message,
    SendMessageConfiguration,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    codec,
)
from a2a_models.adapters.http import HTTPClient, Reconnect
from a2a_models.server import STOPPED_MESSAGE

HERE = Path(__file__).resolve().parent
TTL = 2.0
#: Lease time + one check interval, with room for a loaded machine.
RECOVERY_TIMEOUT = TTL + TTL / 3 + 15
CONCURRENCY = 4
NON_BLOCKING = SendMessageConfiguration(return_immediately=True)


class Proc(CliProcess):
    """One ``a2a-models`` subprocess, ready once it prints a line ``ready`` finds."""

    def __init__(self, name: str, args: list[str], ready: str, env: dict[str, str]) -> None:
        super().__init__(args, name=name, env=env, ready=ready)


class Cluster:
    def __init__(
        self, schema: str, agent_log: Path, agent_name: str = "worker_agent:WorkerAgent"
    ) -> None:
        store = store_url(schema)
        self.agent_log = agent_log
        env = cli_env({"WORKER_AGENT_LOG": str(agent_log)}, pythonpath=HERE)
        agent = ["--agent", agent_name]
        self.ports = [free_port(), free_port()]
        self.front_ends = [
            Proc(
                f"front end {i}",
                [
                    "serve",
                    "--front-end",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--store",
                    store,
                    *agent,
                    "--push-allow",
                    "127.0.0.1",
                    "--log-level",
                    "warning",
                ],
                r"a2a-models: serving ",
                env,
            )
            for i, port in enumerate(self.ports)
        ]
        self.workers = [
            Proc(
                f"worker {i}",
                [
                    "worker",
                    "--store",
                    store,
                    *agent,
                    "--lease-ttl",
                    str(TTL),
                    "--concurrency",
                    str(CONCURRENCY),
                    "--push-allow",
                    "127.0.0.1",
                    "--log-level",
                    "warning",
                ],
                r"a2a-models: worker .* running",
                env,
            )
            for i in range(2)
        ]
        self.urls = [f"http://127.0.0.1:{port}" for port in self.ports]

    def all(self) -> list[Proc]:
        return [*self.front_ends, *self.workers]

    def logs(self) -> str:
        return "\n".join(proc.log() for proc in self.all())

    def client(self, i: int) -> HTTPClient:
        return HTTPClient(self.urls[i % 2], timeout=30.0, reconnect=Reconnect(attempts=0))

    def turns(self) -> list[tuple[str, str, int, float]]:
        """``(kind, task_id, pid, time)`` of every turn start and end the agent logged."""
        if not self.agent_log.exists():
            return []
        rows = []
        for line in self.agent_log.read_text().splitlines():
            kind, task_id, pid, at = line.split()
            rows.append((kind, task_id, int(pid), float(at)))
        return rows


@contextlib.contextmanager
def _running_cluster(tmp_path_factory: pytest.TempPathFactory, agent: str) -> Iterator[Cluster]:
    with fresh_schema("a2a_workers", "worker") as schema:
        made = Cluster(schema, tmp_path_factory.mktemp("workers") / "turns.log", agent)
        try:
            for proc in made.all():
                proc.wait_ready()
            yield made
        finally:
            for proc in made.all():
                proc.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with _running_cluster(tmp_path_factory, "worker_agent:WorkerAgent") as made:
        yield made


@pytest.fixture
def restartable_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A cluster of its own: its agent is ``restartable`` (a dead worker's turn runs again)."""
    with _running_cluster(tmp_path_factory, "worker_agent:RestartableWorkerAgent") as made:
        yield made


def _pid_of(task: Task) -> int:
    (artifact,) = task.artifacts
    match = re.fullmatch(r"ran by (\d+)", artifact.parts[0].text or "")
    assert match, task
    return int(match.group(1))


def _check_stream(items: list[tuple[int, Any]], steps: int) -> None:
    """Every event of a ``work`` task once, in order: the task, the steps, artifact, done."""
    ids = [seq for seq, _ in items]
    assert ids == list(range(1, len(ids) + 1)), f"gap or repeat: {ids}"
    body = [item for _, item in items]
    assert isinstance(body[0], Task)
    assert all(isinstance(b, TaskStatusUpdateEvent) for b in body[1:-2])
    assert [b.metadata["step"] for b in body[1:-2]] == list(range(1, steps + 1))
    assert isinstance(body[-2], TaskArtifactUpdateEvent)
    last = body[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED


async def _collect(stream: Any) -> list[tuple[int, Any]]:
    got: list[tuple[int, Any]] = []
    async with stream:
        async for item in stream:
            assert stream.last_event_id is not None
            got.append((int(stream.last_event_id), item))
    return got


def _no_overlap(turns: list[tuple[str, str, int, float]], killed: dict[int, float]) -> None:
    """No task ran in two processes at once (a killed process's turns end at its kill)."""
    spans: dict[str, list[tuple[float, float, int]]] = collections.defaultdict(list)
    open_: dict[tuple[str, int], float] = {}
    for kind, task_id, pid, at in turns:
        if kind == "start":
            assert (task_id, pid) not in open_, f"task {task_id} started twice in {pid}"
            open_[(task_id, pid)] = at
        else:
            spans[task_id].append((open_.pop((task_id, pid)), at, pid))
    for (task_id, pid), start in open_.items():
        assert pid in killed, f"turn of task {task_id} in {pid} never ended"
        spans[task_id].append((start, killed[pid], pid))
    for task_id, runs in spans.items():
        runs.sort()
        for (_, end, pid), (start, _, other) in itertools.pairwise(runs):
            assert start >= end, f"task {task_id} ran in {pid} and {other} at once"


async def test_cancel_on_a_front_end_stops_the_agent_in_its_worker(cluster: Cluster) -> None:
    async with asyncio.timeout(30), cluster.client(0) as a, cluster.client(1) as b:
        task = await a.send_message(Message.user("work 200 0.05"), configuration=NON_BLOCKING)
        assert isinstance(task, Task)
        stream = b.subscribe(task.id)
        async with stream:
            async for item in stream:
                if isinstance(item, TaskStatusUpdateEvent) and item.metadata:
                    break  # the agent is working in a worker
        canceled = await b.cancel_task(task.id)
        assert canceled.status.state is TaskState.CANCELED
        # The worker stops the agent (its `finally` logs the end) long before its 10 s.
        deadline = time.monotonic() + 5
        while not any(k == "end" and t == task.id for k, t, _, _ in cluster.turns()):
            assert time.monotonic() < deadline, "the agent was not stopped\n" + cluster.logs()
            await asyncio.sleep(0.05)
        assert (await a.get_task(task.id)).status.state is TaskState.CANCELED


async def test_a_worker_delivers_push_notifications_to_a_webhook_it_is_allowed(
    cluster: Cluster,
) -> None:
    """The worker runs the turn, so it delivers the notifications: given the front
    ends' --push-allow, it reaches a private webhook (it refused any before it took
    the option, while the front end accepted the config)."""
    received: list[bytes] = []

    async def hook(request: Request) -> Response:
        received.append(await request.body())
        return Response(status_code=200)

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    with serve_in_thread(app) as url:
        async with asyncio.timeout(30), cluster.client(0) as client:
            push = TaskPushNotificationConfig(url=f"{url}/hook", token="t0k")
            task = await client.send_message(
                Message.user("work 3 0.01"),
                configuration=SendMessageConfiguration(task_push_notification_config=push),
            )
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
            while not any(b"TASK_STATE_COMPLETED" in body for body in received):
                await asyncio.sleep(0.05)
    updates = [codec.decode(StreamResponse, body, "1.0") for body in received]
    steps = [
        u.metadata["step"]
        for u in updates
        if isinstance(u, TaskStatusUpdateEvent) and u.metadata and "step" in u.metadata
    ]
    assert steps == [1, 2, 3], cluster.logs()
    assert all(getattr(u, "task_id", task.id) == task.id for u in updates)


async def test_500_tasks_spread_over_both_workers_streams_see_every_event(
    cluster: Cluster,
) -> None:
    workers = {w.pid for w in cluster.workers}
    clients = [cluster.client(0), cluster.client(1)]
    gate = asyncio.Semaphore(24)
    done: dict[str, Task] = {}
    direct: list[Message] = []

    async def blocking(i: int) -> None:
        async with gate:
            reply = await clients[i % 2].send_message(Message.user("work 2 0.005"))
            assert isinstance(reply, Task), reply
            assert reply.status.state is TaskState.COMPLETED, (reply.status, cluster.logs())
            done[reply.id] = reply

    async def streamed(i: int) -> None:
        async with gate:
            stream = clients[i % 2].send_streaming_message(Message.user("work 3 0.01"))
            items = await _collect(stream)
        _check_stream(items, 3)
        done[items[0][1].id] = items[0][1]

    async def watched_elsewhere(i: int) -> None:
        # Sent on one front end, followed live on the other.
        async with gate:
            task = await clients[i % 2].send_message(
                Message.user("work 3 0.1"), configuration=NON_BLOCKING
            )
            assert isinstance(task, Task)
            # From event 1: a 0.3 s task may be over before the subscribe arrives under
            # load; the log replays what came before, then the stream is live.
            items = await _collect(clients[(i + 1) % 2].subscribe(task.id, resume_after="1"))
        assert items[-1][1].status.state is TaskState.COMPLETED
        seqs = [seq for seq, _ in items]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
        done[task.id] = task

    async def echo(i: int) -> None:
        # A direct reply in a worker: the front end made the task, it completes with it.
        async with gate:
            reply = await clients[i % 2].send_message(Message.user(f"hello {i}"))
        assert isinstance(reply, Task) and reply.status.state is TaskState.COMPLETED
        assert reply.status.message is not None
        assert reply.status.message.text == f"hello {i}".replace("hello", "echo: hello")
        direct.append(reply.status.message)

    jobs = [blocking(i) for i in range(430)]
    jobs += [streamed(i) for i in range(40)]
    jobs += [watched_elsewhere(i) for i in range(20)]
    jobs += [echo(i) for i in range(10)]
    started = time.monotonic()
    try:
        async with asyncio.timeout(180):
            await asyncio.gather(*jobs)
    finally:
        for client in clients:
            await client.aclose()
    elapsed = time.monotonic() - started
    assert len(done) == 490 and len(direct) == 10
    # Which worker ran each task: the agent's log (every task started once, in one worker).
    starts = collections.Counter()
    by_task: dict[str, set[int]] = collections.defaultdict(set)
    for kind, task_id, pid, _ in cluster.turns():
        if kind == "start" and task_id in done:
            by_task[task_id].add(pid)
            starts[pid] += 1
    assert set(by_task) == set(done)
    assert all(len(pids) == 1 for pids in by_task.values())
    assert set(starts) == workers, starts
    assert min(starts.values()) >= 25, f"one worker ran almost nothing: {starts}"
    blocking_pids = {_pid_of(t) for t in done.values() if t.artifacts}
    assert blocking_pids <= workers
    _no_overlap(cluster.turns(), {})
    print(f"500 tasks in {elapsed:.1f} s; turns per worker: {dict(starts)}")


async def test_kill_9_of_a_worker_fails_its_tasks_and_the_other_keeps_going(
    cluster: Cluster,
) -> None:
    async with asyncio.timeout(60), cluster.client(0) as a, cluster.client(1) as b:
        long = []
        for i in range(6):
            client = a if i % 2 else b
            task = await client.send_message(Message.user("work 1 6"), configuration=NON_BLOCKING)
            assert isinstance(task, Task)
            long.append(task.id)
        deadline = time.monotonic() + 15
        while True:
            running = {t: pid for k, t, pid, _ in cluster.turns() if k == "start" and t in long}
            if len(running) == len(long):
                break
            assert time.monotonic() < deadline, f"not all started: {running}\n" + cluster.logs()
            await asyncio.sleep(0.05)
        counts = collections.Counter(running.values())
        victim = next(w for w in cluster.workers if w.pid == counts.most_common(1)[0][0])
        survivor = next(w for w in cluster.workers if w is not victim)
        theirs = [t for t, pid in running.items() if pid == victim.pid]
        ours = [t for t, pid in running.items() if pid == survivor.pid]
        # A subscriber (on a front end) of a task of the victim gets its final event.
        watch = asyncio.ensure_future(_collect(a.subscribe(theirs[0])))
        await asyncio.sleep(0.2)
        victim.proc.send_signal(signal.SIGKILL)
        killed_at = time.time()
        victim.proc.wait(5)

        # The other worker keeps going: new turns run there at once.
        quick = await asyncio.gather(
            *(
                (a if i % 2 else b).send_message(Message.user("work 2 0.01"))
                for i in range(CONCURRENCY)
            )
        )
        assert all(isinstance(t, Task) and t.status.state is TaskState.COMPLETED for t in quick)
        assert {_pid_of(t) for t in quick if isinstance(t, Task)} == {survivor.pid}

        # The victim's tasks are failed with the clear message within the lease time.
        async def final(task_id: str) -> Task:
            while True:
                task = await b.get_task(task_id)
                if task.status.state.is_terminal:
                    return task
                await asyncio.sleep(0.1)

        async with asyncio.timeout(RECOVERY_TIMEOUT):
            failed = await asyncio.gather(*(final(t) for t in theirs))
            recovered_at = time.time()
            items = await watch
        for task in failed:
            assert task.status.state is TaskState.FAILED, task
            assert task.status.message is not None
            assert task.status.message.text == STOPPED_MESSAGE
        last = items[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.FAILED
        assert recovered_at - killed_at <= TTL + TTL / 3 + 10
        finished = await asyncio.gather(*(final(t) for t in ours))
        assert all(t.status.state is TaskState.COMPLETED for t in finished)
        # Nothing ran twice: each long task started once, in one process.
        starts = [t for k, t, _, _ in cluster.turns() if k == "start" and t in long]
        assert sorted(starts) == sorted(long)
        _no_overlap(cluster.turns(), {victim.pid: killed_at})
        assert survivor.proc.poll() is None, survivor.log()


async def test_sigterm_lets_a_worker_finish_its_turn(cluster: Cluster) -> None:
    # After the kill -9 test one worker is left; run alone (another xdist worker
    # may take this test), the cluster is whole: either way, the worker that takes
    # the turn is stopped in it, then any other one, idle.
    live = [w for w in cluster.workers if w.proc.poll() is None]
    assert live, cluster.logs()
    async with asyncio.timeout(60), cluster.client(0) as a:
        task = await a.send_message(Message.user("work 4 0.5"), configuration=NON_BLOCKING)
        assert isinstance(task, Task)
        while not (pids := [p for k, t, p, _ in cluster.turns() if k == "start" and t == task.id]):
            await asyncio.sleep(0.05)
        worker = next(w for w in live if w.pid == pids[0])
        worker.proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(worker.proc.wait, 30)
        assert code == 0, worker.log()
        done = await a.get_task(task.id)
        assert done.status.state is TaskState.COMPLETED, done.status
        assert _pid_of(done) == worker.pid
        for idle in live:
            if idle is not worker:
                idle.proc.send_signal(signal.SIGTERM)
                assert await asyncio.to_thread(idle.proc.wait, 30) == 0, idle.log()
        # A turn queued after they stopped waits in the queue (no worker left).
        waiting = await a.send_message(Message.user("work 1 0"), configuration=NON_BLOCKING)
        await asyncio.sleep(TTL * 2)
        assert (await a.get_task(waiting.id)).status.state is TaskState.SUBMITTED


async def test_a_cancel_on_a_front_end_stops_a_taken_over_turn(
    restartable_cluster: Cluster,
) -> None:
    # A turn re-run by another worker after its own was killed is watched for
    # cancels like a pulled one: the agent stops at once, not at its next event.
    cluster = restartable_cluster

    def starts(task_id: str) -> dict[int, float]:
        return {pid: at for k, t, pid, at in cluster.turns() if k == "start" and t == task_id}

    async def wait_for(what: str, ready: Any, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while not (found := ready()):
            assert time.monotonic() < deadline, f"{what}\n" + cluster.logs()
            await asyncio.sleep(0.05)
        return found

    async with asyncio.timeout(60), cluster.client(0) as a, cluster.client(1) as b:
        # Three steps 20 s apart: without a watch, a cancel is heard of 20 s later.
        task = await a.send_message(Message.user("work 3 20"), configuration=NON_BLOCKING)
        assert isinstance(task, Task)
        (first,) = await wait_for("the turn did not start", lambda: starts(task.id), 15)
        victim = next(w for w in cluster.workers if w.pid == first)
        survivor = next(w for w in cluster.workers if w is not victim)
        victim.proc.send_signal(signal.SIGKILL)
        killed_at = time.time()
        victim.proc.wait(5)

        # The survivor takes the task over and runs its turn again.
        await wait_for(
            "the turn was not taken over", lambda: survivor.pid in starts(task.id), RECOVERY_TIMEOUT
        )
        rerun = await b.get_task(task.id)
        assert rerun.status.state is TaskState.WORKING, rerun.status

        canceled = await b.cancel_task(task.id)
        assert canceled.status.state is TaskState.CANCELED
        canceled_at = time.time()
        ended = await wait_for(
            "the taken-over turn was not stopped by the cancel",
            lambda: [
                at
                for k, t, pid, at in cluster.turns()
                if k == "end" and t == task.id and pid == survivor.pid
            ],
            5,
        )
        assert ended[0] - canceled_at < 5
        # Nothing after the cancel: the task stays canceled with the re-run's first step last.
        await asyncio.sleep(0.5)
        final = await a.get_task(task.id)
        assert final.status.state is TaskState.CANCELED
        assert final.artifacts == ()
        _no_overlap(cluster.turns(), {victim.pid: killed_at})
        assert survivor.proc.poll() is None, survivor.log()


async def test_a_front_end_that_cannot_record_a_task_says_so() -> None:
    """The store fails the front end's write of a new task (its schema dropped under it):
    the caller gets the server's error, not 'the task of this request is gone'."""
    from _pg_support import drop_schema

    from a2a_models.errors import InternalError

    with fresh_schema("a2a_front_fail", "worker") as schema:
        port = free_port()
        env = cli_env()
        args = ["serve", "--front-end", "--port", str(port), "--store", store_url(schema)]
        front = Proc("front end", [*args, "--log-level", "warning"], r"a2a-models: serving ", env)
        try:
            front.wait_ready()
            drop_schema(schema)
            url = f"http://127.0.0.1:{port}"
            async with HTTPClient(url, timeout=20, reconnect=Reconnect(attempts=0)) as client:
                with pytest.raises(InternalError) as refused:
                    await client.send_message(Message.user("hi"))
            assert refused.value.message == "the server could not record the task (UndefinedTable)"
            async with HTTPClient(url, timeout=20, reconnect=Reconnect(attempts=0)) as client:
                with pytest.raises(InternalError) as failed:
                    await client.get_task("some-task")
            assert failed.value.message == "the task store failed (UndefinedTable)"
        finally:
            front.stop()
        assert "could not record the new task" in front.log(), front.log()
        # A store whose tables are gone is the operator's to fix: one line, no traceback.
        assert "Traceback" not in front.text, front.log()
