"""Direct conversion between the attrs models and the ``lf.a2a.v1`` protobuf messages.

Like the JSON codec (:mod:`a2a_models.codec`), every class gets two plain
functions generated once from a table, here the model's attrs fields matched
against the proto descriptor: ``_to_<Class>`` builds the protobuf message with
one constructor call and ``_from_<Class>`` fills a :func:`~a2a_models.codec.facts.builder`
twin of the model from the message's attributes. No JSON is produced on the way.

The rules are those of the 1.0 JSON codec (both are ProtoJSON's twins):

* proto3 fields without presence: ``""``/``0``/``false``/empty mean unset
  (``None`` or the model default); ``optional`` fields keep ``0``/``false``.
* REQUIRED fields must be present and, for strings and lists, non-empty,
  exactly as :data:`a2a_models.codec.facts.MUST_BE_PRESENT` and the field
  tables say; the failure is a :class:`~a2a_models.errors.DecodeError` with
  the path of the field.
* ``google.protobuf.Struct``/``Value`` hold JSON; their numbers are doubles,
  so an integer that a double cannot hold exactly raises
  :class:`~a2a_models.errors.EncodeError` instead of changing silently, and
  integral doubles come back as ``int``.
* Attributes that exist only in A2A 0.3 raise ``EncodeError`` when set.
"""

from __future__ import annotations

import calendar
import importlib
import os
import typing
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from math import copysign as _copysign
from typing import Any, TypeVar, overload

import attrs

from ... import models as m
from ..._state import TaskState
from ...codec import facts
from ...codec.facts import Fail, Loss, builder, render_path, unwrap_optional
from ...errors import DecodeError, EncodeError
from ...models.rules import api_key_location_problem
from ._pb import a2a_pb2 as pb

__all__ = ["PROTO_CLASSES", "from_proto", "proto_class", "to_proto"]

T = TypeVar("T")

Namespace = dict[str, Any]
_NS: Namespace = {}

_MESSAGES = pb.DESCRIPTOR.message_types_by_name
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_StructPB: Any = type(pb.Task().metadata)

# --------------------------------------------------------------------------- leaves


def _bad_int(n: int) -> None:
    raise Loss(
        f"integer {n} has no exact protobuf Struct number (a double): "
        "send it as a string or a float"
    )


_MAX_EXACT = 9007199254740992  # 2**53: every int up to it is an exact double


def _value_into(msg: Any, v: Any) -> None:
    """Fill a ``google.protobuf.Value`` with the JSON value ``v``."""
    c = v.__class__
    if c is str:
        msg.string_value = v
    elif c is bool:
        msg.bool_value = v
    elif c is int:
        msg.number_value = v if -_MAX_EXACT <= v <= _MAX_EXACT else _exact(v)
    elif c is float:
        msg.number_value = v
    elif v is None:
        msg.null_value = 0
    elif c is dict:
        s = msg.struct_value
        s.SetInParent()
        _struct_into(s, v)
    elif c is list or c is tuple:
        lv = msg.list_value
        lv.SetInParent()
        _list_into(lv.values, v)
    else:
        raise Loss(f"{c.__name__} is not a JSON value")


def _exact(n: int) -> int:
    """``n`` if a double holds it exactly, else a Loss."""
    try:
        exact = int(float(n)) == n
    except OverflowError:
        exact = False
    if not exact:
        _bad_int(n)
    return n


def _list_into(values: Any, items: Any) -> None:
    add = values.add
    for i, v in enumerate(items):
        # The scalars inline: one Python call fewer per value.
        c = v.__class__
        try:
            if c is str:
                add().string_value = v
            elif c is bool:
                add().bool_value = v
            elif (c is int and -_MAX_EXACT <= v <= _MAX_EXACT) or c is float:
                add().number_value = v
            elif v is None:
                add().null_value = 0
            else:
                _value_into(add(), v)
        except Loss as exc:
            exc.path.append(i)
            raise


def _struct_into(s: Any, d: dict[str, Any]) -> None:
    fields = s.fields
    for k, v in d.items():
        c = v.__class__
        try:
            if c is str:
                fields[k].string_value = v
            elif c is bool:
                fields[k].bool_value = v
            elif (c is int and -_MAX_EXACT <= v <= _MAX_EXACT) or c is float:
                fields[k].number_value = v
            elif v is None:
                fields[k].null_value = 0
            else:
                _value_into(fields[k], v)
        except Loss as exc:
            exc.path.append(k)
            raise


