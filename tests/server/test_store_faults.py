"""Fault injection: the store fails one call, for every call a run of requests makes.

Whatever call fails, every request answers (a result or an error, never a wait
for ever), and once the store works again no task is left submitted or working
with nobody to finish it. In process (memory store) and with leases (SQLite).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from a2a_models import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_models.errors import A2AError
from a2a_models.server import (
    CallContext,
    InMemoryTaskStore,
    LeasingExecutor,
    RequestHandler,
    _execution,
)
from a2a_models.stores import SQLiteTaskStore

from ._support import FuncAgent, RecordingSender, make_card, send

STEP_TIMEOUT = 5.0


class StoreDown(OSError):
    """What the faulty store raises."""


def _faulty(base: type) -> type:
    """``base`` with every coroutine method able to fail: the calls numbered from
    ``fail_at`` (1 is the first), ``width`` of them in a row."""

    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if 0 < self.fail_at <= self.calls < self.fail_at + self.width:
                self.failed = name
                raise StoreDown(f"injected failure of {name}")
            return await method(self, *args, **kwargs)

        return call

    methods = {
        name: wrap(name, method)
        for name, method in inspect.getmembers(base, inspect.iscoroutinefunction)
        if not name.startswith("_") and name not in ("open", "aclose")
    }
    methods.update(calls=0, fail_at=0, width=1, failed="")
    return type(f"Faulty{base.__name__}", (base,), methods)


FaultyMemory = _faulty(InMemoryTaskStore)
FaultySQLite = _faulty(SQLiteTaskStore)


async def _agent(context: Any) -> Any:
    if context.message.text == "ask":
        yield context.status(TaskState.INPUT_REQUIRED, "more?")
        return
    yield context.working("step")
    yield context.artifact("the result", name="report")
    yield context.complete("done")


def _handler(kind: str) -> tuple[RequestHandler, Any]:
    if kind == "memory":
        store = FaultyMemory()
        handler = RequestHandler(
            FuncAgent(_agent), make_card(), store=store, push_sender=RecordingSender()
        )
        return handler, store
    store = FaultySQLite(":memory:")
    handler = RequestHandler(
        FuncAgent(_agent),
        make_card(),
        store=store,
        push_sender=RecordingSender(),
        executor=lambda agent, writer: LeasingExecutor(agent, writer, ttl=5),
    )
    return handler, store


async def _scenario(handler: RequestHandler) -> list[str]:
    """Every kind of request once; what each gave (the test only needs each to end)."""
    outcomes: list[str] = []
    call = CallContext()

    async def step(what: str, coro: Any) -> Any:
        try:
            async with asyncio.timeout(STEP_TIMEOUT):
                result = await coro
        except TimeoutError:
            pytest.fail(f"{what} did not answer within {STEP_TIMEOUT} s")
        except (A2AError, StoreDown) as exc:
            outcomes.append(f"{what}: {type(exc).__name__}")
            return None
        outcomes.append(f"{what}: ok")
        return result

    asked = await step(
        "send ask", handler.on_send_message(SendMessageRequest(message=Message.user("ask")), call)
    )
    if isinstance(asked, Task):
        follow_up = Message.user("go", task_id=asked.id, context_id=asked.context_id)
        await step(
            "follow-up", handler.on_send_message(SendMessageRequest(message=follow_up), call)
        )
        await step("get", handler.on_get_task(GetTaskRequest(id=asked.id), call))

    async def stream() -> None:
        events = await handler.on_send_streaming_message(
            SendMessageRequest(message=Message.user("work")), call
        )
        async for _ in events:
            pass

    await step("stream", stream())
    await step("list", handler.on_list_tasks(ListTasksRequest(), call))
    hook = TaskPushNotificationConfig(url="https://client.example/hook", token="t")
    await step("send with a webhook", handler.on_send_message(send("work", push=hook), call))
    waiting = await step(
        "send ask again",
        handler.on_send_message(SendMessageRequest(message=Message.user("ask")), call),
    )
    if isinstance(waiting, Task):
        config = await step(
            "set webhook",
            handler.on_create_task_push_notification_config(
                TaskPushNotificationConfig(url="https://client.example/b", task_id=waiting.id), call
            ),
        )
        await step(
            "list webhooks",
            handler.on_list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=waiting.id), call
            ),
        )
        if isinstance(config, TaskPushNotificationConfig):
            await step(
                "delete webhook",
                handler.on_delete_task_push_notification_config(
                    DeleteTaskPushNotificationConfigRequest(task_id=waiting.id, id=config.id), call
                ),
            )
        await step("cancel", handler.on_cancel_task(CancelTaskRequest(id=waiting.id), call))
    return outcomes


async def _settled_states(handler: RequestHandler, store: Any) -> dict[str, TaskState]:
    """The stored tasks' states once every run is over (the store working again)."""
    store.fail_at = 0
    async with asyncio.timeout(15):
        await handler.idle()
    listed = await store.list(None, page_size=100)
    return {t.id: t.status.state for t in listed.tasks}


@pytest.mark.parametrize("width", [1, 2], ids=["one call fails", "two calls in a row fail"])
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_whatever_store_call_fails_every_request_answers_and_no_task_is_stranded(
    kind: str, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_execution, "_FAIL_RETRY_FIRST", 0.01)
    handler, store = _handler(kind)
    baseline = await _scenario(handler)  # no failure: how many store calls it makes
    assert baseline == [
        "send ask: ok",
        "follow-up: ok",
        "get: ok",
        "stream: ok",
        "list: ok",
        "send with a webhook: ok",
        "send ask again: ok",
        "set webhook: ok",
        "list webhooks: ok",
        "delete webhook: ok",
        "cancel: ok",
    ]
    states = await _settled_states(handler, store)
    assert sorted(state.name for state in states.values()) == [
        "CANCELED",
        "COMPLETED",
        "COMPLETED",
        "COMPLETED",
    ]
    total = store.calls
    await handler.aclose()
    assert total > 10
    for fail_at in range(1, total + 1):
        handler, store = _handler(kind)
        store.fail_at, store.width = fail_at, width
        outcomes = await _scenario(handler)
        states = await _settled_states(handler, store)
        stranded = {
            task_id: state
            for task_id, state in states.items()
            if state in (TaskState.SUBMITTED, TaskState.WORKING)
        }
        assert not stranded, (fail_at, store.failed, outcomes, stranded)
        await handler.aclose()
        if kind == "sqlite":
            await store.aclose()
