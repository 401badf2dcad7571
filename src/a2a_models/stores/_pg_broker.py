"""PostgreSQL ``LISTEN/NOTIFY``: an :class:`~a2a_models.server.EventBroker`
shared by server replicas (psycopg 3, imported lazily)."""

from __future__ import annotations

import asyncio
import collections
import logging
import sys
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._closing import AsyncClosing
from .._outages import FailureStreak
from ..models import StreamResponse
from ..server import SUBSCRIBER_BUFFER, BrokerSubscription, BufferedSubscription, EventBroker
from ..server import BrokerItem as Notification
from ._common import check_identifier
from ._pg_pool import connect_params, next_notifies

if TYPE_CHECKING:
    import psycopg

__all__ = ["RESYNC", "PostgresEventBroker"]

log = logging.getLogger("a2a_models.stores")

# --- the broker ---------------------------------------------------------------------------

#: The notification a subscription returns when notifications may have been
#: lost (after a reconnect, or after ``resync_interval`` without any): its seq
#: is beyond every real one and it has no event, so the stream re-reads the
#: store's log after what it has delivered.
RESYNC: Notification = (sys.maxsize, None)

#: The start of a readiness probe's NOTIFY payload (no ``:``, unlike an event's).
_PROBE_PREFIX = "a2a-models-readiness-"

#: NOTIFY payloads must stay below 8000 bytes.
_MAX_PAYLOAD = 7999


