"""Server-Sent Events: an incremental parser and a serializer.

The parser follows the W3C/WHATWG EventSource processing model
(https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream):

* the stream is UTF-8 (invalid bytes become U+FFFD); one leading BOM is skipped;
* lines end with CRLF, LF or CR, also when a CRLF pair is split across chunks;
* ``data`` lines are joined with ``\\n``; ``event`` sets the type (default
  ``"message"``); ``id`` sets the last event id, which persists across events
  and is ignored when its value contains NUL; ``retry`` (ASCII digits only)
  sets the reconnection time; lines starting with ``:`` are comments; unknown
  fields are ignored; one space after the colon is dropped;
* an event is dispatched at a blank line, and only if it has data; an
  unterminated event at the end of the stream is discarded.

Feed it bytes as they arrive::

    parser = SSEParser()
    async for chunk in response.aiter_bytes():
        for event in parser.feed(chunk):
            handle(event.data, event.id)

:func:`format_event` writes one event; ``parse(format(x))``
gives ``x`` back, except that CR and CRLF inside ``data`` become LF (SSE has
no way to carry them). :func:`sse_frame` is the servers' fast path for
the usual frame (compact JSON bytes, an optional id and event type).

The parser is the package's own, not ``httpx-sse``'s: it is stdlib-only (the
conformance suite uses it without httpx), bounds the size of an event
(``max_event_size``) and implements the whole WHATWG model (CR line ends
split across chunks, a leading BOM, ``id`` with NUL, ``retry``), which the
line-based decoders of ``httpx-sse`` and ``sse-starlette`` do not bound.
"""

from __future__ import annotations

import codecs
import re
from typing import Final

import attrs

from ..errors import A2AError

__all__ = [
    "SSEError",
    "SSEEvent",
    "SSEParser",
    "format_comment",
    "format_event",
    "sse_frame",
]

_EOL: Final = re.compile(r"\r\n|\r|\n")
_BOM: Final = "\ufeff"


class SSEError(A2AError, ValueError):
    """An event stream exceeded the parser's size limit (the peer's fault)."""


@attrs.frozen(slots=True)
class SSEEvent:
    """One dispatched event.

    ``id`` is the stream's last event id when the event was dispatched (it
    persists across events that carry no ``id`` field; ``""`` means none).
    ``retry`` is the reconnection time in milliseconds the stream set last.
    """

    data: str
    event: str = "message"
    id: str = ""
    retry: int | None = None


