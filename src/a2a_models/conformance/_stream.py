"""A streaming reply being read: :class:`StreamSession` (SSE parsing, bounded waits,
the evidence of what was received)."""

from __future__ import annotations

import asyncio
import time
import typing
from typing import Any

import httpx

from .._closing import AsyncClosing
from ..protocol import SSEError, SSEParser
from . import _target
from ._registry import Exchange
from ._replies import HttpReply, RemoteError, StreamEvent
from ._target import record

if typing.TYPE_CHECKING:
    from ._context import CheckContext

__all__ = ["MAX_EVENTS", "StreamSession"]

#: The most events one stream is read for (a conformant contract stream has a few dozen).
MAX_EVENTS = 2_000
#: Bytes of the stream's head and of its tail kept for the evidence.
_KEEP = 64 * 1024


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
        self._parser = SSEParser(max_event_size=_target.MAX_BODY)
        self._pending: list[StreamEvent] = []
        self._iter = response.aiter_raw().__aiter__() if response is not None else None
        self._raw = bytearray()  # the first and the last _KEEP bytes
        self._left_out = 0
        #: Bytes received so far (the harness stops reading past :data:`MAX_BODY`).
        self.received = 0
        self.events: list[StreamEvent] = []
        self.closed = response is None
        self.transport_error = error
        self.timed_out = False
        #: An error reply instead of a stream (a JSON body, or an SSE error event first).
        self.error: RemoteError | None = None
        self.non_stream: HttpReply | None = None
        self._recorded = False
        self._index = 0
        self._terminal: int | None = None

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
        """The index of the first terminal event (or of a first Message), if one came."""
        return self._terminal

    def _keep(self, chunk: bytes) -> None:
        self.received += len(chunk)
        self._raw.extend(chunk)
        if len(self._raw) > 2 * _KEEP:
            drop = len(self._raw) - 2 * _KEEP
            del self._raw[_KEEP : _KEEP + drop]
            self._left_out += drop

    def _stop(self, why: str) -> None:
        self.closed = True
        self.transport_error = why

    async def _read_non_stream(self, timeout: float) -> None:
        assert self._response is not None
        body = bytearray()
        try:
            async with asyncio.timeout(timeout):
                cut = await _target.read_body(self._response, body)
            if cut is not None:
                self.transport_error = cut
        except TimeoutError:
            self.transport_error = _target.body_too_slow(timeout, body)
        except httpx.HTTPError as exc:
            self.transport_error = f"connection dropped: {exc!r}"
        self._keep(bytes(body))
        self.closed = True
        if self.transport_error is not None:
            return
        exchange = self._exchange()
        reply = HttpReply(
            exchange,
            self._response.status_code,
            {k.lower(): v for k, v in self._response.headers.items()},
            bytes(body),
        )
        self.non_stream = reply
        result = self._ctx._interpret("SendStreamingMessage", reply, None)
        result = await self._ctx.judge_route(
            result, self._request.method, dict(self._request.headers)
        )
        self.error = result.error

    async def next(self, timeout: float = 10.0) -> StreamEvent | None:
        """The next event, ``None`` at the end of the stream; TimeoutError if none comes."""
        if self._pending:
            return self._pending.pop(0)
        if self.closed or self._iter is None:
            return None
        if not self.is_sse:
            await self._read_non_stream(timeout)
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
                self._stop(f"connection dropped: {exc!r}")
                return None
            self._keep(chunk)
            try:
                parsed = self._parser.feed(chunk)
            except SSEError as exc:
                self._stop(f"the harness stopped reading: {exc}")
                return None
            for sse in parsed:
                event = self._ctx._parse_stream_event(
                    self._index, sse.data, sse.id, self.request_id
                )
                self._index += 1
                self.events.append(event)
                self._pending.append(event)
                if self._terminal is None and (
                    event.is_terminal or (event.kind == "message" and event.index == 0)
                ):
                    self._terminal = event.index
            # A stream whose bytes are always ready never suspends this task: let the
            # check's time limit fire.
            await asyncio.sleep(0)
            if self.received > _target.MAX_BODY or len(self.events) >= MAX_EVENTS:
                # An endless stream: what was read so far is judged, the rest is not read.
                self._stop(
                    f"the harness stopped reading after {len(self.events)} events and "
                    f"{self.received} bytes with the stream still going "
                    f"(limits: {MAX_EVENTS} events, {_target.MAX_BODY} bytes)"
                )
                self._iter = None
                break
        return self._pending.pop(0) if self._pending else None

    async def collect(
        self, *, grace: float | None = None, idle: float = 10.0, total: float | None = None
    ) -> None:
        """Read to the end of the stream, or until ``grace`` seconds after the
        terminal event (or, before one, ``idle`` seconds of silence, or ``total``
        seconds in all, default the request timeout: a stream that keeps going
        without a terminal event is then cut off, saying so)."""
        grace = self._ctx.stream_grace if grace is None else grace
        total = self._ctx.request_timeout if total is None else total
        deadline: float | None = None
        give_up = time.monotonic() + total
        while True:
            if deadline is None and self.terminal_index is not None:
                deadline = time.monotonic() + grace
            if deadline is None and time.monotonic() >= give_up:
                if not self.closed and self.transport_error is None:
                    self.transport_error = (
                        f"the harness stopped reading after {total:g} s: "
                        f"{len(self.events)} events and still no terminal state"
                    )
                return
            now = time.monotonic()
            wait = deadline - now if deadline is not None else min(idle, give_up - now)
            if wait <= 0:
                return
            try:
                event = await self.next(wait)
            except TimeoutError:
                if deadline is None and time.monotonic() >= give_up:
                    continue  # say why reading stopped
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
            parts.append(self.transport_error)
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
        raw = bytes(self._raw)
        if self._left_out:
            raw = (
                raw[:_KEEP]
                + f"\n... ({self._left_out} bytes left out) ...\n".encode()
                + raw[_KEEP:]
            )
        return record(
            self._request,
            status=self.status,
            response_headers=self._response.headers if self._response is not None else None,
            body=raw.decode("utf-8", "replace") + suffix,
            error=self.transport_error,
            started=self._started,
            request_body=self._request_body,
            keep_ends=True,
        )
