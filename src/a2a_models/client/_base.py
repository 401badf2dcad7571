"""The abstract A2A client: every operation, on top of two byte-moving primitives.

A transport subclasses :class:`A2AClient` and implements :meth:`send_bytes`
(one JSON-RPC request in, one response out) and :meth:`stream_bytes` (one
request in, a stream of JSON-RPC responses out, each with its event id). The
base builds requests in the negotiated version, parses results into models,
raises the typed :mod:`a2a_models.errors` a peer answered with, and runs the
interceptors around every call.
"""

from __future__ import annotations

import abc
import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Mapping, MutableMapping, Sequence
from typing import Any

import attrs

from .. import models as m
from .._closing import AsyncClosing, aclose_if_closable
from ..errors import A2AError, InvalidAgentResponseError
from ..protocol import (
    METHODS,
    Batch,
    ErrorResponse,
    MethodSpec,
    SuccessResponse,
    decode_result,
    encode_request,
    normalize_version,
    parse_response,
)
from ._resume import BrokenStreamError, Reconnect, resumed_stream

__all__ = [
    "A2AClient",
    "ClientCall",
    "ClientInterceptor",
    "ClientTimeoutError",
    "ClientEventStream",
    "StreamChunk",
]

#: The header carrying the protocol version (spec §3.6).
VERSION_HEADER = "A2A-Version"
#: The header listing requested extensions (1.0; 0.3 used ``X-A2A-Extensions``).
EXTENSIONS_HEADER = "A2A-Extensions"
#: The header asking a stream to resume after an event id (W3C EventSource).
LAST_EVENT_ID_HEADER = "Last-Event-ID"


class ClientTimeoutError(A2AError, TimeoutError):
    """A call did not complete within its timeout."""


@attrs.frozen(slots=True)
class StreamChunk:
    """One item of a byte stream: a JSON-RPC response and its event id (if any)."""

    data: bytes
    event_id: str | None = None


@attrs.define(slots=True)
class ClientCall:
    """What an interceptor sees: the operation, its params, and the outgoing headers.

    ``headers`` may be changed by ``before`` hooks (to add credentials, a trace
    id, ...). ``result`` / ``error`` are set for ``after`` hooks.
    """

    method: MethodSpec
    params: Any
    version: str
    headers: MutableMapping[str, str]
    timeout: float | None
    result: Any = None
    error: BaseException | None = None


class ClientInterceptor:
    """Hooks run around every call, in registration order (``after`` in reverse).

    Every interceptor whose ``before`` ran gets its ``after``, even when a
    later ``before``, the transport or the peer failed. For a stream,
    ``before`` runs when iteration starts and ``after`` when the stream
    ends, fails or is closed early (``call.result`` is then the number of
    items received).
    """

    async def before(self, call: ClientCall) -> None:
        """Called before the request is sent; may modify ``call.headers``."""

    async def after(self, call: ClientCall) -> None:
        """Called after the call completed (``call.result``) or failed (``call.error``)."""


class ClientEventStream(AsyncClosing):
    """An async iterator of stream items that remembers the last event id seen.

    ``last_event_id`` is what to pass as ``resume_after`` to
    :meth:`A2AClient.subscribe` after a disconnect.
    """

    def __init__(self, items: AsyncIterator[tuple[str | None, m.StreamResponse]]) -> None:
        self._items = items
        self.last_event_id: str | None = None

    def __aiter__(self) -> ClientEventStream:
        return self

    async def __anext__(self) -> m.StreamResponse:
        event_id, item = await self._items.__anext__()
        if event_id is not None:
            self.last_event_id = event_id
        return item

    async def aclose(self) -> None:
        """Stop reading and release the underlying stream."""
        await aclose_if_closable(self._items)


#: Made once per new client, ahead of its own interceptors (see :func:`set_default_interceptors`).
_DEFAULT_INTERCEPTORS: tuple[Callable[[A2AClient], ClientInterceptor], ...] = ()


