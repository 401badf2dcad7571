"""Checks written from the requirement catalogue: rules no earlier check tested
(spec §3.1.2, §3.1.8, §3.3.2, §3.5.2, §5.7, §7.4, §7.6.1, §13.2)."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from ... import models as m
from ..._state import TaskState
from ...errors import InvalidParamsError
from .._catalogue import requirement
from .._context import STATUS_CODES_03, CheckContext
from .._registry import PUSH_CONTRACT, REST, STREAM_CONTRACT, Level, Requirement, check
from .methods import _expect_task_first
from .push import _names_url

MUST, SHOULD = Level.MUST, Level.SHOULD
#: What 0.3 says on webhook URLs (§10.2, Security Considerations Summary): a bullet
#: without an RFC 2119 keyword, so the catalogue has no entry for it.
_SSRF_03 = (
    "Webhook URL validation (by the A2A Server sending notifications) is crucial to prevent SSRF."
)
SECURED = (Requirement.SECURED,)


@check(
    "stream.incremental",
    "§3.1.2",
    MUST,
    "A stream delivers the Task while the work is still in progress",
    requires=STREAM_CONTRACT,
)
async def stream_incremental(ctx: CheckContext) -> str | None:
    async with await ctx.stream("SendStreamingMessage", ctx.send_request("slow")) as s:
        try:
            first = await s.next(5.0)
        except TimeoutError:
            first = None
        ctx.expect(
            first is not None,
            "no event within 5s of starting a long-running task "
            "(§3.1.2: immediate feedback on progress)",
        )
        assert first is not None
        ctx.expect(
            first.kind == "task" and not first.is_terminal,
            f"the first event is {first.describe()}, expected the in-progress Task",
        )
        task_id = first.model.id
    await ctx.cancel_quietly(task_id)
    return None


@check(
    "subscribe.close-one",
    "§3.5.2",
    MUST,
    "Closing one subscriber's stream does not end another's",
    versions=("1.0",),
    requires=STREAM_CONTRACT,
    timeout=20.0,
)
async def subscribe_close_one(ctx: CheckContext) -> str | None:
    async with ctx.working_task() as task:
        a = await ctx.stream("SubscribeToTask", m.SubscribeToTaskRequest(id=task.id))
        b = await ctx.stream("SubscribeToTask", m.SubscribeToTaskRequest(id=task.id))
        async with b:
            async with a:
                await _expect_task_first(ctx, a, b)
            # a is closed now; b must still see the task end
            await ctx.call("CancelTask", m.CancelTaskRequest(id=task.id))
            await b.collect(idle=5.0)
            states = [e.state for e in b.events[1:] if e.kind in ("status", "task")]
            ctx.expect(
                TaskState.CANCELED in states,
                "after the other subscriber closed, this one did not see the cancel: "
                f"{[e.describe() for e in b.events]}",
            )
    return None


@check(
    "push.get-unknown-config",
    "§3.1.8",
    MUST,
    "Getting a push config id that does not exist fails",
    requires=PUSH_CONTRACT,
)
async def push_get_unknown(ctx: CheckContext) -> str | None:
    async with ctx.working_task() as task:
        res = await ctx.call(
            "GetTaskPushNotificationConfig",
            m.GetTaskPushNotificationConfigRequest(
                task_id=task.id, id=f"a2a-conformance-no-such-config-{uuid.uuid4()}"
            ),
        )
        ctx.expect_any_error(res, "GetTaskPushNotificationConfig of an unknown config id")
    return None


@check(
    "push.rejects-unsafe-url",
    "§13.2",
    SHOULD,
    "A push config whose webhook is a cloud metadata address is refused",
    requires=PUSH_CONTRACT,
)
async def push_unsafe_url(ctx: CheckContext) -> str | None:
    async with ctx.working_task() as task:
        config = m.TaskPushNotificationConfig(
            task_id=task.id, url="http://169.254.169.254/latest/meta-data/", token="t"
        )
        res = await ctx.call("CreateTaskPushNotificationConfig", config)
        if ctx.version == "0.3" and res.error is None and res.problem is None and res.has_result:
            # 0.3 names the danger without a rule (no RFC 2119 keyword, a summary section).
            ctx.advise(
                "advisory: a webhook at the link-local metadata address 169.254.169.254 was "
                "accepted, where 1.0 §13.2 says agents SHOULD validate webhook URLs to prevent "
                f"SSRF; 0.3 states no rule, only that {_SSRF_03!r} (0.3 §10.2)"
            )
            return None
        ctx.expect_any_error(
            res,
            "a webhook at the link-local metadata address 169.254.169.254 was accepted "
            "(§13.2: validate webhook URLs to prevent SSRF; refusing it only when delivering "
            "cannot be seen from outside and gives the client no feedback)",
        )
    return None


def _with_unknown_fields(wire: Any) -> Any:
    if isinstance(wire, dict):
        out = {**wire, "a2aConformanceUnknownField": {"nested": [1, 2]}}
        msg = out.get("message")
        if isinstance(msg, dict):
            out["message"] = {**msg, "a2aConformanceUnknownField": "x"}
        return out
    return wire


@check("robustness.unknown-fields", "§5.7", SHOULD, "Unknown fields in a request are ignored")
async def unknown_fields(ctx: CheckContext) -> str | None:
    req = ctx.send_request("hello")
    wire = _with_unknown_fields(ctx.encode_params("SendMessage", req))
    res = await ctx.call("SendMessage", req, raw_params=wire)
    err = res.error
    if ctx.version == "0.3" and err is not None:
        # 0.3 states no rule on unknown members (1.0 §5.7 says to ignore them), so a refusal
        # is conformant, if it is the client's error: not a 5xx (0.3 §3.2.3).
        ctx.expect(
            err.transport != REST or (err.http_status or 0) < 500,
            f"a SendMessage with unknown fields was refused as a server error: "
            f"{err.describe()} (0.3 §3.2.3: {requirement(STATUS_CODES_03).sentence!r})",
        )
        ctx.advise(
            f"advisory: a SendMessage with unknown fields was refused: {err.describe()}, "
            "where 1.0 §5.7 says they SHOULD be ignored; 0.3 states no rule"
        )
        return None
    ctx.expect(
        err is None and res.problem is None and res.has_result,
        f"a SendMessage with unknown fields was refused: {res.describe()}",
    )
    value = ctx.decode(res)
    if isinstance(value, m.Task) and not value.status.state.is_terminal:
        await ctx.cancel_quietly(value.id)
    return None


@check(
    "send.auth-required-message",
    "§7.6.1",
    MUST,
    "A task in auth-required carries a status message explaining it",
    requires=(Requirement.CONTRACT,),
)
async def auth_required_message(ctx: CheckContext) -> str | None:
    task, _ = await ctx.send_for_task("auth")
    try:
        ctx.expect(
            task.status.state is TaskState.AUTH_REQUIRED,
            f"'auth' gave state {task.status.state.name}, expected AUTH_REQUIRED",
        )
        msg = task.status.message
        ctx.expect(
            msg is not None and bool(msg.parts),
            "the AUTH_REQUIRED status has no message explaining the authorization needed",
        )
    finally:
        await ctx.cancel_quietly(task.id)
    return None


async def _unauthenticated(ctx: CheckContext) -> Any:
    """A GetTask of an unknown id sent without the configured credentials."""
    saved = ctx.auth_headers
    ctx.auth_headers = {}
    try:
        return await ctx.call("GetTask", m.GetTaskRequest(id=f"a2a-conformance-{uuid.uuid4()}"))
    finally:
        ctx.auth_headers = saved


@check(
    "auth.credentials-required",
    "§3.3.2, §7.4",
    MUST,
    "A card that requires security: a request without credentials is refused before any "
    "task lookup",
    requires=SECURED,
)
async def credentials_required(ctx: CheckContext) -> str | None:
    res = await _unauthenticated(ctx)
    status = res.http.status
    if status in (401, 403):
        return f"HTTP {status}"
    ctx.expect(res.error is not None, f"an unauthenticated request succeeded: {res.describe()}")
    from ...errors import TaskNotFoundError

    ctx.expect(
        not res.error.is_(TaskNotFoundError),
        "an unauthenticated GetTask was processed (it got TaskNotFoundError, not an "
        "authentication error)",
    )
    return None


@check(
    "auth.challenge",
    "§3.3.2, §7.4",
    SHOULD,
    "An authentication failure answers HTTP 401 with a WWW-Authenticate challenge",
    requires=SECURED,
)
async def auth_challenge(ctx: CheckContext) -> str | None:
    res = await _unauthenticated(ctx)
    status = res.http.status
    ctx.expect(status == 401, f"an unauthenticated request got HTTP {status}, expected 401")
    ctx.expect(
        "www-authenticate" in res.http.headers,
        "the 401 answer has no WWW-Authenticate header naming the scheme",
    )
    return None


__all__: list[str] = []


@check(
    "stream.event-ids",
    "§3.1.6, §3.7 (SSE resumption)",
    SHOULD,
    "SSE event ids, when sent, are on every event and strictly increase",
    requires=(Requirement.STREAMING,),
)
async def stream_event_ids(ctx: CheckContext) -> str | None:
    from .streaming import _main_stream_events

    s = await _main_stream_events(ctx)
    ids = [e.sse_id for e in s.events]
    if not any(ids):
        ctx.not_applicable("the stream's events carry no SSE ids")
    problem = _event_id_problem(ids)
    if problem is not None and ctx.version == "0.3":
        # 0.3 defines no resumption from an event: what a resubscription gets is
        # "implementation-dependent and not strictly defined by this specification" (§7.9).
        ctx.advise(
            f"advisory: {problem}, where 1.0 (§3.1.6, §3.7) resumes a stream after an event "
            "id; 0.3 states no rule on event ids (§7.9: missed events are "
            "implementation-dependent)"
        )
        return None
    ctx.expect(problem is None, str(problem))
    return None


def _event_id_problem(ids: list[str]) -> str | None:
    """What is wrong with a stream's SSE ids (``""``: an event without one), if anything."""
    if not all(ids):
        return f"some events have an id and some do not: {ids}"
    if all(i.isdigit() for i in ids):
        nums = [int(i) for i in ids]
        if not all(a < b for a, b in itertools.pairwise(nums)):
            return (
                f"the event ids do not increase: {ids} (a reconnect with Last-Event-ID "
                "could not say where it stopped)"
            )
        return None
    return f"event ids repeat: {ids}" if len(set(ids)) != len(ids) else None


