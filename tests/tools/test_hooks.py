"""with_hooks: rewriting arguments, short-circuits, after-hooks, composition."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_models import Message, Task
from a2a_models.tools import (
    ToolContext,
    ToolInputError,
    ToolResult,
    error_task,
    function_tool,
    with_hooks,
)

CALLS: list[dict[str, Any]] = []


@function_tool
def greet(name: str, punctuation: str = "!") -> str:
    """Greets someone."""
    CALLS.append({"name": name, "punctuation": punctuation})
    return f"hello {name}{punctuation}"


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()


async def test_before_hooks_rewrite_arguments_in_order() -> None:
    seen: list[dict[str, Any]] = []

    def title(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        seen.append(args)
        return {**args, "name": args["name"].title()}

    async def shout(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        seen.append(args)
        return {**args, "punctuation": "!!!"}

    hooked = with_hooks(greet, before=[title, shout])
    assert (hooked.name, hooked.description, hooked.input_schema) == (
        greet.name,
        greet.description,
        greet.input_schema,
    )
    assert await hooked.call({"name": "ada lovelace"}) == ToolResult.of("hello Ada Lovelace!!!")
    assert seen == [{"name": "ada lovelace"}, {"name": "Ada Lovelace"}]


async def test_a_before_hook_short_circuits_with_a_task_or_message() -> None:
    later: list[str] = []

    def refuse(args: dict[str, Any], ctx: ToolContext) -> Task | None:
        return error_task("no strangers") if args["name"] == "stranger" else None

    def after(args: dict[str, Any], result: Any, ctx: ToolContext) -> None:
        later.append("after")

    def second(args: dict[str, Any], ctx: ToolContext) -> None:
        later.append("second")

    hooked = with_hooks(greet, before=[refuse, second], after=after)
    answer = await hooked.call({"name": "stranger"})
    assert isinstance(answer, Task) and answer.status.message is not None
    assert answer.status.message.text == "no strangers"
    assert CALLS == [] and later == []

    async def reply(args: dict[str, Any], ctx: ToolContext) -> Message:
        return Message.agent("answered by the hook")

    message = await with_hooks(greet, before=reply).call({"name": "x"})
    assert isinstance(message, Message) and CALLS == []


async def test_after_hooks_replace_results_in_order() -> None:
    def exclaim(args: dict[str, Any], result: Any, ctx: ToolContext) -> str:
        return str(result.text).upper()

    async def wrap(args: dict[str, Any], result: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult.of(f"[{result.text}]")

    def keep(args: dict[str, Any], result: Any, ctx: ToolContext) -> None:
        return None

    hooked = with_hooks(greet, after=[exclaim, keep, wrap])
    assert await hooked.call({"name": "bob"}) == ToolResult.of("[HELLO BOB!]")


async def test_hooks_see_the_context_and_validation_comes_first() -> None:
    contexts: list[ToolContext] = []

    def record(args: dict[str, Any], ctx: ToolContext) -> None:
        contexts.append(ctx)

    hooked = with_hooks(greet, before=record)
    context = ToolContext(skill_id="greeter", skill_input={"who": "bob"}, custom={"lang": "en"})
    await hooked.call({"name": "bob"}, context)
    assert contexts == [context]
    with pytest.raises(ToolInputError):
        await hooked.call({"nom": "bob"})
    assert len(contexts) == 1

    def corrupt(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {"name": 42}

    with pytest.raises(ToolInputError, match="42 is not of type 'string'"):
        await with_hooks(greet, before=corrupt).call({"name": "bob"})
    assert CALLS == [{"name": "bob", "punctuation": "!"}]


async def test_nesting_runs_outer_before_hooks_first_and_outer_after_hooks_last() -> None:
    order: list[str] = []

    def mark(label: str) -> Any:
        def hook(*args: Any) -> None:
            order.append(label)

        return hook

    inner = with_hooks(greet, before=mark("inner before"), after=mark("inner after"))
    outer = with_hooks(inner, before=mark("outer before"), after=mark("outer after"))
    await outer.call({"name": "x"})
    assert order == ["outer before", "inner before", "inner after", "outer after"]


async def test_bad_hooks() -> None:
    assert with_hooks(greet) is greet
    with pytest.raises(TypeError, match="hooks must be callables"):
        with_hooks(greet, before=[42])  # type: ignore[list-item]

    def wrong(args: dict[str, Any], ctx: ToolContext) -> int:
        return 3

    with pytest.raises(TypeError, match="returned int: return None, an arguments dict"):
        await with_hooks(greet, before=wrong).call({"name": "x"})
