"""A2A objects <-> MCP tool results."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any, Final

import mcp_types as types

from ... import codec
from ..._state import TaskState
from ...errors import DecodeError
from ...models import DataPart, FilePart, JSONObject, Message, Part, Task, TextPart
from ...tools import ArgumentValidator, ToolOutput, ToolResult

__all__ = [
    "A2A_JSON_MEDIA_TYPE",
    "CONTINUATION_KEYS",
    "INTERRUPTION_SCHEMA",
    "a2a_resource",
    "agent_slug",
    "error_result",
    "from_call_result",
    "result_text",
    "structured_result",
    "tag_uri",
    "to_call_result",
]

#: The media type of the embedded A2A object.
A2A_JSON_MEDIA_TYPE: Final = "application/json"

#: The tool arguments that continue a task waiting for the caller (A2A's JSON names).
CONTINUATION_KEYS: Final = ("taskId", "contextId")

#: The ``structuredContent`` of a result whose task waits for the caller
#: (``input-required`` or ``auth-required``): call the tool again with these ids.
INTERRUPTION_SCHEMA: Final[JSONObject] = {
    "type": "object",
    "description": (
        "The task waits for the caller: call the tool again with this taskId and "
        "contextId (and the answer) to continue it."
    ),
    "properties": {
        "taskId": {"type": "string"},
        "contextId": {"type": "string"},
        "state": {"enum": ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]},
        "message": {"type": "string", "description": "what the task asks for"},
    },
    "required": ["taskId", "contextId", "state"],
}

_ERROR_STATES: Final = frozenset({TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED})

_NOT_DNS = re.compile(r"[^a-z0-9]+")
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*|\s*```$")


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


def result_text(obj: Task | Message) -> str:
    """The plain text of a skill's result, for hosts that read only text.

    A Task's artifacts (text parts as they are, data parts as JSON; artifacts
    separated by a blank line), else its status message; a Message's parts.
    """
    if isinstance(obj, Message):
        return _parts_text(obj.parts)
    texts = [t for t in (_parts_text(a.parts) for a in obj.artifacts) if t]
    if texts:
        return "\n\n".join(texts)
    message = obj.status.message
    return _parts_text(message.parts) if message is not None else ""


def _parts_text(parts: Sequence[Part]) -> str:
    # Adjacent text parts (an artifact's streamed chunks) join exactly; a data
    # part is its JSON on a line of its own.
    chunks: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            chunks.append(part.text)
        elif isinstance(part, DataPart):
            if chunks and not chunks[-1].endswith("\n"):
                chunks.append("\n")
            chunks.append(json.dumps(part.data, ensure_ascii=False))
            chunks.append("\n")
    if chunks and chunks[-1] == "\n":
        chunks.pop()
    return "".join(chunks)


def structured_result(obj: Task | Message) -> JSONObject | None:
    """The structured value of a skill's result: its first data part holding a JSON
    object (artifacts first, then the status message), else its text when that text
    is one JSON object (an LLM writing JSON), else ``None``."""
    groups: list[Sequence[Part]]
    if isinstance(obj, Message):
        groups = [obj.parts]
    else:
        groups = [a.parts for a in obj.artifacts]
        if obj.status.message is not None:
            groups.append(obj.status.message.parts)
    for parts in groups:
        for part in parts:
            if isinstance(part, DataPart) and isinstance(part.data, dict):
                return dict(part.data)
    text = result_text(obj).strip()
    if text.startswith("```"):
        text = _FENCE.sub("", text).strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if isinstance(value, dict):
            return value
    return None


def _state_name(state: TaskState) -> str:
    return state.name.lower().replace("_", "-")


def _interruption(task: Task) -> JSONObject:
    """What a caller needs to continue ``task``, which waits for it (see
    :data:`INTERRUPTION_SCHEMA`)."""
    out: JSONObject = {
        "taskId": task.id,
        "contextId": task.context_id or task.id,
        "state": task.state.value,
    }
    message = task.status.message
    question = _parts_text(message.parts) if message is not None else ""
    if question:
        out["message"] = question
    return out


def _interruption_text(task: Task, *, answer_in: str | None = None) -> str:
    """The text of a result whose ``task`` waits for the caller: its question, then
    how to continue (call the tool again with the task's ids; ``answer_in`` names
    the argument that takes the answer, else the tool's own arguments do)."""
    details = _interruption(task)
    ids = json.dumps({k: details[k] for k in CONTINUATION_KEYS})
    if task.state is TaskState.AUTH_REQUIRED:
        how = (
            "The task needs authorization to go on (auth-required). Once it is "
            f"given, call this tool again with {ids} to continue the task."
        )
    else:
        where = f'as "{answer_in}"' if answer_in else "in the tool's arguments"
        how = (
            "The task is waiting for your answer (input-required). To answer, call "
            f"this tool again with {ids} and the answer {where}."
        )
    question = details.get("message")
    return f"{question}\n\n{how}" if isinstance(question, str) else how


def to_call_result(
    obj: Task | Message,
    *,
    agent_name: str,
    day: date | str | None = None,
    output_schema: JSONObject | None = None,
    answer_in: str | None = None,
) -> types.CallToolResult:
    """The MCP result carrying ``obj``, for simple and A2A-aware hosts alike.

    ``content`` is a plain-text item (:func:`result_text`, left out when there
    is no text) followed by the embedded ``resource`` (``application/json``,
    the object's A2A 1.0 JSON, a tag URI). ``structuredContent`` is
    :func:`structured_result` when there is one. With ``output_schema`` (the
    skill's output schema) the structured value is validated against it: a
    missing or non-conforming value makes an error result that says why (the
    A2A resource still comes with it).

    A Task waiting for the caller (``input-required``, ``auth-required``) is no
    error: its text is the question and how to continue (``answer_in``: the argument
    that takes the answer) and its ``structuredContent`` the ids that continue
    it (:data:`INTERRUPTION_SCHEMA`). A failed, rejected or canceled Task sets
    ``isError`` (the tool reports an error).
    """
    encoded = codec.encode(obj, "1.0").decode("utf-8")
    resource = types.EmbeddedResource(
        resource=types.TextResourceContents(
            uri=tag_uri(agent_name, obj, day), mime_type=A2A_JSON_MEDIA_TYPE, text=encoded
        )
    )
    if isinstance(obj, Task) and obj.state.is_interrupted:
        return types.CallToolResult(
            content=[
                types.TextContent(text=_interruption_text(obj, answer_in=answer_in)),
                resource,
            ],
            structured_content=_interruption(obj),
            is_error=False,
        )
    failed = isinstance(obj, Task) and obj.state in _ERROR_STATES
    text = result_text(obj)
    if isinstance(obj, Task) and failed and not text:
        # A host that reads text only must still learn that the call came to nothing.
        text = f"The task ended {_state_name(obj.state)}."
    structured = structured_result(obj)
    if output_schema is not None and not failed:
        problems = (
            ["the result carries no JSON object"]
            if structured is None
            else ArgumentValidator(output_schema).problems(structured)
        )
        if problems:
            text = "The result does not match the tool's outputSchema: " + "; ".join(problems)
            failed = True
    content: list[types.ContentBlock] = [types.TextContent(text=text)] if text else []
    content.append(resource)
    return types.CallToolResult(content=content, structured_content=structured, is_error=failed)


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


def a2a_resource(result: types.CallToolResult) -> Task | Message | None:
    """The A2A Task or Message embedded in ``result`` (what an a2a-models agent's MCP
    server returns: an ``application/json`` resource with a ``tag:`` URI), if any."""
    for block in result.content:
        if not isinstance(block, types.EmbeddedResource):
            continue
        resource = block.resource
        if (
            isinstance(resource, types.TextResourceContents)
            and resource.mime_type == A2A_JSON_MEDIA_TYPE
            and resource.uri.startswith("tag:")
        ):
            obj = _decode_a2a(resource.text)
            if obj is not None:
                return obj
    return None


def from_call_result(result: types.CallToolResult) -> ToolOutput:
    """A tool output from an MCP ``CallToolResult``.

    A result embedding an A2A Task or Message (see :func:`a2a_resource`; what an
    a2a-models agent's MCP server returns) gives that Task or Message back;
    anything else becomes a :class:`~a2a_models.tools.ToolResult` (see its docs
    for the mapping).
    """
    obj = a2a_resource(result)
    if obj is not None:
        return obj
    parts = [p for p in (_part(block) for block in result.content) if p is not None]
    return ToolResult(parts=parts, data=result.structured_content, is_error=result.is_error)