def _number(n: float) -> Any:
    # Integral doubles come back as int (JSON has one number type); -0.0 keeps its sign.
    return int(n) if n.is_integer() and (n or _copysign(1.0, n) > 0) else n


def _from_value(v: Any) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "number_value":
        return _number(v.number_value)
    if kind == "struct_value":
        return _from_struct(v.struct_value)
    if kind == "list_value":
        out: list[Any] = []
        append = out.append
        for i, x in enumerate(v.list_value.values):
            kind = x.WhichOneof("kind")
            if kind == "string_value":
                append(x.string_value)
            elif kind == "number_value":
                n = x.number_value
                append(int(n) if n.is_integer() and n else _number(n))
            else:
                try:
                    append(_from_value(x))
                except Fail as exc:
                    exc.path.append(i)
                    raise
        return out
    if kind == "bool_value":
        return v.bool_value
    if kind == "null_value":
        return None
    raise Fail("expected a google.protobuf.Value with a kind set")


def _from_struct(s: Any) -> dict[str, Any]:
    out = {}
    fields = s.fields
    for k in fields:
        x = fields[k]
        kind = x.WhichOneof("kind")
        if kind == "string_value":
            out[k] = x.string_value
        elif kind == "number_value":
            n = x.number_value
            out[k] = int(n) if n.is_integer() and n else _number(n)
        else:
            try:
                out[k] = _from_value(x)
            except Fail as exc:
                exc.path.append(k)
                raise
    return out


# The optional compiled Struct/Value reader and writer (docs/accelerator.md):
# the message's bytes <-> JSON values in C, ~10x faster than member by member.
# It gives up (None) on anything unusual; the pure functions above then decide.
_pbwire: Any = None
if os.environ.get("A2A_CODEC_PURE", "").strip().lower() not in ("1", "true", "yes"):
    try:
        _pbwire = importlib.import_module(f"{__package__}._pbwire")
    except ImportError:  # not built: the pure functions
        pass
    if getattr(_pbwire, "ABI", None) != 1:
        _pbwire = None


def _map_order() -> bool | None:
    """Whether a map's entries are on the wire in the reverse of its iteration order
    (the order the pure code returns); None: neither (reading stays pure)."""
    probe = _StructPB()
    for i in range(40):
        probe.fields[f"k{i}"].number_value = i
    wire = list(_pbwire.struct_loads(probe.SerializeToString(), False) or ())
    it = list(probe.fields)
    return False if wire == it else True if wire[::-1] == it else None


_REVERSE = _map_order() if _pbwire is not None else None
if _pbwire is not None:
    _pure_from_struct, _pure_from_value = _from_struct, _from_value
    _pure_struct_into, _pure_value_into = _struct_into, _value_into
    _struct_loads, _value_loads = _pbwire.struct_loads, _pbwire.value_loads
    _struct_dumps, _value_dumps = _pbwire.struct_dumps, _pbwire.value_dumps

    def _struct_into(s: Any, d: dict[str, Any]) -> None:
        data = _struct_dumps(d)
        if data is None:
            _pure_struct_into(s, d)
        else:
            s.MergeFromString(data)

    def _value_into(msg: Any, v: Any) -> None:
        data = _value_dumps(v)
        if data is None:
            _pure_value_into(msg, v)
        else:
            msg.MergeFromString(data)

    if _REVERSE is not None:

        def _from_struct(s: Any) -> dict[str, Any]:
            out = _struct_loads(s.SerializeToString(), _REVERSE)
            return out if out is not None else _pure_from_struct(s)

        def _from_value(v: Any) -> Any:
            out = _value_loads(v.SerializeToString(), _REVERSE)
            return out[0] if out is not None else _pure_from_value(v)


def _from_ts(ts: Any) -> datetime:
    return _ts_of(ts.seconds, ts.nanos)


