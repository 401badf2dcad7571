"""OpenAI-compatible chat completions through the official ``openai`` SDK.

One client covers OpenAI itself and every server that speaks its
``/v1/chat/completions`` API - OpenRouter, Ollama, vLLM, llama.cpp's
``llama-server``, LM Studio - through ``base_url``. Tools go through the native
``tools`` / ``tool_choice`` parameters; answers are streamed
(``stream=True``) and the ``delta.tool_calls[i].function.arguments`` fragments
are surfaced as :class:`~a2a_models.adapters.llm.ToolCallDelta` events as
they arrive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import openai
from openai import AsyncStream
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionToolChoiceOptionParam,
)

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

__all__ = ["OPENAI_DEFAULT_BASE_URL", "OpenAIChatModel"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"

MaxTokensField = Literal["auto", "max_tokens", "max_completion_tokens"]

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "error",
}


class OpenAIChatModel(SDKModel[openai.AsyncOpenAI]):
    """A chat-completions model behind ``openai.AsyncOpenAI(base_url=..., api_key=...)``.

    ``provider`` is only a label for errors and logs (``"openrouter"``,
    ``"ollama"``, ...). ``timeout`` (seconds) bounds connecting and each read,
    i.e. the silence between two streamed chunks; ``max_retries`` is the SDK's
    own retry count for connection errors, 408, 409, 429 and 5xx (before the
    first byte of a stream). ``streaming=False`` sends non-streaming requests
    and synthesises the same events from the whole answer (for servers that
    cannot stream tool calls). ``stream_usage`` asks for the usage chunk
    (``stream_options.include_usage``). ``max_tokens_field`` picks the request
    field for ``max_tokens``: ``"auto"`` sends ``max_completion_tokens`` to
    api.openai.com (its newer models reject ``max_tokens``) and ``max_tokens``
    to any other server (what the compatible servers understand). ``client``
    replaces the SDK client (``api_key``/``base_url``/``timeout``/... are then
    unused).
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
        stream_usage: bool = True,
        max_tokens_field: MaxTokensField = "auto",
        default_headers: Mapping[str, str] | None = None,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        super().__init__(
            provider=provider, model=model, temperature=temperature, max_tokens=max_tokens
        )
        if max_tokens_field not in ("auto", "max_tokens", "max_completion_tokens"):
            raise ValueError(
                "max_tokens_field must be 'auto', 'max_tokens' or 'max_completion_tokens', "
                f"not {max_tokens_field!r}"
            )
        if client is None:
            client = openai_client(
                provider, api_key, base_url, timeout, max_retries, default_headers
            )
        self._attach(client, streaming=streaming)
        self.stream_usage = stream_usage
        if max_tokens_field == "auto":
            official = client.base_url.host == "api.openai.com"
            max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        self.max_tokens_field = max_tokens_field

    # ---------------------------------------------------------------- request

    def _arguments(self, request: ModelRequest) -> dict[str, Any]:
        model, temperature, max_tokens = self._settings(request)
        body: dict[str, Any] = {
            "model": model,
            "messages": messages_to_openai(request),
            self.max_tokens_field: max_tokens,
        }
        if temperature is not None:
            body["temperature"] = temperature
        if request.tools:
            body["tools"] = [tool_to_openai(tool) for tool in request.tools]
            body["tool_choice"] = tool_choice_to_openai(request)
            if request.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = request.parallel_tool_calls
        if request.stop:
            body["stop"] = list(request.stop)
        return with_extra_body(body, request)

    # ----------------------------------------------------------------- events

    async def _whole_answer(self, arguments: dict[str, Any]) -> list[ModelEvent]:
        completion: ChatCompletion = await post(
            self._client, "/chat/completions", {**arguments, "stream": False}, ChatCompletion
        )
        return _completion_events(completion)

    async def _open_stream(self, arguments: dict[str, Any]) -> EventStream:
        body = {**arguments, "stream": True}
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        stream: AsyncStream[ChatCompletionChunk] = await post(
            self._client,
            "/chat/completions",
            body,
            ChatCompletion,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        return stream

    def _stream_state(self) -> _ChunkState:
        return _ChunkState()


# -------------------------------------------------------------- conversions


def openai_client(
    provider: str,
    api_key: str | None,
    base_url: str | None,
    timeout: float,
    max_retries: int,
    default_headers: Mapping[str, str] | None,
) -> openai.AsyncOpenAI:
    """The SDK client both OpenAI provider modes (Chat Completions, Responses) talk through."""
    return openai.AsyncOpenAI(
        **client_options(
            provider,
            api_key,
            base_url or OPENAI_DEFAULT_BASE_URL,
            timeout,
            max_retries,
            default_headers,
            missing_key_hint=" (local servers accept any non-empty value)",
        )
    )


def with_extra_body(body: dict[str, Any], request: ModelRequest) -> dict[str, Any]:
    """``body`` with the request's ``extra_body`` merged over it (as the SDK merges it)."""
    if request.extra_body:
        body.update(request.extra_body)
    return body


async def post(
    client: openai.AsyncOpenAI,
    path: str,
    body: dict[str, Any],
    cast_to: type[Any],
    *,
    stream_cls: type[AsyncStream[Any]] | None = None,
) -> Any:
    """POST the JSON ``body`` as it is: the whole answer as ``cast_to``, or with
    ``stream_cls`` the SSE stream (what ``create`` sends after its checks).

    ``create`` walks the whole body against the SDK's parameter types before
    sending it (``async_maybe_transform``: each message against every type of
    the message union) to rename or reformat fields these bodies never have -
    about 0.17 ms a message (0.4 ms on the Responses API), so 0.5 s of the event
    loop per model call once a conversation holds 3,000 messages.
    ``client.post`` is the SDK's documented way to send a request as given;
    retries, timeouts, headers and error mapping are the same.
    """
    return await client.post(
        path,
        cast_to=cast_to,
        body=body,
        options={"security": {"bearer_auth": True}},  # the API key, as create sends it
        stream=stream_cls is not None,
        stream_cls=stream_cls,
    )


def messages_to_openai(request: ModelRequest) -> list[ChatCompletionMessageParam]:
    """The conversation as chat-completions messages (system messages stay in place)."""
    out: list[ChatCompletionMessageParam] = []
    for message in request.messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.text})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            if message.tool_calls:
                calls: list[ChatCompletionMessageFunctionToolCallParam] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_json()},
                    }
                    for call in message.tool_calls
                ]
                out.append(
                    {"role": "assistant", "content": message.text or None, "tool_calls": calls}
                )
            else:
                out.append({"role": "assistant", "content": message.text})
        elif isinstance(message, ToolMessage):
            content = f"Error: {message.content}" if message.is_error else message.content
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": content})
    return out


