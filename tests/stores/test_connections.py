"""How many PostgreSQL connections a process holds, and how often an idle worker
queries: what grows with the number of replicas and workers of a cluster (see
docs/replicas.md, "Connections"; bench/workers.py --scale measures it with real
processes)."""

from __future__ import annotations

import asyncio
import selectors
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2a_models.server import Agent, AgentEvent, BrokerItem, RequestContext, Worker
from a2a_models.stores import (
    PostgresEventBroker,
    PostgresTaskStore,
    PostgresTurnQueue,
    broker_from_url,
    store_from_url,
)


def _url(dsn: str, query: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}{query}"


async def _backend_pids(store: PostgresTaskStore, at_once: int) -> set[int]:
    """The backends ``at_once`` operations of ``store`` run on, each holding its
    connection until all have one or the pool is exhausted."""
    started = asyncio.Event()
    seen: set[int] = set()

    async def one(conn: Any) -> None:
        cursor = await conn.execute("SELECT pg_backend_pid()")
        row = await cursor.fetchone()
        seen.add(row[0])
        if len(seen) == at_once:
            started.set()
        # Held a little, so the others need connections of their own.
        with_timeout = asyncio.wait_for(started.wait(), 0.2)
        try:
            await with_timeout
        except TimeoutError:
            pass

    await asyncio.gather(*(store._run(one) for _ in range(at_once)))
    return seen


async def _connections_named(dsn: str, name: str) -> int:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def test_the_pool_size_is_a_parameter_of_the_store_url(pg_dsn: str, pg_schema: str) -> None:
    # Before, the only way to size the pool was the constructor: serve and worker
    # held up to 10 connections each, which 8 replicas + 8 workers overran
    # (max_connections 100: "sorry, too many clients already").
    url = _url(pg_dsn, f"schema={pg_schema}&pool_size=2")
    store = store_from_url(url)
    assert isinstance(store, PostgresTaskStore)
    broker = broker_from_url(url)
    assert isinstance(broker, PostgresEventBroker)
    queue = PostgresTurnQueue(store, url)
    try:
        assert len(await _backend_pids(store, 6)) == 2
        # The broker's and the queue's own connections take the same URL (libpq
        # never sees pool_size).
        subscription = await broker.subscribe("t")
        await subscription.aclose()
        await queue.wait(0.01)
        assert queue._listener is not None
    finally:
        await queue.aclose()
        await broker.aclose()
        await store.aclose()


@pytest.mark.parametrize("size", ["0", "-1", "many"])
def test_a_bad_pool_size_is_refused(pg_dsn: str, size: str) -> None:
    with pytest.raises(ValueError, match="pool_size must be a whole number"):
        store_from_url(_url(pg_dsn, f"pool_size={size}"))


async def test_idle_connections_are_closed_after_a_burst(pg_dsn: str, pg_schema: str) -> None:
    # Before, a pool kept every connection a burst opened: an idle cluster of 16
    # processes held ~10 each.
    name = f"a2a-test-{uuid.uuid4().hex[:12]}"
    store = PostgresTaskStore(
        pg_dsn,
        schema=pg_schema,
        max_connections=4,
        close_idle_after=0.0,
        connect_kwargs={"application_name": name},
    )
    try:
        assert len(await _backend_pids(store, 4)) == 4
        # Each one given back closed those idle for longer than close_idle_after.
        assert await _connections_named(pg_dsn, name) == 1
        await store.get("missing", None, None)
        assert await _connections_named(pg_dsn, name) == 1
    finally:
        await store.aclose()
    assert await _connections_named(pg_dsn, name) == 0


async def test_a_pool_that_goes_quiet_closes_its_idle_connections(
    pg_dsn: str, pg_schema: str
) -> None:
    # Closing them only when another is given back left a front end that went quiet
    # after a burst with every connection it had opened (8 front ends + 8 workers,
    # 70 s after the load: 6-7 each).
    name = f"a2a-test-{uuid.uuid4().hex[:12]}"
    store = PostgresTaskStore(
        pg_dsn,
        schema=pg_schema,
        max_connections=4,
        close_idle_after=0.2,
        connect_kwargs={"application_name": name},
    )
    try:
        assert len(await _backend_pids(store, 4)) == 4  # given back together: none stale
        left = await _connections_named(pg_dsn, name)
        async with asyncio.timeout(10):
            while left > 1:
                await asyncio.sleep(0.05)
                left = await _connections_named(pg_dsn, name)
        assert left == 1
    finally:
        await store.aclose()


class _Done(Agent):
    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.complete()