class PostgresEventBroker(EventBroker, AsyncClosing):
    """An :class:`~a2a_models.server.EventBroker` over PostgreSQL ``LISTEN/NOTIFY``.

    Give every server replica its own broker on the database of the shared
    :class:`PostgresTaskStore`: a stream opened on one replica then receives
    the events produced on any other, in order.

    * ``publish`` hands ``(seq, event)`` to this process's subscribers at once
      and queues ``NOTIFY <channel>, '<task_id>:<seq>'``; a background task
      sends the queue (in batches) on one connection, retrying after a
      connection loss. It never waits for the database or for subscribers.
    * ``subscribe`` registers a local subscriber; one listening connection
      per broker (``LISTEN <channel>``, started on the first subscribe)
      fans notifications out to the subscribers of their task as
      ``(seq, None)``, and the stream reads the events from the store's log.
    * When the listening connection is lost, the broker reconnects (with
      backoff from ``reconnect_delay`` to ``max_reconnect_delay`` seconds)
      and then tells every subscriber to re-read the log (:data:`RESYNC`),
      since notifications sent meanwhile are gone. The connection is checked
      every ``health_interval`` seconds without traffic.
    * ``resync_interval``: a subscriber that hears nothing for this long
      re-reads the log anyway, bounding how long a lost notification can
      delay a stream (``None``: never).

    Use a direct (or session-pooled) connection: LISTEN does not work through
    a transaction-pooling proxy. Close the broker with :meth:`aclose`.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        channel: str = "a2a_events",
        buffer: int = SUBSCRIBER_BUFFER,
        resync_interval: float | None = 30.0,
        reconnect_delay: float = 0.1,
        max_reconnect_delay: float = 5.0,
        health_interval: float = 15.0,
        max_pending: int = 100_000,
        connect_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        if resync_interval is not None and resync_interval <= 0:
            raise ValueError("resync_interval must be positive (or None)")
        self.channel = check_identifier(channel, "channel")
        self._conninfo = conninfo
        self._kwargs = dict(connect_kwargs or {})
        self._buffer = buffer
        self._resync_interval = resync_interval
        self._reconnect_delay = reconnect_delay
        self._max_reconnect_delay = max_reconnect_delay
        self._health_interval = health_interval
        self._subscribers: dict[str, set[BufferedSubscription]] = {}
        self._pending: collections.deque[str] = collections.deque(maxlen=max_pending)
        self._wakeup = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._sender: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._listen_conn: psycopg.AsyncConnection[Any] | None = None
        self._publish_conn: psycopg.AsyncConnection[Any] | None = None
        self._start_lock: asyncio.Lock | None = None
        #: Readiness probes waiting for their own NOTIFY to come back, by payload.
        self._probes: dict[str, asyncio.Future[None]] = {}
        self._closed = False

    def __repr__(self) -> str:
        return f"PostgresEventBroker(channel={self.channel!r})"

    # -- inspection ----------------------------------------------------------------------

    def subscriber_count(self, task_id: str) -> int:
        """How many local subscriptions ``task_id`` currently has."""
        return len(self._subscribers.get(task_id, ()))

    @property
    def listener_pid(self) -> int | None:
        """Backend pid of the listening connection (while connected)."""
        conn = self._listen_conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    # -- publishing ----------------------------------------------------------------------

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        if self._closed:
            raise RuntimeError("the broker is closed")
        for subscription in tuple(self._subscribers.get(task_id, ())):
            subscription.push((seq, event))
        payload = f"{task_id}:{seq}"
        if len(payload.encode("utf-8", "surrogatepass")) > _MAX_PAYLOAD:
            log.warning("task id too long for a NOTIFY payload; other replicas will resync")
            return
        if len(self._pending) == self._pending.maxlen:
            log.warning("NOTIFY queue full: dropping the oldest notification")
        self._queue(payload)

    def _queue(self, payload: str) -> None:
        self._pending.append(payload)
        self._drained.clear()
        self._wakeup.set()
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_loop(), name="a2a-notify-sender")

    async def flush(self, timeout: float | None = None) -> None:
        """Wait until every published notification has been sent to PostgreSQL."""
        await asyncio.wait_for(self._drained.wait(), timeout)

    async def _send_loop(self) -> None:
        delay = self._reconnect_delay
        streak = FailureStreak(log, "sending NOTIFY")
        while True:
            if not self._pending:
                self._drained.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            batch = [self._pending[i] for i in range(min(len(self._pending), 500))]
            try:
                conn = self._publish_conn
                if conn is None or conn.closed or conn.broken:
                    conn = self._publish_conn = await self._connect("notify")
                # Sent in order, as one transaction: one round trip per batch.
                await conn.execute(
                    "SELECT pg_notify(%s, payload) FROM unnest(%s::text[]) AS payload",
                    (self.channel, batch),
                )
            except Exception as exc:
                streak.failed(exc, delay)
                await self._close_quietly(self._publish_conn)
                self._publish_conn = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_reconnect_delay)
                continue
            streak.succeeded()
            delay = self._reconnect_delay
            for _ in batch:
                if self._pending:
                    self._pending.popleft()

    async def check_ready(self) -> None:
        """Return once a NOTIFY sent now has come back on the listening connection.

        Both connections are checked end to end: a broker whose listener is
        reconnecting (other replicas' events do not reach this one's streams),
        or whose sender cannot reach the database, does not return (the caller
        bounds the wait). Other replicas hear the probe and ignore it.
        """
        if self._closed:
            raise RuntimeError("the broker is closed")
        await self._ensure_listening()
        payload = f"{_PROBE_PREFIX}{uuid.uuid4().hex}"
        came_back = self._probes[payload] = asyncio.get_running_loop().create_future()
        try:
            self._queue(payload)
            await came_back
        finally:
            del self._probes[payload]

    # -- subscribing ---------------------------------------------------------------------

    async def subscribe(self, task_id: str) -> BrokerSubscription:
        if self._closed:
            raise RuntimeError("the broker is closed")
        await self._ensure_listening()
        # Quiet for long: RESYNC makes the stream check the log, in case a
        # notification was lost.
        return BufferedSubscription(
            self._subscribers,
            task_id,
            self._buffer,
            quiet_after=self._resync_interval,
            quiet_item=RESYNC,
        )

    async def _ensure_listening(self) -> None:
        if self._listener is not None:
            return  # listening, or reconnecting (subscribers get RESYNC then)
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._listener is None:
                # The first connection is made here, so a bad DSN raises to the caller.
                conn = await self._listen()
                self._listener = asyncio.create_task(
                    self._listen_loop(conn), name="a2a-notify-listener"
                )

    async def _listen(self) -> psycopg.AsyncConnection[Any]:
        from psycopg import sql

        conn = await self._connect("listen")
        try:
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except BaseException:
            await conn.close()
            raise
        self._listen_conn = conn
        return conn

    async def _listen_loop(self, conn: psycopg.AsyncConnection[Any] | None) -> None:
        delay = self._reconnect_delay
        streak = FailureStreak(log, "listening for a2a events")
        while True:
            try:
                if conn is None:
                    conn = await self._listen()
                    streak.succeeded()
                    delay = self._reconnect_delay
                    # Whatever was notified while we were away is lost: re-read the logs.
                    for subscribers in tuple(self._subscribers.values()):
                        for subscription in tuple(subscribers):
                            subscription.push(RESYNC)
                while True:
                    received = await next_notifies(conn, self._health_interval)
                    for notify in received:
                        self._dispatch(notify.payload, notify.pid)
                    if not received:
                        await conn.execute("SELECT 1")  # quiet: is the connection still alive?
            except Exception as exc:
                streak.failed(exc, delay)
                await self._close_quietly(conn)
                conn = self._listen_conn = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_reconnect_delay)

    def _dispatch(self, payload: str, pid: int) -> None:
        probe = self._probes.get(payload)
        if probe is not None:
            if not probe.done():
                probe.set_result(None)
            return
        if payload.startswith(_PROBE_PREFIX):
            return  # another replica's readiness probe
        publisher = self._publish_conn
        if publisher is not None and not publisher.closed and pid == publisher.info.backend_pid:
            return  # our own: local subscribers got it, with its event, from publish
        task_id, _, seq_text = payload.rpartition(":")
        subscribers = self._subscribers.get(task_id)
        if not subscribers:
            return
        try:
            seq = int(seq_text)
        except ValueError:
            log.warning("ignoring a malformed a2a notification %r", payload)
            return
        for subscription in tuple(subscribers):
            subscription.push((seq, None))

    # -- connections ---------------------------------------------------------------------

    async def _connect(self, purpose: str) -> psycopg.AsyncConnection[Any]:
        import psycopg

        kwargs = {"application_name": f"a2a-models {purpose}", **self._kwargs}
        return await psycopg.AsyncConnection.connect(
            self._conninfo, autocommit=True, **connect_params(self._conninfo, kwargs)
        )

    @staticmethod
    async def _close_quietly(conn: psycopg.AsyncConnection[Any] | None) -> None:
        if conn is not None:
            try:
                await conn.close()
            except Exception:  # closing a broken connection may fail; it is gone anyway
                pass

    async def aclose(self, timeout: float = 5.0) -> None:
        """Send what is queued (waiting up to ``timeout``), then stop and disconnect.

        Open subscriptions are closed: their ``next`` raises ``RuntimeError``.
        """
        if self._closed:
            return
        self._closed = True
        if self._sender is not None and not self._sender.done():
            try:
                await self.flush(timeout)
            except TimeoutError:
                log.warning("closing the broker with %d unsent notifications", len(self._pending))
        for task in (self._sender, self._listener):
            if task is not None:
                task.cancel()
        await asyncio.gather(
            *(t for t in (self._sender, self._listener) if t is not None), return_exceptions=True
        )
        await self._close_quietly(self._listen_conn)
        await self._close_quietly(self._publish_conn)
        self._listen_conn = self._publish_conn = None
        for subscribers in tuple(self._subscribers.values()):
            for subscription in tuple(subscribers):
                await subscription.aclose()
