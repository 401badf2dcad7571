"""The echo agent, served with the least per-request tracing there can be (``bench/otel.py --floor``).

``a2a-models serve --otel --agent bench_span_floor:Echo``: importing this module
(which ``serve`` does after ``--otel`` has configured the OpenTelemetry SDK and
instrumented the server) replaces the server's dispatch interceptor with one
that only starts and ends one SDK span per request, named and attributed as
the real one at its start: no current-context switch, no metric, no result
attributes, no log context. Any tracing that records a span per request pays
at least this; ``bench/otel.py`` shows it beside the real default level.
"""

from __future__ import annotations

from typing import Any

from bench_echo_agent import Echo
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from a2a_models.observability import _otel
from a2a_models.server import set_dispatch_interceptor

__all__ = ["Echo"]

_tracer = trace.get_tracer("bench_span_floor")


async def _span_only(
    call_operation: Any,
    ops: Any,
    spec: Any,
    params: Any,
    call: Any,
    after_seq: int | None,
    binding: str,
) -> Any:
    # The real interceptor's span name and attributes, made once per method as it makes them.
    method = _otel._METHODS.get((binding, spec.name, call.version)) or _otel._method(
        binding, spec.name, call.version
    )
    span = _tracer.start_span(method.span_name, kind=SpanKind.SERVER, attributes=method.attributes)
    try:
        return await call_operation(ops, spec, params, call, after_seq)
    finally:
        span.end()


set_dispatch_interceptor(_span_only)
