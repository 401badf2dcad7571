"""The package's own small model interface, independent of any provider SDK.

A conversation is a sequence of :data:`ChatMessage` values
(:class:`SystemMessage`, :class:`UserMessage`, :class:`AssistantMessage` with
text and :class:`ToolCall` values, :class:`ToolMessage`); a
:class:`ModelRequest` adds tools (:class:`ToolSpec`), a :data:`ToolChoice` and
sampling settings; :meth:`Model.stream` answers with a :class:`ModelStream`,
an async iterator of :data:`ModelEvent` values:

* :class:`TextDelta` - a piece of the answer's text;
* :class:`ToolCallStart` - the model began a tool call (``id``, ``name``);
* :class:`ToolCallDelta` - a raw chunk of the call's JSON arguments, exactly
  as the provider streamed it; the chunks of one call concatenate, in order,
  to its full argument text;
* :class:`ToolCallEnd` - the call is complete; ``arguments`` is the parsed JSON
  object - or, when the text is not a JSON object, :class:`ToolCallError`
  takes its place (every start is closed by exactly one of the two);
* :class:`Finish` - always the last event of a stream that ran to its end:
  ``reason`` (``stop``, ``tool_calls``, ``length``, ``error``) and token usage.

Provider and transport failures are raised as
:class:`~a2a_models.adapters.llm.ModelError` from the iterator. Closing the
stream (``aclose()``, leaving ``async with``, cancelling the task that
iterates) aborts the HTTP request.

This module imports no provider SDK.
"""

from __future__ import annotations

import abc
import json
import re
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeAlias

from ... import observability
from ..._closing import AsyncClosing, GeneratorStream

__all__ = [
    "AssistantMessage",
    "ChatMessage",
    "Finish",
    "FinishReason",
    "ForceTool",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ModelResponse",
    "ModelStream",
    "SystemMessage",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallError",
    "ToolCallStart",
    "ToolChoice",
    "ToolMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _frozen_schema(name: str, value: Mapping[str, Any]) -> Mapping[str, Any]:
    try:  # a deep copy that also proves the schema is plain JSON
        copied = json.loads(json.dumps(dict(value)))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"tool {name!r}: input_schema is not JSON-serialisable: {exc}") from None
    return MappingProxyType(copied)


def _empty_schema() -> Mapping[str, Any]:
    return MappingProxyType({"type": "object", "properties": {}})


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: a name, a description, a JSON Schema for its input.

    The name must match ``^[A-Za-z0-9_-]{1,64}$`` (the intersection of what
    OpenAI and Anthropic accept). ``input_schema`` is a JSON Schema object
    (``{"type": "object", ...}``) of plain JSON values; it is deep-copied into
    a read-only mapping.
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=_empty_schema)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _TOOL_NAME.match(self.name):
            raise ValueError(
                f"invalid tool name {self.name!r}: use 1-64 letters, digits, '_' or '-'"
            )
        if not isinstance(self.input_schema, Mapping):
            raise TypeError(
                f"tool {self.name!r}: input_schema must be a JSON Schema object (a mapping), "
                f"not {type(self.input_schema).__name__}"
            )
        object.__setattr__(self, "input_schema", _frozen_schema(self.name, self.input_schema))

    def schema_dict(self) -> dict[str, Any]:
        """A plain (deep-copied) ``dict`` of :attr:`input_schema`, for the SDKs."""
        copied: dict[str, Any] = json.loads(json.dumps(dict(self.input_schema)))
        return copied


@dataclass(frozen=True, slots=True)
class ForceTool:
    """Tool choice that forces the model to call the named tool."""

    name: str


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | ForceTool
"""``"auto"`` (the model decides), ``"none"`` (no tool calls), ``"required"``
(at least one tool call), or :class:`ForceTool` (that tool)."""