def _ts_of(seconds: int, nanos: int) -> datetime:
    if not 0 <= nanos <= 999_999_999:
        raise Fail(f"expected nanos in 0..999999999, got {nanos}")
    try:
        dt = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    except OverflowError:
        raise Fail(f"timestamp out of range (years 1-9999): {seconds} seconds") from None
    below = nanos % 1000
    return m.Timestamp.with_nanoseconds(dt, below) if below else dt


def _nonneg(n: int) -> int:
    if n < 0:
        raise Fail(f"expected a non-negative integer, got {n}")
    return n


def _api_key_location(value: str) -> str:
    problem = api_key_location_problem(value)  # the models' rule, as the JSON codec checks it
    if problem is not None:
        raise Fail(problem)
    return value


def _plist(fn: Callable[[Any], Any], items: Any) -> tuple[Any, ...]:
    try:
        # A slice of a upb container is one C call; iterating it is one per item.
        return tuple(map(fn, items[:]))
    except Fail:
        for i, x in enumerate(items):
            try:
                fn(x)
            except Fail as exc:
                exc.path.append(i)
                raise
        raise


def _pmap(fn: Callable[[Any], Any], items: Any) -> dict[str, Any]:
    out = {}
    for k, x in items.items():
        try:
            out[k] = fn(x)
        except Fail as exc:
            exc.path.append(k)
            raise
    return out


def _enum_tables(py_enum: type[Any], proto_enum: Any) -> tuple[dict[str, int], dict[int, Any]]:
    to_num = {}
    from_num = {}
    for member in py_enum:
        number = proto_enum.values_by_name[member._value_].number
        to_num[member._value_] = number
        from_num[number] = member
        if not member:  # the decoders test ``table.get(n) or fail``
            raise TypeError(f"{py_enum.__name__}.{member.name} is falsy")
    return to_num, from_num


_NS.update(
    _Fail=Fail,
    _Loss=Loss,
    _from_struct=_from_struct,
    _from_value=_from_value,
    _from_ts=_from_ts,
    _ts_of=_ts_of,
    _nonneg=_nonneg,
    _api_key_location=_api_key_location,
    _plist=_plist,
    _pmap=_pmap,
)
for _py, _proto in ((TaskState, "TaskState"), (m.Role, "Role")):
    _to, _from = _enum_tables(_py, pb.DESCRIPTOR.enum_types_by_name[_proto])
    _NS[f"_X_{_proto}"], _NS[f"_E_{_proto}"] = _to, _from


def _enum_from(name: str) -> Callable[[int], Any]:
    table = _NS[f"_E_{name}"]

    def decode(number: int) -> Any:
        member = table.get(number)
        if member is None:
            raise Fail(f"expected a {name} enum number, got {number}")
        return member

    return decode


_NS["_e_TaskState"] = _enum_from("TaskState")
_NS["_e_Role"] = _enum_from("Role")


# --------------------------------------------------------------------------- generation

_FD = Any  # google.protobuf FieldDescriptor
_JSON_OBJECT_ATTRS = ("metadata", "params", "header")


