"""The operations seam every binding shares: JSON-RPC, HTTP+JSON, gRPC, in-process.

A binding decodes a request into the operation's params (by its
:class:`~a2a_models.protocol.MethodSpec`), calls :func:`dispatch` on an
:class:`Operations` object (an :class:`~a2a_models.server.A2AServer`, the
engine's :class:`~a2a_models.server.RequestHandler`, or a wrapper of
either), turns what it raises into the error to send with :func:`error_for`,
and walks a stream with :func:`stream_items`. Wrapping an ``Operations``
(for tracing, say) is thus one place that sees every call of every binding.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeAlias

import attrs

from .. import models as m
from .._outages import DatabaseTimeout, database_failure, one_line
from ..errors import (
    ID_LIMIT,
    EncodeError,
    InternalError,
    InvalidRequestError,
    JSONRPCError,
    clip_input,
    quote_input,
)
from ..protocol import V0_3, MethodSpec
from ._agent import CallContext
from ._lifecycle import closes_stream
from ._store import TaskStoreUnavailableError
from ._streams import EventStream

__all__ = [
    "DispatchInterceptor",
    "Operations",
    "dispatch",
    "error_for",
    "refuse",
    "request_ids",
    "resume_point",
    "set_dispatch_interceptor",
    "set_engine_observer",
    "stream_items",
]

log = logging.getLogger("a2a_models.server")
#: The one line of each refused request (see :func:`refuse`); a logger of its own so
#: that it can be turned down (or up) apart from the server's other records.
refusals = logging.getLogger("a2a_models.server.refusals")


class Operations(Protocol):
    """The eleven A2A operations on decoded model objects (spec §3.1).

    ``A2AServer``, ``AgentServer`` and ``RequestHandler`` all have this
    shape. Streaming operations return an :class:`EventStream` of
    ``(seq, item)`` once the stream is accepted (errors are raised before).
    """

    async def on_send_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> m.Task | m.Message: ...

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream: ...

    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task: ...

    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse: ...

    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task: ...

    async def on_subscribe_to_task(
        self, request: m.SubscribeToTaskRequest, call: CallContext, *, after_seq: int | None = None
    ) -> EventStream: ...

    async def on_create_task_push_notification_config(
        self, config: m.TaskPushNotificationConfig, call: CallContext
    ) -> m.TaskPushNotificationConfig: ...

    async def on_get_task_push_notification_config(
        self, request: m.GetTaskPushNotificationConfigRequest, call: CallContext
    ) -> m.TaskPushNotificationConfig: ...

    async def on_list_task_push_notification_configs(
        self, request: m.ListTaskPushNotificationConfigsRequest, call: CallContext
    ) -> m.ListTaskPushNotificationConfigsResponse: ...

    async def on_delete_task_push_notification_config(
        self, request: m.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> None: ...

    async def on_get_extended_agent_card(
        self, request: m.GetExtendedAgentCardRequest, call: CallContext
    ) -> m.AgentCard: ...


#: ``(call_operation, ops, spec, params, call, after_seq, binding)``: wraps one
#: :func:`dispatch` and must await ``call_operation(ops, spec, params, call, after_seq)``.
DispatchInterceptor: TypeAlias = Callable[..., Awaitable[Any]]

_interceptor: DispatchInterceptor | None = None


def set_dispatch_interceptor(interceptor: DispatchInterceptor | None) -> None:
    """Install (or with ``None`` remove) the one wrapper around every :func:`dispatch`.

    :mod:`a2a_models.observability` uses it for server spans and metrics;
    without one, :func:`dispatch` costs a single global lookup more.
    """
    global _interceptor
    _interceptor = interceptor


class EngineObserver(Protocol):
    """What :mod:`a2a_models.observability` sees inside the engine (see :func:`set_engine_observer`)."""

    def turn(self, run: Any, drive: Callable[[], Awaitable[None]]) -> Awaitable[None]:
        """Run one agent turn (``await drive()``) of ``run`` (an ``AgentRun``)."""

    def state_changed(self, old: m.TaskState | None, new: m.TaskState) -> None:
        """A stored task went from ``old`` (``None``: created) to ``new``."""

    def wrap_store(self, store: Any) -> Any:
        """The task store a new engine uses instead of ``store`` (``store`` itself: no change)."""

    def carried_trace(self, call: CallContext) -> CallContext:
        """``call`` with the W3C trace context of the work in progress (the request's
        server span) as its ``trace``: what a turn queued for another process carries,
        so that the worker's spans are children of the request that queued the turn."""

    def push_unsent(self, outcome: str, count: int) -> None:
        """``count`` push notifications ended without a request of their own: ``coalesced``
        (a newer one waiting for the same webhook said it too, or a chunk joined the one
        before it), ``dropped`` (their webhook's queue was full) or ``skipped`` (their
        webhook was down and a newer one was waiting)."""


