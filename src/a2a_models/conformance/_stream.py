"""A streaming reply being read: :class:`StreamSession` (SSE parsing, bounded waits,
the evidence of what was received)."""

from __future__ import annotations

import asyncio
import time
import typing
from typing import Any

import httpx

from .._closing import AsyncClosing
from ..protocol import SSEParser
from ._registry import Exchange
from ._replies import HttpReply, RemoteError, StreamEvent
from ._target import record

if typing.TYPE_CHECKING:
    from ._context import CheckContext

__all__ = ["StreamSession"]


class StreamSession(AsyncClosing):
    """A streaming reply being read. Use :meth:`next` and :meth:`collect`."""

    def __init__(
        self,
        ctx: CheckContext,
        request: httpx.Request,
        response: httpx.Response | None,
        started: float,
        request_body: bytes | None,
        error: str | None = None,
        request_id: Any = None,
    ) -> None:
        self._ctx = ctx
        self.request_id = request_id
        self._request = request
        self._response = response
        self._started = started
        self._request_body = request_body
        self._parser = SSEParser()
        self._pending: list[StreamEvent] = []
        self._iter = response.aiter_raw().__aiter__() if response is not None else None
        self._raw = bytearray()
        self.events: list[StreamEvent] = []
        self.closed = response is None
        self.transport_error = error
        self.timed_out = False
        #: An error reply instead of a stream (a JSON body, or an SSE error event first).
        self.error: RemoteError | None = None
        self.non_stream: HttpReply | None = None
        self._recorded = False
        self._index = 0

    @property
    def status(self) -> int | None:
        return self._response.status_code if self._response is not None else None

    @property
    def media_type(self) -> str:
        if self._response is None:
            return ""
        value: str = self._response.headers.get("content-type", "")
        return value.split(";", 1)[0].strip().lower()

    @property
    def is_sse(self) -> bool:
        return self.media_type == "text/event-stream"

    @property
    def terminal_index(self) -> int | None:
        for e in self.events:
            if e.is_terminal or (e.kind == "message" and e.index == 0):
                return e.index
        return None

    async def _read_non_stream(self) -> None:
        assert self._response is not None
        body = await self._response.aread()
        self._raw.extend(body)
        self.closed = True
        exchange = self._exchange()
        reply = HttpReply(
            exchange,
            self._response.status_code,
            {k.lower(): v for k, v in self._response.headers.items()},
            body,
        )
        self.non_stream = reply
        result = self._ctx._interpret("SendStreamingMessage", reply, None)
        self.error = result.error

    async def next(self, timeout: float = 10.0) -> StreamEvent | None:
        """The next event, ``None`` at the end of the stream; TimeoutError if none comes."""
        if self._pending:
            return self._pending.pop(0)
        if self.closed or self._iter is None:
            return None
        if not self.is_sse:
            await self._read_non_stream()
            return None
        deadline = time.monotonic() + timeout
        while not self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = True
                raise TimeoutError
            try:
                chunk = await asyncio.wait_for(self._iter.__anext__(), remaining)
            except StopAsyncIteration:
                self.closed = True
                return None
            except TimeoutError:
                self.timed_out = True
                raise TimeoutError from None
            except httpx.HTTPError as exc:
                self.closed = True
                self.transport_error = repr(exc)
                return None
            self._raw.extend(chunk)
            for sse in self._parser.feed(chunk):
                event = self._ctx._parse_stream_event(
                    self._index, sse.data, sse.id, self.request_id
                )
                self._index += 1
                self.events.append(event)
                self._pending.append(event)
        return self._pending.pop(0)

    async def collect(self, *, grace: float | None = None, idle: float = 10.0) -> None:
        """Read to the end of the stream, or until ``grace`` seconds after the
        terminal event (or, before one, ``idle`` seconds of silence)."""
        grace = self._ctx.stream_grace if grace is None else grace
        deadline: float | None = None
        while True:
            if deadline is None and self.terminal_index is not None:
                deadline = time.monotonic() + grace
            wait = idle if deadline is None else deadline - time.monotonic()
            if wait <= 0:
                return
            try:
                event = await self.next(wait)
            except TimeoutError:
                return
            if event is None:
                return

    def outcome(self) -> str:
        """What came back, for failure messages."""
        if self._response is None:
            return f"no response ({self.transport_error})"
        parts = [
            f"HTTP {self.status} {self.media_type or '(no content type)'}",
            f"{len(self.events)} events",
        ]
        if self.events:
            parts.append("; ".join(e.describe() for e in self.events[:6]))
        if self.transport_error:
            parts.append(f"connection dropped: {self.transport_error}")
        elif self.timed_out and not self.closed:
            parts.append("still open")
        return ", ".join(parts)

    def first_error(self) -> RemoteError | None:
        """The error the server answered with instead of streaming, if any."""
        if self.error is not None:
            return self.error
        if self.events and self.events[0].error is not None:
            return self.events[0].error
        return None

    async def aclose(self) -> None:
        if self._response is not None:
            await self._response.aclose()
        if not self._recorded:
            self._ctx.evidence.append(self._exchange())
            self._recorded = True

    def _exchange(self) -> Exchange:
        suffix = "" if self.closed else "\n(stream still open when reading stopped)"
        return record(
            self._request,
            status=self.status,
            response_headers=self._response.headers if self._response is not None else None,
            body=bytes(self._raw).decode("utf-8", "replace") + suffix,
            error=self.transport_error if self._response is None else None,
            started=self._started,
            request_body=self._request_body,
            keep_ends=True,
        )
