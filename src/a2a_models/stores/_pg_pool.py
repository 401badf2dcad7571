"""PostgreSQL connections for the stores: a small pool, autocommit-aware
transactions, and jsonb that keeps JSON exactly (psycopg 3, imported lazily)."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import re
import select
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .._outages import DatabaseTimeout, one_line

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "XID",
    "ConnectionPool",
    "Deadline",
    "Pool",
    "Xact",
    "atomic",
    "bounded",
    "connect_params",
    "exact",
    "jsonb",
    "next_notifies",
    "quote",
    "transact",
]

log = logging.getLogger("a2a_models.stores")

T = TypeVar("T")


class ConnectionPool(Protocol):
    """What :class:`PostgresTaskStore` needs of a pool, e.g. ``psycopg_pool.AsyncConnectionPool``."""

    def connection(self) -> AbstractAsyncContextManager[psycopg.AsyncConnection[Any]]: ...


# --- jsonb --------------------------------------------------------------------------------

# What jsonb cannot keep exactly: the escapes of NUL and of (lone) surrogates
# (rejected), numbers with a positive exponent (1e+16 comes back as the
# integer 10000000000000000) and -0.0 (comes back as 0.0). A match inside a
# string is a harmless false positive: the exact bytes are simply kept too.
_JSONB_LOSSY = re.compile(
    rb"\\u0000|\\u[dD][89a-fA-F]|[:\[,]-?[0-9]+(?:\.[0-9]+)?[eE]\+|[:\[,]-0\.0[,\]}]"
)
# A str holds a surrogate only unpaired (a pair is one code point).
_UNHOLDABLE = re.compile("[\x00\ud800-\udfff]")
_JSONB_REJECTED = re.compile(rb"\\u0000|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def jsonb(data: bytes) -> tuple[str, bytes | None]:
    """``(jsonb text, exact bytes or None)``: the exact bytes only when jsonb would alter them."""
    if _JSONB_LOSSY.search(data) is None:
        return data.decode(), None
    # The jsonb copy stays queryable; the store reads the exact bytes.
    return _JSONB_REJECTED.sub(rb"\\ufffd", data).decode(), data


def jsonb_text(value: str) -> str:
    """``value`` as a jsonb string holds it (``->>``): the same text unless jsonb
    cannot hold it (NUL, lone surrogates), which become U+FFFD."""
    return _UNHOLDABLE.sub("\ufffd", value)


def exact(text: str, raw: bytes | None) -> bytes | str:
    return text if raw is None else bytes(raw)


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


# --- a small pool -------------------------------------------------------------------------


def _hung_up(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether the server has (probably) closed this idle connection.

    An idle store connection has nothing to read unless the server spoke on
    its own, almost always a FATAL message before hanging up (a restart, an
    admin kill, ``idle_session_timeout``). Checking costs no round trip, so a
    write is not sent down a dead connection (whether a failed write
    committed could not be known). A rare false alarm (an asynchronous
    notice) only costs a new connection.
    """
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


#: libpq parameters every connection gets unless its conninfo says otherwise: a peer
#: that vanished (a partition drops packets, no RST) is found out by TCP keepalives
#: on an idle connection (30 + 3 x 10 s) and by ``tcp_user_timeout`` when what was
#: sent is never acknowledged, instead of being waited on until the kernel gives
#: up (minutes); a connection attempt gives up after 10 s, not psycopg's 130 s.
CONNECT_DEFAULTS: Mapping[str, str] = {
    "connect_timeout": "10",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}


