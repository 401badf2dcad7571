"""The uniform Tool: validation before the call, results, local function tools."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, TypedDict

import pytest

from a2a_models import Message, Part, Task, TaskState
from a2a_models.tools import (
    Tool,
    ToolContext,
    ToolInputError,
    ToolNameError,
    ToolResult,
    function_tool,
    schema_from_type,
    success_task,
)


def make(fn: Any = None, **fields: Any) -> Tool:
    async def default(args: dict[str, Any], ctx: ToolContext) -> Any:
        return args

    fields.setdefault("name", "t")
    fields.setdefault(
        "input_schema",
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    )
    return Tool(fn=fn or default, source="test", **fields)


async def test_arguments_are_validated_before_the_function_runs() -> None:
    calls: list[Any] = []

    async def fn(args: dict[str, Any], ctx: ToolContext) -> str:
        calls.append((args, ctx))
        return "ok"

    tool = make(fn)
    with pytest.raises(ToolInputError) as info:
        await tool.call({"n": "x"})
    assert str(info.value) == "invalid arguments for tool 't': $.n: 'x' is not of type 'integer'"
    assert info.value.tool == "t" and info.value.problems == ("$.n: 'x' is not of type 'integer'",)
    with pytest.raises(ToolInputError, match="'n' is a required property"):
        await tool.call(None)
    assert calls == []
    assert tool.problems({"n": 1}) == []
    result = await tool.call({"n": 1})
    assert result == ToolResult.of("ok")
    assert calls[0][1] == ToolContext()


async def test_return_values_become_tool_outputs() -> None:
    task = success_task("done")
    for value, expected in [
        (None, ToolResult()),
        ("text", ToolResult(parts=(Part.text("text"),))),
        ({"a": 1}, ToolResult(data={"a": 1})),
        ([1, 2], ToolResult(data=[1, 2])),
        (Part.data({"x": 1}), ToolResult(parts=(Part.data({"x": 1}),))),
    ]:

        async def fn(args: dict[str, Any], ctx: ToolContext, value: Any = value) -> Any:
            return value

        assert await make(fn).call({"n": 1}) == expected
    for passthrough in (task, Message.agent("hi"), ToolResult.error("bad")):

        async def fn2(args: dict[str, Any], ctx: ToolContext, value: Any = passthrough) -> Any:
            return value

        assert await make(fn2).call({"n": 1}) is passthrough

    async def bad(args: dict[str, Any], ctx: ToolContext) -> Any:
        return object()

    with pytest.raises(TypeError, match="a tool returned object"):
        await make(bad).call({"n": 1})


def test_tool_result_text_rendering() -> None:
    result = ToolResult(
        parts=(Part.text("hello"), Part.data({"k": "v"}), Part.file(url="https://x/y.png")),
        data={"n": 1},
    )
    assert result.text == "hello"
    # Text and structured data say the same thing: the model gets the structured form once.
    assert result.as_text() == '[file: https://x/y.png (unknown type)]\n{"n": 1}'
    assert result.as_text("both") == (
        'hello\n{"k": "v"}\n[file: https://x/y.png (unknown type)]\n{"n": 1}'
    )
    error = ToolResult.error("it broke")
    assert error.is_error and error.text == "it broke"


def test_definition_checks() -> None:
    with pytest.raises(ToolNameError, match="test: invalid tool name 'bad name'"):
        make(name="bad name")
    with pytest.raises(ValueError, match="must be an object schema"):
        make(input_schema={"type": "string"})
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        make(input_schema={"type": "object", "properties": {"n": {"type": "nope"}}})
    tool = make()
    renamed = tool.evolve(name="other")
    assert renamed.name == "other" and renamed.fn is tool.fn


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (r"^(?<year>\d{4})$", "2024", "24"),  # an ECMA-262 named group
        (r"^(?<!x)a(?<=a)$", "a", "b"),  # lookbehinds stay lookbehinds
        (r"^\(?<a>$", "(<a>", "<b>"),  # an escaped parenthesis is no group
        (r"^\p{L}+$", "any", None),  # a property escape: valid, not checked here
    ],
)
def test_patterns_are_ecma_262_regexes(pattern: str, good: str, bad: str | None) -> None:
    tool = make(input_schema={"type": "object", "properties": {"s": {"pattern": pattern}}})
    assert tool.problems({"s": good}) == []
    if bad is not None:
        assert tool.problems({"s": bad}) == [f"$.s: {bad!r} does not match {pattern!r}"]


@pytest.mark.parametrize("pattern", ["([", r"\p{L", r"(?<year\d)"])
def test_malformed_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="is not a 'regex'"):
        make(input_schema={"type": "object", "properties": {"s": {"pattern": pattern}}})
    with pytest.raises(ValueError, match="is not a 'regex'"):
        make(input_schema={"type": "object", "patternProperties": {pattern: {}}})


class Opaque:
    pass


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: float
    y: float


async def test_function_tool_derives_the_schema_from_type_hints() -> None:
    seen: list[ToolContext] = []

    @function_tool
    async def plot(
        points: list[Point],
        color: Color,
        label: Annotated[str, "The caption"] = "",
        mode: Literal["fast", "nice"] = "nice",
        scale: float | None = None,
        tags: dict[str, int] | None = None,
        *,
        ctx: ToolContext,
    ) -> dict[str, Any]:
        """Plots points.

        More details that are not part of the description.
        """
        seen.append(ctx)
        return {"n": len(points), "color": color, "label": label, "mode": mode}

    assert plot.name == "plot" and plot.description == "Plots points."
    assert (
        plot.source
        == f"function {__name__}.test_function_tool_derives_the_schema_from_type_hints.<locals>.plot"
    )
    schema = plot.input_schema
    assert schema["required"] == ["points", "color"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert "ctx" not in props
    assert props["points"] == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
            "additionalProperties": False,
        },
    }
    assert props["color"] == {"enum": ["red", "blue"]}
    assert props["label"] == {"type": "string", "description": "The caption", "default": ""}
    assert props["mode"] == {"type": "string", "enum": ["fast", "nice"], "default": "nice"}
    assert props["scale"] == {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None}
    assert props["tags"]["anyOf"][0] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }

    context = ToolContext(skill_id="s", skill_input={"q": 1}, custom="c")
    result = await plot.call({"points": [{"x": 1, "y": 2}], "color": "red"}, context)
    assert result == ToolResult(data={"n": 1, "color": "red", "label": "", "mode": "nice"})
    assert seen == [context]
    with pytest.raises(ToolInputError, match=r"\$.color: 'green' is not one of"):
        await plot.call({"points": [], "color": "green"})


async def test_function_tool_options_and_sync_functions() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @function_tool(name="search", description="Searches.", input_schema=schema)
    def find(q: str) -> Task:
        return success_task(f"found {q}")

    assert (find.name, find.description, find.input_schema) == ("search", "Searches.", schema)
    task = await find.call({"q": "x"})
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED

    with pytest.raises(TypeError, match="not a plain keyword parameter"):
        function_tool(lambda *args: None)

    def takes(value: Opaque) -> None: ...

    with pytest.raises(TypeError, match="parameter 'value': cannot derive a JSON Schema"):
        function_tool(takes)

    def unresolvable(value: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(
        TypeError, match=r"cannot read the type hints of .*'Missing' is not defined"
    ):
        function_tool(unresolvable)


def test_schema_from_type_edge_cases() -> None:
    assert schema_from_type(Any) == {}
    assert schema_from_type(bool) == {"type": "boolean"}
    assert schema_from_type(tuple[int, ...]) == {"type": "array", "items": {"type": "integer"}}
    assert schema_from_type(tuple[int, str]) == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "items": False,
        "minItems": 2,
    }
    assert schema_from_type(set[str]) == {
        "type": "array",
        "items": {"type": "string"},
        "uniqueItems": True,
    }
    assert schema_from_type(Literal[1, "a"]) == {"enum": [1, "a"]}
    with pytest.raises(TypeError, match="keys are strings"):
        schema_from_type(dict[int, str])


def test_a_schema_with_a_ref_that_cannot_be_resolved_leaves_the_arguments_unchecked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A server's schema pointing nowhere made every call fail with jsonschema's
    # internal _WrappedReferencingError (and a traceback per call).
    tool = make(
        input_schema={
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/missing"}, "b": {"type": "integer"}},
        }
    )
    assert tool.problems({"a": 1, "b": "x"}) == []
    assert tool.problems({"a": 2}) == []
    warnings = [r.getMessage() for r in caplog.records if r.name == "a2a_models.tools"]
    assert warnings == [
        "arguments not checked: the input schema's $ref '/$defs/missing' cannot be resolved"
    ]