def set_default_interceptors(
    factories: Sequence[Callable[[A2AClient], ClientInterceptor]],
) -> None:
    """Interceptors every client made from now on runs first, each made from the client.

    :mod:`a2a_models.observability` installs its tracing interceptor this way;
    clients made before the call are not affected. ``()`` removes them.
    """
    global _DEFAULT_INTERCEPTORS
    _DEFAULT_INTERCEPTORS = tuple(factories)


class A2AClient(AsyncClosing):
    """Base of every A2A client; subclasses only move bytes.

    ``version`` is "1.0" or "0.3": it picks method names, the payload dialect
    and the ``A2A-Version`` header. ``timeout`` is the default per-call limit
    in seconds (``None``: no limit; long tasks may block for a while).
    ``reconnect``: how a stream that breaks (the transport raises a
    :class:`BrokenStreamError`, or the stream ends before the task's final
    event) is resumed with ``SubscribeToTask`` after the last event id seen
    (``None``, the default here: not resumed; the network clients resume).
    """

    #: Makes the error for a stream that ended early, from a message and the
    #: last event id seen (a binding may raise a subclass of its own).
    broken_stream_error: Callable[[str, str | None], BrokenStreamError] = BrokenStreamError

    def __init__(
        self,
        *,
        version: str = "1.0",
        timeout: float | None = None,
        interceptors: Sequence[ClientInterceptor] = (),
        extensions: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        reconnect: Reconnect | None = None,
    ) -> None:
        self.version = normalize_version(version)
        self.timeout = timeout
        self.interceptors = [make(self) for make in _DEFAULT_INTERCEPTORS]
        self.interceptors.extend(interceptors)
        self.extensions = tuple(extensions)
        self.headers = dict(headers or {})
        self.reconnect = reconnect
        self._ids = itertools.count(1)

    # ------------------------------------------------------------ transport primitives

    @abc.abstractmethod
    async def send_bytes(self, body: bytes, headers: Mapping[str, str]) -> bytes:
        """Send one JSON-RPC request; return the response body."""

    @abc.abstractmethod
    def stream_bytes(self, body: bytes, headers: Mapping[str, str]) -> AsyncIterator[StreamChunk]:
        """Send one JSON-RPC request; yield each JSON-RPC response of the stream."""

    async def aclose(self) -> None:
        """Release the transport's resources (nothing by default)."""

    # ------------------------------------------------------------ plumbing

    def _headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.version != "0.3":
            headers[VERSION_HEADER] = self.version
        if self.extensions:
            name = EXTENSIONS_HEADER if self.version != "0.3" else "X-A2A-Extensions"
            headers[name] = ", ".join(self.extensions)
        return headers

    async def _call(self, name: str, params: Any, timeout: float | None) -> Any:
        spec = METHODS[name]
        call = ClientCall(spec, params, self.version, self._headers(), self._timeout(timeout))
        entered: list[ClientInterceptor] = []
        try:
            for interceptor in self.interceptors:
                entered.append(interceptor)
                await interceptor.before(call)
            try:
                async with asyncio.timeout(call.timeout):
                    result = await self._unary(spec, call)
            except ClientTimeoutError:
                raise
            except TimeoutError:
                raise ClientTimeoutError(
                    f"{spec.name} did not complete within {call.timeout} s"
                ) from None
            call.result = result
            return call.result
        except BaseException as exc:
            call.error = exc
            raise
        finally:
            for interceptor in reversed(entered):
                await interceptor.after(call)

    async def _unary(self, spec: MethodSpec, call: ClientCall) -> Any:
        """One request and its answer: a JSON-RPC envelope through :meth:`send_bytes`.

        Bindings without JSON-RPC envelopes (HTTP+JSON) override this and
        :meth:`_streaming`; the interceptors and timeouts stay in :meth:`_call`.
        """
        request_id = next(self._ids)
        body = encode_request(spec, call.params, self.version, request_id)
        return self._result(spec, await self.send_bytes(body, call.headers), request_id)

    async def _streaming(
        self, spec: MethodSpec, call: ClientCall
    ) -> AsyncIterator[tuple[str | None, Any]]:
        """One stream: ``(event id, decoded item)`` pairs, via :meth:`stream_bytes`."""
        request_id = next(self._ids)
        body = encode_request(spec, call.params, self.version, request_id)
        chunks = self.stream_bytes(body, call.headers)
        try:
            async for chunk in chunks:
                yield chunk.event_id, self._result(spec, chunk.data, request_id)
        finally:
            await aclose_if_closable(chunks)

    def _timeout(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout

    def _result(self, spec: MethodSpec, reply: bytes, request_id: int) -> Any:
        parsed = parse_response(reply, null_result=spec.result_type is None)
        if isinstance(parsed, Batch):
            raise InvalidAgentResponseError("Invalid agent response: a batch for a single call")
        # JSON-RPC answers echo the request's id (null only when it was unreadable).
        if parsed.id != request_id and not (
            isinstance(parsed, ErrorResponse) and parsed.id is None
        ):
            raise InvalidAgentResponseError(
                f"Invalid agent response: id {parsed.id!r} does not match the request's {request_id}"
            )
        if isinstance(parsed, ErrorResponse):
            raise parsed.error
        assert isinstance(parsed, SuccessResponse)
        # parse_response parsed the reply bytes with codec.loads.
        return decode_result(spec, parsed.result, self.version, parsed=True)

    def _stream(
        self, name: str, params: Any, timeout: float | None, resume_after: str | None
    ) -> AsyncIterator[tuple[str | None, m.StreamResponse]]:
        """One stream, resumed with ``SubscribeToTask`` when it drops (if :attr:`reconnect`)."""
        if self.reconnect is None:
            return self._open_stream(name, params, timeout, resume_after)
        return resumed_stream(
            lambda name, params, after: self._open_stream(name, params, timeout, after),
            name,
            params,
            resume_after,
            reconnect=self.reconnect,
            get_task=lambda task_id: self.get_task(task_id, timeout=timeout),
            broken=self.broken_stream_error,
            server_retry=self._server_retry_delay,
        )

    def _server_retry_delay(self) -> float | None:
        """The wait before a reconnection that the server asked for (SSE ``retry:``), if any."""
        return None

    async def _open_stream(
        self, name: str, params: Any, timeout: float | None, resume_after: str | None
    ) -> AsyncIterator[tuple[str | None, m.StreamResponse]]:
        """One attempt: the interceptors around :meth:`_streaming`, from ``resume_after`` on."""
        spec = METHODS[name]
        call = ClientCall(spec, params, self.version, self._headers(), self._timeout(timeout))
        if resume_after is not None:
            call.headers[LAST_EVENT_ID_HEADER] = resume_after
        entered: list[ClientInterceptor] = []
        count = 0
        try:
            for interceptor in self.interceptors:
                entered.append(interceptor)
                await interceptor.before(call)
            items = self._streaming(spec, call)
            try:
                while True:
                    try:
                        async with asyncio.timeout(call.timeout):
                            event_id, item = await anext(items)
                    except StopAsyncIteration:
                        break
                    except ClientTimeoutError:
                        raise
                    except TimeoutError:
                        raise ClientTimeoutError(
                            f"{spec.name}: no event within {call.timeout} s"
                        ) from None
                    count += 1
                    yield event_id, item
            finally:
                await aclose_if_closable(items)
            call.result = count
        except GeneratorExit:
            # The consumer closed the stream early: not a failure.
            call.result = count
            raise
        except BaseException as exc:
            call.error = exc
            raise
        finally:
            for interceptor in reversed(entered):
                await interceptor.after(call)

    # ------------------------------------------------------------ operations

    async def send_message(
        self,
        message: m.Message | m.SendMessageRequest,
        *,
        configuration: m.SendMessageConfiguration | None = None,
        timeout: float | None = None,
    ) -> m.Task | m.Message:
        """``SendMessage``: the resulting Task, or the agent's direct Message."""
        return await self._call("SendMessage", _send_request(message, configuration), timeout)  # type: ignore[no-any-return]

    def send_streaming_message(
        self,
        message: m.Message | m.SendMessageRequest,
        *,
        configuration: m.SendMessageConfiguration | None = None,
        timeout: float | None = None,
    ) -> ClientEventStream:
        """``SendStreamingMessage``: the Task and its updates (or one Message) as they happen.

        ``timeout`` bounds the wait for each event, not the whole stream.
        """
        params = _send_request(message, configuration)
        return ClientEventStream(self._stream("SendStreamingMessage", params, timeout, None))

    async def get_task(
        self, task_id: str, *, history_length: int | None = None, timeout: float | None = None
    ) -> m.Task:
        """``GetTask``; ``history_length`` 0 omits the history, n keeps the last n messages."""
        params = m.GetTaskRequest(id=task_id, history_length=history_length)
        return await self._call("GetTask", params, timeout)  # type: ignore[no-any-return]

    async def list_tasks(
        self, request: m.ListTasksRequest | None = None, *, timeout: float | None = None
    ) -> m.ListTasksResponse:
        """``ListTasks`` (1.0 only): one page of the caller's tasks, newest first."""
        return await self._call("ListTasks", request or m.ListTasksRequest(), timeout)  # type: ignore[no-any-return]

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> m.Task:
        """``CancelTask``: the task in its new (canceled) state."""
        return await self._call("CancelTask", m.CancelTaskRequest(id=task_id), timeout)  # type: ignore[no-any-return]

    def subscribe(
        self, task_id: str, *, resume_after: str | None = None, timeout: float | None = None
    ) -> ClientEventStream:
        """``SubscribeToTask``: the Task, then its live updates.

        ``resume_after`` is the last event id seen on an earlier stream (see
        :attr:`ClientEventStream.last_event_id`): the server replays what came after it.
        """
        params = m.SubscribeToTaskRequest(id=task_id)
        return ClientEventStream(self._stream("SubscribeToTask", params, timeout, resume_after))

    async def create_push_config(
        self, config: m.TaskPushNotificationConfig, *, timeout: float | None = None
    ) -> m.TaskPushNotificationConfig:
        """``CreateTaskPushNotificationConfig``: the stored config, with its id."""
        return await self._call("CreateTaskPushNotificationConfig", config, timeout)  # type: ignore[no-any-return]

    async def get_push_config(
        self, task_id: str, config_id: str, *, timeout: float | None = None
    ) -> m.TaskPushNotificationConfig:
        """``GetTaskPushNotificationConfig``."""
        params = m.GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        return await self._call("GetTaskPushNotificationConfig", params, timeout)  # type: ignore[no-any-return]

    async def list_push_configs(
        self, task_id: str, *, timeout: float | None = None
    ) -> m.ListTaskPushNotificationConfigsResponse:
        """``ListTaskPushNotificationConfigs``."""
        params = m.ListTaskPushNotificationConfigsRequest(task_id=task_id)
        return await self._call("ListTaskPushNotificationConfigs", params, timeout)  # type: ignore[no-any-return]

    async def delete_push_config(
        self, task_id: str, config_id: str, *, timeout: float | None = None
    ) -> None:
        """``DeleteTaskPushNotificationConfig`` (idempotent)."""
        params = m.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        await self._call("DeleteTaskPushNotificationConfig", params, timeout)

    async def get_extended_agent_card(self, *, timeout: float | None = None) -> m.AgentCard:
        """``GetExtendedAgentCard`` (requires authentication)."""
        return await self._call("GetExtendedAgentCard", m.GetExtendedAgentCardRequest(), timeout)  # type: ignore[no-any-return]


def _send_request(
    message: m.Message | m.SendMessageRequest, configuration: m.SendMessageConfiguration | None
) -> m.SendMessageRequest:
    if isinstance(message, m.SendMessageRequest):
        if configuration is not None:
            return attrs.evolve(message, configuration=configuration)
        return message
    return m.SendMessageRequest(message=message, configuration=configuration)
