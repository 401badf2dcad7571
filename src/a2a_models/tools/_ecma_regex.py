"""JSON Schema's regular expressions (ECMA-262) under Python's :mod:`re`.

A schema's ``pattern`` and ``patternProperties`` are ECMA-262 regexes, which
``jsonschema`` hands to :mod:`re` as they are: a JavaScript named group
(``(?<year>...)``) or a Unicode property escape (``\\p{L}``, which zod writes
for ``.emoji()``) then made a valid schema "not a 'regex'" and a tool built
from it unusable. Here a named group is translated; a pattern Python cannot
express is accepted when it is well formed apart from its property escapes,
and is then not checked locally (an MCP server still validates its own input).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

import jsonschema.exceptions  # type: ignore[import-untyped, unused-ignore]

__all__ = ["ecma_keywords", "is_ecma_regex", "python_pattern"]

# "(?<name>" opens a named group in ECMA-262 ("(?<=" and "(?<!" are lookbehinds).
_NAMED_GROUP = re.compile(r"(?<!\\)\(\?<(?![=!])")
# \p{...} / \P{...} (Unicode properties) and \u{...} (code points, with the u flag).
_ECMA_ONLY_ESCAPE = re.compile(r"\\[pP]\{[^}]*\}|\\u\{[0-9A-Fa-f]+\}")


@functools.lru_cache(maxsize=1024)
def python_pattern(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` compiled for :mod:`re`, or ``None`` when Python cannot express it."""
    try:
        return re.compile(_NAMED_GROUP.sub("(?P<", pattern))
    except re.error:
        return None


def is_ecma_regex(pattern: object) -> bool:
    """Whether ``pattern`` is a regex JSON Schema accepts (a ``format: regex`` check)."""
    if not isinstance(pattern, str):
        return True  # the format applies to strings only
    if python_pattern(pattern) is not None:
        return True
    # Well formed once the escapes only ECMA-262 knows stand for one character.
    try:
        re.compile(_ECMA_ONLY_ESCAPE.sub("x", _NAMED_GROUP.sub("(?P<", pattern)))
    except re.error:
        return False
    return True


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    compiled = python_pattern(pattern)
    if compiled is None or not validator.is_type(instance, "string"):
        return
    if not compiled.search(instance):
        yield jsonschema.exceptions.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        compiled = python_pattern(pattern)
        if compiled is None:
            continue
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


#: The ``pattern`` and ``patternProperties`` keywords with ECMA-262 regexes, for
#: ``jsonschema.validators.extend``.
ecma_keywords: dict[str, Any] = {"pattern": _pattern, "patternProperties": _pattern_properties}
