"""ProtoJSON of a proto file's messages, without ``json_format``'s reflection.

``json_format.MessageToDict`` and ``ParseDict`` walk every message through its
descriptor, field by field, in Python: about 15 µs to fill one short A2A message.
This module generates, once per message class of a file (as ``_convert`` does
for the models), a plain function reading the message's attributes into a dict
and one filling a message from a dict, with the same keys (``json_name``), the
same defaults left out, enums by name, bytes in base64, ``Timestamp`` as its
RFC 3339 string, and ``Struct`` through the 1.0 conversion's reader and writer
(the compiled one when built).

It is an accelerator, not a second ProtoJSON: :class:`ProtoJSON` answers only
when it is sure to agree with ``json_format`` and raises otherwise (:class:`Refused`
for an unknown key, a value of another type, two members of a oneof, a NaN or
infinite ``Struct`` number, ...; protobuf's own error for a value it refuses), and
the caller then runs ``json_format``, which decides and words the error. One
difference, the 1.0 binding's rule: an integral ``Struct`` number reads as ``int``.
tests/grpc_binding/test_protojson.py holds both to the same answers.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable
from datetime import date
from typing import Any, Final, NoReturn

from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor

from ._convert import _from_struct, _struct_into

__all__ = ["ProtoJSON", "Refused"]

_STRUCT: Final = "google.protobuf.Struct"
_TIMESTAMP: Final = "google.protobuf.Timestamp"
_SCALARS: Final = {
    FieldDescriptor.TYPE_STRING: "str",
    FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_INT32: "int",
}


class Refused(Exception):
    """The fast path does not answer for this value: ``json_format`` decides."""


def _refuse() -> NoReturn:
    raise Refused


def _finite(value: Any) -> Any:
    """``value``, or :class:`Refused` if it holds a NaN or an infinity (``MessageToDict``
    raises for those)."""
    c = value.__class__
    if c is float:
        if not math.isfinite(value):
            raise Refused
    elif c is dict:
        for item in value.values():
            if item.__class__ in _CONTAINERS:
                _finite(item)
    elif c is list:
        for item in value:
            if item.__class__ in _CONTAINERS:
                _finite(item)
    return value


_CONTAINERS: Final = (float, dict, list)


def _struct_of(s: Any) -> dict[str, Any]:
    return _finite(_from_struct(s))  # type: ignore[no-any-return]


def _struct_fill(s: Any, value: Any) -> None:
    if value.__class__ is not dict:
        raise Refused
    _finite(value)
    s.SetInParent()
    _struct_into(s, value)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("utf-8")


def _unb64(value: Any) -> bytes:
    # json_format's reading: either alphabet, padding optional.
    if value.__class__ is not str:
        raise Refused
    encoded = value.encode("utf-8")
    return base64.urlsafe_b64decode(encoded + b"=" * (-len(encoded) % 4))


# The codec's form of a timestamp (UTC, ``Z``, 0-9 fraction digits); another one
# goes to ``Timestamp.FromJsonString`` (~5x slower: ``strptime``).
_UTC: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z"
)
_EPOCH_DAY: Final = date(1970, 1, 1).toordinal()


def _timestamp_fill(ts: Any, value: Any) -> None:
    if value.__class__ is not str:
        raise Refused
    ts.SetInParent()
    found = _UTC.fullmatch(value)
    if found is not None:
        y, mo, d, h, mi, s, fraction = found.groups()
        try:
            day = date(int(y), int(mo), int(d)).toordinal() - _EPOCH_DAY
        except ValueError:  # no such day: FromJsonString words it
            day = None
        if day is not None and int(h) < 24 and int(mi) < 60 and int(s) < 60:
            ts.seconds = day * 86400 + int(h) * 3600 + int(mi) * 60 + int(s)
            ts.nanos = int(fraction.ljust(9, "0")) if fraction else 0
            return
    ts.FromJsonString(value)


class ProtoJSON:
    """The generated ProtoJSON functions of every message of ``file`` (a proto file's
    descriptor); :exc:`TypeError` for a field kind they do not cover."""

    def __init__(self, file: FileDescriptor) -> None:
        self._ns: dict[str, Any] = {
            "_Refused": Refused,
            "_refuse": _refuse,
            "_struct_of": _struct_of,
            "_struct_fill": _struct_fill,
            "_b64": _b64,
            "_unb64": _unb64,
            "_timestamp_fill": _timestamp_fill,
        }
        self._to: dict[Descriptor, Callable[[Any], dict[str, Any]]] = {}
        self._fill: dict[Descriptor, Callable[[Any, Any], None]] = {}
        source: list[str] = []
        for desc in file.message_types_by_name.values():
            source += _to_dict_source(desc, self._ns) + _fill_source(desc, self._ns)
        exec(compile("\n".join(source), f"<protojson {file.name}>", "exec"), self._ns)
        for desc in file.message_types_by_name.values():
            self._to[desc] = self._ns[f"_d_{desc.name}"]
            self._fill[desc] = self._ns[f"_f_{desc.name}"]

    def to_dict(self, message: Any) -> dict[str, Any]:
        """``json_format.MessageToDict(message)``, integral ``Struct`` numbers as ``int``;
        :class:`Refused` (or another exception) when ``json_format`` must decide."""
        return self._to[message.DESCRIPTOR](message)

    def from_dict(self, value: Any, cls: Any) -> Any:
        """``json_format.ParseDict(value, cls())``; :class:`Refused` (or another exception)
        when ``json_format`` must decide."""
        message = cls()
        if value.__class__ is not dict:
            raise Refused
        self._fill[message.DESCRIPTOR](message, value)
        return message


def _kind(fd: FieldDescriptor) -> str:
    """What the generated code does with ``fd``: a scalar's Python type, ``enum``, ``bytes``,
    ``struct``, ``timestamp``, ``message``, ``map`` (of strings) or ``map_message``."""
    if fd.type in _SCALARS:
        return _SCALARS[fd.type]
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return "enum"
    if fd.type == FieldDescriptor.TYPE_BYTES:
        return "bytes"
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        sub = fd.message_type
        if sub.GetOptions().map_entry:
            key, value = sub.fields_by_name["key"], sub.fields_by_name["value"]
            if key.type == FieldDescriptor.TYPE_STRING:
                if value.type == FieldDescriptor.TYPE_STRING:
                    return "map"
                if value.type == FieldDescriptor.TYPE_MESSAGE and _is_plain(value.message_type):
                    return "map_message"
        elif sub.full_name == _STRUCT:
            return "struct"
        elif sub.full_name == _TIMESTAMP:
            return "timestamp"
        elif _is_plain(sub):
            return "message"
    raise TypeError(f"{fd.full_name}: no fast ProtoJSON for this field")


def _is_plain(desc: Descriptor) -> bool:
    """A message of the file itself (not a well-known type, which has its own JSON form)."""
    return not desc.full_name.startswith("google.protobuf.")


def _repeated(fd: FieldDescriptor) -> bool:
    return fd.is_repeated and not (
        fd.message_type is not None and fd.message_type.GetOptions().map_entry
    )


def _to_dict_source(desc: Descriptor, ns: dict[str, Any]) -> list[str]:
    lines = [f"def _d_{desc.name}(p):", "    out = {}"]
    done: set[str] = set()
    for fd in sorted(desc.fields, key=lambda f: f.number):
        oneof = fd.containing_oneof
        if oneof is not None:
            if oneof.name not in done:  # one WhichOneof for all its members
                done.add(oneof.name)
                lines.append(f"    w = p.WhichOneof({oneof.name!r})")
                for i, member in enumerate(oneof.fields):
                    test = "if" if i == 0 else "elif"
                    value = _json_value(member, ns)
                    lines.append(f"    {test} w == {member.name!r}:")
                    lines.append(f"        x = p.{member.name}")
                    lines.append(f"        out[{member.json_name!r}] = {value}")
            continue
        name, key, kind = fd.name, fd.json_name, _kind(fd)
        if _repeated(fd):
            if kind == "str":
                lines.append(f"    if (x := p.{name}): out[{key!r}] = x[:]")
            elif kind == "message":
                sub = fd.message_type.name
                lines.append(f"    if (x := p.{name}): out[{key!r}] = [_d_{sub}(y) for y in x]")
            else:
                raise TypeError(f"{fd.full_name}: no fast ProtoJSON for a repeated {kind}")
        elif kind == "map":
            lines.append(f"    if (x := p.{name}): out[{key!r}] = dict(x.items())")
        elif kind == "map_message":
            sub = fd.message_type.fields_by_name["value"].message_type.name
            lines.append(
                f"    if (x := p.{name}): out[{key!r}] = {{k: _d_{sub}(y) for k, y in x.items()}}"
            )
        elif fd.type == FieldDescriptor.TYPE_MESSAGE:  # presence
            lines.append(f"    if p.HasField({name!r}):")
            lines.append(f"        x = p.{name}")
            lines.append(f"        out[{key!r}] = {_json_value(fd, ns)}")
        else:  # proto3 without presence: the default value is unset
            lines.append(f"    if (x := p.{name}): out[{key!r}] = {_json_value(fd, ns)}")
    lines += ["    return out", ""]
    return lines


def _json_value(fd: FieldDescriptor, ns: dict[str, Any]) -> str:
    """The expression of a singular field's JSON value ``x``."""
    kind = _kind(fd)
    if kind == "enum":
        table = f"_N_{fd.enum_type.name}"
        ns[table] = {v.number: v.name for v in fd.enum_type.values}
        return f"{table}.get(x, x)"  # a number the enum lacks: json_format prints it
    if kind == "bytes":
        return "_b64(x)"
    if kind == "struct":
        return "_struct_of(x)"
    if kind == "timestamp":
        return "x.ToJsonString()"
    if kind == "message":
        return f"_d_{fd.message_type.name}(x)"
    if kind in ("str", "int", "bool"):
        return "x"
    raise TypeError(f"{fd.full_name}: no fast ProtoJSON for a {kind} in a oneof")


