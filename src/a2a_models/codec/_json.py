"""JSON text <-> Python values: orjson on the fast path, exact fallbacks on the edges.

orjson turns integers beyond 64 bits into floats and rejects lone surrogates;
both are legal JSON. Those inputs go through the standard library instead,
so a large integer stays an integer and nothing is lost.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import orjson

__all__ = ["dumps", "loads"]

# 19+ digits can exceed 64 bits (negative ones at 19); shorter runs never do. A false positive (a
# long digit run inside a string) only costs the slower exact parser. Mapping
# digits to "0" and finding a run is ~15x faster than a regex scan.
_DIGITS_AS_ZERO = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_RUN = b"0" * 19  # -9223372036854775809 has 19 digits and overflows int64
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # high or low surrogates


def _has_long_digit_run(raw: bytes) -> bool:
    return raw.translate(_DIGITS_AS_ZERO).find(_LONG_RUN) >= 0


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text; raises :class:`ValueError` on invalid JSON.

    Big integers and lone surrogates parse exactly (they bypass orjson).
    """
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates in the text itself
            return _stdlib_loads(data)
    else:
        raw = bytes(data) if not isinstance(data, bytes) else data
    if not _has_long_digit_run(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            if _SURROGATE_ESCAPE.search(raw) is None:
                raise
    return _stdlib_loads(raw.decode("utf-8"))


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


def _stdlib_loads(text: str | bytes) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
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