def _field_sources(cls: type[Any], attr: attrs.Attribute[Any], tp: Any, fd: _FD, spec: Any) -> str:
    """The decode expression of field ``attr`` (reading the message ``p``)."""
    name = attr.name
    inner = unwrap_optional(tp)
    optional = inner is not tp
    presence = (cls, name) in facts.PRESENCE_TRACKED
    has = f"p.HasField({name!r})"
    origin = typing.get_origin(inner)
    args = typing.get_args(inner)
    required = spec.required
    nonempty = spec.nonempty
    if name in _JSON_OBJECT_ATTRS and fd.message_type is not None:
        return f"(_from_struct(p.{name}) if {has} else None)"
    if inner is datetime:
        if required:
            return f"_from_ts(_req_msg(p, {name!r}).{name})"
        return f"(_from_ts(p.{name}) if {has} else None)"
    if inner in (TaskState, m.Role):
        en = inner.__name__
        # Known numbers by a dict lookup; _e_ (a call) only to fail on the others.
        known = f"(_E_{en}.get(x) or _e_{en}(x))"
        if optional:
            return f"({known} if (x := p.{name}) else None)"
        return f"(_E_{en}.get(x := p.{name}) or _e_{en}(x))"
    if origin is tuple:
        item = args[0]
        # An empty upb container is cheap to test; tuple() of one is not (~1 us).
        empty = "_nonempty(())" if nonempty else "()"
        if item is str:
            return f"(tuple(x[:]) if (x := p.{name}) else {empty})"
        n = item.__name__
        return f"(_plist(_from_{n}, x) if (x := p.{name}) else {empty})"
    if origin is dict:
        value = args[1]
        if value is str:
            return f"(dict(x) if (x := p.{name}) else {{}})"
        n = value.__name__
        return f"(_pmap(_from_{n}, x) if (x := p.{name}) else {{}})"
    if attrs.has(inner):
        n = inner.__name__
        if required:
            return f"_from_{n}(_req_msg(p, {name!r}).{name})"
        return f"(_from_{n}(p.{name}) if {has} else None)"
    if inner is str:
        if (cls, name) == (m.APIKeySecurityScheme, "location"):
            return f"_api_key_location(_req_str(p.{name}))"
        if presence:
            return f"(p.{name} if {has} else None)"
        if required and nonempty:
            return f"(x if (x := p.{name}) else _req_str(x))"
        if optional:
            return f"(p.{name} or None)"
        return f"p.{name}"
    if inner is int:
        nonneg = (spec.kind.decode or "").startswith("_nonneg")  # non-negative int32
        dec = f"_nonneg(p.{name})" if nonneg else f"p.{name}"
        if presence:
            return f"({dec} if {has} else None)"
        if optional:
            return f"({dec} or None)"
        return dec
    if inner is bool:
        if presence:
            return f"(p.{name} if {has} else None)"
        return f"p.{name}"
    raise TypeError(f"{cls.__name__}.{name}: no protobuf conversion for {tp!r}")


def _fill_lines(cls: type[Any], attr: attrs.Attribute[Any], tp: Any, fd: _FD) -> list[str]:
    """Lines (inside the ``try`` of ``_fill_<Class>(r, o)``) setting field ``attr`` of ``r``.

    Only values that differ from the proto default are written: setting an
    attribute of a upb message costs far less than passing it to the
    constructor, and skipping defaults costs nothing at all.
    """
    name = attr.name
    inner = unwrap_optional(tp)
    optional = inner is not tp
    presence = (cls, name) in facts.PRESENCE_TRACKED
    origin = typing.get_origin(inner)
    args = typing.get_args(inner)

    def when(test: str, *body: str, located: bool = False) -> list[str]:
        # ``located``: the body may raise Loss, so ``f`` first names the field for its path.
        lines = [f"        v = o.{name}", f"        if {test}:"]
        if located:
            lines.append(f"            f = {name!r}")
        return lines + [f"            {line}" for line in body]

    if name in _JSON_OBJECT_ATTRS and fd.message_type is not None:
        return when(
            "v is not None", f"s = r.{name}", "s.SetInParent()", "_struct_into(s, v)", located=True
        )
    if inner is datetime:
        return when("v is not None", f"_fill_ts(r.{name}, v)")
    if inner in (TaskState, m.Role):
        test = "v is not None and v._value_" if optional else "True"
        return when(test, f"r.{name} = _X_{inner.__name__}[v._value_]")
    if origin is tuple:
        item = args[0]
        if item is str:
            return when("v", f"r.{name}.extend(v)")
        return when("v", f"c = r.{name}", f"_fill_list(_fill_{item.__name__}, c, v)", located=True)
    if origin is dict:
        value = args[1]
        if value is str:
            return when("v", f"r.{name}.update(v)")
        return when("v", f"_fill_map(_fill_{value.__name__}, r.{name}, v)", located=True)
    if attrs.has(inner):
        fill = f"_fill_{inner.__name__}(s, v)"
        return when("v is not None", f"s = r.{name}", "s.SetInParent()", fill, located=True)
    if inner in (str, int, bool):
        return when("v is not None" if presence else "v", f"r.{name} = v")
    raise TypeError(f"{cls.__name__}.{name}: no protobuf conversion for {tp!r}")


def _fill_list(fill: Callable[[Any, Any], None], container: Any, items: Any) -> None:
    add = container.add
    try:
        for x in items:
            fill(add(), x)
    except Loss as exc:
        exc.path.append(len(container) - 1)
        raise


