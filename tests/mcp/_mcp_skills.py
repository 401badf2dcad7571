"""The skills the MCP server tests expose (shared by the stdio script and in-process servers).

* ``echo`` - replies with a Message (``{"text": string}`` required).
* ``add`` - a completed Task whose artifact holds the sum.
* ``lookup`` - an error Task for an unknown city (an operational problem).
* ``explode`` - raises (an unexpected exception); declares no inputs.
* ``miscount`` - returns data that breaks its own output schema.

``CALLS`` counts the handler calls per skill (meaningful in-process only).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from a2a_models import Message, Task
from a2a_models.tools import SkillContext, define_skill, error_task, success_task

AGENT_NAME = "Test Agent <MCP>"
TAG_DATE = "2024-05-01"
CALLS: Counter[str] = Counter()


async def _echo(args: dict[str, Any], ctx: SkillContext) -> Message:
    CALLS["echo"] += 1
    return Message.agent(f"echo: {args['text']}")


async def _add(args: dict[str, Any], ctx: SkillContext) -> Task:
    CALLS["add"] += 1
    return success_task(f"{args['a'] + args['b']}", data={"sum": args["a"] + args["b"]})


async def _lookup(args: dict[str, Any], ctx: SkillContext) -> Task:
    CALLS["lookup"] += 1
    if args["city"] != "Oslo":
        return error_task(f"unknown city {args['city']!r}")
    return success_task("59.91N 10.75E")


async def _miscount(args: dict[str, Any], ctx: SkillContext) -> Task:
    CALLS["miscount"] += 1
    return success_task("three", data={"count": "three"})


async def _explode(args: dict[str, Any], ctx: SkillContext) -> Task:
    CALLS["explode"] += 1
    raise RuntimeError("kaboom")


ECHO = define_skill(
    "echo",
    name="Echo",
    description="Repeats the text.",
    tags=["text", "a<b & c"],
    examples=["echo hello", "say <this>"],
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"],
        "additionalProperties": False,
    },
    handler=_echo,
)
ADD = define_skill(
    "add",
    description="Adds two numbers.",
    tags=["math"],
    examples=["add 2 and 3"],
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    output_schema={
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    },
    handler=_add,
)
LOOKUP = define_skill(
    "lookup",
    description="Finds a city's coordinates.",
    tags=["geo"],
    examples=["where is Oslo"],
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    handler=_lookup,
)
EXPLODE = define_skill(
    "explode",
    description="Always fails unexpectedly.",
    tags=["test"],
    examples=["explode"],
    handler=_explode,
)
MISCOUNT = define_skill(
    "miscount",
    description="Counts, wrongly typed.",
    tags=["test"],
    examples=["count"],
    input_schema={"type": "object", "properties": {"of": {"type": "string"}}},
    output_schema={
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
    },
    handler=_miscount,
)
SKILLS = (ECHO, ADD, LOOKUP, EXPLODE, MISCOUNT)
