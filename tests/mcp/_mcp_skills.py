"""The skills the MCP server tests expose (shared by the stdio script and in-process servers).

* ``echo`` - replies with a Message (``{"text": string}`` required).
* ``add`` - a completed Task whose artifact holds the sum.
* ``lookup`` - an error Task for an unknown city (an operational problem).
* ``explode`` - raises (an unexpected exception); declares no inputs.
* ``miscount`` - returns data that breaks its own output schema.
* ``book`` - asks for a date (``input-required``) until a continuation gives one.
* ``login`` - needs authorization (``auth-required``) first; declares no inputs.
* ``abandon`` - a canceled Task.

``CALLS`` counts the handler calls per skill (meaningful in-process only).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from a2a_models import DataPart, Message, Task, TaskState
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


async def _book(args: dict[str, Any], ctx: SkillContext) -> Task:
    CALLS["book"] += 1
    date = args.get("date")
    if ctx.message is not None:
        answer = next(p.data for p in ctx.message.parts if isinstance(p, DataPart))
        date = answer.get("date")  # type: ignore[union-attr]
    if date is None:
        asked = ctx.task or Task.submitted(Message.user(args["city"]))
        return asked.with_status(TaskState.INPUT_REQUIRED, Message.agent("Which date?"))
    # A new Task, as most handlers build one: the server keeps the continued task's ids.
    return success_task(f"{args['city']} on {date}", data={"city": args["city"], "date": date})


async def _login(args: dict[str, Any], ctx: SkillContext) -> Task:
    CALLS["login"] += 1
    if ctx.task is None:
        started = Task.submitted(Message.user(args["text"]))
        return started.with_status(
            TaskState.AUTH_REQUIRED, Message.agent("Sign in at https://auth.example/device")
        )
    assert ctx.message is not None
    return success_task(f"signed in ({ctx.message.text}) for {ctx.input['text']}")


async def _abandon(args: dict[str, Any], ctx: SkillContext) -> Task:
    CALLS["abandon"] += 1
    return Task.submitted(Message.user(args["text"])).with_status(TaskState.CANCELED)


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
BOOK = define_skill(
    "book",
    description="Books a trip; asks for the date when none is given.",
    tags=["travel"],
    examples=["book Oslo"],
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
        "required": ["city", "date"],
    },
    handler=_book,
)
LOGIN = define_skill(
    "login",
    description="Needs the caller to sign in first.",
    tags=["auth"],
    examples=["log in"],
    handler=_login,
)
ABANDON = define_skill(
    "abandon",
    description="Gives up (a canceled task).",
    tags=["test"],
    examples=["give up"],
    handler=_abandon,
)
SKILLS = (ECHO, ADD, LOOKUP, EXPLODE, MISCOUNT, BOOK, LOGIN, ABANDON)
