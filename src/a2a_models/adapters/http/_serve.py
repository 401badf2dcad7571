"""Run the app with uvicorn inside the current event loop.

>>> async with HTTPServer(AgentServer(agent, card)) as http:   # doctest: +SKIP
...     print(http.url)                                          # http://127.0.0.1:53127

The server binds its own socket (so ``port=0`` resolves before ``start``
returns and a busy port raises :class:`OSError`), installs no signal
handlers and leaves logging configuration alone: it is meant to be embedded
in a program or a test, not to be the program.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from ..._closing import AsyncRunning
from ...server import A2AServer
from ._app import create_app, gateway_of
from ._limits import ConnectionLimits, protocol_class
from ._tls import TLSConfig

__all__ = ["HTTPServer"]


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without process-wide signal handling, whose main loop ticks once a second."""

    _exiting: asyncio.Event | None = None
    _should_exit = False

    @property
    def should_exit(self) -> bool:
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._should_exit = value
        if value and self._exiting is not None:
            self._exiting.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def main_loop(self) -> None:
        # uvicorn's loop sleeps 0.1 s between looks at should_exit: an idle server
        # woke 10 times a second. Its ticks keep the date header current (to the
        # second); setting should_exit ends the wait at once.
        self._exiting = asyncio.Event()
        if self._should_exit:
            self._exiting.set()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._exiting.wait()


class HTTPServer(AsyncRunning):
    """An A2A app (or an :class:`A2AServer`, wrapped by :func:`create_app`) on HTTP.

    ``host`` defaults to the loopback interface; listen on ``"0.0.0.0"``
    deliberately. ``port=0`` picks a free port (see :attr:`port` after
    :meth:`start`). ``app_options`` go to :func:`create_app` when given a
    server. ``graceful_timeout`` bounds how long :meth:`stop` waits for
    requests in flight. Pass ``log_level`` (e.g. ``"info"``) to make uvicorn
    log; by default it only inherits the process's logging configuration.
    ``limits`` bounds slow clients and open connections (default:
    :class:`ConnectionLimits()`); ``tls`` serves HTTPS (and, with a client
    CA, requires client certificates).
    """

    def __init__(
        self,
        app: ASGIApp | A2AServer,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        graceful_timeout: float = 5.0,
        log_level: str | None = None,
        limits: ConnectionLimits | None = None,
        tls: TLSConfig | None = None,
        **app_options: Any,
    ) -> None:
        if isinstance(app, A2AServer):
            self.app: ASGIApp = create_app(app, **app_options)
        elif app_options:
            raise TypeError(
                f"create_app options {sorted(app_options)} only apply when given an A2AServer"
            )
        else:
            self.app = app
        self.host = host
        self.requested_port = port
        self.graceful_timeout = graceful_timeout
        self.log_level = log_level
        self.limits = limits or ConnectionLimits()
        self.tls = tls
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._port: int | None = None

    @property
    def running(self) -> bool:
        """True between a successful :meth:`start` and :meth:`stop`."""
        return self._task is not None

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        if self._port is None:
            raise RuntimeError("the HTTP server is not running: await start() first")
        return self._port

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server (no trailing slash)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY on an
        # accepted connection only when the socket says it is TCP. Without it,
        # every response on a keep-alive connection waits for the client's
        # delayed ACK (~40 ms on Linux) because of Nagle's algorithm.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.requested_port))
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        return sock

    async def start(self) -> int:
        """Start listening; returns the bound port.

        Raises :class:`RuntimeError` if already running or if the app fails
        to start (its lifespan startup failed), :class:`OSError` if the
        address cannot be bound.
        """
        if self._task is not None:
            raise RuntimeError(f"the HTTP server is already running at {self.url}; stop() it first")
        sock = self._bind()
        config = uvicorn.Config(
            self.app,
            lifespan="on",
            log_config=None,
            log_level=self.log_level,
            access_log=False,
            timeout_graceful_shutdown=max(1, round(self.graceful_timeout)),
            http=protocol_class(self.limits),
            timeout_keep_alive=self.limits.keep_alive_timeout,  # type: ignore[arg-type]
            **(self.tls.uvicorn_options() if self.tls else {}),
        )
        server = _EmbeddedServer(config)
        task = asyncio.create_task(self._serve(server, sock), name="a2a-http-server")
        self._server, self._task = server, task
        while not server.started:
            if task.done():
                self._server = self._task = None
                sock.close()
                task.result()  # raises what went wrong
                raise RuntimeError("the HTTP server stopped while starting")
            await asyncio.sleep(0.005)
        self._port = int(sock.getsockname()[1])
        return self._port

    @staticmethod
    async def _serve(server: _EmbeddedServer, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        except SystemExit as exc:  # uvicorn exits the process on a failed startup
            raise RuntimeError(
                f"the HTTP server failed to start (uvicorn exit code {exc.code})"
            ) from None

    async def stop(self, *, before_drain: Callable[[], Awaitable[None]] | None = None) -> None:
        """Stop gracefully: end open SSE streams, finish requests in flight, run the shutdown.

        ``before_drain`` is awaited once no new connection is accepted, before
        waiting for the requests in flight: an :class:`A2AServer`'s ``aclose``
        there stops the running agents (their tasks failed), so that a blocking
        ``SendMessage`` is answered with its task instead of being cut off when
        ``graceful_timeout`` runs out. Does nothing if the server is not running.
        """
        server, task = self._server, self._task
        if server is None or task is None:
            return
        gateway = gateway_of(self.app)
        if gateway is not None:
            gateway.streams.close_all()
        server.should_exit = True
        try:
            if before_drain is not None:
                await _refusing(server, task)
                try:
                    await before_drain()
                finally:
                    await self._drain(server, task)
            else:
                await self._drain(server, task)
        finally:
            self._server = self._task = None
            self._port = None

    async def _drain(self, server: uvicorn.Server, task: asyncio.Task[None]) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(task), self.graceful_timeout + 5.0)
        except TimeoutError:
            server.force_exit = True
            await task


async def _refusing(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    """Wait until ``server`` (told to exit) accepts no new connection: its main loop
    wakes when ``should_exit`` is set and closes its listeners first."""
    while not task.done() and (
        not server.servers or any(listener.is_serving() for listener in server.servers)
    ):
        await asyncio.sleep(0.01)
