"""The value rules of the models, as plain functions: one statement of each rule.

Every attrs validator of the models is one of these functions (plain functions,
not attrs' combinators, because they run on every construction). The codec's
generated decoders do not run the validators: they call the value checks below
(:func:`int32_problem`, :func:`json_problem`, :data:`API_KEY_LOCATIONS`, ...) and
derive what must not be empty from the validators an attribute declares
(:func:`must_not_be_empty`), so each rule is written once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from ..errors import InvalidModelError, quote_input

__all__ = [
    "API_KEY_LOCATIONS",
    "INT32_RANGE",
    "api_key_location_problem",
    "int32_problem",
    "MAX_JSON_DEPTH",
    "json_problem",
    "too_deep",
    "must_not_be_empty",
    "must_not_be_negative",
    "non_negative_problem",
    "validators_of",
]

_Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def _where(inst: Any, attribute: attrs.Attribute[Any]) -> str:
    return f"{type(inst).__name__}.{attribute.name}"


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {quote_input(value)}"


def fail(inst: Any, attribute: attrs.Attribute[Any], problem: str) -> None:
    """Raise the model error for ``attribute`` of ``inst``."""
    raise InvalidModelError(_where(inst, attribute), problem)


def required_str(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A REQUIRED string: present and non-empty."""
    if type(value) is not str:
        fail(inst, attribute, f"expected a string, got {_describe(value)}")
    if not value:
        fail(inst, attribute, "must not be empty")


