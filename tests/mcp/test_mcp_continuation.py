"""Continuing a skill's task over MCP: ``input-required`` and ``auth-required``.

A host calls a skill tool, gets the question with the task's ids (text and
``structuredContent``), calls the tool again with ``taskId`` (and
``contextId``) and its answer, and gets the completed task - over stdio (the
project's MCP server as a subprocess) and streamable HTTP, with the SDK's
client (which validates ``structuredContent`` against the listed
``outputSchema`` itself). A continuation that cannot be (unknown task, wrong
tool or context, a task that does not wait) is an error result that says why.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from _mcp_skills import BOOK, CALLS
from mcp import Client
from test_mcp_server import TIMEOUT, Background

from a2a_models import DataPart, Message, Role, Task, TaskState, codec
from a2a_models.adapters.mcp import INTERRUPTION_SCHEMA, MCPSkillServer, from_call_result
from a2a_models.tools import SkillContext, SkillDefinitionError, define_skill, success_task

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["stdio", "http"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with Background(str(request.param)) as c:
        yield c


def _text(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


def _task(result: types.CallToolResult) -> Task:
    item = result.content[-1]
    assert isinstance(item, types.EmbeddedResource)
    assert isinstance(item.resource, types.TextResourceContents)
    return codec.decode(Task, item.resource.text, "1.0")


def _error(result: types.CallToolResult) -> str:
    assert result.is_error
    assert len(result.content) == 1
    return _text(result)


async def _ask(client: Client, city: str = "Oslo") -> tuple[str, str]:
    asked = await client.call_tool("book", {"city": city})
    assert not asked.is_error
    sc = asked.structured_content
    assert sc is not None
    return sc["taskId"], sc["contextId"]


async def test_tools_take_the_continuation_ids_and_advertise_both_result_shapes(
    client: Client,
) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    book = tools["book"]
    assert book.input_schema["required"] == ["city"]  # the ids are optional
    assert set(book.input_schema["properties"]) == {"city", "date", "taskId", "contextId"}
    assert book.input_schema["additionalProperties"] is False
    assert book.output_schema == {
        "type": "object",
        "anyOf": [BOOK.output_schema, INTERRUPTION_SCHEMA],
    }
    login = tools["login"]  # no declared inputs: {"text"} plus the ids
    assert login.input_schema["required"] == ["text"]
    assert set(login.input_schema["properties"]) == {"text", "taskId", "contextId"}
    assert login.output_schema is None


async def test_input_required_then_continued_to_completion(client: Client) -> None:
    asked = await client.call_tool("book", {"city": "Oslo"})
    assert not asked.is_error
    waiting = _task(asked)
    assert waiting.state is TaskState.INPUT_REQUIRED
    ids = {"taskId": waiting.id, "contextId": waiting.context_id}
    assert asked.structured_content == {
        **ids,
        "state": "TASK_STATE_INPUT_REQUIRED",
        "message": "Which date?",
    }
    assert _text(asked) == (
        "Which date?\n\nThe task is waiting for your answer (input-required). To answer, "
        f"call this tool again with {json.dumps(ids)} and the answer in the tool's arguments."
    )
    # An answer without the date: the skill asks again, same task.
    again = await client.call_tool("book", {"taskId": waiting.id, "city": "Bergen"})
    assert again.structured_content is not None
    assert again.structured_content["taskId"] == waiting.id
    assert again.structured_content["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = await client.call_tool("book", {**ids, "date": "2026-12-24"})
    assert not done.is_error
    assert done.structured_content == {"city": "Oslo", "date": "2026-12-24"}
    assert _text(done) == 'Oslo on 2026-12-24\n{"city": "Oslo", "date": "2026-12-24"}'
    task = _task(done)
    assert (task.id, task.context_id, task.state) == (
        waiting.id,
        waiting.context_id,
        TaskState.COMPLETED,
    )
    # the handler's request, then question, answer, question, answer (the replies as data)
    assert [m.role for m in task.history] == [Role.USER] + [Role.AGENT, Role.USER] * 2
    assert [m.text for m in task.history[1::2]] == ["Which date?"] * 2
    assert [m.parts for m in task.history[2::2]] == [
        (DataPart({"city": "Bergen"}),),
        (DataPart({"date": "2026-12-24"}),),
    ]
    assert {m.task_id for m in task.history} == {waiting.id}
    # It is over: continuing it again says so.
    assert _error(await client.call_tool("book", {**ids, "date": "2027-01-01"})) == (
        f"[TaskNotWaiting]: task {waiting.id!r} is completed: only a task waiting for "
        "the caller (input-required or auth-required) can be continued"
    )


async def test_auth_required_then_continued(client: Client) -> None:
    asked = await client.call_tool("login", {"text": "my mail"})
    assert not asked.is_error
    sc = asked.structured_content
    assert sc is not None and sc["state"] == "TASK_STATE_AUTH_REQUIRED"
    ids = {"taskId": sc["taskId"], "contextId": sc["contextId"]}
    assert _text(asked) == (
        "Sign in at https://auth.example/device\n\nThe task needs authorization to go on "
        "(auth-required). Once it is given, call this tool again with "
        f"{json.dumps(ids)} to continue the task."
    )
    done = await client.call_tool("login", {"taskId": sc["taskId"], "text": "done"})
    assert not done.is_error
    assert _text(done) == "signed in (done) for my mail"
    assert _task(done).id == sc["taskId"]


async def test_continuations_that_cannot_be_are_error_results(client: Client) -> None:
    task_id, context_id = await _ask(client)
    unknown = _error(await client.call_tool("book", {"taskId": "nope", "date": "x"}))
    assert unknown == (
        "[UnknownTask]: there is no task 'nope' to continue: this server did not start it, "
        "or no longer remembers it (it keeps its last 1000 tasks)"
    )
    wrong_context = _error(
        await client.call_tool("book", {"taskId": task_id, "contextId": "other", "date": "x"})
    )
    assert wrong_context == (
        f"[InvalidContinuation]: task {task_id!r} belongs to context {context_id!r}, not 'other'"
    )
    other_tool = _error(await client.call_tool("login", {"taskId": task_id, "text": "x"}))
    assert other_tool == (
        f"[InvalidContinuation]: task {task_id!r} belongs to the tool 'book'; "
        "continue it with that tool, not 'login'"
    )
    alone = _error(await client.call_tool("book", {"city": "Oslo", "contextId": context_id}))
    assert alone.startswith("[InvalidContinuation]: contextId continues a task; give")
    typed = _error(await client.call_tool("book", {"taskId": 5}))
    assert typed == "Invalid arguments for 'book': $.taskId: 5 is not of type 'string'"
    # None of these touched the task: it still waits, and continues.
    done = await client.call_tool("book", {"taskId": task_id, "date": "2026-01-02"})
    assert done.structured_content == {"city": "Oslo", "date": "2026-01-02"}


async def test_failed_and_canceled_tasks_are_errors_and_cannot_be_continued(
    client: Client,
) -> None:
    failed = await client.call_tool("lookup", {"city": "Atlantis"})
    assert failed.is_error
    failed_id = _task(failed).id
    refused = _error(await client.call_tool("lookup", {"taskId": failed_id, "city": "Oslo"}))
    assert refused.startswith(f"[TaskNotWaiting]: task {failed_id!r} is failed: ")
    canceled = await client.call_tool("abandon", {"text": "go"})
    assert canceled.is_error
    assert _text(canceled) == "The task ended canceled."
    assert _task(canceled).state is TaskState.CANCELED


# ----------------------------------------------------------------------------- in process


async def test_handler_gets_the_task_and_the_reply_and_the_first_input() -> None:
    seen: list[SkillContext] = []

    async def handler(args: dict[str, Any], ctx: SkillContext) -> Task:
        seen.append(ctx)
        if ctx.task is None:
            return Task.submitted().with_status(TaskState.INPUT_REQUIRED, Message.agent("Name?"))
        return success_task(f"hello {ctx.message.text if ctx.message else ''}")

    skill = define_skill(
        "greet", description="Greets.", tags=["t"], examples=["greet"], handler=handler
    )
    server = MCPSkillServer([skill], name="greeter")
    asked = await server.call("greet", {"text": "start"})
    task_id = asked.structured_content["taskId"]  # type: ignore[index]
    done = await server.call("greet", {"taskId": task_id, "text": "Ada"})
    assert _text(done) == "hello Ada"
    first, second = seen
    assert (first.task, first.message) == (None, None)
    assert second.input == {"text": "start"}  # the input of the call that started it
    assert second.message is not None and second.message.text == "Ada"
    assert second.task is not None and second.task.id == task_id
    assert [m.text for m in second.task.history] == ["Name?", "Ada"]


async def test_the_server_remembers_a_bounded_number_of_tasks() -> None:
    server = MCPSkillServer([BOOK], name="bounded", remembered_tasks=2)
    before = CALLS["book"]
    ids = []
    for city in ("A", "B", "C"):
        asked = await server.call("book", {"city": city})
        ids.append(asked.structured_content["taskId"])  # type: ignore[index]
    forgotten = await server.call("book", {"taskId": ids[0], "date": "d"})
    assert _error(forgotten).startswith(f"[UnknownTask]: there is no task {ids[0]!r}")
    assert "it keeps its last 2 tasks" in _text(forgotten)
    for task_id, city in zip(ids[1:], "BC", strict=True):
        done = await server.call("book", {"taskId": task_id, "date": "d"})
        assert done.structured_content == {"city": city, "date": "d"}
    assert CALLS["book"] - before == 5  # 3 asks + 2 continuations; the refused one ran nothing


async def test_a_task_being_continued_refuses_a_second_continuation() -> None:
    release = asyncio.Event()
    entered = asyncio.Event()

    async def handler(args: dict[str, Any], ctx: SkillContext) -> Task:
        if ctx.task is None:
            return Task.submitted().with_status(TaskState.INPUT_REQUIRED, Message.agent("?"))
        entered.set()
        await release.wait()
        return success_task("ok")

    skill = define_skill("slow", description="Slow.", tags=["t"], examples=["s"], handler=handler)
    server = MCPSkillServer([skill], name="slow")
    task_id = (await server.call("slow", {"text": "go"})).structured_content["taskId"]  # type: ignore[index]
    first = asyncio.create_task(server.call("slow", {"taskId": task_id, "text": "a"}))
    await entered.wait()
    second = await server.call("slow", {"taskId": task_id, "text": "b"})
    assert (
        _error(second) == f"[TaskNotWaiting]: task {task_id!r} is being continued by another call"
    )
    release.set()
    assert _text(await first) == "ok"


async def test_a_skill_may_not_declare_the_continuation_ids() -> None:
    skill = define_skill(
        "clash",
        description="Clashes.",
        tags=["t"],
        examples=["c"],
        input_schema={"type": "object", "properties": {"taskId": {"type": "string"}}},
        handler=lambda args, ctx: success_task("x"),  # type: ignore[arg-type,return-value]
    )
    with pytest.raises(SkillDefinitionError, match="'taskId' are reserved: over MCP they"):
        MCPSkillServer([skill], name="clash")


async def test_an_a2a_models_host_gets_the_waiting_task_and_continues_it() -> None:
    # What the MCP hub gives an a2a-models agent calling this tool (from_call_result).
    server = MCPSkillServer([BOOK], name="hub view")
    async with Client(server.lowlevel, read_timeout_seconds=TIMEOUT) as client:
        waiting = from_call_result(await client.call_tool("book", {"city": "Rome"}))
        assert isinstance(waiting, Task) and waiting.state is TaskState.INPUT_REQUIRED
        done = from_call_result(
            await client.call_tool("book", {"taskId": waiting.id, "date": "2026-05-05"})
        )
    assert isinstance(done, Task) and done.id == waiting.id
    assert done.state is TaskState.COMPLETED


async def test_an_output_schema_with_references_still_resolves_once_advertised() -> None:
    # The SDK client validates structuredContent against the listed outputSchema; a
    # "#/$defs/..." reference must still resolve inside the anyOf.
    async def handler(args: dict[str, Any], ctx: SkillContext) -> Task:
        if ctx.task is None:
            return Task.submitted().with_status(TaskState.INPUT_REQUIRED, Message.agent("?"))
        return success_task(data={"point": {"x": 1, "y": 2}})

    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"point": {"type": "object", "required": ["x", "y"]}},
        "properties": {"point": {"$ref": "#/$defs/point"}},
        "required": ["point"],
    }
    skill = define_skill(
        "where",
        description="Where.",
        tags=["t"],
        examples=["w"],
        output_schema=schema,
        handler=handler,
    )
    server = MCPSkillServer([skill], name="refs")
    (tool,) = server.tools
    assert tool.output_schema is not None
    assert tool.output_schema["$schema"] == schema["$schema"]
    nested = tool.output_schema["anyOf"][0]
    assert nested == {**schema, "$id": "urn:a2a-models:skill-output"}
    async with Client(server.lowlevel, read_timeout_seconds=TIMEOUT) as client:
        asked = await client.call_tool("where", {"text": "here"})
        assert asked.structured_content is not None
        done = await client.call_tool(
            "where", {"taskId": asked.structured_content["taskId"], "text": "go"}
        )
    assert not done.is_error
    assert done.structured_content == {"point": {"x": 1, "y": 2}}


@pytest.mark.parametrize("bad", [0, True, 1.5])
async def test_remembered_tasks_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="remembered_tasks must be"):
        MCPSkillServer([BOOK], name="x", remembered_tasks=bad)
