"""Detail levels: ``requests`` (the default) makes no turn spans yet keeps the
agent's work in the request's trace; a turn run outside the request's span (as
a worker process runs a queued turn) continues the caller's trace."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from _otel_support import Telemetry, card
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from a2a_models import Message, SendMessageRequest, Task, observability
from a2a_models.adapters.http import HTTPClient, HTTPServer
from a2a_models.server import (
    Agent,
    AgentEvent,
    AgentServer,
    CallContext,
    RequestContext,
    RequestHandler,
)

SEND = "lf.a2a.v1.A2AService/SendMessage"
TRACE_ID = 0x0AF7651916CD43DD8448EB211C80319C
SPAN_ID = 0xB7AD6B7169203331
TRACEPARENT = f"00-{TRACE_ID:032x}-{SPAN_ID:016x}-01"


class Seer(Agent):
    """Completes, remembering the span current while it ran."""

    def __init__(self) -> None:
        self.seen: list[trace.SpanContext] = []

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.seen.append(trace.get_current_span().get_span_context())
        yield context.complete("ok")


def _level(telemetry: Telemetry, detail: str) -> None:
    observability.instrument(
        tracer_provider=telemetry.tracer_provider,
        meter_provider=telemetry.meter_provider,
        detail=detail,
    )


async def test_requests_level_has_no_turn_spans_but_the_agent_runs_in_the_server_span(
    telemetry: Telemetry,
) -> None:
    _level(telemetry, observability.DEFAULT_DETAIL)
    seer = Seer()
    async with HTTPServer(AgentServer(seer, card("r"))) as server:
        async with HTTPClient(server.url + "/") as client:
            task = await client.send_message(Message.user("x"))
    assert isinstance(task, Task)
    assert not telemetry.named("a2a.agent.turn")
    (span,) = [s for s in telemetry.named(SEND) if s.kind is SpanKind.SERVER]
    (seen,) = seer.seen
    assert seen.span_id == span.context.span_id  # the agent's own spans nest under it


@pytest.mark.parametrize("detail", ["requests", "turns"])
async def test_a_turn_outside_the_request_span_continues_the_callers_trace(
    telemetry: Telemetry, detail: str
) -> None:
    _level(telemetry, detail)
    seer = Seer()
    # The engine without the dispatch (no server span), as a worker runs a turn.
    handler = RequestHandler(seer, card("w"))
    call = CallContext(trace=(("traceparent", TRACEPARENT),))
    task = await handler.on_send_message(SendMessageRequest(message=Message.user("x")), call)
    assert isinstance(task, Task)
    (seen,) = seer.seen
    assert seen.trace_id == TRACE_ID
    turns = telemetry.named("a2a.agent.turn")
    if detail == "requests":
        assert not turns and seen.span_id == SPAN_ID
    else:
        (turn,) = turns
        assert turn.parent is not None and turn.parent.span_id == SPAN_ID
        assert turn.context.trace_id == TRACE_ID and seen.span_id == turn.context.span_id


def test_unknown_detail_levels_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="detail must be one of requests, turns, store"):
        observability.instrument(detail="everything")
    assert not observability.instrumented()
    monkeypatch.setenv(observability.DETAIL_ENV, "all")
    with pytest.raises(ValueError, match="A2A_OTEL_DETAIL must be one of"):
        observability.configure_sdk_from_env()
