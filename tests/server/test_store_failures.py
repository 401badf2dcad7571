"""A store that fails the engine's writes: the agent is not blamed, the caller is told,
and the task is failed once the store takes writes again (or given up on, in time)."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from typing import Any

import pytest

from a2a_models import Message, SendMessageRequest, Task, TaskState
from a2a_models.errors import InternalError
from a2a_models.server import (
    AgentServer,
    CallContext,
    InMemoryTaskStore,
    LeasingExecutor,
    Reply,
    RequestHandler,
    _execution,
    error_for,
)
from a2a_models.stores import SQLiteTaskStore

from ._support import FuncAgent, make_card


class _Refusing(InMemoryTaskStore):
    """Refuses creates and/or updates (as a disk that is full would) while told to."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse_create = False
        self.refuse_update = 0  # how many more updates to refuse (-1: all)

    async def create(self, task: Task, *args: Any, **kwargs: Any) -> Any:
        if self.refuse_create:
            raise OSError(28, "No space left on device")
        return await super().create(task, *args, **kwargs)

    async def update(self, task: Task, *args: Any, **kwargs: Any) -> int:
        if self.refuse_update:
            self.refuse_update -= 1
            raise OSError(28, "No space left on device")
        return await super().update(task, *args, **kwargs)


async def _works(context: Any) -> Any:
    yield context.working("step 1")
    yield context.complete("done")


def _handler(store: _Refusing) -> RequestHandler:
    return RequestHandler(FuncAgent(_works), make_card(), store=store)


async def test_a_task_that_cannot_be_created_is_the_servers_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = _Refusing()
    store.refuse_create = True
    handler = _handler(store)
    with pytest.raises(InternalError, match=r"could not record the task \(OSError\)"):
        await handler.on_send_message(SendMessageRequest(message=Message.user("go")), CallContext())
    assert "could not record the progress of task" in caplog.text
    assert "agent failed" not in caplog.text
    await handler.aclose()


async def test_the_task_is_failed_once_the_store_takes_writes_again(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_execution, "_FAIL_RETRY_FIRST", 0.01)
    store = _Refusing()
    store.refuse_update = 4  # "working" fails, then marking it failed fails 3 times
    handler = _handler(store)
    caplog.set_level(logging.WARNING, logger="a2a_models.server")
    async with asyncio.timeout(10):
        task = await handler.on_send_message(
            SendMessageRequest(message=Message.user("go")), CallContext()
        )
    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.text == "The server could not record the task's progress."
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == [
        f"could not record the progress of task {task.id} ([Errno 28] No space left on device)",
        f"could not mark task {task.id} failed ([Errno 28] No space left on device); trying again",
    ]
    assert f"mark task {task.id} failed: done after 4 attempts" in caplog.text
    await handler.aclose()


async def test_marking_a_task_failed_is_given_up_in_time(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_execution, "_FAIL_RETRY_FIRST", 0.01)
    monkeypatch.setattr(_execution, "_FAIL_RETRY_FOR", 0.3)
    store = _Refusing()
    store.refuse_update = -1  # never again
    handler = _handler(store)
    async with asyncio.timeout(10):
        task = await handler.on_send_message(
            SendMessageRequest(message=Message.user("go")), CallContext()
        )
    assert isinstance(task, Task)
    assert task.status.state is TaskState.SUBMITTED  # all the store has
    assert f"gave up trying to mark task {task.id} failed after" in caplog.text
    assert caplog.text.count("trying again") == 1
    await handler.aclose()


