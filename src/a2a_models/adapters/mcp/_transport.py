"""What an MCP connection reads besides its messages: a stdio server's stderr, and
the lines the SDK could not parse."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from typing import TextIO

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

__all__ = ["StderrTail", "unparsable_answer", "unreadable"]

_STDERR_KEPT = 4096  # characters of a stdio server's stderr kept for error messages
_STDERR_LINES = 5  # of which the last lines go into a start-up error


def unreadable(exc: BaseException) -> tuple[str, bool] | None:
    """For a message the SDK could not parse (the exception its transport hands
    the session instead): the line as the server sent it, and whether it is a
    broken protocol message (JSON, or cut-short JSON) rather than stray text
    (a ``print()`` in the server). ``None`` for any other transport error."""
    if not isinstance(exc, ValidationError) or not exc.error_count():
        return None
    first = exc.errors(include_url=False)[0]
    if first["type"] != "json_invalid":
        # JSON, but no JSON-RPC message: pydantic keeps the parsed value.
        return json.dumps(first["input"], ensure_ascii=False, default=str), True
    line = str(first["input"])
    return line, line.lstrip().startswith(("{", "["))


def unparsable_answer(exc: BaseException) -> bool:
    """The error the SDK's HTTP transport answers a request with when the server's
    answer could not be parsed (not the server's own Parse error: that names our
    request)."""
    return (
        isinstance(exc, MCPError)
        and exc.code == types.PARSE_ERROR
        and exc.message.startswith("Failed to parse ")
    )


class _ParseNoise(logging.Filter):
    """Drops the SDK's traceback for a message it cannot parse: the connection
    reports that line itself, in one warning naming the server (see
    ``MCPConnection._on_stream_error`` in ``_client``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ValidationError))


for _logger in ("mcp.client.stdio", "mcp.client.sse", "mcp.client.streamable_http"):
    logging.getLogger(_logger).addFilter(_ParseNoise())


class StderrTail:
    """A stdio server's stderr, read from a pipe: passed on to ``errlog`` as it comes
    and its end kept, so that a server that cannot start is reported with what it
    said (its stderr would otherwise only be interleaved with the agent's)."""

    def __init__(self, errlog: TextIO) -> None:
        self.errlog = errlog
        self.text = ""
        read_fd, write_fd = os.pipe()
        #: The write end, given to the subprocess; closed by :meth:`spawned`.
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "rb", buffering=0)
        self._task = asyncio.create_task(self._pump())

    def spawned(self) -> None:
        """The subprocess has its copy of the write end: ours is closed, so the pipe
        ends when the server (and whatever it started with it) is gone."""
        self.writer.close()

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), self._reader
        )
        try:
            while chunk := await reader.read(65536):
                text = chunk.decode("utf-8", errors="replace")
                self.text = (self.text + text)[-_STDERR_KEPT:]
                with contextlib.suppress(Exception):  # a closed or odd errlog loses nothing else
                    self.errlog.write(text)
                    self.errlog.flush()
        finally:
            transport.close()

    async def close(self, wait: float) -> None:
        """Read what is left (at most ``wait`` seconds: a helper the server started may
        hold the pipe open), then close the pipe."""
        self.writer.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                await asyncio.shield(self._task)
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task
        self._reader.close()

    def tail(self) -> str:
        """The last lines the server wrote to stderr, on one line (``""`` if none)."""
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        return " | ".join(lines[-_STDERR_LINES:])
