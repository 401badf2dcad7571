"""The abstract A2A server: JSON-RPC bytes in, reply bytes (or a stream of them) out.

:class:`A2AServer` is a template method. :meth:`A2AServer.handle` parses the
body, negotiates the version, authenticates the caller, decodes params,
dispatches to an ``on_*`` method and encodes the result in the caller's
dialect. :meth:`A2AServer.handle_rest` does the same for one HTTP+JSON
request (method, path, query, headers, body), by the route table of
:mod:`a2a_models.protocol`. Subclasses override only the ``on_*`` methods they support (the
rest answer with the spec's "unsupported" errors) and, optionally,
:meth:`A2AServer.authenticate`. Transports (HTTP, in-process, anything)
only move the bytes and render a :class:`StreamingReply` as they like.

:class:`AgentServer` is the reference implementation on top of the engine's
:class:`~a2a_models.server.RequestHandler`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from .. import codec
from .. import models as m
from .._closing import AsyncClosing, aclose_if_closable
from ..errors import (
    InternalError,
    InvalidRequestError,
    JSONRPCError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from ..protocol import (
    JSON_MEDIA_TYPE,
    SUPPORTED_VERSIONS,
    V0_3,
    V1_0,
    Batch,
    ErrorResponse,
    MethodSpec,
    Notification,
    Request,
    Response,
    RestRouteError,
    SuccessResponse,
    decode_params,
    decode_rest_params,
    encode_response,
    encode_rest_result,
    encode_result,
    match_rest_route,
    method_for,
    negotiate_version,
    parse_message,
    rest_error_body,
    rest_media_type,
    rest_version,
)
from ._agent import Agent, CallContext
from ._handler import RequestHandler
from ._operations import dispatch, error_for, refuse, resume_point, stream_items
from ._push import PushNotificationSender
from ._store import TaskStore
from ._streams import EventBroker, EventStream

__all__ = ["A2AServer", "AgentServer", "Reply", "ServerSentEvent", "StreamingReply"]

log = logging.getLogger("a2a_models.server")


@attrs.frozen(slots=True)
class Reply:
    """A complete answer: the response body (``None``: send nothing, 204).

    ``headers`` are response headers the transport should add (for example
    ``A2A-Extensions`` listing the activated extensions). ``status`` and
    ``media_type`` are the HTTP status and body type (JSON-RPC answers are
    always 200 ``application/json``; HTTP+JSON ones vary).
    """

    body: bytes | None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    status: int = 200
    media_type: str = JSON_MEDIA_TYPE


@attrs.frozen(slots=True)
class ServerSentEvent:
    """One stream item: its data, event id (the task sequence) and event type.

    The data is a JSON-RPC response (JSON-RPC) or a ``StreamResponse``
    (HTTP+JSON, whose failures are ``event: error`` frames).
    """

    data: bytes
    id: str | None = None
    event: str | None = None


@attrs.frozen(slots=True)
class StreamingReply(AsyncClosing):
    """A streaming answer; iterate ``events`` and send each as it comes.

    Close it (``await reply.aclose()``, or use ``async with reply:``) when
    done, and in particular if the client goes away early: that releases the
    subscription (the task itself goes on).
    """

    events: AsyncIterator[ServerSentEvent]
    headers: Mapping[str, str] = attrs.field(factory=dict)

    async def aclose(self) -> None:
        """Stop the stream and release what it holds."""
        await aclose_if_closable(self.events)


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    # Service parameters are case-insensitive (spec §9.2).
    return {k.lower(): v for k, v in headers.items()}


#: Shared call contexts of requests without extensions, by (owner, version).
_PLAIN_CALLS: dict[tuple[str | None, str], CallContext] = {}
_PLAIN_CALLS_MAX = 1024


def _uris(value: str | None) -> frozenset[str]:
    if not value:
        return frozenset()
    return frozenset(u.strip() for u in value.split(",") if u.strip())


def _trace_headers(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The W3C trace context among lowercased request headers."""
    parent = headers["traceparent"]
    state = headers.get("tracestate")
    return (
        (("traceparent", parent),)
        if state is None
        else (
            ("traceparent", parent),
            ("tracestate", state),
        )
    )


