"""Per-task event fan-out: the :class:`EventBroker` interface, an in-memory
broker, and :func:`task_event_stream`, which merges the store's event log
with live events into one ordered stream with no gap and no duplicate.

The broker is only a doorbell with a payload. Ordering and completeness come
from the store's sequence numbers: a subscriber that sees a jump in ``seq``
(or a notification without its event) reads the missing entries from the
log. So a broker may drop, batch or reorder notifications, or (like a
PostgreSQL ``LISTEN/NOTIFY`` one with its 8 kB payload limit) send only
sequence numbers, and every stream still delivers each event once, in order.
"""

from __future__ import annotations

import abc
import asyncio
import collections
from collections.abc import AsyncGenerator
from typing import TypeAlias

from .._closing import GeneratorStream
from ..models import StreamResponse, Task
from ._lifecycle import closes_stream, trim_history
from ._store import TaskStore

__all__ = [
    "BrokerSubscription",
    "BufferedSubscription",
    "EventBroker",
    "EventStream",
    "InMemoryEventBroker",
    "StreamItem",
    "task_event_stream",
]

#: What a stream yields: ``(seq, item)``. ``seq`` is the event's position in
#: the task's log (usable as an SSE ``id`` for resuming); a direct
#: :class:`~a2a_models.Message` reply, which belongs to no task, has ``seq`` 0.
StreamItem: TypeAlias = tuple[int, StreamResponse]
#: A broker notification: ``(seq, event)``, the event possibly left out.
BrokerItem: TypeAlias = tuple[int, StreamResponse | None]


class BrokerSubscription(abc.ABC):
    """Live notifications of one task, in the order the broker received them."""

    @abc.abstractmethod
    async def next(self) -> BrokerItem:
        """Wait for the next notification."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Stop receiving; idempotent."""


class EventBroker(abc.ABC):
    """Delivers ``(seq, event)`` published for a task to its current subscribers."""

    @abc.abstractmethod
    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        """Notify every subscriber of ``task_id``; must not wait for slow subscribers."""

    @abc.abstractmethod
    async def subscribe(self, task_id: str) -> BrokerSubscription:
        """Start receiving the notifications published from now on."""


class BufferedSubscription(BrokerSubscription):
    """A subscription that holds the newest ``buffer`` notifications a broker pushes to it.

    It enters ``subscribers[task_id]`` (the broker's table) when made and leaves
    it when closed. With ``quiet_after`` seconds, :meth:`next` returns
    ``quiet_item`` when nothing arrived for that long (a broker that can lose
    notifications uses it to make the stream re-read the store).
    """

    def __init__(
        self,
        subscribers: dict[str, set[BufferedSubscription]],
        task_id: str,
        buffer: int,
        *,
        quiet_after: float | None = None,
        quiet_item: BrokerItem = (0, None),
    ) -> None:
        self._subscribers = subscribers
        self._task_id = task_id
        self._quiet_after = quiet_after
        self._quiet_item = quiet_item
        # Overflow drops the oldest entries: the stream notices the gap and
        # reads them from the store, while the newest (maybe final) one stays.
        self._items: collections.deque[BrokerItem] = collections.deque(maxlen=buffer)
        self._ready = asyncio.Event()
        self.closed = False
        subscribers.setdefault(task_id, set()).add(self)

    def push(self, item: BrokerItem) -> None:
        """Hand ``item`` to the subscriber (never waits)."""
        self._items.append(item)
        self._ready.set()

    async def next(self) -> BrokerItem:
        while not self._items:
            if self.closed:
                raise RuntimeError("subscription is closed")
            self._ready.clear()
            if self._quiet_after is None:
                await self._ready.wait()
                continue
            try:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
                # cancel that arrives as the event is set, and the caller never stops.
                async with asyncio.timeout(self._quiet_after):
                    await self._ready.wait()
            except TimeoutError:
                return self._quiet_item
        return self._items.popleft()

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            subscribers = self._subscribers.get(self._task_id)
            if subscribers is not None:
                subscribers.discard(self)
                if not subscribers:
                    del self._subscribers[self._task_id]
            self._ready.set()


class InMemoryEventBroker(EventBroker):
    """A broker for one process: each subscriber has a bounded buffer.

    ``buffer`` bounds what a slow subscriber may hold; when it overflows, the
    oldest notifications are dropped and the stream recovers them from the
    store.
    """

    def __init__(self, *, buffer: int = 1024) -> None:
        if buffer < 1:
            raise ValueError("buffer must be at least 1")
        self._buffer = buffer
        self._subscribers: dict[str, set[BufferedSubscription]] = {}

    def subscriber_count(self, task_id: str) -> int:
        """How many subscriptions ``task_id`` currently has."""
        return len(self._subscribers.get(task_id, ()))

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        for subscription in tuple(self._subscribers.get(task_id, ())):
            subscription.push((seq, event))

    async def subscribe(self, task_id: str) -> BrokerSubscription:
        return BufferedSubscription(self._subscribers, task_id, self._buffer)


async def task_event_stream(
    store: TaskStore,
    broker: EventBroker,
    task_id: str,
    *,
    after_seq: int,
    first: StreamItem | None = None,
    close_on_interrupted: bool = False,
    history_length: int | None = None,
) -> AsyncGenerator[StreamItem, None]:
    """The events of ``task_id`` with ``seq > after_seq``: first the logged ones, then live.

    ``first`` (a task snapshot and the seq it reflects) is yielded before
    anything else and replaces ``after_seq``. The stream ends after a
    terminal state, or an interrupted one if ``close_on_interrupted`` (see
    :func:`closes_stream`), or when the consumer stops iterating. Task items
    are trimmed to ``history_length`` (:func:`trim_history`).

    No gap, no duplicate: the broker subscription starts *before* the log is
    read, so an event committed meanwhile is in one or the other (or both,
    and is then skipped by its seq); a jump in seq is filled from the log.
    """

    def shown(event: StreamResponse) -> StreamResponse:
        return trim_history(event, history_length) if isinstance(event, Task) else event

    subscription = await broker.subscribe(task_id)
    try:
        last = after_seq
        if first is not None:
            yield first[0], shown(first[1])
            last = first[0]
            if closes_stream(first[1], on_interrupted=close_on_interrupted):
                return
        while True:
            # Catch up from the log, then wait for the next notification.
            for seq, event in await store.events_after(task_id, last):
                if seq <= last:
                    continue
                yield seq, shown(event)
                last = seq
                if closes_stream(event, on_interrupted=close_on_interrupted):
                    return
            while True:
                seq, maybe = await subscription.next()
                if seq <= last:
                    continue  # already delivered from the log
                if seq > last + 1 or maybe is None:
                    break  # missed something: read the log again
                yield seq, shown(maybe)
                last = seq
                if closes_stream(maybe, on_interrupted=close_on_interrupted):
                    return
    finally:
        await subscription.aclose()


class EventStream(GeneratorStream[StreamItem]):
    """An async iterator of :data:`StreamItem` that releases its resources on close.

    Iterate it with ``async for``; call :meth:`aclose` (or use ``async with``)
    when stopping early, e.g. when the client disconnects. Closing a stream
    never affects the task or other streams of it (spec §3.5.2).
    """

    @classmethod
    def single(cls, item: StreamResponse) -> EventStream:
        """A stream of one item with seq 0 (a direct message reply)."""

        async def one() -> AsyncGenerator[StreamItem, None]:
            yield 0, item

        return cls(one())
