"""GetTask, ListTasks, SubscribeToTask, owner isolation and concurrent writers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from a2a_models import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    InvalidParamsError,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from a2a_models.server import (
    AgentEvent,
    CallContext,
    InMemoryTaskStore,
    RequestContext,
    RequestHandler,
)

from ._support import FuncAgent, collect, make_card, send, settle

ALICE = CallContext(owner="alice")
BOB = CallContext(owner="bob")


async def finishes(context: RequestContext) -> AsyncIterator[AgentEvent]:
    """Completes, fails or asks depending on the message text."""
    text = context.message.text
    yield context.working("step")
    yield context.artifact(f"result of {text}")
    if text.startswith("fail"):
        yield context.fail("no")
    elif text.startswith("ask"):
        yield context.ask("more?")
    else:
        yield context.complete("ok")


async def _tasks(handler: RequestHandler, *texts: str, **send_kwargs: str) -> list[Task]:
    tasks = []
    for text in texts:
        task = await handler.on_send_message(send(text, **send_kwargs))  # type: ignore[arg-type]
        assert isinstance(task, Task)
        tasks.append(task)
    return tasks


async def test_get_task_honours_history_length() -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card())
    (task,) = await _tasks(handler, "hello")
    assert [m.text for m in task.history] == ["hello", "step", "ok"]
    for length, expected in ((None, 3), (0, 0), (1, 1), (2, 2), (50, 3)):
        got = await handler.on_get_task(GetTaskRequest(id=task.id, history_length=length))
        assert len(got.history) == expected
    got = await handler.on_get_task(GetTaskRequest(id=task.id, history_length=1))
    assert got.history[0].text == "ok"
    with pytest.raises(TaskNotFoundError):
        await handler.on_get_task(GetTaskRequest(id="unknown"))


async def test_list_tasks_paginates_newest_first() -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card())
    tasks = await _tasks(handler, *(f"t{i}" for i in range(5)))
    seen: list[str] = []
    token = ""
    while True:
        page = await handler.on_list_tasks(ListTasksRequest(page_size=2, page_token=token))
        assert page.page_size == 2 and page.total_size == 5
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if token == "":
            break
    assert sorted(seen) == sorted(t.id for t in tasks) and len(seen) == 5
    stamps = [next(t for t in tasks if t.id == i).status.timestamp for i in seen]
    assert stamps == sorted(stamps, reverse=True)  # type: ignore[type-var]
    default = await handler.on_list_tasks(ListTasksRequest())
    assert default.page_size == 50 and default.next_page_token == "" and len(default.tasks) == 5


async def test_list_tasks_filters_and_artifacts() -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card())
    await _tasks(handler, "a", "fail b", context_id="ctx-1")
    await asyncio.sleep(0.005)  # status timestamps have millisecond precision
    (asked,) = await _tasks(handler, "ask c")
    by_context = await handler.on_list_tasks(ListTasksRequest(context_id="ctx-1"))
    assert by_context.total_size == 2
    failed = await handler.on_list_tasks(ListTasksRequest(status=TaskState.FAILED))
    assert [t.status.state for t in failed.tasks] == [TaskState.FAILED]
    assert await handler.on_list_tasks(ListTasksRequest(status=TaskState.UNSPECIFIED)) == (
        await handler.on_list_tasks(ListTasksRequest())
    )
    plain = await handler.on_list_tasks(ListTasksRequest())
    assert all(t.artifacts == () for t in plain.tasks)
    full = await handler.on_list_tasks(ListTasksRequest(include_artifacts=True, history_length=0))
    assert all(len(t.artifacts) == 1 and t.history == () for t in full.tasks)
    assert asked.status.timestamp is not None
    recent = await handler.on_list_tasks(
        ListTasksRequest(status_timestamp_after=asked.status.timestamp)
    )
    assert [t.id for t in recent.tasks] == [asked.id]
    later = asked.status.timestamp + timedelta(seconds=1)
    assert (await handler.on_list_tasks(ListTasksRequest(status_timestamp_after=later))).tasks == ()


@pytest.mark.parametrize("size", [0, 101, 1000])
async def test_list_tasks_page_size_bounds(size: int) -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card())
    with pytest.raises(InvalidParamsError, match="pageSize"):
        await handler.on_list_tasks(ListTasksRequest(page_size=size))


async def test_list_tasks_bad_page_token() -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card())
    with pytest.raises(InvalidParamsError, match="pageToken"):
        await handler.on_list_tasks(ListTasksRequest(page_token="not-a-token"))


async def test_owner_isolation() -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card())
    (task,) = await _tasks(handler, "ask secret")  # anonymous caller
    mine = await handler.on_send_message(send("ask mine"), ALICE)
    assert isinstance(mine, Task)
    for other in (BOB, CallContext()):
        with pytest.raises(TaskNotFoundError):
            await handler.on_get_task(GetTaskRequest(id=mine.id), other)
        with pytest.raises(TaskNotFoundError):
            await handler.on_cancel_task(CancelTaskRequest(id=mine.id), other)
        with pytest.raises(TaskNotFoundError):
            await handler.on_subscribe_to_task(SubscribeToTaskRequest(id=mine.id), other)
        with pytest.raises(TaskNotFoundError):
            await handler.on_send_message(send("hi", task_id=mine.id), other)
        with pytest.raises(TaskNotFoundError):
            await handler.on_create_task_push_notification_config(
                TaskPushNotificationConfig(url="http://x", task_id=mine.id), other
            )
        with pytest.raises(TaskNotFoundError):
            await handler.on_get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=mine.id, id="p"), other
            )
        with pytest.raises(TaskNotFoundError):
            await handler.on_list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=mine.id), other
            )
        with pytest.raises(TaskNotFoundError):
            await handler.on_delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=mine.id, id="p"), other
            )
    assert [t.id for t in (await handler.on_list_tasks(ListTasksRequest(), ALICE)).tasks] == [
        mine.id
    ]
    assert (await handler.on_list_tasks(ListTasksRequest(), BOB)).tasks == ()
    assert [t.id for t in (await handler.on_list_tasks(ListTasksRequest())).tasks] == [task.id]
    assert (await handler.on_get_task(GetTaskRequest(id=mine.id), ALICE)).id == mine.id


async def test_tenants_are_isolated_and_must_agree() -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card())
    acme = CallContext(owner="alice", tenant="acme")
    task = await handler.on_send_message(send("x"), acme)
    assert isinstance(task, Task)
    with pytest.raises(TaskNotFoundError):
        await handler.on_get_task(GetTaskRequest(id=task.id), CallContext(owner="alice"))
    assert (await handler.on_get_task(GetTaskRequest(id=task.id, tenant="acme"), ALICE)).id
    with pytest.raises(InvalidParamsError, match="tenant"):
        await handler.on_get_task(GetTaskRequest(id=task.id, tenant="other"), acme)


async def test_subscribe_gets_the_task_then_live_events() -> None:
    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await release.wait()
        yield context.artifact("out")
        yield context.complete()

    handler = RequestHandler(FuncAgent(slow), make_card())
    task = await handler.on_send_message(send(return_immediately=True))
    assert isinstance(task, Task)
    await settle()
    stream = await handler.on_subscribe_to_task(SubscribeToTaskRequest(id=task.id))
    first = await anext(stream)
    assert isinstance(first[1], Task) and first[1].status.state is TaskState.WORKING
    release.set()
    rest = await collect(stream)
    assert [seq for seq, _ in rest] == [first[0] + 1, first[0] + 2]
    assert isinstance(rest[-1][1], TaskStatusUpdateEvent)
    with pytest.raises(UnsupportedOperationError, match="terminal"):
        await handler.on_subscribe_to_task(SubscribeToTaskRequest(id=task.id))
    with pytest.raises(TaskNotFoundError):
        await handler.on_subscribe_to_task(SubscribeToTaskRequest(id="nope"))


async def test_subscribe_stays_open_through_input_required() -> None:
    async def two_turns(context: RequestContext) -> AsyncIterator[AgentEvent]:
        if context.task is None:
            yield context.ask("name?")
        else:
            yield context.complete(f"hi {context.message.text}")

    handler = RequestHandler(FuncAgent(two_turns), make_card())
    task = await handler.on_send_message(send())
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    stream = await handler.on_subscribe_to_task(SubscribeToTaskRequest(id=task.id))
    reader = asyncio.create_task(collect(stream))
    await settle()
    await handler.on_send_message(send("Ada", task_id=task.id))
    items = await reader
    states = [e.status.state for _, e in items if isinstance(e, TaskStatusUpdateEvent)]
    assert states == [TaskState.WORKING, TaskState.COMPLETED]


async def test_subscribe_requires_streaming() -> None:
    handler = RequestHandler(FuncAgent(finishes), make_card(streaming=False))
    with pytest.raises(UnsupportedOperationError):
        await handler.on_subscribe_to_task(SubscribeToTaskRequest(id="x"))


async def test_resume_after_seq_while_events_keep_flowing() -> None:
    total = 40

    async def chatty(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        for i in range(total):
            yield context.artifact(f"chunk {i}", append=i > 0)
            await asyncio.sleep(0)
        yield context.complete()

    handler = RequestHandler(FuncAgent(chatty), make_card())
    stream = await handler.on_send_streaming_message(send())
    seen: list[tuple[int, StreamResponse]] = [await anext(stream) for _ in range(5)]
    await stream.aclose()  # the connection drops while the agent keeps going
    task_id = seen[0][1].id  # type: ignore[union-attr]
    request = SubscribeToTaskRequest(id=task_id)
    while True:
        resumed = await handler.on_subscribe_to_task(request, after_seq=seen[-1][0])
        got = [await anext(resumed) for _ in range(3)]
        seen += got
        await resumed.aclose()
        if len(seen) > 20:
            break
    seen += await collect(await handler.on_subscribe_to_task(request, after_seq=seen[-1][0]))
    log = await handler.store.events_after(task_id, 0)
    assert seen == log  # every event exactly once, in order
    assert [seq for seq, _ in seen] == list(range(1, total + 4))
    with pytest.raises(UnsupportedOperationError):
        await handler.on_subscribe_to_task(request, after_seq=len(log))
    with pytest.raises(InvalidParamsError):
        await handler.on_subscribe_to_task(request, after_seq=len(log) + 1)


class _Interfering(InMemoryTaskStore):
    """Another writer (a second replica, say) sneaks in before some of our writes."""

    def __init__(self) -> None:
        super().__init__()
        self.interfere = 0
        self.conflicts = 0

    async def update(
        self,
        task: Task,
        expected_version: int,
        *,
        event: StreamResponse | None = None,
        history_offset: int = 0,
    ) -> int:
        if self.interfere:
            self.interfere -= 1
            stored = await self.get(task.id, None)
            assert stored is not None
            note = Message.agent(f"note {self.interfere}", task_id=task.id)
            await super().update(stored.task.add_message(note), stored.version)
        try:
            return await super().update(
                task, expected_version, event=event, history_offset=history_offset
            )
        except Exception:
            self.conflicts += 1
            raise


async def test_concurrent_writers_hit_the_version_check_and_retry() -> None:
    store = _Interfering()
    release = asyncio.Event()

    async def steps(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working("one")
        await release.wait()
        yield context.working("two")
        yield context.complete("three")

    handler = RequestHandler(FuncAgent(steps), make_card(), store=store)
    task = await handler.on_send_message(send(return_immediately=True))
    assert isinstance(task, Task)
    store.interfere = 3
    release.set()
    await handler.idle()
    assert store.conflicts == 3
    done = await handler.on_get_task(GetTaskRequest(id=task.id))
    assert done.status.state is TaskState.COMPLETED
    texts = [m.text for m in done.history]
    # Our events were re-applied on top of the other writes: nothing is lost.
    assert [t for t in texts if not t.startswith("note")] == ["hello", "one", "two", "three"]
    assert sorted(t for t in texts if t.startswith("note")) == ["note 0", "note 1", "note 2"]
    log = await store.events_after(task.id, 0)
    assert [seq for seq, _ in log] == [1, 2, 3, 4]


async def test_cancel_racing_the_agent_on_another_replica() -> None:
    # Two handlers share one store: the cancel lands on the replica that
    # does not run the agent. The running replica's next write conflicts,
    # re-reads, finds the task canceled and stops.
    store = InMemoryTaskStore()
    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await release.wait()
        yield context.complete()

    runner = RequestHandler(FuncAgent(slow), make_card(), store=store)
    other = RequestHandler(FuncAgent(slow), make_card(), store=store)
    task = await runner.on_send_message(send(return_immediately=True))
    assert isinstance(task, Task)
    canceled = await other.on_cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state is TaskState.CANCELED
    release.set()
    await runner.idle()
    assert (await runner.on_get_task(GetTaskRequest(id=task.id))).status.state is (
        TaskState.CANCELED
    )
