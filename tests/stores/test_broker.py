"""PostgresEventBroker: LISTEN/NOTIFY between replicas, reconnects, and two engines as one agent."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from a2a_models import (
    CancelTaskRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.server import (
    AgentEvent,
    BrokerItem,
    BrokerSubscription,
    RequestContext,
    RequestHandler,
    StreamItem,
)
from a2a_models.stores import RESYNC, PostgresEventBroker, PostgresTaskStore

from ._support import FuncAgent, collect, make_card, send

pytestmark = pytest.mark.usefixtures("pg_dsn")


@pytest.fixture
def channel() -> str:
    """A channel of this test alone, so parallel runs do not hear each other."""
    return f"a2a_test_{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def brokers(pg_dsn: str, channel: str) -> AsyncIterator[list[PostgresEventBroker]]:
    made = [
        PostgresEventBroker(pg_dsn, channel=channel, reconnect_delay=0.02, resync_interval=None)
        for _ in range(2)
    ]
    try:
        yield made
    finally:
        for broker in made:
            await broker.aclose()


async def _next(subscription: BrokerSubscription, timeout: float = 3.0) -> BrokerItem:
    return await asyncio.wait_for(subscription.next(), timeout)


# --- the broker alone -----------------------------------------------------------------------


async def test_notifications_reach_the_other_broker_in_order(
    brokers: list[PostgresEventBroker],
) -> None:
    a, b = brokers
    remote = await b.subscribe("t1")
    local = await a.subscribe("t1")
    other = await b.subscribe("t2")
    events = [Message.agent(f"m{i}") for i in range(1, 6)]
    for seq, event in enumerate(events, start=1):
        await a.publish("t1", seq, event)
    # The publisher's own subscribers get the events themselves, at once.
    assert [await _next(local) for _ in events] == list(enumerate(events, start=1))
    # The other replica gets seq numbers (the stream reads the events from the log).
    assert [await _next(remote) for _ in events] == [(seq, None) for seq in range(1, 6)]
    await a.flush(3)
    await asyncio.sleep(0.1)
    # Not a second time from its own NOTIFY; nothing for other tasks.
    assert len(local._items) == len(other._items) == 0  # type: ignore[attr-defined]
    assert (a.subscriber_count("t1"), b.subscriber_count("t1"), b.subscriber_count("t2")) == (
        1,
        1,
        1,
    )
    await remote.aclose()
    await remote.aclose()
    assert b.subscriber_count("t1") == 0
    with pytest.raises(RuntimeError, match="closed"):
        await remote.next()


async def test_task_ids_with_colons(brokers: list[PostgresEventBroker]) -> None:
    a, b = brokers
    subscription = await b.subscribe("urn:task:1")
    await a.publish("urn:task:1", 7, Message.agent("x"))
    assert await _next(subscription) == (7, None)


async def test_the_listener_reconnects_and_resyncs(brokers: list[PostgresEventBroker]) -> None:
    from .test_postgres import _query

    a, b = brokers
    subscription = await b.subscribe("t1")
    await a.publish("t1", 1, Message.agent("before"))
    assert await _next(subscription) == (1, None)
    pid = b.listener_pid
    assert pid is not None
    await _query(b._conninfo, "SELECT pg_terminate_backend(%s)", pid)
    # Whatever was sent while disconnected is lost: the subscriber is told to re-read the log.
    assert await _next(subscription) == RESYNC
    assert b.listener_pid not in (None, pid)
    await a.publish("t1", 2, Message.agent("after"))
    assert await _next(subscription) == (2, None)


async def test_the_publisher_reconnects(brokers: list[PostgresEventBroker]) -> None:
    from .test_postgres import _query

    a, b = brokers
    subscription = await b.subscribe("t1")
    await a.publish("t1", 1, Message.agent("one"))
    assert await _next(subscription) == (1, None)
    assert a._publish_conn is not None
    await _query(a._conninfo, "SELECT pg_terminate_backend(%s)", a._publish_conn.info.backend_pid)
    await asyncio.sleep(0.05)
    await a.publish("t1", 2, Message.agent("two"))
    await a.publish("t1", 3, Message.agent("three"))
    assert [await _next(subscription) for _ in range(2)] == [(2, None), (3, None)]


async def test_a_quiet_subscription_resyncs_after_resync_interval(
    pg_dsn: str, channel: str
) -> None:
    async with PostgresEventBroker(pg_dsn, channel=channel, resync_interval=0.05) as broker:
        subscription = await broker.subscribe("t1")
        assert await _next(subscription, 1) == RESYNC


async def test_closing_the_broker_closes_its_subscriptions(pg_dsn: str, channel: str) -> None:
    broker = PostgresEventBroker(pg_dsn, channel=channel)
    subscription = await broker.subscribe("t1")
    waiting = asyncio.create_task(subscription.next())
    await asyncio.sleep(0.01)
    await broker.publish("t1", 1, Message.agent("x"))
    assert (await waiting)[0] == 1
    waiting = asyncio.create_task(subscription.next())
    await broker.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await asyncio.wait_for(waiting, 1)
    with pytest.raises(RuntimeError, match="closed"):
        await broker.publish("t1", 2, Message.agent("y"))


async def test_ready_means_a_notify_comes_back_and_a_frozen_database_is_not_ready(
    pg_dsn: str, channel: str
) -> None:
    # /readyz asks the broker. It used to subscribe and leave, which returns at once
    # while the listener is connected, reconnecting or stuck: "ok" with the database frozen.
    from ._pgproxy import pg_proxy

    async with (
        pg_proxy(pg_dsn) as (proxy, through),
        PostgresEventBroker(through, channel=channel) as broker,
        PostgresEventBroker(pg_dsn, channel=channel) as other,
    ):
        heard = await other.subscribe("")  # what a probe's payload (no ':') would name
        await asyncio.wait_for(broker.check_ready(), 5)
        proxy.flowing.clear()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(broker.check_ready(), 0.5)
        assert broker._probes == {}  # a probe given up on leaves nothing behind
        proxy.flowing.set()
        await asyncio.wait_for(broker.check_ready(), 5)
        # Other replicas heard the probes and handed nothing to any subscriber.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(heard.next(), 0.2)


async def test_an_unreachable_database_fails_the_subscribe() -> None:
    import psycopg

    broker = PostgresEventBroker("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(psycopg.OperationalError):
        await broker.subscribe("t1")
    await broker.aclose()


def test_channel_names_are_plain_identifiers() -> None:
    with pytest.raises(ValueError, match="channel"):
        PostgresEventBroker("postgresql://x/y", channel="a b")


# --- two replicas, one agent ----------------------------------------------------------------


class Steps:
    """An agent that yields one event per ``step()`` and waits in between."""

    def __init__(self) -> None:
        self.gate = asyncio.Semaphore(0)
        self.started = asyncio.Event()

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self.gate.release()

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.started.set()
        yield context.working()
        await self.gate.acquire()
        yield context.artifact(TextPart(text="part 1"), name="out")
        await self.gate.acquire()
        yield context.artifact(TextPart(text="part 2"), append=True, last_chunk=True)
        await self.gate.acquire()
        yield context.status(TaskState.WORKING, "almost")
        await self.gate.acquire()
        yield context.complete("done")


@pytest.fixture
async def replicas(
    pg_dsn: str, pg_schema: str, channel: str
) -> AsyncIterator[tuple[RequestHandler, RequestHandler, Steps]]:
    """Two engines sharing one database, each with its own store pool and broker."""
    steps = Steps()
    handlers = []
    closers = []
    for _ in range(2):
        store = PostgresTaskStore(pg_dsn, schema=pg_schema)
        broker = PostgresEventBroker(pg_dsn, channel=channel, reconnect_delay=0.02)
        handlers.append(
            RequestHandler(FuncAgent(steps.execute), make_card(), store=store, broker=broker)
        )
        closers += [store.aclose, broker.aclose]
    try:
        yield handlers[0], handlers[1], steps
    finally:
        for handler in handlers:
            await handler.aclose()
        for close in closers:
            await close()


def _kinds(items: list[StreamItem]) -> list[str]:
    names = []
    for _, item in items:
        if isinstance(item, TaskStatusUpdateEvent):
            names.append(item.status.state.name)
        else:
            names.append(type(item).__name__)
    return names


async def test_a_stream_on_b_receives_the_events_of_a_in_order(
    replicas: tuple[RequestHandler, RequestHandler, Steps],
) -> None:
    a, b, steps = replicas
    task = await a.on_send_message(send("go", return_immediately=True))
    assert isinstance(task, Task)
    # B sees the task A created...
    seen = await b.on_get_task(GetTaskRequest(id=task.id))
    assert seen.id == task.id and seen.context_id == task.context_id
    # ... and streams it: the snapshot, then A's events as A's agent produces them.
    on_b = await b.on_subscribe_to_task(SubscribeToTaskRequest(id=task.id))
    on_a = await a.on_subscribe_to_task(SubscribeToTaskRequest(id=task.id))
    collected = [asyncio.create_task(collect(s)) for s in (on_b, on_a)]
    for _ in range(4):
        steps.step()
        await asyncio.sleep(0.02)
    items_b, items_a = await asyncio.gather(*collected)
    assert _kinds(items_b)[-4:] == [
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "WORKING",
        "COMPLETED",
    ]
    seqs = [seq for seq, _ in items_b]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gap, no duplicate
    assert items_b == items_a  # both replicas deliver the same stream
    log = await b.store.events_after(task.id, seqs[0])
    assert [(s, e) for s, e in log] == items_b[1:]
    final = await b.on_get_task(GetTaskRequest(id=task.id))
    assert final.status.state is TaskState.COMPLETED
    part = final.artifacts[0].parts
    assert [p.text for p in part if isinstance(p, TextPart)] == [
        "part 1part 2"
    ]  # joined when stored


async def test_a_streaming_send_on_a_matches_a_resumed_stream_on_b(
    replicas: tuple[RequestHandler, RequestHandler, Steps],
) -> None:
    a, b, steps = replicas
    stream_a = await a.on_send_streaming_message(send("go"))
    first = await asyncio.wait_for(stream_a.__anext__(), 3)
    assert isinstance(first[1], Task)
    task_id = first[1].id
    await asyncio.wait_for(steps.started.wait(), 3)
    steps.step(2)
    await asyncio.sleep(0.1)
    # Resume on B from the first event, like an SSE client reconnecting with Last-Event-ID.
    resumed = await b.on_subscribe_to_task(SubscribeToTaskRequest(id=task_id), after_seq=1)
    rest_b = asyncio.create_task(collect(resumed))
    steps.step(2)
    rest_a = await collect(stream_a)
    items_b = await rest_b
    assert items_b == rest_a
    assert [s for s, _ in items_b] == list(range(2, 2 + len(items_b)))
    assert _kinds(items_b)[-1] == "COMPLETED"


async def test_b_cancels_a_task_running_on_a(
    replicas: tuple[RequestHandler, RequestHandler, Steps],
) -> None:
    a, b, steps = replicas
    task = await a.on_send_message(send("go", return_immediately=True))
    assert isinstance(task, Task)
    await asyncio.wait_for(steps.started.wait(), 3)
    streams = [await h.on_subscribe_to_task(SubscribeToTaskRequest(id=task.id)) for h in (a, b)]
    collected = [asyncio.create_task(collect(s)) for s in streams]
    await asyncio.sleep(0.05)
    canceled = await b.on_cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state is TaskState.CANCELED
    for items in await asyncio.gather(*collected):
        assert _kinds(items)[-1] == "CANCELED"
    assert (await a.on_get_task(GetTaskRequest(id=task.id))).status.state is TaskState.CANCELED
    # A's agent goes on; what it yields now is discarded, the task stays canceled.
    steps.step(4)
    await asyncio.sleep(0.1)
    got = await a.on_get_task(GetTaskRequest(id=task.id))
    assert got.status.state is TaskState.CANCELED and got.artifacts == ()
    log = await a.store.events_after(task.id, 0)
    assert not any(isinstance(e, TaskArtifactUpdateEvent) for _, e in log)


async def test_lists_and_push_configs_are_shared(
    replicas: tuple[RequestHandler, RequestHandler, Steps],
) -> None:
    a, b, steps = replicas
    steps.step(8)
    one = await a.on_send_message(send("one"))
    two = await b.on_send_message(send("two"))
    assert isinstance(one, Task) and isinstance(two, Task)
    listed = await b.on_list_tasks(ListTasksRequest())
    assert {t.id for t in listed.tasks} == {one.id, two.id}
    config = TaskPushNotificationConfig(url="http://hook", task_id=one.id)
    created = await b.on_create_task_push_notification_config(config)
    got = await a.on_get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=one.id, id=created.id)
    )
    assert got == created
