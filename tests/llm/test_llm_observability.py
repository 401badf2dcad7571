"""The LLM adapter under OpenTelemetry: GenAI chat spans with token usage, execute_tool
spans, the token metric, and the turn's usage on the status update ending it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from a2a_models import TaskStatusUpdateEvent, observability
from a2a_models.observability import USAGE_METADATA_KEY

from .conftest import MODEL_NAMES, ModelFactory
from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn
from .test_orchestration import artifact_turn, make_agent, route, stream


@pytest.fixture
def recorded() -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    observability.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        yield exporter, reader
    finally:
        observability.uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()


def _points(reader: InMemoryMetricReader, name: str) -> list[Any]:
    data = reader.get_metrics_data()
    assert data is not None
    return [
        p
        for r in data.resource_metrics
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == name
        for p in m.data.data_points
    ]


async def test_model_calls_and_tools_are_spans_and_usage_reaches_the_task(
    scripted_server: ScriptedModelServer,
    make_model: ModelFactory,
    provider: str,
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader],
) -> None:
    exporter, reader = recorded
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall("lookup", {"city": "Paris"})], usage=(100, 20)),
        artifact_turn("Paris: sunny."),
    )
    events, _ = await stream(make_agent(make_model()))
    final = events[-1]
    assert isinstance(final, TaskStatusUpdateEvent) and final.status.state.name == "COMPLETED"
    # the turn (the tool loop: 2 model calls, routing excluded) reports its tokens
    turn = {"inputTokens": 111, "outputTokens": 27}
    assert final.metadata == {USAGE_METADATA_KEY: {**turn, "turnCount": 1, "turns": [turn]}}

    spans = exporter.get_finished_spans()
    model = MODEL_NAMES[provider]
    chats = [s for s in spans if s.name == f"chat {model}"]
    assert len(chats) == 3  # routing, the lookup turn, the artifact turn
    system = "anthropic" if provider == "anthropic" else "openai"
    for chat in chats:
        attributes = chat.attributes or {}
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.system"] == system
        assert attributes["gen_ai.request.model"] == model
    usages = sorted(
        (
            (c.attributes or {})["gen_ai.usage.input_tokens"],
            (c.attributes or {})["gen_ai.usage.output_tokens"],
        )
        for c in chats
    )
    assert usages == [(11, 7), (11, 7), (100, 20)]
    (tool,) = [s for s in spans if s.name == "execute_tool lookup"]
    assert (tool.attributes or {})["gen_ai.tool.name"] == "lookup"
    assert tool.context.trace_id == chats[0].context.trace_id  # one trace with the request
    (server,) = [
        s
        for s in spans
        if s.name == "lf.a2a.v1.A2AService/SendStreamingMessage" and s.kind.name == "SERVER"
    ]
    assert server.context.trace_id == tool.context.trace_id

    tokens = {
        p.attributes["gen_ai.token.type"]: p.sum
        for p in _points(reader, "gen_ai.client.token.usage")
    }
    assert tokens == {"input": 122, "output": 34}
