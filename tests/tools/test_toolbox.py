"""Toolbox: providers, adapters by name or wildcard, allowed_tools, context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pytest

from a2a_models.tools import (
    Tool,
    Toolbox,
    ToolContext,
    ToolNameError,
    ToolResult,
    adapt_tools,
    define_skill,
    function_tool,
    select_tools,
    with_hooks,
)


def tool(name: str, source: str = "test") -> Tool:
    async def fn(args: dict[str, Any], ctx: ToolContext) -> str:
        return f"{name}:{ctx.skill_id}:{ctx.custom}"

    return Tool(name=name, description=name, fn=fn, source=source)


class Provider:
    def __init__(self, *tools: Tool) -> None:
        self.current: Sequence[Tool] = tools

    @property
    def tools(self) -> Sequence[Tool]:
        return self.current


def tagging(label: str) -> Any:
    def adapter(t: Tool) -> Tool:
        def after(args: dict[str, Any], result: Any, ctx: ToolContext) -> ToolResult:
            return ToolResult.of(f"{result.text}+{label}")

        return with_hooks(t, after=after)

    return adapter


async def test_adapters_by_exact_name_and_wildcard_replace_the_tools() -> None:
    a, b, c = tool("fs__read"), tool("fs__write"), tool("web__get")
    box = Toolbox([a], providers=[Provider(b, c)])
    box.adapt("*", tagging("all")).adapt("fs__*", tagging("fs")).adapt("web__get", tagging("web"))
    assert box.names == ("fs__read", "fs__write", "web__get")
    assert all(t not in (a, b, c) for t in box.tools)
    assert (await box.call("fs__read")).text == "fs__read:None:None+all+fs"  # type: ignore[union-attr]
    assert (await box.call("web__get")).text == "web__get:None:None+all+web"  # type: ignore[union-attr]
    assert box.get("fs__write").description == "fs__write"
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        box.get("nope")
    assert "fs__read" in box and len(box) == 3 and [t.name for t in box] == list(box.names)


def test_an_adapter_cannot_rename_or_return_something_else() -> None:
    (renamed,) = adapt_tools([tool("keep")], [("*", lambda t: t.evolve(name="other"))])
    assert renamed.name == "keep"
    with pytest.raises(TypeError, match="the adapter for '\\*' returned str"):
        adapt_tools([tool("x")], [("*", cast(Any, lambda t: "nope"))])
    with pytest.raises(ValueError, match="non-empty string"):
        Toolbox().adapt("", lambda t: t)


def test_collisions_name_both_sources() -> None:
    box = Toolbox([tool("dup", "function m.one")], providers=[Provider(tool("dup", "MCP x"))])
    with pytest.raises(
        ToolNameError, match=r"two tools are named 'dup': function m\.one and MCP x"
    ):
        _ = box.tools


def test_providers_are_read_live_and_cached_while_unchanged() -> None:
    provider = Provider(tool("p__one"))
    box = Toolbox(providers=[provider], adapters={"*": tagging("x")})
    first = box.tools
    assert box.tools is first  # unchanged provider: same adapted tools
    provider.current = (*provider.current, tool("p__two"))
    assert box.names == ("p__one", "p__two")
    box.add(tool("local"))
    assert list(box.names) == ["local", "p__one", "p__two"]


def test_select_and_allowed_tools() -> None:
    tools = [tool("gh__issue"), tool("gh__pr"), tool("fs__read")]
    assert select_tools(tools, None) == tuple(tools)
    assert [t.name for t in select_tools(tools, ["gh__*"])] == ["gh__issue", "gh__pr"]
    assert [t.name for t in select_tools(tools, ["fs__read", "gh__pr"])] == ["gh__pr", "fs__read"]
    assert select_tools(tools, []) == ()
    with pytest.raises(KeyError, match="'nope__\\*'"):
        select_tools(tools, ["gh__*", "nope__*"], strict=True)
    with pytest.raises(TypeError, match="not a string"):
        select_tools(tools, "gh__*")


async def test_for_skill_combines_own_and_allowed_tools_with_context() -> None:
    own = function_tool(lambda: "own", name="own_tool")
    box = Toolbox([tool("gh__issue"), tool("fs__read")], context="ctx-value")
    box.adapt("*", tagging("a"))
    skill = define_skill(
        "triage",
        description="Triage",
        tags=["t"],
        examples=["e"],
        tools=[own],
        allowed_tools=["gh__*"],
    )
    tools = box.for_skill(skill)
    assert [t.name for t in tools] == ["own_tool", "gh__issue"]
    assert (await tools[0].call()).text == "own+a"  # type: ignore[union-attr]
    everything = define_skill(
        "all", description="d", tags=["t"], examples=["e"], handler=cast(Any, print)
    )
    assert [t.name for t in box.for_skill(everything)] == ["gh__issue", "fs__read"]
    clash = define_skill(
        "clash", description="d", tags=["t"], examples=["e"], tools=[tool("fs__read", "own")]
    )
    with pytest.raises(ToolNameError, match="'fs__read': own and test"):
        box.for_skill(clash)

    result = await box.call("gh__issue", {}, skill_id="triage", skill_input={"q": 1})
    assert result.text == "gh__issue:triage:ctx-value+a"  # type: ignore[union-attr]
    assert box.context_for(skill_id="s") == ToolContext(skill_id="s", custom="ctx-value")
    state = {"value": 1}
    box2 = Toolbox(context_source=lambda: state["value"])
    state["value"] = 2
    assert box2.context == 2
    box2.context = 3
    assert box2.context == 3
    with pytest.raises(TypeError, match="expected a Tool"):
        box2.add("x")  # type: ignore[arg-type]
