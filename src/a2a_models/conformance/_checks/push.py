"""Push-notification config checks (spec §3.1.7-§3.1.10; 0.3 §7.5-§7.8), run over JSON-RPC
and HTTP+JSON alike."""

from __future__ import annotations

from ... import codec
from ... import models as m
from ...errors import InvalidParamsError, TaskNotFoundError
from .._context import CheckContext
from .._registry import PUSH_CONTRACT, Level, Requirement, check
from .._replies import RemoteError
from .methods import _config, _unknown

MUST = Level.MUST


# ---------------------------------------------------------------- push notification configs


def _names_url(error: RemoteError) -> bool:
    said = f"{error.message} {codec.dumps(error.data).decode()} {error.details!r}".lower()
    return "url" in said or "webhook" in said


async def _create_config(
    ctx: CheckContext, task_id: str
) -> tuple[m.TaskPushNotificationConfig, str]:
    """Create a push config on ``task_id``; skip when the agent refuses the webhook URL
    as invalid: §13.2 asks agents to refuse URLs that could serve SSRF (loopback,
    private addresses), so the refusal says nothing about the operation under test.
    Only an InvalidParams error that names the URL counts as that refusal.
    Returns the created config and its id (on 1.0, fails the check if it has none; on
    0.3 the client sets it)."""
    sent = _config(ctx, task_id)
    res = await ctx.call("CreateTaskPushNotificationConfig", sent)
    if res.error is not None and res.error.may_be(InvalidParamsError) and _names_url(res.error):
        ctx.skip(
            f"the agent refused the webhook URL {ctx.webhook_url!r} with "
            f"{res.error.describe()} (§13.2 lets it refuse private addresses): "
            "pass --webhook-url with a URL it accepts (nothing is delivered there)"
        )
    created: m.TaskPushNotificationConfig = ctx.decode(res)
    if ctx.version == "0.3" and sent.id is not None:
        # 0.3 §6.8: the id is "set by the client"; the agent need not echo it.
        if created.id and created.id != sent.id:
            ctx.advise(
                f"advisory: the created config's id is {created.id!r}, not the {sent.id!r} "
                "the client set (0.3 §6.8: 'A unique ID for the push notification "
                "configuration, set by the client')"
            )
        return created, created.id or sent.id
    if not created.id:
        ctx.fail("the created config has no id (§3.1.7: 'with assigned ID')")
    return created, created.id


@check(
    "push.crud",
    "§3.1.7-§3.1.10",
    MUST,
    "Push configs: create assigns an id; get, list and delete work",
    requires=PUSH_CONTRACT,
)
async def push_crud(ctx: CheckContext) -> str | None:
    async with ctx.working_task() as task:
        created, config_id = await _create_config(ctx, task.id)
        ctx.expect(
            created.url == ctx.webhook_url,
            f"the created config's url is {created.url!r}, not the {ctx.webhook_url!r} sent "
            "(§3.1.7: the created configuration is returned)",
        )
        got = ctx.decode(
            await ctx.call(
                "GetTaskPushNotificationConfig",
                m.GetTaskPushNotificationConfigRequest(task_id=task.id, id=config_id),
            )
        )
        ctx.expect(
            got.url == ctx.webhook_url and got.id == config_id,
            f"Get of config {config_id!r} returned id {got.id!r} url {got.url!r} "
            f"(§3.1.8: the configuration created)",
        )
        listed = ctx.decode(
            await ctx.call(
                "ListTaskPushNotificationConfigs",
                m.ListTaskPushNotificationConfigsRequest(task_id=task.id),
            )
        )
        ctx.expect(
            config_id in [c.id for c in listed.configs],
            f"List does not include the config {config_id!r}",
        )
        ctx.decode(
            await ctx.call(
                "DeleteTaskPushNotificationConfig",
                m.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=config_id),
            )
        )
        res = await ctx.call(
            "GetTaskPushNotificationConfig",
            m.GetTaskPushNotificationConfigRequest(task_id=task.id, id=config_id),
        )
        ctx.expect_any_error(res, "Get of a deleted config (§3.1.8: MUST fail)")
    return None


@check(
    "push.delete-idempotent",
    "§3.1.10",
    MUST,
    "Deleting a push config twice has the same effect",
    requires=PUSH_CONTRACT,
)
async def push_delete_twice(ctx: CheckContext) -> str | None:
    async with ctx.working_task() as task:
        _, config_id = await _create_config(ctx, task.id)
        req = m.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=config_id)
        ctx.decode(await ctx.call("DeleteTaskPushNotificationConfig", req))
        second = await ctx.call("DeleteTaskPushNotificationConfig", req)
        if ctx.version == "0.3" and second.error is not None:
            # 0.3 §7.8 lists the delete's errors and says nothing of a second delete.
            ctx.advise(
                f"advisory: the second delete failed: {second.describe()}, where 1.0 "
                "§3.1.10 makes deleting idempotent; 0.3 states no rule (§7.8)"
            )
            return None
        ctx.expect(
            second.error is None and second.problem is None,
            f"the second delete failed: {second.describe()}",
        )
    return None


@check(
    "push.unknown-task",
    "§3.1.7",
    MUST,
    "Creating a push config for an unknown task gets TaskNotFoundError",
    requires=(Requirement.PUSH,),
)
async def push_unknown(ctx: CheckContext) -> str | None:
    res = await ctx.call("CreateTaskPushNotificationConfig", _config(ctx, _unknown()))
    ctx.expect_error(res, TaskNotFoundError, "CreateTaskPushNotificationConfig for an unknown task")
    return None