class A2AServer:
    """Base class of A2A servers. Override the ``on_*`` methods you support.

    ``card`` is the public agent card (used for extension negotiation and by
    transports that serve it). ``supported_versions`` are the A2A versions
    served ("1.0", "0.3"); ``max_batch_size`` bounds JSON-RPC batches
    (``None``: no limit).

    :meth:`handle` never raises for anything a peer sends or an ``on_*``
    method raises: every failure becomes a JSON-RPC error response.
    """

    #: Seconds a stream may take to start (its first event) before its answer starts
    #: anyway: the transport then sends its headers and keep-alives while the agent
    #: works, and a failure still to come is the stream's first event rather than an
    #: error answer. A proxy or client allowing a minute of silence (nginx's default,
    #: the CLI's) would otherwise cut an agent slower than that to answer first.
    stream_start_wait: float = 5.0

    def __init__(
        self,
        card: m.AgentCard | None = None,
        *,
        supported_versions: Sequence[str] = SUPPORTED_VERSIONS,
        max_batch_size: int | None = 100,
    ) -> None:
        if max_batch_size is not None and max_batch_size < 1:
            raise ValueError("max_batch_size must be at least 1 (or None for no limit)")
        unknown = [v for v in supported_versions if v not in SUPPORTED_VERSIONS]
        if unknown or not supported_versions:
            raise ValueError(
                f"supported_versions must be a non-empty subset of {SUPPORTED_VERSIONS}, "
                f"got {tuple(supported_versions)}"
            )
        self.card = card
        self.supported_versions = tuple(supported_versions)
        self.max_batch_size = max_batch_size

    # ----------------------------------------------------------------- template

    async def handle(self, body: bytes, headers: Mapping[str, str]) -> Reply | StreamingReply:
        """Answer one JSON-RPC message (a request, a notification or a batch)."""
        hdrs = _lower(headers)
        parsed = parse_message(body, max_batch_size=self.max_batch_size)
        requested = hdrs.get("a2a-version")
        if requested in SUPPORTED_VERSIONS and requested in self.supported_versions:
            version: str = requested  # already what negotiate_version would make of it
        else:
            try:
                version = negotiate_version(requested, self.supported_versions)
            except JSONRPCError as exc:
                # Answered even for a notification: the request as a whole is refused.
                refuse(exc, _JSONRPC, headers=hdrs)
                return Reply(_encode(ErrorResponse(_id_of(parsed), exc), "1.0"))
        response_headers = self.response_headers(hdrs, version)
        if isinstance(parsed, ErrorResponse):
            refuse(parsed.error, _JSONRPC, headers=hdrs)
            return Reply(_encode(parsed, version), response_headers)
        if isinstance(parsed, Batch):
            answers = [await self._answer(item, hdrs, version, batched=True) for item in parsed]
            encoded = [_encode(r, version) for r in answers if r is not None]
            body_out = b"[" + b",".join(encoded) + b"]" if encoded else None
            return Reply(body_out, response_headers)
        if isinstance(parsed, Request):
            try:
                spec = method_for(parsed.method, version)
            except JSONRPCError as exc:
                refuse(exc, _JSONRPC, headers=hdrs)
                return Reply(_encode(ErrorResponse(parsed.id, exc), version), response_headers)
            if spec.streaming:
                return await self._stream(parsed, spec, hdrs, version, response_headers)
        response = await self._answer(parsed, hdrs, version, batched=False)
        return Reply(_encode(response, version) if response else None, response_headers)

    async def handle_rest(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        headers: Mapping[str, str],
        body: bytes | None,
        *,
        v03: bool = True,
    ) -> Reply | StreamingReply:
        """Answer one HTTP+JSON request (spec §11); ``path`` is relative to the interface URL.

        ``query`` holds the decoded query items, ``body`` the raw body. The
        answer's ``status`` and ``media_type`` say how to send it; errors are
        ``google.rpc.Status`` bodies with the error's HTTP status, and a
        stream's failure is an ``event: error`` frame carrying one.
        ``v03=False`` stops serving the 0.3 ``/v1/...`` routes. Like
        :meth:`handle`, this never raises for what a peer sends.
        """
        hdrs = _lower(headers)
        if "a2a-version" not in hdrs:
            for key, value in query:
                if key.lower() == "a2a-version":
                    hdrs["a2a-version"] = value
                    break
        v03 = v03 and V0_3 in self.supported_versions
        try:
            route, path_params = match_rest_route(method, path, v03=v03)
        except RestRouteError as exc:
            refuse(exc, _REST, headers=hdrs)
            allow = {"Allow": ", ".join(exc.allowed)} if exc.allowed else {}
            return _rest_error(exc, V1_0, allow, status=exc.status)
        version = route.version
        reply_headers: dict[str, str] = {}
        spec = route.spec
        try:
            version = rest_version(route, hdrs.get("a2a-version"), self.supported_versions)
            reply_headers = self.response_headers(hdrs, version)
            owner = await self.authenticate(hdrs)
            call = self.call_context(hdrs, version, owner)
            tenant = path_params.get("tenant")
            if tenant:
                call = attrs.evolve(call, tenant=tenant)
            params = decode_rest_params(route, path_params, query, body)
            after = resume_point(hdrs.get("last-event-id"), spec) if spec.streaming else None
        except Exception as exc:
            error = refuse(exc, route.operation, headers=hdrs)
            return _rest_error(error, version, reply_headers)
        try:  # what dispatch raises it has logged (refuse): only answered here
            if spec.streaming:
                events = await self._stream_events(
                    dispatch(self, spec, params, call, after_seq=after, binding="http"),
                    lambda stream: self._rest_events(spec, stream, version),
                    lambda exc: _rest_error_event(error_for(exc, route.operation)),
                )
                return StreamingReply(events, reply_headers)
            result = await dispatch(self, spec, params, call, binding="http")
            data = codec.dumps(encode_rest_result(spec, result, version))
            return Reply(data, reply_headers, media_type=rest_media_type(version))
        except Exception as exc:
            return _rest_error(error_for(exc, route.operation), version, reply_headers)

    async def authenticate(self, headers: Mapping[str, str]) -> str | None:
        """The caller's identity (the task owner) from lowercased request headers.

        ``None`` is the anonymous caller. Raise a :class:`JSONRPCError` to refuse
        the call. The default accepts everyone anonymously.
        """
        return None

    def call_context(
        self, headers: Mapping[str, str], version: str, owner: str | None
    ) -> CallContext:
        """The :class:`CallContext` handed to ``on_*`` methods."""
        if "traceparent" in headers:
            return CallContext(
                owner=owner,
                extensions=_uris(headers.get("a2a-extensions"))
                | _uris(headers.get("x-a2a-extensions")),
                version=version,
                trace=_trace_headers(headers),
            )
        if "a2a-extensions" not in headers and "x-a2a-extensions" not in headers:
            # The usual case; call contexts are immutable, so they can be shared.
            key = (owner, version)
            call = _PLAIN_CALLS.get(key)
            if call is None:
                call = CallContext(owner=owner, version=version)
                if len(_PLAIN_CALLS) < _PLAIN_CALLS_MAX:
                    _PLAIN_CALLS[key] = call
            return call
        requested = _uris(headers.get("a2a-extensions")) | _uris(headers.get("x-a2a-extensions"))
        return CallContext(owner=owner, extensions=requested, version=version)

    # ----------------------------------------------------------------- operations

    async def on_send_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> m.Task | m.Message:
        """``SendMessage`` / ``message/send``."""
        raise UnsupportedOperationError("SendMessage is not supported by this agent")

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream:
        """``SendStreamingMessage`` / ``message/stream``: a stream of ``(seq, item)``."""
        raise UnsupportedOperationError("streaming is not supported by this agent")

    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        """``GetTask`` / ``tasks/get``."""
        raise UnsupportedOperationError("GetTask is not supported by this agent")

    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse:
        """``ListTasks`` (1.0)."""
        raise UnsupportedOperationError("ListTasks is not supported by this agent")

    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task:
        """``CancelTask`` / ``tasks/cancel``."""
        raise UnsupportedOperationError("CancelTask is not supported by this agent")

    async def on_subscribe_to_task(
        self, request: m.SubscribeToTaskRequest, call: CallContext, *, after_seq: int | None = None
    ) -> EventStream:
        """``SubscribeToTask`` / ``tasks/resubscribe``; ``after_seq`` resumes a stream."""
        raise UnsupportedOperationError("streaming is not supported by this agent")

    async def on_create_task_push_notification_config(
        self, config: m.TaskPushNotificationConfig, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        """``CreateTaskPushNotificationConfig`` / ``tasks/pushNotificationConfig/set``."""
        raise PushNotificationNotSupportedError()

    async def on_get_task_push_notification_config(
        self, request: m.GetTaskPushNotificationConfigRequest, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        """``GetTaskPushNotificationConfig``."""
        raise PushNotificationNotSupportedError()

    async def on_list_task_push_notification_configs(
        self, request: m.ListTaskPushNotificationConfigsRequest, call: CallContext
    ) -> m.ListTaskPushNotificationConfigsResponse:
        """``ListTaskPushNotificationConfigs``."""
        raise PushNotificationNotSupportedError()

    async def on_delete_task_push_notification_config(
        self, request: m.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> None:
        """``DeleteTaskPushNotificationConfig``."""
        raise PushNotificationNotSupportedError()

    async def on_get_extended_agent_card(
        self, request: m.GetExtendedAgentCardRequest, call: CallContext
    ) -> m.AgentCard:
        """``GetExtendedAgentCard`` / ``agent/getAuthenticatedExtendedCard``."""
        raise UnsupportedOperationError("this agent has no extended agent card")

    # ----------------------------------------------------------------- internals

    def response_headers(self, headers: Mapping[str, str], version: str) -> dict[str, str]:
        """Headers every answer to a request with lowercased ``headers`` carries.

        The activated extensions (``A2A-Extensions``, ``X-A2A-Extensions`` for
        0.3): those the request asked for that the card offers.
        """
        if self.card is None or (
            "a2a-extensions" not in headers and "x-a2a-extensions" not in headers
        ):
            return {}
        requested = _uris(headers.get("a2a-extensions")) | _uris(headers.get("x-a2a-extensions"))
        offered = {e.uri for e in self.card.capabilities.extensions if e.uri}
        active = sorted(requested & offered)
        if not active:
            return {}
        name = "X-A2A-Extensions" if version == V0_3 else "A2A-Extensions"
        return {name: ", ".join(active)}

    async def _prepare(
        self,
        spec: MethodSpec,
        item: Request | Notification,
        headers: Mapping[str, str],
        version: str,
    ) -> tuple[Any, CallContext]:
        owner = await self.authenticate(headers)
        call = self.call_context(headers, version, owner)
        # Every item comes from parse_message(body) in handle: JSON from codec.loads.
        params = decode_params(spec, item.params, version, parsed=True)
        return params, call

    async def _answer(
        self,
        item: Request | Notification | ErrorResponse,
        headers: Mapping[str, str],
        version: str,
        *,
        batched: bool,
    ) -> Response | None:
        if isinstance(item, ErrorResponse):
            refuse(item.error, _JSONRPC, headers=headers)
            return item
        request_id = item.id if isinstance(item, Request) else None
        what = _JSONRPC
        try:
            spec = method_for(item.method, version)
            what = spec.name
            params, call = await self._prepare(spec, item, headers, version)
            if spec.streaming:
                raise InvalidRequestError(
                    f"{item.method} streams its result: send it alone, not in a batch"
                    if batched
                    else f"{item.method} streams its result and cannot be a notification"
                )
        except Exception as exc:
            error = refuse(exc, what, headers=headers)
            return ErrorResponse(request_id, error) if isinstance(item, Request) else None
        try:  # what dispatch raises it has logged (refuse): only answered here
            result = await dispatch(self, spec, params, call, binding="jsonrpc")
            wire = encode_result(spec, result, version)
        except Exception as exc:
            error = error_for(exc, item.method)
            return ErrorResponse(request_id, error) if isinstance(item, Request) else None
        if isinstance(item, Notification):
            return None
        return SuccessResponse(request_id, wire)

    async def _stream(
        self,
        request: Request,
        spec: MethodSpec,
        headers: Mapping[str, str],
        version: str,
        response_headers: dict[str, str],
    ) -> Reply | StreamingReply:
        try:
            params, call = await self._prepare(spec, request, headers, version)
            after = resume_point(headers.get("last-event-id"), spec)
        except Exception as exc:
            error = refuse(exc, spec.name, headers=headers)
            return Reply(_encode(ErrorResponse(request.id, error), version), response_headers)
        try:  # what dispatch raises it has logged (refuse): only answered here
            events = await self._stream_events(
                dispatch(self, spec, params, call, after_seq=after, binding="jsonrpc"),
                lambda stream: self._events(request, spec, stream, version),
                lambda exc: ServerSentEvent(
                    _encode(ErrorResponse(request.id, error_for(exc, request.method)), version)
                ),
            )
        except Exception as exc:
            answer = _encode(ErrorResponse(request.id, error_for(exc, request.method)), version)
            if version == V0_3:
                # 0.3 §7: a streaming method is answered with an SSE stream of JSON-RPC
                # responses, and the a2a-sdk 0.3 clients read nothing else (a JSON answer
                # reached them as "Invalid SSE response", not as the error it carried).
                return StreamingReply(_one_event(ServerSentEvent(answer)), response_headers)
            return Reply(answer, response_headers)
        return StreamingReply(events, response_headers)

    async def _stream_events(
        self,
        starting: Awaitable[EventStream],
        events_of: Callable[[EventStream], AsyncIterator[ServerSentEvent]],
        error_event: Callable[[BaseException], ServerSentEvent],
    ) -> AsyncIterator[ServerSentEvent]:
        """The events of the stream ``starting`` opens. A start that fails within
        :attr:`stream_start_wait` raises (an error answer); one still to come then is
        awaited by the events, its failure their one event (see :func:`_late`)."""
        future = asyncio.ensure_future(starting)
        try:
            stream = await asyncio.wait_for(asyncio.shield(future), self.stream_start_wait)
        except TimeoutError:
            if not future.done():
                return _late(future, events_of, error_event)
            stream = future.result()  # it raised TimeoutError itself
        except BaseException:
            future.cancel()
            raise
        return events_of(stream)

    async def _rest_events(
        self, spec: MethodSpec, stream: EventStream, version: str
    ) -> AsyncIterator[ServerSentEvent]:
        items = stream_items(stream, spec, version)
        try:
            async for seq, item in items:
                try:
                    data = codec.dumps(encode_rest_result(spec, item, version))
                except Exception as exc:
                    yield _rest_error_event(error_for(exc, spec.name))
                    return
                yield ServerSentEvent(data, str(seq) if seq else None)
        except Exception as exc:
            yield _rest_error_event(error_for(exc, spec.name))
        finally:
            await items.aclose()

    async def _events(
        self, request: Request, spec: MethodSpec, stream: EventStream, version: str
    ) -> AsyncIterator[ServerSentEvent]:
        items = stream_items(stream, spec, version)
        try:
            async for seq, item in items:
                try:
                    wire = encode_result(spec, item, version)
                    data = encode_response(SuccessResponse(request.id, wire), version)
                except Exception as exc:
                    error = error_for(exc, request.method)
                    yield ServerSentEvent(_encode(ErrorResponse(request.id, error), version))
                    return
                yield ServerSentEvent(data, str(seq) if seq else None)
        except Exception as exc:
            error = error_for(exc, request.method)
            yield ServerSentEvent(_encode(ErrorResponse(request.id, error), version))
        finally:
            await items.aclose()


def _rest_error(
    error: JSONRPCError, version: str, headers: Mapping[str, str], *, status: int | None = None
) -> Reply:
    out = dict(headers)
    challenges = getattr(error, "challenges", ())
    if challenges:
        out["WWW-Authenticate"] = ", ".join(challenges)
    try:
        data = codec.dumps(rest_error_body(error, status))
    except Exception:
        log.exception("cannot encode the HTTP+JSON error %r", error)
        data = codec.dumps(rest_error_body(InternalError()))
        status = 500
    return Reply(data, out, status=status or error.http_status, media_type=rest_media_type(version))


async def _one_event(event: ServerSentEvent) -> AsyncIterator[ServerSentEvent]:
    yield event


async def _late(
    starting: asyncio.Future[EventStream],
    events_of: Callable[[EventStream], AsyncIterator[ServerSentEvent]],
    error_event: Callable[[BaseException], ServerSentEvent],
) -> AsyncIterator[ServerSentEvent]:
    """The events of a stream whose start is still to come (its answer has started):
    a failed start is the one event, as a failure later in the stream would be."""
    stream: EventStream | None = None
    try:
        stream = await starting
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        yield error_event(exc)
        return
    finally:
        if stream is None:  # the client went away before the start, or it failed
            if not starting.done():
                starting.cancel()
            elif not starting.cancelled() and starting.exception() is None:
                await starting.result().aclose()
    events = events_of(stream)
    try:
        async for event in events:
            yield event
    finally:
        await aclose_if_closable(events)


def _rest_error_event(error: JSONRPCError) -> ServerSentEvent:
    try:
        data = codec.dumps(rest_error_body(error))
    except Exception:
        data = codec.dumps(rest_error_body(InternalError()))
    return ServerSentEvent(data, event="error")


#: What :func:`refuse` calls a request refused before its operation is known.
_JSONRPC = "JSON-RPC request"
_REST = "HTTP+JSON request"


def _id_of(parsed: Any) -> Any:
    return parsed.id if isinstance(parsed, Request) else None


def _encode(response: Response, version: str) -> bytes:
    """``encode_response`` that cannot fail: an unencodable answer becomes -32603.

    An error raised with ``data`` that is not JSON (an object, a datetime)
    must not make :meth:`A2AServer.handle` raise.
    """
    try:
        return encode_response(response, version)
    except Exception:
        log.exception("cannot encode the response to request %r", response.id)
        return encode_response(ErrorResponse(response.id, InternalError()), version)


class AgentServer(A2AServer):
    """The reference server: an :class:`Agent` run by the engine's :class:`RequestHandler`.

    >>> server = AgentServer(MyAgent(), card)            # doctest: +SKIP
    >>> reply = await server.handle(body, {"A2A-Version": "1.0"})  # doctest: +SKIP

    ``handler`` replaces the engine the server builds: a
    :class:`RequestHandler` you configured (an executor, an id factory) or a
    subclass that wraps its ``on_*`` methods (to trace every call, say);
    ``agent`` is then ``None``, and ``store``, ``broker``, ``push_sender``
    and ``extended_card`` belong to that handler.
    """

    def __init__(
        self,
        agent: Agent | None,
        card: m.AgentCard,
        *,
        handler: RequestHandler | None = None,
        store: TaskStore | None = None,
        broker: EventBroker | None = None,
        push_sender: PushNotificationSender | None = None,
        extended_card: m.AgentCard | None = None,
        supported_versions: Sequence[str] = SUPPORTED_VERSIONS,
        max_batch_size: int | None = 100,
    ) -> None:
        super().__init__(card, supported_versions=supported_versions, max_batch_size=max_batch_size)
        if handler is not None:
            given = [
                name
                for name, value in (
                    ("agent", agent),
                    ("store", store),
                    ("broker", broker),
                    ("push_sender", push_sender),
                    ("extended_card", extended_card),
                )
                if value is not None
            ]
            if given:
                raise TypeError(
                    f"AgentServer: pass either handler or {', '.join(given)} (they belong to "
                    "the handler)"
                )
            self.handler = handler
            return
        if agent is None:
            raise TypeError("AgentServer needs an agent (or a handler)")
        self.handler = RequestHandler(
            agent,
            card,
            store=store,
            broker=broker,
            push_sender=push_sender,
            extended_card=extended_card,
        )

    async def aclose(self) -> None:
        """Stop running agents and release the engine."""
        await self.handler.aclose()

    async def on_send_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> m.Task | m.Message:
        return await self.handler.on_send_message(request, call)

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream:
        return await self.handler.on_send_streaming_message(request, call)

    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        return await self.handler.on_get_task(request, call)

    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse:
        return await self.handler.on_list_tasks(request, call)

    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task:
        return await self.handler.on_cancel_task(request, call)

    async def on_subscribe_to_task(
        self, request: m.SubscribeToTaskRequest, call: CallContext, *, after_seq: int | None = None
    ) -> EventStream:
        return await self.handler.on_subscribe_to_task(request, call, after_seq=after_seq)

    async def on_create_task_push_notification_config(
        self, config: m.TaskPushNotificationConfig, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        return await self.handler.on_create_task_push_notification_config(config, call)

    async def on_get_task_push_notification_config(
        self, request: m.GetTaskPushNotificationConfigRequest, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        return await self.handler.on_get_task_push_notification_config(request, call)

    async def on_list_task_push_notification_configs(
        self, request: m.ListTaskPushNotificationConfigsRequest, call: CallContext
    ) -> m.ListTaskPushNotificationConfigsResponse:
        return await self.handler.on_list_task_push_notification_configs(request, call)

    async def on_delete_task_push_notification_config(
        self, request: m.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> None:
        await self.handler.on_delete_task_push_notification_config(request, call)

    async def on_get_extended_agent_card(
        self, request: m.GetExtendedAgentCardRequest, call: CallContext
    ) -> m.AgentCard:
        return await self.handler.on_get_extended_agent_card(request, call)