_observer: EngineObserver | None = None


def set_engine_observer(observer: EngineObserver | None) -> None:
    """Install (or with ``None`` remove) the engine's observer of agent turns and task states."""
    global _observer
    _observer = observer


def engine_observer() -> EngineObserver | None:
    """The installed :class:`EngineObserver` (``None``: none)."""
    return _observer


async def _call_operation(
    ops: Operations, spec: MethodSpec, params: Any, call: CallContext, after_seq: int | None
) -> Any:
    try:
        if spec.handler == "on_subscribe_to_task":
            return await ops.on_subscribe_to_task(params, call, after_seq=after_seq)
        return await getattr(ops, spec.handler)(params, call)
    except JSONRPCError as exc:
        # Here, not in the binding: inside the interceptor's server span, whose ids
        # the line then carries (the binding logs only what it refuses before).
        refuse(exc, spec.name, call=call, params=params)
        raise


async def dispatch(
    ops: Operations,
    spec: MethodSpec,
    params: Any,
    call: CallContext,
    *,
    after_seq: int | None = None,
    binding: str = "",
) -> Any:
    """Call the operation ``spec`` names; ``after_seq`` is a subscription's resume point.

    ``binding`` names the caller's transport for instrumentation: ``"jsonrpc"``,
    ``"http"`` (HTTP+JSON), ``"grpc"``, or ``""`` (in-process).

    A :class:`JSONRPCError` the operation raises is the request's refusal line
    (:func:`refuse`); the binding answers it with :func:`error_for`, logging nothing more.
    """
    if _interceptor is not None:
        return await _interceptor(_call_operation, ops, spec, params, call, after_seq, binding)
    return await _call_operation(ops, spec, params, call, after_seq)


def error_for(exc: BaseException, method: str) -> JSONRPCError:
    """The error to send for what an operation (or the encoding of its result) raised.

    A :class:`JSONRPCError` goes out as it is. Anything else is ours: an
    unencodable result is ``InternalError`` naming why; any other exception
    (including a non-JSON-RPC ``A2AError`` from a bug) is a bare
    ``InternalError`` whose text and traceback go to the log, never the peer.
    """
    if isinstance(exc, JSONRPCError):
        return exc
    if isinstance(exc, EncodeError):
        log.warning("%s: result not expressible for the caller: %s", method, exc)
        return InternalError(f"the result cannot be expressed in this protocol version: {exc}")
    if isinstance(exc, DatabaseTimeout):
        log.error("%s failed: %s", method, exc)
        return TaskStoreUnavailableError(str(exc))
    if database_failure(exc):
        # The store is down or locked: no bug to trace, one line per request.
        name = type(exc).__name__
        log.error("%s failed: the task store failed (%s: %s)", method, name, one_line(exc))
        return TaskStoreUnavailableError(f"the task store failed ({name})")
    log.error("unexpected error while handling %s", method, exc_info=exc)
    return InternalError()


#: A W3C ``traceparent`` (any version but ``ff``); group 1 is the trace id.
_TRACEPARENT = re.compile(
    r"(?!ff)[0-9a-f]{2}-(?!0{32})([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}(?:-|\Z)"
)


