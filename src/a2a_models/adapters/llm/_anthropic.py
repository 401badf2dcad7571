"""Anthropic's Messages API through the official ``anthropic`` SDK.

Requests go to ``POST {base_url}/v1/messages`` with ``stream=True``; the raw
stream events are translated one to one: ``text_delta`` becomes
:class:`~a2a_models.adapters.llm.TextDelta`, a ``tool_use`` content block
becomes a tool call whose ``input_json_delta.partial_json`` fragments are
surfaced as :class:`~a2a_models.adapters.llm.ToolCallDelta` events, and its
``content_block_stop`` ends the call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anthropic
from anthropic import AsyncStream
from anthropic.types import (
    ContentBlockParam,
    InputJSONDelta,
    Message,
    MessageParam,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStreamEvent,
    TextBlock,
    ToolChoiceAnyParam,
    ToolChoiceAutoParam,
    ToolChoiceParam,
    ToolChoiceToolParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlock,
)
from anthropic.types import TextDelta as AnthropicTextDelta

from ._errors import ModelError, error_details, error_for_type
from ._model import (
    AssistantMessage,
    Finish,
    FinishReason,
    ForceTool,
    ModelEvent,
    ModelRequest,
    SystemMessage,
    TextDelta,
    ToolCallTracker,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
    normalize_finish,
)
from ._sdk import EventStream, SDKModel, client_options

__all__ = ["ANTHROPIC_DEFAULT_BASE_URL", "AnthropicModel"]

ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "error",
}


class AnthropicModel(SDKModel[anthropic.AsyncAnthropic]):
    """A Claude model behind ``anthropic.AsyncAnthropic(base_url=..., api_key=...)``.

    ``temperature``: the ``anthropic`` 2.x SDK has no ``temperature`` argument
    any more, so it is sent in the request body (``extra_body``); ``None``
    leaves it out. System messages are joined (blank lines between them) into
    the ``system`` parameter. ``timeout``, ``max_retries``, ``streaming`` and
    ``client`` are as for :class:`~a2a_models.adapters.llm.OpenAIChatModel`.
    """

    _sdk = anthropic
    _sdk_error = anthropic.AnthropicError

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "anthropic",
        temperature: float | None = 0.2,
        max_tokens: int = 4096,
        timeout: float = 60.0,
        max_retries: int = 2,
        streaming: bool = True,
        default_headers: Mapping[str, str] | None = None,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        super().__init__(
            provider=provider, model=model, temperature=temperature, max_tokens=max_tokens
        )
        if client is None:
            client = anthropic.AsyncAnthropic(
                **client_options(
                    provider,
                    api_key,
                    base_url or ANTHROPIC_DEFAULT_BASE_URL,
                    timeout,
                    max_retries,
                    default_headers,
                )
            )
        self._attach(client, streaming=streaming)

    # ---------------------------------------------------------------- request

    def _arguments(self, request: ModelRequest) -> dict[str, Any]:
        model, temperature, max_tokens = self._settings(request)
        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": messages_to_anthropic(request),
        }
        system = request.system_text
        if system:
            kwargs["system"] = system
        if request.tools:
            kwargs["tools"] = [tool_to_anthropic(tool) for tool in request.tools]
            kwargs["tool_choice"] = tool_choice_to_anthropic(request)
        if request.stop:
            kwargs["stop_sequences"] = list(request.stop)
        extra: dict[str, Any] = {}
        if temperature is not None:
            extra["temperature"] = temperature
        if request.extra_body:
            extra.update(request.extra_body)
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    # ----------------------------------------------------------------- events

    async def _whole_answer(self, arguments: dict[str, Any]) -> list[ModelEvent]:
        message: Message = await self._client.messages.create(**arguments, stream=False)
        return _message_events(message)

    async def _open_stream(self, arguments: dict[str, Any]) -> EventStream:
        stream: AsyncStream[RawMessageStreamEvent] = await self._client.messages.create(
            **arguments, stream=True
        )
        return stream

    def _stream_state(self) -> _EventState:
        return _EventState()

    def _model_error(self, exc: Exception) -> ModelError:
        if isinstance(exc, anthropic.APIStatusError) and exc.status_code < 400:
            # An ``error`` event inside a 200 stream: no HTTP status to report.
            message, code = error_details(exc.body)
            return error_for_type(self.provider, code, message or exc.message)
        return super()._model_error(exc)


# -------------------------------------------------------------- conversions


def messages_to_anthropic(request: ModelRequest) -> list[MessageParam]:
    """The conversation as Messages API turns.

    System messages are left out (they go to ``system``). Consecutive user
    content - tool results and user text - is merged into one user turn, tool
    results first, as the API requires.
    """
    out: list[MessageParam] = []
    pending: list[ContentBlockParam] = []  # the user turn being assembled

    def flush() -> None:
        if pending:
            out.append({"role": "user", "content": list(pending)})
            pending.clear()

    for message in request.messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, UserMessage):
            pending.append({"type": "text", "text": message.text})
        elif isinstance(message, ToolMessage):
            result: ToolResultBlockParam = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            if message.is_error:
                result["is_error"] = True
            # tool results come before any text in the same user turn
            position = sum(1 for block in pending if block.get("type") == "tool_result")
            pending.insert(position, result)
        elif isinstance(message, AssistantMessage):
            flush()
            blocks: list[ContentBlockParam] = []
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            for call in message.tool_calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": dict(call.arguments),
                    }
                )
            if not blocks:  # the API rejects empty assistant turns
                blocks.append({"type": "text", "text": "(no answer)"})
            out.append({"role": "assistant", "content": blocks})
    flush()
    return out


def tool_to_anthropic(tool: ToolSpec) -> ToolParam:
    spec: ToolParam = {"name": tool.name, "input_schema": tool.schema_dict()}
    if tool.description:
        spec["description"] = tool.description
    return spec


def tool_choice_to_anthropic(request: ModelRequest) -> ToolChoiceParam:
    choice = request.tool_choice
    if choice == "none":
        return {"type": "none"}
    no_parallel = request.parallel_tool_calls is False
    if isinstance(choice, ForceTool):
        forced: ToolChoiceToolParam = {"type": "tool", "name": choice.name}
        if no_parallel:
            forced["disable_parallel_tool_use"] = True
        return forced
    if choice == "required":
        required: ToolChoiceAnyParam = {"type": "any"}
        if no_parallel:
            required["disable_parallel_tool_use"] = True
        return required
    auto: ToolChoiceAutoParam = {"type": "auto"}
    if no_parallel:
        auto["disable_parallel_tool_use"] = True
    return auto


# --------------------------------------------------------------- streaming


class _EventState:
    """Folds raw Messages API stream events into model events."""

    def __init__(self) -> None:
        self.tracker = ToolCallTracker()
        self.initial_input: dict[int, dict[str, object]] = {}
        self.stop_reason: str | None = None
        self.stopped = False
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None

    def feed(self, event: RawMessageStreamEvent) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if isinstance(event, RawMessageStartEvent):
            usage = event.message.usage
            self.input_tokens = usage.input_tokens
            self.output_tokens = usage.output_tokens
        elif isinstance(event, RawContentBlockStartEvent):
            block = event.content_block
            if isinstance(block, ToolUseBlock):
                events.append(self.tracker.start(event.index, block.id, block.name))
                if block.input:
                    self.initial_input[event.index] = dict(block.input)
            elif isinstance(block, TextBlock) and block.text:
                events.append(TextDelta(block.text))
        elif isinstance(event, RawContentBlockDeltaEvent):
            delta = event.delta
            if isinstance(delta, AnthropicTextDelta):
                if delta.text:
                    events.append(TextDelta(delta.text))
            elif isinstance(delta, InputJSONDelta):
                chunk = self.tracker.delta(event.index, delta.partial_json)
                if chunk is not None:
                    events.append(chunk)
        elif isinstance(event, RawContentBlockStopEvent):
            events.extend(self._end(event.index))
        elif isinstance(event, RawMessageDeltaEvent):
            if event.delta.stop_reason is not None:
                self.stop_reason = event.delta.stop_reason
            self.output_tokens = event.usage.output_tokens
            if event.usage.input_tokens is not None:
                self.input_tokens = event.usage.input_tokens
        else:  # message_stop
            self.stopped = True
        return events

    def _end(self, index: int) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if not self.tracker.is_open(index):
            return events
        initial = self.initial_input.pop(index, None)
        if initial and not self.tracker.has_chunks(index):
            # A server that put the whole input in content_block_start.
            chunk = self.tracker.delta(index, json.dumps(initial, ensure_ascii=False))
            if chunk is not None:
                events.append(chunk)
        ended = self.tracker.end(index)
        if ended is not None:
            events.append(ended)
        return events

    def finish(self) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for index in sorted(self.initial_input):
            events.extend(self._end(index))
        events.extend(self.tracker.end_all())
        usage = Usage(self.input_tokens, self.output_tokens)
        if self.stop_reason is None:
            events.append(
                Finish(
                    "error",
                    usage,
                    None,
                    "the stream ended before the provider reported a stop reason",
                )
            )
            return events
        events.append(_finish(self.stop_reason, usage, self.tracker.count))
        return events


def _message_events(message: Message) -> list[ModelEvent]:
    """The events of a non-streamed answer."""
    events: list[ModelEvent] = []
    tracker = ToolCallTracker()
    for position, block in enumerate(message.content):
        if isinstance(block, TextBlock):
            if block.text:
                events.append(TextDelta(block.text))
        elif isinstance(block, ToolUseBlock):
            arguments = json.dumps(block.input, ensure_ascii=False) if block.input else ""
            events.extend(tracker.whole_call(position, block.id, block.name, arguments))
    usage = Usage(message.usage.input_tokens, message.usage.output_tokens)
    events.append(_finish(message.stop_reason, usage, tracker.count))
    return events


def _finish(stop_reason: str | None, usage: Usage, tool_calls: int) -> Finish:
    reason = _FINISH.get(stop_reason or "", "stop")
    return Finish(
        normalize_finish(reason, tool_calls=tool_calls),
        usage,
        stop_reason,
        "the model refused to answer" if stop_reason == "refusal" else None,
    )