class SSEParser:
    """Incremental ``text/event-stream`` parser: :meth:`feed` it bytes, get events.

    ``max_event_size`` bounds the characters buffered for one line or one
    event (``None``: no limit); exceeding it raises :class:`SSEError`.
    """

    __slots__ = (
        "_at_start",
        "_data",
        "_data_size",
        "_decoder",
        "_event_type",
        "_line",
        "_line_size",
        "_pending_cr",
        "last_event_id",
        "max_event_size",
        "retry",
    )

    def __init__(self, *, max_event_size: int | None = None, last_event_id: str = "") -> None:
        self.max_event_size = max_event_size
        #: The last event id (persists across events; sent back as ``Last-Event-ID``).
        self.last_event_id = last_event_id
        #: The reconnection time in milliseconds the stream asked for, if any.
        self.retry: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True
        self._pending_cr = False
        self._line: list[str] = []
        self._line_size = 0
        self._data: list[str] = []
        self._data_size = 0
        self._event_type = ""

    @property
    def pending(self) -> bool:
        """True when an event has started but was not dispatched yet (no blank line)."""
        return bool(self._line or self._data or self._event_type)

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse the next bytes of the stream; return the events they complete."""
        return self.feed_text(self._decoder.decode(chunk))

    def feed_text(self, text: str) -> list[SSEEvent]:
        """Parse already-decoded text (as :meth:`feed`, after UTF-8 decoding)."""
        if not text:
            return []
        if self._at_start:
            self._at_start = False
            if text[0] == _BOM:
                text = text[1:]
        if self._pending_cr:
            self._pending_cr = False
            if text.startswith("\n"):
                text = text[1:]
        events: list[SSEEvent] = []
        pos = 0
        for match in _EOL.finditer(text):
            piece = text[pos : match.start()]
            pos = match.end()
            if self._line:
                self._line.append(piece)
                line = "".join(self._line)
                self._line.clear()
                self._line_size = 0
            else:
                line = piece
            self._check(len(line))
            event = self._process(line)
            if event is not None:
                events.append(event)
        if pos < len(text):
            rest = text[pos:]
            self._line.append(rest)
            self._line_size += len(rest)
            self._check(self._line_size)
        elif text.endswith("\r"):
            # Maybe the first half of a CRLF split across chunks.
            self._pending_cr = True
        return events

    def close(self) -> None:
        """End of stream: an unterminated event is discarded (as EventSource does)."""
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self.feed_text(tail)
        self._line.clear()
        self._line_size = 0
        self._data.clear()
        self._data_size = 0
        self._event_type = ""

    def _check(self, size: int) -> None:
        limit = self.max_event_size
        if limit is not None and (size > limit or self._data_size > limit):
            raise SSEError(f"server-sent event larger than {limit} characters")

    def _process(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
            self._check(0)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value and value.isascii() and value.isdigit():
                self.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            self._event_type = ""
            return None
        event = SSEEvent(
            "\n".join(self._data),
            self._event_type or "message",
            self.last_event_id,
            self.retry,
        )
        self._data.clear()
        self._data_size = 0
        self._event_type = ""
        return event


def _field_value(name: str, value: str) -> str:
    if "\r" in value or "\n" in value:
        raise ValueError(f"an SSE {name} must not contain CR or LF: {value!r}")
    return value


def format_event(
    data: str | bytes,
    id: str | None = None,
    event: str | None = None,
    *,
    retry: int | None = None,
) -> bytes:
    """One event, UTF-8 encoded and terminated by a blank line.

    ``data`` may span lines (each becomes a ``data:`` line; CR and CRLF are
    sent as LF). ``id`` and ``event`` must be single-line; an ``id``
    containing NUL would be ignored by every parser, so it is refused.
    """
    text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
    out: list[str] = []
    if event is not None:
        out.append(f"event: {_field_value('event', event)}\n")
    if id is not None:
        if "\0" in id:
            raise ValueError("an SSE id must not contain NUL (parsers ignore it)")
        out.append(f"id: {_field_value('id', id)}\n")
    if retry is not None:
        if retry < 0:
            raise ValueError("an SSE retry must not be negative")
        out.append(f"retry: {int(retry)}\n")
    for line in _EOL.split(text):
        out.append(f"data: {line}\n")
    out.append("\n")
    return "".join(out).encode("utf-8")


def format_comment(text: str = "") -> bytes:
    """A comment line (``: text``), e.g. a keep-alive that parsers ignore."""
    return b"".join(f": {line}\n".encode() for line in _EOL.split(text)) + b"\n"


def sse_frame(data: bytes, *, id: str | None = None, event: str | None = None) -> bytes:
    """One SSE event: optional ``event:`` and ``id:`` lines, ``data:`` lines, a blank line."""
    if not event and b"\n" not in data and b"\r" not in data:
        # The usual frame: compact JSON, one data line.
        if id:
            return b"id: " + id.encode() + b"\ndata: " + data + b"\n\n"
        return b"data: " + data + b"\n\n"
    lines: list[bytes] = []
    if event:
        lines.append(b"event: " + event.encode())
    if id:
        lines.append(b"id: " + id.encode())
    # Compact JSON has no line breaks; anything else is split as SSE requires.
    for line in data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        lines.append(b"data: " + line)
    return b"\n".join(lines) + b"\n\n"
