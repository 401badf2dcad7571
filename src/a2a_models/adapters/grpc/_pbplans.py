"""Whole-message plans of the optional compiled accelerator (``_pbwire.MsgPlan``).

For each message class, the plan is read from the decode expressions that
``_convert`` generated its ``_from_<Class>`` function from (one expression per
field, in ``_NS["_SOURCES"]``): a field kind (string, enum, nested message,
repeated message or string, Struct, Timestamp, integer, boolean, parts) and
what an unset value reads as. A class with any other expression keeps its pure
function. ``from_proto`` then reads the message's bytes in C and, when the plan
gives up (an invalid message, anything unusual), runs the generated function.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import attrs

from ... import models as m

__all__ = ["install_plans"]

_NAME = r"(?P<n>\w+)"
_PATTERNS: list[tuple[str, str, str]] = [
    # (kind, mode, expression): {n} = the attribute, {E} = an enum, {N} = a message
    ("STRUCT", "PRESENCE", r"\(_from_struct\(p\.{n}\) if p\.HasField\('{n}'\) else None\)"),
    ("TS", "REQUIRED", r"_from_ts\(_req_msg\(p, '{n}'\)\.{n}\)"),
    ("TS", "PRESENCE", r"\(_from_ts\(p\.{n}\) if p\.HasField\('{n}'\) else None\)"),
    (
        "ENUM",
        "OPT",
        r"\(\(_E_(?P<E>\w+)\.get\(x\) or _e_(?P=E)\(x\)\) if \(x := p\.{n}\) else None\)",
    ),
    ("ENUM", "PLAIN", r"\(_E_(?P<E>\w+)\.get\(x := p\.{n}\) or _e_(?P=E)\(x\)\)"),
    ("LIST_STR", "PLAIN", r"\(tuple\(x\[:\]\) if \(x := p\.{n}\) else \(\)\)"),
    ("LIST_STR", "REQUIRED", r"\(tuple\(x\[:\]\) if \(x := p\.{n}\) else _nonempty\(\(\)\)\)"),
    ("LIST_MSG", "PLAIN", r"\(_plist\(_from_(?P<N>\w+), x\) if \(x := p\.{n}\) else \(\)\)"),
    (
        "LIST_MSG",
        "REQUIRED",
        r"\(_plist\(_from_(?P<N>\w+), x\) if \(x := p\.{n}\) else _nonempty\(\(\)\)\)",
    ),
    ("MSG", "REQUIRED", r"_from_(?P<N>\w+)\(_req_msg\(p, '{n}'\)\.{n}\)"),
    ("MSG", "PRESENCE", r"\(_from_(?P<N>\w+)\(p\.{n}\) if p\.HasField\('{n}'\) else None\)"),
    ("SCALAR", "PRESENCE", r"\(p\.{n} if p\.HasField\('{n}'\) else None\)"),
    ("STR", "REQUIRED", r"\(x if \(x := p\.{n}\) else _req_str\(x\)\)"),
    ("SCALAR", "OPT", r"\(p\.{n} or None\)"),
    ("SCALAR", "PLAIN", r"p\.{n}"),
]
# google.protobuf FieldDescriptor types
_STRING, _BOOL, _INT32, _INT64, _UINT32, _UINT64 = 9, 8, 5, 3, 13, 4


class _Unplannable(Exception):
    pass


def install_plans(ns: dict[str, Any], decoders: dict[Any, Any], native: Any, reverse: bool) -> None:
    """Put a plan-first decoder in ``decoders`` for every class that has a plan."""
    text, file, data = (_slots(c) for c in (m.TextPart, m.FilePart, m.DataPart))
    part_desc = ns["_P_Message"].DESCRIPTOR.fields_by_name["parts"].message_type
    native.set_part(
        m.TextPart,
        tuple(text[a] for a in ("text", "metadata", "filename", "media_type")),
        m.FilePart,
        tuple(file[a] for a in ("raw", "url", "metadata", "filename", "media_type")),
        m.DataPart,
        tuple(data[a] for a in ("data", "metadata", "filename", "media_type")),
        tuple(
            part_desc.fields_by_name[f].number
            for f in ("text", "raw", "url", "data", "metadata", "filename", "media_type")
        ),
    )
    native.set_map_order(reverse)
    plans: dict[str, Any] = ns.setdefault("_PLANS", {})  # (kept for the tests)
    for name in ns.get("_SOURCES", {}):
        plan = _plan(ns, native, name, plans)
        if plan is None:
            continue
        cls = ns[f"_C_{name}"]
        if decoders.get(cls) is ns[f"_from_{name}"]:
            decoders[cls] = _first(plan.loads, ns[f"_from_{name}"])


def _first(loads: Callable[[bytes], Any], pure: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def decode(p: Any) -> Any:
        out = loads(p.SerializeToString())
        return out if out is not None else pure(p)

    return decode


def _slots(cls: type[Any]) -> dict[str, Any]:
    out = {}
    for a in attrs.fields(cls):
        for klass in cls.__mro__:
            if a.name in klass.__dict__:
                out[a.name] = klass.__dict__[a.name]
                break
    return out


def _plan(ns: dict[str, Any], native: Any, name: str, plans: dict[str, Any]) -> Any:
    """The plan of ``name`` (None: it keeps its generated function)."""
    if name in plans:
        return plans[name]
    sources = ns.get("_SOURCES", {}).get(name)
    if sources is None:
        plans[name] = None
        return None
    cls = ns[f"_C_{name}"]
    plan = native.MsgPlan(cls)
    plans[name] = plan  # before its fields: a message may contain itself
    try:
        slots = _slots(cls)
        fields, tail = [], []
        for attr, expr, fd in sources:
            if fd is None:
                tail.append((slots[attr], ns[expr]))
                continue
            kind, mode, arg = _field(ns, native, attr, expr, fd, plans)
            fields.append((fd.number, kind, mode, slots[attr], arg))
        plan.setup(tuple(fields), tuple(tail))
    except (_Unplannable, TypeError, ValueError):
        plans[name] = None
    return plans[name]


def _field(
    ns: dict[str, Any], native: Any, attr: str, expr: str, fd: Any, plans: dict[str, Any]
) -> tuple[int, int, Any]:
    for kind, mode, pattern in _PATTERNS:
        match = re.fullmatch(pattern.format(n=re.escape(attr)), expr)
        if match is None:
            continue
        code = getattr(native, f"M_{mode}")
        groups = match.groupdict()
        if kind == "ENUM":
            return native.Q_ENUM, code, ns[f"_E_{groups['E']}"]
        if kind == "TS":
            return native.Q_TS, code, ns["_ts_of"]
        if kind == "STRUCT":
            return native.Q_STRUCT, code, None
        if kind == "LIST_STR":
            return native.Q_LIST_STR, code, None
        if kind in ("MSG", "LIST_MSG"):
            if kind == "LIST_MSG" and groups["N"] == "Part":
                return native.Q_LIST_PART, code, None
            nested = _plan(ns, native, groups["N"], plans)
            if nested is None:
                raise _Unplannable(f"{attr}: {groups['N']} has no plan")
            return getattr(native, f"Q_{kind}"), code, nested
        if kind == "STR":
            return native.Q_STR, code, None
        # A scalar: its protobuf type decides.
        if fd.type == _STRING:
            return native.Q_STR, code, None
        if fd.type == _BOOL:
            return native.Q_BOOL, code, None
        if fd.type in (_INT32, _INT64):
            return native.Q_INT, code, fd.type == _INT32
        raise _Unplannable(f"{attr}: protobuf type {fd.type}")
    raise _Unplannable(f"{attr}: {expr}")