def _fill_map(fill: Callable[[Any, Any], None], container: Any, items: dict[str, Any]) -> None:
    for k, x in items.items():
        try:
            fill(container[k], x)
        except Loss as exc:
            exc.path.append(k)
            raise


def _fill_ts(ts: Any, dt: datetime) -> None:
    ts.seconds = calendar.timegm(dt.utctimetuple())
    ts.nanos = dt.microsecond * 1000 + getattr(dt, "nanosecond", 0)
    ts.SetInParent()


def _req_str(value: str) -> str:
    if not value:
        raise Fail("required field missing")
    return value


def _req_msg(p: Any, name: str) -> Any:
    if not p.HasField(name):
        raise Fail("required field missing")
    return p


def _nonempty(items: tuple[Any, ...]) -> tuple[Any, ...]:
    if not items:
        raise Fail("required field missing")
    return items


_NS.update(
    _req_str=_req_str,
    _req_msg=_req_msg,
    _nonempty=_nonempty,
    _struct_into=_struct_into,
    _fill_list=_fill_list,
    _fill_map=_fill_map,
    _fill_ts=_fill_ts,
)


def _compile_class(cls: type[Any], spec: Any) -> None:
    name = cls.__name__
    desc = _MESSAGES[name]
    proto_cls = _proto_class(name)
    hints = typing.get_type_hints(cls)
    specs = {f.attr: f for f in spec.fields}
    _NS[f"_P_{name}"] = proto_cls
    _NS[f"_C_{name}"] = cls
    _NS[f"_T_{name}"] = builder(cls)
    fills: list[str] = []
    dec: list[str] = []
    unsupported: list[tuple[str, str, Any]] = []
    covered = set()
    # (attribute, decode expression, field): what _pbplans reads the message plans from.
    sources: list[tuple[str, str, Any]] = _NS.setdefault("_SOURCES", {}).setdefault(name, [])
    for a in attrs.fields(cls):
        fd = desc.fields_by_name.get(a.name)
        fspec = specs.get(a.name)
        if fd is None:
            problem = facts.ONLY_IN_V03.get((cls, a.name))
            if problem is None:
                raise TypeError(f"{name}.{a.name} has no field in lf.a2a.v1.{name}")
            default = a.default.factory() if isinstance(a.default, attrs.Factory) else a.default  # type: ignore[arg-type]
            _NS[f"_D_{name}_{a.name}"] = default
            sources.append((a.name, f"_D_{name}_{a.name}", None))
            dec.append(f"        o.{a.name} = _D_{name}_{a.name}")
            if problem:
                unsupported.append((a.name, problem, default))
            continue
        assert fspec is not None
        covered.add(a.name)
        d = _field_sources(cls, a, hints[a.name], fd, fspec)
        sources.append((a.name, d, fd))
        fills += _fill_lines(cls, a, hints[a.name], fd)
        dec += [f"        f = {a.name!r}", f"        o.{a.name} = {d}"]
    missing = set(desc.fields_by_name) - covered
    if missing:
        raise TypeError(f"lf.a2a.v1.{name} fields without a model attribute: {sorted(missing)}")
    enc_lines = [f"def _fill_{name}(r, o):", "    f = None", "    try:"]
    for attr_name, problem, _default in unsupported:
        enc_lines += [
            f"        if o.{attr_name} != _D_{name}_{attr_name}:",
            f"            raise _Loss({problem!r}, {attr_name!r})",
        ]
    enc_lines += fills or ["        pass"]
    enc_lines += [
        "    except _Loss as exc:",
        "        if f is not None:",
        "            exc.path.append(f)",
        "        raise",
        "",
        f"def _to_{name}(o):",
        f"    r = _P_{name}()",
        f"    _fill_{name}(r, o)",
        "    return r",
    ]
    dec_lines = [
        f"def _from_{name}(p):",
        "    f = None",
        f"    o = _T_{name}()",
        "    try:",
        *dec,
        "    except _Fail as exc:",
        "        exc.path.append(f)",
        "        raise",
        f"    o.__class__ = _C_{name}",
        "    return o",
    ]
    _exec("\n".join(enc_lines), name)
    _exec("\n".join(dec_lines), name)


