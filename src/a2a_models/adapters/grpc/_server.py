"""The gRPC binding's server: ``lf.a2a.v1.A2AService`` (A2A 1.0) and ``a2a.v1.A2AService``
(A2A 0.3) on an :class:`~a2a_models.server.A2AServer`, side by side on one port.

Every RPC goes through the shared operations seam
(:func:`~a2a_models.server.dispatch`, :func:`~a2a_models.server.error_for`,
:func:`~a2a_models.server.stream_items`), the same one the JSON-RPC and
HTTP+JSON endpoints use, so one engine serves all three bindings: a task
created over gRPC is visible over JSON-RPC and REST, with the same owner.

* A service is one A2A version (:class:`_Service`); its RPCs differ only in
  how their messages convert (1.0: ``_convert``, direct; 0.3: ``_v03``, through
  the 0.3 HTTP+JSON dialect). Everything else here serves both.
* Service parameters come from the metadata (spec §10.2): ``a2a-version``
  (absent means the service's own version: ``lf.a2a.v1`` *is* the 1.0 service,
  ``a2a.v1`` the 0.3 one; another is ``VERSION_NOT_SUPPORTED``) and
  ``a2a-extensions``; the activated extensions go back in the initial metadata.
* The caller is whoever :meth:`A2AServer.authenticate` (or the given HTTP
  :class:`~a2a_models.adapters.http.Authenticator`) makes of the metadata.
* Errors are gRPC statuses with ``google.rpc.ErrorInfo`` details (§10.6, see ``_status``);
  0.3's messages also start with the error's name (``TaskNotFoundError: ...``), as
  the a2a-sdk's 0.3 servers write them and its clients read them.
* Deadlines: gRPC cancels the handler when the client's deadline passes.
* Requests above ``max_message_bytes`` are refused RESOURCE_EXHAUSTED, in gRPC's own
  words, by the handler (so with a refusal line, as every other refusal): gRPC's receive
  limit is twice that, and gRPC refuses, without a line, only what is above it. Answers
  are not bounded (the client's receive limit decides).
* ``grpc.health.v1.Health`` is served beside them (``_health``): SERVING when the
  store and broker answer, as ``/readyz`` says.
* :meth:`GrpcServer.stop` first tells the health service's watchers NOT_SERVING, then
  refuses new calls, lets unary calls finish within ``graceful_timeout`` and ends open
  streams (the health watches too) with UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs
import grpc
import grpc.aio
from grpc_health.v1 import health_pb2_grpc

from ... import models as m
from ..._closing import AsyncRunning
from ...errors import (
    InvalidParamsError,
    InvalidRequestError,
    JSONRPCError,
    MethodNotFoundError,
    VersionNotSupportedError,
    quote_input,
)
from ...protocol import METHODS, V0_3, V1_0, MethodSpec, negotiate_version
from ...server import (
    A2AServer,
    CallContext,
    dispatch,
    error_for,
    refuse,
    resume_point,
    stream_items,
)
from ._convert import from_proto, to_proto
from ._events import LAST_EVENT_ID_KEY, with_event_id
from ._health import HEALTH_INTERVAL, HealthService
from ._keepalive import (
    KEEPALIVE_TIMEOUT,
    MIN_CLIENT_PING_INTERVAL,
    SERVER_KEEPALIVE_TIME,
    server_options,
)
from ._pb import a2a_pb2 as pb
from ._status import status_of
from ._v03 import RPCS, SERVICE_NAME_V03, Rpc03

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "SERVICE_NAME", "A2AServicer", "GrpcServer"]

log = logging.getLogger("a2a_models.adapters.grpc")

#: The fully qualified gRPC service name.
SERVICE_NAME = "lf.a2a.v1.A2AService"
#: Default limit of one request message (the HTTP body limit's size).
DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024

# 1.0 RPC name (the operation's) -> the protobuf message class of its request.
_REQUEST_PB: dict[str, Any] = {
    "SendMessage": pb.SendMessageRequest,
    "SendStreamingMessage": pb.SendMessageRequest,
    "GetTask": pb.GetTaskRequest,
    "ListTasks": pb.ListTasksRequest,
    "CancelTask": pb.CancelTaskRequest,
    "SubscribeToTask": pb.SubscribeToTaskRequest,
    "CreateTaskPushNotificationConfig": pb.TaskPushNotificationConfig,
    "GetTaskPushNotificationConfig": pb.GetTaskPushNotificationConfigRequest,
    "ListTaskPushNotificationConfigs": pb.ListTaskPushNotificationConfigsRequest,
    "DeleteTaskPushNotificationConfig": pb.DeleteTaskPushNotificationConfigRequest,
    "GetExtendedAgentCard": pb.GetExtendedAgentCardRequest,
}
_EMPTY = b""  # google.protobuf.Empty serializes to nothing
_GRPC_INT_MAX = 2**31 - 1  # gRPC's integer channel options are C ints


def _empty(result: Any) -> bytes:
    return _EMPTY


@attrs.frozen(slots=True)
class _Rpc:
    """One RPC of a served service: its operation, and its messages' bytes <-> models."""

    spec: MethodSpec
    #: The request's bytes -> the operation's params (``InvalidParamsError`` if malformed).
    decode: Callable[[bytes], Any]
    #: A result (or one stream item) -> the response's bytes.
    encode: Callable[[Any], bytes]


