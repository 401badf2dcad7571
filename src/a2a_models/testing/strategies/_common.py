"""Scalars, timestamps and JSON values shared by the model strategies."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, TypeVar

from hypothesis import strategies as st

from ... import models as m
from ...models.rules import INT32_RANGE
from ._rules import _Rules

T = TypeVar("T")


# --------------------------------------------------------------------------- scalars


def texts(
    *, min_size: int = 0, max_size: int = 12, surrogates: bool = False
) -> st.SearchStrategy[str]:
    """Unicode text, non-BMP characters included; ``surrogates=True`` adds lone surrogates."""
    if surrogates:
        return st.one_of(
            st.text(min_size=min_size, max_size=max_size),
            st.builds(
                lambda a, s, b: a + s + b,
                st.text(max_size=4),
                st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
                st.text(max_size=4),
            ).filter(lambda s: len(s) >= min_size),
        )
    return st.text(min_size=min_size, max_size=max_size)


def _ids(rules: _Rules) -> st.SearchStrategy[str]:
    """A REQUIRED identifier: non-empty; no "/" where it travels in a resource name."""
    if rules.resource_names:
        return st.text(
            st.characters(exclude_characters="/", exclude_categories=["Cs"]),
            min_size=1,
            max_size=12,
        )
    return texts(min_size=1)


_NONEMPTY = texts(min_size=1)


def _opt(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    return st.none() | strategy


def _opt_str(rules: _Rules, allowed: bool = True) -> st.SearchStrategy[str | None]:
    """An optional string: None or non-empty (proto3: "" is unset); the python form adds ""."""
    if not allowed:
        return st.none()
    if rules.empty_strings:
        return st.none() | st.just("") | _NONEMPTY
    return _opt(_NONEMPTY)


def _opt_bool(rules: _Rules, allowed: bool = True) -> st.SearchStrategy[bool | None]:
    """A presence-tracked bool: None, True, False (plain proto3 bools: no False)."""
    if not allowed:
        return st.none()
    if rules.proto3_plain:
        return st.sampled_from([None, True])
    return st.sampled_from([None, True, False])


def _opt_count(rules: _Rules, *, zero: bool = True) -> st.SearchStrategy[int | None]:
    """An optional non-negative int32 (``zero=False``: 0 would read as unset)."""
    low = 0 if (zero and not rules.proto3_plain) else 1
    return _opt(st.integers(low, INT32_RANGE[1]))


def _tuples(
    strategy: st.SearchStrategy[T], *, min_size: int = 0, max_size: int = 3, **kw: Any
) -> st.SearchStrategy[tuple[T, ...]]:
    return st.lists(strategy, min_size=min_size, max_size=max_size, **kw).map(tuple)


def _str_tuples(*, min_size: int = 0, max_size: int = 3) -> st.SearchStrategy[tuple[str, ...]]:
    return _tuples(texts(), min_size=min_size, max_size=max_size)


def _with_offset(value: datetime, minutes: int, nanos: int) -> datetime:
    local = value.astimezone(timezone(timedelta(minutes=minutes)))
    return m.Timestamp.with_nanoseconds(local, nanos) if nanos else local


def timestamps() -> st.SearchStrategy[datetime]:
    """Timezone-aware datetimes (years 1-9999): UTC with microsecond precision,
    whole seconds and milliseconds, :class:`~a2a_models.Timestamp` values with
    nanoseconds below the microsecond (ProtoJSON carries up to 9 digits), and
    other UTC offsets (equal to their UTC value, which the codec writes)."""
    micros = st.datetimes(
        min_value=datetime(1, 1, 1),
        max_value=datetime(9999, 12, 31, 23, 59, 59, 999999),
        timezones=st.just(UTC),
    )
    return (
        micros
        | st.builds(m.Timestamp.with_nanoseconds, micros, st.integers(1, 999))
        | st.builds(
            _with_offset,
            # A day inside the range: the local time must exist too (a valid
            # model may hold 0001-01-01T00:00+02:00, whose UTC value does not).
            st.datetimes(
                min_value=datetime(1, 1, 2),
                max_value=datetime(9999, 12, 30, 23, 59, 59, 999999),
                timezones=st.just(UTC),
            ),
            st.integers(-(24 * 60 - 1), 24 * 60 - 1),
            st.sampled_from([0, 0, 1, 999]),
        )
        | st.builds(
            # Millisecond and whole-second values: the common wire precisions.
            lambda d, ms: d.replace(microsecond=ms),
            st.datetimes(
                min_value=datetime(1970, 1, 1),
                max_value=datetime(2100, 1, 1),
                timezones=st.just(UTC),
            ),
            st.sampled_from([0, 1000, 123000, 999000]),
        )
    )


# --------------------------------------------------------------------------- JSON

_EDGE_INTS = (
    0,
    -1,
    18,
    2**31 - 1,
    -(2**31),
    2**53 + 1,
    2**63 - 1,
    -(2**63),
    2**63,
    -(2**63) - 1,
    2**64 - 1,
    2**64,
    -(2**64),
    10**19,
    -(10**19) + 1,
    2**100,
    -(2**100),
    10**40,
)


def json_scalars(*, surrogates: bool = False) -> st.SearchStrategy[Any]:
    """JSON scalars: null, booleans, integers of any size, finite floats, text."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**31), 2**31),
        st.sampled_from(_EDGE_INTS),
        st.integers(-(2**130), 2**130),
        st.floats(allow_nan=False, allow_infinity=False),
        texts(surrogates=surrogates),
    )


def _json_keys(surrogates: bool) -> st.SearchStrategy[str]:
    return texts(max_size=8, surrogates=surrogates) | st.sampled_from(
        ["a", "b", "z", "id", "kind", "text", "data", "metadata", "0", "10", "2"]
    )


@functools.cache
def json_values(*, max_leaves: int = 10, surrogates: bool = False) -> st.SearchStrategy[Any]:
    """Any JSON value, nested up to ``max_leaves`` scalars.

    Objects are ``dict`` (keys in random, preserved order), arrays ``list``.
    """
    keys = _json_keys(surrogates)
    return st.recursive(
        json_scalars(surrogates=surrogates),
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4)
        ),
        max_leaves=max_leaves,
    )


@functools.cache
def json_objects(
    *, max_leaves: int = 10, surrogates: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object (``dict[str, Any]``) whose values are :func:`json_values`."""
    return st.dictionaries(
        _json_keys(surrogates),
        json_values(max_leaves=max_leaves, surrogates=surrogates),
        max_size=4,
    )


_METADATA = json_objects(max_leaves=6)


def _metadata(allowed: bool = True) -> st.SearchStrategy[dict[str, Any] | None]:
    return _opt(_METADATA) if allowed else st.none()
