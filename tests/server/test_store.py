"""InMemoryTaskStore: versions, scoping, listing, the event log, bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from a2a_models import (
    InvalidParamsError,
    Message,
    Task,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from a2a_models.server import (
    ConcurrentModificationError,
    InMemoryTaskStore,
    TaskStoreFullError,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Clock:
    """A settable monotonic clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _task(
    task_id: str,
    state: TaskState = TaskState.WORKING,
    *,
    minute: int = 0,
    context_id: str = "c1",
) -> Task:
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=T0 + timedelta(minutes=minute)),
        history=[Message.user("hi", task_id=task_id, context_id=context_id)],
    )


def _in(task: Task, state: TaskState) -> Task:
    return attrs.evolve(task, status=TaskStatus(state=state, timestamp=task.status.timestamp))


async def test_create_get_update_versions() -> None:
    store = InMemoryTaskStore()
    stored = await store.create(_task("t1"), "alice", "acme", event=_task("t1"))
    assert (stored.version, stored.last_seq, stored.owner, stored.tenant) == (1, 1, "alice", "acme")
    assert await store.update(_in(stored.task, TaskState.INPUT_REQUIRED), 1) == 2
    got = await store.get("t1", "alice", "acme")
    assert got is not None
    assert (got.version, got.last_seq, got.task.status.state) == (2, 1, TaskState.INPUT_REQUIRED)


async def test_stale_version_is_a_concurrent_modification() -> None:
    store = InMemoryTaskStore()
    await store.create(_task("t1"), None)
    assert await store.update(_task("t1"), 1) == 2
    with pytest.raises(ConcurrentModificationError) as err:
        await store.update(_task("t1"), 1)
    assert (err.value.expected_version, err.value.actual_version) == (1, 2)
    with pytest.raises(ConcurrentModificationError):
        await store.create(_task("t1"), None)
    with pytest.raises(TaskNotFoundError):
        await store.update(_task("nope"), 1)


async def test_tasks_are_invisible_to_other_owners_and_tenants() -> None:
    store = InMemoryTaskStore()
    await store.create(_task("t1"), "alice", "acme")
    assert await store.get("t1", "alice", "acme") is not None
    assert await store.get("t1", "bob", "acme") is None
    assert await store.get("t1", "alice", "other") is None
    assert await store.get("t1", None) is None
    assert (await store.list("bob", "acme")).tasks == []
    assert [t.id for t in (await store.list("alice", "acme")).tasks] == ["t1"]


async def test_event_log_sequence_and_version() -> None:
    store = InMemoryTaskStore()
    task = _task("t1")
    await store.create(task, None, event=task)
    assert await store.append_event("t1", Message.agent("x")) == 2
    assert await store.update(task, 2, event=Message.agent("y")) == 3
    log = await store.events_after("t1", 0)
    assert [seq for seq, _ in log] == [1, 2, 3]
    assert [seq for seq, _ in await store.events_after("t1", 2)] == [3]
    assert await store.events_after("t1", 3) == []
    assert await store.events_after("unknown", 0) == []
    stored = await store.get("t1", None)
    assert stored is not None and (stored.version, stored.last_seq) == (3, 3)


async def test_list_sorts_newest_first_and_paginates() -> None:
    store = InMemoryTaskStore()
    for i in range(7):
        await store.create(_task(f"t{i}", minute=i % 4), None)
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = await store.list(None, page_size=3, page_token=token)
        assert page.total_size == 7
        seen += [t.id for t in page.tasks]
        pages += 1
        if not page.next_page_token:
            break
        token = page.next_page_token
    assert pages == 3
    # Newest status first, ties by id.
    assert seen == ["t3", "t2", "t6", "t1", "t5", "t0", "t4"]


async def test_list_filters() -> None:
    store = InMemoryTaskStore()
    await store.create(_task("a", minute=1, context_id="x"), None)
    await store.create(_task("b", TaskState.COMPLETED, minute=2, context_id="x"), None)
    await store.create(_task("c", minute=3, context_id="y"), None)
    assert [t.id for t in (await store.list(None, context_id="x")).tasks] == ["b", "a"]
    assert [t.id for t in (await store.list(None, status=TaskState.WORKING)).tasks] == ["c", "a"]
    after = T0 + timedelta(minutes=2)
    page = await store.list(None, status_timestamp_after=after)
    assert ([t.id for t in page.tasks], page.total_size) == (["c", "b"], 2)


@pytest.mark.parametrize("token", ["garbage!", "dGhpcyBpcyBub3QgYSB0b2tlbg", "djF8eHx5"])
async def test_bad_page_token_is_invalid_params(token: str) -> None:
    store = InMemoryTaskStore()
    with pytest.raises(InvalidParamsError, match="pageToken"):
        await store.list(None, page_token=token)


async def test_terminal_tasks_expire_after_ttl() -> None:
    clock = Clock()
    store = InMemoryTaskStore(terminal_ttl=10, clock=clock)
    await store.create(_task("done", TaskState.COMPLETED), None)
    await store.create(_task("active"), None)
    await store.create(_task("later"), None)
    clock.now = 5
    await store.update(_in(_task("later"), TaskState.FAILED), 1)
    await store.set_push_config("done", TaskPushNotificationConfig(url="http://hook", id="p"))
    clock.now = 9.9
    assert len(store) == 3
    clock.now = 10
    assert await store.get("done", None) is None
    assert await store.get_push_config("done", "p") is None
    assert await store.events_after("done", 0) == []
    assert len(store) == 2
    clock.now = 1000
    # Active tasks never expire.
    assert [t.id for t in (await store.list(None)).tasks] == ["active"]


async def test_bound_evicts_oldest_terminal_first_and_never_active() -> None:
    clock = Clock()
    store = InMemoryTaskStore(max_tasks=3, terminal_ttl=None, clock=clock)
    await store.create(_task("a"), None)
    await store.create(_task("b"), None)
    await store.create(_task("c"), None)
    with pytest.raises(TaskStoreFullError, match="all 3 stored tasks are still active"):
        await store.create(_task("d"), None)
    clock.now = 1
    await store.update(_in(_task("b"), TaskState.COMPLETED), 1)
    clock.now = 2
    await store.update(_in(_task("a"), TaskState.CANCELED), 1)
    await store.create(_task("d"), None)  # evicts b, which finished first
    assert await store.get("b", None) is None
    assert await store.get("a", None) is not None
    await store.create(_task("e"), None)  # evicts a
    assert {t.id for t in (await store.list(None)).tasks} == {"c", "d", "e"}
    with pytest.raises(TaskStoreFullError):
        await store.create(_task("f"), None)


def test_bad_bounds_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_tasks"):
        InMemoryTaskStore(max_tasks=0)
    with pytest.raises(ValueError, match="terminal_ttl"):
        InMemoryTaskStore(terminal_ttl=-1)


async def test_push_configs() -> None:
    store = InMemoryTaskStore()
    await store.create(_task("t1"), None)
    one = TaskPushNotificationConfig(url="http://one", id="1", task_id="t1")
    two = TaskPushNotificationConfig(url="http://two", id="2", task_id="t1")
    await store.set_push_config("t1", one)
    await store.set_push_config("t1", two)
    assert await store.list_push_configs("t1") == [one, two]
    assert await store.get_push_config("t1", "2") == two
    await store.delete_push_config("t1", "2")
    await store.delete_push_config("t1", "2")
    assert await store.list_push_configs("t1") == [one]
    with pytest.raises(TaskNotFoundError):
        await store.set_push_config("nope", one)
