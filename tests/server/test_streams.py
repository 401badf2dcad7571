"""Event fan-out: replay + live with no gap and no duplicate, whatever the broker does."""

from __future__ import annotations

import asyncio
import random

from a2a_models import Message, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from a2a_models.server import (
    SUBSCRIBER_BUFFER,
    BrokerSubscription,
    EventBroker,
    EventStream,
    InMemoryEventBroker,
    InMemoryTaskStore,
    task_event_stream,
)
from a2a_models.server._streams import LOG_PAGE

from ._support import collect


def _status(state: TaskState, text: str = "") -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id="t1",
        context_id="c1",
        status=TaskStatus.now(state, Message.agent(text) if text else None),
    )


async def _producer(
    store: InMemoryTaskStore, broker: EventBroker, count: int, *, pause: bool = True
) -> None:
    """Commit ``count`` working updates then a completed one, publishing each."""
    for i in range(count):
        event: StreamResponse = _status(TaskState.WORKING, f"step {i}")
        if i == count - 1:
            event = _status(TaskState.COMPLETED)
        seq = await store.append_event("t1", event)
        await broker.publish("t1", seq, event)
        if pause:
            await asyncio.sleep(0)


async def _setup() -> InMemoryTaskStore:
    store = InMemoryTaskStore()
    task = Task(id="t1", context_id="c1", status=TaskStatus.now(TaskState.SUBMITTED))
    await store.create(task, None, event=task)
    return store


def _seqs(items: list[tuple[int, StreamResponse]]) -> list[int]:
    return [seq for seq, _ in items]


async def test_subscribers_joining_at_any_time_see_every_event_once() -> None:
    store = await _setup()
    broker = InMemoryEventBroker()
    rng = random.Random(7)
    total = 60
    producer = asyncio.create_task(_producer(store, broker, total))
    readers = []
    for _ in range(12):
        for _ in range(rng.randrange(6)):
            await asyncio.sleep(0)
        last = (await store.get("t1", None)).last_seq  # type: ignore[union-attr]
        after = rng.randrange(last + 1)
        stream = EventStream(task_event_stream(store, broker, "t1", after_seq=after))
        readers.append((after, asyncio.create_task(collect(stream))))
    await producer
    log = await store.events_after("t1", 0)
    for after, reader in readers:
        items = await reader
        assert _seqs(items) == list(range(after + 1, total + 2))
        assert items == log[after:]
    assert broker.subscriber_count("t1") == 0


async def test_overflowing_subscriber_recovers_from_the_log() -> None:
    store = await _setup()
    broker = InMemoryEventBroker(buffer=2)
    stream = EventStream(task_event_stream(store, broker, "t1", after_seq=0))
    first = await anext(stream)
    assert first[0] == 1
    # 50 events while the reader sleeps: its buffer keeps only the newest two.
    await _producer(store, broker, 50, pause=False)
    rest = await collect(stream)
    assert _seqs(rest) == list(range(2, 52))


class _ShuffledBroker(EventBroker):
    """Delivers notifications late, out of order and without events."""

    def __init__(self) -> None:
        self.inner = InMemoryEventBroker()
        self.held: list[tuple[str, int, StreamResponse]] = []

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        self.held.append((task_id, seq, event))

    async def flush(self, rng: random.Random) -> None:
        held, self.held = self.held, []
        rng.shuffle(held)
        for task_id, seq, _ in held:
            for sub in tuple(self.inner._subscribers.get(task_id, ())):
                sub.push((seq, None))  # a notification without its event

    async def subscribe(self, task_id: str) -> BrokerSubscription:
        return await self.inner.subscribe(task_id)


async def test_reordered_payloadless_notifications_still_give_an_ordered_stream() -> None:
    store = await _setup()
    broker = _ShuffledBroker()
    rng = random.Random(3)
    stream = EventStream(task_event_stream(store, broker, "t1", after_seq=0))
    reader = asyncio.create_task(collect(stream))
    await asyncio.sleep(0)
    await _producer(store, broker, 20, pause=False)
    await broker.flush(rng)
    items = await reader
    assert items == await store.events_after("t1", 0)


async def test_first_item_and_close_on_interrupted() -> None:
    store = await _setup()
    broker = InMemoryEventBroker()
    snapshot = (await store.get("t1", None)).task  # type: ignore[union-attr]
    stream = EventStream(
        task_event_stream(
            store, broker, "t1", after_seq=0, first=(1, snapshot), close_on_interrupted=True
        )
    )
    reader = asyncio.create_task(collect(stream))
    await asyncio.sleep(0)
    for event in (
        _status(TaskState.WORKING),
        _status(TaskState.INPUT_REQUIRED),
        _status(TaskState.WORKING),
    ):
        await broker.publish("t1", await store.append_event("t1", event), event)
    items = await reader
    assert _seqs(items) == [1, 2, 3]
    assert isinstance(items[0][1], Task)
    assert items[-1][1].status.state is TaskState.INPUT_REQUIRED  # type: ignore[union-attr]


async def test_closing_one_stream_leaves_the_others() -> None:
    store = await _setup()
    broker = InMemoryEventBroker()
    one = EventStream(task_event_stream(store, broker, "t1", after_seq=0))
    two = EventStream(task_event_stream(store, broker, "t1", after_seq=0))
    assert (await anext(one))[0] == 1
    assert (await anext(two))[0] == 1
    assert broker.subscriber_count("t1") == 2
    async with one:
        pass
    assert broker.subscriber_count("t1") == 1
    await _producer(store, broker, 3)
    assert _seqs(await collect(two)) == [2, 3, 4]
    assert broker.subscriber_count("t1") == 0


