"""In-memory OpenTelemetry SDK providers for the observability tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("opentelemetry.sdk")

from _otel_support import Telemetry

from a2a_models import observability


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    t = Telemetry()
    observability.instrument(
        tracer_provider=t.tracer_provider, meter_provider=t.meter_provider, detail="turns"
    )
    try:
        yield t
    finally:
        observability.uninstrument()
        t.meter_provider.shutdown()
