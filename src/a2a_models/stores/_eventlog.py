"""The event log as stored: each event without what the task's rows already hold.

An event that repeats a history message or an artifact written as a row by
the same write refers to that row instead of holding a copy, and the task's
own ids are left out. The stored form is the event's JSON with those members
removed and a ``"$"`` member saying what to put back:

* ``"t": 1`` / ``"c": 1``: the ``taskId`` (a Task's ``id``) / ``contextId``
  are the task's.
* ``"m": pos``: a status update's message, or a Message event itself, is
  history row ``pos`` (history rows never change).
* ``"h": n``: a Task event's history is history rows ``0 .. n-1``.
* ``"a": pos``: an artifact update's artifact is the current content of the
  task's artifact row ``pos``. That row's ``ref_seq`` names the event, and a
  write that changes the row first puts the artifact back into the event
  (:func:`inline_artifact`).

An event without ``"$"`` is stored whole: rows written before this form, and
events that repeat nothing.

PostgreSQL (since migration 7) keeps consecutive events of a task together in
one row, a *chunk* (:func:`pack`, :func:`unpack`): the row's ``seq`` is its
first event's, and a write appends its event to the task's last chunk until
that holds :data:`CHUNK_EVENTS` events or :data:`CHUNK_BYTES` bytes (so an
event still costs at most a bounded rewrite). A chunk is the byte ``0x01``
and the stored forms, one per line, deflated with the preset dictionary
:data:`_DICTIONARY` (the members and states every stored form repeats, so a
status update takes some 25 bytes instead of 115). A row whose first byte is
``{`` is one event in its stored form (written before migration 7). The
dictionary is part of the stored format: never change it (a new one needs a
new first byte).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import codec
from ..models import (
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from ..server import LoggedEvent
from ._common import (
    column_value,
    decode_event,
    encode_artifact,
    encode_event,
    encode_message,
    own_message,
    row_suffix,
)

__all__ = [
    "CHUNK_BYTES",
    "CHUNK_EVENTS",
    "NO_END",
    "append_to",
    "compact_event",
    "expand_event",
    "expand_events",
    "inline_artifact",
    "pack",
    "references",
    "referenced_rows",
    "unpack",
    "with_context",
]

_MARK = "$"

#: The most events, and the most bytes of stored forms, one chunk row holds.
CHUNK_EVENTS = 32
CHUNK_BYTES = 2048

#: A seq above every logged one (the largest 64-bit integer both databases hold).
NO_END = 2**63 - 1

_CHUNK = b"\x01"
# Most frequent last (deflate reaches nearer strings with fewer bits). Never change.
_DICTIONARY = (
    b'"metadata":{"parts":[{"text":"role":"ROLE_USER","messageId":"artifactId":"name":'
    b'"append":true,"lastChunk":true,"message":{"role":"ROLE_AGENT","data":{"url":"raw":'
    b'TASK_STATE_REJECTED"TASK_STATE_AUTH_REQUIRED"TASK_STATE_CANCELED"TASK_STATE_FAILED"'
    b'TASK_STATE_INPUT_REQUIRED"'
    b'{"$":{"t":1,"c":1,"h":1},"task":{"status":{"state":"TASK_STATE_SUBMITTED","timestamp":"20'
    b'{"$":{"t":1,"c":1,"a":0},"artifactUpdate":{}}'
    b'{"$":{"t":1,"c":1},"statusUpdate":{"status":{"state":"TASK_STATE_COMPLETED","timestamp":"20'
    b'{"$":{"t":1,"c":1,"m":1},"statusUpdate":{"status":{"state":"TASK_STATE_WORKING","timestamp":"20'
)


def pack(forms: Sequence[bytes]) -> bytes:
    """One chunk row holding the stored ``forms`` of consecutive events."""
    if any(b"\n" in form for form in forms):
        raise ValueError("a stored form is compact JSON, without line breaks")
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY)
    return _CHUNK + deflate.compress(b"\n".join(forms)) + deflate.flush()


def append_to(last: tuple[int, bytes] | None, seq: int, form: bytes) -> tuple[int, bytes]:
    """The row ``(seq, data)`` that logs event ``seq`` (stored ``form``) after the
    task's last row ``last``: that row with the event added, or a new one."""
    if last is not None and last[1][:1] == _CHUNK:
        forms = unpack(last[1])
        if (
            last[0] + len(forms) == seq
            and len(forms) < CHUNK_EVENTS
            and sum(map(len, forms)) + len(form) <= CHUNK_BYTES
        ):
            return last[0], pack([*forms, form])
    return seq, pack([form])


def unpack(data: bytes) -> list[bytes]:
    """The stored forms a row holds, in order (a row from before chunks holds one)."""
    if data[:1] != _CHUNK:
        return [data]
    inflate = zlib.decompressobj(-15, _DICTIONARY)
    return (inflate.decompress(data[1:]) + inflate.flush()).split(b"\n")