async def test_single_item_stream() -> None:
    message = Message.agent("hi")
    assert await collect(EventStream.single(message)) == [(0, message)]


class _SeqOnlyBroker(EventBroker):
    """Notifications without their event, as another replica's PostgreSQL NOTIFY sends them."""

    def __init__(self) -> None:
        self.inner = InMemoryEventBroker()

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        for sub in tuple(self.inner._subscribers.get(task_id, ())):
            sub.push((seq, None))

    async def subscribe(self, task_id: str) -> BrokerSubscription:
        return await self.inner.subscribe(task_id)


class _CountingStore(InMemoryTaskStore):
    """Counts the reads of the event log."""

    reads = 0

    async def events_after(self, task_id: str, seq: int) -> list[tuple[int, StreamResponse]]:
        self.reads += 1
        await asyncio.sleep(0)  # a database read: the other streams run meanwhile
        return await super().events_after(task_id, seq)


async def _log_reads_per_event(subscribers: int, events: int) -> float:
    store = _CountingStore()
    task = Task(id="t1", context_id="c1", status=TaskStatus.now(TaskState.SUBMITTED))
    await store.create(task, None, event=task)
    broker = _SeqOnlyBroker()
    streams = [
        EventStream(task_event_stream(store, broker, "t1", after_seq=0)) for _ in range(subscribers)
    ]
    readers = [asyncio.create_task(collect(stream)) for stream in streams]
    while store.reads < subscribers:  # every stream catches up from the log
        await asyncio.sleep(0)
    for _ in range(5):  # and then waits for a notification
        await asyncio.sleep(0)
    store.reads = 0
    for i in range(events):
        state = TaskState.COMPLETED if i == events - 1 else TaskState.WORKING
        event = _status(state, f"step {i}")
        await broker.publish("t1", await store.append_event("t1", event), event)
        for _ in range(5):  # the streams take the event before the next one
            await asyncio.sleep(0)
    log = await store.events_after("t1", 0)
    for reader in readers:
        assert await reader == log  # every stream has every event once, in order
    return store.reads / events


async def test_the_streams_of_a_task_share_the_log_read_of_an_event() -> None:
    # A broker that sends only seqs sends every stream to the log for each event:
    # one read per subscriber (100 reads for an event with 100 subscribers) before.
    one = await _log_reads_per_event(1, 20)
    many = await _log_reads_per_event(100, 20)
    assert one <= 1.1 and many <= 1.1, (one, many)


class _PagedStore(InMemoryTaskStore):
    """Records the most events one read of the log returned."""

    largest = 0

    async def events_after(
        self, task_id: str, seq: int, *, limit: int | None = None
    ) -> list[tuple[int, StreamResponse]]:
        events = await super().events_after(task_id, seq, limit=limit)
        self.largest = max(self.largest, len(events))
        return events


async def _stalled_then_resumed(broker: EventBroker, store: _PagedStore, count: int) -> None:
    stream = EventStream(task_event_stream(store, broker, "t1", after_seq=0))
    assert (await anext(stream))[0] == 1
    await _producer(store, broker, count, pause=False)  # while the reader reads nothing
    assert _seqs(await collect(stream)) == list(range(2, count + 2))  # every event, in order


async def test_a_stalled_subscriber_holds_at_most_its_buffer_of_events() -> None:
    # Before, it held the newest 1024 events (each maybe megabytes): here all 500.
    store = _PagedStore()
    task = Task(id="t1", context_id="c1", status=TaskStatus.now(TaskState.SUBMITTED))
    await store.create(task, None, event=task)
    broker = InMemoryEventBroker()
    stream = EventStream(task_event_stream(store, broker, "t1", after_seq=0))
    assert (await anext(stream))[0] == 1
    (subscription,) = broker._subscribers["t1"]
    await _producer(store, broker, 500, pause=False)
    assert subscription.held == SUBSCRIBER_BUFFER - 1  # and the newest seq alone
    assert len(subscription._items) == SUBSCRIBER_BUFFER
    store.largest = 0
    assert _seqs(await collect(stream)) == list(range(2, 502))  # every event, in order
    assert store.largest == LOG_PAGE  # the rest read from the log a page at a time


async def test_a_stream_reads_the_log_a_page_at_a_time() -> None:
    # Seq-only notifications (another replica's, a front end's): the stream reads every
    # event from the log; before, one read of all 300 held them all for a slow reader.
    store = _PagedStore()
    task = Task(id="t1", context_id="c1", status=TaskStatus.now(TaskState.SUBMITTED))
    await store.create(task, None, event=task)
    await _stalled_then_resumed(_SeqOnlyBroker(), store, 300)
    assert store.largest == LOG_PAGE
    # A stream resuming at the start of a long log (Last-Event-ID 0) reads it by pages too.
    store.largest = 0
    resumed = EventStream(task_event_stream(store, InMemoryEventBroker(), "t1", after_seq=0))
    assert _seqs(await collect(resumed)) == list(range(1, 302))
    assert store.largest == LOG_PAGE