def _fill_source(desc: Descriptor, ns: dict[str, Any]) -> list[str]:
    """``_f_<Name>(r, d)``: every member of ``d`` into the message ``r``.

    A key that is no field's JSON name is refused at once; a ``null`` member is
    skipped (``ParseDict`` clears the field). A string or enum field is set as it
    is: protobuf refuses every other JSON value there (an enum name by the table's
    ``KeyError``); an integer or boolean field takes exactly that class
    (``ParseDict`` also reads ``"1"`` and ``1.0``, and refuses ``true`` for an integer).
    """
    keys = f"_K_{desc.name}"
    ns[keys] = frozenset(fd.json_name for fd in desc.fields)
    lines = [f"def _f_{desc.name}(r, d):", f"    if not {keys}.issuperset(d): _refuse()"]
    for o in desc.oneofs:
        # Two members named, even one of them null: json_format decides.
        members = f"_O_{desc.name}_{o.name}"
        ns[members] = frozenset(fd.json_name for fd in o.fields)
        lines.append(f"    if len(d) > 1 and len({members}.intersection(d)) > 1: _refuse()")
    for fd in sorted(desc.fields, key=lambda f: f.number):
        name, key, kind = fd.name, fd.json_name, _kind(fd)
        lines.append(f"    if (v := d.get({key!r})) is not None:")
        body: list[str]
        if _repeated(fd):
            # A list, checked: extend() would take a string's characters, and a
            # loop over an empty dict or string nothing.
            if kind == "str":
                body = ["if v.__class__ is not list: _refuse()", f"r.{name}.extend(v)"]
            elif kind == "message":
                sub = fd.message_type.name
                body = [
                    "if v.__class__ is not list: _refuse()",
                    f"add = r.{name}.add",
                    "for y in v:",
                    f"    _f_{sub}(add(), y)",
                ]
            else:
                raise TypeError(f"{fd.full_name}: no fast ProtoJSON for a repeated {kind}")
        elif kind == "map":
            body = ["if v.__class__ is not dict: _refuse()", f"r.{name}.update(v)"]
        elif kind == "map_message":
            sub = fd.message_type.fields_by_name["value"].message_type.name
            body = [
                "if v.__class__ is not dict: _refuse()",
                f"c = r.{name}",
                "for k, y in v.items():",
                f"    _f_{sub}(c[k], y)",
            ]
        elif kind == "enum":
            table = f"_V_{fd.enum_type.name}"
            ns[table] = {v.name: v.number for v in fd.enum_type.values}
            body = [f"r.{name} = {table}[v]"]
        elif kind == "bytes":
            body = [f"r.{name} = _unb64(v)"]
        elif kind == "struct":
            body = [f"_struct_fill(r.{name}, v)"]
        elif kind == "timestamp":
            body = [f"_timestamp_fill(r.{name}, v)"]
        elif kind == "message":
            body = [
                "if v.__class__ is not dict: _refuse()",
                f"s = r.{name}",
                "s.SetInParent()",
                f"_f_{fd.message_type.name}(s, v)",
            ]
        elif kind == "str":
            body = [f"r.{name} = v"]
        else:  # int, bool
            body = [f"if v.__class__ is not {kind}: _refuse()", f"r.{name} = v"]
        lines += [f"        {line}" for line in body]
    lines.append("")
    return lines
