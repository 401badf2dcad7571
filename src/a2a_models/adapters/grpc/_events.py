"""Event ids on gRPC streams, so that a broken stream can be resumed.

``lf.a2a.v1`` has no event id (SSE has ``id:``), so this server appends
each event's sequence number to its ``StreamResponse`` as field
:data:`EVENT_ID_FIELD`, a varint the proto does not define. Protobuf
readers keep unknown fields and ignore them, so other clients (the
a2a-sdk's) read the same events; our client reads the number back and, to
resume, sends it as ``last-event-id`` metadata on ``SubscribeToTask``, as
the HTTP clients send ``Last-Event-ID``. Against a server that sends no
ids, a resumed stream starts again with the whole Task (the spec's
``SubscribeToTask``), as over HTTP.
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import unknown_fields

__all__ = ["EVENT_ID_FIELD", "LAST_EVENT_ID_KEY", "event_id_of", "with_event_id"]

#: The field number of the event id: far above the spec's numbers, below protobuf's
#: reserved 19000-19999.
EVENT_ID_FIELD: Final = 10_000
#: The request metadata naming the last event a resuming client saw.
LAST_EVENT_ID_KEY: Final = "last-event-id"


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_TAG: Final = _varint(EVENT_ID_FIELD << 3)  # wire type 0: varint


def with_event_id(message: bytes, seq: int) -> bytes:
    """A serialized ``StreamResponse`` with its event id appended (protobuf merges fields)."""
    return message + _TAG + _varint(seq)


def event_id_of(message: Any) -> str | None:
    """The event id a parsed ``StreamResponse`` carries (``None``: the server sent none)."""
    for field in unknown_fields.UnknownFieldSet(message):
        if field.field_number == EVENT_ID_FIELD and field.wire_type == 0:
            return str(field.data)
    return None
