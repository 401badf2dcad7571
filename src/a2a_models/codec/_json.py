"""JSON text <-> Python values: orjson on the fast path, exact fallbacks on the edges.

orjson turns integers beyond 64 bits into floats and rejects lone surrogates;
both are legal JSON. Those inputs go through the standard library instead,
so a large integer stays an integer and nothing is lost.

An object naming a member twice is refused (a :class:`DecodeError` at that
member's path), not read last-wins: one of the values would be lost without a
word, and parsers disagree on which (RFC 8259 §4 calls the outcome
unpredictable; I-JSON, RFC 7493 §2.3, forbids it; protobuf's ProtoJSON parser
refuses it). orjson cannot report it, so every parse compares the members of
the text with the keys it got (:func:`_unique`, in C when the accelerator is
built), and only a text that fails is parsed again to find the member.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

import orjson

from ..errors import ECHO_LIMIT, ID_LIMIT, DecodeError, quote_input
from ._gen import render_path

__all__ = ["TWICE", "dumps", "loads", "reset", "unique_keys", "where"]

# 19+ digits can exceed 64 bits (negative ones at 19); shorter runs never do. A false positive (a
# long digit run inside a string) only costs the slower exact parser. Mapping
# digits to "0" and finding a run is ~15x faster than a regex scan.
_DIGITS_AS_ZERO = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_RUN = b"0" * 19  # -9223372036854775809 has 19 digits and overflows int64
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # high or low surrogates
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a string token

#: What a :class:`DecodeError` for a member name given twice says.
TWICE = "given more than once (the names in an object must be unique)"


def _has_long_digit_run(raw: bytes) -> bool:
    return raw.translate(_DIGITS_AS_ZERO).find(_LONG_RUN) >= 0


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text; raises :class:`ValueError` on invalid JSON.

    Big integers and lone surrogates parse exactly (they bypass orjson). An
    object that names a member twice raises :class:`~a2a_models.errors.DecodeError`
    (a ``ValueError``) whose ``path`` is that member's.
    """
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates in the text itself
            value = _stdlib_loads(data)
            # (the same ASCII bytes: all the member count reads)
            return value if _unique(data.encode("utf-8", "surrogatepass"), value) else _exact(data)
    else:
        raw = bytes(data) if not isinstance(data, bytes) else data
    if not _has_long_digit_run(raw):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            if _SURROGATE_ESCAPE.search(raw) is None:
                raise
        else:
            return value if _unique(raw, value) else _exact(raw.decode("utf-8"))
    text = raw.decode("utf-8")
    value = _stdlib_loads(text)
    return value if _unique(raw, value) else _exact(text)


def unique_keys(raw: bytes, value: Any) -> bool:
    """Whether ``value``, the valid JSON text ``raw`` as parsed, kept every member of
    ``raw`` (no object of ``raw`` names a member twice); the compiled
    ``_speedups.unique_keys`` is the same test.

    In valid JSON each ``:`` outside a string is one member's, and parsing loses one
    key per member named again (with the ``:`` in its strings). Unless a ``:`` is
    written as an escape, ``value`` written again has as many ``:`` as ``raw`` exactly
    when nothing was lost; else the members are counted outside the strings.
    """
    colons = raw.count(b":")
    if not colons:
        return True
    if b"\\u003" not in raw:  # (no "\u003a": a string's ':' are the same in both texts)
        return dumps(value).count(b":") == colons
    return _STRING.sub(b"", raw).count(b":") == _keys(value)


def _keys(value: Any) -> int:
    """The keys of every dict in ``value`` (as parsed JSON holds them), at any depth."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if item.__class__ is dict:
            count += len(item)
            stack.extend(item.values())
        elif item.__class__ is list:
            stack.extend(item)
    return count


def _pick(raw: bytes, value: Any) -> bool:
    """:func:`_unique` on its first call: the compiled test when the accelerator is in use."""
    global _unique
    from . import _fast  # (not at import: it loads the models)

    _unique = _fast.unique_keys() or unique_keys
    return _unique(raw, value)


#: The duplicate-member test of :func:`loads` (chosen on first use; :func:`reset` forgets it).
_unique: Callable[[bytes, Any], bool] = _pick


def reset() -> None:
    """Choose the duplicate-member test again on the next parse (``A2A_CODEC_PURE`` is read)."""
    global _unique
    _unique = _pick


class _Twice(dict[str, Any]):
    """An object of the text that names ``key`` more than once (marked while parsing)."""

    __slots__ = ("key",)

    def __init__(self, members: dict[str, Any], key: str) -> None:
        super().__init__(members)
        self.key = key


def _exact(text: str) -> Any:
    """``text`` (valid JSON) parsed keeping every pair in view: its value, or the
    :class:`DecodeError` of the first member named twice (outermost first, then in
    document order)."""
    marked = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal marked
        members = dict(items)
        if len(members) == len(items):
            return members
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                break
            seen.add(key)
        marked = True
        return _Twice(members, key)

    value = _stdlib_loads(text, pairs)
    if not marked:
        return value  # (the compiled test could not tell: too deep to count)
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if item.__class__ is _Twice:
            raise DecodeError(where([*path, item.key]), TWICE)
        if isinstance(item, dict):
            stack.extend((v, (*path, k)) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(item))))
    raise AssertionError("a member twice, but not found")  # pragma: no cover


def where(path: list[str | int]) -> str:
    """The JSON path of ``path`` (``$.a[0].b``), bounded: a long name is cut (with its
    length) and a deep path keeps its start and its end."""
    out = "".join(
        render_path([seg], "")
        if isinstance(seg, int) or len(seg) <= ECHO_LIMIT
        else f"[{quote_input(seg)}]"
        for seg in path
    )
    if len(out) > ID_LIMIT:
        out = f"{out[: ID_LIMIT // 4]}...{out[-ID_LIMIT // 2 :]}"
    return "$" + out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        # int()'s own message ends in advice to call sys.set_int_max_str_digits().
        digits = len(text.lstrip("-"))
        limit = sys.get_int_max_str_digits()
        raise ValueError(f"a number of {digits} digits (the most taken is {limit})") from None


def _stdlib_loads(
    text: str | bytes, pairs: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> Any:
    try:
        return json.loads(
            text, parse_constant=_reject_constant, parse_int=_parse_int, object_pairs_hook=pairs
        )
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def dumps(value: Any) -> bytes:
    """Serialize to compact UTF-8 JSON, keeping dict key order.

    Integers beyond 64 bits and strings with lone surrogates (written as
    ``\\udXXX`` escapes) fall back to the standard library; a non-string
    object key raises :class:`TypeError` (and NaN/Infinity ``ValueError``
    there) instead of being written differently.
    """
    try:
        return orjson.dumps(value)
    except TypeError:
        # json.dumps would turn a non-string key into a string: refuse instead.
        where = _non_string_key(value, "")
        if where is not None:
            raise TypeError(where) from None
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode(
            "ascii"
        )


def _non_string_key(value: Any, path: str) -> str | None:
    """Where ``value`` holds a dict key that is not a string, if anywhere."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"at {path or '$'}: object keys must be strings, got {key!r}"
            found = _non_string_key(item, f"{path}[{key!r}]")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _non_string_key(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None