# ------------------------------------------------------------------------ messages


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call made by the model: its id, the tool's name, the parsed arguments."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def arguments_json(self) -> str:
        """The arguments as JSON text (how they are sent back to the provider)."""
        return json.dumps(dict(self.arguments), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """Instructions for the model."""

    text: str
    role: ClassVar[Literal["system"]] = "system"


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A message from the user."""

    text: str
    role: ClassVar[Literal["user"]] = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """A previous model turn: its text and the tool calls it made."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    role: ClassVar[Literal["assistant"]] = "assistant"

    def __post_init__(self) -> None:
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """The result of one tool call, sent back to the model.

    ``is_error`` marks a failed call: Anthropic receives it as the
    ``is_error`` flag; OpenAI has no such field, so the content is prefixed
    with ``"Error: "``.
    """

    tool_call_id: str
    content: str
    is_error: bool = False
    role: ClassVar[Literal["tool"]] = "tool"


ChatMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage

# ------------------------------------------------------------------------- request


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to a model.

    ``model``, ``temperature`` and ``max_tokens`` left at ``None`` take the
    :class:`Model`'s configured values. ``parallel_tool_calls=False`` asks for
    at most one tool call per turn (OpenAI ``parallel_tool_calls``, Anthropic
    ``disable_parallel_tool_use``). ``stop`` sequences end the answer.
    ``extra_body`` is merged into the provider's JSON request body as is (for
    provider-specific parameters). Lists are stored as tuples.
    """

    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice = "auto"
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    parallel_tool_calls: bool | None = None
    stop: tuple[str, ...] = ()
    extra_body: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        for name in ("messages", "tools", "stop"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if not self.messages:
            raise ValueError("a model request needs at least one message")
        for message in self.messages:
            if not isinstance(
                message, SystemMessage | UserMessage | AssistantMessage | ToolMessage
            ):
                raise TypeError(
                    f"messages must be SystemMessage, UserMessage, AssistantMessage or "
                    f"ToolMessage, not {type(message).__name__}"
                )
        names = [tool.name for tool in self.tools]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names in the request: {', '.join(duplicates)}")
        choice = self.tool_choice
        if isinstance(choice, ForceTool):
            if choice.name not in names:
                raise ValueError(
                    f"tool_choice forces tool {choice.name!r}, which is not among the request's "
                    f"tools ({', '.join(names) or 'none'})"
                )
        elif choice not in ("auto", "none", "required"):
            raise ValueError(
                f"tool_choice must be 'auto', 'none', 'required' or ForceTool(name), not {choice!r}"
            )
        elif choice == "required" and not self.tools:
            raise ValueError("tool_choice 'required' needs at least one tool")
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise ValueError(f"max_tokens must be a positive integer, not {self.max_tokens!r}")
        if self.temperature is not None and (
            isinstance(self.temperature, bool)
            or not isinstance(self.temperature, int | float)
            or self.temperature < 0
        ):
            raise ValueError(f"temperature must be a number >= 0, not {self.temperature!r}")

    @property
    def system_text(self) -> str:
        """Every system message's text, joined by blank lines."""
        return "\n\n".join(m.text for m in self.messages if isinstance(m, SystemMessage))


# -------------------------------------------------------------------------- events


