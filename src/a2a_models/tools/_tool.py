"""The uniform tool definition: :class:`Tool`, its :class:`ToolContext` and :class:`ToolResult`."""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, Literal, TypeAlias, overload

import attrs

from ..models import DataPart, FilePart, JSONObject, JSONValue, Message, Part, Task, TextPart
from ._errors import ToolInputError
from ._names import check_tool_name
from ._schema import (
    EMPTY_OBJECT_SCHEMA,
    ArgumentValidator,
    check_object_schema,
    schema_from_function,
)

__all__ = [
    "RESULT_FORMS",
    "ResultForm",
    "Tool",
    "ToolContext",
    "ToolFunction",
    "ToolOutput",
    "ToolResult",
    "as_output",
    "function_tool",
]


@attrs.frozen(slots=True, kw_only=True)
class ToolContext:
    """What a tool gets besides its arguments.

    ``skill_id`` and ``skill_input`` describe the skill being fulfilled (the
    input the caller gave that skill, not the tool's arguments); ``custom``
    is the agent's custom context (built once at start-up by a context
    provider, see :class:`~a2a_models.tools.Toolbox`).
    """

    skill_id: str | None = None
    skill_input: JSONObject = attrs.field(factory=dict, hash=False)
    custom: Any = attrs.field(default=None, hash=False)


def _parts(value: Iterable[Part]) -> tuple[Part, ...]:
    return tuple(value)


#: How a tool result with both text and structured data is shown to a model
#: (see :meth:`ToolResult.as_text`).
ResultForm: TypeAlias = Literal["structured", "text", "both"]
RESULT_FORMS: Final = ("structured", "text", "both")