def _exec(source: str, name: str) -> None:
    code = compile(source, f"<a2a_models.adapters.grpc {name}>", "exec")
    exec(code, _NS)


def _proto_class(name: str) -> Any:
    return getattr(pb, name)


# --------------------------------------------------------------------------- oneofs


def _install_oneofs() -> None:
    ns = _NS
    P = pb
    TextPart, FilePart, DataPart = m.TextPart, m.FilePart, m.DataPart
    TextB, FileB, DataB = builder(TextPart), builder(FilePart), builder(DataPart)

    def fill_part(r: Any, x: Any) -> None:
        c = x.__class__
        if c is TextPart or isinstance(x, TextPart):
            r.text = x.text
        elif c is DataPart or isinstance(x, DataPart):
            try:
                _value_into(r.data, x.data)
            except Loss as exc:
                exc.path.append("data")
                raise
        elif c is FilePart or isinstance(x, FilePart):
            if x.raw is not None:
                r.raw = x.raw
            else:
                r.url = x.url
        else:
            raise Loss(f"unknown Part subclass {type(x).__name__}")
        v = x.filename
        if v:
            r.filename = v
        v = x.media_type
        if v:
            r.media_type = v
        v = x.metadata
        if v is not None:
            s = r.metadata
            s.SetInParent()
            try:
                _struct_into(s, v)
            except Loss as exc:
                exc.path.append("metadata")
                raise

    def from_part(p: Any) -> m.Part:
        which = p.WhichOneof("content")
        o: Any
        if which == "text":
            o = TextB()
            o.text = p.text
            cls: type[Any] = TextPart
        elif which == "data":
            o = DataB()
            try:
                o.data = _from_value(p.data)
            except Fail as exc:
                exc.path.append("data")
                raise
            cls = DataPart
        elif which == "raw":
            o = FileB()
            o.raw = p.raw
            o.url = None
            cls = FilePart
        elif which == "url":
            o = FileB()
            o.raw = None
            o.url = p.url
            cls = FilePart
        else:
            raise Fail("expected exactly one of text, raw, url, data")
        if p.HasField("metadata"):
            try:
                o.metadata = _from_struct(p.metadata)
            except Fail as exc:
                exc.path.append("metadata")
                raise
        else:
            o.metadata = None
        o.filename = p.filename or None
        o.media_type = p.media_type or None
        o.__class__ = cls
        return o  # type: ignore[no-any-return]

    ns["_fill_Part"], ns["_from_Part"] = fill_part, from_part

    schemes = {
        m.APIKeySecurityScheme: "api_key_security_scheme",
        m.HTTPAuthSecurityScheme: "http_auth_security_scheme",
        m.OAuth2SecurityScheme: "oauth2_security_scheme",
        m.OpenIdConnectSecurityScheme: "open_id_connect_security_scheme",
        m.MutualTlsSecurityScheme: "mtls_security_scheme",
    }
    _install_union(
        "SecurityScheme",
        P.SecurityScheme,
        "scheme",
        schemes,
        refuse=lambda x: f"unknown SecurityScheme subclass {type(x).__name__}",
    )

    flows = facts.OAUTH_FLOW_CLASSES  # (the proto's oneof fields are the attribute names)
    FlowsB = builder(m.OAuthFlows)

    def fill_flows(r: Any, x: m.OAuthFlows) -> None:
        present = [(a, getattr(x, a)) for a in flows if getattr(x, a) is not None]
        if len(present) != 1:
            raise Loss("A2A 1.0 needs exactly one OAuth flow per scheme")
        attr, value = present[0]
        sub = getattr(r, attr)
        sub.SetInParent()
        try:
            ns[f"_fill_{flows[attr]}"](sub, value)
        except Loss as exc:
            exc.path.append(attr)
            raise

    def from_flows(p: Any) -> m.OAuthFlows:
        which = p.WhichOneof("flow")
        if which is None:
            raise Fail(f"expected exactly one of {', '.join(flows)}")
        o: Any = FlowsB()
        for attr in flows:
            setattr(o, attr, None)
        try:
            setattr(o, which, ns[f"_from_{flows[which]}"](getattr(p, which)))
        except Fail as exc:
            exc.path.append(which)
            raise
        o.__class__ = m.OAuthFlows
        return o  # type: ignore[no-any-return]

    ns["_fill_OAuthFlows"], ns["_from_OAuthFlows"] = fill_flows, from_flows

    ReqB = builder(m.SecurityRequirement)

    def fill_requirement(r: Any, x: m.SecurityRequirement) -> None:
        schemes_map = r.schemes
        for k, scopes in x.schemes.items():
            entry = schemes_map[k]
            entry.SetInParent()
            if scopes:
                entry.list.extend(scopes)

    def from_requirement(p: Any) -> m.SecurityRequirement:
        o: Any = ReqB()
        o.schemes = {k: tuple(v.list) for k, v in p.schemes.items()}
        o.__class__ = m.SecurityRequirement
        return o  # type: ignore[no-any-return]

    ns["_fill_SecurityRequirement"], ns["_from_SecurityRequirement"] = (
        fill_requirement,
        from_requirement,
    )

    for hooked in ("Part", "OAuthFlows", "SecurityRequirement"):
        ns[f"_to_{hooked}"] = _to_via_fill(getattr(P, hooked), ns[f"_fill_{hooked}"])

    stream_fields = {
        m.Task: "task",
        m.Message: "message",
        m.TaskStatusUpdateEvent: "status_update",
        m.TaskArtifactUpdateEvent: "artifact_update",
    }
    for union, proto_name, oneof, keys in (
        ("StreamResponse", "StreamResponse", "payload", stream_fields),
        (
            "SendMessageResponse",
            "SendMessageResponse",
            "payload",
            {m.Task: "task", m.Message: "message"},
        ),
    ):
        _install_union(union, getattr(P, proto_name), oneof, keys)


