"""Artifacts stored in pieces: an append writes the parts it adds, not the artifact again.

An artifact streamed in N appended chunks (an LLM writing a report token by
token) would cost O(N²) bytes written if every append rewrote its row. Its
row is instead a sequence of *pieces*, rows ``(task_key, pos, piece)``:

* piece 0 is the artifact's JSON as of its last whole write (creation,
  replacement, the text parts joined at ``last_chunk``) and carries the
  row's ``ref_seq``;
* pieces 1, 2, ... are JSON arrays of the parts appended since, in order.
  An append adds its parts to the last piece while that stays under
  :data:`PIECE_BYTES`, else starts the next piece, so an append costs a
  bounded write whatever the artifact's length.

An append that also changes the artifact's name, description, metadata or
extensions rewrites piece 0's members other than ``parts`` (the cost of
piece 0, not of the whole artifact). A whole write replaces piece 0 and
deletes the others. A row with more than one piece is never referred to by a
logged event (an append first inlines the event's artifact), so an event's
``"a"`` reference reads piece 0 alone.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import NamedTuple

import attrs

from .. import codec
from ..models import Artifact

__all__ = [
    "PIECE_BYTES",
    "ArtifactAppend",
    "next_piece",
    "parts_appended",
    "whole_artifacts",
    "with_head",
]

#: A piece grows by appends while it holds at most this many bytes of parts' JSON.
PIECE_BYTES = 2048

_DIALECT = "1.0"


class ArtifactAppend(NamedTuple):
    """What an append adds to a stored artifact."""

    #: The JSON array of the parts added.
    parts: bytes
    #: The artifact's JSON with its new name, description, metadata or extensions
    #: (its parts stand for any parts); ``None``: those are unchanged.
    head: bytes | None


def _same(a: object, b: object) -> bool:
    # Exact, not ==: 1, 1.0 and True are equal in Python but not in JSON.
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return codec.dumps(a) == codec.dumps(b)
    return a == b  # strings, tuples of strings


_HEAD = tuple(field.name for field in attrs.fields(Artifact) if field.name != "parts")


def parts_appended(before: Artifact, after: Artifact) -> ArtifactAppend | None:
    """What ``after`` adds to ``before`` if it is ``before`` with parts appended
    (the very part objects first, then more); ``None`` if it is not.

    An artifact the engine appended to (:meth:`~a2a_models.Artifact.after_parts_of`)
    says so in constant time; any other is compared part by part (some 10 ns a part).
    """
    if after.artifact_id != before.artifact_id:
        return None
    added = after.parts_added_to(before)
    if added is None:
        count = len(before.parts)
        if len(after.parts) <= count or not all(map(operator.is_, after.parts, before.parts)):
            return None
        added = after.parts[count:]
    parts = b"[" + b",".join(codec.encode(part, _DIALECT) for part in added) + b"]"
    if all(_same(getattr(after, name), getattr(before, name)) for name in _HEAD):
        return ArtifactAppend(parts, None)
    head = codec.encode(attrs.evolve(after, parts=added[:1]), _DIALECT)
    return ArtifactAppend(parts, head)


def _bytes(data: bytes | str) -> bytes:
    return data.encode() if isinstance(data, str) else data


def next_piece(last: tuple[int, bytes | str], parts: bytes) -> tuple[int, bytes]:
    """The piece ``(number, JSON)`` to write for appending ``parts`` (a JSON array)
    to an artifact whose last piece is ``last``: that piece grown, or the next one."""
    number, data = last
    if number > 0 and len(data) + len(parts) <= PIECE_BYTES:
        return number, _bytes(data)[:-1] + b"," + parts[1:]
    return number + 1, parts


def with_head(first: bytes | str, head: bytes) -> bytes:
    """Piece 0 ``first`` with the members of ``head`` (an artifact's JSON) other than
    its parts, keeping its own parts."""
    own = codec.loads(first)["parts"]
    wire = codec.loads(head)
    return codec.dumps({key: own if key == "parts" else value for key, value in wire.items()})


def whole_artifacts(pieces: Iterable[bytes | str]) -> list[bytes | str]:
    """The JSON of each artifact, given the pieces of a task's artifact rows in
    ``(pos, piece)`` order."""
    artifacts: list[bytes | str] = []
    more: dict[int, list[bytes]] = {}
    for piece in pieces:
        if _bytes(piece[:1]) == b"[":
            if not artifacts:
                raise ValueError("an artifact row has appended parts but no piece 0")
            inner = _bytes(piece)[1:-1]
            if inner:
                more.setdefault(len(artifacts) - 1, []).append(inner)
        else:
            artifacts.append(piece)
    for position, arrays in more.items():
        wire = codec.loads(artifacts[position])
        wire["parts"].extend(codec.loads(b"[" + b",".join(arrays) + b"]"))
        artifacts[position] = codec.dumps(wire)
    return artifacts
