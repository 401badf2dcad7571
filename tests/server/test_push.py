"""Push notifications, push-config operations, the extended card, required extensions."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest

from a2a_models import (
    AgentExtension,
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    InvalidParamsError,
    ListTaskPushNotificationConfigsRequest,
    PushNotificationNotSupportedError,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from a2a_models.server import (
    AgentEvent,
    CallContext,
    PushTarget,
    RequestContext,
    RequestHandler,
)
from a2a_models.stores import SQLiteTaskStore

from ._support import FuncAgent, RecordingSender, make_card, send

HOOK = TaskPushNotificationConfig(url="https://client.example/hook", token="tok")


async def work(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.working()
    yield context.artifact("out")
    yield context.complete()


async def asks(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.ask("?")


def _states(sent: list[tuple[TaskPushNotificationConfig, StreamResponse]]) -> list[TaskState]:
    states = []
    for _, item in sent:
        if isinstance(item, Task | TaskStatusUpdateEvent):
            states.append(item.status.state)
    return states


async def test_push_sender_is_called_on_every_state_change() -> None:
    sender = RecordingSender()
    handler = RequestHandler(FuncAgent(work), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK))
    assert isinstance(task, Task)
    await handler.idle()
    assert _states(sender.sent) == [TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED]
    # The artifact update too (§4.3.3: what a stream carries), in its place.
    assert [type(item).__name__ for _, item in sender.sent] == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    config = sender.sent[0][0]
    assert (config.url, config.token, config.task_id) == (HOOK.url, "tok", task.id)
    assert config.id  # assigned by the engine


async def test_a_config_set_through_0_3_is_sent_the_task_without_its_history() -> None:
    # A 0.3 webhook parses a Task (0.3 §9.5): a config set through 0.3 got the 1.0
    # status updates every other one gets. Each of its notifications is the task as
    # that change left it, artifacts included, history left out (it grows with the
    # conversation). (Both dialects on one task: tests/http/test_push_dialects.py.)
    sender = RecordingSender()
    handler = RequestHandler(FuncAgent(work), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK), CallContext(version="0.3"))
    assert isinstance(task, Task)
    await handler.idle()
    by_url: dict[str, list[StreamResponse]] = {}
    for config, item in sender.sent:
        by_url.setdefault(config.url, []).append(item)
    v03 = by_url[HOOK.url]
    assert all(isinstance(item, Task) and item.history == () for item in v03), v03
    assert _states([(HOOK, item) for item in v03])[-1] is TaskState.COMPLETED
    last = v03[-1]
    assert isinstance(last, Task) and [a.parts[0].text for a in last.artifacts] == ["out"]
    assert [t.dialect for t in await handler.store.list_push_targets(task.id)] == ["0.3"]
    await handler.aclose()


async def test_failing_push_sender_does_not_break_the_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sender = RecordingSender(fail=True)
    handler = RequestHandler(FuncAgent(work), make_card(), push_sender=sender)
    with caplog.at_level(logging.WARNING, logger="a2a_models.server"):
        task = await handler.on_send_message(send(push=HOOK))
        await handler.idle()
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert len(sender.sent) == 4
    assert sum("push notification" in r.getMessage() for r in caplog.records) == 4


async def test_push_configs_added_later_and_deleted_ones() -> None:
    sender = RecordingSender()
    handler = RequestHandler(FuncAgent(asks), make_card(), push_sender=sender)
    task = await handler.on_send_message(send())
    assert isinstance(task, Task)
    created = await handler.on_create_task_push_notification_config(
        TaskPushNotificationConfig(url="https://a", task_id=task.id)
    )
    other = await handler.on_create_task_push_notification_config(
        TaskPushNotificationConfig(url="https://b", task_id=task.id, id="mine")
    )
    assert created.id and other.id == "mine"
    await handler.on_delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
    )
    await handler.on_send_message(send("answer", task_id=task.id))
    await handler.idle()
    assert {c.url for c, _ in sender.sent} == {"https://b"}


async def test_push_config_operations() -> None:
    handler = RequestHandler(FuncAgent(asks), make_card())
    task = await handler.on_send_message(send())
    assert isinstance(task, Task)
    configs = [
        await handler.on_create_task_push_notification_config(
            TaskPushNotificationConfig(url=f"https://h/{i}", task_id=task.id)
        )
        for i in range(3)
    ]
    got = await handler.on_get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id, id=configs[1].id)
    )
    assert got == configs[1]
    first = await handler.on_get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id)
    )
    assert first == configs[0]
    listed = await handler.on_list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    assert listed.configs == tuple(configs)
    page = await handler.on_list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id, page_size=2)
    )
    assert page.configs == tuple(configs[:2]) and page.next_page_token
    rest = await handler.on_list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(
            task_id=task.id, page_size=2, page_token=page.next_page_token
        )
    )
    assert rest.configs == (configs[2],) and rest.next_page_token == ""
    with pytest.raises(InvalidParamsError):
        await handler.on_list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id, page_token="%%")
        )
    delete = DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=configs[0].id or "")
    await handler.on_delete_task_push_notification_config(delete)
    await handler.on_delete_task_push_notification_config(delete)  # idempotent
    with pytest.raises(TaskNotFoundError):
        await handler.on_get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id=configs[0].id)
        )
    with pytest.raises(TaskNotFoundError):
        await handler.on_create_task_push_notification_config(
            TaskPushNotificationConfig(url="https://x", task_id="unknown")
        )
    with pytest.raises(InvalidParamsError, match="taskId"):
        await handler.on_create_task_push_notification_config(
            TaskPushNotificationConfig(url="https://x")
        )


@pytest.mark.parametrize("sender", [None, RecordingSender()], ids=["no-sender", "sender"])
async def test_a_0_3_config_with_several_schemes_is_refused_before_anything_is_stored(
    tmp_path: Path, sender: RecordingSender | None
) -> None:
    # 0.3 takes a list of schemes, 1.0 and the stores one: the SQL store's write failed
    # as -32603 "result cannot be expressed"; a SendMessage carrying it had created its
    # task first, which stayed submitted until the lease check failed it.
    store = SQLiteTaskStore(tmp_path / "schemes.db")
    handler = RequestHandler(FuncAgent(asks), make_card(), store=store, push_sender=sender)
    auth = AuthenticationInfo(scheme="Basic", other_schemes=("Bearer",), credentials="c")
    hook = TaskPushNotificationConfig(url="https://client.example/hook", authentication=auth)
    with pytest.raises(InvalidParamsError, match=r"one scheme is supported.*'Basic', 'Bearer'"):
        await handler.on_send_message(send(push=hook))
    assert (await store.list(None)).total_size == 0
    task = await handler.on_send_message(send())
    assert isinstance(task, Task)
    with pytest.raises(InvalidParamsError, match=r"authentication\.schemes") as refused:
        await handler.on_create_task_push_notification_config(attrs.evolve(hook, task_id=task.id))
    [violation] = refused.value.data[0]["fieldViolations"]  # a google.rpc.BadRequest
    assert violation["field"] == "authentication.schemes"
    assert await store.list_push_configs(task.id) == []
    one = attrs.evolve(hook, task_id=task.id, authentication=AuthenticationInfo(scheme="Basic"))
    assert (await handler.on_create_task_push_notification_config(one)).authentication == (
        one.authentication
    )
    await handler.aclose()
    await store.aclose()


async def test_push_operations_need_the_capability() -> None:
    handler = RequestHandler(FuncAgent(asks), make_card(push=False))
    calls = [
        handler.on_create_task_push_notification_config(
            TaskPushNotificationConfig(url="https://x", task_id="t")
        ),
        handler.on_get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id="t", id="p")
        ),
        handler.on_list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id="t")
        ),
        handler.on_delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id="t", id="p")
        ),
        handler.on_send_message(send(push=HOOK)),
    ]
    for call in calls:
        with pytest.raises(PushNotificationNotSupportedError):
            await call


async def test_extended_agent_card() -> None:
    agent = FuncAgent(asks)
    request = GetExtendedAgentCardRequest()
    with pytest.raises(UnsupportedOperationError):
        await RequestHandler(agent, make_card()).on_get_extended_agent_card(request)
    with pytest.raises(ExtendedAgentCardNotConfiguredError):
        await RequestHandler(agent, make_card(extended=True)).on_get_extended_agent_card(request)
    extended = make_card(extended=True)
    handler = RequestHandler(agent, make_card(extended=True), extended_card=extended)
    assert await handler.on_get_extended_agent_card(request) is extended


async def test_required_extensions_must_be_requested() -> None:
    uri = "https://example.com/ext/v1"
    card = make_card(extensions=(AgentExtension(uri=uri, required=True),))
    agent = FuncAgent(work)
    handler = RequestHandler(agent, card)
    with pytest.raises(ExtensionSupportRequiredError, match=uri):
        await handler.on_send_message(send())
    task = await handler.on_send_message(send(), CallContext(extensions={uri}))
    assert isinstance(task, Task)
    assert agent.contexts[-1].requested_extensions == {uri}


async def test_closing_delivers_what_is_queued_within_the_drain_timeout(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stop fails the tasks it cuts short; the notifications still queued (that
    # failed status among them) were dropped at once.
    import asyncio

    from a2a_models.server import _push

    class Slow(RecordingSender):
        delay = 0.05

        async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
            await asyncio.sleep(self.delay)
            await super().send(config, item)

    sender = Slow()
    handler = RequestHandler(FuncAgent(work), make_card(), push_sender=sender)
    await handler.on_send_message(send(push=HOOK))
    await handler.aclose()  # before any of the four went out
    assert _states(sender.sent) == [TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED]

    monkeypatch.setattr(_push.PushDispatcher, "drain_timeout", 0.2)
    sender = Slow()
    sender.delay = 3600  # a webhook that never answers: the stop does not wait for it
    handler = RequestHandler(FuncAgent(work), make_card(), push_sender=sender)
    await handler.on_send_message(send(push=HOOK))
    async with asyncio.timeout(5):
        await handler.aclose()
    assert sender.sent == []
    assert "stopping: 4 push notification(s) not delivered within 0.2 s dropped" in caplog.text


async def test_a_webhook_that_does_not_answer_holds_up_no_other() -> None:
    # A task's notifications went to its configs one after another: a dead webhook
    # held every later notification of the task's other webhooks for its retries.
    import asyncio

    dead = TaskPushNotificationConfig(url="https://dead.example/hook")

    class OneDead(RecordingSender):
        async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
            if config.url == dead.url:
                await asyncio.sleep(3600)
            await super().send(config, item)

    sender = OneDead()
    handler = RequestHandler(FuncAgent(asks), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=dead))
    assert isinstance(task, Task)
    await handler.on_create_task_push_notification_config(
        TaskPushNotificationConfig(url=HOOK.url, task_id=task.id)
    )
    follow = send("more", task_id=task.id, context_id=task.context_id)
    await handler.on_send_message(follow)
    async with asyncio.timeout(5):  # the follow-up's notifications reach the live webhook
        while _states(sender.sent)[-2:] != [TaskState.WORKING, TaskState.INPUT_REQUIRED]:
            await asyncio.sleep(0.01)
    assert {config.url for config, _ in sender.sent} == {HOOK.url}
    handler._push.drain_timeout = 0  # type: ignore[union-attr]
    await handler.aclose()


class Held(RecordingSender):
    """Records each notification once ``release`` is set (until then the first waits)."""

    def __init__(self, *, max_queued: int | None = 100) -> None:
        super().__init__()
        self.max_queued_per_webhook = max_queued
        self.release = asyncio.Event()

    async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
        await self.release.wait()
        await super().send(config, item)


def chatty(updates: int) -> FuncAgent:
    async def run(context: RequestContext) -> AsyncIterator[AgentEvent]:
        for i in range(updates):
            yield context.working(f"step {i}")
        yield context.complete()

    return FuncAgent(run)


async def test_a_webhook_queue_keeps_the_newest_notifications_up_to_its_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A webhook that is slow or down held every notification of a chatty task in
    # memory, each waiting its turn: 20,000 status updates to a dead webhook were
    # 20,000 queued (+20 MiB in a real serve) and hours of delivery behind.
    sender = Held(max_queued=5)
    handler = RequestHandler(chatty(50), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK))
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    dispatcher = handler._push
    assert dispatcher is not None
    await asyncio.sleep(0)  # every notification routed to the webhook's queue
    while dispatcher._tasks.workers:
        await asyncio.sleep(0.01)
    assert [len(queue) for queue in dispatcher._hooks.queues.values()] == [5]
    sender.release.set()
    await dispatcher.idle()
    states = _states(sender.sent)
    # The one on its way when the queue filled, then the newest five: the final status last.
    # The newest five (the final status last), and the one that may have been on its
    # way when the queue filled: of submitted, 50 working and completed.
    assert 5 <= len(states) <= 6 and states[-1] is TaskState.COMPLETED
    texts = [item.status.message.text for _, item in sender.sent[-5:-1]]  # type: ignore[union-attr]
    assert texts == [f"step {i}" for i in range(46, 50)]
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert dropped == [
        f"{52 - len(states)} push notification(s) of task {task.id} for config "
        f"{sender.sent[0][0].id} dropped: more than 5 were waiting for it, the oldest went first"
    ]
    assert dispatcher._hooks.workers == {} and dispatcher._hooks.queues == {}
    await handler.aclose()


class DownHeld(Held):
    """A :class:`Held` sender whose webhooks are all down."""

    def is_down(self, url: str) -> bool:
        return True


async def test_a_webhook_that_is_down_gets_only_the_newest_waiting_notification(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Each notification to a webhook that is down and never answers cost a whole
    # timeout: the 100 status updates waiting for it were 100 tries (1,000 s at the
    # default 10 s) before the task's final status was tried.
    sender = DownHeld()
    handler = RequestHandler(chatty(10), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK))
    assert isinstance(task, Task)
    dispatcher = handler._push
    assert dispatcher is not None
    while dispatcher._tasks.workers:
        await asyncio.sleep(0.01)
    sender.release.set()
    await dispatcher.idle()
    states = _states(sender.sent)
    # The one that may have been on its way when the others came, then the newest.
    assert len(states) <= 2 and states[-1] is TaskState.COMPLETED
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert skipped == [
        f"{12 - len(states)} push notification(s) of task {task.id} for config "
        f"{sender.sent[0][0].id} skipped: its webhook is down, the newest is tried"
    ]
    assert dispatcher._skipped == {}
    await handler.aclose()


async def test_a_config_deleted_while_its_notifications_wait_gets_none_of_them() -> None:
    # Configs were read as a notification was routed: the ones already queued for a
    # webhook went out after its config was deleted (every one of them).
    sender = Held()
    handler = RequestHandler(chatty(10), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK))
    assert isinstance(task, Task)
    dispatcher = handler._push
    assert dispatcher is not None
    while dispatcher._tasks.workers:
        await asyncio.sleep(0.01)
    configs = await handler.store.list_push_configs(task.id)
    assert [len(queue) for queue in dispatcher._hooks.queues.values()] == [11]
    await handler.on_delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=configs[0].id or "")
    )
    sender.release.set()
    await dispatcher.idle()
    assert len(sender.sent) == 1  # the one on its way when it was deleted
    await handler.aclose()


async def test_many_tasks_with_a_dead_webhook_leave_no_background_task() -> None:
    sender = RecordingSender(fail=True)
    handler = RequestHandler(chatty(3), make_card(), push_sender=sender)
    for _ in range(50):
        await handler.on_send_message(send(push=HOOK))
    dispatcher = handler._push
    assert dispatcher is not None
    await dispatcher.idle()
    assert len(sender.sent) == 50 * 5
    assert dispatcher._workers() == [] and dispatcher._hooks.queues == {}
    await handler.aclose()


async def test_a_burst_of_status_updates_reads_the_push_configs_once() -> None:
    # Every status update read the task's push configs (one store read each, with or
    # without a config: 3,002 reads for a task of 3,000 updates on SQLite, +19% CPU).
    sender = RecordingSender()
    handler = RequestHandler(chatty(50), make_card(), push_sender=sender)
    reads = 0
    list_push_targets = handler.store.list_push_targets

    async def counted(task_id: str) -> list[PushTarget]:
        nonlocal reads
        reads += 1
        return list(await list_push_targets(task_id))

    handler.store.list_push_targets = counted  # type: ignore[method-assign]
    await handler.on_send_message(send(push=HOOK))
    await handler.idle()
    assert len(sender.sent) == 52 and _states(sender.sent)[-1] is TaskState.COMPLETED
    assert reads < 10, reads
    await handler.aclose()


async def test_a_refused_read_of_the_push_configs_is_tried_again() -> None:
    # A store that refused the read (PostgreSQL at max_connections: "sorry, too many
    # clients already", seen with 8 front ends + 8 workers) lost the notification:
    # "reading push configs of task ... failed", and nothing was sent.
    sender = RecordingSender()
    handler = RequestHandler(chatty(2), make_card(), push_sender=sender)
    refused = 0
    list_push_targets = handler.store.list_push_targets

    async def refusing(task_id: str) -> list[PushTarget]:
        nonlocal refused
        if refused < 2:
            refused += 1
            raise ConnectionError("sorry, too many clients already")
        return list(await list_push_targets(task_id))

    handler.store.list_push_targets = refusing  # type: ignore[method-assign]
    await handler.on_send_message(send(push=HOOK))
    await handler.idle()
    assert refused == 2
    assert len(sender.sent) == 4 and _states(sender.sent)[-1] is TaskState.COMPLETED
    await handler.aclose()


class HeldTurn(RecordingSender):
    """A rate limit the test drives: the first delivery's turn waits for ``release``;
    every turn counts as a pause (the limit was reached)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.waiting = asyncio.Event()

    @contextlib.asynccontextmanager
    async def turn(self, task_id: str) -> AsyncIterator[bool]:
        self.waiting.set()
        await self.release.wait()
        yield True


