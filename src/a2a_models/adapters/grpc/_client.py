"""The gRPC binding's client: an :class:`~a2a_models.client.A2AClient` over ``grpc.aio``.

Interceptors, per-call timeouts and the operations are the client base's;
this transport converts the params to protobuf, calls ``lf.a2a.v1.A2AService``
(A2A 1.0) or ``a2a.v1.A2AService`` (0.3, through :mod:`._v03`) with the headers as metadata and the timeout as the gRPC deadline, and turns
a failed call back into the same :mod:`a2a_models.errors` classes the
JSON-RPC and REST clients raise. A broken or silent stream is resumed as
the HTTP clients resume theirs (:func:`~a2a_models.client.resumed_stream`),
from the event id this package's server appends to each event (``_events``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs
import grpc
import grpc.aio

from ... import models as m
from ...client import (
    A2AClient,
    BrokenStreamError,
    ClientInterceptor,
    Reconnect,
    StreamChunk,
)
from ...errors import (
    A2AError,
    InvalidAgentResponseError,
    InvalidRequestError,
    UnsupportedOperationError,
)
from ...protocol import MethodSpec
from ._convert import from_proto, proto_class, to_proto
from ._events import event_id_of
from ._keepalive import CLIENT_KEEPALIVE_TIME, KEEPALIVE_TIMEOUT, client_options
from ._server import SERVICE_NAME
from ._status import error_from_rpc
from ._v03 import BY_OPERATION, SERVICE_NAME_V03, Rpc03, request_message, result_of

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "GrpcClient", "grpc_target"]

#: Default limit of one message from the server: the HTTP clients' ``max_event_size``.
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
#: What gRPC says when a message from the server passes the channel's receive limit.
_TOO_LARGE = "CLIENT: Received message larger than max"
#: What a gRPC server says (RESOURCE_EXHAUSTED) of a request over its receive limit.
_REQUEST_TOO_LARGE = re.compile(r"SERVER: Received message larger than max \((\d+) vs\. (\d+)\)")
#: ... and of request headers over its metadata limit (``grpc.max_metadata_size``).
_HEADERS_TOO_LARGE = re.compile(r"received metadata size exceeds (?:hard|soft) limit")

#: What gRPC accepts as a metadata key (lowercased) and as a text value (RFC 9110 VCHAR, SP).
_METADATA_KEY = re.compile(r"[0-9a-z_.-]+")
_METADATA_VALUE = re.compile(r"[\x20-\x7e]*")

_TENANTED = (
    m.SendMessageRequest,
    m.GetTaskRequest,
    m.ListTasksRequest,
    m.CancelTaskRequest,
    m.SubscribeToTaskRequest,
    m.TaskPushNotificationConfig,
    m.GetTaskPushNotificationConfigRequest,
    m.ListTaskPushNotificationConfigsRequest,
    m.DeleteTaskPushNotificationConfigRequest,
    m.GetExtendedAgentCardRequest,
)


def grpc_target(url: str) -> tuple[str, bool]:
    """``(target, tls)`` for an interface URL.

    ``grpc://host:port`` and ``http://`` are plaintext; ``grpcs://`` and
    ``https://`` are TLS (default port 443); a bare ``host:port`` is
    plaintext. A path is ignored: gRPC addresses a service, not a path.
    """
    if "://" not in url:
        return url, False
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("grpc", "grpcs", "http", "https"):
        raise ValueError(f"not a gRPC interface URL: {url!r} (use grpc://host:port)")
    tls = scheme in ("grpcs", "https")
    host = parts.hostname or ""
    if not host:
        raise ValueError(f"no host in gRPC interface URL {url!r}")
    port = parts.port or (443 if tls else 80)
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}", tls


class GrpcClient(A2AClient):
    """An A2A client over gRPC: 1.0's ``lf.a2a.v1`` service, or 0.3's ``a2a.v1``
    (``version="0.3"``, which has no ``ListTasks``).

    >>> async with GrpcClient("grpc://127.0.0.1:50051") as client:  # doctest: +SKIP
    ...     task = await client.send_message(Message.user("hi"))

    ``url`` is the interface URL (see :func:`grpc_target`) or a ready
    ``channel`` is given instead. ``credentials`` overrides the TLS channel
    credentials (default: the system roots). ``tenant`` fills the requests'
    ``tenant`` field when they have none. ``max_message_bytes`` bounds each
    message from the server (a bigger one raises ``InvalidAgentResponseError``).
    A broken stream is resumed as ``reconnect`` says. ``keepalive_time``: ping
    the server after that many seconds of silence (``None``: never) and take the
    connection for dead when a ping is not answered within ``keepalive_timeout``
    (its streams are then resumed). ``idle_timeout`` seconds (default: no limit)
    without the server's answer to a stream take it for dead and resume it too;
    once the server answered, a quiet stream is left to the keep-alive pings
    (without them, or on a ``channel`` of yours, ``idle_timeout`` also bounds the
    silence between events). Other options are the client base's (``timeout``
    becomes each call's gRPC deadline).
    """

    binding = "GRPC"

    def __init__(
        self,
        url: str | None = None,
        *,
        channel: Any = None,
        credentials: Any = None,
        tenant: str | None = None,
        card: m.AgentCard | None = None,
        version: str = "1.0",
        timeout: float | None = None,
        interceptors: Sequence[ClientInterceptor] = (),
        extensions: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        reconnect: Reconnect | None = None,
        idle_timeout: float | None = None,
        keepalive_time: float | None = CLIENT_KEEPALIVE_TIME,
        keepalive_timeout: float = KEEPALIVE_TIMEOUT,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        super().__init__(
            version=version,
            timeout=timeout,
            interceptors=interceptors,
            extensions=extensions,
            headers=headers,
            reconnect=reconnect or Reconnect(),
        )
        self._service = SERVICE_NAME if self.version == "1.0" else SERVICE_NAME_V03
        if (url is None) == (channel is None):
            raise ValueError("give exactly one of url or channel")
        self.url = url
        self.tenant = tenant
        self.card = card
        self.max_message_bytes = max_message_bytes
        self.idle_timeout = idle_timeout
        self._owns_channel = channel is None
        # Whether pings watch the connection, so that a quiet stream may stay quiet.
        self._pinged = channel is None and keepalive_time is not None
        if channel is None:
            assert url is not None
            target, tls = grpc_target(url)
            opts = [
                ("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", -1),  # the server bounds requests
                *client_options(keepalive_time, keepalive_timeout),
                *options,
            ]
            if tls or credentials is not None:
                creds = credentials if credentials is not None else grpc.ssl_channel_credentials()
                channel = grpc.aio.secure_channel(target, creds, options=opts)
            else:
                channel = grpc.aio.insecure_channel(target, options=opts)
        self.channel = channel
        self._methods: dict[str, Any] = {}

    async def aclose(self) -> None:
        """Close the channel (when this client opened it)."""
        if self._owns_channel:
            await self.channel.close()

    # JSON-RPC byte primitives: not how gRPC moves data.
    async def send_bytes(self, body: bytes, headers: Mapping[str, str]) -> bytes:
        raise UnsupportedOperationError("the gRPC client sends protobuf, not JSON-RPC bytes")

    def stream_bytes(self, body: bytes, headers: Mapping[str, str]) -> AsyncIterator[StreamChunk]:
        raise UnsupportedOperationError("the gRPC client sends protobuf, not JSON-RPC bytes")

    # ------------------------------------------------------------ the binding

    def _rpc03(self, spec: MethodSpec) -> Rpc03 | None:
        """0.3's RPC for the operation (``None`` in 1.0, whose RPCs are the operations)."""
        if self.version == "1.0":
            return None
        rpc = BY_OPERATION.get(spec.name)
        if rpc is None:
            raise UnsupportedOperationError(
                f"{spec.name} is A2A 1.0 only: 0.3's gRPC service {SERVICE_NAME_V03} has "
                "no such RPC (use GrpcClient(version='1.0'))"
            )
        return rpc

    def _method(self, spec: MethodSpec) -> Any:
        method = self._methods.get(spec.name)
        if method is None:
            rpc = self._rpc03(spec)
            path = f"/{self._service}/{spec.name if rpc is None else rpc.name}"
            make = self.channel.unary_stream if spec.streaming else self.channel.unary_unary
            method = make(path)  # bytes in, bytes out: conversion is ours
            self._methods[spec.name] = method
        return method

    def _request(self, spec: MethodSpec, params: Any) -> bytes:
        rpc = self._rpc03(spec)
        if rpc is not None:  # 0.3 has no tenant
            return request_message(rpc, params).SerializeToString()  # type: ignore[no-any-return]
        if self.tenant and isinstance(params, _TENANTED) and not params.tenant:
            params = attrs.evolve(params, tenant=self.tenant)
        return to_proto(params).SerializeToString()  # type: ignore[no-any-return]

    @staticmethod
    def _metadata(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        metadata = tuple((k.lower(), v) for k, v in headers.items())
        for key, value in metadata:
            # gRPC refuses these only once the call is under way, with a C-level log
            # line and an error naming its internal operations, not the header.
            if not _METADATA_KEY.fullmatch(key):
                raise ValueError(
                    f"header {key!r} cannot be sent as gRPC metadata: a name is ASCII "
                    "letters, digits, '-', '_' and '.'"
                )
            if not key.endswith("-bin") and not _METADATA_VALUE.fullmatch(value):
                raise ValueError(
                    f"the value of header {key!r} cannot be sent as gRPC metadata: "
                    f"only printable ASCII (got {value[:40]!r})"
                )
        return metadata

    def _parse(self, spec: MethodSpec, tp: Any, raw: bytes) -> Any:
        rpc = self._rpc03(spec)
        try:
            return (proto_class(tp) if rpc is None else rpc.response).FromString(raw)
        except Exception as exc:
            raise InvalidAgentResponseError(
                f"Invalid agent response: not a valid {getattr(tp, '__name__', 'result')} ({exc})"
            ) from None

    def _decode(self, spec: MethodSpec, tp: Any, message: Any) -> Any:
        rpc = self._rpc03(spec)
        try:
            return from_proto(tp, message) if rpc is None else result_of(rpc, message)
        except Exception as exc:
            raise InvalidAgentResponseError(
                f"Invalid agent response: not a valid {getattr(tp, '__name__', 'result')} ({exc})"
            ) from None

    def _error(self, exc: Any) -> A2AError:
        """The error of a failed call; a message over our receive limit says which limit."""
        if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and _TOO_LARGE in (exc.details() or ""):
            return InvalidAgentResponseError(
                f"Invalid agent response: a message from {self.url} is larger than this "
                f"client's limit of {self.max_message_bytes} bytes ({exc.details()}); "
                f"raise GrpcClient(max_message_bytes=...)"
            )
        if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
            found = _REQUEST_TOO_LARGE.search(exc.details() or "")
            if found is not None:
                # gRPC refused it before the agent saw it: no A2A status, and no
                # reason to blame the server (gRPC's fallback is InternalError).
                size, limit = found.groups()
                return InvalidRequestError(
                    f"Request too large: {size} bytes, over the limit of {limit} bytes of the "
                    f"gRPC server at {self.url} (RESOURCE_EXHAUSTED)",
                    {"size": int(size), "limit": int(limit)},
                )
            if _HEADERS_TOO_LARGE.search(exc.details() or ""):
                return InvalidRequestError(
                    f"Request headers too large for the gRPC server at {self.url}: "
                    f"{exc.details()} (RESOURCE_EXHAUSTED)"
                )
        return error_from_rpc(exc, self.url, named=self.version == "0.3")

    async def _unary(self, spec: MethodSpec, call: Any) -> Any:
        body = self._request(spec, call.params)
        try:
            raw = await self._method(spec)(
                body, metadata=self._metadata(call.headers), timeout=call.timeout
            )
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc) from None
        if spec.result_type is None:
            return None
        return self._decode(spec, spec.result_type, self._parse(spec, spec.result_type, raw))

    async def _streaming(
        self, spec: MethodSpec, call: Any
    ) -> AsyncIterator[tuple[str | None, Any]]:
        body = self._request(spec, call.params)
        stream = self._method(spec)(body, metadata=self._metadata(call.headers), timeout=None)
        idle = self.idle_timeout
        accepted = False  # the server answered: its headers or an event arrived
        try:
            async with asyncio.timeout(idle):
                await stream.initial_metadata()
            accepted = not stream.done()  # a failed call has (empty) headers too
            # Once the server answered, silence is the agent's business: a dead
            # connection is found by the keep-alive pings (UNAVAILABLE), not by a
            # timer that cannot tell a quiet agent from a dead one.
            between = None if accepted and self._pinged else idle
            while True:
                async with asyncio.timeout(between):
                    raw = await stream.read()
                if raw is grpc.aio.EOF:
                    return
                message = self._parse(spec, m.StreamResponse, raw)
                yield event_id_of(message), self._decode(spec, m.StreamResponse, message)
        except TimeoutError:
            raise BrokenStreamError(
                f"the stream from {self.url} went silent: nothing within {idle} s", quiet=accepted
            ) from None
        except grpc.aio.AioRpcError as exc:
            error = self._error(exc)
            # UNAVAILABLE: the connection broke, or the server is going away (its own
            # status says so); either way the stream can be resumed, here or elsewhere.
            if accepted and exc.code() is grpc.StatusCode.UNAVAILABLE:
                raise BrokenStreamError(f"the stream from {self.url} broke: {error}") from None
            raise error from None
        finally:
            stream.cancel()