class _As:
    """Make the context's calls with the peer identity's credentials."""

    def __init__(self, ctx: CheckContext) -> None:
        if ctx.peer_headers is None:
            ctx.not_applicable("no second identity: pass --peer-auth-header")
        self.ctx = ctx
        self.saved = ctx.auth_headers

    def __enter__(self) -> None:
        assert self.ctx.peer_headers is not None
        self.ctx.auth_headers = dict(self.ctx.peer_headers)

    def __exit__(self, *exc: object) -> None:
        self.ctx.auth_headers = self.saved


@check(
    "auth.owner-isolation",
    "§13.1, §3.3.2",
    MUST,
    "A task is invisible to another identity: get, cancel, list and push configs refuse it",
    requires=(Requirement.CONTRACT,),
    timeout=20.0,
)
async def owner_isolation(ctx: CheckContext) -> str | None:
    peer = _As(ctx)
    note = None
    async with ctx.working_task() as task:
        with peer:
            got = await ctx.call("GetTask", m.GetTaskRequest(id=task.id))
            ctx.expect(
                got.error is not None,
                f"another identity could read the task with GetTask: {got.describe()}",
            )
            cancel = await ctx.call("CancelTask", m.CancelTaskRequest(id=task.id))
            ctx.expect(
                cancel.error is not None,
                f"another identity could cancel the task: {cancel.describe()}",
            )
            if ctx.version == "1.0":
                listed = await ctx.call("ListTasks", m.ListTasksRequest(page_size=100))
                ids = (
                    [
                        t.get("id")
                        for t in (listed.result or {}).get("tasks", [])
                        if isinstance(t, dict)
                    ]
                    if listed.has_result
                    else []
                )
                ctx.expect(task.id not in ids, "another identity's ListTasks includes the task")
            if ctx.claims(Requirement.PUSH):
                push = await ctx.call(
                    "CreateTaskPushNotificationConfig",
                    m.TaskPushNotificationConfig(task_id=task.id, url=ctx.webhook_url, token="t"),
                )
                ctx.expect(
                    push.error is not None, "another identity could add a push config to the task"
                )
                err = push.error
                if err is not None and err.may_be(InvalidParamsError) and _names_url(err):
                    # refused for its URL, not for its owner: that part proves nothing
                    note = (
                        f"push configs not decided: the webhook URL was refused "
                        f"({err.describe()}); pass --webhook-url with one the agent accepts"
                    )
        still = await ctx.read_task(task.id)
        ctx.expect(
            not still.status.state.is_terminal,
            f"the owner's task is {still.status.state.name} after the other identity's cancel",
        )
    return note


