"""The TaskStore contract, run against every store (see the ``store`` fixture).

InMemoryTaskStore is the reference: every store must behave exactly like it
for versions, the event log, scoping, listing and push configs.
"""

from __future__ import annotations

import asyncio
import math
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from a2a_models import (
    Artifact,
    AuthenticationInfo,
    DataPart,
    InvalidParamsError,
    Message,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.server import (
    AgentEvent,
    ConcurrentModificationError,
    DuplicateMessageError,
    RequestContext,
    RequestHandler,
    StoredTask,
    TaskStore,
)
from a2a_models.server.paging import encode_cursor, status_key
from a2a_models.testing import strategies as a2a_st

from ._support import FuncAgent, collect, make_card, send

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _task(
    task_id: str,
    state: TaskState = TaskState.WORKING,
    *,
    minute: int | None = 0,
    context_id: str = "c1",
) -> Task:
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(
            state=state, timestamp=None if minute is None else T0 + timedelta(minutes=minute)
        ),
        history=[
            attrs.evolve(
                Message.user("hi", task_id=task_id, context_id=context_id),
                message_id=f"m-{task_id}",
            )
        ],
    )


def _in(task: Task, state: TaskState) -> Task:
    return attrs.evolve(task, status=TaskStatus(state=state, timestamp=task.status.timestamp))


def _status(task_id: str, state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id, context_id="c1", status=TaskStatus(state=state, timestamp=T0)
    )


# --- create / get / update ------------------------------------------------------------------


async def test_create_get_update_versions(store: TaskStore) -> None:
    stored = await store.create(_task("t1"), "alice", "acme", event=_task("t1"))
    assert (stored.version, stored.last_seq, stored.owner, stored.tenant) == (1, 1, "alice", "acme")
    assert stored.task == _task("t1")
    assert await store.update(_in(stored.task, TaskState.INPUT_REQUIRED), 1) == 2
    got = await store.get("t1", "alice", "acme")
    assert got is not None
    assert (got.version, got.last_seq, got.task.status.state) == (2, 1, TaskState.INPUT_REQUIRED)
    assert (got.owner, got.tenant) == ("alice", "acme")


async def test_create_without_event_has_an_empty_log(store: TaskStore) -> None:
    stored = await store.create(_task("t1"), None)
    assert (stored.version, stored.last_seq) == (1, 0)
    assert await store.events_after("t1", 0) == []
    got = await store.get("t1", None)
    assert got is not None and (got.version, got.last_seq) == (1, 0)


async def test_get_of_an_unknown_task_is_none(store: TaskStore) -> None:
    assert await store.get("nope", None) is None
    assert await store.get("nope", "alice", "acme") is None


async def test_stale_version_is_a_concurrent_modification(store: TaskStore) -> None:
    await store.create(_task("t1"), None)
    assert await store.update(_task("t1"), 1) == 2
    with pytest.raises(ConcurrentModificationError) as err:
        await store.update(_task("t1"), 1)
    assert (err.value.task_id, err.value.expected_version, err.value.actual_version) == (
        "t1",
        1,
        2,
    )
    with pytest.raises(ConcurrentModificationError) as err:
        await store.update(_task("t1"), 5)
    assert (err.value.expected_version, err.value.actual_version) == (5, 2)
    with pytest.raises(TaskNotFoundError):
        await store.update(_task("nope"), 1)


async def test_creating_a_taken_id_is_a_concurrent_modification(store: TaskStore) -> None:
    await store.create(_task("t1"), "alice", event=_task("t1"))
    await store.update(_task("t1"), 1)
    with pytest.raises(ConcurrentModificationError) as err:
        # Even for another owner: ids are global.
        await store.create(_task("t1", TaskState.SUBMITTED), "bob", event=_task("t1"))
    assert (err.value.expected_version, err.value.actual_version) == (0, 2)
    got = await store.get("t1", "alice")
    assert got is not None and got.task == _task("t1") and got.last_seq == 1
    assert await store.get("t1", "bob") is None


