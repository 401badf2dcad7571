"""A2A objects <-> MCP tool results."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, date, datetime
from typing import Any, Final

import mcp_types as types

from ... import codec
from ...errors import DecodeError
from ...models import FilePart, Message, Part, Task, TextPart
from ...tools import ToolOutput, ToolResult

__all__ = [
    "A2A_JSON_MEDIA_TYPE",
    "agent_slug",
    "error_result",
    "from_call_result",
    "tag_uri",
    "to_call_result",
]

#: The media type of the embedded A2A object.
A2A_JSON_MEDIA_TYPE: Final = "application/json"

_NOT_DNS = re.compile(r"[^a-z0-9]+")


def agent_slug(name: str) -> str:
    """The tag-URI authority for an agent name: lowercase ASCII letters, digits and
    single dashes (``"Weather Agent 2"`` -> ``"weather-agent-2"``; ``"agent"`` if empty)."""
    return _NOT_DNS.sub("-", name.lower()).strip("-") or "agent"


def _day(value: date | str | None) -> str:
    if value is None:
        return datetime.now(UTC).date().isoformat()
    if isinstance(value, datetime):
        return value.astimezone(UTC).date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return date.fromisoformat(value).isoformat()


def tag_uri(agent_name: str, obj: Task | Message, day: date | str | None = None) -> str:
    """``tag:<agent-slug>,<YYYY-MM-DD>:<task or message id>`` (RFC 4151).

    ``day`` defaults to today (UTC).
    """
    ident = obj.id if isinstance(obj, Task) else obj.message_id
    return f"tag:{agent_slug(agent_name)},{_day(day)}:{ident}"


def to_call_result(
    obj: Task | Message, *, agent_name: str, day: date | str | None = None
) -> types.CallToolResult:
    """The MCP result carrying ``obj``: one embedded ``resource`` content item
    (``application/json``, the object's A2A 1.0 JSON as text, a tag URI).

    A failed or rejected Task also sets ``isError`` (the tool reports an error).
    """
    text = codec.encode(obj, "1.0").decode("utf-8")
    resource = types.EmbeddedResource(
        resource=types.TextResourceContents(
            uri=tag_uri(agent_name, obj, day), mime_type=A2A_JSON_MEDIA_TYPE, text=text
        )
    )
    failed = isinstance(obj, Task) and obj.state.name in ("FAILED", "REJECTED")
    return types.CallToolResult(content=[resource], is_error=failed)


def error_result(message: str) -> types.CallToolResult:
    """An MCP error result (``isError``) whose text is ``message``."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


# ----------------------------------------------------------------------------- MCP -> tools


def _decode_a2a(text: str) -> Task | Message | None:
    try:
        value = codec.loads(text)
    except (DecodeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    tp: Any = Task if "status" in value and "id" in value else None
    if tp is None and "messageId" in value and "role" in value:
        tp = Message
    if tp is None:
        return None
    try:
        obj: Task | Message = codec.from_wire(tp, value, "1.0")
    except DecodeError:
        return None
    return obj


def _b64(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _part(block: Any) -> Part | None:
    if isinstance(block, types.TextContent):
        return TextPart(block.text)
    if isinstance(block, types.ImageContent | types.AudioContent):
        raw = _b64(block.data)
        if raw is None:
            return TextPart(f"[{block.type}: undecodable base64 data]")
        return FilePart(raw=raw, media_type=block.mime_type)
    if isinstance(block, types.ResourceLink):
        return FilePart(url=block.uri, media_type=block.mime_type, filename=block.name)
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return TextPart(resource.text, media_type=resource.mime_type)
        raw = _b64(resource.blob)
        if raw is None:
            return TextPart(f"[resource {resource.uri}: undecodable base64 data]")
        return FilePart(raw=raw, media_type=resource.mime_type)
    return None


def from_call_result(result: types.CallToolResult) -> ToolOutput:
    """A tool output from an MCP ``CallToolResult``.

    A result that is exactly one embedded ``application/json`` resource with a
    ``tag:`` URI holding an A2A Task or Message (what an a2a-models agent's
    MCP server returns) gives that Task or Message back; anything else
    becomes a :class:`~a2a_models.tools.ToolResult` (see its docs for the mapping).
    """
    content = list(result.content)
    if len(content) == 1 and isinstance(content[0], types.EmbeddedResource):
        resource = content[0].resource
        if (
            isinstance(resource, types.TextResourceContents)
            and resource.mime_type == A2A_JSON_MEDIA_TYPE
            and resource.uri.startswith("tag:")
        ):
            obj = _decode_a2a(resource.text)
            if obj is not None:
                return obj
    parts = [p for p in (_part(block) for block in content) if p is not None]
    return ToolResult(parts=parts, data=result.structured_content, is_error=result.is_error)