@attrs.frozen(slots=True)
class _Service:
    """A gRPC service of the A2A ``version``: its full name and RPCs by name."""

    name: str
    version: str
    rpcs: Mapping[str, _Rpc]


def _rpc_v10(spec: MethodSpec) -> _Rpc:
    request_pb = _REQUEST_PB[spec.name]

    def decode(raw: bytes) -> Any:
        try:
            message = request_pb.FromString(raw)
        except Exception as exc:  # protobuf's DecodeError
            raise InvalidParamsError(
                f"{spec.name}: the request is not a valid protobuf ({exc})"
            ) from None
        try:
            return from_proto(spec.params_type, message)
        except ValueError as exc:  # DecodeError: names the field
            raise InvalidParamsError(f"{spec.name}: {exc}") from None

    if spec.result_type is None:
        return _Rpc(spec, decode, _empty)
    as_type = spec.result_type if spec.result_type in _UNIONS else None

    def encode(result: Any) -> bytes:
        return to_proto(result, as_type).SerializeToString()  # type: ignore[no-any-return]

    return _Rpc(spec, decode, encode)


def _rpc_v03(rpc: Rpc03) -> _Rpc:
    return _Rpc(rpc.spec, rpc.decode_request, rpc.encode_result)


_UNIONS = (m.SendMessageResponse, m.StreamResponse)
_SERVICES: dict[str, _Service] = {
    V1_0: _Service(SERVICE_NAME, V1_0, {name: _rpc_v10(spec) for name, spec in METHODS.items()}),
    V0_3: _Service(SERVICE_NAME_V03, V0_3, {rpc.name: _rpc_v03(rpc) for rpc in RPCS}),
}