async def test_update_keeps_the_scope(store: TaskStore) -> None:
    await store.create(_task("t1"), "alice", "acme")
    await store.update(_in(_task("t1"), TaskState.COMPLETED), 1)
    assert await store.get("t1", None) is None
    got = await store.get("t1", "alice", "acme")
    assert got is not None and got.task.status.state is TaskState.COMPLETED


async def test_snapshots_round_trip_exactly(store: TaskStore) -> None:
    metadata = {
        "big": 2**70,
        "huge": 1e300,
        "large": 1.5e16,
        "tiny": 1.5e-7,
        "whole": 3.0,
        "neg_zero": -0.0,
        "nul": "a\x00b",
        "emoji": "😀",
        "nested": {"b": [1, 2.5, None, True], "a": {}},
        "text": "1e+16",
    }
    task = Task(
        id="rich",
        context_id="c",
        status=TaskStatus(
            state=TaskState.INPUT_REQUIRED,
            message=Message.agent("need\x00input", task_id="rich", context_id="c"),
            timestamp=datetime(2026, 2, 3, 4, 5, 6, 789012, tzinfo=UTC),
        ),
        history=[Message.user("héllo \x00 wörld", task_id="rich", context_id="c")],
        artifacts=[
            Artifact(
                artifact_id="a1",
                name="data",
                parts=[DataPart(data={"x": 1e22, "y": [-0.0]}), TextPart(text="plain")],
            )
        ],
        metadata=metadata,
    )
    event = TaskArtifactUpdateEvent(
        task_id="rich", context_id="c", artifact=task.artifacts[0], append=True
    )
    await store.create(task, None, event=task)
    await store.append_event("rich", event)
    got = await store.get("rich", None)
    assert got is not None and got.task == task
    assert got.task.metadata is not None
    assert type(got.task.metadata["huge"]) is float and type(got.task.metadata["large"]) is float
    assert math.copysign(1, got.task.metadata["neg_zero"]) == -1
    assert await store.events_after("rich", 0) == [(1, task), (2, event)]
    page = await store.list(None)
    assert page.tasks == [task]