def _install_union(
    name: str,
    proto_cls: Any,
    oneof: str,
    keys: dict[type[Any], str],
    *,
    refuse: Callable[[Any], str] | None = None,
) -> None:
    """Install ``_fill_``/``_from_``/``_to_<name>`` for a model union carried as the
    protobuf oneof ``oneof``: ``keys`` maps each member class to its oneof field.

    ``refuse(x)`` words the encode error for a value of no member class (default:
    "<name> cannot hold a <class>").
    """
    ns = _NS
    by_field = {f: c.__name__ for c, f in keys.items()}
    fillers = {c: ns[f"_fill_{c.__name__}"] for c in keys}

    def fill_union(r: Any, x: Any) -> None:
        key = keys.get(type(x))
        if key is None:
            raise Loss(
                refuse(x) if refuse is not None else f"{name} cannot hold a {type(x).__name__}"
            )
        sub = getattr(r, key)
        sub.SetInParent()
        try:
            fillers[type(x)](sub, x)
        except Loss as exc:
            exc.path.append(key)
            raise

    def from_union(p: Any) -> Any:
        which = p.WhichOneof(oneof)
        if which is None:
            raise Fail(f"expected exactly one of {', '.join(by_field)}")
        try:
            return ns[f"_from_{by_field[which]}"](getattr(p, which))
        except Fail as exc:
            exc.path.append(which)
            raise

    ns[f"_fill_{name}"], ns[f"_from_{name}"] = fill_union, from_union
    ns[f"_to_{name}"] = _to_via_fill(proto_cls, fill_union)


def _to_via_fill(proto_cls: Any, fill: Callable[[Any, Any], None]) -> Callable[[Any], Any]:
    def to(x: Any) -> Any:
        r = proto_cls()
        fill(r, x)
        return r

    return to


def _build() -> None:
    specs = {s.cls: s for s in facts.specs("1.0")}
    # Every class's functions refer to others by global name: compile all,
    # then the oneof hooks (which look their members up at install time).
    for cls in facts.TABLE_CLASSES:
        if cls is m.OAuthFlows or cls is m.SecurityRequirement:
            continue
        spec = specs.get(cls)
        if spec is None:
            raise TypeError(f"no 1.0 field table for {cls.__name__}")
        _compile_class(cls, spec)
    _install_oneofs()


_build()

