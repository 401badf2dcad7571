"""Tool names that every LLM API accepts, and their canonical snake_case form."""

from __future__ import annotations

import re
from typing import Final

from ._errors import ToolNameError

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "NAMESPACE_SEPARATOR",
    "NAMESPACED_TOOL_NAME",
    "TOOL_NAME",
    "canonical_name",
    "check_tool_name",
    "namespaced_name",
]

#: The longest tool name the major LLM function-calling APIs accept.
MAX_TOOL_NAME_LENGTH: Final = 64
#: A valid tool name: a letter, then letters, digits, ``_`` or ``-`` (64 at most).
TOOL_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: ``<server>__<tool>``, both parts canonical snake_case.
NAMESPACED_TOOL_NAME: Final = re.compile(r"^[a-z][a-z0-9_]*__[a-z][a-z0-9_]*$")
#: Between the namespace and the tool name.
NAMESPACE_SEPARATOR: Final = "__"

_SEPARATORS = re.compile(r"[\s.\-/:]+")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")  # HTTPServer -> HTTP_Server
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")  # createIssue -> create_Issue
_UNDERSCORES = re.compile(r"_+")
_CANONICAL = re.compile(r"[a-z][a-z0-9_]*")


def canonical_name(name: str) -> str:
    """``name`` in lowercase snake_case: camelCase is split, dashes, dots, spaces,
    slashes and colons become ``_``, runs of ``_`` collapse and the ends are trimmed.

    >>> canonical_name("createIssue"), canonical_name("get-HTTPStatus.v2")
    ('create_issue', 'get_http_status_v2')

    The result is not checked: see :func:`namespaced_name`.
    """
    text = _SEPARATORS.sub("_", name.strip())
    text = _ACRONYM.sub(r"\1_\2", text)
    text = _CAMEL.sub(r"\1_\2", text)
    return _UNDERSCORES.sub("_", text.lower()).strip("_")


def _canonical_part(name: str, what: str, source: str) -> str:
    part = canonical_name(name)
    if not _CANONICAL.fullmatch(part):
        raise ToolNameError(
            f"{source}: the {what} name {name!r} has no valid snake_case form "
            f"(got {part!r}; it must start with a letter and use only ASCII letters, "
            "digits, '_', '-', '.')"
        )
    return part


def namespaced_name(namespace: str, tool: str, *, source: str | None = None) -> str:
    """``<namespace>__<tool>`` in canonical snake_case, checked against
    :data:`NAMESPACED_TOOL_NAME` and :data:`MAX_TOOL_NAME_LENGTH`.

    Raises :class:`ToolNameError` naming ``source`` (default: the namespace
    and the tool) when either part has no valid form or the result is too long.
    """
    where = source or f"tool {tool!r} of {namespace!r}"
    name = (
        _canonical_part(namespace, "namespace", where)
        + NAMESPACE_SEPARATOR
        + _canonical_part(tool, "tool", where)
    )
    if len(name) > MAX_TOOL_NAME_LENGTH:
        raise ToolNameError(
            f"{where}: the tool name {name!r} is longer than {MAX_TOOL_NAME_LENGTH} characters"
        )
    assert NAMESPACED_TOOL_NAME.fullmatch(name), name
    return name


def check_tool_name(name: str, *, source: str | None = None) -> str:
    """Return ``name`` if every LLM function-calling API accepts it, else raise
    :class:`ToolNameError` (naming ``source`` when given)."""
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        prefix = f"{source}: " if source else ""
        raise ToolNameError(
            f"{prefix}invalid tool name {name!r}: it must start with a letter and use only "
            "ASCII letters, digits, '_' and '-'"
        )
    if len(name) > MAX_TOOL_NAME_LENGTH:
        prefix = f"{source}: " if source else ""
        raise ToolNameError(
            f"{prefix}invalid tool name {name!r}: longer than {MAX_TOOL_NAME_LENGTH} characters"
        )
    return name
