"""OpenTelemetry traces and metrics for A2A servers and clients (extra ``otel``).

Nothing here is active until :func:`instrument` runs (``a2a-models serve
--otel`` and :func:`~a2a_models.adapters.http.build_agent_server` call
:func:`instrument_if_configured`, which instruments only when an SDK tracer
provider is already set). Uninstrumented, the server and client pay one
``None`` check per call; ``import a2a_models`` never imports OpenTelemetry.

Instrumented:

* every A2A server operation of every binding (one ``SERVER`` span each, named
  ``lf.a2a.v1.A2AService/<Method>``, with the RPC and ``a2a.*`` attributes), its
  caller's W3C ``traceparent``/``tracestate`` as parent;
* every client call (a ``CLIENT`` span; the trace context is injected into the
  outgoing headers or gRPC metadata);
* the metrics ``rpc.server.call.duration``, ``rpc.client.call.duration`` (s),
  (whose count is the request count by method and outcome) and ``a2a.server.active_streams``.

See docs/observability.md for every span, attribute and metric.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncGenerator, Awaitable, MutableMapping
from typing import Any, Final, TypeVar

from ._logs import JSONLogFormatter

_T = TypeVar("_T")

__all__ = [
    "USAGE_METADATA_KEY",
    "JSONLogFormatter",
    "configure_sdk_from_env",
    "instrument",
    "instrument_if_configured",
    "inject_trace_context",
    "instrumented",
    "log_json_lines",
    "record_mcp_call",
    "traced_push",
    "traced_model_call",
    "traced_tool_call",
    "uninstrument",
]

#: The metadata key under which an agent reports the tokens a turn used, on the
#: status update ending the turn: ``{"inputTokens": int, "outputTokens": int}``
#: (the LLM adapter writes it; ``a2a-models send`` shows it).
USAGE_METADATA_KEY: Final = "a2a_models.usage"

_installed = False


def instrument(
    *, tracer_provider: Any = None, meter_provider: Any = None, store_spans: bool = False
) -> None:
    """Trace and measure every A2A server operation and client call from now on.

    ``tracer_provider`` / ``meter_provider`` default to the global ones of
    ``opentelemetry-api``. Clients made before the call are not traced.
    ``store_spans`` adds an ``a2a.store.<operation>`` span per task-store call
    of servers made from now on (several per request: off by default).
    Calling it again replaces the providers. Needs the ``otel`` extra.
    """
    global _installed
    try:
        from . import _otel
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "a2a_models.observability needs OpenTelemetry: pip install 'a2a-models[otel]'"
        ) from exc
    _otel.install(tracer_provider, meter_provider, store_spans)
    _installed = True


def uninstrument() -> None:
    """Remove the instrumentation :func:`instrument` installed (clients made since keep theirs)."""
    global _installed
    if not _installed:
        return
    from . import _otel

    _otel.uninstall()
    _installed = False


def instrumented() -> bool:
    """Whether :func:`instrument` is in effect."""
    return _installed


def instrument_if_configured() -> bool:
    """:func:`instrument` when an OpenTelemetry SDK tracer provider is set; whether it did.

    Checks without importing OpenTelemetry when nothing imported it yet, so
    a process without OpenTelemetry (or with only the no-op API) pays nothing.
    """
    if _installed:
        return True
    if "opentelemetry.trace" not in sys.modules:
        return False
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return False
    instrument()
    return True


def configure_sdk_from_env() -> None:
    """Set the global OpenTelemetry SDK providers from the standard ``OTEL_*`` variables.

    ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
    ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` (``console``,
    ``otlp``, ... or ``none``; unset: no exporter), ``OTEL_TRACES_SAMPLER`` and
    the exporters' own variables, as ``opentelemetry-instrument`` reads them.
    Then :func:`instrument`. Needs ``opentelemetry-sdk`` (and the exporters named).
    """
    try:
        from opentelemetry.sdk._configuration import _OTelSDKConfigurator
    except ImportError as exc:
        raise ImportError(
            "--otel needs the OpenTelemetry SDK: pip install opentelemetry-sdk "
            "(and the exporter you name in OTEL_TRACES_EXPORTER, e.g. "
            "opentelemetry-exporter-otlp)"
        ) from exc
    # The SDK's own environment configurator (what opentelemetry-distro runs);
    # private by name, but the one implementation of the OTEL_* variables.
    _OTelSDKConfigurator().configure()  # type: ignore[no-untyped-call]
    instrument()


def log_json_lines(level: int = logging.INFO) -> None:
    """Send the ``a2a_models`` loggers' records to stderr as :class:`JSONLogFormatter` lines.

    With :func:`instrument` in effect each line carries ``trace_id``,
    ``span_id``, ``task_id`` and ``context_id``. Called by ``serve --otel``.
    """
    logger = logging.getLogger("a2a_models")
    if any(isinstance(h.formatter, JSONLogFormatter) for h in logger.handlers):
        return
    handler = logging.StreamHandler()
    handler.setFormatter(JSONLogFormatter())
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False


def traced_model_call(
    events: AsyncGenerator[_T, None],
    *,
    provider: str,
    model: str,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> AsyncGenerator[_T, None]:
    """``events`` of one model call, inside a GenAI ``chat`` span when instrumented.

    The span (``gen_ai.*`` attributes) ends with the stream; the ``Finish``
    event's usage becomes ``gen_ai.usage.*`` and the ``gen_ai.client.token.usage``
    metric. Uninstrumented, ``events`` is returned as it is.
    """
    if not _installed:
        return events
    from . import _otel

    return _otel.model_call(events, provider, model, temperature, max_tokens)


def traced_tool_call(
    events: AsyncGenerator[_T, None], *, name: str, call_id: str | None = None
) -> AsyncGenerator[_T, None]:
    """``events`` of one tool call, inside an ``execute_tool`` span when instrumented."""
    if not _installed:
        return events
    from . import _otel

    return _otel.tool_call(events, name, call_id)


def record_mcp_call(tool: str, server: str, seconds: float, error: BaseException | None) -> None:
    """Count one MCP ``tools/call`` in ``mcp.client.operation.duration`` (when instrumented).

    The MCP SDK makes the call's spans and carries the trace context itself.
    """
    if _installed:
        from . import _otel

        _otel.mcp_call(tool, server, seconds, error)


def inject_trace_context(headers: MutableMapping[str, str]) -> None:
    """Add the current W3C ``traceparent``/``tracestate`` to ``headers`` (when instrumented)."""
    if _installed:
        from opentelemetry import propagate

        propagate.inject(headers)


async def traced_push(task_id: str, delivery: Awaitable[None]) -> None:
    """Await a push-notification ``delivery`` in a ``CLIENT`` span, counting its outcome
    in ``a2a.server.push.deliveries`` (when instrumented)."""
    if not _installed:
        await delivery
        return
    from . import _otel

    await _otel.push(task_id, delivery)
