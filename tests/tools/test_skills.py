"""Skill definitions, result helpers and the card built from skills."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    DataPart,
    Message,
    Task,
    TaskState,
    TextPart,
    codec,
)
from a2a_models.errors import DecodeError
from a2a_models.schema import validate_wire
from a2a_models.tools import (
    SkillContext,
    SkillDefinition,
    SkillDefinitionError,
    ToolContext,
    ToolInputError,
    build_card,
    card_with_skills,
    define_skill,
    error_task,
    function_tool,
    success_task,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


async def weather(args: dict[str, Any], ctx: SkillContext) -> Task:
    return success_task(f"sunny in {args['city']}")


def skill(**changes: Any) -> SkillDefinition:
    fields: dict[str, Any] = {
        "description": "The weather in a city.",
        "tags": ["weather"],
        "examples": ["weather in Oslo"],
        "input_schema": SCHEMA,
        "handler": weather,
    }
    fields.update(changes)
    return define_skill(fields.pop("id", "get_weather"), **fields)


def test_definition_and_its_agent_skill() -> None:
    s = skill(input_modes=["application/json"], output_modes=["text/plain"])
    assert s.name == "Get weather"
    assert s.agent_skill == AgentSkill(
        id="get_weather",
        name="Get weather",
        description="The weather in a city.",
        tags=("weather",),
        examples=("weather in Oslo",),
        input_modes=("application/json",),
        output_modes=("text/plain",),
    )
    assert skill(name="Weather").agent_skill.name == "Weather"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tags": []}, "skill 'get_weather': tags: must not be empty"),
        ({"examples": []}, "skill 'get_weather': examples: must not be empty"),
        ({"tags": ["ok", ""]}, "skill 'get_weather': tags: item 1 must be a non-empty string"),
        ({"description": " "}, "skill 'get_weather': description: must be a non-empty string"),
        ({"id": "get weather"}, "skill 'get weather': id: must start with a letter"),
        ({"id": ""}, "skill '': id: must be a non-empty string"),
        ({"input_schema": {"type": "string"}}, "input_schema: must be an object schema"),
        ({"input_schema": {"type": "array", "items": {}}}, "not 'array'"),
        ({"input_schema": {"enum": ["a", "b"]}}, "not an enum schema"),
        ({"input_schema": {"const": 1}}, "not an const schema"),
        ({"input_schema": {"properties": {}}}, 'the root needs "type": "object"'),
        ({"input_schema": "object"}, "input_schema: expected a JSON Schema object"),
        (
            {"input_schema": {"type": "object", "properties": {"x": {"type": 3}}}},
            "input_schema: not a valid JSON Schema",
        ),
        ({"output_schema": {"type": "nope"}}, "output_schema: not a valid JSON Schema"),
        ({"handler": None}, "handler: a skill needs a handler, or tools"),
        ({"handler": "not callable"}, "handler: must be an async callable"),
        ({"tools": ["x"]}, "tools: item 0 must be a Tool"),
    ],
)
def test_invalid_definitions_name_the_skill_and_field(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(SkillDefinitionError) as info:
        skill(**changes)
    assert message in str(info.value)
    assert str(info.value).startswith("skill ")


def test_a_skill_fulfilled_by_tools_needs_no_handler() -> None:
    lookup = function_tool(lambda city: city, name="lookup")
    assert skill(handler=None, tools=[lookup]).tools == (lookup,)
    assert skill(handler=None, allowed_tools=["geo__*"]).allowed_tools == ("geo__*",)


async def test_run_validates_then_calls_the_handler() -> None:
    seen: list[SkillContext] = []

    @function_tool
    def coords(city: str, ctx: ToolContext) -> dict[str, Any]:
        """Coordinates of a city."""
        return {"city": city, "asked": ctx.skill_input, "by": ctx.skill_id, "ctx": ctx.custom}

    async def handler(args: dict[str, Any], ctx: SkillContext) -> Message:
        seen.append(ctx)
        result = await ctx.call_tool("coords", {"city": args["city"]})
        return Message.agent(str(result.data))  # type: ignore[union-attr]

    s = skill(handler=handler)
    message = await s.run({"city": "Oslo"}, custom="C", tools=[coords])
    assert isinstance(message, Message)
    assert (
        message.text
        == "{'city': 'Oslo', 'asked': {'city': 'Oslo'}, 'by': 'get_weather', 'ctx': 'C'}"
    )
    assert seen[0].input == {"city": "Oslo"} and seen[0].tool_context.custom == "C"
    with pytest.raises(KeyError, match="skill 'get_weather' has no tool named 'nope'"):
        await seen[0].call_tool("nope")
    with pytest.raises(ToolInputError, match="invalid arguments for skill 'get_weather'"):
        await s.run({})
    assert len(seen) == 1

    async def wrong(args: dict[str, Any], ctx: SkillContext) -> Any:
        return "text"

    with pytest.raises(TypeError, match="returned str, expected a Task or a Message"):
        await skill(handler=wrong).run({"city": "x"})
    with pytest.raises(NotImplementedError, match="no handler"):
        await skill(handler=None, allowed_tools=["*"]).run({"city": "x"})


def test_success_and_error_tasks() -> None:
    done = success_task("4", data={"sum": 4}, message="added", artifact_name="sum", context_id="c1")
    assert done.state is TaskState.COMPLETED and done.context_id == "c1"
    (artifact,) = done.artifacts
    assert artifact.name == "sum" and artifact.parts[0] == TextPart("4")
    assert isinstance(artifact.parts[1], DataPart) and artifact.parts[1].data == {"sum": 4}
    assert done.status.message is not None and done.status.message.text == "added"
    assert done.status.message.task_id == done.id
    assert success_task().artifacts == ()
    assert success_task(data=None).artifacts[0].parts == (DataPart(None),)

    failed = error_task("no such city", data={"city": "X"}, task_id="t1")
    assert failed.id == "t1" and failed.state is TaskState.FAILED
    assert failed.status.message is not None and failed.status.message.text == "no such city"
    assert failed.status.message.parts[1] == DataPart({"city": "X"})
    assert error_task("nope", state=TaskState.REJECTED).state is TaskState.REJECTED
    with pytest.raises(ValueError, match="FAILED or REJECTED"):
        error_task("x", state=TaskState.COMPLETED)
    with pytest.raises(ValueError, match="non-empty reason"):
        error_task("")
    for task in (done, failed):
        validate_wire(codec.to_wire(task, "1.0"), Task)


def test_build_card_from_skill_definitions() -> None:
    other = skill(id="forecast", examples=["forecast for Bergen"])
    card = build_card(
        [skill(), other],
        name="Weather agent",
        description="Weather skills",
        version="1.0.0",
        url="https://weather.example/a2a",
        capabilities=AgentCapabilities(streaming=True),
    )
    assert [s.id for s in card.skills] == ["get_weather", "forecast"]
    assert card.supported_interfaces[0].url == "https://weather.example/a2a"
    wire = codec.to_wire(card, "1.0")
    validate_wire(wire, AgentCard)
    assert "handler" not in str(wire) and "inputSchema" not in str(wire)
    with pytest.raises(SkillDefinitionError, match="skill 'get_weather': id: two skills"):
        build_card([skill(), skill()], name="n", description="d", version="1", url="https://x")
    with pytest.raises(ValueError, match="needs a url or supported_interfaces"):
        build_card([skill()], name="n", description="d", version="1")

    base = AgentCard(
        name="n",
        description="d",
        version="1",
        skills=[AgentSkill(id="s", name="s", description="a skill", tags=["t"])],
        supported_interfaces=[AgentInterface(url="https://x", protocol_binding="JSONRPC")],
    )
    assert [s.id for s in card_with_skills(base, [other]).skills] == ["forecast"]


def test_the_card_is_checked_against_the_a2a_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    import a2a_models.schema

    checked: list[Any] = []

    def refuse(value: Any, tp: Any, *args: Any, **kwargs: Any) -> None:
        checked.append((value["name"], tp))
        raise DecodeError("$.skills[0]", "refused for the test")

    monkeypatch.setattr(a2a_models.schema, "validate_wire", refuse)
    with pytest.raises(DecodeError, match="refused for the test"):
        build_card([skill()], name="n", description="d", version="1", url="https://x")
    assert checked == [("n", AgentCard)]