@check(
    "auth.not-found-indistinguishable",
    "§3.3.2",
    SHOULD,
    "Another identity's task gets the same answer as a task that does not exist",
    requires=(Requirement.CONTRACT,),
)
async def not_found_indistinguishable(ctx: CheckContext) -> str | None:
    from ...errors import TaskNotFoundError

    peer = _As(ctx)
    task = await ctx.completed_task()
    with peer:
        theirs = await ctx.call("GetTask", m.GetTaskRequest(id=task.id))
        unknown = await ctx.call("GetTask", m.GetTaskRequest(id=f"a2a-conformance-{uuid.uuid4()}"))
    if ctx.version == "0.3":
        # 0.3 leaves authorization to the server's "own policies" (§4.6) and says nothing
        # on hiding a task's existence; whether the task is readable is owner-isolation's.
        alike = (
            theirs.error is not None
            and theirs.error.may_be(TaskNotFoundError)
            and theirs.http.status == unknown.http.status
        )
        if not alike:
            ctx.advise(
                f"advisory: GetTask of another identity's task answered {theirs.describe()}, "
                f"an unknown task {unknown.describe()}, where 1.0 §3.3.2 answers both alike "
                "(TaskNotFoundError); 0.3 states no rule (§4.6: authorization follows the "
                "server's own policies)"
            )
        return None
    ctx.expect_error(theirs, TaskNotFoundError, "GetTask of another identity's task")
    ctx.expect(
        theirs.http.status == unknown.http.status,
        f"HTTP {theirs.http.status} for another identity's task, {unknown.http.status} "
        "for an unknown one",
    )
    return None


