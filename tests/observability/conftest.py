"""In-memory OpenTelemetry SDK providers for the observability tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from a2a_models import observability


class Telemetry:
    """The spans and metrics recorded while instrumented."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
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


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    t = Telemetry()
    observability.instrument(tracer_provider=t.tracer_provider, meter_provider=t.meter_provider)
    try:
        yield t
    finally:
        observability.uninstrument()
        t.tracer_provider.shutdown()
        t.meter_provider.shutdown()
