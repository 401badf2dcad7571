"""Scale-out: several ``a2a-models serve`` processes on one PostgreSQL database act as one agent.

Two replicas (real subprocesses on 127.0.0.1) share a PostgreSQL schema of
their own (created by the store, dropped afterwards) and a NOTIFY channel of
their own. A task created on replica A can be read, listed, canceled and
subscribed to on replica B; B's stream carries A's events live, in order,
with consecutive event ids, and a stream dropped on A resumes on B with
``Last-Event-ID``. The agent is :mod:`replica_agent` (this directory).

PostgreSQL: ``A2A_TEST_POSTGRES_DSN`` (default: the local ``test`` database).
It is required: these tests fail, rather than skip, when it is unreachable.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import pytest
from _pg_support import fresh_schema, store_url
from _procs import CliProcess, cli_env, free_port

from a2a_models import (
    ListTasksRequest,
    Message,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.adapters.http import HTTPClient, Reconnect, StreamDisconnectedError
from a2a_models.errors import TaskNotCancelableError

HERE = Path(__file__).resolve().parent
#: Bound of every wait for one event (the broker's resync is 30 s: a lost
#: NOTIFY shows up as a timeout, not as a slow pass).
EVENT_TIMEOUT = 5.0
#: Bound of each whole test body.
TEST_TIMEOUT = 30.0
#: The latest a live event may reach the other replica's stream.
MAX_DELIVERY_LAG = 3.0
#: How long a replica may take to exit after SIGTERM. Its own shutdown takes
#: ~0.3 s; the rest is signal delivery and the interpreter's teardown, which a
#: loaded machine stretches to seconds (measured: 0.2 s idle, up to 4.4 s loaded).
STOP_TIMEOUT = 20.0
#: What uvicorn logs when a response (an SSE stream) outlives its graceful shutdown.
GRACE_EXCEEDED = "timeout graceful shutdown exceeded"


class Replica(CliProcess):
    """One ``a2a-models serve`` subprocess (see :class:`CliProcess`)."""

    def __init__(self, name: str, store_url: str) -> None:
        self.port = free_port()
        args = ["serve", "--host", "127.0.0.1", "--port", str(self.port), "--store", store_url]
        args += ["--agent", "replica_agent:ReplicaAgent", "--log-level", "warning"]
        super().__init__(args, name=f"replica {name}", env=cli_env(pythonpath=HERE))
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 20.0) -> Self:
        expected = self.url
        super().wait_ready(timeout)
        assert self.url == expected, self.log()
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 5.0) -> int | None:
        return super().stop(sig, timeout)


@pytest.fixture(scope="module")
def schema() -> Iterator[str]:
    """A fresh schema (also the NOTIFY channel) for this run, dropped afterwards."""
    with fresh_schema("a2a_replicas", "replica") as name:
        yield name


@pytest.fixture(scope="module")
def replicas(schema: str) -> Iterator[tuple[Replica, Replica]]:
    """Replicas A and B, started together (they migrate the fresh schema concurrently)."""
    url = store_url(schema)
    started = [Replica("A", url), Replica("B", url)]
    try:
        for replica in started:
            replica.wait_ready()
        yield started[0], started[1]
    finally:
        for replica in started:
            replica.stop(signal.SIGTERM)


def _client(replica: Replica) -> HTTPClient:
    # No silent resumption: a dropped stream must fail the test, not be papered over.
    return HTTPClient(replica.url, timeout=EVENT_TIMEOUT, reconnect=Reconnect(attempts=0))


NON_BLOCKING = SendMessageConfiguration(return_immediately=True)


async def _collect(stream: Any) -> list[tuple[int, Any, float]]:
    """``(event id, item, arrival time)`` of every item until the stream ends."""
    got: list[tuple[int, Any, float]] = []
    async with stream:
        async for item in stream:
            assert stream.last_event_id is not None, f"event without an id: {item!r}"
            got.append((int(stream.last_event_id), item, time.time()))
    return got


def _assert_consecutive(ids: list[int], start: int) -> None:
    assert ids == list(range(start, start + len(ids))), f"gap or repeat in event ids: {ids}"


def _step(item: Any) -> int | None:
    if isinstance(item, TaskStatusUpdateEvent) and item.metadata:
        return int(item.metadata["step"])
    return None


async def _full_log(client: HTTPClient, task_id: str) -> list[tuple[int, Any, float]]:
    """Every logged event of a finished task (a resume after event 0)."""
    return await _collect(client.subscribe(task_id, resume_after="0"))


async def _list_ids(client: HTTPClient, context_id: str | None) -> list[str]:
    """The ids of the tasks of ``context_id`` (one page: the last, its nextPageToken "")."""
    page = await client.list_tasks(ListTasksRequest(context_id=context_id))
    assert page.next_page_token == ""
    return [task.id for task in page.tasks]


def _check_log(log: list[tuple[int, Any, float]], steps: int, final: TaskState) -> None:
    _assert_consecutive([seq for seq, _, _ in log], 1)
    assert isinstance(log[0][1], Task)
    last = log[-1][1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is final
    assert (
        sum(
            isinstance(item, TaskStatusUpdateEvent) and item.status.state.is_terminal
            for _, item, _ in log
        )
        == 1
    )
    if final is TaskState.COMPLETED:
        assert len(log) == 1 + steps + 2
        assert [_step(item) for _, item, _ in log[1:-2]] == list(range(1, steps + 1))


async def test_task_created_on_a_is_read_listed_and_streamed_on_b(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    steps = 20
    async with asyncio.timeout(TEST_TIMEOUT), _client(a) as on_a, _client(b) as on_b:
        task = await on_a.send_message(Message.user(f"steps {steps}"), configuration=NON_BLOCKING)
        assert isinstance(task, Task) and not task.status.state.is_terminal

        seen = await on_b.get_task(task.id)
        assert (seen.id, seen.context_id) == (task.id, task.context_id)
        assert seen.history[0].text == f"steps {steps}"
        assert await _list_ids(on_b, task.context_id) == [task.id]

        got = await _collect(on_b.subscribe(task.id))
        ids = [seq for seq, _, _ in got]
        first, rest = got[0][1], got[1:]
        assert isinstance(first, Task) and first.id == task.id
        assert not first.status.state.is_terminal, "subscribed after the task finished"
        # The snapshot's id is the seq it reflects; the live events follow it one by one.
        _assert_consecutive(ids, ids[0])
        assert len(rest) >= 5, "too few live events to prove anything"
        last = rest[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED
        assert ids[-1] == 1 + steps + 2
        # Produced by A's process, delivered live to B (not by B's 30 s resync).
        for _, item, arrived in rest:
            if isinstance(item, TaskStatusUpdateEvent):
                if item.metadata:
                    assert item.metadata["pid"] == a.pid
                assert item.status.timestamp is not None
                lag = arrived - item.status.timestamp.timestamp()
                assert lag < MAX_DELIVERY_LAG, f"event reached B {lag:.2f} s after A made it"
        steps_seen = [s for s in (_step(item) for _, item, _ in rest) if s is not None]
        assert steps_seen == list(range(steps_seen[0], steps + 1))
        assert any(isinstance(item, TaskArtifactUpdateEvent) for _, item, _ in rest)

        # What B streamed is exactly A's log from the snapshot on.
        log = await _full_log(on_a, task.id)
        _check_log(log, steps, TaskState.COMPLETED)
        assert [(s, i) for s, i, _ in rest] == [(s, i) for s, i, _ in log[ids[0] :]]
        # ... and both replicas read the same final task.
        done_a, done_b = await on_a.get_task(task.id), await on_b.get_task(task.id)
        assert done_a == done_b and done_a.status.state is TaskState.COMPLETED
        part = done_a.artifacts[0].parts[0]
        assert isinstance(part, TextPart) and part.text == f"done after {steps} steps"


async def test_cancel_on_b_stops_the_task_running_on_a(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas
    async with asyncio.timeout(TEST_TIMEOUT), _client(a) as on_a, _client(b) as on_b:
        task = await on_a.send_message(Message.user("steps 400 0.05"), configuration=NON_BLOCKING)
        assert isinstance(task, Task)
        stream = on_a.subscribe(task.id)
        got: list[tuple[int, Any]] = []
        async with stream:
            async for item in stream:
                got.append((int(stream.last_event_id or -1), item))
                if len(got) == 3:
                    canceled = await on_b.cancel_task(task.id)
                    assert canceled.id == task.id
                    assert canceled.status.state is TaskState.CANCELED
        # A's stream (its own task) ended with B's cancel, with no gap.
        _assert_consecutive([seq for seq, _ in got], got[0][0])
        last = got[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.CANCELED

        with pytest.raises(TaskNotCancelableError):
            await on_a.cancel_task(task.id)
        await asyncio.sleep(0.3)  # several of A's steps: none may land after the cancel
        assert (await on_a.get_task(task.id)).status.state is TaskState.CANCELED
        assert (await on_b.get_task(task.id)).status.state is TaskState.CANCELED
        log = await _full_log(on_b, task.id)
        _check_log(log, 400, TaskState.CANCELED)
        assert len(log) < 1 + 400


async def test_stream_dropped_on_a_resumes_on_b(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas
    steps = 12
    async with asyncio.timeout(TEST_TIMEOUT), _client(a) as on_a, _client(b) as on_b:
        stream = on_a.send_streaming_message(Message.user(f"steps {steps}"))
        before: list[tuple[int, Any]] = []
        async for item in stream:
            before.append((int(stream.last_event_id or -1), item))
            if len(before) == 4:
                break
        await stream.aclose()  # the client drops the connection to A
        assert isinstance(before[0][1], Task)
        task_id = before[0][1].id
        _assert_consecutive([seq for seq, _ in before], 1)
        last_id = str(before[-1][0])

        after = await _collect(on_b.subscribe(task_id, resume_after=last_id))
        ids = [seq for seq, _, _ in after]
        _assert_consecutive(ids, int(last_id) + 1)
        last = after[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED

        # Together: every event of the task, once, in order.
        log = await _full_log(on_b, task_id)
        _check_log(log, steps, TaskState.COMPLETED)
        assert [*before, *((s, i) for s, i, _ in after)] == [(s, i) for s, i, _ in log]


async def test_replicas_stop_on_sigterm_closing_open_streams(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    async with asyncio.timeout(TEST_TIMEOUT), _client(a) as on_a, _client(b) as on_b:
        task = await on_a.send_message(Message.user("steps 1200 0.05"), configuration=NON_BLOCKING)
        assert isinstance(task, Task)
        stream = on_b.subscribe(task.id)
        async with stream:
            items = [await anext(stream), await anext(stream)]
            assert isinstance(items[0], Task)
            code = await asyncio.to_thread(b.stop, signal.SIGTERM, STOP_TIMEOUT)
            assert code == 0, b.log()
            # B's open stream was ended by B, not dropped with the process.
            with pytest.raises(StreamDisconnectedError):
                async with asyncio.timeout(EVENT_TIMEOUT):
                    async for _ in stream:
                        pass
        assert "a2a-models: stopped" in b.output, b.log()
        # ... by the shutdown, not left hanging: uvicorn did not have to wait out its
        # graceful timeout and cancel it (a wall-clock bound on the stop, as before,
        # also counted the interpreter's teardown, seconds on a loaded machine).
        assert not any(GRACE_EXCEEDED in line for line in b.output), b.log()
        # A is unaffected by B's exit; then it stops too.
        assert (await on_a.get_task(task.id)).status.state is TaskState.WORKING
        await on_a.cancel_task(task.id)
    code = await asyncio.to_thread(a.stop, signal.SIGTERM, STOP_TIMEOUT)
    assert code == 0, a.log()
    assert "Traceback" not in "\n".join(a.output + b.output), a.log() + "\n" + b.log()