class _MetadataRequest:
    """What an HTTP :class:`Authenticator` reads, made from gRPC metadata."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self.headers = headers
        self.query_params: dict[str, str] = {}
        self.cookies: dict[str, str] = {}
        self.scope: dict[str, Any] = {"type": "grpc", "headers": []}


def _metadata(context: Any) -> dict[str, str]:
    """Lowercased text metadata; repeated keys are joined with ``,`` (spec §10.2)."""
    out: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if key.endswith("-bin") or not isinstance(value, str):
            continue
        key = key.lower()
        out[key] = f"{out[key]},{value}" if key in out else value
    return out


class A2AServicer:
    """The handlers of every RPC of both A2A services over one :class:`A2AServer`.

    ``authenticator`` (optional) is an HTTP-adapter authenticator reading the
    metadata as headers; without it the server's own ``authenticate`` decides.
    A request over ``max_message_bytes`` (optional) is refused ``RESOURCE_EXHAUSTED``
    with a refusal line; the ``grpc.aio`` server's own receive limit must be above it
    (what is over that one gRPC refuses before a handler runs, without a line).
    """

    def __init__(
        self, server: A2AServer, *, authenticator: Any = None, max_message_bytes: int | None = None
    ) -> None:
        self.server = server
        self.authenticator = authenticator
        self.max_message_bytes = max_message_bytes
        self._waiting: set[asyncio.Task[Any]] = set()  # stream handlers awaiting an event
        self._closing = False

    # ------------------------------------------------------------ plumbing

    def handler(self, version: str = V1_0) -> grpc.GenericRpcHandler:
        """The generic handler serving the A2A ``version`` service (``lf.a2a.v1.A2AService``
        for 1.0, ``a2a.v1.A2AService`` for 0.3)."""
        service = _SERVICES[version]
        handlers = {}
        for name, rpc in service.rpcs.items():
            if rpc.spec.streaming:
                handlers[name] = grpc.unary_stream_rpc_method_handler(
                    self._stream_handler(service, name, rpc)
                )
            else:
                handlers[name] = grpc.unary_unary_rpc_method_handler(
                    self._unary_handler(service, name, rpc)
                )
        return grpc.method_handlers_generic_handler(service.name, handlers)

    def handlers(self) -> tuple[grpc.GenericRpcHandler, ...]:
        """Both services' handlers: the 1.0 and the 0.3 one share a port (their names differ)."""
        return tuple(self.handler(version) for version in _SERVICES)

    async def _prepare(
        self, service: _Service, rpc: _Rpc, raw: bytes, context: Any
    ) -> tuple[Any, CallContext, dict[str, str]]:
        headers = _metadata(context)
        version = service.version
        requested = headers.get("a2a-version")
        if requested is not None and requested.strip():
            asked = negotiate_version(requested, self.server.supported_versions)
            if asked != version:
                raise VersionNotSupportedError(
                    f"{service.name} is the A2A {version} gRPC service but the call asked "
                    f"for A2A {asked}: send 'a2a-version: {version}' (or none)"
                )
        elif version not in self.server.supported_versions:
            raise VersionNotSupportedError(f"this server does not serve A2A {version}")
        owner = await self._owner(headers)
        call = self.server.call_context(headers, version, owner)
        params = rpc.decode(raw)
        if not rpc.spec.streaming:
            await self._reply_headers(headers, version, context, always=True)
        return params, call, headers

    async def _reply_headers(
        self, headers: Mapping[str, str], version: str, context: Any, *, always: bool
    ) -> None:
        reply = self.server.response_headers(headers, version)
        if reply or always:
            await context.send_initial_metadata(tuple((k.lower(), v) for k, v in reply.items()))

    async def _owner(self, headers: Mapping[str, str]) -> str | None:
        if self.authenticator is None:
            return await self.server.authenticate(headers)
        principal = await self.authenticator.authenticate(_MetadataRequest(headers))
        return principal.user if principal is not None else None

    async def _refuse_too_large(self, name: str, raw: bytes, context: Any) -> None:
        limit = self.max_message_bytes
        error = InvalidRequestError(
            f"Request message too large: {len(raw)} bytes, the limit is {limit} bytes"
        )
        refuse(error, name, headers=_metadata(context))
        # gRPC's own status and words for it, which clients already read (ours makes
        # them an InvalidRequestError naming both sizes).
        await context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"SERVER: Received message larger than max ({len(raw)} vs. {limit})",
        )

    def _too_large(self, raw: bytes) -> bool:
        return self.max_message_bytes is not None and len(raw) > self.max_message_bytes

    @staticmethod
    async def _abort(service: _Service, context: Any, error: JSONRPCError) -> None:
        code, message, trailers = status_of(error, named=service.version == V0_3)
        context.set_trailing_metadata(trailers)
        await context.abort(code, message)

    def _unary_handler(
        self, service: _Service, name: str, rpc: _Rpc
    ) -> Callable[[bytes, Any], Awaitable[bytes]]:
        spec, encode = rpc.spec, rpc.encode

        async def handle(raw: bytes, context: Any) -> bytes:
            if self._too_large(raw):
                await self._refuse_too_large(name, raw, context)
            try:
                params, call, _ = await self._prepare(service, rpc, raw, context)
            except Exception as exc:
                if isinstance(exc, grpc.aio.AbortError):
                    raise
                await self._abort(service, context, refuse(exc, name, headers=_metadata(context)))
                raise AssertionError("unreachable: abort raises") from None
            try:  # what dispatch raises it has logged (refuse): only answered here
                result = await dispatch(self.server, spec, params, call, binding="grpc")
                return encode(result)
            except Exception as exc:
                if isinstance(exc, grpc.aio.AbortError):
                    raise
                await self._abort(service, context, error_for(exc, spec.name))
                raise AssertionError("unreachable: abort raises") from None

        handle.__name__ = name
        return handle

    def _stream_handler(
        self, service: _Service, name: str, rpc: _Rpc
    ) -> Callable[[bytes, Any], AsyncIterator[bytes]]:
        spec, encode = rpc.spec, rpc.encode

        async def handle(raw: bytes, context: Any) -> AsyncIterator[bytes]:
            task = asyncio.current_task()
            assert task is not None
            if self._too_large(raw):
                await self._refuse_too_large(name, raw, context)
            try:
                params, call, headers = await self._prepare(service, rpc, raw, context)
                after = resume_point(headers.get(LAST_EVENT_ID_KEY), spec)
            except Exception as exc:
                if isinstance(exc, grpc.aio.AbortError):
                    raise
                await self._abort(service, context, refuse(exc, name, headers=_metadata(context)))
                return
            try:  # what dispatch raises it has logged (refuse): only answered here
                # Sent before the stream starts (a new task's start waits for the
                # agent's first event): a client waiting knows the stream is open and
                # the server alive however long the agent is quiet. A failure to
                # start still ends the call with its status.
                await self._reply_headers(headers, service.version, context, always=True)
                self._waiting.add(task)
                try:
                    stream = await dispatch(
                        self.server, spec, params, call, after_seq=after, binding="grpc"
                    )
                finally:
                    self._waiting.discard(task)
            except asyncio.CancelledError:
                if not self._closing:
                    raise
                await self._abort(service, context, _shutting_down())
                return
            except Exception as exc:
                if isinstance(exc, grpc.aio.AbortError):
                    raise
                await self._abort(service, context, error_for(exc, spec.name))
                return
            items = stream_items(stream, spec, service.version)
            try:
                while not self._closing:
                    # Only a handler waiting for its next event is cancelled at
                    # shutdown; one inside gRPC's write (at the yield) would lose
                    # its status, so it looks at _closing when the write is done.
                    self._waiting.add(task)
                    try:
                        seq, item = await anext(items)
                    except StopAsyncIteration:
                        break
                    finally:
                        self._waiting.discard(task)
                    yield with_event_id(encode(item), seq)
                else:
                    await self._abort(service, context, _shutting_down())
            except asyncio.CancelledError:
                if not self._closing:
                    raise
                await self._abort(service, context, _shutting_down())
            except Exception as exc:
                if isinstance(exc, grpc.aio.AbortError):
                    raise
                await self._abort(service, context, error_for(exc, spec.name))
            finally:
                await items.aclose()

        handle.__name__ = name
        return handle

    def close_streams(self) -> None:
        """End every open stream with UNAVAILABLE (used when the server stops)."""
        self._closing = True
        for task in list(self._waiting):
            task.cancel()


