"""The agent as an MCP client: the tools of the servers in ``mcp.json``, as uniform tools."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TextIO

import anyio
import attrs
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ... import observability
from ..._closing import AsyncRunning
from ...errors import A2AError, quote_input
from ...models import JSONObject
from ...tools import (
    Adapter,
    Tool,
    Toolbox,
    ToolContext,
    ToolExecutionError,
    ToolNameError,
    ToolOutput,
    check_unique,
    namespaced_name,
)
from ._config import (
    HTTPServerConfig,
    MCPServerConfig,
    StdioServerConfig,
    load_mcp_config,
    parse_mcp_config,
)
from ._convert import from_call_result
from ._transport import StderrTail, unparsable_answer, unreadable

__all__ = [
    "ConnectMode",
    "ContextProvider",
    "MCPConnection",
    "MCPServerError",
    "MCPToolHub",
    "RestartPolicy",
    "ToolsChangedCallback",
]

log = logging.getLogger("a2a_models.adapters.mcp")

#: Runs once at start-up with the connected servers (by name); returns the
#: agent's custom context, handed to every tool.
ContextProvider = Callable[[Mapping[str, "MCPConnection"]], Awaitable[Any]]
#: Called with the server name after a server's tool list was refreshed.
ToolsChangedCallback = Callable[[str], Any]
#: How the protocol version is negotiated (the SDK's ``Client(mode=...)``).
ConnectMode = Literal["auto", "legacy"]

_MAX_PAGES = 100
_MAX_RELISTENS = 5
_STOP_TIMEOUT = 15.0
_STDERR_WAIT = 1.0  # for the rest of a stopped stdio server's stderr


@attrs.frozen(slots=True, kw_only=True)
class RestartPolicy:
    """How a consumed MCP server is brought back after it crashed or its connection
    was lost (the first start is never retried: a server that cannot start fails fast).

    Attempt *n* (from 0) waits ``min(max_delay, initial_delay * factor ** n)``
    seconds; after ``max_restarts`` failed attempts in a row the server stays
    down (its tools stay withdrawn, an error is logged). A connection that then
    stays up for ``reset_after`` seconds earns the full budget back; one that
    dies sooner counts as a failed attempt (a crash loop is given up).
    ``health_interval`` is how often an idle connection is probed to notice a
    dead server (``ping``; ``tools/list`` on 2026-era connections, which have no
    ping); a failed call notices at once. ``None`` turns probes off. A probe
    unanswered within ``probe_timeout`` seconds finds the server dead, unless a
    tool call was running meanwhile (a server busy with a long call may answer
    nothing else until it is done).
    """

    max_restarts: int = attrs.field(default=5, validator=attrs.validators.ge(0))
    initial_delay: float = attrs.field(default=0.5, validator=attrs.validators.ge(0))
    max_delay: float = attrs.field(default=30.0, validator=attrs.validators.ge(0))
    factor: float = attrs.field(default=2.0, validator=attrs.validators.ge(1))
    reset_after: float = attrs.field(default=60.0, validator=attrs.validators.ge(0))
    health_interval: float | None = attrs.field(default=5.0)
    probe_timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))

    def delay(self, attempt: int) -> float:
        """The wait before restart attempt ``attempt`` (0-based)."""
        return float(min(self.max_delay, self.initial_delay * self.factor**attempt))


class MCPServerError(A2AError, RuntimeError):
    """An MCP server could not be started (or connected to); names the server."""

    def __init__(self, server: str, problem: str) -> None:
        self.server = server
        super().__init__(f"MCP server {server!r}: {problem}")


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class MCPConnection(AsyncRunning):
    """One MCP server: its connection (official SDK ``Client``), tools and lifecycle.

    :meth:`start` connects (spawning the subprocess of a stdio server, with its
    own environment) and lists the tools; :meth:`stop` closes the session and
    terminates the subprocess. In between, :attr:`tools` are the server's tools
    as uniform :class:`~a2a_models.tools.Tool` s named ``<server>__<tool>``
    (canonical snake_case), validating their arguments with :mod:`jsonschema`
    before each call. The list is refreshed whenever the server announces a
    change (``notifications/tools/list_changed``, or a ``subscriptions/listen``
    event on 2026-era connections).

    When the server crashes (or the connection is lost) after a successful
    start, its tools are withdrawn at once (:attr:`tools` is empty, so a model
    is no longer offered them; ``on_tools_changed`` is called) and the server
    is restarted following ``restart`` (a :class:`RestartPolicy`: bounded
    attempts with exponential backoff; ``None``: never restarted); once it is
    back its tools are listed again and restored. :attr:`restarts` counts
    the successful restarts.

    The connection lives in a task of its own, so :meth:`start` and
    :meth:`stop` may be awaited from different tasks.
    """

    def __init__(
        self,
        config: MCPServerConfig,
        *,
        mode: ConnectMode = "auto",
        connect_timeout: float = 30.0,
        call_timeout: float | None = None,
        errlog: TextIO | None = None,
        on_tools_changed: ToolsChangedCallback | None = None,
        restart: RestartPolicy | None = RestartPolicy(),
    ) -> None:
        self.config = config
        self.restart = restart
        self.name = config.name
        where = f"MCP server {config.name!r}"
        #: The tool-name prefix: the server name in canonical snake_case.
        self.prefix = namespaced_name(config.name, "x", source=where).rsplit("__", 1)[0]
        self.mode = mode
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.errlog = errlog
        self.on_tools_changed = on_tools_changed
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._changed = asyncio.Event()
        self._error: BaseException | None = None
        self._mcp_tools: tuple[types.Tool, ...] = ()
        self._tools: tuple[Tool, ...] = ()
        self._version = 0
        self._lost = False
        self._lost_event = asyncio.Event()
        self._callbacks: set[asyncio.Future[Any]] = set()
        # Tool calls running now, and started so far: the health probe leaves a
        # busy connection alone (see _health_loop).
        self._calls_running = 0
        self._calls_started = 0
        # Why the connection of this client was given up (a line that is not
        # JSON-RPC): what its calls in flight fail with.
        self._fault: tuple[Client | None, str] | None = None
        self._stderr: StderrTail | None = None
        #: Successful restarts after a crash or a lost connection.
        self.restarts = 0
        #: True once the restart budget is spent and the server stays down.
        self.gave_up = False
        #: The last refresh failure (e.g. an invalid tool name announced later), if any.
        self.last_error: BaseException | None = None

    def __repr__(self) -> str:
        state = "connected" if self.connected else "stopped"
        return f"MCPConnection({self.name!r}, {state}, {len(self._tools)} tools)"

    # ----------------------------------------------------------------- state

    @property
    def connected(self) -> bool:
        """True between a successful :meth:`start` and :meth:`stop`, unless the
        connection was found closed (the server died, the endpoint went away)."""
        return self._client is not None and not self._lost

    @property
    def client(self) -> Client:
        """The SDK's connected ``mcp.Client`` (for anything beyond tools)."""
        if self._client is None:
            raise MCPServerError(self.name, "not connected")
        return self._client

    @property
    def protocol_version(self) -> str | None:
        """The negotiated MCP protocol version."""
        return self._client.protocol_version if self._client is not None else None

    @property
    def mcp_tools(self) -> tuple[types.Tool, ...]:
        """The server's tool definitions as it listed them."""
        return self._mcp_tools

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The server's tools as uniform tools (``<server>__<tool>``)."""
        return self._tools

    @property
    def tools_version(self) -> int:
        """Incremented by every successful tool-list refresh."""
        return self._version

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Connect and list the tools.

        Raises :class:`MCPServerError` naming the server when it cannot be
        started or does not answer within ``connect_timeout``, and
        :class:`~a2a_models.tools.ToolNameError` when one of its tool names
        is invalid or two collide.
        """
        if self._task is not None:
            raise RuntimeError(f"MCP server {self.name!r} is already started")
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._changed = asyncio.Event()
        self._error = None
        self._lost = False
        self._lost_event = asyncio.Event()
        self.gave_up = False
        self._task = asyncio.create_task(self._supervise(), name=f"mcp-server-{self.name}")
        try:
            async with asyncio.timeout(self.connect_timeout):
                await self._ready.wait()
        except TimeoutError:
            await self.stop()
            raise MCPServerError(
                self.name,
                f"did not start within {self.connect_timeout:g} seconds{self._what_it_said()}",
            ) from None
        except BaseException:
            await self.stop()
            raise
        error = self._error
        if error is not None:
            await self.stop()
            leaf = _leaf(error)
            if isinstance(leaf, ToolNameError):
                raise leaf
            if isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED:
                problem = "it exited (or closed its output) before answering the MCP handshake"
            else:
                problem = _describe(error)
            said = self._what_it_said(spawned=not isinstance(leaf, OSError))
            raise MCPServerError(self.name, f"could not start: {problem}{said}") from leaf

    async def stop(self) -> None:
        """Close the session and terminate the subprocess (idempotent).

        A stdio server gets its stdin closed, then, if still running, SIGTERM
        and SIGKILL to its process group (the SDK's escalation, each step
        bounded): no server process is left behind (a server that exits by
        itself must stop what it started).
        """
        task = self._task
        if task is None:
            return
        self._stop.set()
        if not self._ready.is_set():
            # Still connecting (a server that does not answer): nothing to close
            # gracefully; cancelling still runs the transport's shutdown, which
            # terminates the subprocess.
            task.cancel()
        try:
            _, pending = await asyncio.wait({task}, timeout=_STOP_TIMEOUT)
            if pending:
                log.warning("MCP server %r did not stop in time: cancelling", self.name)
                task.cancel()
                await asyncio.wait({task}, timeout=_STOP_TIMEOUT)
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: the supervisor logs its own failures
        finally:
            self._task = None
            self._client = None
            self._mcp_tools = ()
            self._tools = ()

    def _what_it_said(self, spawned: bool = True) -> str:
        """For a start-up error: the command run and (if it ran) the end of its stderr."""
        config = self.config
        if not isinstance(config, StdioServerConfig):
            return ""
        command = config.command_line()
        if not spawned:
            return f" (command: {command})"
        said = self._stderr.tail() if self._stderr is not None else ""
        return f" (command: {command}; " + (
            f"its stderr ended with: {said})" if said else "it wrote nothing to stderr)"
        )

    def _transport(self) -> Any:
        config = self.config
        if isinstance(config, StdioServerConfig):
            # Undecodable bytes become U+FFFD: with the SDK's "strict" default one
            # non-UTF-8 byte ends its stdout reader unnoticed, and every later call
            # waits for an answer that can no longer be read.
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env),
                cwd=config.cwd,
                encoding_error_handler="replace",
            )
            errlog = self._stderr.writer if self._stderr is not None else self.errlog or sys.stderr
            return stdio_client(params, errlog=errlog)
        if config.transport == "sse":
            return sse_client(config.url, headers=dict(config.headers), timeout=30.0)
        import httpx2

        http = httpx2.AsyncClient(
            headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0)
        )
        return _HTTPTransport(config.url, http)

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            began = loop.time()
            await self._session()
            if self._stop.is_set() or self._error is not None:
                return
            # The server crashed or the connection was lost after a good start.
            self._withdraw()
            policy = self.restart
            if policy is None:
                log.warning("MCP server %r is down; it is not restarted", self.name)
                await self._stop.wait()
                return
            if loop.time() - began >= policy.reset_after:
                attempt = 0
            while True:
                if attempt >= policy.max_restarts:
                    self.gave_up = True
                    log.error(
                        "MCP server %r is down: gave up after %d restart attempts",
                        self.name,
                        attempt,
                    )
                    await self._stop.wait()
                    return
                delay = policy.delay(attempt)
                attempt += 1
                log.warning(
                    "MCP server %r is down; restart attempt %d/%d in %.2gs",
                    self.name,
                    attempt,
                    policy.max_restarts,
                    delay,
                )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._stop.wait()
                if self._stop.is_set():
                    return
                self._lost = False
                self._lost_event = asyncio.Event()
                restarted = asyncio.Event()
                session = asyncio.create_task(self._session(restarted))
                waiter = asyncio.create_task(restarted.wait())
                await asyncio.wait({session, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if restarted.is_set():
                    self.restarts += 1
                    log.warning("MCP server %r is back (restart %d)", self.name, self.restarts)
                    began = loop.time()
                    await session
                    if self._stop.is_set():
                        return
                    self._withdraw()
                    if loop.time() - began >= policy.reset_after:
                        attempt = 0
                    continue
                await session  # failed to come back: try again after the next delay

    def _withdraw(self) -> None:
        """Offer none of the server's tools while it is down."""
        if not self._tools and not self._mcp_tools:
            return
        self._tools = ()
        self._mcp_tools = ()
        self._version += 1
        log.warning("MCP server %r: its tools are withdrawn while it is down", self.name)
        self._notify_changed()

    async def _session(self, up: asyncio.Event | None = None) -> None:
        """One connection, from connecting until it is stopped or lost.

        The first session (``up`` is ``None``) reports to :meth:`start`; a restart
        sets ``up`` once the tools are listed again.
        """
        first = up is None
        if isinstance(self.config, StdioServerConfig):
            self._stderr = StderrTail(self.errlog or sys.stderr)
        try:
            client = Client(
                self._transport(),
                mode=self.mode,
                message_handler=self._on_message,
                read_timeout_seconds=self.call_timeout,
                cache=None,
                client_info=types.Implementation(name="a2a-models", version=_version()),
            )
            try:
                await client.__aenter__()
            finally:
                if self._stderr is not None:
                    self._stderr.spawned()
            async with contextlib.AsyncExitStack() as entered:
                entered.push_async_exit(client)
                self._client = client
                if first:
                    await self._refresh()
                else:
                    async with asyncio.timeout(self.connect_timeout):
                        await self._refresh()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._refresh_loop)
                    if self._listen_needed(client):
                        tg.start_soon(self._listen_loop, client)
                    if self.restart is not None and self.restart.health_interval:
                        tg.start_soon(self._health_loop, client, self.restart)
                    if first:
                        self._ready.set()
                    else:
                        assert up is not None
                        up.set()
                    await _first(self._stop, self._lost_event)
                    tg.cancel_scope.cancel()
        except Exception as exc:
            if first and not self._ready.is_set():
                self._error = exc
            else:
                log.warning("MCP server %r: connection ended: %s", self.name, _describe(exc))
        finally:
            self._client = None
            if self._stderr is not None:
                await self._stderr.close(_STDERR_WAIT)
            if first:
                self._ready.set()

    def _mark_lost(self, *, quiet: bool = False) -> None:
        if not self._lost and not quiet:
            log.warning("MCP server %r: the connection is closed", self.name)
        self._lost = True
        self._lost_event.set()

    async def _health_loop(self, client: Client, policy: RestartPolicy) -> None:
        assert policy.health_interval
        while True:
            await anyio.sleep(policy.health_interval)
            if self._calls_running:
                continue  # a running call notices a dead server itself
            started = self._calls_started
            try:
                with anyio.fail_after(policy.probe_timeout):
                    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                        await client.list_tools()  # 2026-era MCP has no ping
                    else:
                        await client.send_ping()
            except Exception as exc:
                if self._calls_started != started:
                    # A call began meanwhile: a server that answers one request at a
                    # time answers the probe after it, which is no sign of death.
                    continue
                log.warning("MCP server %r: no answer to a ping: %s", self.name, _describe(exc))
                self._mark_lost()
                return

    @staticmethod
    def _listen_needed(client: Client) -> bool:
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return False  # 2025-era servers send notifications/tools/list_changed unasked
        tools = client.server_capabilities.tools
        return bool(tools is not None and tools.list_changed)

    async def _listen_loop(self, client: Client) -> None:
        # A dropped stream is not resumable: listen again and refetch, a few
        # times in a row at most; a closed connection ends the loop.
        failures = 0
        reason: Exception
        while failures < _MAX_RELISTENS:
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    if failures:
                        self._changed.set()  # changes may have been missed meanwhile
                    failures = 0
                    async for _event in subscription:
                        self._changed.set()
                return  # the server closed the subscription gracefully
            except MCPError as exc:
                if exc.code == types.CONNECTION_CLOSED:
                    self._mark_lost()
                    return
                failures += 1
                reason = exc
            except Exception as exc:
                failures += 1
                reason = exc
            log.info(
                "MCP server %r: tool-change subscription ended (%s); listening again",
                self.name,
                _describe(reason),
            )
            await anyio.sleep(0.2 * failures)
        log.warning("MCP server %r: gave up listening for tool-list changes", self.name)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._changed.set()
        elif isinstance(message, Exception):
            self._on_stream_error(message)

    def _on_stream_error(self, exc: Exception) -> None:
        bad = unreadable(exc)
        if bad is None:
            log.warning("MCP server %r: transport error: %s", self.name, _describe(exc))
            return
        line, broken = bad
        if not broken:
            # Stray text (a print() in a tool): no answer was lost in it, so the
            # calls in flight still get theirs. A blank line is not worth a word.
            if line.strip():
                log.warning(
                    "MCP server %r sent text that is no MCP message (ignored): %s",
                    self.name,
                    quote_input(line),
                )
            return
        # A JSON-RPC message that cannot be read may have been any call's answer,
        # which would then never come: the server is broken, as if it had crashed.
        then = "restarted" if self.restart is not None else "closed"
        problem = (
            f"the server broke the protocol: it sent a line that is not a JSON-RPC "
            f"message: {quote_input(line)} (the connection is {then})"
        )
        self._fault = (self._client, problem)
        log.warning("MCP server %r: %s", self.name, problem)
        self._mark_lost(quiet=True)

    async def _refresh_loop(self) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            try:
                await self._refresh()
            except Exception as exc:
                self.last_error = exc
                log.error("MCP server %r: refreshing the tool list failed: %s", self.name, exc)

    async def refresh(self) -> tuple[Tool, ...]:
        """List the tools again now (also done automatically on change announcements)."""
        await self._refresh()
        return self._tools

    async def _refresh(self) -> None:
        client = self.client
        listed: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        tools = self._build(listed)
        self._mcp_tools = tuple(listed)
        self._tools = tools
        self._version += 1
        self.last_error = None
        self._notify_changed()

    def _notify_changed(self) -> None:
        callback = self.on_tools_changed
        if callback is None:
            return
        try:
            outcome = callback(self.name)
            if asyncio.iscoroutine(outcome):
                task = asyncio.ensure_future(outcome)
                self._callbacks.add(task)
                task.add_done_callback(self._callback_done)
        except Exception:
            log.exception("MCP server %r: on_tools_changed failed", self.name)

    def _callback_done(self, task: asyncio.Future[Any]) -> None:
        self._callbacks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "MCP server %r: on_tools_changed failed",
                self.name,
                exc_info=task.exception(),
            )

    def _source(self, tool_name: str) -> str:
        return f"MCP server {self.name!r}, tool {tool_name!r}"

    def _build(self, listed: Sequence[types.Tool]) -> tuple[Tool, ...]:
        built: dict[str, Tool] = {}
        for spec in listed:
            source = self._source(spec.name)
            name = namespaced_name(self.prefix, spec.name, source=source)
            other = built.get(name)
            if other is not None:
                raise ToolNameError(
                    f"{other.source} and {source} both become the tool name {name!r}"
                )
            built[name] = Tool(
                name=name,
                description=spec.description or spec.title or "",
                input_schema=dict(spec.input_schema),
                output_schema=spec.output_schema,
                fn=self._remote(spec.name),
                source=source,
                metadata={
                    "mcp_server": self.name,
                    "mcp_tool": spec.name,
                    **({"title": spec.title} if spec.title else {}),
                },
            )
        return tuple(built.values())

    def _remote(self, tool_name: str) -> Callable[[JSONObject, ToolContext], Awaitable[ToolOutput]]:
        async def run(arguments: JSONObject, context: ToolContext) -> ToolOutput:
            return from_call_result(await self.call_tool(tool_name, arguments))

        return run

    async def call_tool(
        self, tool_name: str, arguments: JSONObject | None = None
    ) -> types.CallToolResult:
        """Call the server's tool ``tool_name`` (its own name, not the namespaced one).

        No validation here (the :class:`~a2a_models.tools.Tool` does it).
        Raises :class:`~a2a_models.tools.ToolExecutionError` when the call
        cannot complete: not connected, the server died, timeout, protocol error.
        """
        if not observability.instrumented():
            return await self._call_tool(tool_name, arguments)
        start = time.perf_counter()
        try:
            result = await self._call_tool(tool_name, arguments)
        except BaseException as exc:
            observability.record_mcp_call(
                tool_name, self.config.name, time.perf_counter() - start, exc
            )
            raise
        error = ToolExecutionError(tool_name, "isError") if result.is_error else None
        observability.record_mcp_call(
            tool_name, self.config.name, time.perf_counter() - start, error
        )
        return result

    async def _call_tool(
        self, tool_name: str, arguments: JSONObject | None
    ) -> types.CallToolResult:
        client = self._client
        where = self._source(tool_name)
        if client is None:
            raise ToolExecutionError(tool_name, f"{where}: the server is not connected")
        self._calls_running += 1
        self._calls_started += 1
        try:
            if self.call_timeout is not None:
                with anyio.fail_after(self.call_timeout):
                    return await client.call_tool(tool_name, arguments)
            return await client.call_tool(tool_name, arguments)
        except TimeoutError:
            raise ToolExecutionError(
                tool_name, f"{where}: no answer within {self.call_timeout:g} seconds"
            ) from None
        except Exception as exc:
            if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
                self._mark_lost()
                fault = self._fault
                if fault is not None and fault[0] is client:
                    raise ToolExecutionError(tool_name, f"{where}: {fault[1]}") from exc
            elif unparsable_answer(exc):
                # Streamable HTTP ties an unreadable answer to its request (the call
                # fails, the connection is fine); the SDK's traceback is dropped.
                detail = " ".join(str(exc).split())
                problem = f"the server broke the protocol: its answer is not a JSON-RPC message ({detail})"
                log.warning("MCP server %r, tool %r: %s", self.name, tool_name, problem)
                raise ToolExecutionError(tool_name, f"{where}: {problem}") from exc
            raise ToolExecutionError(
                tool_name, f"{where}: the call failed: {_describe(exc)}"
            ) from exc
        finally:
            self._calls_running -= 1


