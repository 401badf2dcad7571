"""Shared pieces of the observability tests: in-memory OpenTelemetry providers, agents, a card."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from a2a_models import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a_models.server import Agent, AgentEvent, RequestContext

_GLOBAL: list[tuple[InMemorySpanExporter, TracerProvider]] = []


def _global_tracing() -> tuple[InMemorySpanExporter, TracerProvider]:
    """One global SDK tracer provider for the process (libraries such as the MCP SDK
    trace with the global one; it can be set only once)."""
    if not _GLOBAL:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        _GLOBAL.append((exporter, provider))
    return _GLOBAL[0]


class Telemetry:
    """The spans and metrics recorded while instrumented."""

    def __init__(self) -> None:
        self.exporter, self.tracer_provider = _global_tracing()
        self.exporter.clear()
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def points(self, metric: str) -> list[Any]:
        """Data points of ``metric`` (each with ``attributes`` and a value)."""
        data = self.reader.get_metrics_data()
        out: list[Any] = []
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    if item.name == metric:
                        out.extend(item.data.data_points)
        return out


def card(name: str) -> AgentCard:
    return AgentCard(
        name=name,
        description=f"agent {name}",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url="http://placeholder/", protocol_binding=b, protocol_version="1.0")
            for b in ("JSONRPC", "HTTP+JSON")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="s", description="s", tags=["t"])],
    )


class Echo(Agent):
    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.artifact(f"b: {context.message.text}")
        yield context.complete()
