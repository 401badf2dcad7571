"""A TCP proxy between a test's store and PostgreSQL that misbehaves on cue.

* :attr:`PgProxy.armed` set to some bytes: the connection that next sends a message
  holding them (a COMMIT, say) is closed as soon as the server answers it, the
  answer never passed on (the server did the work; the client cannot know).
* :attr:`PgProxy.flowing` cleared: nothing is forwarded either way and nothing new
  is connected, but nothing is closed either, as with a frozen server or a
  network that drops packets without a reset.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

__all__ = ["PgProxy", "pg_proxy"]


class PgProxy:
    """See the module; :func:`pg_proxy` starts one and gives the DSN through it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        #: The bytes whose answer is dropped, once (``None``: none armed).
        self.armed: bytes | None = None
        #: How many answers were dropped.
        self.cut = 0
        self.flowing = asyncio.Event()
        self.flowing.set()
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.flowing.wait()
        upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)
        answering = asyncio.Event()

        async def to_server() -> None:
            while data := await reader.read(65536):
                await self.flowing.wait()
                if self.armed is not None and self.armed in data:
                    self.armed = None
                    answering.set()
                upstream_writer.write(data)
                await upstream_writer.drain()
            upstream_writer.close()

        async def to_client() -> None:
            while data := await upstream_reader.read(65536):
                await self.flowing.wait()
                if answering.is_set():
                    self.cut += 1
                    writer.transport.abort()
                    upstream_writer.transport.abort()
                    return
                writer.write(data)
                await writer.drain()
            writer.close()

        for pump in (to_server(), to_client()):
            task = asyncio.ensure_future(pump)
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def aclose(self) -> None:
        self.flowing.set()
        if self._server is not None:
            self._server.close()
        for task in list(self._pumps):
            task.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)


@asynccontextmanager
async def pg_proxy(dsn: str) -> AsyncIterator[tuple[PgProxy, str]]:
    """A started :class:`PgProxy` to the server of ``dsn``, and the DSN through it
    (``sslmode=disable`` added, so that the proxy can read the messages)."""
    url = urlsplit(dsn)
    proxy = PgProxy(url.hostname or "127.0.0.1", url.port or 5432)
    port = await proxy.start()
    netloc = f"{url.username}@127.0.0.1:{port}" if url.username else f"127.0.0.1:{port}"
    through = url._replace(netloc=netloc).geturl()
    through += ("&" if "?" in through else "?") + "sslmode=disable"
    try:
        yield proxy, through
    finally:
        await proxy.aclose()