def connect_params(conninfo: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` for ``psycopg.AsyncConnection.connect(conninfo, ...)``, with the
    :data:`CONNECT_DEFAULTS` that neither ``conninfo`` nor ``kwargs`` sets."""
    from psycopg.conninfo import conninfo_to_dict

    given = conninfo_to_dict(conninfo)
    defaults = {k: v for k, v in CONNECT_DEFAULTS.items() if k not in given}
    return {**defaults, **kwargs}


class Pool:
    """At most ``max_size`` autocommit connections, reused; broken ones are dropped.

    A connection idle for more than ``check_after`` seconds is pinged before
    reuse, so a restarted server costs no failed operation. One idle for more
    than ``close_after`` seconds is closed when another is given back: a burst
    does not leave every process of a cluster holding ``max_size`` connections
    (the most recently used one is reused first, so the others age).
    """

    def __init__(
        self,
        conninfo: str,
        max_size: int,
        check_after: float,
        kwargs: Mapping[str, Any],
        close_after: float = 60.0,
    ) -> None:
        self._conninfo = conninfo
        self._kwargs = dict(kwargs)
        self._check_after = check_after
        self._close_after = close_after
        self._pruner: asyncio.TimerHandle | None = None
        self._pruning: asyncio.Task[None] | None = None
        self._slots = asyncio.Semaphore(max_size)
        self._idle: collections.deque[tuple[psycopg.AsyncConnection[Any], float]] = (
            collections.deque()
        )
        self._closed = False

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if self._closed:
            raise RuntimeError("the store is closed")
        async with self._slots:
            conn = await self._take()
            healthy = False
            try:
                yield conn
                healthy = True
            finally:
                await self._give_back(conn, healthy)

    async def _take(self) -> psycopg.AsyncConnection[Any]:
        import psycopg

        loop = asyncio.get_running_loop()
        while self._idle:
            conn, since = self._idle.pop()
            if conn.closed or conn.broken or _hung_up(conn):
                await conn.close()
                continue
            if loop.time() - since > self._check_after:
                try:
                    await conn.execute("SELECT 1")
                except psycopg.Error:
                    await conn.close()
                    continue
            return conn
        return await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, **connect_params(self._conninfo, self._kwargs)
        )

    async def _give_back(self, conn: psycopg.AsyncConnection[Any], healthy: bool) -> None:
        from psycopg import pq

        if conn.broken:
            # The server probably went away: the idle ones are likely dead too.
            await self._drop_idle()
        reusable = (
            not self._closed
            and not conn.closed
            and not conn.broken
            and conn.info.transaction_status == pq.TransactionStatus.IDLE
        )
        if reusable:
            self._idle.append((conn, asyncio.get_running_loop().time()))
        else:
            await conn.close()
        await self._close_stale()

    async def _close_stale(self) -> None:
        """Close the connections idle for longer than ``close_after`` (all but one), and
        look again when the next one will be: a process that goes quiet (a front end
        between bursts) closes them too, not only one that keeps giving some back."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        # The oldest idle ones are on the left.
        while len(self._idle) > 1 and now - self._idle[0][1] >= self._close_after:
            stale, _ = self._idle.popleft()
            await stale.close()
        if self._pruner is None and len(self._idle) > 1 and not self._closed:
            due = self._idle[0][1] + self._close_after - now
            self._pruner = loop.call_later(max(due, 0.0), self._prune)

    def _prune(self) -> None:
        self._pruner = None
        if self._pruning is None or self._pruning.done():
            self._pruning = asyncio.ensure_future(self._close_stale())

    async def _drop_idle(self) -> None:
        while self._idle:
            conn, _ = self._idle.pop()
            await conn.close()

    async def close(self) -> None:
        self._closed = True
        if self._pruner is not None:
            self._pruner.cancel()
            self._pruner = None
        await self._drop_idle()


class Deadline:
    """``pool`` for one request that must be over within ``limit`` seconds.

    Waiting for a connection is bounded by what is left; at the deadline the
    connection in use is shut down (its socket, not the connection object), so a
    statement waiting on a database that stopped answering fails at once with a
    lost connection, which the pool drops (cancelling the statement instead
    would wait for a server that does not answer). Once :attr:`expired`, asking
    for a connection raises :class:`DatabaseTimeout`.
    """

    def __init__(self, pool: ConnectionPool, limit: float) -> None:
        self._pool = pool
        self.limit = limit
        self._at = asyncio.get_running_loop().time() + limit
        self.expired = False

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        loop = asyncio.get_running_loop()
        left = self._at - loop.time()
        if self.expired or left <= 0:
            self.expired = True
            raise DatabaseTimeout(self.limit)
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(left):
                    conn = await stack.enter_async_context(self._pool.connection())
            except TimeoutError:
                self.expired = True
                raise DatabaseTimeout(self.limit) from None
            stack.callback(loop.call_at(self._at, self._cut, conn).cancel)
            yield conn

    def _cut(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.expired = True
        try:
            with socket.socket(fileno=os.dup(conn.fileno())) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except Exception:  # already closed: nothing to cut
            return
        log.debug("cut a connection the database did not answer on within %g s", self.limit)


async def bounded(
    pool: ConnectionPool, limit: float | None, call: Callable[[ConnectionPool], Awaitable[T]]
) -> T:
    """``call(pool)`` over within ``limit`` seconds (``None``: no limit), through a
    :class:`Deadline`: :class:`DatabaseTimeout` when the database did not answer in time."""
    import psycopg

    if limit is None:
        return await call(pool)
    deadline = Deadline(pool, limit)
    try:
        return await call(deadline)
    except psycopg.Error as exc:
        if deadline.expired:
            raise DatabaseTimeout(limit) from exc
        raise


# --- listening ----------------------------------------------------------------------------


async def next_notifies(conn: psycopg.AsyncConnection[Any], timeout: float) -> list[psycopg.Notify]:
    """The notifications received on the listening ``conn``, waiting up to ``timeout``
    seconds for the first (``[]``: none came).

    ``conn.notifies(timeout=...)`` looks at the socket every 0.1 s while it waits:
    every idle listening process woke ten times a second. Here the event loop
    watches the socket and the process sleeps until the server sends something;
    ``notifies(timeout=0)`` then reads what came (and what a statement on the
    connection received meanwhile). A connection the server closed raises
    ``psycopg.OperationalError``.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        received = [notify async for notify in conn.notifies(timeout=0)]
        left = deadline - loop.time()
        if received or left <= 0 or not await _readable(conn.fileno(), left):
            return received


async def _readable(fd: int, timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        async with asyncio.timeout(timeout):
            await ready
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(fd)
    return True


# --- write transactions -------------------------------------------------------------------

#: A column for the first statement of a write transaction: its id, as text (see :class:`Xact`).
XID = "pg_current_xact_id()::text"


class Xact:
    """Where a write transaction records its id (the :data:`XID` column of a statement
    it runs anyway), so that :func:`transact` can find out whether a COMMIT whose
    answer was lost took effect."""

    __slots__ = ("xid",)

    def __init__(self) -> None:
        self.xid: str | None = None


#: Before each attempt of a write: at once, then after a pause (a server killing every
#: connection, at a restart or by an admin, takes a few hundred ms to kill them all:
#: 41 connections of 6 processes in 0.3 s, one write retried at once failed again).
_RETRY_PAUSES = (0.0, 0.0, 0.5)


async def transact(
    pool: ConnectionPool,
    fn: Callable[[psycopg.AsyncConnection[Any], Xact], Awaitable[T]],
) -> T:
    """``fn`` in one transaction, with what a lost connection leaves unknown found out.

    When the connection fails before the COMMIT, or at the COMMIT of a
    transaction that did not commit, nothing was written: ``fn`` runs again
    on another connection (twice at most). When it fails at the COMMIT of one that did
    commit (the server wrote it, the answer never came), the write stands:
    ``fn``'s result is returned. Only an outcome that cannot be looked up
    (the database is still unreachable) raises the connection error; an error
    on a connection that is still up (a deadlock, a timeout) is raised as is.
    """
    import psycopg

    for attempt, pause in enumerate(_RETRY_PAUSES):
        if pause:
            await asyncio.sleep(pause)
        xact = Xact()
        finished = False
        used: psycopg.AsyncConnection[Any] | None = None
        try:
            async with pool.connection() as conn:
                used = conn
                async with conn.transaction():
                    result = await fn(conn, xact)
                    finished = True
                return result
        except psycopg.OperationalError as exc:
            if used is not None and not used.broken and not used.closed:
                raise  # refused on a live connection (a deadlock, a timeout): as before
            status = await _xact_status(pool, xact.xid) if finished else "aborted"
            if status == "committed":
                log.warning("the connection was lost at COMMIT; the write had committed")
                return result
            if status != "aborted" or attempt + 1 == len(_RETRY_PAUSES):
                raise
            log.warning("a write failed before it committed (%s); trying it again", one_line(exc))
    raise AssertionError("unreachable")


async def _xact_status(pool: ConnectionPool, xid: str | None) -> str | None:
    """``committed``, ``aborted`` or ``None`` (unknown) for the transaction ``xid``."""
    import psycopg

    if xid is None:
        return None
    try:
        async with pool.connection() as conn:
            # In progress while the server is still ending the cut-off session.
            for _ in range(100):
                cursor = await conn.execute("SELECT pg_xact_status(%s::xid8)", (xid,))
                row = await cursor.fetchone()
                status = None if row is None else row[0]
                if status != "in progress":
                    return None if status is None else str(status)
                await asyncio.sleep(0.05)
    except (psycopg.Error, DatabaseTimeout):
        pass
    return None


@asynccontextmanager
async def atomic(conn: psycopg.AsyncConnection[Any]) -> AsyncIterator[None]:
    """One statement is atomic in autocommit mode; otherwise commit it explicitly."""
    if conn.autocommit:
        yield
    else:
        async with conn.transaction():
            yield


# --- the store ------------------------------------------------------------------------------
