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
import os
import sys
from collections.abc import AsyncGenerator, Awaitable, Mapping, MutableMapping
from typing import Any, Final, TypeVar

from ._logs import JSONLogFormatter

_T = TypeVar("_T")

__all__ = [
    "DEFAULT_DETAIL",
    "DETAIL_ENV",
    "DETAIL_LEVELS",
    "USAGE_METADATA_KEY",
    "USAGE_TURNS_KEPT",
    "JSONLogFormatter",
    "add_usage",
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

#: The metadata key of a task's token usage, in the task's ``metadata`` and on
#: the status update ending each turn: the totals of all the task's turns so far,
#: their count and the entries of the most recent turns, oldest first (see
#: :func:`add_usage`). The LLM adapter writes it; ``a2a-models send`` and ``get``
#: show it.
USAGE_METADATA_KEY: Final = "a2a_models.usage"

#: How many recent turns' entries :func:`add_usage` keeps (older turns stay in
#: the totals): the value is written with every turn, so it must not grow with
#: the conversation.
USAGE_TURNS_KEPT: Final = 50

_USAGE_KEYS = ("inputTokens", "outputTokens")


def _count(value: object) -> int | None:
    return value if type(value) is int else None  # not bool


def add_usage(
    previous: object, turn: Mapping[str, int], *, keep: int = USAGE_TURNS_KEPT
) -> dict[str, Any]:
    """A task's usage after one more turn: ``previous`` (its :data:`USAGE_METADATA_KEY`
    value, or anything else for none) with ``turn`` added.

    ``turn`` is ``{"inputTokens": int, "outputTokens": int}`` (either may be
    missing: not reported). The result is the totals of every turn,
    ``turnCount`` (the turns added so far) and ``turns``, the entries of the
    last ``keep`` turns, oldest first::

        {"inputTokens": 150, "outputTokens": 40, "turnCount": 2,
         "turns": [{"inputTokens": 100, "outputTokens": 30},
                   {"inputTokens": 50, "outputTokens": 10}]}
    """
    if keep < 1:
        raise ValueError(f"keep must be at least 1, not {keep!r}")
    before: Mapping[str, Any] = previous if isinstance(previous, Mapping) else {}
    earlier = before.get("turns")
    earlier = earlier if isinstance(earlier, list) else []
    out: dict[str, Any] = {}
    for key in _USAGE_KEYS:
        total = _count(before.get(key))
        if total is None:  # a value without totals: its entries are all its turns
            counts = [
                c
                for t in earlier
                if isinstance(t, Mapping) and (c := _count(t.get(key))) is not None
            ]
            total = sum(counts) if counts else None
        added = _count(turn.get(key))
        if total is not None or added is not None:
            out[key] = (total or 0) + (added or 0)
    count = _count(before.get("turnCount"))
    out["turnCount"] = (len(earlier) if count is None else count) + 1
    out["turns"] = [*earlier[-(keep - 1) :], dict(turn)] if keep > 1 else [dict(turn)]
    return out


_installed = False


#: The detail levels of :func:`instrument`, each adding spans to the one before:
#: ``requests`` (a span per A2A request and client call, model and tool
#: calls, push deliveries; every metric), ``turns`` (an ``a2a.agent.turn``
#: span per agent turn) and ``store`` (an ``a2a.store.<operation>`` span per
#: task-store call). docs/observability.md says what each costs.
DETAIL_LEVELS: Final = ("requests", "turns", "store")

#: The environment variable ``serve --otel`` reads the detail level from.
DETAIL_ENV: Final = "A2A_OTEL_DETAIL"

DEFAULT_DETAIL: Final = "requests"


def instrument(
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    detail: str = DEFAULT_DETAIL,
) -> None:
    """Trace and measure every A2A server operation and client call from now on.

    ``tracer_provider`` / ``meter_provider`` default to the global ones of
    ``opentelemetry-api``. Clients made before the call are not traced.
    ``detail`` is one of :data:`DETAIL_LEVELS` (store spans apply to servers
    made from now on). Calling it again replaces the providers and the level.
    Needs the ``otel`` extra.
    """
    global _installed
    if detail not in DETAIL_LEVELS:
        raise ValueError(f"detail must be one of {', '.join(DETAIL_LEVELS)}, not {detail!r}")
    try:
        from . import _otel
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "a2a_models.observability needs OpenTelemetry: pip install 'a2a-models[otel]'"
        ) from exc
    _otel.install(tracer_provider, meter_provider, DETAIL_LEVELS.index(detail))
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
    Then :func:`instrument`, at the detail level ``A2A_OTEL_DETAIL`` names
    (default ``requests``). Needs ``opentelemetry-sdk`` (and the exporters named).
    """
    detail = os.environ.get(DETAIL_ENV) or DEFAULT_DETAIL
    if detail not in DETAIL_LEVELS:
        raise ValueError(f"{DETAIL_ENV} must be one of {', '.join(DETAIL_LEVELS)}, not {detail!r}")
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
    instrument(detail=detail)


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