def compact_event(
    event: StreamResponse,
    task: Task,
    messages: Mapping[bytes, int],
    artifacts: Mapping[int, bytes],
) -> tuple[bytes, int | None]:
    """The stored form of ``event`` (applied to make ``task``) and the artifact row
    (position) it refers to, if any.

    ``messages``: the JSON of history rows this write stores, to their
    positions; ``artifacts``: the JSON of artifact rows it stores, by position.
    """
    task_id, context_id = task.id, task.context_id
    if isinstance(event, Message):
        position = messages.get(encode_message(event))
        if position is not None:
            return codec.dumps({_MARK: {"m": position}}), None
    data = encode_event(event)
    wire: dict[str, Any] = codec.loads(data)
    ((key, inner),) = wire.items()
    refs: dict[str, Any] = {}
    if inner.get("id" if key == "task" else "taskId") == task_id:
        del inner["id" if key == "task" else "taskId"]
        refs["t"] = 1
    if context_id is not None and inner.get("contextId") == context_id:
        del inner["contextId"]
        refs["c"] = 1
    artifact_ref = None
    if isinstance(event, TaskStatusUpdateEvent) and event.status.message is not None:
        position = messages.get(encode_message(event.status.message))
        if position is not None:
            del inner["status"]["message"]
            refs["m"] = position
    elif isinstance(event, Task) and event.history:
        positions = [messages.get(encode_message(m)) for m in event.history]
        if positions == list(range(len(positions))):
            del inner["history"]
            refs["h"] = len(positions)
    elif isinstance(event, TaskArtifactUpdateEvent) and not event.append:
        # apply_event put it in place of the first artifact with its id.
        wanted = event.artifact.artifact_id
        position = next((i for i, a in enumerate(task.artifacts) if a.artifact_id == wanted), -1)
        if artifacts.get(position) == encode_artifact(event.artifact):
            del inner["artifact"]
            refs["a"] = artifact_ref = position
    if not refs:
        return data, None
    return codec.dumps({_MARK: refs, key: inner}), artifact_ref


def _marked(data: bytes | str) -> bool:
    return (b'"$"' in data) if isinstance(data, bytes) else ('"$"' in data)


def references(data: bytes | str) -> tuple[list[int], list[int]] | None:
    """The history and artifact row positions a stored event refers to;
    ``None`` if it is stored whole (it needs nothing of the task)."""
    if not _marked(data):
        return None
    refs = codec.loads(data).get(_MARK)
    if not isinstance(refs, dict):
        return None
    positions = list(range(refs["h"])) if "h" in refs else []
    if "m" in refs:
        positions.append(refs["m"])
    return positions, ([refs["a"]] if "a" in refs else [])


def referenced_rows(forms: Iterable[bytes | str]) -> tuple[set[int], set[int]] | None:
    """The history and artifact row positions some stored events refer to, together;
    ``None`` if every one is stored whole (no row needs reading)."""
    positions: set[int] = set()
    keys: set[int] = set()
    compact = False
    for data in forms:
        refs = references(data)
        if refs is not None:
            compact = True
            positions.update(refs[0])
            keys.update(refs[1])
    return (positions, keys) if compact else None


def expand_events(
    logged: Iterable[tuple[int, bytes | str]],
    task_id: str,
    context_column: str | None,
    messages: Mapping[int, bytes | str],
    artifacts: Mapping[int, bytes | str],
) -> list[LoggedEvent]:
    """The events of ``(seq, stored form)`` rows of a task whose ``context_id`` column
    is ``context_column``, given the history ``messages`` (as their rows hold them)
    and ``artifacts`` they refer to (see :func:`referenced_rows`)."""
    context = column_value(context_column)
    suffix = row_suffix(task_id, context)
    whole = {pos: own_message(m, suffix) for pos, m in messages.items()}
    return [(seq, expand_event(data, task_id, context, whole, artifacts)) for seq, data in logged]


def expand_event(
    data: bytes | str,
    task_id: str,
    context_id: str | None,
    messages: Mapping[int, bytes | str],
    artifacts: Mapping[int, bytes | str],
) -> StreamResponse:
    """The event a stored form holds, given the rows it refers to (see :func:`references`)."""
    if not _marked(data):
        return decode_event(data)
    wire: dict[str, Any] = codec.loads(data)
    refs = wire.pop(_MARK, None)
    if not isinstance(refs, dict):
        return decode_event(data)
    if not wire:
        wire["message"] = codec.loads(messages[refs["m"]])
    else:
        ((key, inner),) = wire.items()
        if "t" in refs:
            inner["id" if key == "task" else "taskId"] = task_id
        if "c" in refs:
            inner["contextId"] = context_id
        if "m" in refs:
            inner["status"]["message"] = codec.loads(messages[refs["m"]])
        if "h" in refs:
            inner["history"] = [codec.loads(messages[i]) for i in range(refs["h"])]
        if "a" in refs:
            inner["artifact"] = codec.loads(artifacts[refs["a"]])
    return decode_event(codec.dumps(wire))


def inline_artifact(data: bytes | str, artifact: bytes | str) -> bytes:
    """A stored event referring to an artifact row, holding that row's ``artifact`` instead."""
    wire: dict[str, Any] = codec.loads(data)
    refs = wire[_MARK]
    del refs["a"]
    if not refs:
        del wire[_MARK]
    inner = next(value for key, value in wire.items() if key != _MARK)
    inner["artifact"] = codec.loads(artifact)
    return codec.dumps(wire)


def with_context(data: bytes | str, context_id: str | None) -> bytes | None:
    """A stored event that leaves out its ``contextId`` (the task's), holding
    ``context_id`` instead; ``None`` if it holds its own. For a write that
    changes the task's context (the engine never does; a store's caller may)."""
    if not _marked(data):
        return None
    wire: dict[str, Any] = codec.loads(data)
    refs = wire.get(_MARK)
    if not isinstance(refs, dict) or "c" not in refs:
        return None
    del refs["c"]
    inner = next(value for key, value in wire.items() if key != _MARK)
    inner["contextId"] = context_id
    return codec.dumps(wire)
