"""The model interface without a server: lazy imports, validation, conversions, stream quirks."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

import a2a_models.adapters.llm as llm
from a2a_models.adapters.llm import (
    AssistantMessage,
    Finish,
    ForceTool,
    ModelRequest,
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

TOOL = ToolSpec("lookup", "Look up", {"type": "object", "properties": {"q": {"type": "string"}}})

# ------------------------------------------------------------------ packaging


def test_importing_the_package_loads_no_sdk() -> None:
    code = (
        "import sys\n"
        "import a2a_models, a2a_models.adapters.llm as llm\n"
        "llm.ModelRequest, llm.ToolSpec, llm.ModelError, llm.resolve_model_config, llm.Finish\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'httpx2') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_public_names_resolve() -> None:
    # The public surface is curated; the internal names still resolve for existing code.
    assert llm.__all__ == sorted(set(llm._EXPORTS) - llm._INTERNAL)
    assert llm._INTERNAL <= set(llm._EXPORTS) and len(llm.__all__) < 60
    for name in llm._EXPORTS:
        assert getattr(llm, name) is not None, name
    with pytest.raises(AttributeError):
        _ = llm.NotAName


# --------------------------------------------------------------- validation


@pytest.mark.parametrize("interval", [0, -1, float("nan"), float("inf")])
def test_status_interval_and_guardrails_refuse_what_is_no_number_of_seconds(
    interval: float,
) -> None:
    from a2a_models.adapters.llm import Guardrails, LLMAgent
    from a2a_models.tools import define_skill, function_tool

    @function_tool
    async def echo(text: str) -> str:
        """Echoes."""
        return text

    skill = define_skill("s", description="d", tags=["t"], examples=["e"], tools=[echo])
    with pytest.raises(ValueError, match="status_interval must be a positive number"):
        LLMAgent(object(), [skill], status_interval=interval)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="guardrails: timeout must be a positive number"):
        Guardrails(timeout=interval)


def test_tool_spec_validation_and_immutability() -> None:
    with pytest.raises(ValueError, match="invalid tool name 'has space'"):
        ToolSpec("has space")
    with pytest.raises(ValueError, match="invalid tool name"):
        ToolSpec("x" * 65)
    with pytest.raises(TypeError, match="input_schema must be a JSON Schema object"):
        ToolSpec("t", "d", ["not", "a", "mapping"])  # type: ignore[arg-type]
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    spec = ToolSpec("dispatch_workflow_report-v2", "d", schema)
    schema["properties"]["late"] = {"type": "string"}  # the spec kept its own copy
    assert spec.input_schema == {"type": "object", "properties": {}}
    with pytest.raises(TypeError):
        spec.input_schema["x"] = 1  # type: ignore[index]
    assert ToolSpec("bare").input_schema == {"type": "object", "properties": {}}
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        ToolSpec("t", "d", {"type": "object", "default": object()})
    copied = spec.schema_dict()
    copied["properties"]["mutated"] = True
    assert "mutated" not in spec.input_schema["properties"]


def test_request_validation() -> None:
    user = UserMessage("hi")
    with pytest.raises(ValueError, match="at least one message"):
        ModelRequest(())
    with pytest.raises(TypeError, match="messages must be"):
        ModelRequest(("hi",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="duplicate tool names in the request: lookup"):
        ModelRequest((user,), tools=(TOOL, TOOL))
    with pytest.raises(ValueError, match=r"forces tool 'emit'.*not among the request's tools"):
        ModelRequest((user,), tools=(TOOL,), tool_choice=ForceTool("emit"))
    with pytest.raises(ValueError, match="'required' needs at least one tool"):
        ModelRequest((user,), tool_choice="required")
    with pytest.raises(ValueError, match="tool_choice must be"):
        ModelRequest((user,), tools=(TOOL,), tool_choice="any")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_tokens must be a positive integer"):
        ModelRequest((user,), max_tokens=0)
    with pytest.raises(ValueError, match="temperature must be a number"):
        ModelRequest((user,), temperature=-0.5)
    request = ModelRequest([user], tools=[TOOL], stop=["END"])  # type: ignore[arg-type]
    assert isinstance(request.messages, tuple) and isinstance(request.tools, tuple)
    assert request.stop == ("END",)


def test_system_text_joins_system_messages() -> None:
    request = ModelRequest((SystemMessage("a"), UserMessage("u"), SystemMessage("b")))
    assert request.system_text == "a\n\nb"


# --------------------------------------------------------------- conversions


def test_openai_messages() -> None:
    from a2a_models.adapters.llm._openai import messages_to_openai, tool_choice_to_openai

    request = ModelRequest(
        (
            SystemMessage("sys"),
            UserMessage("u"),
            AssistantMessage("thinking", (ToolCall("c1", "lookup", {"q": "é"}),)),
            ToolMessage("c1", "boom", is_error=True),
            AssistantMessage("final"),
        ),
        tools=(TOOL,),
        tool_choice=ForceTool("lookup"),
    )
    assert messages_to_openai(request) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "u"},
        {
            "role": "assistant",
            "content": "thinking",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q":"é"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error: boom"},
        {"role": "assistant", "content": "final"},
    ]
    assert tool_choice_to_openai(request) == {"type": "function", "function": {"name": "lookup"}}


def test_anthropic_messages_merge_user_turns() -> None:
    from a2a_models.adapters.llm._anthropic import messages_to_anthropic

    request = ModelRequest(
        (
            SystemMessage("sys"),
            UserMessage("first"),
            UserMessage("second"),
            AssistantMessage("", (ToolCall("t1", "lookup", {}), ToolCall("t2", "lookup", {}))),
            ToolMessage("t1", "one"),
            UserMessage("and also"),
            ToolMessage("t2", "two", is_error=True),
            AssistantMessage(""),
        )
    )
    assert messages_to_anthropic(request) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "lookup", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [  # tool results first, in order, then the text
                {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "two", "is_error": True},
                {"type": "text", "text": "and also"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "(no answer)"}]},
    ]


# ---------------------------------------------- OpenAI-compatible stream quirks


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> Any:
    from openai.types.chat import ChatCompletionChunk

    return ChatCompletionChunk.model_validate(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "usage": usage,
        }
    )


def _fold(chunks: list[Any]) -> list[Any]:
    from a2a_models.adapters.llm._openai import _ChunkState

    state = _ChunkState()
    events: list[Any] = []
    for chunk in chunks:
        events += state.feed(chunk)
    return events + state.finish()


def test_openai_whole_tool_call_in_one_chunk_and_stop_reason_fixed() -> None:
    # Some servers (older Ollama, llama.cpp) send the whole call at once and say "stop".
    call = {
        "index": 0,
        "id": "c",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"q":1}'},
    }
    events = _fold([_chunk({"tool_calls": [call]}), _chunk({}, "stop")])
    assert events == [
        ToolCallStart("c", "lookup", 0),
        ToolCallDelta("c", 0, '{"q":1}'),
        ToolCallEnd("c", "lookup", 0, {"q": 1}, '{"q":1}'),
        Finish("tool_calls", Usage(), "stop"),
    ]


def test_openai_index_reused_by_a_new_call() -> None:
    first = {"index": 0, "id": "a", "function": {"name": "lookup", "arguments": "{}"}}
    second = {"index": 0, "id": "b", "function": {"name": "lookup", "arguments": '{"q":2}'}}
    events = _fold(
        [
            _chunk({"tool_calls": [first]}),
            _chunk({"tool_calls": [second]}),
            _chunk({}, "tool_calls"),
        ]
    )
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.id, e.index, e.arguments) for e in ends] == [("a", 0, {}), ("b", 1, {"q": 2})]


def test_openai_calls_without_index() -> None:
    from openai._models import construct_type
    from openai.types.chat import ChatCompletionChunk

    def loose(delta: dict[str, Any], finish: str | None) -> Any:  # as the SDK builds chunks
        return construct_type(
            type_=ChatCompletionChunk,
            value={
                "id": "x",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
        )

    calls = [
        {"id": f"id{n}", "function": {"name": "lookup", "arguments": f'{{"q":{n}}}'}}
        for n in (1, 2)
    ]
    events = _fold(
        [
            loose({"tool_calls": [calls[0]]}, ""),
            loose({"tool_calls": [calls[1]]}, ""),
            loose({}, "stop"),
        ]
    )
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.id, e.index, e.arguments) for e in ends] == [
        ("id1", 0, {"q": 1}),
        ("id2", 1, {"q": 2}),
    ]
    assert events[-1].reason == "tool_calls"


def test_openai_missing_id_and_late_name() -> None:
    events = _fold(
        [
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q":'}}]}),
            _chunk(
                {"tool_calls": [{"index": 0, "function": {"name": "lookup", "arguments": "3}"}}]}
            ),
            _chunk({}, "tool_calls"),
        ]
    )
    assert events[0] == ToolCallStart("call_0", "lookup", 0)
    assert [e.arguments_delta for e in events if isinstance(e, ToolCallDelta)] == ['{"q":', "3}"]
    assert events[-2] == ToolCallEnd("call_0", "lookup", 0, {"q": 3}, '{"q":3}')


def test_openai_usage_chunk_without_choices_and_content_filter() -> None:
    from openai.types.chat import ChatCompletionChunk

    usage_only = ChatCompletionChunk.model_validate(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        }
    )
    events = _fold([_chunk({"content": "no"}), _chunk({}, "content_filter"), usage_only])
    assert events[0] == TextDelta("no")
    finish = events[-1]
    assert finish.reason == "error" and finish.usage == Usage(5, 2)
    assert finish.message and "content filter" in finish.message


def test_openai_stop_with_no_calls_but_tool_calls_reason() -> None:
    events = _fold([_chunk({"content": "hi"}), _chunk({}, "tool_calls")])
    assert events[-1].reason == "stop"


def test_anthropic_tool_input_given_whole_in_block_start() -> None:
    from anthropic.types import RawContentBlockStartEvent, RawContentBlockStopEvent

    from a2a_models.adapters.llm._anthropic import _EventState

    state = _EventState()
    start = RawContentBlockStartEvent.model_validate(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "lookup", "input": {"q": "x"}},
        }
    )
    stop = RawContentBlockStopEvent.model_validate({"type": "content_block_stop", "index": 0})
    events = state.feed(start) + state.feed(stop) + state.finish()
    assert events[:3] == [
        ToolCallStart("t", "lookup", 0),
        ToolCallDelta("t", 0, '{"q": "x"}'),
        ToolCallEnd("t", "lookup", 0, {"q": "x"}, '{"q": "x"}'),
    ]
    finish = events[-1]
    assert isinstance(finish, Finish)
    assert finish.reason == "error"  # no message_delta: no stop reason was reported


def test_parse_arguments() -> None:
    from a2a_models.adapters.llm._model import parse_arguments

    assert parse_arguments("t", "i", "") == ({}, "")
    assert parse_arguments("t", "i", " \n") == ({}, "")
    assert parse_arguments("t", "i", '{"a": 1}') == ({"a": 1}, "")
    value, problem = parse_arguments("t", "i", '"text"')
    assert value is None and "must be a JSON object, not str" in problem
    value, problem = parse_arguments("t", "i", '{"a": ')
    assert value is None and "not valid JSON" in problem and "line 1" in problem


def test_tool_call_error_event_fields() -> None:
    error = ToolCallError("i", "t", 0, "{", "bad")
    assert error.call == ToolCall("i", "t", {})
    assert error.type == "tool_call_error"
