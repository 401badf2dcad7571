"""A small, strict-enough ``text/event-stream`` parser for the harness.

Follows the WHATWG processing model (CRLF/LF/CR line ends, ``data`` lines
joined with ``\\n``, comments, ``id``/``event`` fields, dispatch at a blank
line, an unterminated trailing event is dropped) and additionally records
what a conformance report wants to point at: the raw text of each event.
"""

from __future__ import annotations

import codecs

import attrs

__all__ = ["RawEvent", "SSEParser"]


@attrs.frozen(slots=True)
class RawEvent:
    data: str
    event: str = "message"
    id: str = ""
    raw: str = ""


class SSEParser:
    """Feed bytes, get :class:`RawEvent` s."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._data: list[str] = []
        self._event = ""
        self._id = ""
        self._raw: list[str] = []
        self._started = False

    def feed(self, chunk: bytes) -> list[RawEvent]:
        text = self._decoder.decode(chunk)
        if not self._started and text:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        self._buffer += text
        out: list[RawEvent] = []
        while True:
            idx = _line_end(self._buffer)
            if idx is None:
                break
            end, width = idx
            line = self._buffer[:end]
            self._buffer = self._buffer[end + width :]
            event = self._line(line)
            if event is not None:
                out.append(event)
        return out

    def _line(self, line: str) -> RawEvent | None:
        if line == "":
            raw = "\n".join(self._raw)
            self._raw = []
            if not self._data:
                self._event = ""
                return None
            event = RawEvent(
                data="\n".join(self._data), event=self._event or "message", id=self._id, raw=raw
            )
            self._data = []
            self._event = ""
            return event
        self._raw.append(line)
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\x00" not in value:
            self._id = value
        return None


def _line_end(buffer: str) -> tuple[int, int] | None:
    for i, ch in enumerate(buffer):
        if ch == "\n":
            return i, 1
        if ch == "\r":
            if i + 1 == len(buffer):
                return None  # maybe the first half of CRLF: wait for more
            return (i, 2) if buffer[i + 1] == "\n" else (i, 1)
    return None
