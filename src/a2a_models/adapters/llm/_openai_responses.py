"""OpenAI's Responses API (``POST /v1/responses``) through the official ``openai`` SDK.

The second OpenAI provider mode (``api: responses`` in a workspace's model
settings, :class:`OpenAIResponsesModel` from Python): the same
:class:`~a2a_models.adapters.llm.Model` contract as the chat-completions
model, so the tool loop, streaming and error mapping are unchanged. The
conversation is sent statelessly as input items (``store: false``): system
and user turns as messages, tool calls as ``function_call`` items and their
results as ``function_call_output`` items. Streamed
``response.function_call_arguments.delta`` fragments become
:class:`~a2a_models.adapters.llm.ToolCallDelta` events as they arrive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai
from openai import AsyncStream
from openai.types.responses import Response, ResponseStreamEvent

from ._errors import error_for_status, error_for_type
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
from ._openai import openai_client, post, with_extra_body
from ._sdk import EventStream, SDKModel

__all__ = ["OpenAIResponsesModel", "input_to_responses", "tool_to_responses"]


class OpenAIResponsesModel(SDKModel[openai.AsyncOpenAI]):
    """A model behind ``openai.AsyncOpenAI(...).responses`` (the Responses API).

    Options as :class:`~a2a_models.adapters.llm.OpenAIChatModel` (``provider``
    label, ``timeout`` per connect/read, the SDK's ``max_retries``,
    ``streaming=False`` for whole answers, ``default_headers``, ``client``).
    ``store`` is sent as is (default ``False``: the agent sends the whole
    conversation each turn, nothing needs keeping). Stop sequences are not
    part of this API: a request with ``stop`` is refused with a
    :class:`~a2a_models.adapters.llm.ModelError` rather than ignored.
    """

    _sdk = openai
    _sdk_error = openai.OpenAIError

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "openai",
        temperature: float | None = 0.2,
        max_tokens: int = 4096,
        timeout: float = 60.0,
        max_retries: int = 2,
        streaming: bool = True,
        store: bool = False,
        default_headers: Mapping[str, str] | None = None,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        super().__init__(
            provider=provider, model=model, temperature=temperature, max_tokens=max_tokens
        )
        if client is None:
            client = openai_client(
                provider, api_key, base_url, timeout, max_retries, default_headers
            )
        self._attach(client, streaming=streaming)
        self.store = store

    def _arguments(self, request: ModelRequest) -> dict[str, Any]:
        if request.stop:
            raise error_for_status(
                self.provider, 400, "the OpenAI Responses API has no stop sequences"
            )
        model, temperature, max_tokens = self._settings(request)
        body: dict[str, Any] = {
            "model": model,
            "input": input_to_responses(request),
            "max_output_tokens": max_tokens,
            "store": self.store,
        }
        if temperature is not None:
            body["temperature"] = temperature
        if request.tools:
            body["tools"] = [tool_to_responses(tool) for tool in request.tools]
            choice = request.tool_choice
            body["tool_choice"] = (
                {"type": "function", "name": choice.name}
                if isinstance(choice, ForceTool)
                else choice
            )
            if request.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = request.parallel_tool_calls
        return with_extra_body(body, request)

    async def _whole_answer(self, arguments: dict[str, Any]) -> list[ModelEvent]:
        response: Response = await post(
            self._client, "/responses", {**arguments, "stream": False}, Response
        )
        return _response_events(response, self.provider)

    async def _open_stream(self, arguments: dict[str, Any]) -> EventStream:
        stream: AsyncStream[ResponseStreamEvent] = await post(
            self._client,
            "/responses",
            {**arguments, "stream": True},
            Response,
            stream_cls=AsyncStream[ResponseStreamEvent],
        )
        return stream

    def _stream_state(self) -> _EventState:
        return _EventState(self.provider)


# -------------------------------------------------------------- conversions


def input_to_responses(request: ModelRequest) -> list[dict[str, Any]]:
    """The conversation as Responses API input items."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.text})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            if message.text:
                out.append({"role": "assistant", "content": message.text})
            for call in message.tool_calls:
                out.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments_json(),
                    }
                )
        elif isinstance(message, ToolMessage):
            content = f"Error: {message.content}" if message.is_error else message.content
            out.append(
                {"type": "function_call_output", "call_id": message.tool_call_id, "output": content}
            )
    return out


