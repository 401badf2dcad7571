"""Server span attributes from the request and from the result, per binding and protocol
version (the instrumentation caches what a (binding, method, version) shares)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from _otel_support import Telemetry, card
from opentelemetry.trace import SpanKind

from a2a_models import GetTaskRequest, Message, SendMessageRequest, Task
from a2a_models.protocol import METHODS
from a2a_models.server import (
    Agent,
    AgentEvent,
    CallContext,
    RequestContext,
    RequestHandler,
    dispatch,
)

SERVICE = "lf.a2a.v1.A2AService"


class Replier(Agent):
    """``task``: a completed task; anything else: one agent message (no task)."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        if context.message.text == "task":
            yield context.complete("done")
        else:
            yield context.reply("hello")


async def _call(
    handler: RequestHandler, method: str, params: Any, version: str = "1.0", binding: str = ""
) -> Any:
    return await dispatch(
        handler, METHODS[method], params, CallContext(version=version), binding=binding
    )


def _last(telemetry: Telemetry, method: str) -> dict[str, Any]:
    spans = [s for s in telemetry.named(f"{SERVICE}/{method}") if s.kind is SpanKind.SERVER]
    return dict(spans[-1].attributes or {})


async def test_a_message_answer_adds_the_context_the_request_did_not_name(
    telemetry: Telemetry,
) -> None:
    handler = RequestHandler(Replier(), card("m"))
    answer = await _call(handler, "SendMessage", SendMessageRequest(message=Message.user("hi")))
    assert isinstance(answer, Message) and answer.context_id
    assert _last(telemetry, "SendMessage") == {
        "rpc.system": "inprocess",
        "rpc.method": "SendMessage",
        "a2a.protocol.version": "1.0",
        "a2a.context.id": answer.context_id,
    }


async def test_a_task_answer_sets_its_id_state_and_context(telemetry: Telemetry) -> None:
    handler = RequestHandler(Replier(), card("t"))
    request = SendMessageRequest(message=Message.user("task", context_id="ctx-1"))
    task = await _call(handler, "SendMessage", request, binding="jsonrpc")
    assert isinstance(task, Task) and task.context_id == "ctx-1"
    assert _last(telemetry, "SendMessage") == {
        "rpc.system": "jsonrpc",
        "rpc.method": "SendMessage",
        "a2a.protocol.version": "1.0",
        "a2a.task.id": task.id,
        "a2a.context.id": "ctx-1",
        "a2a.task.state": "TASK_STATE_COMPLETED",
    }
    # GetTask names the task; the result adds its context and state.
    got = await _call(handler, "GetTask", GetTaskRequest(id=task.id), binding="jsonrpc")
    assert isinstance(got, Task)
    assert _last(telemetry, "GetTask") == {
        "rpc.system": "jsonrpc",
        "rpc.method": "GetTask",
        "a2a.protocol.version": "1.0",
        "a2a.task.id": task.id,
        "a2a.context.id": "ctx-1",
        "a2a.task.state": "TASK_STATE_COMPLETED",
    }


async def test_each_binding_and_version_keeps_its_own_attributes(telemetry: Telemetry) -> None:
    handler = RequestHandler(Replier(), card("v"))
    seen = []
    for binding, version in [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("http", "0.3")] * 2:
        request = SendMessageRequest(message=Message.user("hi"))
        await _call(handler, "SendMessage", request, version=version, binding=binding)
        attributes = _last(telemetry, "SendMessage")
        seen.append((attributes["rpc.system"], attributes["a2a.protocol.version"]))
    assert seen == [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("http", "0.3")] * 2
    points = telemetry.points("rpc.server.call.duration")
    counts = {(p.attributes["rpc.system"], p.attributes["outcome"]): p.count for p in points}
    assert counts == {("jsonrpc", "ok"): 4, ("http", "ok"): 2}
