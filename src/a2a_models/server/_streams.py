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
import functools
import weakref
from collections.abc import AsyncGenerator
from typing import TypeAlias

import attrs

from .._closing import GeneratorStream
from ..models import Message, StreamResponse, Task
from ._lifecycle import closes_stream, trim_history
from ._store import LoggedEvent, TaskStore, accepts_keyword

__all__ = [
    "SUBSCRIBER_BUFFER",
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

#: The notifications a subscriber holds by default (:class:`InMemoryEventBroker`,
#: ``PostgresEventBroker``): one that falls further behind holds the newest seq alone and
#: its stream reads the events from the store's log, so a reader that stops reading
#: makes the server hold at most this many of the task's events, however large.
SUBSCRIBER_BUFFER = 32
#: Events a stream reads from the store's log at a time (a store whose ``events_after``
#: takes ``limit``): all a stream holds of the log while its reader does not read.
LOG_PAGE = 32


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

    async def check_ready(self) -> None:
        """Raise unless the broker can deliver now (``/readyz``): by default, a
        subscription is made and left; a broker with a connection to lose checks more."""
        subscription = await self.subscribe("a2a-models-readiness-probe")
        await subscription.aclose()


class BufferedSubscription(BrokerSubscription):
    """A subscription that holds at most ``buffer`` notifications a broker pushes to it.

    Once ``buffer`` wait, the newest stands for the later ones by its seq alone
    (``(seq, None)``): the stream reads their events from the store's log, so a
    subscriber that stopped reading holds ``buffer`` events, however many follow.

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
        self._buffer = buffer
        self._items: collections.deque[BrokerItem] = collections.deque()
        self._ready = asyncio.Event()
        self.closed = False
        subscribers.setdefault(task_id, set()).add(self)

    def push(self, item: BrokerItem) -> None:
        """Hand ``item`` to the subscriber (never waits)."""
        items = self._items
        if len(items) < self._buffer:
            items.append(item)
        else:
            # Full: the last entry becomes the newest seq without its event (max:
            # a broker may reorder), which sends the stream to the log for it.
            items[-1] = (max(items[-1][0], item[0]), None)
        self._ready.set()

    @property
    def held(self) -> int:
        """How many events (not bare seqs) wait in the buffer."""
        return sum(event is not None for _, event in self._items)

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

    ``buffer`` bounds the events a slow subscriber holds (see
    :class:`BufferedSubscription`); its stream reads the rest from the store.
    """

    def __init__(self, *, buffer: int = SUBSCRIBER_BUFFER) -> None:
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
    and is then skipped by its seq); a jump in seq is filled from the log, read
    :data:`LOG_PAGE` events at a time when the store can (``events_after``'s
    ``limit``): a stream whose reader stopped holds one page of it.
    """

    def shown(event: StreamResponse) -> StreamResponse:
        return trim_history(event, history_length) if isinstance(event, Task) else event

    page = _page_of(store)
    subscription = await broker.subscribe(task_id)
    try:
        last = after_seq
        if first is not None:
            yield first[0], shown(first[1])
            last = first[0]
            if closes_stream(first[1], on_interrupted=close_on_interrupted):
                return
        need: int | None = None  # the seq that sent the stream to the log, if any
        while True:
            # Catch up from the log (a page at a time), then wait for the next notification.
            while True:
                events = await _events_after(store, task_id, last, need, page)
                for seq, event in events:
                    if seq <= last:
                        continue
                    yield seq, shown(event)
                    last = seq
                    if closes_stream(event, on_interrupted=close_on_interrupted):
                        return
                if page is None or len(events) < page:
                    break  # the end of the log: what follows is notified
            while True:
                seq, maybe = await subscription.next()
                if seq <= last:
                    continue  # already delivered from the log
                if seq > last + 1 or maybe is None:
                    need = seq
                    break  # missed something (or told only its seq): read the log again
                yield seq, shown(maybe)
                last = seq
                if closes_stream(maybe, on_interrupted=close_on_interrupted):
                    return
    finally:
        await subscription.aclose()


@attrs.frozen(slots=True)
class _LogRead:
    """A read of a task's event log in flight: the events after ``after``."""

    after: int
    events: asyncio.Task[list[LoggedEvent]]


#: The log reads in flight, per event loop, by ``(id(store), task_id)`` (an entry
#: lives only while its read runs, which holds the store: its id is not reused).
_reads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[int, str], _LogRead]] = (
    weakref.WeakKeyDictionary()
)


def _page_of(store: TaskStore) -> int | None:
    """:data:`LOG_PAGE` if ``store.events_after`` takes ``limit`` (``None``: read to the end)."""
    method = store.events_after
    function = getattr(method, "__func__", None)  # a plain method: decided once per class
    if function is None:
        return LOG_PAGE if accepts_keyword(method, "limit") else None
    return _function_page(function)


@functools.lru_cache(maxsize=64)
def _function_page(function: object) -> int | None:
    return LOG_PAGE if callable(function) and accepts_keyword(function, "limit") else None


async def _events_after(
    store: TaskStore, task_id: str, after: int, need: int | None, page: int | None
) -> list[LoggedEvent]:
    """``store.events_after(task_id, after, limit=page)``, shared by the streams of the
    task that hear of the same event.

    A broker that sends only sequence numbers (PostgreSQL ``NOTIFY`` on another
    replica) sends every stream of the task to the log for each event: one read
    per subscriber, so an event cost a replica as many reads as it had
    subscribers. A stream that needs the events up to ``need`` now joins a read
    already in flight that starts no later than it (``after``), and reads again
    itself only if that read ended before ``need``. Without ``need`` (catching up
    when the stream starts) it reads on its own, and later streams may join it.
    """
    loop = asyncio.get_running_loop()
    reads = _reads.get(loop)
    if reads is None:
        reads = _reads[loop] = {}
    key = (id(store), task_id)
    shared = reads.get(key)
    if need is not None and shared is not None and shared.after <= after:
        events = await asyncio.shield(shared.events)
        if events and events[-1][0] >= need:
            return events
    reading = (
        store.events_after(task_id, after)
        if page is None
        else store.events_after(task_id, after, limit=page)
    )
    read = _LogRead(after, asyncio.ensure_future(reading))
    reads[key] = read

    def done(task: asyncio.Task[list[LoggedEvent]]) -> None:
        if reads.get(key) is read:
            del reads[key]
        if not task.cancelled():
            task.exception()  # retrieved: every stream waiting on it may be gone

    read.events.add_done_callback(done)
    # Shielded: a stream that stops (its client left) does not cancel the read
    # other streams wait on.
    return await asyncio.shield(read.events)


class EventStream(GeneratorStream[StreamItem]):
    """An async iterator of :data:`StreamItem` that releases its resources on close.

    Iterate it with ``async for``; call :meth:`aclose` (or use ``async with``)
    when stopping early, e.g. when the client disconnects. Closing a stream
    never affects the task or other streams of it (spec §3.5.2).
    ``opening``: the Task (or direct Message) the stream starts with, when
    known as it is made, for whoever reports on the stream before iterating
    it (a server span naming the task it opened).
    """

    __slots__ = ("opening",)

    def __init__(
        self,
        generator: AsyncGenerator[StreamItem, None],
        opening: Task | Message | None = None,
    ) -> None:
        super().__init__(generator)
        self.opening = opening

    @classmethod
    def single(cls, item: StreamResponse) -> EventStream:
        """A stream of one item with seq 0 (a direct message reply)."""

        async def one() -> AsyncGenerator[StreamItem, None]:
            yield 0, item

        return cls(one(), item if isinstance(item, Task | Message) else None)
