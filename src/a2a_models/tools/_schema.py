"""JSON Schema helpers: checking schemas, validating arguments, deriving schemas from type hints."""

from __future__ import annotations

import collections.abc
import enum
import functools
import inspect
import logging
import types
import typing
from collections.abc import Callable
from typing import Any, Final

import jsonschema  # type: ignore[import-untyped, unused-ignore]
import jsonschema.exceptions  # type: ignore[import-untyped, unused-ignore]
import jsonschema.validators  # type: ignore[import-untyped, unused-ignore]
import referencing.exceptions

from ..models import JSONObject
from ._ecma_regex import ecma_keywords, is_ecma_regex

__all__ = [
    "EMPTY_OBJECT_SCHEMA",
    "TEXT_INPUT_SCHEMA",
    "ArgumentValidator",
    "declares_inputs",
    "check_object_schema",
    "check_schema",
    "schema_from_function",
    "schema_from_type",
]

log = logging.getLogger("a2a_models.tools")

#: The input schema of a tool that takes no arguments.
EMPTY_OBJECT_SCHEMA: Final[JSONObject] = {"type": "object", "properties": {}}

#: The input schema a skill that declares no inputs is offered with (e.g. as an
#: MCP tool): one required string, the request in words, which becomes the
#: user message. The A2A path gives such skills ``{"text": <message text>}`` too.
TEXT_INPUT_SCHEMA: Final[JSONObject] = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "the request, in words"}},
    "required": ["text"],
}

_OPEN_KEYWORDS = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "oneOf",
        "anyOf",
        "allOf",
        "$ref",
        "dependentSchemas",
        "if",
        "unevaluatedProperties",
        "propertyNames",
    }
)


def declares_inputs(schema: JSONObject) -> bool:
    """Whether an object schema says anything about the object's members.

    ``{"type": "object"}`` and ``{"type": "object", "properties": {}}`` (what a
    skill defined without an input schema has) declare none: such a skill is
    offered with :data:`TEXT_INPUT_SCHEMA` instead.
    """
    return any(schema.get(key) not in (None, {}, []) for key in _OPEN_KEYWORDS)


#: How many violations an error message lists at most.
MAX_PROBLEMS: Final = 5


@functools.cache
def _ecma_validator(base: Any) -> Any:
    """``base`` reading ``pattern`` and ``patternProperties`` as ECMA-262 regexes."""
    return jsonschema.validators.extend(base, ecma_keywords)


@functools.cache
def _format_checker(base: Any) -> Any:
    """The format checker ``base.check_schema`` uses, with ECMA-262 regexes."""
    meta = jsonschema.validators.validator_for(base.META_SCHEMA, default=base)
    checker = jsonschema.FormatChecker(())
    checker.checkers = dict(meta.FORMAT_CHECKER.checkers)
    checker.checks("regex")(is_ecma_regex)
    return checker


def _validator_class(schema: JSONObject) -> Any:
    # $schema picks the draft; none means 2020-12 (what MCP and A2A use).
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return _ecma_validator(base)


def check_schema(schema: Any) -> str | None:
    """``None`` if ``schema`` is a valid JSON Schema, else what is wrong with it.

    Its regexes are ECMA-262 ones (see :mod:`._ecma_regex`), as JSON Schema says.
    """
    if not isinstance(schema, dict):
        return f"expected a JSON Schema object (dict), got {type(schema).__name__}"
    try:
        cls = _validator_class(schema)
        cls.check_schema(schema, format_checker=_format_checker(cls))
    except jsonschema.exceptions.SchemaError as exc:
        path = _render_path(exc.absolute_path)
        return f"not a valid JSON Schema ({path}: {exc.message})"
    return None


def check_object_schema(schema: Any) -> str | None:
    """``None`` if ``schema`` is a valid JSON Schema for JSON *objects*, else the problem.

    The root must say ``"type": "object"``: a primitive, array or enum schema
    (which MCP tools and LLM function calls cannot take) is refused.
    """
    if not isinstance(schema, dict):
        return f"expected a JSON Schema object (dict), got {type(schema).__name__}"
    for key in ("enum", "const"):
        if key in schema:
            return f"must be an object schema, not an {key} schema ({key!r} at the root)"
    kind = schema.get("type")
    if kind != "object":
        if kind is None:
            return 'must be an object schema: the root needs "type": "object"'
        return f'must be an object schema ("type": "object"), not {kind!r}'
    return check_schema(schema)


def _unresolved(exc: referencing.exceptions.Unresolvable) -> str:
    ref = getattr(exc, "ref", None) or getattr(getattr(exc, "_wrapped", None), "ref", None)
    return f"$ref {ref!r} cannot be resolved" if ref else f"$ref cannot be resolved ({exc})"


def _render_path(path: collections.abc.Iterable[Any]) -> str:
    out = "$"
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else f".{item}"
    return out