#: Model class (or union alias name) -> protobuf message class.
PROTO_CLASSES: dict[Any, Any] = {
    **{c: getattr(pb, c.__name__) for c in facts.TABLE_CLASSES if c.__name__ in _MESSAGES},
    m.Part: pb.Part,
    m.TextPart: pb.Part,
    m.FilePart: pb.Part,
    m.DataPart: pb.Part,
    m.SecurityScheme: pb.SecurityScheme,
    m.OAuthFlows: pb.OAuthFlows,
    m.SecurityRequirement: pb.SecurityRequirement,
    m.StreamResponse: pb.StreamResponse,
    m.SendMessageResponse: pb.SendMessageResponse,
}
_ENCODERS: dict[Any, Callable[[Any], Any]] = {}
_DECODERS: dict[Any, Callable[[Any], Any]] = {}
for _tp in PROTO_CLASSES:
    _n = getattr(_tp, "__name__", None)
    if _tp is m.StreamResponse:
        _n = "StreamResponse"
    elif _tp is m.SendMessageResponse:
        _n = "SendMessageResponse"
    elif _tp in (m.TextPart, m.FilePart, m.DataPart):
        _n = "Part"
    _ENCODERS[_tp] = _NS[f"_to_{_n}"]
    _DECODERS[_tp] = _NS[f"_from_{_n}"]


def _scheme_decoder(sub: type[Any]) -> Callable[[Any], Any]:
    def decode(p: Any) -> Any:
        scheme = _NS["_from_SecurityScheme"](p)
        if not isinstance(scheme, sub):
            raise Fail(f"expected a {sub.__name__}, got a {type(scheme).__name__}")
        return scheme

    return decode


# A concrete scheme's protobuf form is the SecurityScheme oneof holding it, as
# its 1.0 JSON form is ``{"apiKeySecurityScheme": {...}}``.
for _sub in (
    m.APIKeySecurityScheme,
    m.HTTPAuthSecurityScheme,
    m.OAuth2SecurityScheme,
    m.OpenIdConnectSecurityScheme,
    m.MutualTlsSecurityScheme,
):
    PROTO_CLASSES[_sub] = pb.SecurityScheme
    _ENCODERS[_sub] = _NS["_to_SecurityScheme"]
    _DECODERS[_sub] = _scheme_decoder(_sub)


if _pbwire is not None and _REVERSE is not None:
    from ._pbplans import install_plans

    install_plans(_NS, _DECODERS, _pbwire, _REVERSE)


def proto_class(tp: Any) -> Any:
    """The ``lf.a2a.v1`` protobuf message class of a model class or union alias."""
    try:
        return PROTO_CLASSES[tp]
    except (KeyError, TypeError):
        raise TypeError(f"{tp!r} has no lf.a2a.v1 protobuf message") from None


def to_proto(obj: Any, as_type: Any = None) -> Any:
    """Convert a model to its protobuf message (``as_type``: a union alias such as
    :data:`~a2a_models.StreamResponse` to get the wrapping message).

    Raises :class:`~a2a_models.errors.EncodeError` for what protobuf cannot carry.
    """
    tp = obj.__class__ if as_type is None else as_type
    fn = _ENCODERS.get(tp)
    if fn is None:
        raise TypeError(f"{getattr(tp, '__name__', tp)!r} has no lf.a2a.v1 protobuf message")
    try:
        return fn(obj)
    except Loss as exc:
        raise EncodeError(render_path(exc.path[::-1]), exc.problem) from None
    except (ValueError, TypeError) as exc:
        # protobuf refused a value the model holds (a lone surrogate in a string...)
        raise EncodeError("$", f"protobuf rejected a value: {exc}") from None


@overload
def from_proto(tp: type[T], msg: Any) -> T: ...
@overload
def from_proto(tp: Any, msg: Any) -> Any: ...
def from_proto(tp: Any, msg: Any) -> Any:
    """Convert a protobuf message to the model ``tp`` (a class or union alias).

    Raises :class:`~a2a_models.errors.DecodeError` (with the field's path) for a
    message that is not a valid ``tp``: REQUIRED fields unset, unknown enum numbers...
    """
    fn = _DECODERS.get(tp)
    if fn is None:
        raise TypeError(f"{getattr(tp, '__name__', tp)!r} has no lf.a2a.v1 protobuf message")
    try:
        return fn(msg)
    except Fail as exc:
        raise DecodeError(
            render_path([s for s in exc.path[::-1] if s is not None]), exc.expected
        ) from None