def refuse(
    exc: BaseException,
    what: str,
    *,
    headers: Mapping[str, str] | None = None,
    call: CallContext | None = None,
    params: Any = None,
) -> JSONRPCError:
    """The error answering a request refused with ``exc``, after its one log line.

    A :class:`JSONRPCError` (the peer's mistake, or an A2A answer such as task not
    found) is one INFO line on the ``a2a_models.server.refusals`` logger,
    ``<what> refused: <code> <class> (<message>)``, without a traceback. ``what`` is the
    operation (``GetTask``) or, before one is known, the kind of request
    (``JSON-RPC request``). The record carries ``trace_id`` (of the current span, else
    of the ``traceparent`` in ``headers`` or ``call``) and ``task_id``/``context_id``
    (of the span's request, else of the decoded ``params``). Anything else is our
    failure: :func:`error_for` logs and answers it.

    Every binding calls this where it turns a refusal into an answer (and :func:`dispatch`
    for what an operation raises), so each refused request makes exactly one line. The
    message is the error's, which quotes what the peer sent bounded
    (:func:`~a2a_models.errors.quote_input`); headers, credentials and bodies are never
    logged. With the logger disabled (``serve`` without ``--otel``) nothing is formatted.
    """
    if not isinstance(exc, JSONRPCError):
        return error_for(exc, what)
    if refusals.isEnabledFor(logging.INFO):
        _log_refusal(exc, what, headers, call, params)
    return exc


def _log_refusal(
    error: JSONRPCError,
    what: str,
    headers: Mapping[str, str] | None,
    call: CallContext | None,
    params: Any,
) -> None:
    message = " ".join(error.message[:200].split())  # one line, whatever it quotes
    record = refusals.makeRecord(
        refusals.name,
        logging.INFO,
        __file__,
        0,
        "%s refused: %s %s (%s)",
        (clip_input(what, 64), error.code, type(error).__name__, message),
        None,
    )
    # Set on the record, not passed as `extra`: the log context observability
    # installs makes these attributes already (empty outside a span).
    if not getattr(record, "trace_id", ""):
        parent = headers.get("traceparent") if headers is not None else None
        if parent is None and call is not None and call.trace:
            parent = dict(call.trace).get("traceparent")
        found = _TRACEPARENT.match(parent.strip()) if parent else None
        record.trace_id = found.group(1) if found else ""
    if not getattr(record, "task_id", "") and not getattr(record, "context_id", ""):
        record.task_id, record.context_id = request_ids(params)
    refusals.handle(record)


def request_ids(params: Any) -> tuple[str, str]:
    """``(task id, context id)`` a decoded request names (``""``: none).

    Cut like an error's echo (any real id fits): a bogus 8 MiB id must not become an
    8 MiB span attribute and log line.
    """
    message = getattr(params, "message", None)
    if isinstance(message, m.Message):
        task_id, context_id = message.task_id, message.context_id
    elif isinstance(params, (m.GetTaskRequest, m.CancelTaskRequest, m.SubscribeToTaskRequest)):
        task_id, context_id = params.id, None
    else:
        task_id = getattr(params, "task_id", None)
        context_id = getattr(params, "context_id", None)
    return (
        clip_input(task_id, ID_LIMIT) if isinstance(task_id, str) else "",
        clip_input(context_id, ID_LIMIT) if isinstance(context_id, str) else "",
    )


def resume_point(value: str | None, spec: MethodSpec | None = None) -> int | None:
    """The ``after_seq`` of a ``Last-Event-ID`` value (``None``: not a resume).

    ``spec``: the method the value came with, on any binding; only ``SubscribeToTask``
    resumes a stream (any other's value is ignored, unread).
    """
    if spec is not None and spec.handler != "on_subscribe_to_task":
        return None
    if value is None or not value.strip():
        return None
    text = value.strip()
    # Our event ids are plain decimal numbers: no sign, "_" or non-ASCII digits.
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise InvalidRequestError(
            f"Last-Event-ID must be an event id we sent, got {quote_input(value)}"
        )
    return int(text)


async def stream_items(
    stream: EventStream, spec: MethodSpec, version: str
) -> AsyncGenerator[tuple[int, m.StreamResponse], None]:
    """The stream's ``(seq, item)`` as ``version`` sends them; closes the stream at the end.

    Close the generator (``aclose``) when the peer goes away early: that
    closes the stream and releases its subscription.

    For 0.3, each status update's ``final`` marks the stream's last event
    (1.0 just closes the stream).
    """
    interrupt_closes = spec.handler == "on_send_streaming_message"
    try:
        async for seq, item in stream:
            if version == V0_3 and isinstance(item, m.TaskStatusUpdateEvent):
                final = closes_stream(item, on_interrupted=interrupt_closes)
                if final != item.final:
                    item = attrs.evolve(item, final=final)
            yield seq, item
    finally:
        await stream.aclose()