@check(
    "capability.required-extension",
    "§3.3.4",
    MUST,
    "A request that does not name an extension the card marks required gets "
    "ExtensionSupportRequiredError",
    requires=(Requirement.REQUIRED_EXTENSION,),
)
async def required_extension(ctx: CheckContext) -> str | None:
    from ...errors import ExtensionSupportRequiredError

    without = await ctx.call("SendMessage", ctx.send_request("hello"), with_extensions=False)
    required = ", ".join(ctx.target.required_extensions())
    if ctx.version == "0.3":
        # 0.3 has no ExtensionSupportRequiredError (its codes end at -32007) and puts
        # required extensions on the client: AgentExtension.required "If true, the client
        # must understand and comply with the extension's requirements".
        if without.error is None:
            ctx.advise(
                f"advisory: SendMessage without the required extension(s) {required} was "
                "served, where 1.0 §3.3.4 answers ExtensionSupportRequiredError; 0.3 states "
                "no server rule (AgentExtension.required binds the client)"
            )
        value = ctx.decode(without) if without.error is None else None
        if isinstance(value, m.Task) and not value.status.state.is_terminal:
            await ctx.cancel_quietly(value.id)
        return None
    ctx.expect_error(
        without,
        ExtensionSupportRequiredError,
        f"SendMessage without the required extension(s) {required}",
    )
    named = await ctx.call("SendMessage", ctx.send_request("hello"))
    ctx.expect(
        named.error is None or not named.error.is_(ExtensionSupportRequiredError),
        "SendMessage naming the required extension(s) still got ExtensionSupportRequiredError",
    )
    value = ctx.decode(named)
    if isinstance(value, m.Task) and not value.status.state.is_terminal:
        await ctx.cancel_quietly(value.id)
    return None
