"""The engine's seams: a pluggable executor, one page-token scheme, an injectable handler."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from a2a_models import (
    GetTaskRequest,
    InvalidParamsError,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_models.errors import InternalError, TaskNotFoundError
from a2a_models.protocol import METHODS
from a2a_models.server import (
    Agent,
    AgentEvent,
    AgentRun,
    AgentServer,
    InProcessExecutor,
    Operations,
    RequestContext,
    RequestHandler,
    TaskExecutor,
    TaskWriter,
    dispatch,
    error_for,
)
from a2a_models.server.paging import decode_cursor, encode_cursor, encode_page_token

from ._support import FuncAgent, make_card, send


async def echo(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.working()
    yield context.complete("done")


class CountingExecutor(InProcessExecutor):
    """An executor that records what the operations hand it (a worker pool would queue them)."""

    def __init__(self, agent: Agent, writer: TaskWriter) -> None:
        super().__init__(agent, writer)
        self.started: list[AgentRun] = []
        self.stopped: list[AgentRun] = []

    def start(self, run: AgentRun) -> None:
        self.started.append(run)
        super().start(run)

    def stop(self, run: AgentRun) -> None:
        self.stopped.append(run)
        super().stop(run)


async def test_the_operations_run_the_agent_through_the_executor() -> None:
    handler = RequestHandler(FuncAgent(echo), make_card(), executor=CountingExecutor)
    executor = handler.executor
    assert isinstance(executor, CountingExecutor) and isinstance(executor, TaskExecutor)
    task = await handler.on_send_message(send("hi"))
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert [r.task_id for r in executor.started] == [task.id]
    assert handler.writer is executor.writer
    assert handler.active_runs() == 0


async def test_cancel_stops_the_run_through_the_executor() -> None:
    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await release.wait()
        yield context.complete("late")

    handler = RequestHandler(FuncAgent(slow), make_card(), executor=CountingExecutor)
    task = await handler.on_send_message(send("hi", return_immediately=True))
    assert isinstance(task, Task)
    for _ in range(20):
        await asyncio.sleep(0)
    from a2a_models import CancelTaskRequest

    canceled = await handler.on_cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state is TaskState.CANCELED
    executor = handler.executor
    assert isinstance(executor, CountingExecutor)
    assert [r.task_id for r in executor.stopped] == [task.id]
    await asyncio.wait_for(handler.idle(), 2)
    await handler.aclose()


async def test_an_executor_that_never_runs_leaves_the_send_waiting_for_it() -> None:
    # The operations wait on the run's events only: they do not run the agent themselves.
    class Parked:
        def __init__(self, agent: Agent, writer: TaskWriter) -> None:
            self.runs: list[AgentRun] = []

        def start(self, run: AgentRun) -> None:
            self.runs.append(run)

        def running(self, task_id: str) -> AgentRun | None:
            return None

        def stop(self, run: AgentRun) -> None:
            pass

        def active_runs(self) -> int:
            return len(self.runs)

        async def idle(self) -> None:
            pass

        async def aclose(self) -> None:
            pass

    handler = RequestHandler(FuncAgent(echo), make_card(), executor=Parked)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(handler.on_send_message(send("hi")), 0.05)
    assert handler.active_runs() == 1


def test_one_page_token_scheme() -> None:
    token = encode_cursor(7, "cfg-1")
    assert decode_cursor(token) == (7, "cfg-1")
    task = Task.submitted(Message.user("x"), task_id="t1", context_id="c1")
    assert decode_cursor(encode_page_token(task))[1] == "t1"
    with pytest.raises(InvalidParamsError, match="ListTaskPushNotificationConfigs"):
        decode_cursor("bm90LW91cnM", issued_by="ListTaskPushNotificationConfigs")


async def test_push_config_pages_continue_after_the_last_config_even_if_one_is_deleted() -> None:
    handler = RequestHandler(FuncAgent(echo), make_card())
    task = await handler.on_send_message(send("hi"))
    assert isinstance(task, Task)
    for i in range(5):
        await handler.on_create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, id=f"c{i}", url=f"https://h/{i}")
        )
    first = await handler.on_list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id, page_size=2)
    )
    assert [c.id for c in first.configs] == ["c0", "c1"]
    # A config of the first page goes away: the next page still starts at c2.
    from a2a_models import DeleteTaskPushNotificationConfigRequest

    await handler.on_delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="c0")
    )
    second = await handler.on_list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(
            task_id=task.id, page_size=2, page_token=first.next_page_token
        )
    )
    assert [c.id for c in second.configs] == ["c2", "c3"]
    # A token of another listing is refused, not misread.
    other = encode_page_token(task)
    with pytest.raises(InvalidParamsError, match="ListTaskPushNotificationConfigs"):
        await handler.on_list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id, page_size=2, page_token=other)
        )
    with pytest.raises(InvalidParamsError):
        await handler.on_list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id, page_token="%%")
        )


async def test_agent_server_accepts_a_wrapping_handler() -> None:
    seen: list[str] = []

    class Traced(RequestHandler):
        async def on_get_task(self, request: GetTaskRequest, call: object = None) -> Task:  # type: ignore[override]
            seen.append(request.id)
            return await super().on_get_task(request, call)  # type: ignore[arg-type]

    handler = Traced(FuncAgent(echo), make_card())
    server = AgentServer(None, make_card(), handler=handler)
    assert server.handler is handler
    ops: Operations = server
    task = await dispatch(ops, METHODS["SendMessage"], send("hi"), _call())
    assert isinstance(task, Task)
    got = await dispatch(ops, METHODS["GetTask"], GetTaskRequest(id=task.id), _call())
    assert got.id == task.id and seen == [task.id]
    with pytest.raises(TypeError, match="store"):
        from a2a_models.server import InMemoryTaskStore

        AgentServer(None, make_card(), handler=handler, store=InMemoryTaskStore())
    with pytest.raises(TypeError, match="needs an agent"):
        AgentServer(None, make_card())
    await server.aclose()


def test_error_for_keeps_protocol_errors_and_hides_the_rest() -> None:
    err = TaskNotFoundError("nope")
    assert error_for(err, "GetTask") is err
    hidden = error_for(RuntimeError("secret detail"), "GetTask")
    assert isinstance(hidden, InternalError) and "secret" not in hidden.message


def _call() -> object:
    from a2a_models.server import CallContext

    return CallContext()