class Unsent:
    """An engine observer counting the notifications not sent on their own."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def push_unsent(self, outcome: str, count: int) -> None:
        self.counts[outcome] = self.counts.get(outcome, 0) + count


async def test_a_config_deleted_while_its_notification_waits_for_its_turn_gets_nothing() -> None:
    # The config was read again before the sender's rate-limit pause, not after it: one
    # deleted during the pause still got the notification that waited.
    sender = HeldTurn()
    handler = RequestHandler(chatty(0), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK))
    assert isinstance(task, Task)
    async with asyncio.timeout(5):  # the first notification waits for its turn
        await sender.waiting.wait()
    configs = await handler.store.list_push_configs(task.id)
    await handler.on_delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=configs[0].id or "")
    )
    sender.release.set()
    await handler.idle()
    assert sender.sent == []
    await handler.aclose()


async def test_behind_the_rate_limit_the_latest_status_goes_at_the_next_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A webhook behind its task's rate limit got every status update waiting, one turn
    # each, before the final one (30 updates: 6 s at 5 a second).
    from a2a_models.server import _push

    observer = Unsent()
    monkeypatch.setattr(_push, "engine_observer", lambda: observer)
    sender = HeldTurn()
    handler = RequestHandler(chatty(30), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK))
    assert isinstance(task, Task)
    sender.release.set()
    await handler.idle()
    # The task as created, then (its turn come) the latest status: the 30 updates
    # waiting behind it said nothing the final one does not.
    assert _states(sender.sent) == [TaskState.SUBMITTED, TaskState.COMPLETED]
    assert observer.counts == {"coalesced": 30}
    await handler.aclose()


async def test_a_streamed_artifact_reaches_a_1_0_webhook_in_order_and_joined_while_behind() -> None:
    # 1.0 webhooks got status updates only (§4.3.3: the event types of a stream); an
    # artifact streamed in 200 chunks must not be 200 requests to a webhook behind.
    async def stream(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        for i in range(200):
            yield context.artifact(
                f"c{i} ", artifact_id="a", name="out", append=i > 0, last_chunk=i == 199
            )
        yield context.complete()

    sender = HeldTurn()
    handler = RequestHandler(FuncAgent(stream), make_card(), push_sender=sender)
    task = await handler.on_send_message(send(push=HOOK))
    assert isinstance(task, Task)
    sender.release.set()
    await handler.idle()
    kinds = [type(item).__name__ for _, item in sender.sent]
    assert kinds == ["Task", "TaskArtifactUpdateEvent", "TaskStatusUpdateEvent"]
    artifact = sender.sent[1][1]
    assert isinstance(artifact, TaskArtifactUpdateEvent)
    assert not artifact.append and artifact.last_chunk
    assert [part.text for part in artifact.artifact.parts] == [
        "".join(f"c{i} " for i in range(200))
    ]  # type: ignore[union-attr]
    assert task.artifacts[0] == artifact.artifact  # what the task holds, in one request
    await handler.aclose()
