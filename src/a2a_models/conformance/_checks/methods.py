"""Operation checks, run over JSON-RPC and HTTP+JSON alike (spec §3.1-§3.4, §3.3.4)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from ... import codec
from ... import models as m
from ..._state import TaskState
from ...errors import (
    DecodeError,
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    JSONRPCError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from .._agent import ARTIFACT_TEXT, REPLY_TEXT
from .._context import CheckContext
from .._registry import STREAM_CONTRACT, Level, Requirement, check
from .._replies import CallResult
from .._stream import StreamSession

MUST, SHOULD = Level.MUST, Level.SHOULD
CONTRACT = (Requirement.CONTRACT,)


def _unknown() -> str:
    return f"a2a-conformance-unknown-{uuid.uuid4()}"


def _config(ctx: CheckContext, task_id: str) -> m.TaskPushNotificationConfig:
    """The config a client creates: over 0.3 with its own id ("A unique ID for the push
    notification configuration, set by the client", 0.3 §6.8); 1.0's agent assigns it."""
    return m.TaskPushNotificationConfig(
        task_id=task_id,
        id=f"conformance-{uuid.uuid4().hex[:12]}" if ctx.version == "0.3" else None,
        url=ctx.webhook_url,
        token="conformance-token",
    )


def _text_of(parts: Any) -> str:
    return "".join(p.text for p in parts if isinstance(p, m.TextPart))


# ---------------------------------------------------------------- SendMessage


@check(
    "send.returns-task-or-message",
    "§3.1.1",
    MUST,
    "SendMessage returns a Task or a Message in the version's shape",
)
async def send_returns(ctx: CheckContext) -> str | None:
    value = ctx.decode(await ctx.send("hello"))
    ctx.expect(isinstance(value, m.Task | m.Message), f"got a {type(value).__name__}")
    return f"a {type(value).__name__}"


@check(
    "send.context-id",
    "§3.4.1",
    MUST,
    "The response to a message without contextId carries a generated contextId",
)
async def send_context_id(ctx: CheckContext) -> str | None:
    value = ctx.decode(await ctx.send("hello"))
    cid = value.context_id if isinstance(value, m.Task | m.Message) else None
    if not cid and ctx.version == "0.3" and isinstance(value, m.Message):
        # 0.3's Message.contextId is optional (its Task's is required, server-generated).
        ctx.advise(
            "advisory: the Message reply has no contextId, where 1.0 §3.4.1 generates one; "
            "0.3 makes a Message's contextId optional (§6.4: 'The context identifier for this "
            "message, used to group related interactions.', not in Message's required list)"
        )
        return None
    ctx.expect(bool(cid), f"the {type(value).__name__} has no contextId")
    return None


@check(
    "send.blocking",
    "§3.2.2",
    MUST,
    "Blocking SendMessage waits for a terminal or interrupted state",
    requires=CONTRACT,
)
async def send_blocking(ctx: CheckContext) -> str | None:
    task, _ = await ctx.send_for_task("complete")
    ctx.expect(
        task.status.state is TaskState.COMPLETED,
        f"'complete' (blocking) returned state {task.status.state.name}, expected COMPLETED",
    )
    texts = [_text_of(a.parts) for a in task.artifacts]
    ctx.expect(
        ARTIFACT_TEXT in texts,
        f"the completed task must include its artifacts (§3.2.2); artifacts: {texts}",
    )
    task2, _ = await ctx.send_for_task("input")
    ctx.expect(
        task2.status.state is TaskState.INPUT_REQUIRED,
        f"'input' (blocking) returned state {task2.status.state.name}, expected INPUT_REQUIRED",
    )
    await ctx.cancel_quietly(task2.id)
    return None


@check(
    "send.non-blocking",
    "§3.2.2",
    MUST,
    "returnImmediately returns at once with an in-progress task",
    requires=CONTRACT,
)
async def send_non_blocking(ctx: CheckContext) -> str | None:
    started = time.monotonic()
    res = await ctx.send("slow", return_immediately=True)
    elapsed = time.monotonic() - started
    value = ctx.decode(res)
    if isinstance(value, m.Task):
        await ctx.cancel_quietly(value.id)
    ctx.expect(isinstance(value, m.Task), f"expected a Task, got a {type(value).__name__}")
    assert isinstance(value, m.Task)
    ctx.expect(not value.status.state.is_terminal, f"the task is already {value.status.state.name}")
    ctx.expect(elapsed < 5.0, f"the non-blocking call took {elapsed:.1f}s")
    return None


@check(
    "send.message-reply",
    "§3.1.1",
    MUST,
    "A direct Message reply comes back as a Message",
    requires=CONTRACT,
)
async def send_message_reply(ctx: CheckContext) -> str | None:
    value = ctx.decode(await ctx.send("message"))
    ctx.expect(
        isinstance(value, m.Message), f"'message' gave a {type(value).__name__}, expected a Message"
    )
    assert isinstance(value, m.Message)
    ctx.expect(value.role is m.Role.AGENT, f"the reply's role is {value.role.name}, expected AGENT")
    ctx.expect(value.text == REPLY_TEXT, f"the reply's text is {value.text!r}")
    return None


@check("send.unique-task-ids", "§3.4.2", MUST, "Each new task gets a new id", requires=CONTRACT)
async def send_unique_ids(ctx: CheckContext) -> str | None:
    a, _ = await ctx.send_for_task("complete")
    b, _ = await ctx.send_for_task("complete")
    ctx.expect(a.id != b.id, f"two new tasks share the id {a.id!r}")
    return None


@check(
    "send.unknown-task",
    "§3.4.2, §3.1.1",
    MUST,
    "A message naming an unknown taskId gets TaskNotFoundError",
)
async def send_unknown_task(ctx: CheckContext) -> str | None:
    res = await ctx.send("hello", task_id=_unknown())
    ctx.expect_error(res, TaskNotFoundError, "SendMessage with an unknown taskId")
    return None


@check(
    "send.terminal-task",
    "§3.1.1",
    MUST,
    "A message to a terminal task gets UnsupportedOperationError",
    requires=CONTRACT,
)
async def send_terminal_task(ctx: CheckContext) -> str | None:
    task = await ctx.completed_task()
    res = await ctx.send("more", task_id=task.id, context_id=task.context_id)
    # 0.3 §7.1 names no error type: "Sending a message to such a task will result in an
    # error." There any error is conformant, and 1.0's type an advisory.
    ctx.expect_error(
        res,
        UnsupportedOperationError,
        "SendMessage to a completed task",
        named=ctx.version != "0.3",
    )
    return None


@check(
    "send.multi-turn",
    "§3.4.3",
    MUST,
    "input-required continues on the same task; contextId is inferred from taskId",
    requires=CONTRACT,
)
async def send_multi_turn(ctx: CheckContext) -> str | None:
    task, _ = await ctx.send_for_task("input")
    ctx.expect(
        task.status.state is TaskState.INPUT_REQUIRED,
        f"'input' gave state {task.status.state.name}, expected INPUT_REQUIRED",
    )
    follow, _ = await ctx.send_for_task("the answer", task_id=task.id)
    ctx.expect(follow.id == task.id, f"the follow-up answered task {follow.id!r}, not {task.id!r}")
    ctx.expect(
        follow.context_id == task.context_id,
        f"the follow-up's contextId {follow.context_id!r} is not the task's {task.context_id!r}",
    )
    ctx.expect(
        follow.status.state is TaskState.COMPLETED,
        f"the follow-up left the task {follow.status.state.name}, expected COMPLETED",
    )
    return None


@check(
    "send.context-mismatch",
    "§3.4.3",
    MUST,
    "A taskId with a different contextId is rejected",
    requires=CONTRACT,
)
async def send_context_mismatch(ctx: CheckContext) -> str | None:
    task, _ = await ctx.send_for_task("input")
    try:
        res = await ctx.send("answer", task_id=task.id, context_id=f"other-{uuid.uuid4()}")
        if ctx.version == "0.3" and res.error is None:
            # 0.3 ties a message to a task by taskId and says nothing of a contextId
            # that differs from the task's (1.0 §3.4.3 makes it an error).
            ctx.advise(
                f"advisory: SendMessage with a contextId that is not the task's was served: "
                f"{res.describe()}, where 1.0 §3.4.3 refuses it; 0.3 states no rule"
            )
            return None
        ctx.expect_any_error(res, "SendMessage with a contextId that is not the task's")
    finally:
        await ctx.cancel_quietly(task.id)
    return None


# ---------------------------------------------------------------- GetTask


@check("get.task", "§3.1.3", MUST, "GetTask returns the task with the same ids and state")
async def get_task(ctx: CheckContext) -> str | None:
    task = await ctx.any_task()
    got = await ctx.read_task(task.id)
    ctx.expect(got.id == task.id, f"GetTask({task.id!r}) returned task {got.id!r}")
    ctx.expect(
        got.context_id == task.context_id,
        f"contextId changed from {task.context_id!r} to {got.context_id!r}",
    )
    if task.status.state.is_terminal:
        ctx.expect(
            got.status.state is task.status.state,
            f"state changed from {task.status.state.name} to {got.status.state.name}",
        )
    return None


async def _task_with_history(ctx: CheckContext) -> m.Task:
    if not ctx.has_contract:
        return await ctx.any_task()

    async def make() -> m.Task:
        task, _ = await ctx.send_for_task("input")
        await ctx.send_for_task("the answer", task_id=task.id)
        return task

    return await ctx.prerequisite("two-turn-task", make)


@check(
    "get.history-length",
    "§3.2.4, §3.1.3",
    MUST,
    "GetTask historyLength=n returns at most n messages",
)
async def get_history_length(ctx: CheckContext) -> str | None:
    task = await _task_with_history(ctx)
    full = await ctx.read_task(task.id)
    got = await ctx.read_task(task.id, history_length=1)
    ctx.expect(
        len(got.history) <= 1,
        f"historyLength=1 returned {len(got.history)} messages (§3.2.4: at most that many)",
    )
    if full.history and got.history:
        ctx.expect(
            got.history[-1].message_id == full.history[-1].message_id,
            "historyLength=1 did not return the most recent message",
        )
    return None


@check("get.history-zero", "§3.2.4", SHOULD, "GetTask historyLength=0 omits the history")
async def get_history_zero(ctx: CheckContext) -> str | None:
    if ctx.dialect == "0.3-http":
        ctx.not_applicable(
            "0.3 HTTP+JSON: the 0.3 proto's int32 historyLength has no presence, "
            "so 0 cannot be told from unset"
        )
    task = await _task_with_history(ctx)
    res = await ctx.call("GetTask", m.GetTaskRequest(id=task.id, history_length=0))
    raw = ctx.expect_result(res, "GetTask historyLength=0")
    ctx.decode(res)
    history = raw.get("history") if isinstance(raw, dict) else None
    ctx.expect(
        not history,
        f"historyLength=0 returned {len(history or [])} messages (§3.2.4: 0 asks for none)",
    )
    return None


async def _expect_task_not_found(ctx: CheckContext, op: str, params: object) -> None:
    ctx.expect_error(await ctx.call(op, params), TaskNotFoundError, f"{op} of an unknown id")


@check("get.unknown-task", "§3.1.3", MUST, "GetTask of an unknown id gets TaskNotFoundError")
async def get_unknown(ctx: CheckContext) -> str | None:
    await _expect_task_not_found(ctx, "GetTask", m.GetTaskRequest(id=_unknown()))
    return None


# ---------------------------------------------------------------- ListTasks (1.0)

V10 = ("1.0",)


async def _context_tasks(ctx: CheckContext) -> tuple[str, list[m.Task]]:
    """Three tasks in a fresh context: completed, failed, completed (in that order)."""

    async def make() -> tuple[str, list[m.Task]]:
        context_id = f"a2a-conformance-{uuid.uuid4()}"
        tasks = []
        for text in ("complete", "fail", "complete"):
            task, _ = await ctx.send_for_task(text, context_id=context_id)
            tasks.append(task)
        return context_id, tasks

    ctx.require_contract()
    return await ctx.prerequisite("context-tasks", make)


async def _list(ctx: CheckContext, **kwargs: Any) -> tuple[m.ListTasksResponse, Any]:
    """ListTasks, decoded member by member (presence is judged by list.response-shape)."""
    res = await ctx.call("ListTasks", m.ListTasksRequest(**kwargs))
    raw = ctx.expect_result(res, "ListTasks")
    if not isinstance(raw, dict) or not isinstance(raw.get("tasks", []), list):
        ctx.fail(f"ListTasks: the result is not a ListTasksResponse object: {res.describe()}")
    tasks = []
    for i, item in enumerate(raw.get("tasks", [])):
        try:
            tasks.append(codec.from_wire(m.Task, item, ctx.dialect))
        except DecodeError as exc:
            ctx.fail(f"ListTasks: result.tasks[{i}] is not a valid Task: {exc}")
    token, size, total = (
        raw.get("nextPageToken", ""),
        raw.get("pageSize", 0),
        raw.get("totalSize", 0),
    )
    if not isinstance(token, str) or not isinstance(size, int) or not isinstance(total, int):
        ctx.fail("ListTasks: nextPageToken/pageSize/totalSize have the wrong JSON types")
    return m.ListTasksResponse(
        tasks=tasks, next_page_token=token, page_size=size, total_size=total
    ), raw


@check(
    "list.response-shape",
    "§3.1.4",
    MUST,
    "ListTasks returns tasks, nextPageToken, pageSize and totalSize",
    versions=V10,
)
async def list_shape(ctx: CheckContext) -> str | None:
    _, raw = await _list(ctx, page_size=5)
    missing = [
        k
        for k in ("tasks", "nextPageToken", "pageSize", "totalSize")
        if not isinstance(raw, dict) or k not in raw
    ]
    ctx.expect(
        not missing,
        f"REQUIRED members missing from the response: {missing} (§3.1.4: "
        "nextPageToken MUST always be present; REQUIRED fields are always emitted)",
    )
    return None


@check(
    "list.pagination",
    "§3.1.4",
    MUST,
    'Cursor pagination: pageSize limits, nextPageToken continues, "" on the last page',
    versions=V10,
    requires=CONTRACT,
)
async def list_pagination(ctx: CheckContext) -> str | None:
    context_id, tasks = await _context_tasks(ctx)
    first, _ = await _list(ctx, context_id=context_id, page_size=2)
    ctx.expect(len(first.tasks) == 2, f"pageSize=2 returned {len(first.tasks)} tasks")
    ctx.expect(bool(first.next_page_token), "the first of two pages has an empty nextPageToken")
    second, raw2 = await _list(
        ctx, context_id=context_id, page_size=2, page_token=first.next_page_token
    )
    ctx.expect(
        len(second.tasks) == 1, f"the second page returned {len(second.tasks)} tasks, expected 1"
    )
    ctx.expect(
        isinstance(raw2, dict) and raw2.get("nextPageToken") == "",
        f'the last page\'s nextPageToken is {raw2.get("nextPageToken", "(absent)") if isinstance(raw2, dict) else raw2!r}, expected ""',
    )
    ids = {t.id for t in first.tasks} | {t.id for t in second.tasks}
    ctx.expect(
        ids == {t.id for t in tasks}, "the two pages do not hold exactly the context's 3 tasks"
    )
    ctx.expect(first.total_size == 3, f"totalSize is {first.total_size}, expected 3")
    return None


@check(
    "list.filters",
    "§3.1.4",
    MUST,
    "ListTasks filters by contextId and status",
    versions=V10,
    requires=CONTRACT,
)
async def list_filters(ctx: CheckContext) -> str | None:
    context_id, tasks = await _context_tasks(ctx)
    listed, _ = await _list(ctx, context_id=context_id)
    ctx.expect(
        {t.id for t in listed.tasks} == {t.id for t in tasks},
        f"contextId filter returned {len(listed.tasks)} tasks, expected this context's 3",
    )
    failed, _ = await _list(ctx, context_id=context_id, status=TaskState.FAILED)
    ctx.expect(
        [t.id for t in failed.tasks] == [tasks[1].id],
        f"status=FAILED returned {[t.status.state.name for t in failed.tasks]}, expected the one failed task",
    )
    return None


@check(
    "list.sorted",
    "§3.1.4",
    MUST,
    "ListTasks sorts by status timestamp, newest first",
    versions=V10,
    requires=CONTRACT,
)
async def list_sorted(ctx: CheckContext) -> str | None:
    context_id, _ = await _context_tasks(ctx)
    listed, _ = await _list(ctx, context_id=context_id)
    stamps = [t.status.timestamp for t in listed.tasks]
    if any(s is None for s in stamps):
        ctx.skip("some tasks have no status timestamp")
    ctx.expect(
        stamps == sorted(stamps, reverse=True),  # type: ignore[type-var]
        f"not newest first: {[s.isoformat() for s in stamps if s is not None]}",
    )
    return None


@check(
    "list.artifacts",
    "§3.1.4",
    MUST,
    "Artifacts are omitted unless includeArtifacts is true",
    versions=V10,
    requires=CONTRACT,
)
async def list_artifacts(ctx: CheckContext) -> str | None:
    context_id, _ = await _context_tasks(ctx)
    _, raw = await _list(ctx, context_id=context_id)
    with_key = [
        t.get("id")
        for t in (raw or {}).get("tasks", [])
        if isinstance(t, dict) and "artifacts" in t
    ]
    ctx.expect(
        not with_key, f"tasks carry an 'artifacts' member without includeArtifacts: {with_key}"
    )
    listed, _ = await _list(ctx, context_id=context_id, include_artifacts=True)
    completed = [t for t in listed.tasks if t.status.state is TaskState.COMPLETED]
    ctx.expect(
        completed and all(t.artifacts for t in completed),
        "includeArtifacts=true did not return the completed tasks' artifacts",
    )
    return None


@check(
    "list.page-size-bounds",
    "§3.1.4, §3.3.2",
    MUST,
    "pageSize outside 1..100 gets InvalidParams (or, above 100, is capped)",
    versions=V10,
)
async def list_page_size(ctx: CheckContext) -> str | None:
    for size in (0, -1):
        if ctx.transport == "jsonrpc":
            res = await ctx.call("ListTasks", raw_params={"pageSize": size})
        else:
            res = await _rest_list_raw(ctx, size)
        ctx.expect_error(res, InvalidParamsError, f"ListTasks pageSize={size}")
    res = await ctx.call("ListTasks", m.ListTasksRequest(page_size=101))
    if res.error is not None:
        ctx.expect_error(res, InvalidParamsError, "ListTasks pageSize=101")
    else:
        raw = ctx.expect_result(res, "ListTasks pageSize=101")
        answered: Any = raw.get("pageSize") if isinstance(raw, dict) else None
        count = len(raw.get("tasks") or []) if isinstance(raw, dict) else 0
        ctx.expect(
            isinstance(answered, int) and answered <= 100 and count <= 100,
            f"pageSize=101 was answered with pageSize {answered!r}",
        )
    return None


async def _rest_list_raw(ctx: CheckContext, size: int) -> CallResult:
    reply = await ctx.request(
        "GET",
        ctx.rest_url("/tasks"),
        headers=ctx.rest_headers(with_body=False),
        params=[("pageSize", str(size))],
    )
    return ctx._interpret("ListTasks", reply, None)


# ---------------------------------------------------------------- CancelTask


@check(
    "cancel.running",
    "§3.1.5",
    MUST,
    "CancelTask of a working task returns it canceled",
    requires=CONTRACT,
)
async def cancel_running(ctx: CheckContext) -> str | None:
    task = await ctx.slow_task()
    canceled = ctx.decode(await ctx.call("CancelTask", m.CancelTaskRequest(id=task.id)))
    ctx.expect(canceled.id == task.id, f"CancelTask returned task {canceled.id!r}")
    ctx.expect(
        canceled.status.state is TaskState.CANCELED,
        f"CancelTask returned state {canceled.status.state.name}, expected CANCELED",
    )
    got = await ctx.read_task(task.id)
    ctx.expect(
        got.status.state is TaskState.CANCELED,
        f"GetTask after the cancel says {got.status.state.name}",
    )
    return None


@check(
    "cancel.terminal",
    "§3.1.5",
    MUST,
    "CancelTask of a completed task gets TaskNotCancelableError",
    requires=CONTRACT,
)
async def cancel_terminal(ctx: CheckContext) -> str | None:
    task = await ctx.completed_task()
    ctx.expect_error(
        await ctx.call("CancelTask", m.CancelTaskRequest(id=task.id)),
        TaskNotCancelableError,
        "CancelTask of a completed task",
    )
    return None


@check("cancel.unknown-task", "§3.1.5", MUST, "CancelTask of an unknown id gets TaskNotFoundError")
async def cancel_unknown(ctx: CheckContext) -> str | None:
    await _expect_task_not_found(ctx, "CancelTask", m.CancelTaskRequest(id=_unknown()))
    return None


# ---------------------------------------------------------------- SubscribeToTask


async def _expect_task_first(ctx: CheckContext, *subscribers: StreamSession) -> None:
    """Each subscriber's first event, within 5s, must be the Task."""
    for s in subscribers:
        try:
            first = await s.next(5.0)
        except TimeoutError:
            ctx.fail("a subscriber got no event within 5s")
        ctx.expect(
            first is not None and first.kind == "task",
            f"a subscriber's first event is {first.describe() if first else 'none'}",
        )


async def _expect_stream_error(
    ctx: CheckContext, s: StreamSession, cls: type[JSONRPCError], op: str = ""
) -> None:
    try:
        await s.next(5.0)
    except TimeoutError:
        ctx.fail("no answer within 5s")
    err = s.first_error()
    said = f"{op}: " if op else ""
    ctx.expect(
        err is not None and err.may_be(cls),
        f"{said}expected {cls.__name__}, got {err.describe() if err else s.outcome()}",
    )


@check(
    "subscribe.first-event-task",
    "§3.1.6",
    MUST,
    "SubscribeToTask sends the Task first, then closes after the terminal state",
    versions=("1.0",),
    requires=STREAM_CONTRACT,
    timeout=20.0,
)
async def subscribe_first(ctx: CheckContext) -> str | None:
    async with ctx.working_task() as task:
        async with await ctx.stream("SubscribeToTask", m.SubscribeToTaskRequest(id=task.id)) as s:
            err = None
            try:
                first = await s.next(5.0)
            except TimeoutError:
                ctx.fail("no event within 5s of subscribing")
            err = s.first_error()
            ctx.expect(err is None, f"SubscribeToTask failed: {err.describe() if err else ''}")
            ctx.expect(first is not None, f"the stream ended without events ({s.outcome()})")
            assert first is not None
            ctx.expect(
                first.kind == "task", f"the first event is {first.describe()}, expected the Task"
            )
            ctx.expect(first.model.id == task.id, f"the first event is task {first.model.id!r}")
            await ctx.call("CancelTask", m.CancelTaskRequest(id=task.id))
            await s.collect(idle=5.0)
            states = [e.state for e in s.events if e.state is not None]
            ctx.expect(
                TaskState.CANCELED in states,
                f"after CancelTask the stream carried {[st.name for st in states]}, no CANCELED",
            )
            ctx.expect(s.closed, "the stream stayed open after the task was canceled (§3.1.6)")
    return None


@check(
    "subscribe.concurrent",
    "§3.5.2",
    MUST,
    "Two subscribers of one task get the same events",
    versions=("1.0",),
    requires=STREAM_CONTRACT,
    timeout=20.0,
)
async def subscribe_concurrent(ctx: CheckContext) -> str | None:
    async with ctx.working_task() as task:
        a = await ctx.stream("SubscribeToTask", m.SubscribeToTaskRequest(id=task.id))
        b = await ctx.stream("SubscribeToTask", m.SubscribeToTaskRequest(id=task.id))
        async with a, b:
            await _expect_task_first(ctx, a, b)
            await ctx.call("CancelTask", m.CancelTaskRequest(id=task.id))
            await a.collect(idle=5.0)
            await b.collect(idle=5.0)
            sa = [e.state for e in a.events[1:] if e.kind == "status"]
            sb = [e.state for e in b.events[1:] if e.kind == "status"]
            ctx.expect(sa == sb, f"subscribers saw different status updates: {sa} vs {sb}")
            ctx.expect(TaskState.CANCELED in sa, "the subscribers did not see the cancel")
    return None


@check(
    "subscribe.terminal-task",
    "§3.1.6",
    MUST,
    "SubscribeToTask of a terminal task gets UnsupportedOperationError",
    versions=("1.0",),
    requires=STREAM_CONTRACT,
)
async def subscribe_terminal(ctx: CheckContext) -> str | None:
    task = await ctx.completed_task()
    async with await ctx.stream("SubscribeToTask", m.SubscribeToTaskRequest(id=task.id)) as s:
        await _expect_stream_error(ctx, s, UnsupportedOperationError)
    return None


@check(
    "subscribe.unknown-task",
    "§3.1.6",
    MUST,
    "SubscribeToTask of an unknown id gets TaskNotFoundError",
    requires=(Requirement.STREAMING,),
)
async def subscribe_unknown(ctx: CheckContext) -> str | None:
    async with await ctx.stream("SubscribeToTask", m.SubscribeToTaskRequest(id=_unknown())) as s:
        await _expect_stream_error(ctx, s, TaskNotFoundError)
    return None


# ---------------------------------------------------------------- capability honesty


@check(
    "capability.push-not-claimed",
    "§3.3.4",
    MUST,
    "Without pushNotifications, all push config operations get PushNotificationNotSupportedError",
    requires=(Requirement.NO_PUSH,),
)
async def push_not_claimed(ctx: CheckContext) -> str | None:
    try:
        task_id = (await ctx.any_task()).id
        real = True
    except Exception:
        task_id, real = _unknown(), False
    calls = [
        ("CreateTaskPushNotificationConfig", _config(ctx, task_id)),
        (
            "GetTaskPushNotificationConfig",
            m.GetTaskPushNotificationConfigRequest(task_id=task_id, id="c1"),
        ),
        (
            "ListTaskPushNotificationConfigs",
            m.ListTaskPushNotificationConfigsRequest(task_id=task_id),
        ),
        (
            "DeleteTaskPushNotificationConfig",
            m.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="c1"),
        ),
    ]
    for op, params in calls:
        res = await ctx.call(op, params)
        if not real and res.error is not None and res.error.may_be(TaskNotFoundError):
            continue
        ctx.expect_error(res, PushNotificationNotSupportedError, op)
    return None if real else "probed with an unknown task id (the agent made no task)"