class _NoLeases(SQLiteTaskStore):
    """Fails to hand out leases (its disk failing) while told to."""

    broken = False

    async def acquire_lease(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken:
            raise OSError(5, "Input/output error")
        return await super().acquire_lease(*args, **kwargs)


async def test_a_follow_up_whose_lease_cannot_be_taken_fails_its_task_instead_of_hanging(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def ask(context: Any) -> Any:
        if context.message.text == "start":
            yield context.status(TaskState.INPUT_REQUIRED, "more?")
        else:
            yield context.complete("done")

    store = _NoLeases(":memory:")
    handler = RequestHandler(
        FuncAgent(ask),
        make_card(),
        store=store,
        executor=lambda agent, writer: LeasingExecutor(agent, writer, ttl=5),
    )
    first = await handler.on_send_message(
        SendMessageRequest(message=Message.user("start")), CallContext()
    )
    assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
    store.broken = True
    follow_up = Message.user("go", task_id=first.id, context_id=first.context_id)
    async with asyncio.timeout(10):  # the old code waited for ever here
        answer = await handler.on_send_message(SendMessageRequest(message=follow_up), CallContext())
    assert isinstance(answer, Task)
    assert answer.status.state is TaskState.FAILED
    assert answer.status.message is not None
    assert answer.status.message.text == "The server could not record the task's progress."
    assert f"could not take the lease on task {first.id}" in caplog.text
    await handler.aclose()
    await store.aclose()


class _Locked(InMemoryTaskStore):
    """Every read fails as an SQLite database locked by another process does."""

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")


async def test_a_request_the_store_fails_is_one_line_and_says_the_store_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = AgentServer(FuncAgent(_works), make_card(), store=_Locked())
    body = b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t1"}}'
    reply = await server.handle(body, {"A2A-Version": "1.0"})
    assert isinstance(reply, Reply)
    assert json.loads(reply.body)["error"] == {
        "code": -32603,
        "message": "the task store failed (OperationalError)",
    }
    records = [r for r in caplog.records if r.name == "a2a_models.server"]
    assert [(r.getMessage(), r.exc_info) for r in records] == [
        ("GetTask failed: the task store failed (OperationalError: database is locked)", None)
    ]
    await server.aclose()


def test_only_a_database_drivers_operational_errors_count_as_the_store_failing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    psycopg = pytest.importorskip("psycopg")
    down = error_for(psycopg.OperationalError("connection refused"), "ListTasks")
    assert down.message == "the task store failed (OperationalError)"
    bug = error_for(ValueError("a bug of ours"), "ListTasks")
    assert bug.message == "Internal error"  # the text stays in the log, with the traceback
    assert caplog.records[-1].exc_info is not None


class _Outage(SQLiteTaskStore):
    """Refuses task writes and lease releases while ``down`` (its database gone)."""

    down = False

    async def update(self, *args: Any, **kwargs: Any) -> int:
        if self.down:
            raise sqlite3.OperationalError("disk I/O error")
        return await super().update(*args, **kwargs)

    async def release_lease(self, *args: Any, **kwargs: Any) -> None:
        if self.down:
            raise sqlite3.OperationalError("disk I/O error")
        await super().release_lease(*args, **kwargs)


async def test_a_task_given_up_on_in_an_outage_is_taken_over_once_the_store_is_back(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # The store stays down longer than marking the task failed is tried; the run's
    # lease cannot be released either. Its worker renews every lease it holds: a
    # lease left unreleased never lapsed, and the task stayed working for ever.
    monkeypatch.setattr(_execution, "_FAIL_RETRY_FIRST", 0.01)
    monkeypatch.setattr(_execution, "_FAIL_RETRY_FOR", 0.3)
    caplog.set_level(logging.WARNING, logger="a2a_models.server")
    started: list[str] = []
    gate = asyncio.Event()

    async def waits(context: Any) -> Any:
        yield context.working("step 1")
        started.append(context.task_id)
        await gate.wait()
        yield context.complete("done")

    store = _Outage(str(tmp_path / "tasks.db"))
    handler = RequestHandler(
        FuncAgent(waits),
        make_card(),
        store=store,
        executor=lambda agent, writer: LeasingExecutor(agent, writer, ttl=0.6),
    )
    send = asyncio.create_task(
        handler.on_send_message(SendMessageRequest(message=Message.user("go")), CallContext())
    )
    async with asyncio.timeout(10):
        while not started:
            await asyncio.sleep(0.01)
        (task_id,) = started
        store.down = True
        gate.set()
        while f"gave up trying to mark task {task_id} failed" not in caplog.text:
            await asyncio.sleep(0.01)
        answer = await send
        assert isinstance(answer, Task)
        assert answer.status.state is TaskState.WORKING  # all the store has
        store.down = False
        while True:  # the keeper releases the lease, then the task is taken over
            stored = await store.get(task_id, None)
            assert stored is not None
            if stored.task.status.state is not TaskState.WORKING:
                break
            await asyncio.sleep(0.05)
    assert stored.task.status.state is TaskState.FAILED
    assert stored.task.status.message is not None
    assert stored.task.status.message.text == "the agent process stopped while working on this task"
    assert f"could not release the lease on task {task_id}; will try again" in caplog.text
    assert f"released the lease on task {task_id} at last" in caplog.text
    await handler.aclose()
    await store.aclose()
