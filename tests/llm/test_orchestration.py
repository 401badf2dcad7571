"""The LLM agent through the engine: scripted model server, real SDKs, streamed A2A events.

Every test drives ``AgentServer`` with ``InProcessClient`` (streaming) and
asserts the A2A events in order; the model is the official ``openai`` or
``anthropic`` SDK talking to the scripted server (both where cheap).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_models.adapters.llm import (
    ARTIFACT_TOOL,
    ASK_USER_TOOL,
    START_TASK_TOOL,
    Guardrails,
    LLMAgent,
    LLMSkill,
    Model,
    WorkflowArtifact,
    WorkflowResult,
    workflow,
    workflow_tool,
)
from a2a_models.client import InProcessClient
from a2a_models.server import AgentServer
from a2a_models.tools import (
    Toolbox,
    ToolContext,
    define_skill,
    error_task,
    function_tool,
    success_task,
    with_hooks,
)

from .conftest import ModelFactory, build_model
from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn

CALLS: list[tuple[str, dict[str, Any], ToolContext]] = []


@function_tool
async def lookup(city: str, context: ToolContext) -> str:
    """Look up the weather of a city."""
    CALLS.append(("lookup", {"city": city}, context))
    return f"{city}: sunny, 21 C"


@function_tool
async def finish_with_task(note: str) -> Task:
    """Finish the work with a ready task."""
    return success_task(f"report: {note}", message="done by the tool", artifact_name="tool report")


@function_tool
async def finish_with_message(note: str) -> Message:
    """Answer with a message."""
    return Message.agent(f"tool says {note}")


@function_tool
async def failing_task() -> Task:
    """A tool that reports a failure as a task."""
    return error_task("the city is unknown")


@workflow(
    id="brief",
    description="Writes a short brief",
    version="1.2.0",
    input_schema={
        "type": "object",
        "properties": {"topic": {"type": "string"}, "style": {"type": "string"}},
        "required": ["topic", "style"],
    },
)
async def brief(input: dict[str, Any], context: ToolContext) -> AsyncIterator[Any]:
    yield f"Collecting notes on {input['topic']}"
    yield WorkflowArtifact(f"# {input['topic']}\n", name="brief")
    yield WorkflowArtifact(f"style: {input['style']}\n", append=True, last_chunk=True)
    yield WorkflowResult(f"brief on {input['topic']} written")


def card() -> AgentCard:
    return AgentCard(
        name="weather agent",
        description="Reports the weather",
        version="1.0.0",
        skills=[AgentSkill(id="s", name="s", description="a skill", tags=["t"])],
        supported_interfaces=[AgentInterface(url="http://127.0.0.1/", protocol_binding="JSONRPC")],
        capabilities=AgentCapabilities(streaming=True),
    )


def weather_skill(**options: Any) -> LLMSkill:
    tools = options.pop("tools", [lookup, finish_with_task, finish_with_message, failing_task])
    return LLMSkill(
        definition=define_skill(
            "weather",
            description="Reports the weather of cities",
            tags=["weather", "forecast"],
            examples=["What is the weather in Paris?"],
            tools=tools,
        ),
        prompt="Always name the city.",
        **options,
    )


def make_agent(model: Model, *skills: LLMSkill, **options: Any) -> LLMAgent:
    options.setdefault("status_interval", None)
    options.setdefault("context", {"tenant": "acme"})
    return LLMAgent(
        model, skills or (weather_skill(),), prompt="You are a weather agent.", **options
    )


async def stream(
    agent: LLMAgent, text: str = "Weather in Paris?", **message: Any
) -> tuple[list[Any], AgentServer]:
    server = AgentServer(agent, card())
    client = InProcessClient(server, timeout=10)
    events = [e async for e in client.send_streaming_message(Message.user(text, **message))]
    return events, server


def kinds(events: Sequence[Any]) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, Task):
            out.append(f"task:{e.status.state.name.lower()}")
        elif isinstance(e, TaskStatusUpdateEvent):
            out.append(e.status.state.name.lower())
        elif isinstance(e, TaskArtifactUpdateEvent):
            out.append("artifact")
        elif isinstance(e, Message):
            out.append("message")
    return out


def route(skill: str = "weather") -> Turn:
    return Turn(tool_calls=[ScriptedToolCall(START_TASK_TOOL, {"skill": skill})])


def artifact_turn(content: str, *, name: str = "report", chunk_size: int = 7) -> Turn:
    return Turn(
        tool_calls=[
            ScriptedToolCall(
                ARTIFACT_TOOL, {"name": name, "content": content}, chunk_size=chunk_size
            )
        ]
    )


def artifact_text(events: Sequence[Any]) -> str:
    return "".join(
        p.text for e in events if isinstance(e, TaskArtifactUpdateEvent) for p in e.artifact.parts
    )


def system_of(body: Any) -> str:
    if "system" in body:  # anthropic
        system = body["system"]
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    messages = body["messages"] if "messages" in body else body["input"]  # chat | responses
    return "\n".join(m["content"] for m in messages if m.get("role") == "system")


# --------------------------------------------------------------------------- routing


async def test_direct_answer_is_a_message(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(Turn(text=["Hello", ", I report the weather."]))
    events, server = await stream(make_agent(make_model()), "hi")
    assert kinds(events) == ["message"]
    assert events[0].text == "Hello, I report the weather."
    body = scripted_server.last.body
    names = [t["function"]["name"] if "function" in t else t["name"] for t in body["tools"]]
    assert names == [START_TASK_TOOL]
    assert "weather: Weather - Reports the weather of cities" in system_of(body)
    assert server.handler.active_runs() == 0


# ---------------------------------------------------------------- the tool loop


async def test_tool_calls_in_sequence_then_artifact(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    CALLS.clear()
    content = 'Paris: sunny.\nRome: "hot" \u2600 and dry.'
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall("lookup", {"city": "Paris"})]),
        Turn(text=["Now Rome."], tool_calls=[ScriptedToolCall("lookup", {"city": "Rome"})]),
        artifact_turn(content, chunk_size=6),
    )
    events, server = await stream(make_agent(make_model()))
    assert kinds(events)[:2] == ["task:submitted", "working"]
    assert kinds(events)[-1] == "completed"
    assert set(kinds(events)[2:-1]) == {"artifact"}
    assert artifact_text(events) == content

    # the tools ran in order, with the skill's input and the agent's custom context
    assert [(name, args) for name, args, _ in CALLS] == [
        ("lookup", {"city": "Paris"}),
        ("lookup", {"city": "Rome"}),
    ]
    ctx = CALLS[0][2]
    assert ctx.skill_id == "weather"
    assert ctx.skill_input == {"text": "Weather in Paris?"}
    assert ctx.custom == {"tenant": "acme"}

    # the skill prompt: agent prompt, skill description, tags, examples, skill prompt;
    # no tool listed in it - they go through the tool API
    bodies = scripted_server.bodies()
    system = system_of(bodies[1])
    for piece in (
        "You are a weather agent.",
        "Reports the weather of cities",
        "Tags: weather, forecast",
        "- What is the weather in Paris?",
        "Always name the city.",
    ):
        assert piece in system
    for tool_name in ("lookup", "finish_with_task", "Look up the weather"):
        assert tool_name not in system
    tool_names = {
        t["function"]["name"] if "function" in t else t["name"] for t in bodies[1]["tools"]
    }
    assert tool_names == {
        "lookup",
        "finish_with_task",
        "finish_with_message",
        "failing_task",
        ARTIFACT_TOOL,
        ASK_USER_TOOL,
    }
    # the second tool call was made knowing the first one's result
    assert "Paris: sunny, 21 C" in json.dumps(bodies[2])
    assert "Rome: sunny, 21 C" in json.dumps(bodies[3])

    stored = await server.handler.on_get_task(_get(events[0].id))
    assert stored.status.state is TaskState.COMPLETED
    assert len(stored.artifacts) == 1
    assert "".join(p.text for p in stored.artifacts[0].parts) == content
    assert stored.artifacts[0].name == "report"


def _get(task_id: str) -> Any:
    from a2a_models import GetTaskRequest

    return GetTaskRequest(id=task_id)


async def test_artifact_streams_chunk_by_chunk_exactly_once(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    content = "abcdefghij" * 5 + ' \\ "q" \n\u00e9\U0001f600 end'
    text = json.dumps({"name": "long", "content": content})
    chunks = [text[i : i + 3] for i in range(0, len(text), 3)]
    scripted_server.script(
        route(), Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, text, chunks=chunks)])
    )
    events, server = await stream(make_agent(make_model()))
    artifacts = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert len(artifacts) > 10  # streamed, not sent at the end
    assert [a.append for a in artifacts] == [False] + [True] * (len(artifacts) - 1)
    assert [a.last_chunk for a in artifacts] == [False] * (len(artifacts) - 1) + [True]
    assert len({a.artifact.artifact_id for a in artifacts}) == 1
    assert artifact_text(events) == content
    assert artifacts[-1].artifact.name == "long"
    assert kinds(events)[-1] == "completed"
    # the stored task is compact: the streamed pieces are one text part
    stored = await InProcessClient(server, timeout=10).get_task(events[-1].task_id)
    assert [p.text for p in stored.artifacts[0].parts] == [content]  # type: ignore[union-attr]


async def test_forced_artifact_when_the_model_only_talks(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(
        route(),
        Turn(text=["It is sunny in Paris."]),
        artifact_turn("Paris: sunny", chunk_size=4),
    )
    events, _ = await stream(make_agent(make_model()))
    assert kinds(events)[:2] == ["task:submitted", "working"]
    assert kinds(events)[-1] == "completed"
    assert artifact_text(events) == "Paris: sunny"
    assert events[-1].status.message.text == "It is sunny in Paris."
    forced = scripted_server.last.body
    if provider == "openai":
        assert forced["tool_choice"] == {"type": "function", "function": {"name": ARTIFACT_TOOL}}
    elif provider == "responses":
        assert forced["tool_choice"] == {"type": "function", "name": ARTIFACT_TOOL}
    else:
        assert forced["tool_choice"]["type"] == "tool"
        assert forced["tool_choice"]["name"] == ARTIFACT_TOOL


async def test_input_required_then_continue(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall(ASK_USER_TOOL, {"question": "Which city?"})]),
    )
    agent = make_agent(make_model())
    server = AgentServer(agent, card())
    client = InProcessClient(server, timeout=10)
    first = [e async for e in client.send_streaming_message(Message.user("The weather please"))]
    assert kinds(first) == ["task:submitted", "working", "input_required"]
    assert first[-1].status.message.text == "Which city?"
    task_id, context_id = first[0].id, first[0].context_id

    scripted_server.script(artifact_turn("Paris: sunny"))
    answer = Message.user("Paris", task_id=task_id, context_id=context_id)
    second = [e async for e in client.send_streaming_message(answer)]
    assert kinds(second)[0] == "task:working"
    assert kinds(second)[-1] == "completed"
    assert artifact_text(second) == "Paris: sunny"
    # no routing on the continuation; the model saw the question and the answer
    sent = json.dumps(scripted_server.last.body)
    assert "Which city?" in sent and "Paris" in sent and "The weather please" in sent
    assert len(scripted_server.requests) == 3


async def test_step_limit_fails_the_task(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall("lookup", {"city": "A"})]),
        Turn(tool_calls=[ScriptedToolCall("lookup", {"city": "B"})]),
        Turn(tool_calls=[ScriptedToolCall("lookup", {"city": "C"})]),
    )
    events, _ = await stream(make_agent(make_model(), max_steps=2))
    assert kinds(events) == ["task:submitted", "working", "failed"]
    assert "step limit of 2" in events[-1].status.message.text
    assert scripted_server.pending == 1  # no third model call


async def test_skill_guardrails_limit_tool_calls(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(
        route(),
        Turn(
            tool_calls=[
                ScriptedToolCall("lookup", {"city": "A"}),
                ScriptedToolCall("lookup", {"city": "B"}),
            ]
        ),
    )
    skill = weather_skill(guardrails=Guardrails(max_tool_calls=1))
    events, _ = await stream(make_agent(make_model(), skill))
    assert kinds(events)[-1] == "failed"
    assert "limit of 1 tool calls" in events[-1].status.message.text


@pytest.mark.parametrize("failure", ["status", "mid-stream", "unreadable"])
async def test_provider_error_fails_the_task(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str, failure: str
) -> None:
    broken = {
        "status": Turn(status=503, error_message="upstream overloaded"),
        "mid-stream": Turn(
            text=["a", "b", "c"],
            error_after=2,
            error_type="overloaded_error",
            error_message="upstream overloaded",
        ),
        "unreadable": Turn(text=["a", "b", "c"], garbage_after=2),
    }[failure]
    scripted_server.script(route(), broken)
    events, _ = await stream(make_agent(make_model()))
    assert kinds(events) == ["task:submitted", "working", "failed"]
    reason = events[-1].status.message.text
    assert reason.startswith("The model failed:")
    said = "unreadable response" if failure == "unreadable" else "upstream overloaded"
    assert said in reason


async def test_routing_error_fails(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(Turn(status=401, error_message="bad key"))
    events, _ = await stream(make_agent(make_model()))
    assert kinds(events) == ["task:submitted", "failed"]
    assert "bad key" in events[-1].status.message.text

    # A routing answer the provider stopped: said as the tool loop says it.
    scripted_server.script(Turn(text=["no"], stop="content_filter"))
    events, _ = await stream(make_agent(make_model()))
    assert kinds(events) == ["task:submitted", "failed"]
    why = "the model refused to answer" if provider == "anthropic" else "content filter"
    said = events[-1].status.message.text
    assert said.startswith("The model failed: ") and why in said
    assert not said.startswith("The model failed: model:")  # no made-up provider name


async def test_routing_timeout_fails_a_model_that_keeps_sending(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    # 40 chunks 0.25 s apart: every read is quick, so no read timeout would end it.
    scripted_server.script(Turn(text=["x"] * 40, delay=0.25))
    events, _ = await stream(make_agent(make_model(), routing_timeout=0.5))
    assert kinds(events) == ["task:submitted", "failed"]
    said = events[-1].status.message.text
    assert said == "Choosing a skill exceeded the time limit of 0.5 s."
    await scripted_server.wait_for_disconnects(1, timeout=5)  # the model call was closed


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5"])
def test_routing_timeout_must_be_a_positive_number(make_model: ModelFactory, bad: Any) -> None:
    with pytest.raises(ValueError, match="routing_timeout must be a positive number"):
        make_agent(make_model(), routing_timeout=bad)


async def test_slow_stream_cancelled_midway_stays_canceled(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(
        route(),
        Turn(
            tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "x" * 400}, chunk_size=4)],
            delay=0.05,
        ),
    )
    agent = make_agent(make_model())
    server = AgentServer(agent, card())
    client = InProcessClient(server, timeout=10)
    seen: list[Any] = []
    canceled: Task | None = None
    async with asyncio.timeout(10):
        async for event in client.send_streaming_message(Message.user("long report")):
            seen.append(event)
            chunks = sum(isinstance(e, TaskArtifactUpdateEvent) for e in seen)
            if chunks == 3 and canceled is None:
                canceled = await client.cancel_task(seen[0].id)
                assert canceled.status.state is TaskState.CANCELED
    assert kinds(seen)[-1] == "canceled"
    await scripted_server.wait_for_disconnects(1, timeout=5)
    await asyncio.wait_for(server.handler.idle(), 5)
    await asyncio.sleep(0.2)
    task = await client.get_task(seen[0].id)
    assert task.status.state is TaskState.CANCELED
    assert not agent._pumps


# ---------------------------------------------------------------- periodic status


async def test_periodic_status_updates_not_repeated_and_stop_at_artifact(
    scripted_server: ScriptedModelServer,
) -> None:
    scripted_server.script(
        route(),
        Turn(
            text=["Checking ", "the ", "forecast ", "now."],
            delay=0.08,
            tool_calls=[ScriptedToolCall("lookup", {"city": "Oslo"})],
        ),
        Turn(
            tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "y" * 40}, chunk_size=4)],
            delay=0.03,
        ),
    )
    model = build_model("openai", scripted_server)
    events, _ = await stream(make_agent(model, status_interval=0.03))
    await model.aclose()
    statuses = [
        e.status.message.text
        for e in events
        if isinstance(e, TaskStatusUpdateEvent) and e.status.state is TaskState.WORKING
    ]
    assert statuses[0] == "Working on Weather"
    assert any(s.startswith("Thinking: ") for s in statuses)
    assert len(statuses) == len(set(statuses))  # recent ones are not repeated
    first_artifact = next(i for i, e in enumerate(events) if isinstance(e, TaskArtifactUpdateEvent))
    assert all(
        not isinstance(e, TaskStatusUpdateEvent) or e.status.state is not TaskState.WORKING
        for e in events[first_artifact:]
    )
    assert kinds(events)[-1] == "completed"


async def test_a_long_text_answer_is_not_joined_again_for_each_delta(
    scripted_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from a2a_models.adapters.llm import _handler

    # Each text delta joined the whole text so far into the "writing" activity:
    # O(N²) characters for an answer of N deltas (2,000 of 5 characters: 10
    # million). It is joined when a status update is due, not per delta.
    joined: list[int] = []
    activity = _handler.Activity

    def counting(*args: Any, **kwargs: Any) -> Any:
        joined.append(len(kwargs.get("text", "")))
        return activity(*args, **kwargs)

    monkeypatch.setattr(_handler, "Activity", counting)
    deltas = ["word "] * 2000
    scripted_server.script(route(), Turn(text=deltas), artifact_turn("done"))
    model = build_model("openai", scripted_server)
    events, _ = await stream(make_agent(model))
    await model.aclose()
    assert kinds(events)[-1] == "completed"
    assert events[-1].status.message.text == "".join(deltas).strip()
    assert sum(joined) <= len("".join(deltas))


# ---------------------------------------------------------------- tool results


async def test_a_tool_task_becomes_the_result(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(
        route(), Turn(tool_calls=[ScriptedToolCall("finish_with_task", {"note": "ok"})])
    )
    events, _server = await stream(make_agent(make_model()))
    assert kinds(events) == ["task:submitted", "working", "artifact", "completed"]
    assert events[2].artifact.parts[0].text == "report: ok"
    assert events[2].artifact.name == "tool report"
    assert events[-1].status.message.text == "done by the tool"
    assert scripted_server.pending == 0


async def test_a_tool_failure_task_fails_and_a_message_completes(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(route(), Turn(tool_calls=[ScriptedToolCall("failing_task", {})]))
    events, _ = await stream(make_agent(make_model()))
    assert kinds(events) == ["task:submitted", "working", "failed"]
    assert events[-1].status.message.text == "the city is unknown"

    scripted_server.script(
        route(), Turn(tool_calls=[ScriptedToolCall("finish_with_message", {"note": "hi"})])
    )
    events, _ = await stream(make_agent(make_model()))
    assert kinds(events) == ["task:submitted", "working", "completed"]
    assert events[-1].status.message.text == "tool says hi"


async def test_invalid_tool_arguments_go_back_to_the_model(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall("lookup", {"town": "Paris"})]),
        Turn(tool_calls=[ScriptedToolCall("nope", {})]),
        artifact_turn("fine"),
    )
    events, _ = await stream(make_agent(make_model()))
    assert kinds(events)[-1] == "completed"
    sent = [json.dumps(b) for b in scripted_server.bodies()]
    assert "invalid arguments for tool 'lookup'" in sent[2]
    assert "There is no tool named 'nope'" in sent[3]


SEEN_BY_HOOK: list[int] = []
DIGITS = "0123456789"


@function_tool
async def dump(size: int) -> str:
    """Dump a log of ``size`` characters."""
    return DIGITS * (size // len(DIGITS))


async def test_a_huge_tool_result_reaches_the_model_cut_short_with_a_note(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    # 3,000,000 characters went to the provider whole: past any context window,
    # it refused the request and the task failed as the model's error.
    def after(arguments: Any, result: Any, context: Any) -> Any:
        SEEN_BY_HOOK.append(len(result.text))
        return result

    SEEN_BY_HOOK.clear()
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall("dump", {"size": 3_000_000})]),
        artifact_turn("done"),
    )
    hooked = with_hooks(dump, after=after)
    events, _ = await stream(make_agent(make_model(), weather_skill(tools=[hooked])))
    assert kinds(events)[-1] == "completed"
    sent = json.dumps(scripted_server.bodies()[2])
    assert sent.count(DIGITS) == 10_000  # the default limit: 100,000 characters
    assert (
        "only its first 100,000 of 3,000,000 characters are shown; "
        "the other 2,900,000 were left out"
    ) in sent
    assert SEEN_BY_HOOK == [3_000_000]  # the tool's hooks see the whole result


@pytest.mark.parametrize(("limit", "count"), [(None, 30_000), (25, 2)])
async def test_the_tool_result_limit_is_the_agents_to_choose(
    scripted_server: ScriptedModelServer, limit: int | None, count: int
) -> None:
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall("dump", {"size": 300_000})]),
        artifact_turn("done"),
    )
    model = build_model("openai", scripted_server)
    agent = make_agent(model, weather_skill(tools=[dump]), tool_result_limit=limit)
    events, _ = await stream(agent)
    await model.aclose()
    assert kinds(events)[-1] == "completed"
    tool_message = next(m for m in scripted_server.bodies()[2]["messages"] if m["role"] == "tool")
    assert tool_message["content"].count(DIGITS) == count
    assert ("were left out" in tool_message["content"]) is (limit is not None)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "100"])
def test_tool_result_limit_must_be_a_positive_integer(
    scripted_server: ScriptedModelServer, bad: Any
) -> None:
    with pytest.raises(ValueError, match="tool_result_limit must be a positive number"):
        make_agent(build_model("openai", scripted_server), tool_result_limit=bad)


async def test_named_skill_skips_routing_and_handler_skills_run_their_handler(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    async def handler(args: dict[str, Any], ctx: Any) -> Task:
        return success_task(f"handled {args['text']}")

    handled = LLMSkill(
        definition=define_skill(
            "echo", description="Echoes", tags=["echo"], examples=["echo x"], handler=handler
        )
    )
    agent = make_agent(make_model(), weather_skill(), handled)
    events, _ = await stream(agent, "x", metadata={"skillId": "echo"})
    assert kinds(events) == ["task:submitted", "working", "artifact", "completed"]
    assert events[2].artifact.parts[0].text == "handled x"
    assert scripted_server.requests == []


async def test_a_handler_skill_continued_over_a2a_gets_the_task_and_the_reply(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    seen: list[Any] = []

    async def handler(args: dict[str, Any], ctx: Any) -> Task:
        seen.append((ctx.task, ctx.message))
        if ctx.task is None:
            return Task.submitted().with_status(
                TaskState.INPUT_REQUIRED, Message.agent("Which size?")
            )
        return success_task(f"{args['text']}: {ctx.message.text}")

    sized = LLMSkill(
        definition=define_skill(
            "size", description="Sizes", tags=["size"], examples=["size x"], handler=handler
        )
    )
    server = AgentServer(make_agent(make_model(), weather_skill(), sized), card())
    client = InProcessClient(server, timeout=10)
    first = [
        e
        async for e in client.send_streaming_message(
            Message.user("a shirt", metadata={"skillId": "size"})
        )
    ]
    assert kinds(first)[-1] == "input_required"
    task_id, context_id = first[0].id, first[0].context_id
    answer = Message.user("large", task_id=task_id, context_id=context_id)
    second = [e async for e in client.send_streaming_message(answer)]
    assert kinds(second)[-1] == "completed"
    assert artifact_text(second) == "a shirt: large"
    assert seen[0] == (None, None)
    task, message = seen[1]
    assert message.text == "large" and task.id == task_id
    assert [m.text for m in task.history] == ["a shirt", "Which size?", "large"]
    assert scripted_server.requests == []


# ---------------------------------------------------------------- workflows


async def test_workflow_tool_streams_its_events_with_overrides(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    tool = workflow_tool(brief, {"style": "terse"})
    assert tool.name == "dispatch_workflow_brief"
    assert "style" not in tool.input_schema["properties"]
    assert tool.input_schema["required"] == ["topic"]
    scripted_server.script(
        route(),
        Turn(
            tool_calls=[
                ScriptedToolCall("dispatch_workflow_brief", {"topic": "rain", "style": "long"})
            ]
        ),
        Turn(text=["The brief is ready."]),
    )
    skill = weather_skill(tools=[tool])
    events, _server = await stream(make_agent(make_model(), skill))
    assert kinds(events) == [
        "task:submitted",
        "working",
        "working",
        "artifact",
        "artifact",
        "completed",
    ]
    assert events[2].status.message.text == "Collecting notes on rain"
    assert events[3].artifact.name == "brief" and not events[3].append
    assert events[4].append and events[4].last_chunk
    assert events[4].artifact.artifact_id == events[3].artifact.artifact_id
    assert artifact_text(events) == "# rain\nstyle: terse\n"  # the override won
    # the model was told the workflow's result; no forced artifact was needed
    assert "brief on rain written" in json.dumps(scripted_server.last.body)
    assert scripted_server.pending == 0


@workflow(id="broken", description="Appends to an artifact it never started", version="1.0.0")
async def broken(input: dict[str, Any], context: ToolContext) -> AsyncIterator[Any]:
    yield "Starting"
    yield WorkflowArtifact("tail", append=True)


async def test_a_workflow_that_misuses_its_artifacts_fails_its_tool_call(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    # A plugin's mistake: the model is told, as for any failing tool; the task goes on.
    scripted_server.script(
        route(),
        Turn(tool_calls=[ScriptedToolCall("dispatch_workflow_broken", {})]),
        Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "Done without it."})]),
    )
    skill = weather_skill(tools=[workflow_tool(broken)])
    events, _server = await stream(make_agent(make_model(), skill))
    assert kinds(events)[-1] == "completed"
    assert artifact_text(events) == "Done without it."
    told = json.dumps(scripted_server.last.body)
    assert "workflow 'broken' appended to an artifact it did not start" in told


async def test_workflow_tool_outside_the_agent_collects_events() -> None:
    tool = workflow_tool(brief, {"style": "plain"})
    result = await tool.call({"topic": "sun"}, ToolContext())
    assert result.text.startswith("brief on sun written")
    assert "# sun\n" in result.text


async def test_toolbox_allowed_tools_and_reserved_names(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    skill = LLMSkill(
        definition=define_skill(
            "weather", description="d", tags=["t"], examples=["e"], allowed_tools=["look*"]
        )
    )
    box = Toolbox([lookup, finish_with_task], context={"from": "toolbox"})
    agent = make_agent(make_model(), skill, toolbox=box, context=None)
    assert [t.name for t in agent.tools_for("weather")] == ["lookup"]
    assert agent.custom_context == {"from": "toolbox"}

    @function_tool(name=ARTIFACT_TOOL)
    async def clash() -> str:
        return "x"

    bad = make_agent(make_model(), weather_skill(tools=[clash]))
    scripted_server.script(route())
    events, _ = await stream(bad)
    assert kinds(events)[-1] == "failed"
    assert "reserved" in events[-1].status.message.text


async def test_fulfil_outside_a2a(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(artifact_turn("Oslo: snow"))
    agent = make_agent(make_model())
    task = await agent.fulfil("weather", {"city": "Oslo"})
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert "".join(p.text for p in task.artifacts[0].parts) == "Oslo: snow"