def tool_to_responses(tool: ToolSpec) -> dict[str, Any]:
    """A function tool of the Responses API (not strict: schemas are taken as given)."""
    spec: dict[str, Any] = {
        "type": "function",
        "name": tool.name,
        "parameters": tool.schema_dict(),
        "strict": False,
    }
    if tool.description:
        spec["description"] = tool.description
    return spec


def _usage(response: Any) -> Usage:
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage()
    return Usage(usage.input_tokens, usage.output_tokens)


def _finish(response: Any, tool_calls: int, provider: str) -> Finish:
    status = getattr(response, "status", None)
    usage = _usage(response)
    if status == "failed":
        error = getattr(response, "error", None)
        code = getattr(error, "code", None)
        message = getattr(error, "message", None) or "the response failed"
        raise error_for_type(provider, code, message)
    if status == "incomplete":
        details = getattr(response, "incomplete_details", None)
        why = getattr(details, "reason", None)
        if why == "max_output_tokens":
            return Finish("length", usage, why)
        return Finish(
            "error",
            usage,
            why,
            "the provider's content filter stopped the answer"
            if why == "content_filter"
            else f"the response is incomplete ({why or 'no reason given'})",
        )
    reason: FinishReason = "tool_calls" if tool_calls else "stop"
    return Finish(normalize_finish(reason, tool_calls=tool_calls), usage, status)


class _EventState:
    """Folds Responses stream events into model events."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.tracker = ToolCallTracker()
        self.done: Finish | None = None

    def feed(self, event: Any) -> list[ModelEvent]:
        kind = getattr(event, "type", None)
        events: list[ModelEvent] = []
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            if event.delta:
                events.append(TextDelta(event.delta))
        elif kind == "response.output_item.added":
            item = event.item
            if getattr(item, "type", None) == "function_call":
                key = item.id or item.call_id
                events.append(self.tracker.start(key, item.call_id, item.name))
                if item.arguments:
                    delta = self.tracker.delta(key, item.arguments)
                    if delta is not None:
                        events.append(delta)
        elif kind == "response.function_call_arguments.delta":
            if event.delta and self.tracker.is_open(event.item_id):
                delta = self.tracker.delta(event.item_id, event.delta)
                if delta is not None:
                    events.append(delta)
        elif kind == "response.function_call_arguments.done":
            key = event.item_id
            if self.tracker.is_open(key) and not self.tracker.has_chunks(key) and event.arguments:
                delta = self.tracker.delta(key, event.arguments)  # nothing was streamed
                if delta is not None:
                    events.append(delta)
        elif kind == "response.output_item.done":
            item = event.item
            if getattr(item, "type", None) == "function_call":
                ended = self.tracker.end(item.id or item.call_id)
                if ended is not None:
                    events.append(ended)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            events.extend(self.tracker.end_all())
            self.done = _finish(event.response, self.tracker.count, self.provider)
        elif kind == "error":
            raise error_for_type(self.provider, event.code, event.message)
        return events

    def finish(self) -> list[ModelEvent]:
        events: list[ModelEvent] = list(self.tracker.end_all())
        if self.done is None:
            events.append(
                Finish(
                    "error",
                    Usage(),
                    None,
                    "the stream ended before the provider reported a finish reason",
                )
            )
        else:
            events.append(self.done)
        return events


def _response_events(response: Any, provider: str) -> list[ModelEvent]:
    """The events of a non-streamed response."""
    events: list[ModelEvent] = []
    tracker = ToolCallTracker()
    for position, item in enumerate(response.output or ()):
        kind = getattr(item, "type", None)
        if kind == "message":
            for content in item.content or ():
                text = getattr(content, "text", None) or getattr(content, "refusal", None)
                if text:
                    events.append(TextDelta(text))
        elif kind == "function_call":
            events.extend(
                tracker.whole_call(position, item.call_id, item.name, item.arguments or "")
            )
    events.append(_finish(response, tracker.count, provider))
    return events