class ArgumentValidator:
    """A compiled validator for one input schema (checked when built).

    :meth:`problems` lists the violations of an instance, the most relevant
    first, each as ``"$.path: message"``.
    """

    __slots__ = ("_unchecked", "_validator", "schema")

    def __init__(self, schema: JSONObject) -> None:
        problem = check_schema(schema)
        if problem is not None:
            raise ValueError(problem)
        self.schema = schema
        self._validator = _validator_class(schema)(schema)
        self._unchecked = False  # said once that a $ref cannot be resolved

    def problems(self, instance: Any, *, limit: int = MAX_PROBLEMS) -> list[str]:
        """The violations of ``instance`` (empty when it is valid, or when the schema
        has a ``$ref`` that cannot be resolved: its owner, an MCP server say, still
        checks its own input, and a tool is not made unusable here by it)."""
        try:
            errors = sorted(
                self._validator.iter_errors(instance), key=jsonschema.exceptions.relevance
            )
        except referencing.exceptions.Unresolvable as exc:
            if not self._unchecked:
                self._unchecked = True
                log.warning("arguments not checked: the input schema's %s", _unresolved(exc))
            return []
        out: list[str] = []
        for error in errors[:limit]:
            message = error.message
            if len(message) > 200:
                message = message[:197] + "..."
            out.append(f"{_render_path(error.absolute_path)}: {message}")
        if len(errors) > limit:
            out.append(f"... and {len(errors) - limit} more")
        return out


# ----------------------------------------------------------------------------- type hints

_SEQUENCES = (
    list,
    set,
    frozenset,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Set,
    collections.abc.MutableSet,
    collections.abc.Iterable,
    collections.abc.Collection,
)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _description(metadata: tuple[Any, ...]) -> str | None:
    for item in metadata:
        if isinstance(item, str):
            return item
        doc = getattr(item, "description", None)  # e.g. pydantic's Field(description=...)
        if isinstance(doc, str):
            return doc
    return None


def schema_from_type(tp: Any) -> JSONObject:
    """The JSON Schema of a Python type hint.

    Supports ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``,
    ``list``/``set``/``tuple``/``Sequence`` of a type, ``dict``/``Mapping``
    with string keys, ``Literal``, ``Enum`` subclasses, unions (``X | None``),
    ``TypedDict`` and ``Annotated[X, "description"]``. Anything else raises
    :class:`TypeError` (give the schema explicitly then).
    """
    if tp is Any or tp is object:
        return {}
    if tp is None or tp is type(None):
        return {"type": "null"}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        schema = dict(schema_from_type(args[0]))
        description = _description(args[1:])
        if description:
            schema["description"] = description
        return schema
    if origin is typing.Literal:
        values = list(args)
        schema = {"enum": values}
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), "enum": values}
        return schema
    if origin is typing.Union or origin is types.UnionType:
        return {"anyOf": [schema_from_type(a) for a in args]}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = [m.value for m in tp]
        return {"enum": values}
    if isinstance(tp, type) and typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        required = sorted(getattr(tp, "__required_keys__", hints))
        return {
            "type": "object",
            "properties": {k: schema_from_type(v) for k, v in hints.items()},
            "required": required,
            "additionalProperties": False,
        }
    if tp is tuple or origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": schema_from_type(args[0])}
        return {
            "type": "array",
            "prefixItems": [schema_from_type(a) for a in args],
            "items": False,
            "minItems": len(args),
        }
    if tp in _SEQUENCES or origin in _SEQUENCES:
        schema = {"type": "array"}
        if args:
            schema["items"] = schema_from_type(args[0])
        if tp in (set, frozenset) or origin in (set, frozenset, collections.abc.Set):
            schema["uniqueItems"] = True
        return schema
    if tp in _MAPPINGS or origin in _MAPPINGS:
        schema = {"type": "object"}
        if args:
            if args[0] is not str:
                raise TypeError(
                    f"cannot derive a JSON Schema for {tp!r}: JSON object keys are strings"
                )
            schema["additionalProperties"] = schema_from_type(args[1])
        return schema
    raise TypeError(f"cannot derive a JSON Schema for {tp!r}: give the input schema explicitly")


def _json_type(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "unknown"


def schema_from_function(
    fn: Callable[..., Any], *, skip: collections.abc.Container[str] = ()
) -> JSONObject:
    """The object schema of ``fn``'s keyword-callable parameters (except ``skip``).

    Each parameter becomes a property typed by its annotation (unannotated:
    any value); parameters without a default are required; a default that is
    JSON is recorded as ``default``. Unknown properties are refused.
    """
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # an annotation that does not resolve (NameError, ...)
        raise TypeError(
            f"cannot read the type hints of {fn.__qualname__} ({exc}): "
            "give the input schema explicitly"
        ) from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.name in skip:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(
                f"cannot derive a JSON Schema for {fn.__qualname__}: parameter {param.name!r} "
                "is not a plain keyword parameter (give the input schema explicitly)"
            )
        try:
            schema = schema_from_type(hints.get(param.name, Any))
        except TypeError as exc:
            raise TypeError(f"{fn.__qualname__}, parameter {param.name!r}: {exc}") from None
        if param.default is param.empty:
            required.append(param.name)
        elif _is_json(param.default):
            schema = {**schema, "default": param.default}
        properties[param.name] = schema
    out: JSONObject = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False
