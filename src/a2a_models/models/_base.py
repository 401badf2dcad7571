"""Shared building blocks of the models: JSON types, timestamps, ids, converters.

The validators live in :mod:`a2a_models.models.rules`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeAlias, TypeVar

__all__ = [
    "ALWAYS_EMIT",
    "Timestamp",
    "JSONObject",
    "JSONValue",
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