class _HTTPTransport:
    """``streamable_http_client`` that also closes the httpx2 client it was given."""

    def __init__(self, url: str, http: Any) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._url = url
        self._http = http

    async def __aenter__(self) -> Any:
        await self._stack.enter_async_context(self._http)
        return await self._stack.enter_async_context(
            streamable_http_client(self._url, http_client=self._http)
        )

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._stack.__aexit__(*exc_info)


async def _first(*events: asyncio.Event) -> None:
    """Wait until one of ``events`` is set."""
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _version() -> str:
    from ... import __version__

    return __version__


class MCPToolHub(AsyncRunning):
    """Every MCP server of an agent (from ``mcp.json``): connections, tools, custom context.

    >>> async with MCPToolHub.from_config("mcp.json") as hub:   # doctest: +SKIP
    ...     toolbox = hub.toolbox(adapters={"*": audit})
    ...     await toolbox.call("github__create_issue", {...})

    :meth:`start` connects every server concurrently and fails fast: the
    first server that cannot start raises :class:`MCPServerError` naming it
    (the others are stopped again). Then ``context_provider`` runs once with
    the connected servers and its value becomes :attr:`context`. :meth:`stop`
    closes everything and leaves no subprocess behind. A server that crashes
    later is restarted following ``restart`` (see :class:`MCPConnection`);
    its tools are missing from :attr:`tools` while it is down.

    :attr:`tools` are all servers' tools (``<server>__<tool>``), re-read on
    every access so refreshed lists show at once; the hub is a
    :class:`~a2a_models.tools.ToolProvider` for a
    :class:`~a2a_models.tools.Toolbox` (see :meth:`toolbox`). Server names
    that canonicalise to the same prefix are refused when the hub is built.
    """

    def __init__(
        self,
        servers: Mapping[str, MCPServerConfig] | Iterable[MCPServerConfig],
        *,
        context_provider: ContextProvider | None = None,
        mode: ConnectMode = "auto",
        connect_timeout: float = 30.0,
        call_timeout: float | None = None,
        errlog: TextIO | None = None,
        on_tools_changed: ToolsChangedCallback | None = None,
        restart: RestartPolicy | None = RestartPolicy(),
    ) -> None:
        configs = list(servers.values() if isinstance(servers, Mapping) else servers)
        self.connections: dict[str, MCPConnection] = {}
        prefixes: dict[str, str] = {}
        for config in configs:
            if not isinstance(config, StdioServerConfig | HTTPServerConfig):
                raise TypeError(f"expected an MCP server config, got {type(config).__name__}")
            if config.name in self.connections:
                raise ValueError(f"two MCP servers are named {config.name!r}")
            connection = MCPConnection(
                config,
                mode=mode,
                connect_timeout=connect_timeout,
                call_timeout=call_timeout,
                errlog=errlog,
                on_tools_changed=on_tools_changed,
                restart=restart,
            )
            other = prefixes.get(connection.prefix)
            if other is not None:
                raise ToolNameError(
                    f"MCP servers {other!r} and {config.name!r} both become the tool "
                    f"prefix {connection.prefix!r}"
                )
            prefixes[connection.prefix] = config.name
            self.connections[config.name] = connection
        self.context_provider = context_provider
        #: The agent's custom context (the context provider's value, after :meth:`start`).
        self.context: Any = None
        self._started = False

    @classmethod
    def from_config(
        cls,
        source: str | os.PathLike[str] | Mapping[str, Any],
        *,
        env: Mapping[str, str] | None = None,
        **options: Any,
    ) -> MCPToolHub:
        """A hub for the servers of an ``mcp.json`` file (a path) or document (a mapping)."""
        if isinstance(source, Mapping):
            servers = parse_mcp_config(source, env=env)
        else:
            servers = load_mcp_config(source, env=env)
        return cls(servers, **options)

    def __repr__(self) -> str:
        return f"MCPToolHub({', '.join(self.connections)})"

    @property
    def started(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._started

    @property
    def tools(self) -> tuple[Tool, ...]:
        """Every connected server's tools, in configuration order."""
        return tuple(check_unique(t for c in self.connections.values() for t in c.tools).values())

    def toolbox(
        self,
        tools: Iterable[Tool] = (),
        *,
        adapters: Mapping[str, Adapter] | Iterable[tuple[str, Adapter]] = (),
    ) -> Toolbox:
        """A :class:`~a2a_models.tools.Toolbox` of local ``tools`` plus this hub's tools,
        with ``adapters``, whose custom context is :attr:`context`."""
        return Toolbox(
            tools, providers=[self], adapters=adapters, context_source=lambda: self.context
        )

    async def start(self) -> None:
        """Connect every server (concurrently; fail fast), then run the context provider."""
        if self._started:
            raise RuntimeError("the MCP hub is already started")
        self._started = True
        try:
            tasks = [asyncio.create_task(c.start()) for c in self.connections.values()]
            if tasks:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
                for task in tasks:
                    if not task.done():
                        task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                for task in tasks:  # the first failure in configuration order
                    exc = task.exception() if not task.cancelled() else None
                    if exc is not None:
                        raise exc
            if self.context_provider is not None:
                self.context = await self.context_provider(dict(self.connections))
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Close every session and terminate every subprocess (idempotent)."""
        await asyncio.gather(*(c.stop() for c in self.connections.values()))
        self.context = None
        self._started = False

    async def call(
        self, name: str, arguments: JSONObject | None = None, context: ToolContext | None = None
    ) -> ToolOutput:
        """Call the namespaced tool ``name`` (validated first)."""
        for tool in self.tools:
            if tool.name == name:
                return await tool.call(arguments, context or ToolContext(custom=self.context))
        raise KeyError(f"no MCP tool named {name!r}")
