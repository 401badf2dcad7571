"""OpenAI's Responses API (``api: responses``) with the official SDK against the scripted server.

The tool loop and artifact streaming run on it in test_orchestration.py (the
``responses`` provider); here: the wire format, the events, finishes and errors.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_models.adapters.llm import (
    AssistantMessage,
    Finish,
    ForceTool,
    ModelAuthenticationError,
    ModelBadRequestError,
    ModelConfigError,
    ModelRateLimitError,
    ModelRequest,
    ModelServerError,
    OpenAIChatModel,
    OpenAIResponsesModel,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
    make_model,
    resolve_model_config,
)

from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn

LOOKUP = ToolSpec(
    "lookup_weather",
    "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CONVERSATION = (SystemMessage("You are a weather agent."), UserMessage("Weather in Paris?"))


def _model(server: ScriptedModelServer, **options: Any) -> OpenAIResponsesModel:
    options.setdefault("max_retries", 0)
    options.setdefault("timeout", 5.0)
    return OpenAIResponsesModel(
        "gpt-resp", api_key="sk-r", base_url=server.openai_base_url, **options
    )


async def _events(model: OpenAIResponsesModel, request: ModelRequest) -> list[Any]:
    async with model:
        return [e async for e in model.stream(request)]


async def test_text_streams_with_usage_and_the_request_is_the_responses_format(
    scripted_server: ScriptedModelServer,
) -> None:
    scripted_server.script(Turn(text=["Sun", "ny."], usage=(40, 3)))
    events = await _events(
        _model(scripted_server, temperature=0.5, max_tokens=99), ModelRequest(CONVERSATION)
    )
    assert events == [TextDelta("Sun"), TextDelta("ny."), Finish("stop", Usage(40, 3), "completed")]
    sent = scripted_server.last
    assert sent.api == "responses" and sent.path == "/v1/responses" and sent.stream
    assert sent.headers["authorization"] == "Bearer sk-r"
    body = sent.body
    assert body["model"] == "gpt-resp"
    assert body["temperature"] == 0.5
    assert body["max_output_tokens"] == 99
    assert body["store"] is False
    assert body["input"] == [
        {"role": "system", "content": "You are a weather agent."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert "tools" not in body and "messages" not in body


async def test_tool_calls_stream_their_arguments_and_history_goes_back_as_items(
    scripted_server: ScriptedModelServer,
) -> None:
    call = ScriptedToolCall("lookup_weather", {"city": "Paris"}, id="call-a", chunk_size=4)
    scripted_server.script(Turn(text=["Checking."], tool_calls=[call]), Turn(text=["Sunny."]))
    model = _model(scripted_server)
    async with model:
        events = [e async for e in model.stream(ModelRequest(CONVERSATION, tools=(LOOKUP,)))]
        starts = [e for e in events if isinstance(e, ToolCallStart)]
        deltas = [e for e in events if isinstance(e, ToolCallDelta)]
        ends = [e for e in events if isinstance(e, ToolCallEnd)]
        assert [(s.id, s.name) for s in starts] == [("call-a", "lookup_weather")]
        assert len(deltas) > 2 and "".join(d.arguments_delta for d in deltas) == '{"city":"Paris"}'
        assert [e.arguments for e in ends] == [{"city": "Paris"}]
        assert events[-1].reason == "tool_calls"
        history = (
            *CONVERSATION,
            AssistantMessage(
                "Checking.", (ToolCall("call-a", "lookup_weather", {"city": "Paris"}),)
            ),
            ToolMessage("call-a", "sunny, 24C"),
            ToolMessage("call-x", "boom", is_error=True),
        )
        response = await model.complete(
            ModelRequest(history, tools=(LOOKUP,), tool_choice=ForceTool("lookup_weather"))
        )
    assert response.text == "Sunny."
    body = scripted_server.last.body
    assert body["tools"] == [
        {
            "type": "function",
            "name": "lookup_weather",
            "parameters": LOOKUP.schema_dict(),
            "strict": False,
            "description": "Current weather for a city",
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "lookup_weather"}
    assert body["input"][2:] == [
        {"role": "assistant", "content": "Checking."},
        {
            "type": "function_call",
            "call_id": "call-a",
            "name": "lookup_weather",
            "arguments": '{"city":"Paris"}',
        },
        {"type": "function_call_output", "call_id": "call-a", "output": "sunny, 24C"},
        {"type": "function_call_output", "call_id": "call-x", "output": "Error: boom"},
    ]


@pytest.mark.parametrize("choice", ["auto", "required", "none"])
async def test_tool_choice_strings_pass_through(
    scripted_server: ScriptedModelServer, choice: Any
) -> None:
    scripted_server.script(Turn(text=["ok"]))
    await _events(
        _model(scripted_server),
        ModelRequest(CONVERSATION, tools=(LOOKUP,), tool_choice=choice, parallel_tool_calls=False),
    )
    assert scripted_server.last.body["tool_choice"] == choice
    assert scripted_server.last.body["parallel_tool_calls"] is False


async def test_not_streaming_gives_the_same_events(scripted_server: ScriptedModelServer) -> None:
    call = ScriptedToolCall("lookup_weather", {"city": "Oslo"}, id="c9")
    scripted_server.script(Turn(text=["Hm."], tool_calls=[call], usage=(5, 6)))
    events = await _events(
        _model(scripted_server, streaming=False), ModelRequest(CONVERSATION, tools=(LOOKUP,))
    )
    assert not scripted_server.last.stream
    assert events[0] == TextDelta("Hm.")
    assert isinstance(events[1], ToolCallStart) and events[1].id == "c9"
    assert isinstance(events[-2], ToolCallEnd) and events[-2].arguments == {"city": "Oslo"}
    assert events[-1] == Finish("tool_calls", Usage(5, 6), "completed")


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize(
    ("stop", "reason", "provider_reason"),
    [("length", "length", "max_output_tokens"), ("content_filter", "error", "content_filter")],
)
async def test_incomplete_answers(
    scripted_server: ScriptedModelServer,
    streaming: bool,
    stop: str,
    reason: str,
    provider_reason: str,
) -> None:
    scripted_server.script(Turn(text=["cut"], stop=stop))
    events = await _events(_model(scripted_server, streaming=streaming), ModelRequest(CONVERSATION))
    finish = events[-1]
    assert isinstance(finish, Finish)
    assert (finish.reason, finish.provider_reason) == (reason, provider_reason)


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (401, ModelAuthenticationError),
        (429, ModelRateLimitError),
        (500, ModelServerError),
        (400, ModelBadRequestError),
    ],
)
async def test_http_errors_map_like_chat_completions(
    scripted_server: ScriptedModelServer, status: int, error_class: type[Exception]
) -> None:
    scripted_server.script(
        Turn(status=status, error_message=f"scripted {status}", headers={"retry-after": "3"})
    )
    with pytest.raises(error_class) as caught:
        await _events(_model(scripted_server), ModelRequest(CONVERSATION))
    assert str(caught.value) == f"openai: scripted {status} (HTTP {status})"


async def test_errors_inside_the_stream_and_a_cut_stream(
    scripted_server: ScriptedModelServer,
) -> None:
    scripted_server.script(
        Turn(text=["a", "b"], error_after=3, error_type="rate_limit_exceeded"),
        Turn(text=["a", "b"], error_after=3),
        Turn(text=["a", "b"], truncate_after=3),
    )
    with pytest.raises(ModelRateLimitError):
        await _events(_model(scripted_server), ModelRequest(CONVERSATION))
    with pytest.raises(ModelServerError, match="scripted failure"):
        await _events(_model(scripted_server), ModelRequest(CONVERSATION))
    events = await _events(_model(scripted_server), ModelRequest(CONVERSATION))
    assert events[-1].reason == "error"
    assert "before the provider reported a finish reason" in events[-1].message


async def test_stop_sequences_are_refused_not_dropped(scripted_server: ScriptedModelServer) -> None:
    with pytest.raises(ModelBadRequestError, match="no stop sequences"):
        await _events(_model(scripted_server), ModelRequest(CONVERSATION, stop=("END",)))
    assert scripted_server.requests == []


def test_workspace_setting_api_responses_picks_the_model() -> None:
    env = {"OPENAI_API_KEY": "sk"}
    config = resolve_model_config(workspace={"provider": "openai", "api": "responses"}, env=env)
    assert config.api == "responses" and config.describe()["api"] == "responses"
    assert isinstance(make_model(config), OpenAIResponsesModel)
    assert isinstance(make_model(resolve_model_config(env=env)), OpenAIChatModel)
    with pytest.raises(
        ModelConfigError, match="workspace model settings: api must be one of chat, responses"
    ):
        resolve_model_config(workspace={"api": "assistants"}, env=env)
    with pytest.raises(ModelConfigError, match="OpenAI's; the provider is 'anthropic'"):
        resolve_model_config(
            workspace={"provider": "anthropic", "api": "responses"}, env={"ANTHROPIC_API_KEY": "k"}
        )
    assert json.dumps(config.describe())  # printable by agent doctor
