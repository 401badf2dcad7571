"""``google.protobuf.Struct``/``Value`` read straight from their wire bytes.

Walking a Struct through upb attribute access costs a wrapper object, a
``WhichOneof`` and a map lookup per value; the bytes upb itself serializes
are read faster in one Python loop per container. Only that canonical layout
is accepted (map entries as key then value, one ``kind`` per Value, no unknown
fields, one-byte booleans and nulls): anything else raises :class:`Odd` and
the caller reads the message through upb instead, which also gives the
precise error for invalid content. Input is always bytes upb parsed first, so
UTF-8 is already checked.
"""

from __future__ import annotations

import struct
from math import copysign
from typing import Any

__all__ = ["Odd", "list_value", "struct_value", "value"]

_double = struct.Struct("<d").unpack_from


class Odd(Exception):
    """Not the canonical layout this reader handles."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7
        if shift > 63:
            raise Odd


def _number(n: float) -> Any:
    # Integral doubles come back as int (JSON has one number type); -0.0 keeps its sign.
    return int(n) if n.is_integer() and (n or copysign(1.0, n) > 0) else n


def _kind(buf: bytes, pos: int, end: int) -> Any:
    """The Value whose one field spans ``buf[pos:end]``."""
    tag = buf[pos]
    if tag == 0x1A:  # string_value
        n = buf[pos + 1]
        if n < 0x80:
            pos += 2
        else:
            n, pos = _varint(buf, pos + 1)
        if pos + n != end:
            raise Odd
        return buf[pos:end].decode()
    if tag == 0x11:  # number_value
        if pos + 9 != end:
            raise Odd
        return _number(_double(buf, pos + 1)[0])
    if tag == 0x20 or tag == 0x08:  # bool_value, null_value
        if pos + 2 != end or buf[pos + 1] > 1:
            raise Odd
        return buf[pos + 1] == 1 if tag == 0x20 else None
    if tag == 0x2A or tag == 0x32:  # struct_value, list_value
        n = buf[pos + 1]
        if n < 0x80:
            pos += 2
        else:
            n, pos = _varint(buf, pos + 1)
        if pos + n != end:
            raise Odd
        return _struct(buf, pos, end) if tag == 0x2A else _list(buf, pos, end)
    raise Odd


def _struct(buf: bytes, pos: int, end: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    while pos < end:
        if buf[pos] != 0x0A:
            raise Odd
        n = buf[pos + 1]
        if n < 0x80:
            pos += 2
        else:
            n, pos = _varint(buf, pos + 1)
        entry_end = pos + n
        if buf[pos] == 0x0A:  # key (absent when it is "")
            n = buf[pos + 1]
            if n < 0x80:
                pos += 2
            else:
                n, pos = _varint(buf, pos + 1)
            key = buf[pos : pos + n].decode()
            pos += n
        else:
            key = ""
        if pos >= entry_end or buf[pos] != 0x12:
            raise Odd
        n = buf[pos + 1]
        if n < 0x80:
            pos += 2
        else:
            n, pos = _varint(buf, pos + 1)
        if pos + n != entry_end or not n:
            raise Odd
        # The commonest values inline: one Python call fewer each.
        tag = buf[pos]
        if tag == 0x1A and buf[pos + 1] < 0x80:
            if pos + 2 + buf[pos + 1] != entry_end:
                raise Odd
            out[key] = buf[pos + 2 : entry_end].decode()
        elif tag == 0x11 and pos + 9 == entry_end:
            x = _double(buf, pos + 1)[0]
            out[key] = int(x) if x and x.is_integer() else _number(x)
        else:
            out[key] = _kind(buf, pos, entry_end)
        pos = entry_end
    if pos != end:
        raise Odd
    return out


def _list(buf: bytes, pos: int, end: int) -> list[Any]:
    out: list[Any] = []
    append = out.append
    while pos < end:
        if buf[pos] != 0x0A:
            raise Odd
        n = buf[pos + 1]
        if n < 0x80:
            pos += 2
        else:
            n, pos = _varint(buf, pos + 1)
        item_end = pos + n
        if not n:
            raise Odd
        tag = buf[pos]
        if tag == 0x1A and buf[pos + 1] < 0x80:
            if pos + 2 + buf[pos + 1] != item_end:
                raise Odd
            append(buf[pos + 2 : item_end].decode())
        elif tag == 0x11 and pos + 9 == item_end:
            x = _double(buf, pos + 1)[0]
            append(int(x) if x and x.is_integer() else _number(x))
        else:
            append(_kind(buf, pos, item_end))
        pos = item_end
    if pos != end:
        raise Odd
    return out


def struct_value(buf: bytes) -> dict[str, Any]:
    """The JSON object in the serialized ``Struct`` ``buf``."""
    try:
        return _struct(buf, 0, len(buf))
    except IndexError:
        raise Odd from None


def value(buf: bytes) -> Any:
    """The JSON value in the serialized ``Value`` ``buf``."""
    try:
        if not buf:
            raise Odd
        return _kind(buf, 0, len(buf))
    except IndexError:
        raise Odd from None


def list_value(buf: bytes) -> list[Any]:
    """The JSON array in the serialized ``ListValue`` ``buf``."""
    try:
        return _list(buf, 0, len(buf))
    except IndexError:
        raise Odd from None
