"""Shared building blocks of the models: JSON types, validators, converters.

Validators are plain functions (not attrs' combinators) because they run on
every construction, including every object the codec decodes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeAlias, TypeVar

import attrs

from ..errors import InvalidModelError

__all__ = [
    "ALWAYS_EMIT",
    "Timestamp",
    "JSONObject",
    "JSONValue",
    "json_problem",
    "new_id",
    "utc_now",
]

#: Any JSON value (``google.protobuf.Value``).
JSONValue: TypeAlias = Any
#: A JSON object (``google.protobuf.Struct``); keys keep their order.
JSONObject: TypeAlias = dict[str, Any]

#: Field metadata of a REQUIRED field that has a Python default: the wire
#: dialects emit it even at its default value (spec §8.4.1).
ALWAYS_EMIT: Mapping[str, bool] = {"always_emit": True}

T = TypeVar("T")
_Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


class Timestamp(datetime):
    """A ``datetime`` that also keeps the nanoseconds below its microseconds.

    ProtoJSON timestamps may carry 9 fraction digits; ``datetime`` holds 6.
    The codec returns a ``Timestamp`` when a peer sent more, so writing it
    back loses nothing. It equals a plain ``datetime`` when ``nanosecond`` is 0.
    """

    __slots__ = ("_ns",)
    _ns: int

    @classmethod
    def with_nanoseconds(cls, value: datetime, nanosecond: int) -> Timestamp:
        """``value`` plus ``nanosecond`` (0-999) below its microseconds."""
        if not 0 <= nanosecond <= 999:
            raise ValueError(f"nanosecond must be in 0..999, got {nanosecond}")
        ts = cls(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            value.tzinfo,
            fold=value.fold,
        )
        ts._ns = nanosecond
        return ts

    @property
    def nanosecond(self) -> int:
        """Nanoseconds below the microsecond (0-999)."""
        return int(getattr(self, "_ns", 0))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, datetime):
            return NotImplemented
        return datetime.__eq__(self, other) and self.nanosecond == getattr(other, "nanosecond", 0)

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        base = datetime.__hash__(self)
        return base if not self.nanosecond else hash((base, self.nanosecond))

    def as_datetime(self) -> datetime:
        """The plain ``datetime`` (microsecond precision)."""
        return datetime(
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.microsecond,
            self.tzinfo,
            fold=self.fold,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # datetime's own reduce rebuilds the class without the nanoseconds.
        return (Timestamp.with_nanoseconds, (self.as_datetime(), self.nanosecond))

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return self.__reduce__()


def new_id() -> str:
    """A fresh random identifier (UUID4, as a string)."""
    return str(uuid.uuid4())


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC, with millisecond precision."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _where(inst: Any, attribute: attrs.Attribute[Any]) -> str:
    return f"{type(inst).__name__}.{attribute.name}"


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


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


# Value rules shared by the validators here and the codec's decoders (one
# statement of each rule: the generated decoders skip the validators).
_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1
#: The int32 range (the only integer width A2A uses).
INT32_RANGE: tuple[int, int] = (_INT32_MIN, _INT32_MAX)
#: Where an API key may travel (``APIKeySecurityScheme.location``).
API_KEY_LOCATIONS: frozenset[str] = frozenset({"header", "query", "cookie"})


def int32(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An int32 (the only integer width A2A uses)."""
    if type(value) is not int:
        fail(inst, attribute, f"expected an integer, got {_describe(value)}")
    if not _INT32_MIN <= value <= _INT32_MAX:
        fail(inst, attribute, f"{value} is outside the int32 range")


def optional_int32(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An int32 or ``None``."""
    if value is not None:
        int32(inst, attribute, value)


def non_negative_optional_int32(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An int32 >= 0, or ``None``."""
    if value is not None:
        int32(inst, attribute, value)
        if value < 0:
            fail(inst, attribute, f"must not be negative, got {value}")


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


def to_tuple(value: Iterable[Any]) -> tuple[Any, ...]:
    """Convert a list (or any non-string iterable) into a tuple, cheaply for tuples.

    Anything else is passed through unchanged for the field's validator to
    reject with ``Class.field`` in the message (a converter cannot name it).
    Typed with ``Any`` on purpose: mypy's attrs plugin cannot solve a generic
    converter, and would reject ``Task(history=[...])`` in users' code.
    """
    if type(value) is tuple:
        return value
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        return value  # type: ignore[return-value]
    return tuple(value)


def _check_tuple(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not tuple:
        fail(inst, attribute, f"expected a list or tuple, got {_describe(value)}")