@settings(
    max_examples=int(os.environ.get("A2A_STORE_EXAMPLES", "15")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(task=a2a_st.tasks(), event=a2a_st.stream_responses())
async def test_any_task_and_event_round_trip(
    store: TaskStore, task: Task, event: StreamResponse
) -> None:
    task = attrs.evolve(task, id=uuid.uuid4().hex)
    await store.create(task, "o", event=event)
    got = await store.get(task.id, "o")
    assert got is not None and got.task == task
    assert await store.events_after(task.id, 0) == [(1, event)]


# --- real concurrency -----------------------------------------------------------------------


async def test_racing_writers_from_one_version_exactly_one_wins(store: TaskStore) -> None:
    await store.create(_task("t1"), None, event=_task("t1"))
    for round_ in range(5):
        stored = await store.get("t1", None)
        assert stored is not None
        results = await asyncio.gather(
            *(
                store.update(_task("t1", minute=round_ * 10 + i), stored.version, event=_task("t1"))
                for i in range(4)
            ),
            return_exceptions=True,
        )
        wins = [r for r in results if isinstance(r, int)]
        losses = [r for r in results if isinstance(r, ConcurrentModificationError)]
        assert wins == [stored.version + 1] and len(losses) == 3, results
    stored = await store.get("t1", None)
    assert stored is not None and (stored.version, stored.last_seq) == (6, 6)
    assert [seq for seq, _ in await store.events_after("t1", 0)] == [1, 2, 3, 4, 5, 6]


async def test_racing_creates_of_one_id(store: TaskStore) -> None:
    results = await asyncio.gather(
        *(store.create(_task("t1"), f"owner{i}", event=_task("t1")) for i in range(4)),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1, results
    assert sum(isinstance(r, ConcurrentModificationError) for r in results) == 3
    assert [seq for seq, _ in await store.events_after("t1", 0)] == [1]


async def test_racing_appends_get_distinct_consecutive_seqs(store: TaskStore) -> None:
    await store.create(_task("t1"), None, event=_task("t1"))
    seqs = await asyncio.gather(
        *(store.append_event("t1", Message.agent(f"m{i}")) for i in range(20))
    )
    assert sorted(seqs) == list(range(2, 22))
    log = await store.events_after("t1", 0)
    assert [seq for seq, _ in log] == list(range(1, 22))
    texts = {seq: e.text for seq, e in log[1:] if isinstance(e, Message)}
    assert {texts[s] for s in seqs} == {f"m{i}" for i in range(20)}
    stored = await store.get("t1", None)
    assert stored is not None and (stored.version, stored.last_seq) == (21, 21)


async def test_optimistic_retry_loops_lose_no_update(store: TaskStore) -> None:
    # What the engine does: read, apply, write with the version read; retry on conflict.
    await store.create(attrs.evolve(_task("t1"), metadata={"n": 0}), None)

    async def increment(worker: int) -> int:
        conflicts = 0
        while True:
            stored = await store.get("t1", None)
            assert stored is not None and stored.task.metadata is not None
            task = attrs.evolve(stored.task, metadata={"n": stored.task.metadata["n"] + 1})
            try:
                await store.update(task, stored.version, event=Message.agent(f"w{worker}"))
                return conflicts
            except ConcurrentModificationError:
                conflicts += 1
                await asyncio.sleep(0)

    await asyncio.gather(*(increment(i) for i in range(8)))
    stored = await store.get("t1", None)
    assert stored is not None and stored.task.metadata == {"n": 8}
    assert (stored.version, stored.last_seq) == (9, 8)
    log = await store.events_after("t1", 0)
    assert [seq for seq, _ in log] == list(range(1, 9))
    assert sorted(e.text for _, e in log if isinstance(e, Message)) == [f"w{i}" for i in range(8)]


# --- event log ----------------------------------------------------------------------------


async def test_event_log_sequence_and_version(store: TaskStore) -> None:
    task = _task("t1")
    await store.create(task, None, event=task)
    assert await store.append_event("t1", Message.agent("x")) == 2
    assert await store.update(task, 2, event=Message.agent("y")) == 3
    log = await store.events_after("t1", 0)
    assert [seq for seq, _ in log] == [1, 2, 3]
    assert [seq for seq, _ in await store.events_after("t1", 2)] == [3]
    assert [seq for seq, _ in await store.events_after("t1", -5)] == [1, 2, 3]
    assert await store.events_after("t1", 3) == []
    assert await store.events_after("t1", 99) == []
    assert await store.events_after("unknown", 0) == []
    # ``limit``: the first that many (a stream reads the log in pages).
    assert [seq for seq, _ in await store.events_after("t1", 0, limit=2)] == [1, 2]
    assert [seq for seq, _ in await store.events_after("t1", 1, limit=1)] == [2]
    assert [seq for seq, _ in await store.events_after("t1", -5, limit=2)] == [1, 2]
    assert [seq for seq, _ in await store.events_after("t1", 2, limit=5)] == [3]
    assert await store.events_after("t1", 3, limit=5) == []
    stored = await store.get("t1", None)
    assert stored is not None and (stored.version, stored.last_seq) == (3, 3)
    with pytest.raises(TaskNotFoundError):
        await store.append_event("unknown", Message.agent("x"))


async def test_snapshot_and_event_are_written_together_or_not_at_all(store: TaskStore) -> None:
    await store.create(_task("t1"), None, event=_task("t1"))
    await store.update(
        _in(_task("t1"), TaskState.WORKING), 1, event=_status("t1", TaskState.WORKING)
    )
    with pytest.raises(ConcurrentModificationError):
        await store.update(
            _in(_task("t1"), TaskState.COMPLETED), 1, event=_status("t1", TaskState.COMPLETED)
        )
    stored = await store.get("t1", None)
    assert stored is not None
    assert (stored.version, stored.last_seq, stored.task.status.state) == (2, 2, TaskState.WORKING)
    log = await store.events_after("t1", 0)
    assert log == [(1, _task("t1")), (2, _status("t1", TaskState.WORKING))]
    # An update without an event changes the snapshot, not the log.
    await store.update(_in(_task("t1"), TaskState.COMPLETED), 2)
    assert await store.events_after("t1", 0) == log


# --- scoping ------------------------------------------------------------------------------


async def test_tasks_are_invisible_to_other_owners_and_tenants(store: TaskStore) -> None:
    await store.create(_task("t1"), "alice", "acme")
    await store.create(_task("t2"), None)
    await store.create(_task("t3"), "", "")
    assert await store.get("t1", "alice", "acme") is not None
    assert await store.get("t1", "bob", "acme") is None
    assert await store.get("t1", "alice", "other") is None
    assert await store.get("t1", "alice") is None
    assert await store.get("t1", None) is None
    assert await store.get("t2", "") is None  # None and "" are different owners
    assert await store.get("t2", None, "") is None
    assert await store.get("t3", None) is None
    assert await store.get("t3", "", "") is not None
    assert (await store.list("bob", "acme")).tasks == []
    assert [t.id for t in (await store.list("alice", "acme")).tasks] == ["t1"]
    assert [t.id for t in (await store.list(None)).tasks] == ["t2"]
    assert [t.id for t in (await store.list("", "")).tasks] == ["t3"]
    assert (await store.list("alice", "acme")).total_size == 1


async def test_scope_values_that_look_alike_stay_apart(store: TaskStore) -> None:
    await store.create(_task("t1"), "a", "b,c")
    await store.create(_task("t2"), "a,b", "c")
    await store.create(_task("t3"), "null", None)
    await store.create(_task("t4"), "x\x00", "\ud800")
    assert [t.id for t in (await store.list("x\x00", "\ud800")).tasks] == ["t4"]
    assert await store.get("t4", "x", "\ud800") is None
    stored = await store.get("t4", "x\x00", "\ud800")
    assert stored is not None and (stored.owner, stored.tenant) == ("x\x00", "\ud800")
    assert [t.id for t in (await store.list("a", "b,c")).tasks] == ["t1"]
    assert [t.id for t in (await store.list("a,b", "c")).tasks] == ["t2"]
    assert [t.id for t in (await store.list("null")).tasks] == ["t3"]
    assert (await store.list(None)).tasks == []


# --- listing ------------------------------------------------------------------------------


async def _all_pages(store: TaskStore, page_size: int, **filters: object) -> list[list[str]]:
    pages: list[list[str]] = []
    token = None
    while True:
        page = await store.list(None, page_size=page_size, page_token=token, **filters)  # type: ignore[arg-type]
        pages.append([t.id for t in page.tasks])
        if not page.next_page_token:
            return pages
        token = page.next_page_token


async def test_list_sorts_newest_first_and_paginates(store: TaskStore) -> None:
    for i in range(7):
        await store.create(_task(f"t{i}", minute=i % 4), None)
    pages = await _all_pages(store, 3)
    assert pages == [["t3", "t2", "t6"], ["t1", "t5", "t0"], ["t4"]]
    page = await store.list(None, page_size=3)
    assert page.total_size == 7
    # An exact multiple: the last full page has no token.
    assert await _all_pages(store, 7) == [["t3", "t2", "t6", "t1", "t5", "t0", "t4"]]


async def test_list_orders_ids_by_code_point_and_untimed_last(store: TaskStore) -> None:
    ids = ["b", "B", "a", "é", "😀", "a-1", "a_1", "Z9", "ﬀ"]
    for task_id in ids:
        await store.create(_task(task_id, minute=5), None)
    await store.create(_task("untimed2", minute=None), None)
    await store.create(_task("untimed1", minute=None), None)
    await store.create(_task("early", minute=1), None)
    expected = [*sorted(ids), "early", "untimed1", "untimed2"]
    assert [i for page in await _all_pages(store, 2) for i in page] == expected
    assert [t.id for t in (await store.list(None, page_size=100)).tasks] == expected


async def test_list_filters(store: TaskStore) -> None:
    await store.create(_task("a", minute=1, context_id="x"), None)
    await store.create(_task("b", TaskState.COMPLETED, minute=2, context_id="x"), None)
    await store.create(_task("c", minute=3, context_id="y"), None)
    await store.create(_task("d", minute=None, context_id="x"), None)
    await store.create(_task("e", minute=9, context_id="x"), "someone else")
    assert [t.id for t in (await store.list(None, context_id="x")).tasks] == ["b", "a", "d"]
    assert [t.id for t in (await store.list(None, status=TaskState.WORKING)).tasks] == [
        "c",
        "a",
        "d",
    ]
    assert (await store.list(None, status=TaskState.FAILED)).tasks == []
    assert (await store.list(None, context_id="z")).total_size == 0
    after = T0 + timedelta(minutes=2)
    page = await store.list(None, status_timestamp_after=after)
    assert ([t.id for t in page.tasks], page.total_size) == (["c", "b"], 2)
    # Tasks without a timestamp never match a timestamp filter.
    early = datetime(1, 1, 1, tzinfo=UTC)
    assert [t.id for t in (await store.list(None, status_timestamp_after=early)).tasks] == [
        "c",
        "b",
        "a",
    ]
    combined = await store.list(
        None, context_id="x", status=TaskState.WORKING, status_timestamp_after=T0
    )
    assert ([t.id for t in combined.tasks], combined.total_size) == (["a"], 1)
    # Filters combine with pagination; total_size counts every page.
    pages = await _all_pages(store, 1, context_id="x")
    assert pages == [["b"], ["a"], ["d"]]


async def test_odd_context_ids_filter_exactly(store: TaskStore) -> None:
    odd = ["a\x00b", '\x1b"a\\u0000b"', "\x1b", "a", "\ud800"]
    for i, context_id in enumerate(odd):
        await store.create(_task(f"t{i}", context_id=context_id), None)
    for i, context_id in enumerate(odd):
        page = await store.list(None, context_id=context_id)
        assert [t.id for t in page.tasks] == [f"t{i}"], context_id
        assert page.tasks[0].context_id == context_id
    assert (await store.list(None, context_id="a\x00")).tasks == []


async def test_message_ids_that_look_alike_in_the_database_stay_apart(store: TaskStore) -> None:
    # PostgreSQL's jsonb holds NUL and a lone surrogate both as U+FFFD.
    def message(message_id: str, text: str) -> Message:
        return attrs.evolve(Message.user(text), message_id=message_id)

    first = message("a\x00", "one")
    stored = await store.create(attrs.evolve(_task("t1"), history=[first]), None)
    again = message("a\x00", "repeated id")
    task = attrs.evolve(stored.task, history=[first, message("a\ud800", "two"), again])
    await store.update(task, stored.version)
    got = await store.get("t1", None)
    assert got is not None
    assert [(m.message_id, m.parts) for m in got.task.history] == [
        ("a\x00", first.parts),
        ("a\ud800", (TextPart(text="two"),)),
    ]


async def test_a_write_adding_a_message_the_task_has_is_refused(store: TaskStore) -> None:
    """``update(new_message=...)``: the engine accepting a client's message learns, in the
    write, that the history has it already (a retry), and nothing is written."""
    stored = await store.create(_task("t1"), None, event=_task("t1"))

    def accepting(message_id: str, base: StoredTask) -> Task:
        # As the engine writes it: the task without its history, plus the message.
        message = attrs.evolve(Message.user("again", task_id="t1"), message_id=message_id)
        return attrs.evolve(_in(base.task, TaskState.WORKING), history=[message])

    base = await store.get("t1", None, history_length=0)
    assert base is not None and base.history_offset == 1
    with pytest.raises(DuplicateMessageError) as err:
        await store.update(
            accepting("m-t1", base),
            base.version,
            event=_status("t1", TaskState.WORKING),
            history_offset=base.history_offset,
            new_message="m-t1",
        )
    assert (err.value.task_id, err.value.message_id) == ("t1", "m-t1")
    after = await store.get("t1", None)
    assert after is not None and (after.version, after.last_seq) == (1, 1)
    assert after.task == stored.task
    # A new id is written; then it is the one refused. A stale version is refused as such.
    version = await store.update(
        accepting("m2", base), base.version, history_offset=1, new_message="m2"
    )
    assert version == 2
    with pytest.raises(ConcurrentModificationError):
        await store.update(accepting("m2", base), base.version, history_offset=1, new_message="m2")
    base = await store.get("t1", None, history_length=0)
    assert base is not None and base.history_offset == 2
    with pytest.raises(DuplicateMessageError):
        await store.update(accepting("m2", base), 2, history_offset=2, new_message="m2")
    got = await store.get("t1", None)
    assert got is not None and got.version == 2
    assert [m.message_id for m in got.task.history] == ["m-t1", "m2"]


async def test_ids_that_look_alike_are_not_repeats(store: TaskStore) -> None:
    # PostgreSQL's jsonb holds NUL and a lone surrogate both as U+FFFD: looked up by
    # the same hash, told apart by the id itself.
    first = attrs.evolve(Message.user("one"), message_id="a\x00")
    stored = await store.create(attrs.evolve(_task("t1"), history=[first]), None)
    other = attrs.evolve(Message.user("two"), message_id="a\ud800")
    task = attrs.evolve(stored.task, history=[other])
    assert await store.update(task, 1, history_offset=1, new_message="a\ud800") == 2
    assert await store.find_message("t1", "a\ud800") == other
    assert await store.find_message("t1", "a\x00") == first
    assert await store.find_message("t1", "a\ufffd") is None


async def test_find_message_finds_one_message_of_the_history(store: TaskStore) -> None:
    asked = Message.agent("which city?", task_id="t1", context_id="c1")
    answer = Message.user("Paris", task_id="t1", context_id="c1")
    foreign = Message.user("from elsewhere", task_id="other", context_id="c9")
    stored = await store.create(_task("t1"), "alice", "acme")
    task = attrs.evolve(stored.task, history=[*stored.task.history, asked, answer, foreign])
    await store.update(task, 1)
    assert await store.find_message("t1", answer.message_id) == answer
    found = await store.find_message("t1", asked.message_id)
    assert found == asked and found.role is Role.AGENT
    assert await store.find_message("t1", foreign.message_id) == foreign
    assert await store.find_message("t1", "m-t1") == stored.task.history[0]
    assert await store.find_message("t1", "nope") is None
    assert await store.find_message("nope", "m-t1") is None
    await store.create(_task("t2"), None)
    assert await store.find_message("t2", answer.message_id) is None


async def test_list_cursor_survives_changes_between_pages(store: TaskStore) -> None:
    for i in range(4):
        await store.create(_task(f"t{i}", minute=i), None)
    first = await store.list(None, page_size=2)
    assert [t.id for t in first.tasks] == ["t3", "t2"]
    await store.create(_task("t9", minute=9), None)  # newer than the cursor: not on later pages
    await store.update(_task("t1", minute=8), 1)  # moved before the cursor
    second = await store.list(None, page_size=2, page_token=first.next_page_token)
    assert [t.id for t in second.tasks] == ["t0"]
    assert (second.next_page_token, second.total_size) == ("", 5)


async def test_list_of_nothing(store: TaskStore) -> None:
    page = await store.list(None)
    assert page == ([], "", 0)
    await store.create(_task("t1"), None)
    page = await store.list(None, page_size=1)
    assert ([t.id for t in page.tasks], page.next_page_token, page.total_size) == (["t1"], "", 1)


@pytest.mark.parametrize("token", ["garbage!", "dGhpcyBpcyBub3QgYSB0b2tlbg", "djF8eHx5", "djF8MXw"])
async def test_bad_page_token_is_invalid_params(store: TaskStore, token: str) -> None:
    with pytest.raises(InvalidParamsError, match="pageToken"):
        await store.list(None, page_token=token)


@pytest.mark.parametrize("key", [2**63, -(2**63) - 1])
async def test_a_page_token_with_a_key_no_store_holds_is_invalid_params(
    store: TaskStore, key: int
) -> None:
    # SQLite could not bind the key (OverflowError): -32603 Internal error.
    await store.create(_task("t1"), None)
    with pytest.raises(InvalidParamsError, match="pageToken"):
        await store.list(None, page_token=encode_cursor(key, "t1"))
    # The largest key a store holds is a cursor before every task.
    page = await store.list(None, page_token=encode_cursor(2**63 - 1, "t0"))
    assert [t.id for t in page.tasks] == ["t1"]


async def test_a_page_token_naming_an_id_with_nul_continues_after_it(store: TaskStore) -> None:
    # PostgreSQL refused the NUL in the cursor (-32603); no id it holds sorts between
    # "t1" and "t1\x00", so the page is the reference store's.
    for task_id in ("t0", "t1", "t1a", "t2"):
        await store.create(_task(task_id), None)
    page = await store.list(None, page_token=encode_cursor(status_key(_task("t1")), "t1\x00"))
    assert [t.id for t in page.tasks] == ["t1a", "t2"]


async def test_bad_page_size_is_invalid_params(store: TaskStore) -> None:
    with pytest.raises(InvalidParamsError, match="pageSize"):
        await store.list(None, page_size=0)


async def test_tokens_are_interchangeable_between_stores(store: TaskStore) -> None:
    from a2a_models.server import InMemoryTaskStore

    reference = InMemoryTaskStore()
    for i in range(5):
        await store.create(_task(f"t{i}", minute=i), None)
        await reference.create(_task(f"t{i}", minute=i), None)
    token = (await reference.list(None, page_size=2)).next_page_token
    assert [t.id for t in (await store.list(None, page_size=2, page_token=token)).tasks] == [
        "t2",
        "t1",
    ]


# --- push configs -------------------------------------------------------------------------


async def test_push_configs(store: TaskStore) -> None:
    await store.create(_task("t1"), None)
    one = TaskPushNotificationConfig(url="http://one", id="1", task_id="t1")
    two = TaskPushNotificationConfig(
        url="http://two",
        id="2",
        task_id="t1",
        token="secret",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="xyz"),
        tenant="acme",
    )
    assert await store.set_push_config("t1", one) == one
    await store.set_push_config("t1", two)
    assert await store.list_push_configs("t1") == [one, two]
    assert await store.get_push_config("t1", "2") == two
    assert await store.get_push_config("t1", "3") is None
    # Replacing keeps the config's place in the creation order.
    one_b = attrs.evolve(one, url="http://one-b")
    await store.set_push_config("t1", one_b)
    assert await store.list_push_configs("t1") == [one_b, two]
    await store.delete_push_config("t1", "2")
    await store.delete_push_config("t1", "2")
    await store.delete_push_config("nope", "2")
    assert await store.list_push_configs("t1") == [one_b]
    three = TaskPushNotificationConfig(url="http://three", id="3")
    await store.set_push_config("t1", three)
    await store.set_push_config("t1", two)
    assert await store.list_push_configs("t1") == [one_b, three, two]
    with pytest.raises(TaskNotFoundError):
        await store.set_push_config("nope", one)
    with pytest.raises(ValueError, match="id"):
        await store.set_push_config("t1", TaskPushNotificationConfig(url="http://x"))
    assert await store.get_push_config("nope", "1") is None
    assert await store.list_push_configs("nope") == []


async def test_push_configs_are_per_task(store: TaskStore) -> None:
    await store.create(_task("t1"), None)
    await store.create(_task("t2"), None)
    config = TaskPushNotificationConfig(url="http://one", id="same")
    await store.set_push_config("t1", config)
    await store.set_push_config("t2", attrs.evolve(config, url="http://two"))
    assert [c.url for c in await store.list_push_configs("t1")] == ["http://one"]
    assert [c.url for c in await store.list_push_configs("t2")] == ["http://two"]
    await store.delete_push_config("t1", "same")
    assert await store.get_push_config("t2", "same") is not None


# --- the engine on top --------------------------------------------------------------------


async def test_the_engine_runs_on_the_store(store: TaskStore) -> None:
    async def agent(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        yield context.artifact(TextPart(text="result"), name="out")
        yield context.complete("done")

    handler = RequestHandler(FuncAgent(agent), make_card(), store=store)
    stream = await handler.on_send_streaming_message(send("go"))
    items = await collect(stream)
    assert [seq for seq, _ in items] == [1, 2, 3, 4]
    task_id = items[0][1].id  # type: ignore[union-attr]
    final = await handler.store.get(task_id, None)
    assert final is not None and final.task.status.state is TaskState.COMPLETED
    assert final.task.artifacts[0].parts[0] == TextPart(text="result")
    assert [e for _, e in await store.events_after(task_id, 0)] == [e for _, e in items]
    await handler.idle()