class _WatchedQueue(PostgresTurnQueue):
    """Records how long each ``wait`` of the worker may last."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.waits: list[float] = []
        self.listening: list[bool] = []
        self.second = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        self.waits.append(timeout)
        self.listening.append(self._listener is not None)
        if len(self.waits) >= 2:
            self.second.set()
        await super().wait(timeout)


async def test_an_idle_worker_waits_for_the_queue_notify_not_a_poll(
    pg_dsn: str, pg_schema: str
) -> None:
    # Before, every idle worker pulled once a second whether or not a turn was
    # queued: 8 idle workers ran 8.8 pulls a second. Now the first wait returns
    # as soon as it listens (a turn queued before LISTEN is looked for), then it
    # waits for the NOTIFY, looking anyway only every ``recheck`` seconds.
    url = _url(pg_dsn, f"schema={pg_schema}")
    store = PostgresTaskStore(pg_dsn, schema=pg_schema)
    broker = PostgresEventBroker(pg_dsn, channel=f"a2a_idle_{uuid.uuid4().hex[:12]}")
    queue = _WatchedQueue(store, url)
    worker = Worker(_Done(), store, broker, queue)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop, grace=1))
    try:
        await asyncio.wait_for(queue.second.wait(), 10)
    finally:
        stop.set()
        await running
        await queue.aclose()
        await broker.aclose()
        await store.aclose()
    assert queue.listening[:2] == [False, True]
    assert queue.waits[1] == worker.recheck == 10.0


async def test_a_worker_whose_turn_listener_is_killed_listens_again_at_once(
    pg_dsn: str, pg_schema: str
) -> None:
    # pg_terminate_backend of a worker's LISTEN connection (an admin, a failover): the
    # wait in progress ends, the next one listens again and returns (so the worker
    # looks at the queue it could not hear about), and NOTIFYs wake it again. Before,
    # the wait after the failure slept its whole timeout (with the 10 s recheck a
    # queued turn would have waited that long).
    import psycopg

    store = PostgresTaskStore(pg_dsn, schema=pg_schema)
    queue = PostgresTurnQueue(store, _url(pg_dsn, f"schema={pg_schema}"), poll=0.1)
    try:
        await queue.wait(30)
        assert queue._listener is not None
        killed = queue._listener.info.backend_pid
        async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin:
            waiting = asyncio.ensure_future(queue.wait(30))
            await asyncio.sleep(0.1)
            await admin.execute("SELECT pg_terminate_backend(%s)", (killed,))
            async with asyncio.timeout(10):
                await waiting  # failed, waited ``poll``
                assert queue._listener is None
                await queue.wait(30)  # listens again: returns at once
            assert queue._listener is not None
            assert queue._listener.info.backend_pid != killed
            woken = asyncio.ensure_future(queue.wait(30))
            await asyncio.sleep(0.1)
            await admin.execute("SELECT pg_notify(%s, '')", (queue._channel,))
            async with asyncio.timeout(10):
                await woken
    finally:
        await queue.aclose()
        await store.aclose()


class _CountingSelector(selectors.DefaultSelector):
    """Counts the event loop's wake-ups (each ``select`` it returns from)."""

    calls = 0

    def select(self, timeout: float | None = None) -> Any:
        self.calls += 1
        return super().select(timeout)


def test_idle_listening_connections_do_not_wake_the_process(pg_dsn: str, pg_schema: str) -> None:
    # Before, psycopg's notifies(timeout=...) looked at the socket every 0.1 s: an
    # idle worker (turn queue) or replica with a stream open (broker) woke ten
    # times a second per listening connection (strace of an idle `a2a-models
    # worker`: epoll_wait every 100 ms; 328 voluntary context switches in 30 s, 24 now).
    import psycopg

    selector = _CountingSelector()
    channel = f"a2a_idle_{uuid.uuid4().hex[:12]}"

    async def main() -> tuple[int, list[BrokerItem]]:
        store = PostgresTaskStore(pg_dsn, schema=pg_schema)
        broker = PostgresEventBroker(pg_dsn, channel=channel, resync_interval=None)
        queue = PostgresTurnQueue(store, _url(pg_dsn, f"schema={pg_schema}"))
        try:
            subscription = await broker.subscribe("t")
            await queue.wait(30)  # starts listening: returns at once
            waiting = asyncio.ensure_future(queue.wait(30))
            await asyncio.sleep(0.2)  # both listeners are waiting now
            before = selector.calls
            await asyncio.sleep(1.0)
            woke = selector.calls - before
            # A notification still wakes each of them at once.
            async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin:
                await admin.execute("SELECT pg_notify(%s, '')", (queue._channel,))
                await admin.execute(
                    "SELECT pg_notify(%s, 't:1'), pg_notify(%s, 't:2')", (channel, channel)
                )
                async with asyncio.timeout(10):
                    await waiting
                    items = [await subscription.next(), await subscription.next()]
            return woke, items
        finally:
            await queue.aclose()
            await broker.aclose()
            await store.aclose()

    with asyncio.Runner(loop_factory=lambda: asyncio.SelectorEventLoop(selector)) as runner:
        woke, items = runner.run(main())
    assert items == [(1, None), (2, None)]
    # The sleep itself, and nothing else (before: 40, two listeners checking 10 times a second).
    assert woke <= 3