def tool_to_openai(tool: ToolSpec) -> ChatCompletionFunctionToolParam:
    if tool.description:
        return {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.schema_dict(),
            },
        }
    return {"type": "function", "function": {"name": tool.name, "parameters": tool.schema_dict()}}


def tool_choice_to_openai(request: ModelRequest) -> ChatCompletionToolChoiceOptionParam:
    choice = request.tool_choice
    if isinstance(choice, ForceTool):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


# --------------------------------------------------------------- streaming


class _ChunkState:
    """Folds ``ChatCompletionChunk`` values into model events."""

    def __init__(self) -> None:
        self.tracker = ToolCallTracker()
        self.names: dict[int, str] = {}  # provider index -> name, before the start event
        self.early: dict[int, list[str]] = {}  # argument chunks seen before the name
        self.ids: dict[int, str] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()

    def feed(self, chunk: ChatCompletionChunk) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if chunk.usage is not None:
            self.usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        for choice in chunk.choices:
            if choice.index != 0:  # n > 1 is never requested
                continue
            delta = choice.delta
            if delta.content:
                events.append(TextDelta(delta.content))
            if delta.refusal:
                events.append(TextDelta(delta.refusal))
            for fragment in delta.tool_calls or ():
                events.extend(self._tool_fragment(fragment))
            if choice.finish_reason:  # some servers send "" while streaming
                self.finish_reason = choice.finish_reason
                events.extend(self.tracker.end_all())
        return events

    def _tool_fragment(self, fragment: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        # Some servers (Ollama) leave out the index; their calls arrive whole, each
        # with its own id, which the id check below tells apart.
        index = getattr(fragment, "index", None)
        key: int = index if isinstance(index, int) else 0
        function = fragment.function
        name = function.name if function is not None else None
        arguments = function.arguments if function is not None else None
        open_id = self.tracker.open_id(key)
        if open_id is not None and fragment.id and fragment.id != open_id:
            # A new call reusing the index of a finished one (seen with some
            # compatible servers): close the previous call first.
            ended = self.tracker.end(key)
            if ended is not None:
                events.append(ended)
        if not self.tracker.is_open(key):
            if fragment.id:
                self.ids[key] = fragment.id
            if name:
                self.names[key] = self.names.get(key, "") + name
            if key not in self.names:  # no name yet: hold the arguments back
                if arguments:
                    self.early.setdefault(key, []).append(arguments)
                return events
            events.append(self.tracker.start(key, self.ids.pop(key, "") or "", self.names.pop(key)))
            for chunk in self.early.pop(key, []):
                delta = self.tracker.delta(key, chunk)
                if delta is not None:
                    events.append(delta)
        if arguments:
            delta = self.tracker.delta(key, arguments)
            if delta is not None:
                events.append(delta)
        return events

    def finish(self) -> list[ModelEvent]:
        events: list[ModelEvent] = list(self.tracker.end_all())
        if self.finish_reason is None:
            events.append(
                Finish(
                    "error",
                    self.usage,
                    None,
                    "the stream ended before the provider reported a finish reason",
                )
            )
            return events
        events.append(_finish(self.finish_reason, self.usage, self.tracker.count))
        return events


def _completion_events(completion: ChatCompletion) -> list[ModelEvent]:
    """The events of a non-streamed answer."""
    events: list[ModelEvent] = []
    tracker = ToolCallTracker()
    usage = (
        Usage(completion.usage.prompt_tokens, completion.usage.completion_tokens)
        if completion.usage is not None
        else Usage()
    )
    if not completion.choices:
        return [Finish("error", usage, None, "the provider returned no choices")]
    choice = completion.choices[0]
    message = choice.message
    if message.content:
        events.append(TextDelta(message.content))
    if message.refusal:
        events.append(TextDelta(message.refusal))
    for position, call in enumerate(message.tool_calls or ()):
        function = getattr(call, "function", None)
        if function is None:  # a custom (non-function) tool call
            continue
        events.extend(
            tracker.whole_call(position, call.id, function.name, function.arguments or "")
        )
    events.append(_finish(choice.finish_reason, usage, tracker.count))
    return events


def _finish(finish_reason: str | None, usage: Usage, tool_calls: int) -> Finish:
    reason = _FINISH.get(finish_reason or "", "stop")
    return Finish(
        normalize_finish(reason, tool_calls=tool_calls),
        usage,
        finish_reason,
        "the provider's content filter stopped the answer"
        if finish_reason == "content_filter"
        else None,
    )