def any_str(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A string, possibly empty."""
    if type(value) is not str:
        fail(inst, attribute, f"expected a string, got {_describe(value)}")


def optional_str(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A string or ``None``."""
    if value is not None and type(value) is not str:
        fail(inst, attribute, f"expected a string or None, got {_describe(value)}")


def boolean(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A bool (``1`` is not a bool)."""
    if value is not True and value is not False:
        fail(inst, attribute, f"expected a bool, got {_describe(value)}")


def optional_bool(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A bool or ``None``."""
    if value is not None and value is not True and value is not False:
        fail(inst, attribute, f"expected a bool or None, got {_describe(value)}")


# Value rules: the validators below and the codec's decoders both call these
# (the generated decoders build instances without running the validators).
_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1
#: The int32 range (the only integer width A2A uses).
INT32_RANGE: tuple[int, int] = (_INT32_MIN, _INT32_MAX)
#: Where an API key may travel (``APIKeySecurityScheme.location``).
API_KEY_LOCATIONS: tuple[str, ...] = ("header", "query", "cookie")


def int32_problem(value: int) -> str | None:
    """Why the integer ``value`` is not an int32, or ``None``."""
    if _INT32_MIN <= value <= _INT32_MAX:
        return None
    return f"{value} is outside the int32 range"


def non_negative_problem(value: int) -> str | None:
    """Why the int32 ``value`` is not a valid count (``historyLength``, ``pageSize``), or ``None``."""
    return None if value >= 0 else f"must not be negative, got {value}"


def api_key_location_problem(value: str) -> str | None:
    """Why the string ``value`` is not an API key location, or ``None``."""
    if value in API_KEY_LOCATIONS:
        return None
    return f"expected one of header, query, cookie; got {value!r}"


def int32(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An int32 (the only integer width A2A uses)."""
    if type(value) is not int:
        fail(inst, attribute, f"expected an integer, got {_describe(value)}")
    problem = int32_problem(value)
    if problem is not None:
        fail(inst, attribute, problem)


def optional_int32(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An int32 or ``None``."""
    if value is not None:
        int32(inst, attribute, value)


def non_negative_optional_int32(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An int32 >= 0, or ``None``."""
    if value is not None:
        int32(inst, attribute, value)
        problem = non_negative_problem(value)
        if problem is not None:
            fail(inst, attribute, problem)


def api_key_location(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """Where an API key travels: ``header``, ``query`` or ``cookie``."""
    required_str(inst, attribute, value)
    problem = api_key_location_problem(value)
    if problem is not None:
        fail(inst, attribute, problem)


def json_problem(value: Any) -> str | None:
    """Why ``value`` is not a JSON value, or ``None`` when it is one.

    JSON values are ``dict`` (string keys), ``list``, ``str``, ``int``,
    finite ``float``, ``bool`` and ``None`` (exact types: a tuple, a set, a
    ``str`` subclass or ``float('nan')`` would change or vanish on the wire).
    The answer names where, e.g. ``at ['a'][0]: NaN is not a JSON number``.
    """
    try:
        if _is_json(value):
            return None
        return _explain(value, "")
    except RecursionError:
        return "nested too deeply"


#: The deepest nesting of objects and arrays a free-form value (metadata, a data
#: part) may have in a request: what every binding carries (gRPC's protobuf parser
#: stops at 100 message levels, three per JSON object), whatever the call stack.
MAX_JSON_DEPTH: Final = 32


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a JSON value nests objects and arrays more than ``limit`` levels deep
    (``{}`` is one level); walked without recursion, so any depth is answered."""
    stack = [(value, 1)] if value.__class__ is dict or value.__class__ is list else []
    while stack:
        node, depth = stack.pop()
        children = node.values() if node.__class__ is dict else node
        if depth > limit:
            return True
        for child in children:
            if child.__class__ is dict or child.__class__ is list:
                stack.append((child, depth + 1))
    return False


_SCALARS = frozenset({str, int, bool, type(None)})


def _is_json(value: Any) -> bool:
    # The fast check (no path bookkeeping); _explain finds the culprit.
    t = value.__class__
    if t in _SCALARS:
        return True
    if t is dict:
        for k, v in value.items():
            if k.__class__ is not str:
                return False
            t = v.__class__
            if t is str or t is int or t is bool or v is None:
                continue
            if not _is_json(v):
                return False
        return True
    if t is list:
        for v in value:
            t = v.__class__
            if t is str or t is int or t is bool or v is None:
                continue
            if not _is_json(v):
                return False
        return True
    if t is float:
        return bool(value - value == 0.0)  # False for NaN and the infinities
    return False


def _explain(value: Any, path: str) -> str | None:
    t = value.__class__
    where = f"at {path}: " if path else ""
    if t in _SCALARS:
        return None
    if t is float:
        if value - value == 0.0:
            return None
        return f"{where}{value!r} is not a JSON number (JSON has no NaN or Infinity)"
    if t is dict:
        for k, v in value.items():
            if k.__class__ is not str:
                return f"{where}object keys must be strings, got {_describe(k)}"
            found = _explain(v, f"{path}[{k!r}]")
            if found is not None:
                return found
        return None
    if t is list:
        for i, v in enumerate(value):
            found = _explain(v, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    hint = " (use a list)" if isinstance(value, tuple | set | frozenset) else ""
    return f"{where}{_describe(value)} is not a JSON value{hint}"


def json_value(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """Any JSON value (``google.protobuf.Value``), checked at every depth."""
    problem = json_problem(value)
    if problem is not None:
        fail(inst, attribute, f"expected a JSON value: {problem}")


def optional_json_object(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A JSON object (``google.protobuf.Struct``) or ``None``, checked at every depth."""
    if value is None:
        return
    if type(value) is not dict:
        fail(inst, attribute, f"expected a JSON object (dict) or None, got {_describe(value)}")
    problem = json_problem(value)
    if problem is not None:
        fail(inst, attribute, f"expected a JSON object: {problem}")


def optional_datetime(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A timezone-aware datetime or ``None``."""
    if value is None:
        return
    if not isinstance(value, datetime):
        fail(inst, attribute, f"expected a datetime or None, got {_describe(value)}")
    if value.tzinfo is None or value.utcoffset() is None:
        fail(inst, attribute, "expected a timezone-aware datetime (A2A timestamps are UTC)")
    try:
        value.astimezone(UTC)
    except OverflowError:
        fail(inst, attribute, "out of range once converted to UTC")


def instance_of(cls: type[Any] | tuple[type[Any], ...], label: str) -> _Validator:
    """A validator accepting only instances of ``cls``."""

    def check(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, cls):
            fail(inst, attribute, f"expected {label}, got {_describe(value)}")

    return check


def optional_instance_of(cls: type[Any] | tuple[type[Any], ...], label: str) -> _Validator:
    """A validator accepting ``None`` or instances of ``cls``."""

    def check(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not isinstance(value, cls):
            fail(inst, attribute, f"expected {label} or None, got {_describe(value)}")

    return check


def tuple_of(
    cls: type[Any] | tuple[type[Any], ...], label: str, *, non_empty: bool = False
) -> _Validator:
    """A validator for a tuple whose items are all instances of ``cls``."""

    def check(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        _check_tuple(inst, attribute, value)
        if non_empty and not value:
            fail(inst, attribute, f"must contain at least one {label} {_REQUIRED_REPEATED}")
        for i, item in enumerate(value):
            if not isinstance(item, cls):
                fail(inst, attribute, f"item {i}: expected {label}, got {_describe(item)}")

    if non_empty:
        _NON_EMPTY.add(check)
    return check


def str_tuple(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A tuple of strings."""
    _check_tuple(inst, attribute, value)
    for i, item in enumerate(value):
        if type(item) is not str:
            fail(inst, attribute, f"item {i}: expected a string, got {_describe(item)}")


def non_empty_str_tuple(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A non-empty tuple of strings (a REQUIRED repeated string field)."""
    str_tuple(inst, attribute, value)
    if not value:
        fail(inst, attribute, f"must contain at least one string {_REQUIRED_REPEATED}")


def str_to_str_mapping(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A dict of strings to strings (proto ``map<string, string>``)."""
    if type(value) is not dict:
        fail(inst, attribute, f"expected a dict of strings, got {_describe(value)}")
    for key, item in value.items():
        if type(key) is not str or type(item) is not str:
            fail(inst, attribute, f"entry {key!r}: expected string keys and values")


#: Why an empty REQUIRED repeated field is refused.
_REQUIRED_REPEATED = "(a REQUIRED repeated field, spec §5.7)"


def _check_tuple(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not tuple:
        fail(inst, attribute, f"expected a list or tuple, got {_describe(value)}")


#: The validators that refuse an empty value (``tuple_of(non_empty=True)`` adds its own).
_NON_EMPTY: set[Callable[..., None]] = {required_str, non_empty_str_tuple, api_key_location}


def validators_of(attribute: attrs.Attribute[Any]) -> tuple[Callable[..., None], ...]:
    """The rule functions an attrs attribute declares (``and_`` composites unpacked)."""
    v = attribute.validator
    if v is None:
        return ()
    inner = getattr(v, "_validators", None)
    return tuple(inner) if inner is not None else (v,)


def must_not_be_empty(attribute: attrs.Attribute[Any]) -> bool:
    """Whether the model refuses ``""``/``()`` for ``attribute`` (a REQUIRED string or list).

    The codec's tables and the JSON Schemas read this instead of restating it.
    """
    return any(v in _NON_EMPTY for v in validators_of(attribute))


def must_not_be_negative(attribute: attrs.Attribute[Any]) -> bool:
    """Whether ``attribute`` is a count the model refuses below zero."""
    return non_negative_optional_int32 in validators_of(attribute)