@attrs.frozen(slots=True, kw_only=True)
class ToolResult:
    """What a tool produced: content ``parts``, optional structured ``data``, and
    whether it reports an error (``is_error``: the tool ran and says it failed).

    Remote MCP results map onto it: text content becomes :class:`TextPart`,
    images/audio/blobs :class:`FilePart` (``raw``), resource links
    :class:`FilePart` (``url``), embedded text resources :class:`TextPart`
    with the resource's media type, ``structuredContent`` goes to ``data``.
    """

    parts: tuple[Part, ...] = attrs.field(default=(), converter=_parts)
    data: JSONValue = attrs.field(default=None, hash=False)
    is_error: bool = False
    metadata: JSONObject | None = attrs.field(default=None, hash=False)

    @classmethod
    def of(cls, value: Any) -> ToolResult:
        """Wrap a plain return value: ``None`` (nothing), a string (a text part), a
        :class:`Part` or a list of parts, or any other JSON value (``data``)."""
        if value is None:
            return cls()
        if isinstance(value, ToolResult):
            return value
        if isinstance(value, str):
            return cls(parts=(TextPart(value),))
        if isinstance(value, Part):
            return cls(parts=(value,))
        if isinstance(value, list | tuple) and value and all(isinstance(v, Part) for v in value):
            return cls(parts=tuple(value))
        if not _is_json(value):
            raise TypeError(
                f"a tool returned {type(value).__name__}: return a ToolResult, Task, Message, "
                "Part(s), a string or a JSON value"
            )
        return cls(data=value)

    @classmethod
    def error(cls, message: str, *, data: JSONValue = None) -> ToolResult:
        """An error result with ``message`` as its text."""
        return cls(parts=(TextPart(message),), data=data, is_error=True)

    @property
    def text(self) -> str:
        """The concatenated text of the text parts."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def as_text(self, prefer: ResultForm = "structured") -> str:
        """Everything in the result as one string (for a model), each thing once.

        Text parts as they are, data parts as JSON, files as a short reference.
        A result with both text and ``data`` (an MCP tool returning
        ``structuredContent`` and, for older hosts, the same as text) gives
        ``prefer``: ``"structured"`` (default) the data as JSON instead of the
        text parts, ``"text"`` the text parts (data only when there is no
        text), ``"both"`` everything.
        """
        if prefer not in RESULT_FORMS:
            raise ValueError(f"prefer must be one of {', '.join(RESULT_FORMS)}, not {prefer!r}")
        has_text = any(isinstance(p, TextPart | DataPart) for p in self.parts)
        keep_text = self.data is None or prefer != "structured" or not has_text
        keep_data = self.data is not None and (prefer != "text" or not has_text)
        chunks: list[str] = []
        for part in self.parts:
            if isinstance(part, TextPart | DataPart) and not keep_text:
                continue
            if isinstance(part, TextPart):
                chunks.append(part.text)
            elif isinstance(part, DataPart):
                chunks.append(json.dumps(part.data, ensure_ascii=False))
            elif isinstance(part, FilePart):
                label = part.filename or part.url or "inline data"
                size = f", {len(part.raw)} bytes" if part.raw is not None else ""
                chunks.append(f"[file: {label} ({part.media_type or 'unknown type'}{size})]")
        if keep_data:
            chunks.append(json.dumps(self.data, ensure_ascii=False))
        return "\n".join(chunks)


#: What calling a tool gives: a :class:`ToolResult`, or an A2A Task or Message
#: (a tool, or a hook, may answer the skill directly).
ToolOutput: TypeAlias = ToolResult | Task | Message
#: The implementation of a :class:`Tool`: ``await fn(arguments, context)``.
ToolFunction: TypeAlias = Callable[[JSONObject, ToolContext], Awaitable[Any]]


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def as_output(value: Any) -> ToolOutput:
    """``value`` as a :data:`ToolOutput` (Tasks, Messages and ToolResults pass through;
    anything else goes through :meth:`ToolResult.of`)."""
    if isinstance(value, ToolResult | Task | Message):
        return value
    return ToolResult.of(value)


def _check_schema(inst: Tool, attribute: attrs.Attribute[Any], value: Any) -> None:
    problem = check_object_schema(value)
    if problem is not None:
        raise ValueError(f"{inst.source}: tool {inst.name!r}: input_schema {problem}")


def _check_name(inst: Tool, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_tool_name(value, source=inst.source)


@attrs.frozen(slots=True, kw_only=True, eq=False)
class Tool:
    """A tool: a name, a description, a JSON-Schema input and an async implementation.

    The same definition serves local Python functions (:func:`function_tool`),
    remote MCP tools and whatever wraps them (:func:`with_hooks`, adapters).
    :meth:`call` validates the arguments against ``input_schema`` (with
    :mod:`jsonschema`) before running ``fn``: invalid arguments raise
    :class:`ToolInputError` and ``fn`` is not called.

    ``name`` must be a valid LLM function name (a letter, then letters,
    digits, ``_``, ``-``; at most 64). ``source`` says where the tool comes
    from (``"MCP server 'github', tool 'create-issue'"``, ``"function
    mymodule.lookup"``) and appears in every error about it. ``output_schema``
    and ``metadata`` are informational.
    """

    source: str = "tool"
    name: str = attrs.field(validator=_check_name)
    description: str = ""
    input_schema: JSONObject = attrs.field(
        factory=lambda: dict(EMPTY_OBJECT_SCHEMA), validator=_check_schema
    )
    fn: ToolFunction
    output_schema: JSONObject | None = None
    metadata: JSONObject | None = None
    _validator: ArgumentValidator = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_validator", ArgumentValidator(self.input_schema))

    def problems(self, arguments: Any) -> list[str]:
        """What is wrong with ``arguments`` (empty when they are valid)."""
        return self._validator.problems(arguments)

    def validate(self, arguments: Any) -> None:
        """Raise :class:`ToolInputError` unless ``arguments`` match ``input_schema``."""
        problems = self._validator.problems(arguments)
        if problems:
            raise ToolInputError(self.name, problems)

    async def call(
        self, arguments: JSONObject | None = None, context: ToolContext | None = None
    ) -> ToolOutput:
        """Validate ``arguments`` (``None`` is ``{}``), then run the tool.

        Raises :class:`ToolInputError` for invalid arguments; whatever ``fn``
        raises propagates. A plain return value is wrapped by :func:`as_output`.
        """
        args: JSONObject = {} if arguments is None else arguments
        self.validate(args)
        result = await self.fn(args, context if context is not None else ToolContext())
        return as_output(result)

    def evolve(self, **changes: Any) -> Tool:
        """A copy with ``changes`` applied (the input schema is checked again)."""
        return attrs.evolve(self, **changes)


# ----------------------------------------------------------------------------- local functions


def _context_parameter(fn: Callable[..., Any]) -> str | None:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations: fall back to the name
        hints = {}
    for param in inspect.signature(fn).parameters.values():
        hint = hints.get(param.name)
        if hint is ToolContext or ToolContext in typing.get_args(hint):
            return param.name
    return None


def _first_paragraph(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


@overload
def function_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = ...,
    description: str | None = ...,
    input_schema: JSONObject | None = ...,
    output_schema: JSONObject | None = ...,
) -> Tool: ...
@overload
def function_tool(
    fn: None = ...,
    *,
    name: str | None = ...,
    description: str | None = ...,
    input_schema: JSONObject | None = ...,
    output_schema: JSONObject | None = ...,
) -> Callable[[Callable[..., Any]], Tool]: ...
def function_tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: JSONObject | None = None,
    output_schema: JSONObject | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """A :class:`Tool` from a Python function (sync or async); usable as a decorator.

    The arguments are passed as keyword arguments. A parameter annotated
    :class:`ToolContext` receives the context (and is not part of the
    schema). The input schema is derived from the type hints (see
    :func:`~a2a_models.tools.schema_from_type`) unless ``input_schema`` is
    given; the name defaults to the function's name and the description to
    the first paragraph of its docstring. The function may return a
    :class:`ToolResult`, a Task, a Message, Part(s), a string or any JSON value.

    Sync functions run on the event loop: use ``async def`` for anything slow.
    """
    if fn is None:

        def decorate(f: Callable[..., Any]) -> Tool:
            return function_tool(
                f,
                name=name,
                description=description,
                input_schema=input_schema,
                output_schema=output_schema,
            )

        return decorate

    target: Callable[..., Any] = fn
    qualname = getattr(target, "__qualname__", repr(target))
    source = f"function {getattr(target, '__module__', '?')}.{qualname}"
    context_param = _context_parameter(target)
    schema = input_schema
    if schema is None:
        schema = schema_from_function(target, skip={context_param} if context_param else ())

    async def run(arguments: JSONObject, context: ToolContext) -> Any:
        kwargs = dict(arguments)
        if context_param is not None:
            kwargs[context_param] = context
        result = target(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    return Tool(
        name=name or str(getattr(target, "__name__", "tool")),
        description=description if description is not None else _first_paragraph(target),
        input_schema=schema,
        fn=run,
        output_schema=output_schema,
        source=source,
    )
