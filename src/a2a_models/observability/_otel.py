"""The OpenTelemetry side of :mod:`a2a_models.observability` (imported by ``instrument``)."""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import time
from collections.abc import AsyncGenerator, Awaitable
from typing import Any

import attrs
from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .. import models as m
from ..client import A2AClient, ClientCall, ClientInterceptor, set_default_interceptors
from ..errors import JSONRPCError
from ..protocol import MethodSpec
from ..server import CallContext, request_ids, set_dispatch_interceptor, set_engine_observer
from ..server import EventStream as ServerEventStream

SCOPE = "a2a_models"

#: ``(task id, context id)`` of the request or agent turn being handled.
_TASK: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "a2a_models_task", default=("", "")
)
SERVICE = "lf.a2a.v1.A2AService"
#: ``_Instruments.detail`` levels (indexes of ``DETAIL_LEVELS``).
_TURNS = 1
_STORE = 2

#: ``A2AClient.binding`` -> ``rpc.system``.
_CLIENT_SYSTEMS = {"JSONRPC": "jsonrpc", "HTTP+JSON": "http", "GRPC": "grpc"}


class _Instruments:
    """The tracer and the metric instruments, made once per :func:`install`."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        from .. import __version__

        #: 0 requests, 1 turns, 2 store (``DETAIL_LEVELS``).
        self.detail = 0
        self.tracer = trace.get_tracer(SCOPE, __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, __version__, meter_provider=meter_provider)
        self.server_duration = meter.create_histogram(
            "rpc.server.call.duration",
            unit="s",
            description="Duration of an incoming A2A operation (until a stream is accepted); "
            "its count is the number of requests by rpc.method and outcome",
        )
        self.client_duration = meter.create_histogram(
            "rpc.client.call.duration",
            unit="s",
            description="Duration of an outgoing A2A call (a stream: until it ends)",
        )
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used per model call, by gen_ai.token.type (input/output)",
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of a model call",
        )
        self.mcp_duration = meter.create_histogram(
            "mcp.client.operation.duration",
            unit="s",
            description="Duration of an MCP tools/call, by tool and outcome",
        )
        self.push_deliveries = meter.create_counter(
            "a2a.server.push.deliveries",
            unit="{notification}",
            description="Push notifications delivered (or given up, or not sent on their own: "
            "coalesced, dropped, skipped), by outcome",
        )
        # Observed when collected, from plain counts kept per request: an
        # up-down counter's add() per state change costs a measurement each.
        meter.create_observable_up_down_counter(
            "a2a.server.active_tasks",
            callbacks=[_observe(_active_tasks)],
            unit="{task}",
            description="Tasks in a non-terminal state, by a2a.task.state (this process's changes)",
        )
        meter.create_observable_up_down_counter(
            "a2a.server.active_streams",
            callbacks=[_observe(_active_streams)],
            unit="{stream}",
            description="Open SendStreamingMessage / SubscribeToTask streams",
        )


#: Counts behind the observable up-down counters, by attribute pairs.
_active_tasks: dict[tuple[tuple[str, str], ...], int] = {}
_active_streams: dict[tuple[tuple[str, str], ...], int] = {}


def _observe(counts: dict[tuple[tuple[str, str], ...], int]) -> Any:
    def callback(options: Any) -> list[metrics.Observation]:
        return [metrics.Observation(value, dict(key)) for key, value in counts.items()]

    return callback


_instruments: _Instruments | None = None


def install(tracer_provider: Any, meter_provider: Any, detail: int) -> None:
    global _instruments
    _active_tasks.clear()
    _active_streams.clear()
    _instruments = _Instruments(tracer_provider, meter_provider)
    _instruments.detail = detail
    _install_log_context()
    set_dispatch_interceptor(_intercept)
    set_engine_observer(_EngineObserver())
    set_default_interceptors([_TracingInterceptor])


def uninstall() -> None:
    global _instruments
    _uninstall_log_context()
    set_dispatch_interceptor(None)
    set_engine_observer(None)
    set_default_interceptors(())
    _instruments = None


def current() -> _Instruments | None:
    """The installed instruments (``None``: not instrumented)."""
    return _instruments


# ----------------------------------------------------------------- attributes


def request_attributes(params: Any) -> dict[str, str]:
    """``a2a.task.id`` / ``a2a.context.id`` named by a request."""
    task_id, context_id = request_ids(params)
    out: dict[str, str] = {}
    if task_id:
        out["a2a.task.id"] = task_id
    if context_id:
        out["a2a.context.id"] = context_id
    return out


def result_attributes(result: Any) -> dict[str, str]:
    """``a2a.task.*`` of a task or message result."""
    if isinstance(result, m.Task):
        out = {"a2a.task.id": result.id, "a2a.task.state": result.status.state.value}
        if result.context_id:
            out["a2a.context.id"] = result.context_id
        return out
    if isinstance(result, m.Message) and result.context_id:
        out = {"a2a.context.id": result.context_id}
        if result.task_id:
            out["a2a.task.id"] = result.task_id
        return out
    return {}


def _error_type(exc: BaseException) -> str:
    return type(exc).__name__


def _fail(span: Any, exc: BaseException) -> None:
    span.set_attribute("error.type", _error_type(exc))
    if isinstance(exc, JSONRPCError):
        span.set_attribute("rpc.jsonrpc.error_code", exc.code)
    span.set_status(Status(StatusCode.ERROR, str(exc)[:200] or _error_type(exc)))


# ----------------------------------------------------------------- server


async def _intercept(
    call_operation: Any,
    ops: Any,
    spec: MethodSpec,
    params: Any,
    call: CallContext,
    after_seq: int | None,
    binding: str,
) -> Any:
    instruments = _instruments
    if instruments is None:  # uninstalled meanwhile
        return await call_operation(ops, spec, params, call, after_seq)
    method = _METHODS.get((binding, spec.name, call.version)) or _method(
        binding, spec.name, call.version
    )
    task_id, context_id = ids = request_ids(params)
    attributes = method.attributes  # shared (never mutated) when the request names no ids
    if task_id or context_id:
        attributes = dict(attributes)
        if task_id:
            attributes["a2a.task.id"] = task_id
        if context_id:
            attributes["a2a.context.id"] = context_id
    span = instruments.tracer.start_span(
        method.span_name,
        propagate.extract(dict(call.trace)) if call.trace else None,
        kind=SpanKind.SERVER,
        attributes=attributes,
    )
    ctx = trace.set_span_in_context(span)
    token = otel_context.attach(ctx)
    task_token = _TASK.set(ids)
    start = time.perf_counter()
    try:
        result = await call_operation(ops, spec, params, call, after_seq)
    except BaseException as exc:
        _fail(span, exc)  # the refusal's log line is dispatch's (server.refuse)
        failed = {"rpc.system": method.system, "rpc.method": spec.name, "outcome": "error"}
        failed["error.type"] = _error_type(exc)
        instruments.server_duration.record(time.perf_counter() - start, failed, ctx)
        raise
    else:
        if spec.streaming and isinstance(result, ServerEventStream):
            opening = result.opening
            if opening is not None and span.is_recording():
                # The span ends as the stream is accepted: it names the task it opened
                # (not its state, which the agent may be changing right now).
                _set_stream_attributes(span, opening, task_id, context_id)
            result = ServerEventStream(_counted(result, method.stream_key), opening)
        elif span.is_recording():
            _set_result_attributes(span, result, task_id, context_id)
        instruments.server_duration.record(time.perf_counter() - start, method.ok, ctx)
        return result
    finally:
        _TASK.reset(task_token)
        otel_context.detach(token)
        span.end()


def _set_result_attributes(span: Any, result: Any, task_id: str, context_id: str) -> None:
    """Set on ``span`` the :func:`result_attributes` the request did not already name
    (each call to the SDK span copies, checks and locks: one call, only what is new)."""
    if isinstance(result, m.Task):
        new = {"a2a.task.state": result.status.state.value}
        if result.id != task_id:
            new["a2a.task.id"] = result.id
        if result.context_id and result.context_id != context_id:
            new["a2a.context.id"] = result.context_id
        span.set_attributes(new)
    elif isinstance(result, m.Message) and result.context_id:
        if result.task_id and result.task_id != task_id:
            span.set_attributes(
                {"a2a.task.id": result.task_id, "a2a.context.id": result.context_id}
            )
        elif result.context_id != context_id:
            span.set_attribute("a2a.context.id", result.context_id)


def _set_stream_attributes(span: Any, opening: Any, task_id: str, context_id: str) -> None:
    """Set on a stream's ``span`` the ids of the Task or Message it opens with that the
    request did not already name."""
    opened_task = opening.id if isinstance(opening, m.Task) else opening.task_id
    new = {}
    if opened_task and opened_task != task_id:
        new["a2a.task.id"] = opened_task
    if opening.context_id and opening.context_id != context_id:
        new["a2a.context.id"] = opening.context_id
    if new:
        span.set_attributes(new)


class _Method:
    """What the server spans and metrics of one (binding, method, version) share."""

    __slots__ = ("attributes", "ok", "span_name", "stream_key", "system")

    def __init__(self, binding: str, name: str, version: str) -> None:
        self.system = system = binding or "inprocess"
        self.span_name = f"{SERVICE}/{name}"
        #: The span's attributes before the request's ids (shared, never mutated).
        self.attributes = {
            "rpc.system": system,
            "rpc.method": name,
            "a2a.protocol.version": version,
        }
        #: The metric attributes of a successful call (shared, never mutated).
        self.ok = {"rpc.system": system, "rpc.method": name, "outcome": "ok"}
        self.stream_key = (("rpc.system", system), ("rpc.method", name))


_METHODS: dict[tuple[str, str, str], _Method] = {}


def _method(binding: str, name: str, version: str) -> _Method:
    found = _METHODS[binding, name, version] = _Method(binding, name, version)
    return found


async def _counted(
    stream: ServerEventStream, key: tuple[tuple[str, str], ...]
) -> AsyncGenerator[Any, None]:
    _active_streams[key] = _active_streams.get(key, 0) + 1
    try:
        async for item in stream:
            yield item
    finally:
        _active_streams[key] -= 1
        await stream.aclose()


# ----------------------------------------------------------------- client


class _TracingInterceptor(ClientInterceptor):
    """A ``CLIENT`` span per call; injects the W3C trace context into the headers."""

    __slots__ = ("_spans", "_system")

    def __init__(self, client: A2AClient) -> None:
        self._system = _CLIENT_SYSTEMS.get(getattr(client, "binding", ""), "jsonrpc")
        self._spans: dict[int, tuple[Any, float]] = {}

    async def before(self, call: ClientCall) -> None:
        instruments = _instruments
        if instruments is None:
            return
        attributes: dict[str, Any] = {
            "rpc.system": self._system,
            "rpc.method": call.method.name,
            "a2a.protocol.version": call.version,
        }
        attributes.update(request_attributes(call.params))
        span = instruments.tracer.start_span(
            f"{SERVICE}/{call.method.name}", kind=SpanKind.CLIENT, attributes=attributes
        )
        propagate.inject(call.headers, context=trace.set_span_in_context(span))
        self._spans[id(call)] = (span, time.perf_counter())

    async def after(self, call: ClientCall) -> None:
        entry = self._spans.pop(id(call), None)
        instruments = _instruments
        if entry is None:
            return
        span, start = entry
        metric_attributes: dict[str, Any] = {
            "rpc.system": self._system,
            "rpc.method": call.method.name,
        }
        if call.error is not None:
            _fail(span, call.error)
            metric_attributes["error.type"] = _error_type(call.error)
        else:
            span.set_attributes(result_attributes(call.result))
        span.end()
        if instruments is not None:
            instruments.client_duration.record(time.perf_counter() - start, metric_attributes)


# ----------------------------------------------------------------- GenAI


async def _in_span(
    events: AsyncGenerator[Any, None], span: Any, on_item: Any = None
) -> AsyncGenerator[Any, None]:
    """``events``, each step run with ``span`` current (child spans nest); ends ``span``."""
    ctx = trace.set_span_in_context(span)
    try:
        while True:
            token = otel_context.attach(ctx)
            try:
                item = await events.__anext__()
            except StopAsyncIteration:
                break
            finally:
                otel_context.detach(token)
            if on_item is not None:
                on_item(item)
            yield item
    except BaseException as exc:
        if not isinstance(exc, GeneratorExit):
            _fail(span, exc)
        raise
    finally:
        await events.aclose()
        span.end()


def model_call(
    events: AsyncGenerator[Any, None],
    provider: str,
    model: str,
    temperature: float | None,
    max_tokens: int | None,
) -> AsyncGenerator[Any, None]:
    instruments = _instruments
    if instruments is None:
        return events
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": provider,
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }
    if temperature is not None:
        attributes["gen_ai.request.temperature"] = temperature
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    span = instruments.tracer.start_span(
        f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes
    )
    start = time.perf_counter()
    base = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": provider,
        "gen_ai.request.model": model,
    }

    def on_item(item: Any) -> None:
        usage = getattr(item, "usage", None)
        reason = getattr(item, "reason", None)
        if usage is None or reason is None:  # not the Finish event
            return
        span.set_attribute("gen_ai.response.finish_reasons", [reason])
        for kind, value in (("input", usage.input_tokens), ("output", usage.output_tokens)):
            if value is not None:
                span.set_attribute(f"gen_ai.usage.{kind}_tokens", value)
                instruments.token_usage.record(value, {**base, "gen_ai.token.type": kind})
        instruments.operation_duration.record(time.perf_counter() - start, base)

    return _in_span(events, span, on_item)


def tool_call(
    events: AsyncGenerator[Any, None], name: str, call_id: str | None
) -> AsyncGenerator[Any, None]:
    instruments = _instruments
    if instruments is None:
        return events
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    if call_id:
        attributes["gen_ai.tool.call.id"] = call_id
    span = instruments.tracer.start_span(
        f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes
    )
    return _in_span(events, span)


def mcp_call(tool: str, server: str, seconds: float, error: BaseException | None) -> None:
    instruments = _instruments
    if instruments is None:
        return
    attributes = {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": tool,
        "a2a.mcp.server": server,
        "outcome": "ok" if error is None else "error",
    }
    if error is not None:
        attributes["error.type"] = _error_type(error)
    instruments.mcp_duration.record(seconds, attributes)


async def push(task_id: str, delivery: Awaitable[None]) -> None:
    instruments = _instruments
    if instruments is None:
        await delivery
        return
    span = instruments.tracer.start_span(
        "a2a.push_notification", kind=SpanKind.CLIENT, attributes={"a2a.task.id": task_id}
    )
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        await delivery
    except BaseException as exc:
        _fail(span, exc)
        instruments.push_deliveries.add(1, {"outcome": "error", "error.type": _error_type(exc)})
        raise
    else:
        instruments.push_deliveries.add(1, {"outcome": "ok"})
    finally:
        otel_context.detach(token)
        span.end()


# ----------------------------------------------------------------- engine

_STATE_KEYS: dict[m.TaskState, tuple[tuple[str, str], ...]] = {
    state: (("a2a.task.state", state.value),) for state in m.TaskState
}


async def _in_context(ctx: Any, drive: Any) -> None:
    token = otel_context.attach(ctx)
    try:
        await drive()
    finally:
        otel_context.detach(token)


async def _turn_span(span: Any, drive: Any) -> None:
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        await drive()
    except BaseException as exc:
        _fail(span, exc)
        raise
    finally:
        otel_context.detach(token)
        span.end()


class _EngineObserver:
    """An ``a2a.agent.turn`` span per agent turn (detail ``turns``); active tasks by state."""

    def turn(self, run: Any, drive: Any) -> Awaitable[None]:
        context_id = getattr(run.context, "context_id", None)
        # The run's own task context (the turn runs in a task of its own).
        _TASK.set((run.task_id, context_id or ""))
        instruments = _instruments
        # A turn run outside the request's span (a worker process running a
        # queued turn) continues the caller's trace, carried with the turn.
        parent = None
        caller = getattr(getattr(run.context, "call", None), "trace", ())
        if caller and not trace.get_current_span().get_span_context().is_valid:
            parent = propagate.extract(dict(caller))
        if instruments is None or instruments.detail < _TURNS:
            if parent is None:
                return drive()  # type: ignore[no-any-return]  # no coroutine of ours around it
            return _in_context(parent, drive)
        attributes = {"a2a.task.id": run.task_id}
        if context_id:
            attributes["a2a.context.id"] = context_id
        span = instruments.tracer.start_span(
            "a2a.agent.turn", parent, kind=SpanKind.INTERNAL, attributes=attributes
        )
        return _turn_span(span, drive)

    def wrap_store(self, store: Any) -> Any:
        instruments = _instruments
        if instruments is None or instruments.detail < _STORE:
            return store
        return _TracedStore(store)

    def carried_trace(self, call: CallContext) -> CallContext:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)  # the current span: the request's server span
        if not carrier:  # no span (not sampled, or outside a request): the caller's
            return call
        return attrs.evolve(call, trace=tuple(sorted(carrier.items())))

    def push_unsent(self, outcome: str, count: int) -> None:
        instruments = _instruments
        if instruments is not None:
            instruments.push_deliveries.add(count, {"outcome": outcome})

    def state_changed(self, old: m.TaskState | None, new: m.TaskState) -> None:
        if old is not None and not old.is_terminal:
            key = _STATE_KEYS[old]
            _active_tasks[key] = _active_tasks.get(key, 0) - 1
        if not new.is_terminal:
            key = _STATE_KEYS[new]
            _active_tasks[key] = _active_tasks.get(key, 0) + 1


# ----------------------------------------------------------------- logs

_previous_factory: Any = None


def _install_log_context() -> None:
    """Log records get ``trace_id``, ``span_id``, ``task_id`` and ``context_id``."""
    global _previous_factory
    if _previous_factory is not None:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        span_context = trace.get_current_span().get_span_context()
        if span_context.is_valid:
            record.trace_id = format(span_context.trace_id, "032x")
            record.span_id = format(span_context.span_id, "016x")
        else:
            record.trace_id = record.span_id = ""
        record.task_id, record.context_id = _TASK.get()
        return record

    _previous_factory = previous
    logging.setLogRecordFactory(factory)


def _uninstall_log_context() -> None:
    global _previous_factory
    if _previous_factory is not None:
        logging.setLogRecordFactory(_previous_factory)
        _previous_factory = None


_STORE_METHODS = frozenset(
    {
        "get",
        "create",
        "create_leased",
        "update",
        "list",
        "append_event",
        "events_after",
        "event_at",
        "find_message",
        "set_push_config",
        "get_push_config",
        "list_push_configs",
        "delete_push_config",
        "get_push_target",
        "list_push_targets",
    }
)


class _TracedStore:
    """A task store whose operations are ``a2a.store.<operation>`` spans (opt-in)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._kind = type(store).__name__

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if name not in _STORE_METHODS or not inspect.iscoroutinefunction(attribute):
            return attribute
        kind = self._kind

        @functools.wraps(attribute)  # its signature is the store's (see accepts_keyword)
        async def traced(*args: Any, **kwargs: Any) -> Any:
            instruments = _instruments
            if instruments is None:
                return await attribute(*args, **kwargs)
            attributes = {"a2a.store": kind}
            first = args[0] if args else None
            if isinstance(first, str):
                attributes["a2a.task.id"] = first
            elif isinstance(first, m.Task):
                attributes["a2a.task.id"] = first.id
            span = instruments.tracer.start_span(
                f"a2a.store.{name}", kind=SpanKind.INTERNAL, attributes=attributes
            )
            try:
                return await attribute(*args, **kwargs)
            except BaseException as exc:
                _fail(span, exc)
                raise
            finally:
                span.end()

        # Kept: found on the instance from now on, without __getattr__.
        setattr(self, name, traced)
        return traced
