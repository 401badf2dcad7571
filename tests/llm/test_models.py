"""The official openai and anthropic SDKs, for real, against the scripted model server.

Every scenario runs once per provider (the ``provider`` fixture).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import socket
import sys
import time
import types
from typing import Any

import pytest

from a2a_models.adapters.llm import (
    AnthropicModel,
    AssistantMessage,
    ChatMessage,
    Finish,
    ForceTool,
    Model,
    ModelAuthenticationError,
    ModelBadRequestError,
    ModelConnectionError,
    ModelError,
    ModelEvent,
    ModelRateLimitError,
    ModelRequest,
    ModelServerError,
    ModelStream,
    ModelTimeoutError,
    OpenAIChatModel,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallError,
    ToolCallStart,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

from .conftest import API_KEYS, MODEL_NAMES, PROVIDERS, ModelFactory
from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn

#: The SDK package each provider fixture's model talks through.
PROVIDER_SDKS = {"openai": "openai", "responses": "openai", "anthropic": "anthropic"}


@pytest.fixture(params=("openai", "anthropic"))
def provider(request: pytest.FixtureRequest) -> str:
    """The wire-format checks here are per SDK API; the Responses API has its own
    file (test_openai_responses.py), the orchestration tests run on all three."""
    value: str = request.param
    return value


LOOKUP = ToolSpec(
    "lookup_weather",
    "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CONVERT = ToolSpec(
    "convert_units",
    "Convert a temperature",
    {
        "type": "object",
        "properties": {"celsius": {"type": "number"}, "to": {"enum": ["F", "K"]}},
        "required": ["celsius", "to"],
    },
)
ARTIFACT = ToolSpec(
    "emit_artifact",
    "Write the task's artifact",
    {
        "type": "object",
        "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
        "required": ["title", "body"],
    },
)
CONVERSATION: tuple[ChatMessage, ...] = (
    SystemMessage("You are a weather agent."),
    UserMessage("What is the weather in Paris, in Fahrenheit?"),
)


async def events_of(stream: ModelStream, *, limit: float = 10.0) -> list[ModelEvent]:
    async with asyncio.timeout(limit):
        return [event async for event in stream]


def api_messages(server: ScriptedModelServer, index: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = server.requests[index].body["messages"]
    return messages


# --------------------------------------------------------------- direct answer


async def test_direct_answer(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(Turn(text=["Sunny", ", 24", "°C."], usage=(42, 5)))
    model = make_model(temperature=0.5, max_tokens=256)

    events = await events_of(model.stream(ModelRequest(CONVERSATION)))

    assert events[:-1] == [TextDelta("Sunny"), TextDelta(", 24"), TextDelta("°C.")]
    finish = events[-1]
    assert isinstance(finish, Finish)
    assert finish.reason == "stop"
    assert finish.usage == Usage(42, 5)
    assert finish.provider_reason == ("stop" if provider == "openai" else "end_turn")

    (sent,) = scripted_server.requests
    body = sent.body
    assert sent.stream
    assert body["model"] == MODEL_NAMES[provider]
    assert body["temperature"] == 0.5
    assert body["max_tokens"] == 256
    assert "tools" not in body and "tool_choice" not in body
    if provider == "openai":
        assert sent.path == "/v1/chat/completions"
        assert sent.headers["authorization"] == f"Bearer {API_KEYS['openai']}"
        assert body["stream_options"] == {"include_usage": True}
        assert body["messages"] == [
            {"role": "system", "content": "You are a weather agent."},
            {"role": "user", "content": "What is the weather in Paris, in Fahrenheit?"},
        ]
    else:
        assert sent.path == "/v1/messages"
        # anthropic 2.x sends the key as a bearer token (1.x sent ``x-api-key``).
        key = API_KEYS["anthropic"]
        assert key in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "")[7:])
        assert "anthropic-version" in sent.headers
        assert body["system"] == "You are a weather agent."
        assert body["messages"] == [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is the weather in Paris, in Fahrenheit?"}
                ],
            }
        ]


async def test_request_settings_override_the_models(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(Turn(text=["a"]), Turn(text=["b"]))
    model = make_model(temperature=None, max_tokens=100)

    await model.complete(ModelRequest(CONVERSATION))
    await model.complete(
        ModelRequest(
            CONVERSATION,
            model="other-model",
            temperature=0.9,
            max_tokens=12,
            stop=("END",),
            extra_body={"top_p": 0.5},
        )
    )

    first, second = scripted_server.bodies()
    assert "temperature" not in first  # None: the provider's default
    assert first["max_tokens"] == 100
    assert second["model"] == "other-model"
    assert second["temperature"] == 0.9
    assert second["max_tokens"] == 12
    assert second["top_p"] == 0.5
    assert second["stop" if provider == "openai" else "stop_sequences"] == ["END"]


async def test_complete_collects_a_response(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(
        Turn(
            text=["Let me check."],
            tool_calls=[ScriptedToolCall("lookup_weather", {"city": "Paris"}, id="c1")],
        )
    )
    response = await make_model().complete(ModelRequest(CONVERSATION, tools=(LOOKUP,)))
    assert response.text == "Let me check."
    assert response.tool_calls == (ToolCall("c1", "lookup_weather", {"city": "Paris"}),)
    assert response.finish.reason == "tool_calls"
    assert response.message == AssistantMessage("Let me check.", response.tool_calls)
    assert response.tool_call_errors == {}


# ------------------------------------------------------------------ tool calls


async def test_tool_calls_in_sequence(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(
        Turn(tool_calls=[ScriptedToolCall("lookup_weather", {"city": "Paris"}, id="call-a")]),
        Turn(
            text=["Converting."],
            tool_calls=[ScriptedToolCall("convert_units", {"celsius": 24, "to": "F"}, id="call-b")],
        ),
        Turn(text=["It is 75.2°F and sunny in Paris."]),
    )
    model = make_model()
    conversation: list[ChatMessage] = list(CONVERSATION)
    results = {"lookup_weather": "sunny, 24°C", "convert_units": "75.2"}
    finishes = []
    for _ in range(3):
        response = await model.complete(ModelRequest(tuple(conversation), tools=(LOOKUP, CONVERT)))
        finishes.append(response.finish.reason)
        conversation.append(response.message)
        for call in response.tool_calls:
            conversation.append(ToolMessage(call.id, results[call.name]))
    assert finishes == ["tool_calls", "tool_calls", "stop"]
    assert response.text == "It is 75.2°F and sunny in Paris."
    assert scripted_server.pending == 0

    # Every request carried both tools, natively.
    for body in scripted_server.bodies():
        names = [
            tool["function"]["name"] if provider == "openai" else tool["name"]
            for tool in body["tools"]
        ]
        assert names == ["lookup_weather", "convert_units"]

    # The history went back in each provider's own format.
    third = api_messages(scripted_server, 2)
    if provider == "openai":
        assert third[2:] == [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call-a",
                        "type": "function",
                        "function": {"name": "lookup_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call-a", "content": "sunny, 24°C"},
            {
                "role": "assistant",
                "content": "Converting.",
                "tool_calls": [
                    {
                        "id": "call-b",
                        "type": "function",
                        "function": {
                            "name": "convert_units",
                            "arguments": '{"celsius":24,"to":"F"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call-b", "content": "75.2"},
        ]
    else:
        assert third[1:] == [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "call-a",
                        "name": "lookup_weather",
                        "input": {"city": "Paris"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call-a", "content": "sunny, 24°C"}
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Converting."},
                    {
                        "type": "tool_use",
                        "id": "call-b",
                        "name": "convert_units",
                        "input": {"celsius": 24, "to": "F"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "call-b", "content": "75.2"}],
            },
        ]


async def test_parallel_tool_calls_and_error_results(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    scripted_server.script(
        Turn(
            tool_calls=[
                ScriptedToolCall("lookup_weather", {"city": "Paris"}, id="p1"),
                ScriptedToolCall("lookup_weather", {"city": "Oslo"}, id="p2"),
            ]
        ),
        Turn(text=["Done."]),
    )
    model = make_model()
    events = await events_of(model.stream(ModelRequest(CONVERSATION, tools=(LOOKUP,))))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(s.id, s.index) for s in starts] == [("p1", 0), ("p2", 1)]
    assert [e.arguments for e in ends] == [{"city": "Paris"}, {"city": "Oslo"}]
    calls = tuple(e.call for e in ends)

    await model.complete(
        ModelRequest(
            (
                *CONVERSATION,
                AssistantMessage("", calls),
                ToolMessage("p1", "sunny"),
                ToolMessage("p2", "city not found", is_error=True),
            ),
            tools=(LOOKUP,),
        )
    )
    sent = api_messages(scripted_server, 1)
    if provider == "openai":
        assert sent[-2:] == [
            {"role": "tool", "tool_call_id": "p1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "p2", "content": "Error: city not found"},
        ]
    else:  # both results in one user turn
        assert sent[-1] == {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "p1", "content": "sunny"},
                {
                    "type": "tool_result",
                    "tool_use_id": "p2",
                    "content": "city not found",
                    "is_error": True,
                },
            ],
        }


async def test_tool_arguments_streamed_in_many_small_chunks(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    arguments = json.dumps(
        {"title": "Q3 report", "body": 'Revenue rose 12% — driven by "widgets".\nMore soon.'}
    )
    chunks = [arguments[i : i + 3] for i in range(0, len(arguments), 3)]
    assert len(chunks) > 20
    scripted_server.script(
        Turn(
            text=["Writing the report."],
            tool_calls=[ScriptedToolCall("emit_artifact", arguments, chunks=chunks, id="art")],
            delay=0.01,
        )
    )
    model = make_model()
    arrivals: list[tuple[float, ModelEvent]] = []
    async with (
        asyncio.timeout(10),
        model.stream(ModelRequest(CONVERSATION, tools=(ARTIFACT,))) as stream,
    ):
        async for event in stream:
            arrivals.append((time.monotonic(), event))
    events = [event for _, event in arrivals]

    kinds = [type(e).__name__ for e in events]
    assert kinds == (
        ["TextDelta", "ToolCallStart"] + ["ToolCallDelta"] * len(chunks) + ["ToolCallEnd", "Finish"]
    )
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.arguments_delta for d in deltas] == chunks  # surfaced one by one, in order
    assert all(d.id == "art" and d.index == 0 for d in deltas)
    joined = "".join(d.arguments_delta for d in deltas)
    assert json.loads(joined) == {
        "title": "Q3 report",
        "body": 'Revenue rose 12% — driven by "widgets".\nMore soon.',
    }
    end = events[-2]
    assert isinstance(end, ToolCallEnd)
    assert end.arguments_json == joined == arguments
    assert end.arguments == json.loads(arguments)
    # Incremental, not buffered: the first chunk arrived well before the last.
    first_delta = next(t for t, e in arrivals if isinstance(e, ToolCallDelta))
    end_time = next(t for t, e in arrivals if isinstance(e, ToolCallEnd))
    assert end_time - first_delta > 0.1


async def test_invalid_tool_arguments_are_an_error_event(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(
        Turn(
            tool_calls=[
                ScriptedToolCall("lookup_weather", '{"city": "Paris",,', chunk_size=4, id="bad"),
                ScriptedToolCall("lookup_weather", "[1, 2]", id="list"),
                ScriptedToolCall("lookup_weather", {"city": "Rome"}, id="good"),
            ]
        )
    )
    events = await events_of(make_model().stream(ModelRequest(CONVERSATION, tools=(LOOKUP,))))
    errors = [e for e in events if isinstance(e, ToolCallError)]
    assert [e.id for e in errors] == ["bad", "list"]
    assert errors[0].arguments_json == '{"city": "Paris",,'
    assert "not valid JSON" in errors[0].message and "lookup_weather" in errors[0].message
    assert "must be a JSON object" in errors[1].message
    (good,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert good.arguments == {"city": "Rome"}
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "tool_calls"


async def test_collect_keeps_invalid_calls_answerable(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(Turn(tool_calls=[ScriptedToolCall("lookup_weather", "{oops", id="bad")]))
    response = await make_model().complete(ModelRequest(CONVERSATION, tools=(LOOKUP,)))
    assert response.tool_calls == (ToolCall("bad", "lookup_weather", {}),)
    assert set(response.tool_call_errors) == {"bad"}
    assert response.tool_call_errors["bad"].arguments_json == "{oops"


# ---------------------------------------------------------------- tool choice


@pytest.mark.parametrize(
    ("choice", "parallel", "openai_choice", "anthropic_choice"),
    [
        (
            ForceTool("emit_artifact"),
            False,
            {"type": "function", "function": {"name": "emit_artifact"}},
            {"type": "tool", "name": "emit_artifact", "disable_parallel_tool_use": True},
        ),
        (ForceTool("emit_artifact"), None, None, {"type": "tool", "name": "emit_artifact"}),
        ("required", None, "required", {"type": "any"}),
        ("none", None, "none", {"type": "none"}),
        ("auto", None, "auto", {"type": "auto"}),
    ],
)
async def test_tool_choice_is_sent_natively(
    scripted_server: ScriptedModelServer,
    make_model: ModelFactory,
    provider: str,
    choice: Any,
    parallel: bool | None,
    openai_choice: Any,
    anthropic_choice: Any,
) -> None:
    scripted_server.script(
        Turn(
            tool_calls=[
                ScriptedToolCall("emit_artifact", {"title": "T", "body": "B"}, chunk_size=5)
            ]
        )
    )
    request = ModelRequest(
        CONVERSATION, tools=(LOOKUP, ARTIFACT), tool_choice=choice, parallel_tool_calls=parallel
    )
    response = await make_model().complete(request)
    assert response.tool_calls[0].arguments == {"title": "T", "body": "B"}

    body = scripted_server.last.body
    if provider == "openai":
        expected = openai_choice or {"type": "function", "function": {"name": "emit_artifact"}}
        assert body["tool_choice"] == expected
        assert body.get("parallel_tool_calls") == parallel
        assert body["tools"][1] == {
            "type": "function",
            "function": {
                "name": "emit_artifact",
                "description": "Write the task's artifact",
                "parameters": dict(ARTIFACT.input_schema),
            },
        }
    else:
        assert body["tool_choice"] == anthropic_choice
        assert body["tools"][1] == {
            "name": "emit_artifact",
            "description": "Write the task's artifact",
            "input_schema": dict(ARTIFACT.input_schema),
        }


# -------------------------------------------------------------- finish reasons


@pytest.mark.parametrize(
    ("stop", "reason"), [("length", "length"), ("refusal", "error"), ("stop", "stop")]
)
async def test_finish_reasons(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, stop: str, reason: str
) -> None:
    scripted_server.script(Turn(text=["partial"], stop=stop))
    events = await events_of(make_model().stream(ModelRequest(CONVERSATION)))
    finish = events[-1]
    assert isinstance(finish, Finish)
    assert finish.reason == reason
    assert (finish.message is not None) == (reason == "error")


async def test_a_stream_cut_short_finishes_with_an_error(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    call = ScriptedToolCall("emit_artifact", {"title": "T", "body": "long"}, chunk_size=2)
    # message_start / role chunk, the call's start, three argument chunks: then silence.
    scripted_server.script(Turn(tool_calls=[call], truncate_after=5))
    events = await events_of(make_model().stream(ModelRequest(CONVERSATION, tools=(ARTIFACT,))))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "ToolCallStart"
    assert kinds[-2:] == ["ToolCallError", "Finish"]
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "error"
    assert finish.message is not None and "ended before" in finish.message


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (401, ModelAuthenticationError),
        (403, ModelAuthenticationError),
        (429, ModelRateLimitError),
        (500, ModelServerError),
        (503, ModelServerError),
        (400, ModelBadRequestError),
        (404, ModelBadRequestError),
    ],
)
async def test_provider_errors_map_to_model_errors(
    scripted_server: ScriptedModelServer,
    make_model: ModelFactory,
    provider: str,
    status: int,
    error_class: type[ModelError],
) -> None:
    scripted_server.script(
        Turn(status=status, error_message=f"scripted {status}", headers={"retry-after": "7"})
    )
    with pytest.raises(error_class) as caught:
        await events_of(make_model().stream(ModelRequest(CONVERSATION)))
    error = caught.value
    assert type(error) is error_class
    assert error.provider == provider
    assert error.status_code == status
    assert error.message == f"scripted {status}"
    assert str(error) == f"{provider}: scripted {status} (HTTP {status})"
    if status == 429:
        assert isinstance(error, ModelRateLimitError) and error.retry_after == 7.0
    assert len(scripted_server.requests) == 1  # max_retries=0


async def test_the_sdk_retries_server_errors_when_asked(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(
        Turn(status=503, headers={"retry-after-ms": "10"}),
        Turn(status=429, headers={"retry-after-ms": "10"}),
        Turn(text=["recovered"]),
    )
    response = await make_model(max_retries=2).complete(ModelRequest(CONVERSATION))
    assert response.text == "recovered"
    assert len(scripted_server.requests) == 3


async def test_an_error_inside_the_stream(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(Turn(text=["one", "two", "three"], error_after=5))
    seen: list[ModelEvent] = []
    with pytest.raises(ModelServerError) as caught:
        async with asyncio.timeout(10):
            async for event in make_model().stream(ModelRequest(CONVERSATION)):
                seen.append(event)
    assert caught.value.message == "scripted failure"
    assert caught.value.status_code in (None, 200)
    assert seen and all(isinstance(e, TextDelta) for e in seen)


async def test_an_unreadable_stream_is_the_providers_fault(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    # A `data:` line that is not JSON: a ModelServerError saying so, not a JSONDecodeError.
    scripted_server.script(Turn(text=["one", "two"], garbage_after=2))
    with pytest.raises(ModelServerError) as caught:
        await events_of(make_model().stream(ModelRequest(CONVERSATION)))
    assert caught.value.message.startswith("unreadable response: JSONDecodeError: ")


async def test_rate_limit_inside_the_stream(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    kind = "rate_limit_exceeded" if provider == "openai" else "rate_limit_error"
    scripted_server.script(Turn(text=["one"], error_after=2, error_type=kind))
    with pytest.raises(ModelRateLimitError):
        await events_of(make_model().stream(ModelRequest(CONVERSATION)))


async def test_connection_refused(provider: str) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    model: Model = (
        OpenAIChatModel("m", api_key="k", base_url=f"{url}/v1", max_retries=0, timeout=2)
        if provider == "openai"
        else AnthropicModel("m", api_key="k", base_url=url, max_retries=0, timeout=2)
    )
    async with model:
        with pytest.raises(ModelConnectionError) as caught:
            await events_of(model.stream(ModelRequest(CONVERSATION)))
    assert caught.value.provider == provider
    assert caught.value.retryable


async def test_a_stalled_stream_times_out(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(Turn(text=["a", "b", "c"], delay=2.0))
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError):
        await events_of(make_model(timeout=0.3).stream(ModelRequest(CONVERSATION)))
    assert time.monotonic() - started < 1.5


# --------------------------------------------------------------- cancellation

SLOW = Turn(text=["tick "] * 200, delay=0.05)  # 10 s if read to the end


async def test_closing_the_stream_aborts_the_request(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(SLOW)
    stream = make_model().stream(ModelRequest(CONVERSATION))
    started = time.monotonic()
    async with asyncio.timeout(5):
        first = await anext(stream)
        second = await anext(stream)
        await stream.aclose()
    assert first == second == TextDelta("tick ")
    await scripted_server.wait_for_disconnects(1, timeout=5)
    assert scripted_server.completed_streams == 0
    assert time.monotonic() - started < 3
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


async def test_leaving_async_with_aborts_the_request(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(SLOW)
    async with asyncio.timeout(5):
        async with make_model().stream(ModelRequest(CONVERSATION)) as stream:
            async for event in stream:
                assert event == TextDelta("tick ")
                break
    await scripted_server.wait_for_disconnects(1, timeout=5)
    assert scripted_server.completed_streams == 0


async def test_cancelling_the_consumer_aborts_the_request(
    scripted_server: ScriptedModelServer, make_model: ModelFactory
) -> None:
    scripted_server.script(SLOW)
    model = make_model()
    received: list[ModelEvent] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream(ModelRequest(CONVERSATION)):
            received.append(event)
            first.set()

    task = asyncio.create_task(consume())
    async with asyncio.timeout(5):
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    await scripted_server.wait_for_disconnects(1, timeout=5)
    assert 1 <= len(received) < 50

    # The model is still usable afterwards.
    scripted_server.script(Turn(text=["again"]))
    response = await asyncio.wait_for(model.complete(ModelRequest(CONVERSATION)), 5)
    assert response.text == "again"


# ------------------------------------------------------------- non-streaming


async def test_non_streaming_mode_gives_the_same_events(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    arguments = {"title": "T", "body": "B"}
    scripted_server.script(
        Turn(
            text=["Here it is."],
            tool_calls=[ScriptedToolCall("emit_artifact", arguments, id="n1")],
            usage=(3, 4),
        )
    )
    events = await events_of(
        make_model(streaming=False).stream(ModelRequest(CONVERSATION, tools=(ARTIFACT,)))
    )
    assert not scripted_server.last.stream
    assert [type(e).__name__ for e in events] == [
        "TextDelta",
        "ToolCallStart",
        "ToolCallDelta",
        "ToolCallEnd",
        "Finish",
    ]
    text, start, delta, end, finish = events
    assert text == TextDelta("Here it is.")
    assert start == ToolCallStart("n1", "emit_artifact", 0)
    assert isinstance(delta, ToolCallDelta) and json.loads(delta.arguments_delta) == arguments
    assert isinstance(end, ToolCallEnd) and end.arguments == arguments
    assert end.arguments_json == delta.arguments_delta
    assert isinstance(finish, Finish)
    assert (finish.reason, finish.usage) == ("tool_calls", Usage(3, 4))


# ------------------------------------------------------------------ cost per call


def _long_conversation(turns: int) -> tuple[ChatMessage, ...]:
    """A system prompt, then ``turns`` rounds of user text, a tool call and its result."""
    messages: list[ChatMessage] = [SystemMessage("You answer questions.")]
    for i in range(turns):
        messages.append(UserMessage(f"question {i}"))
        call = ToolCall(f"call-{i}", "lookup_weather", {"city": f"city {i}"})
        messages.append(AssistantMessage(f"looking up {i}", (call,)))
        messages.append(ToolMessage(call.id, f"sunny in city {i}"))
    messages.append(UserMessage("And now?"))
    return tuple(messages)


@pytest.mark.parametrize("provider", PROVIDERS)  # the Responses API too
async def test_the_sdk_does_not_walk_the_conversation_on_each_call(
    scripted_server: ScriptedModelServer, make_model: ModelFactory, provider: str
) -> None:
    """The Python calls the provider SDK makes for one model call do not grow with the
    conversation: the request body is sent as built, not re-walked against the SDK's
    parameter types (the OpenAI SDK's ``create`` did that: thousands of calls and
    0.5 s of the event loop per model call at 3,000 messages, 1.4 s on the Responses
    API). The Anthropic SDK copies the body once to drop omitted values: about three
    calls a message, and nothing else."""
    sdk_dir = os.path.dirname(importlib.import_module(PROVIDER_SDKS[provider]).__file__ or "")
    model = make_model()

    async def sdk_calls(turns: int) -> int:
        scripted_server.script(Turn(text=["ok"]))
        request = ModelRequest(_long_conversation(turns), tools=(LOOKUP,))
        counted = 0

        def profile(frame: types.FrameType, event: str, arg: object) -> None:
            nonlocal counted
            if event == "call" and frame.f_code.co_filename.startswith(sdk_dir):
                counted += 1

        sys.setprofile(profile)
        try:
            response = await model.complete(request)
        finally:
            sys.setprofile(None)
        assert response.text == "ok"
        return counted

    await sdk_calls(1)  # the first call imports and caches what the SDK needs
    small, large = await sdk_calls(10), await sdk_calls(1000)
    added = 3 * (1000 - 10)  # messages
    per_message = 4 if provider == "anthropic" else 0
    assert large <= small + 50 + per_message * added, (small, large)