FinishReason: TypeAlias = Literal["stop", "tool_calls", "length", "error"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts the provider reported (``None`` when it did not)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text."""

    text: str
    type: ClassVar[Literal["text_delta"]] = "text_delta"


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The model started a tool call. ``index`` counts the calls of this response from 0."""

    id: str
    name: str
    index: int
    type: ClassVar[Literal["tool_call_start"]] = "tool_call_start"


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A raw chunk of a tool call's JSON arguments, as the provider streamed it."""

    id: str
    index: int
    arguments_delta: str
    type: ClassVar[Literal["tool_call_delta"]] = "tool_call_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A complete tool call; ``arguments_json`` is the concatenation of its deltas."""

    id: str
    name: str
    index: int
    arguments: Mapping[str, Any]
    arguments_json: str
    type: ClassVar[Literal["tool_call_end"]] = "tool_call_end"

    @property
    def call(self) -> ToolCall:
        return ToolCall(self.id, self.name, self.arguments)


@dataclass(frozen=True, slots=True)
class ToolCallError:
    """A tool call whose arguments are not a JSON object; it replaces :class:`ToolCallEnd`.

    ``arguments_json`` is the raw text received, ``message`` says what is wrong
    (fit to be sent back to the model as an error :class:`ToolMessage`).
    """

    id: str
    name: str
    index: int
    arguments_json: str
    message: str
    type: ClassVar[Literal["tool_call_error"]] = "tool_call_error"

    @property
    def call(self) -> ToolCall:
        """The call with empty arguments (for the assistant turn sent back)."""
        return ToolCall(self.id, self.name, {})


@dataclass(frozen=True, slots=True)
class Finish:
    """The last event of a stream.

    ``reason``: ``"tool_calls"`` when the response contains tool calls,
    ``"stop"`` for a finished answer, ``"length"`` when ``max_tokens`` (or the
    context window) cut it short, ``"error"`` when the provider ended the turn
    abnormally (a content filter or refusal, or a stream that ended without a
    finish reason); ``message`` explains an ``"error"``. ``provider_reason``
    is the provider's own value (``"end_turn"``, ``"tool_use"``, ...).
    """

    reason: FinishReason
    usage: Usage = field(default_factory=Usage)
    provider_reason: str | None = None
    message: str | None = None
    type: ClassVar[Literal["finish"]] = "finish"


ModelEvent: TypeAlias = (
    TextDelta | ToolCallStart | ToolCallDelta | ToolCallEnd | ToolCallError | Finish
)


# ------------------------------------------------------------------------ response


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A whole model turn, as collected from a stream.

    ``tool_calls`` holds every call in order - those whose arguments were
    invalid too, with empty arguments, so that each call id can be answered;
    ``tool_call_errors`` maps those ids to their :class:`ToolCallError`.
    """

    text: str
    tool_calls: tuple[ToolCall, ...]
    finish: Finish
    tool_call_errors: Mapping[str, ToolCallError] = field(default_factory=dict)

    @property
    def message(self) -> AssistantMessage:
        """The assistant turn to append to the conversation."""
        return AssistantMessage(self.text, self.tool_calls)


# -------------------------------------------------------------------------- stream


class ModelStream(GeneratorStream[ModelEvent]):
    """The events of one model call; an async iterator and an async context manager.

    Iterate it once. :meth:`aclose` (or leaving ``async with``) stops the
    underlying generator, which closes the provider's HTTP response: the
    request is aborted, not drained. Call it from the task that iterates (an
    async generator cannot be closed while another task awaits it); to abort
    from elsewhere, cancel the iterating task.
    """

    __slots__ = ()

    async def aclose(self) -> None:
        """Abort the request (if still running) and release the connection."""
        await super().aclose()

    async def collect(self) -> ModelResponse:
        """Read the stream to its end and assemble a :class:`ModelResponse`."""
        text: list[str] = []
        calls: dict[int, ToolCall] = {}
        errors: dict[str, ToolCallError] = {}
        finish: Finish | None = None
        async with self:
            async for event in self:
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, ToolCallEnd):
                    calls[event.index] = event.call
                elif isinstance(event, ToolCallError):
                    calls[event.index] = event.call
                    errors[event.id] = event
                elif isinstance(event, Finish):
                    finish = event
        if finish is None:  # pragma: no cover - the implementations always finish
            finish = Finish("error", message="the stream ended without a finish event")
        return ModelResponse("".join(text), tuple(calls[i] for i in sorted(calls)), finish, errors)


# --------------------------------------------------------------------------- model


class Model(AsyncClosing):
    """A chat model with native tool calling, streaming its answers.

    ``provider`` names where it runs; ``model`` is the default model name,
    ``temperature`` (``None``: the provider's default) and ``max_tokens`` the
    defaults a :class:`ModelRequest` may override. Implementations provide
    :meth:`_events`, an async generator of :data:`ModelEvent` values that
    raises :class:`~a2a_models.adapters.llm.ModelError`. Use the model as an
    async context manager, or call :meth:`aclose`, to release its HTTP client.
    """

    def __init__(
        self,
        *,
        provider: str,
        model: str,
        temperature: float | None,
        max_tokens: int,
    ) -> None:
        if not model:
            raise ValueError("a model name is required")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, not {max_tokens!r}")
        self.provider = provider
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self.provider!r}, model={self.model!r})"

    def stream(self, request: ModelRequest | Sequence[ChatMessage]) -> ModelStream:
        """Start a call; nothing is sent until the first event is awaited."""
        if not isinstance(request, ModelRequest):
            request = ModelRequest(tuple(request))
        events = self._events(request)
        if observability.instrumented():
            model, temperature, max_tokens = self._settings(request)
            events = observability.traced_model_call(
                events,
                provider=self.provider,
                model=model,
                temperature=temperature,
                max_tokens=max_tokens,
            )
        return ModelStream(events)

    async def complete(self, request: ModelRequest | Sequence[ChatMessage]) -> ModelResponse:
        """Run a call to its end and return the collected :class:`ModelResponse`."""
        return await self.stream(request).collect()

    @abc.abstractmethod
    def _events(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        """The events answering ``request`` (an async generator)."""

    async def aclose(self) -> None:
        """Release the HTTP client (no-op by default)."""

    # helpers for implementations

    def _settings(self, request: ModelRequest) -> tuple[str, float | None, int]:
        """``(model, temperature, max_tokens)``: the request's values, else the model's."""
        return (
            request.model or self.model,
            request.temperature if request.temperature is not None else self.temperature,
            request.max_tokens if request.max_tokens is not None else self.max_tokens,
        )


# --------------------------------------------------------- tool-call bookkeeping


def parse_arguments(name: str, call_id: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """``(arguments, "")`` for a JSON object (or empty text), else ``(None, message)``."""
    if not text.strip():
        return {}, ""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, (
            f"the arguments of tool call {name!r} ({call_id}) are not valid JSON: "
            f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        )
    if not isinstance(value, dict):
        return None, (
            f"the arguments of tool call {name!r} ({call_id}) must be a JSON object, "
            f"not {type(value).__name__}"
        )
    return value, ""


class _PendingCall:
    __slots__ = ("chunks", "id", "index", "name")

    def __init__(self, call_id: str, name: str, index: int) -> None:
        self.id = call_id
        self.name = name
        self.index = index
        self.chunks: list[str] = []


class ToolCallTracker:
    """Turns provider tool-call fragments into start / delta / end events.

    Keys are the provider's own (OpenAI's ``tool_calls[i].index``,
    Anthropic's content-block index); event indexes count calls from 0.
    """

    def __init__(self) -> None:
        self._open: dict[object, _PendingCall] = {}
        self._count = 0

    @property
    def count(self) -> int:
        """How many calls were started."""
        return self._count

    def is_open(self, key: object) -> bool:
        return key in self._open

    def open_id(self, key: object) -> str | None:
        pending = self._open.get(key)
        return pending.id if pending is not None else None

    def start(self, key: object, call_id: str, name: str) -> ToolCallStart:
        pending = _PendingCall(call_id or f"call_{self._count}", name, self._count)
        self._count += 1
        self._open[key] = pending
        return ToolCallStart(pending.id, pending.name, pending.index)

    def delta(self, key: object, chunk: str) -> ToolCallDelta | None:
        pending = self._open.get(key)
        if pending is None or not chunk:
            return None
        pending.chunks.append(chunk)
        return ToolCallDelta(pending.id, pending.index, chunk)

    def has_chunks(self, key: object) -> bool:
        pending = self._open.get(key)
        return pending is not None and bool(pending.chunks)

    def end(self, key: object) -> ToolCallEnd | ToolCallError | None:
        pending = self._open.pop(key, None)
        if pending is None:
            return None
        text = "".join(pending.chunks)
        arguments, problem = parse_arguments(pending.name, pending.id, text)
        if arguments is None:
            return ToolCallError(pending.id, pending.name, pending.index, text, problem)
        return ToolCallEnd(pending.id, pending.name, pending.index, arguments, text)

    def whole_call(
        self, key: object, call_id: str, name: str, arguments_json: str
    ) -> list[ToolCallStart | ToolCallDelta | ToolCallEnd | ToolCallError]:
        """The start, delta and end of a call that arrived whole (a non-streamed answer)."""
        events: list[ToolCallStart | ToolCallDelta | ToolCallEnd | ToolCallError] = [
            self.start(key, call_id, name)
        ]
        delta = self.delta(key, arguments_json)
        if delta is not None:
            events.append(delta)
        ended = self.end(key)
        if ended is not None:
            events.append(ended)
        return events

    def end_all(self) -> Iterable[ToolCallEnd | ToolCallError]:
        for key in list(self._open):
            event = self.end(key)
            if event is not None:
                yield event


def normalize_finish(reason: FinishReason, *, tool_calls: int) -> FinishReason:
    """``"tool_calls"`` exactly when the turn made tool calls (unless cut short or failed).

    Some OpenAI-compatible servers answer ``"stop"`` after tool calls, or
    ``"tool_calls"`` with none.
    """
    if reason in ("length", "error"):
        return reason
    return "tool_calls" if tool_calls else "stop"