@check(
    "capability.streaming-not-claimed",
    "§3.3.4",
    MUST,
    "Without streaming, streaming operations get UnsupportedOperationError",
    requires=(Requirement.NO_STREAMING,),
)
async def streaming_not_claimed(ctx: CheckContext) -> str | None:
    async with await ctx.stream("SendStreamingMessage", ctx.send_request("hello")) as s:
        await _expect_stream_error(ctx, s, UnsupportedOperationError, "SendStreamingMessage")
    return None


@check(
    "capability.extended-card-not-claimed",
    "§3.3.4, §3.1.11",
    MUST,
    "Without extendedAgentCard, GetExtendedAgentCard gets UnsupportedOperationError",
    requires=(Requirement.NO_EXTENDED_CARD,),
)
async def extended_not_claimed(ctx: CheckContext) -> str | None:
    res = await ctx.call("GetExtendedAgentCard", m.GetExtendedAgentCardRequest())
    if (
        ctx.version == "0.3"
        and res.error is not None
        and res.error.is_(ExtendedAgentCardNotConfiguredError)
    ):
        return "0.3: answered AuthenticatedExtendedCardNotConfigured (-32007)"
    ctx.expect_error(res, UnsupportedOperationError, "GetExtendedAgentCard")
    return None


@check(
    "extended-card.get",
    "§3.1.11",
    MUST,
    "GetExtendedAgentCard returns a valid card (or ExtendedAgentCardNotConfiguredError)",
    requires=(Requirement.EXTENDED_CARD,),
)
async def extended_card(ctx: CheckContext) -> str | None:
    res = await ctx.call("GetExtendedAgentCard", m.GetExtendedAgentCardRequest())
    if res.http.status in (401, 403) and not ctx.auth_headers:
        ctx.skip(f"HTTP {res.http.status}: pass credentials with --auth-header")
    if res.error is not None and res.error.is_(ExtendedAgentCardNotConfiguredError):
        return "declared but not configured (-32007)"
    card = ctx.decode(res, m.AgentCard)
    ctx.expect(isinstance(card, m.AgentCard), "not an AgentCard")
    return None


__all__: list[str] = []
