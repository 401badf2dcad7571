"""A turn of a long conversation does work that does not grow with its history (issue #10).

Structural, not timed (timing targets live in ``bench/``): one turn (a
message, the agent's input-required answer, the reply with
``historyLength: 10``) of a task with 2,000 messages is counted three ways,
on every store: the reads of ``Message.message_id`` (building a set of the
history's ids, looking for a duplicate), the lines of the package's Python
code run (a validator going over the history, a copy built item by item,
decoding it) compared with the same turn of a short conversation, and the
history rows read from the database. Each must stay under a small constant.

And what the caches must not change: a message already in the history (a
client's retry) is not added twice nor run again, and two store instances on
one database (replicas) each see the other's messages at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2a_models import (
    Artifact,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    InvalidParamsError,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from a2a_models.server import (
    AgentEvent,
    ConcurrentModificationError,
    InMemoryTaskStore,
    RequestContext,
    RequestHandler,
    StoredTask,
    TaskStore,
)
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore

from ._support import FuncAgent, Lines, make_card

LONG = 2_000
SHORT = 40
T0 = datetime(2025, 6, 1, tzinfo=UTC)


async def _asks(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.ask(f"got {context.message.text}")


def _message(i: int, task_id: str) -> Message:
    role = Message.user if i % 2 == 0 else Message.agent
    return attrs.evolve(role(f"m{i}", task_id=task_id, context_id="c"), message_id=f"{task_id}-{i}")


def _conversation(task_id: str, n: int) -> Task:
    """A task waiting for input after ``n`` messages."""
    return Task(
        id=task_id,
        context_id="c",
        status=TaskStatus(state=TaskState.INPUT_REQUIRED, timestamp=T0),
        history=tuple(_message(i, task_id) for i in range(n)),
    )


def _turn(task_id: str, text: str, message_id: str | None = None) -> SendMessageRequest:
    message = Message.user(text, task_id=task_id, context_id="c")
    if message_id is not None:
        message = attrs.evolve(message, message_id=message_id)
    return SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(history_length=10)
    )


class _CountingId:
    """``Message.message_id`` that counts its reads (the slot's descriptor inside)."""

    def __init__(self, slot: Any) -> None:
        self.slot = slot
        self.reads = 0

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        self.reads += 1
        return self.slot.__get__(obj, owner)

    def __set__(self, obj: object, value: object) -> None:
        self.slot.__set__(obj, value)


@pytest.fixture
def message_ids() -> Iterator[_CountingId]:
    counting = _CountingId(Message.__dict__["message_id"])
    type.__setattr__(Message, "message_id", counting)
    try:
        yield counting
    finally:
        type.__setattr__(Message, "message_id", counting.slot)


def _count_rows(store: TaskStore, artifacts: list[int] | None = None) -> list[int]:
    """History rows read by a database store, per read (none for the memory store);
    ``artifacts`` gets the artifacts read, per read."""
    rows: list[int] = []
    fetch = getattr(store, "_fetch_task", None)
    if fetch is None:
        return rows

    async def counted(*args: Any, **kwargs: Any) -> Any:
        row = await fetch(*args, **kwargs)
        if row is not None:
            rows.append(len(row[4]))
            if artifacts is not None:
                artifacts.append(len(row[5] or ()))
        return row

    store._fetch_task = counted  # type: ignore[attr-defined]
    return rows


async def _measure(
    store: TaskStore, task_id: str, n: int, message_ids: _CountingId
) -> tuple[int, int, int]:
    """``(message_id reads, package lines, history rows read)`` of one turn at ``n`` messages."""
    await store.create(_conversation(task_id, n), None)
    handler = RequestHandler(FuncAgent(_asks), make_card(), store=store)
    for i in range(3):  # the first turn reads the history once; later ones build on it
        await handler.on_send_message(_turn(task_id, f"warm {i}"))
    rows = _count_rows(store)
    message_ids.reads = 0
    with Lines() as lines:
        task = await handler.on_send_message(_turn(task_id, "measured"))
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    assert [m.text for m in task.history[-2:]] == ["measured", "got measured"]
    return message_ids.reads, lines.count, sum(rows)


async def test_a_turn_does_not_go_over_the_history(
    store: TaskStore, message_ids: _CountingId
) -> None:
    short = await _measure(store, "short", SHORT, message_ids)
    long = await _measure(store, "long", LONG, message_ids)
    ids, lines, rows = long
    # A pass over the history would read 2,000 ids, run thousands of lines or rows.
    assert ids <= 20, (short, long)
    assert lines - short[1] <= 200, (short, long)
    assert rows <= 12, (short, long)  # the reply reads its 10 (historyLength)
    stored = await store.get("long", None)
    assert stored is not None and len(stored.task.history) == LONG + 8


async def _cancel_lines(store: TaskStore, task_id: str, n: int) -> int:
    """Package lines run by a cancel of a task waiting for input after ``n`` messages."""
    await store.create(_conversation(task_id, n), None)
    await store.get(task_id, None)  # read whole once, as the request that showed it did
    handler = RequestHandler(FuncAgent(_asks), make_card(), store=store)
    with Lines() as lines:
        task = await handler.on_cancel_task(CancelTaskRequest(id=task_id))
    assert task.status.state is TaskState.CANCELED and len(task.history) == n
    return lines.count


async def test_a_cancel_does_not_go_over_the_history(store: TaskStore) -> None:
    # It looked for the newest user message by listing every user message: a
    # line per message (4,000 more lines for 2,000 messages).
    short = await _cancel_lines(store, "short", SHORT)
    long = await _cancel_lines(store, "long", LONG)
    assert long - short <= 100, (short, long)


async def test_a_repeated_message_runs_no_turn_and_does_not_go_over_the_history(
    store: TaskStore, message_ids: _CountingId
) -> None:
    """A message the task already has (a client's retry: same messageId) runs no turn,
    and finding that out goes over no history. It ran the agent again: the store left
    the repeated message out and the agent's answer went in twice."""
    await store.create(_conversation("t", LONG), None)
    turns: list[str] = []

    async def asks(context: RequestContext) -> AsyncIterator[AgentEvent]:
        turns.append(context.message.text)
        yield context.ask(f"got {context.message.text}")

    handler = RequestHandler(FuncAgent(asks), make_card(), store=store)
    await handler.on_send_message(_turn("t", "one", message_id="t-one"))
    rows = _count_rows(store)
    message_ids.reads = 0
    # The newest user message again (the task waits for input again), then the very first.
    for repeated in ("t-one", "t-0"):
        task = await handler.on_send_message(_turn("t", "again", message_id=repeated))
        assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
        assert [m.text for m in task.history[-2:]] == ["one", "got one"]
    assert turns == ["one"]
    assert message_ids.reads <= 20, message_ids.reads
    assert sum(rows) <= 2 * 12, rows  # each answer reads its 10 (historyLength)
    # The id of a message of the agent is not the client's to send again.
    with pytest.raises(InvalidParamsError) as err:
        await handler.on_send_message(_turn("t", "again", message_id="t-1"))
    assert err.value.data == {"field": "message.messageId"}
    stored = await store.get("t", None)
    assert stored is not None
    ids = [m.message_id for m in stored.task.history]
    assert len(ids) == len(set(ids)) == LONG + 2, len(ids)
    assert turns == ["one"]


async def _replica_pair(kind: str, request: pytest.FixtureRequest) -> tuple[TaskStore, TaskStore]:
    if kind == "sqlite":
        path: Path = request.getfixturevalue("sqlite_path")
        return await SQLiteTaskStore(path).open(), await SQLiteTaskStore(path).open()
    schema: str = request.getfixturevalue("pg_schema")
    dsn: str = request.getfixturevalue("pg_dsn")
    return (
        await PostgresTaskStore(dsn, schema=schema).open(),
        await PostgresTaskStore(dsn, schema=schema).open(),
    )


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_replicas_see_each_others_turns(kind: str, request: pytest.FixtureRequest) -> None:
    a, b = await _replica_pair(kind, request)
    try:
        await a.create(_conversation("t", 100), None)
        handlers = [RequestHandler(FuncAgent(_asks), make_card(), store=store) for store in (a, b)]
        for i in range(6):  # turns alternate between the replicas
            await handlers[i % 2].on_send_message(_turn("t", f"turn {i}"))
            for store in (a, b):  # a whole read, as the next turn's, sees every turn
                stored = await store.get("t", None)
                assert stored is not None
                texts = [m.text for m in stored.task.history[100:]]
                expected = [t for j in range(i + 1) for t in (f"turn {j}", f"got turn {j}")]
                assert texts == expected, (kind, i)
        # A write based on an older version is refused, whatever the caches hold.
        old = await a.get("t", None)
        assert old is not None
        await b.update(
            attrs.evolve(old.task, history=(*old.task.history, _message(1000, "t"))), old.version
        )
        with pytest.raises(ConcurrentModificationError):
            await a.update(
                attrs.evolve(old.task, history=(*old.task.history, _message(1001, "t"))),
                old.version,
            )
        again = await a.get("t", None)
        assert again is not None and again.task.history[-1].message_id == "t-1000"
        assert len(again.task.history) == 100 + 12 + 1
        # A write repeating a message (same id) adds nothing, and the next read says so.
        await a.update(
            attrs.evolve(again.task, history=(*again.task.history, _message(5, "t"))),
            again.version,
        )
        for store in (a, b):
            stored = await store.get("t", None)
            assert stored is not None and len(stored.task.history) == 100 + 12 + 1
    finally:
        for store in (a, b):
            await store.aclose()  # type: ignore[attr-defined]


async def test_a_turn_stays_cheap_with_many_conversations_going_on(
    store: TaskStore, message_ids: _CountingId
) -> None:
    """More conversations taking turns at once than the caches once held (256): a turn
    still does not go over its history (each turn found its history dropped and
    read, decoded and scanned it whole)."""
    handler = RequestHandler(FuncAgent(_asks), make_card(), store=store)
    names = [f"c{i}" for i in range(300)]
    for name in names:
        await store.create(_conversation(name, 60), None)
    for i in range(2):
        for name in names:
            await handler.on_send_message(_turn(name, f"turn {i}"))
    rows = _count_rows(store)
    message_ids.reads = 0
    task = await handler.on_send_message(_turn("c0", "measured"))
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    assert message_ids.reads <= 20, message_ids.reads
    assert sum(rows) <= 12, rows


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_requests_that_need_only_the_task_read_none_of_its_history(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """The push-config requests and a stream's resume (SSE ``Last-Event-ID``) check that
    the task is the caller's, or its state: they read no history and no artifact. They
    read the task whole, which a store that has not cached it (a fresh process, another
    replica, a history too long to cache) does row by row: 2,000 history rows here, at
    the first of them, and the artifact's 2,000 parts whenever the task changed since
    this store read it (at every chunk of a stream another replica runs)."""
    writer, reader = await _replica_pair(kind, request)
    try:
        report = Artifact(
            artifact_id="report", parts=tuple(Part.text(f"{i} ") for i in range(LONG))
        )
        task = attrs.evolve(_conversation("t", LONG), artifacts=(report,))
        await writer.create(task, None, event=_conversation("t", 1))
        handler = RequestHandler(FuncAgent(_asks), make_card(), store=reader)
        artifacts: list[int] = []
        rows = _count_rows(reader, artifacts)
        config = await handler.on_create_task_push_notification_config(
            TaskPushNotificationConfig(task_id="t", id="hook", url="https://example.com/hook")
        )
        await handler.on_get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id="t", id="hook")
        )
        listed = await handler.on_list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id="t")
        )
        assert listed.configs == (config,)
        await handler.on_delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id="t", id="hook")
        )
        stream = await handler.on_subscribe_to_task(SubscribeToTaskRequest(id="t"), after_seq=0)
        await stream.aclose()
        assert len(rows) == 5 and sum(rows) == 0 and sum(artifacts) == 0, (rows, artifacts)
        # Subscribing (no resume) starts with the task, whole.
        stream = await handler.on_subscribe_to_task(SubscribeToTaskRequest(id="t"))
        async with stream:
            async for _seq, first in stream:
                assert isinstance(first, Task) and len(first.history) == LONG
                assert first.artifacts == (report,)
                break
    finally:
        for store in (writer, reader):
            await store.aclose()  # type: ignore[attr-defined]


async def test_a_store_written_before_include_artifacts_is_not_given_it() -> None:
    """A store whose ``get`` does not take ``include_artifacts`` still answers them."""

    class OlderStore(InMemoryTaskStore):
        async def get(  # type: ignore[override]
            self, task_id: str, owner: str | None, tenant: str | None = None, *,
            history_length: int | None = None,
        ) -> StoredTask | None:  # fmt: skip
            return await super().get(task_id, owner, tenant, history_length=history_length)

    store = OlderStore()
    await store.create(_conversation("t", 3), None, event=_conversation("t", 1))
    handler = RequestHandler(FuncAgent(_asks), make_card(), store=store)
    listed = await handler.on_list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id="t")
    )
    assert listed.configs == ()
    stream = await handler.on_subscribe_to_task(SubscribeToTaskRequest(id="t"), after_seq=1)
    await stream.aclose()