class _UnknownMethods:
    """Any method no other handler serves: gRPC's own bare ``UNIMPLEMENTED`` (no A2A
    error details, so a missing RPC still reads as missing), plus the refusal's log
    line, which gRPC's answer, made without a handler, does not write."""

    def service(self, handler_call_details: Any) -> grpc.RpcMethodHandler:
        method = handler_call_details.method
        if isinstance(method, bytes):
            method = method.decode("utf-8", "replace")

        async def refused(requests: Any, context: Any) -> None:
            error = MethodNotFoundError(f"no gRPC method {quote_input(method)}")
            refuse(error, "gRPC call", headers=_metadata(context))
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")

        # Any cardinality: the call is answered before a request is read.
        return grpc.stream_stream_rpc_method_handler(refused)


def _shutting_down() -> JSONRPCError:
    return _Unavailable("the server is shutting down: subscribe again elsewhere")


class _Unavailable(JSONRPCError):
    """The server is going away (gRPC UNAVAILABLE): the client may retry elsewhere."""

    code = -32000
    default_message = "Server shutting down"
    grpc_status = "UNAVAILABLE"
    http_status = 503


class GrpcServer(AsyncRunning):
    """Serves an :class:`A2AServer` over gRPC (``grpc.aio``) on ``host:port``.

    >>> async with GrpcServer(server, port=0) as grpc_server:   # doctest: +SKIP
    ...     print(grpc_server.url)                               # grpc://127.0.0.1:50123

    ``port=0`` picks a free port (see :attr:`port` after :meth:`start`).
    ``credentials`` (``grpc.ssl_server_credentials(...)``) serves TLS.
    ``authenticator``: an HTTP-adapter authenticator applied to the metadata.
    ``max_message_bytes`` bounds each request message (answers are not bounded:
    the client's receive limit decides, as over HTTP).
    ``keepalive_time``: ping a client after that many seconds of silence
    (``None``: never) and drop it when a ping is not answered within
    ``keepalive_timeout``; client pings are accepted ``min_client_ping_interval``
    seconds apart (see ``_keepalive``).
    :attr:`health` serves ``grpc.health.v1.Health`` (see ``_health``); while a ``Watch``
    is open, the store and broker are probed every ``health_interval`` seconds.
    """

    def __init__(
        self,
        server: A2AServer,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        credentials: Any = None,
        authenticator: Any = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        graceful_timeout: float = 5.0,
        keepalive_time: float | None = SERVER_KEEPALIVE_TIME,
        keepalive_timeout: float = KEEPALIVE_TIMEOUT,
        min_client_ping_interval: float = MIN_CLIENT_PING_INTERVAL,
        health_interval: float = HEALTH_INTERVAL,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        if max_message_bytes <= 0:
            raise ValueError("max_message_bytes must be positive")
        self.server = server
        self.host = host
        self.port = port
        self.credentials = credentials
        self.max_message_bytes = max_message_bytes
        self.graceful_timeout = graceful_timeout
        self.servicer = A2AServicer(
            server, authenticator=authenticator, max_message_bytes=max_message_bytes
        )
        served = (s.name for v, s in _SERVICES.items() if v in server.supported_versions)
        self.health = HealthService(server, served, interval=health_interval)
        self._options = [
            # Twice the limit: the handler refuses what is between, with a refusal line
            # (gRPC's own refusal comes before any handler, and writes none).
            ("grpc.max_receive_message_length", min(2 * max_message_bytes, _GRPC_INT_MAX)),
            # Answers are not bounded here, as over HTTP: a Task with a big artifact is
            # sent whole, and the client's receive limit decides (64 MiB for ours).
            ("grpc.max_send_message_length", -1),
            ("grpc.so_reuseport", 0),
            *server_options(keepalive_time, keepalive_timeout, min_client_ping_interval),
            *options,
        ]
        self._grpc: Any = None

    @property
    def url(self) -> str:
        """The interface URL to publish in a card: ``grpc://host:port`` (``grpcs`` with TLS)."""
        scheme = "grpcs" if self.credentials is not None else "grpc"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    async def start(self) -> int:
        """Start listening; returns the bound port."""
        if self._grpc is not None:
            raise RuntimeError("GrpcServer already started")
        grpc_server = grpc.aio.server(options=self._options)
        if self.health.stopping:  # started again after a stop: a health service anew
            self.health = HealthService(
                self.server, self.health.services, interval=self.health.interval
            )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, grpc_server)
        grpc_server.add_generic_rpc_handlers((*self.servicer.handlers(), _UnknownMethods()))
        address = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        if self.credentials is not None:
            bound = grpc_server.add_secure_port(address, self.credentials)
        else:
            bound = grpc_server.add_insecure_port(address)
        if not bound:
            raise OSError(f"cannot listen on {address}")
        await grpc_server.start()
        self.port = int(bound)
        self._grpc = grpc_server
        return self.port

    async def stop(self) -> None:
        """Stop gracefully: health NOT_SERVING (told to every ``Watch`` while the port is
        still open), then refuse new calls, end streams, let unary calls finish."""
        grpc_server, self._grpc = self._grpc, None
        if grpc_server is None:
            return
        await self.health.enter_graceful_shutdown()
        stopping = asyncio.ensure_future(grpc_server.stop(self.graceful_timeout))
        await asyncio.sleep(0)  # new calls are refused from here on
        self.servicer.close_streams()
        self.health.end_watches()
        await stopping

    async def wait_closed(self) -> None:
        """Wait until the server stops."""
        if self._grpc is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._grpc.wait_for_termination()
