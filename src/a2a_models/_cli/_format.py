"""How ``a2a-models send`` prints results: one line per item, for people or as JSON."""

from __future__ import annotations

import json
from typing import Any

from .. import codec
from .. import models as m

__all__ = ["describe", "parts_text", "to_json"]


def to_json(item: Any, as_type: Any) -> str:
    """``item`` as one line of 1.0 ProtoJSON (wrapped as ``as_type``, e.g. StreamResponse)."""
    return codec.encode(item, "1.0", as_type=as_type).decode("utf-8")


def _state(state: m.TaskState) -> str:
    return state.name.lower().replace("_", "-")


def parts_text(parts: tuple[m.Part, ...]) -> str:
    """Parts as one line: text as is, data as JSON, files by name or URL."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, m.TextPart):
            out.append(part.text)
        elif isinstance(part, m.DataPart):
            out.append(json.dumps(part.data, ensure_ascii=False, separators=(",", ":")))
        elif isinstance(part, m.FilePart):
            label = part.filename or part.url or "file"
            out.append(f"<{label}{f' {part.media_type}' if part.media_type else ''}>")
    return " ".join(s.replace("\r", " ").replace("\n", " ") for s in out)


def _status(status: m.TaskStatus) -> str:
    text = f" {parts_text(status.message.parts)}" if status.message is not None else ""
    return f"{_state(status.state)}:{text}" if text else _state(status.state)


def describe(item: object) -> str:
    """One human-readable line for a Message, Task or stream event."""
    if isinstance(item, m.Message):
        return f"[message] {parts_text(item.parts)}"
    if isinstance(item, m.Task):
        line = f"[task {item.id}] {_status(item.status)}"
        for artifact in item.artifacts:
            name = artifact.name or artifact.artifact_id
            line += f" | artifact {name}: {parts_text(artifact.parts)}"
        return line
    if isinstance(item, m.TaskStatusUpdateEvent):
        return f"[status] {_status(item.status)}"
    if isinstance(item, m.TaskArtifactUpdateEvent):
        name = item.artifact.name or item.artifact.artifact_id
        more = " (more)" if item.append else ""
        return f"[artifact {name}]{more} {parts_text(item.artifact.parts)}"
    return repr(item)
