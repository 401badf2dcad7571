"""Token usage on the task: the LLM adapter stores it in the task's metadata
(``RequestContext.update_task_metadata``), accumulated over the task's turns, so
SendMessage, GetTask and ListTasks results show it, from every store, and the
status update ending each turn carries the same value to stream subscribers;
``a2a-models send`` (streaming or not) and ``get`` show it."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from a2a_models import ListTasksRequest, Message, Task, TaskStatusUpdateEvent
from a2a_models.adapters.llm import ARTIFACT_TOOL, ASK_USER_TOOL, START_TASK_TOOL
from a2a_models.client import InProcessClient
from a2a_models.observability import USAGE_METADATA_KEY, USAGE_TURNS_KEPT, add_usage
from a2a_models.server import AgentServer, InMemoryTaskStore, TaskStore

from .conftest import ModelFactory
from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn
from .test_orchestration import artifact_turn, card, make_agent, route


@pytest.fixture
def provider() -> str:
    # Each provider's usage parsing is covered by test_llm_observability.
    return "openai"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    from stores.conftest import PG_DSN  # tests/stores: one place for the PG set-up

    from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore

    kind: str = request.param
    if kind == "memory":
        yield InMemoryTaskStore()
        return
    opened: Any
    if kind == "sqlite":
        opened = await SQLiteTaskStore(tmp_path / "usage.db").open()
    else:
        schema: str = request.getfixturevalue("pg_schema")
        opened = await PostgresTaskStore(PG_DSN, schema=schema).open()
    try:
        yield opened
    finally:
        await opened.aclose()


@pytest.fixture
def pg_schema() -> Any:
    import uuid

    from stores.conftest import drop_schema, require_postgres

    require_postgres()
    schema = f"a2a_usage_{uuid.uuid4().hex[:16]}"
    try:
        yield schema
    finally:
        drop_schema(schema)


FIRST = {"inputTokens": 100, "outputTokens": 20}
SECOND = {"inputTokens": 11, "outputTokens": 7}  # the scripted server's default usage


async def test_usage_is_stored_on_the_task_and_accumulates_over_turns(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, store: TaskStore
) -> None:
    scripted_server.script(
        route(),
        Turn(
            tool_calls=[ScriptedToolCall(ASK_USER_TOOL, {"question": "Which city?"})],
            usage=(100, 20),
        ),
    )
    server = AgentServer(make_agent(make_model()), card(), store=store)
    client = InProcessClient(server, timeout=10)

    # turn 1, non-streaming: the result is the stored task, usage included
    first = await client.send_message(Message.user("The weather please"))
    assert isinstance(first, Task) and first.status.state.name == "INPUT_REQUIRED"
    after_one = {**FIRST, "turnCount": 1, "turns": [FIRST]}
    assert (first.metadata or {})[USAGE_METADATA_KEY] == after_one
    got = await client.get_task(first.id)
    assert (got.metadata or {})[USAGE_METADATA_KEY] == after_one
    listed = await client.list_tasks(ListTasksRequest(context_id=first.context_id))
    (row,) = listed.tasks
    assert (row.metadata or {})[USAGE_METADATA_KEY] == after_one

    # turn 2, streaming: the status update ending it carries the running totals
    scripted_server.script(artifact_turn("Paris: sunny"))
    answer = Message.user("Paris", task_id=first.id, context_id=first.context_id)
    events = [e async for e in client.send_streaming_message(answer)]
    final = events[-1]
    assert isinstance(final, TaskStatusUpdateEvent) and final.status.state.name == "COMPLETED"
    after_two = {
        "inputTokens": 111,
        "outputTokens": 27,
        "turnCount": 2,
        "turns": [FIRST, SECOND],
    }
    assert (final.metadata or {})[USAGE_METADATA_KEY] == after_two
    done = await client.get_task(first.id)
    assert (done.metadata or {})[USAGE_METADATA_KEY] == after_two
    # the working updates of a turn carry none
    working = [e for e in events if isinstance(e, TaskStatusUpdateEvent) and e is not final]
    assert working and all(not (e.metadata or {}) for e in working)


def test_add_usage_keeps_per_turn_entries_and_totals() -> None:
    assert add_usage(None, {"inputTokens": 5}) == {
        "inputTokens": 5,
        "turnCount": 1,
        "turns": [{"inputTokens": 5}],
    }
    before = {"inputTokens": 5, "turnCount": 1, "turns": [{"inputTokens": 5}]}
    assert add_usage(before, {"inputTokens": 2, "outputTokens": 3}) == {
        "inputTokens": 7,
        "outputTokens": 3,
        "turnCount": 2,
        "turns": [{"inputTokens": 5}, {"inputTokens": 2, "outputTokens": 3}],
    }
    # a value that is not ours (or a bool count) is not added up
    assert add_usage("junk", {"outputTokens": 1}) == {
        "outputTokens": 1,
        "turnCount": 1,
        "turns": [{"outputTokens": 1}],
    }
    odd = {"turns": [{"inputTokens": True}, "x"]}
    assert add_usage(odd, {"inputTokens": 4}) == {
        "inputTokens": 4,
        "turnCount": 3,
        "turns": [{"inputTokens": True}, "x", {"inputTokens": 4}],
    }
    # a value written before turnCount (every turn listed, totals their sums)
    older = {"inputTokens": 7, "turns": [{"inputTokens": 5}, {"inputTokens": 2}]}
    assert add_usage(older, {"inputTokens": 1})["turnCount"] == 3


def test_usage_does_not_grow_with_the_conversation() -> None:
    # Written with every turn (task metadata and the turn's status update):
    # its size must not grow with the number of turns.
    value: object = None
    sizes = {}
    for n in range(1, 201):
        value = add_usage(value, {"inputTokens": 1000 + n, "outputTokens": 7})
        sizes[n] = len(orjson.dumps(value))
    assert isinstance(value, dict)
    assert value["turnCount"] == 200
    assert value["inputTokens"] == sum(1000 + n for n in range(1, 201))
    assert value["outputTokens"] == 7 * 200
    assert len(value["turns"]) == USAGE_TURNS_KEPT
    assert value["turns"][0] == {"inputTokens": 1000 + 151, "outputTokens": 7}
    assert value["turns"][-1] == {"inputTokens": 1200, "outputTokens": 7}
    assert sizes[200] - sizes[USAGE_TURNS_KEPT + 1] < 16  # the counters' digits only
    assert add_usage(value, {"inputTokens": 1}, keep=1)["turns"] == [{"inputTokens": 1}]
    with pytest.raises(ValueError, match="keep must be at least 1"):
        add_usage(value, {"inputTokens": 1}, keep=0)


async def _cli(*args: str, env: dict[str, str]) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_models",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    async with asyncio.timeout(60):
        out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


async def test_the_cli_shows_the_usage_of_sends_and_gets(
    scripted_server: ScriptedModelServer, tmp_path: Path
) -> None:
    from a2a_models._cli._agent import main as agent_main

    from .test_e2e_agent import AgentProcess

    workspace = tmp_path / "agent"
    assert agent_main(["init", str(workspace)]) == 0
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "A2A_MODELS_", "NO_COLOR"))
    }
    env.update(OPENAI_BASE_URL=scripted_server.openai_base_url, OPENAI_API_KEY="sk-usage")

    def script(usage: tuple[int, int]) -> None:
        scripted_server.script(
            Turn(tool_calls=[ScriptedToolCall(START_TASK_TOOL, {"skill": "brief"})]),
            Turn(
                tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"name": "brief", "content": "# B"})],
                usage=usage,
            ),
        )

    async with AgentProcess(workspace, f"sqlite:///{tmp_path / 'tasks.db'}", env) as agent:
        script((1200, 345))
        status, out = await _cli("send", agent.url, "Brief me", "--no-stream", env=env)
        assert status == 0, out
        assert "tokens: 1,200 input, 345 output" in out
        match = re.search(r"task (\S+)\s+completed", out)
        assert match, out
        status, out = await _cli("get", agent.url, match.group(1), env=env)
        assert status == 0 and "tokens: 1,200 input, 345 output" in out, out

        script((50, 6))
        status, out = await _cli("send", agent.url, "Brief me again", "--stream", env=env)
        assert status == 0 and "tokens: 50 input, 6 output" in out, out
