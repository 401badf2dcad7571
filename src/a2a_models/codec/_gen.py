"""Code generation of per-class structure (decode) and unstructure (encode) functions.

Each dialect describes its classes as tables of :class:`Field` (see
``_v10.py`` and the ``_v03`` package); this module turns every table into two plain Python
functions, compiled once, in one namespace per dialect so nested classes call
each other directly. That is what makes decoding only a few times slower than
``orjson.loads`` while checking every type strictly.

Errors travel as :class:`Fail` (decode) and :class:`Loss` (encode) carrying a
reversed path that each enclosing function extends; the public codec turns
them into :class:`~a2a_models.errors.DecodeError` / ``EncodeError``.

Where the time goes, and what the generated code does about it (numbers:
CPython 3.11, per operation; ``bench/codec.py`` measures the whole):

* Building a frozen slotted instance: ``object.__new__`` plus one slot
  descriptor ``__set__`` call per attribute (~40 ns each) cost ~400 ns for a
  Message. A :func:`builder` twin is filled with plain attribute stores and
  then turned into the model class: ~100 ns.
* Arrays of objects: a list comprehension or ``tuple(map(...))`` costs
  ~120 ns before the first item; arrays of one or two items (most ``parts``)
  are unrolled. Failing items are found again by the slow helpers, so error
  paths keep their index at no cost to valid input.
* Enum names are looked up in a str-keyed dict (``Enum.__hash__`` is Python
  code); strings, the commonest members, pay one class check.
* Encoding: the leading always-written members form one dict literal, and
  plain text/data parts are encoded inline in the list code (the dialect
  provides the expression, see ``_v10.inline_part_encoder``), saving a call
  per part. What remains is ~50 ns per dict allocation and ~45 ns per Python
  call per object.
"""

from __future__ import annotations

import binascii
import contextvars
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import attrs

from ..errors import InvalidModelError, quote_input
from ..models import Timestamp
from ..models.rules import (
    INT32_RANGE,
    api_key_location_problem,
    int32_problem,
    json_problem,
    must_not_be_empty,
    must_not_be_negative,
    non_negative_problem,
    validators_of,
)
from ..models.rules import api_key_location as api_key_location_rule

__all__ = [
    "LOSSY",
    "ClassSpec",
    "Fail",
    "Field",
    "Kind",
    "Loss",
    "Namespace",
    "compile_dialect",
    "resolve",
]

#: True while encoding/decoding with ``lossy=True``: what a dialect cannot
#: express is then dropped instead of raising.
LOSSY: contextvars.ContextVar[bool] = contextvars.ContextVar("a2a_models_lossy", default=False)

#: True while decoding Python values that did not come from the JSON parser
#: (``from_wire``, ``from_dict``): free-form members (metadata, data parts,
#: params) are then checked at every depth for what JSON cannot hold. Values
#: the parser produced need no such walk: JSON text cannot spell NaN, a
#: non-string key or a set.
CHECK_JSON: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "a2a_models_check_json", default=False
)


class Fail(Exception):
    """Internal decode failure; ``path`` holds segments innermost first."""

    def __init__(self, expected: str, *path: str | int) -> None:
        self.expected = expected
        self.path: list[str | int] = list(path)


class Loss(Exception):
    """Internal encode failure: a value the dialect cannot express."""

    def __init__(self, problem: str, *path: str | int) -> None:
        self.problem = problem
        self.path: list[str | int] = list(path)


def render_path(segments: list[str | int], root: str = "$") -> str:
    """``["parts", 2, "text"]`` (outermost first) -> ``$.parts[2].text``."""
    out = [root]
    for seg in segments:
        if isinstance(seg, int):
            out.append(f"[{seg}]")
        elif seg.isidentifier():
            out.append(f".{seg}")
        else:
            out.append(f"[{seg!r}]")
    return "".join(out)


def lose(problem: str, *path: str | int) -> None:
    """Report a value the dialect cannot express (raises unless lossy)."""
    if not LOSSY.get():
        raise Loss(problem, *path)


def type_name(value: Any) -> str:
    """JSON type name of a decoded value, for error messages."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# --------------------------------------------------------------------------- helpers
# Called from generated code; each raises Fail with a precise expectation.


def list_of(fn: Callable[[Any], Any], value: Any) -> tuple[Any, ...]:
    """Decode a JSON array with ``fn`` per item; the failing index joins the path."""
    if value.__class__ is not list:
        raise Fail(f"expected an array, got {type_name(value)}")
    try:
        return tuple([fn(item) for item in value])
    except Fail:
        # Re-run to find the index: free on the fast path, once on failure.
        for i, item in enumerate(value):
            try:
                fn(item)
            except Fail as exc:
                exc.path.append(i)
                raise
        raise


def str_list(value: Any) -> tuple[str, ...]:
    """Decode an array of strings."""
    if value.__class__ is not list:
        raise Fail(f"expected an array of strings, got {type_name(value)}")
    for i, item in enumerate(value):
        if item.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(item)}", i)
    return tuple(value)


def str_map(value: Any) -> dict[str, str]:
    """Decode an object of string values (proto ``map<string, string>``)."""
    if value.__class__ is not dict:
        raise Fail(f"expected an object of strings, got {type_name(value)}")
    for key, item in value.items():
        if item.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(item)}", key)
    return value


def map_of(fn: Callable[[Any], Any], value: Any) -> dict[str, Any]:
    """Decode an object whose values are decoded with ``fn``."""
    if value.__class__ is not dict:
        raise Fail(f"expected an object, got {type_name(value)}")
    out = {}
    for key, item in value.items():
        try:
            out[key] = fn(item)
        except Fail as exc:
            exc.path.append(key)
            raise
    return out


def struct(value: Any) -> dict[str, Any]:
    """A ``google.protobuf.Struct``: any JSON object, kept as is (checked when :data:`CHECK_JSON`)."""
    if value.__class__ is not dict:
        raise Fail(f"expected an object, got {type_name(value)}")
    if CHECK_JSON.get():
        problem = json_problem(value)
        if problem is not None:
            raise Fail(f"expected a JSON object: {problem}")
    return value


def json_any(value: Any) -> Any:
    """A ``google.protobuf.Value`` (a data part): kept as is, checked when :data:`CHECK_JSON`."""
    if CHECK_JSON.get():
        problem = json_problem(value)
        if problem is not None:
            raise Fail(f"expected a JSON value: {problem}")
    return value


_INT32 = INT32_RANGE
_QUOTED_INT = re.compile(r"-?[0-9]+\Z")


def int32(value: Any, quoted_ok: bool) -> int:
    """An int32; ProtoJSON dialects also accept a quoted integer."""
    if value.__class__ is not int:
        if quoted_ok and value.__class__ is str and _QUOTED_INT.match(value):
            value = int(value)
        elif value.__class__ is float and value.is_integer() and quoted_ok:
            value = int(value)
        else:
            raise Fail(f"expected an integer, got {type_name(value)}")
    if not _INT32[0] <= value <= _INT32[1]:  # the common case pays no call
        raise Fail(int32_problem(value) or "")
    return value  # type: ignore[no-any-return]


def non_negative_int32(value: Any, quoted_ok: bool) -> int:
    """An int32 that must not be negative (``historyLength``, ``pageSize``)."""
    number = int32(value, quoted_ok)
    if number < 0:
        raise Fail(non_negative_problem(number) or "")
    return number


def api_key_location(value: Any) -> str:
    """Where an API key travels: ``header``, ``query`` or ``cookie``."""
    if value.__class__ is not str:
        raise Fail(f"expected a string, got {type_name(value)}")
    problem = api_key_location_problem(value)
    if problem is not None:
        raise Fail(problem)
    return value


def boolean(value: Any) -> bool:
    """A JSON boolean (no truthiness: ``1`` is not ``true``)."""
    if value is not True and value is not False:
        raise Fail(f"expected a boolean, got {type_name(value)}")
    return value


def timestamp(value: Any) -> datetime:
    """RFC 3339 text -> aware UTC datetime (naive input is taken as UTC, as 0.3 sent it)."""
    if value.__class__ is not str:
        if isinstance(value, datetime):
            parsed = value
        else:
            raise Fail(f"expected an RFC 3339 timestamp string, got {type_name(value)}")
    else:
        if len(value) < 19 or value[10] not in "Tt ":
            raise Fail(
                "expected an RFC 3339 timestamp like 2025-01-31T12:00:00Z, "
                f"got {quote_input(value)}"
            )
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise Fail(
                "expected an RFC 3339 timestamp like 2025-01-31T12:00:00Z, "
                f"got {quote_input(value)}"
            ) from None
        nanos = _sub_microseconds(value)
        if nanos:
            parsed = Timestamp.with_nanoseconds(parsed, nanos)
    try:
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        if parsed.utcoffset():
            nanos = getattr(parsed, "nanosecond", 0)
            parsed = parsed.astimezone(UTC)
            return Timestamp.with_nanoseconds(parsed, nanos) if nanos else parsed
    except OverflowError:
        raise Fail(f"timestamp out of range once converted to UTC: {quote_input(value)}") from None
    return parsed


_FRACTION = re.compile(r"\.([0-9]{7,9})")


def _sub_microseconds(text: str) -> int:
    """The nanoseconds below the microsecond in ``text`` (0 when 6 digits or fewer)."""
    if len(text) <= 27:  # "YYYY-MM-DDTHH:MM:SS.ffffff" + zone: no room for more digits
        return 0
    match = _FRACTION.search(text, 19)
    if match is None:
        return 0
    return int(match.group(1)[6:].ljust(3, "0"))


def format_timestamp(value: datetime) -> str:
    """Aware datetime -> ``YYYY-MM-DDTHH:MM:SS[.fff|.ffffff|.fffffffff]Z`` (ProtoJSON form)."""
    nanos = 0 if value.__class__ is datetime else getattr(value, "nanosecond", 0)
    if value.utcoffset():
        value = value.astimezone(UTC)
    micro = value.microsecond
    if nanos:
        return f"{value.isoformat(timespec='microseconds')[:26]}{nanos:03d}Z"
    if value.__class__ is datetime:
        # isoformat() without arguments is the cheapest form (~35% less than
        # with timespec): YYYY-MM-DDTHH:MM:SS[.ffffff][+00:00], fixed positions.
        text = value.isoformat()
        if not micro:
            return text[:19] + "Z"
        return (text[:23] if micro % 1000 == 0 else text[:26]) + "Z"
    # isoformat is C code; it ends in "+00:00" for aware UTC values.
    if not micro:
        text = value.isoformat(timespec="seconds")
    elif micro % 1000 == 0:
        text = value.isoformat(timespec="milliseconds")
    else:
        text = value.isoformat(timespec="microseconds")
    return text[:-6] + "Z" if text.endswith("+00:00") else text + "Z"


_URLSAFE = bytes.maketrans(b"-_", b"+/")


def b64decode(value: Any) -> bytes:
    """Base64 (standard or URL-safe, padded or not) -> bytes."""
    if value.__class__ is not str:
        if isinstance(value, bytes):
            return value
        raise Fail(f"expected a base64 string, got {type_name(value)}")
    try:
        if "-" in value or "_" in value:
            raw = value.encode("ascii").translate(_URLSAFE)
            raw += b"=" * (-len(raw) % 4)
            return _a2b(raw, strict_mode=True)  # = base64.b64decode(raw, validate=True)
        # Standard alphabet: a2b_base64 takes ASCII text as is (and raises
        # ValueError for anything else, as encode("ascii") would).
        pad = -len(value) % 4
        return _a2b(value + "=" * pad if pad else value, strict_mode=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise Fail(f"expected base64 data, got {quote_input(value)}") from None


def b64encode(value: bytes) -> str:
    """bytes -> standard padded base64 text."""
    return _b2a(value, newline=False).decode("ascii")


_b2a = binascii.b2a_base64
_a2b = binascii.a2b_base64


def enum_decoder(table: dict[Any, Any], label: str) -> Callable[[Any], Any]:
    """A decoder mapping wire strings (and, for ProtoJSON, numbers) to enum members."""
    choices = ", ".join(k for k in table if isinstance(k, str))

    def decode(value: Any) -> Any:
        if value.__class__ is str or value.__class__ is int:
            member = table.get(value)
            if member is not None:
                return member
            raise Fail(f"expected a {label} ({choices}), got {quote_input(value)}")
        raise Fail(f"expected a {label} string, got {type_name(value)}")

    return decode


# --------------------------------------------------------------------------- kinds


@attrs.frozen
class Kind:
    """How one field's value is decoded and encoded.

    ``decode`` and ``encode`` are expression templates with ``{}`` standing
    for the value (``None`` = the value as is); ``is_list`` marks arrays, for
    which ``[]`` counts as unset in ProtoJSON.
    """

    decode: str | None = None
    encode: str | None = None
    is_list: bool = False
    #: Python source of the ProtoJSON default value ("''", "0", "False", "[]").
    empty: str | None = None
    #: An array of objects of this namespace name: the generator inlines the
    #: loop (``decode``/``encode`` are then only documentation).
    items: str | None = None
    #: An enum of this namespace name (``_E_<enum>``/``_EN_<enum>``/``_X_<enum>``).
    enum: str | None = None


@attrs.frozen
class Field:
    """One attribute of a class in one dialect.

    * ``wire`` - the JSON member name.
    * ``required`` - decoding fails when absent (REQUIRED fields).
    * ``always`` - encoding writes it even at its default value.
    * ``empty_is_unset`` - ProtoJSON rule: ``""``/``0``/``false`` mean absent.
    * ``unsupported`` - the dialect cannot express it: encoding a non-default
      value reports a loss, decoding ignores the member.
    * ``nonempty`` - ``""``/``[]`` is refused; not stated by the tables but
      filled in from the model's own rules by :func:`with_model_rules`.
    """

    attr: str
    wire: str
    kind: Kind = Kind()
    required: bool = False
    always: bool = False
    nonempty: bool = False
    empty_is_unset: bool = False
    unsupported: str | None = None


@attrs.frozen
class ClassSpec:
    """The fields of one class in one dialect, plus constant members (``kind``)."""

    cls: type[Any]
    fields: tuple[Field, ...]
    constants: tuple[tuple[str, str], ...] = ()
    #: name used in generated function names (distinct per dialect table entry)
    name: str = ""
    #: attributes the dialect does not carry directly, set to this value and
    #: filled in by a hand-written hook around the generated function
    placeholders: tuple[tuple[str, Any], ...] = ()
    #: other accepted member names (``message_id`` for ``messageId``: ProtoJSON
    #: parsers accept the proto field name too), as (alias, wire name) pairs
    aliases: tuple[tuple[str, str], ...] = ()


Namespace = dict[str, Any]


def with_model_rules(spec: ClassSpec) -> ClassSpec:
    """``spec`` with the value rules of each field taken from the model's validators.

    The models state each rule once (:mod:`a2a_models.models.rules`): what
    must not be empty, which counts must not be negative, where an API key
    may travel. The tables do not restate them; this fills them in, so the
    decoders built from the tables, which skip the validators, enforce the
    same rules by calling the same rule functions.
    """
    by_attr = {a.name: a for a in attrs.fields(spec.cls)}
    fields = []
    for f in spec.fields:
        if f.unsupported is not None:
            fields.append(f)
            continue
        a = by_attr[f.attr]
        kind = f.kind
        if must_not_be_negative(a) and kind.decode == _INT32_DECODE:
            kind = attrs.evolve(kind, decode="_nonneg_int32({})")
        elif api_key_location_rule in validators_of(a) and kind.decode == STR_DECODE:
            kind = attrs.evolve(kind, decode="_api_key_location({})")
        fields.append(attrs.evolve(f, kind=kind, nonempty=must_not_be_empty(a)))
    return attrs.evolve(spec, fields=tuple(fields))


_INT32_DECODE = "_int32({})"


def builder(cls: type[Any]) -> type[Any]:
    """A mutable twin of the frozen slotted ``cls`` for building instances fast.

    The twin is a subclass adding no slots and restoring ``object``'s
    ``__setattr__``, so its slots are filled with plain attribute stores (a few
    ns each, where calling a slot descriptor's ``__set__`` costs ~40 ns);
    assigning ``__class__ = cls`` afterwards (allowed: identical layout) leaves
    an ordinary ``cls`` instance. Like before, neither ``__init__`` nor the
    validators run: the codec has checked every value itself.

    (A sibling class would not do: CPython 3.11 refuses ``__class__``
    assignment between classes that both declare ``__weakref__`` in their
    slots. The twin is visible in ``cls.__subclasses__()``, named
    ``<cls>.<codec builder>``; no instance of it outlives a decode.)
    """
    twin = _BUILDERS.get(cls)
    if twin is not None:
        return twin
    twin = type(
        cls.__name__,
        (cls,),
        {
            "__slots__": (),
            "__module__": cls.__module__,
            "__qualname__": f"{cls.__qualname__}.<codec builder>",
            "__doc__": "Internal to a2a_models.codec: never escapes a decode.",
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
            "__init__": object.__init__,
        },
    )
    probe = twin()
    for a in attrs.fields(cls):
        setattr(probe, a.name, None)
    probe.__class__ = cls  # raises TypeError if the layouts ever differ
    _BUILDERS[cls] = twin
    return twin


_BUILDERS: dict[type[Any], type[Any]] = {}


def default_of(a: attrs.Attribute[Any]) -> tuple[str, Any]:
    """('value', v) or ('factory', f) for an attrs attribute default."""
    if isinstance(a.default, attrs.Factory):  # type: ignore[arg-type]
        return "factory", a.default.factory  # type: ignore[union-attr]
    return "value", a.default


def compile_class(spec: ClassSpec, ns: Namespace, *, strict: bool) -> None:
    """Generate ``_s_<name>`` and ``_u_<name>`` for ``spec`` into ``ns``."""
    cls = spec.cls
    name = spec.name or cls.__name__
    by_attr = {a.name: a for a in attrs.fields(cls)}
    ns[f"_C_{name}"] = cls
    ns[f"_T_{name}"] = builder(cls)
    _exec(_decode_source(spec, name, by_attr, ns, strict=strict), ns)
    _exec(_encode_source(spec, name, by_attr, ns), ns)


def _literal(value: Any) -> str | None:
    """Python source of a default that is cheaper as a constant than a global."""
    if value is None or value is True or value is False:
        return repr(value)
    if value.__class__ in (int, str) or (value.__class__ is tuple and not value):
        return repr(value)
    return None


def _default_source(name: str, key: str, how: str, default: Any, ns: Namespace) -> str:
    if how == "factory":
        ns[f"_F_{name}_{key}"] = default
        return f"_F_{name}_{key}()"
    literal = _literal(default)
    if literal is not None:
        return literal
    ns[f"_D_{name}_{key}"] = default
    return f"_D_{name}_{key}"


def _decode_source(
    spec: ClassSpec, name: str, by_attr: dict[str, Any], ns: Namespace, *, strict: bool
) -> str:
    """The structure function: checks every member, then fills a builder instance.

    The instance is a :func:`builder` twin whose slots are plain stores; the
    last step turns it into the model class. Nothing else differs from setting
    the slots of a fresh model instance one by one.
    """
    cls = spec.cls
    lines = [
        f"def _s_{name}(d):",
        "    if d.__class__ is not dict:",
        f"        raise _Fail('expected an object ({cls.__name__}), got ' + _type_name(d))",
        "    f = None",
        f"    o = _T_{name}()",
        "    try:",
    ]
    if spec.aliases:
        ns[f"_A_{name}"] = dict(spec.aliases)
        ns[f"_AK_{name}"] = frozenset(ns[f"_A_{name}"])
        # Rare (snake_case senders): one C-level disjointness test on the fast path.
        lines += [
            f"        if not _AK_{name}.isdisjoint(d):",
            f"            d = _unalias(d, _A_{name})",
        ]
    for wire, const in spec.constants:
        lines += [
            f"        f = {wire!r}",
            f"        v = d.get({wire!r})",
            f"        if v is not None and v != {const!r}:",
            f"            raise _Fail({'expected ' + repr(const) + ', got '!r} + _quote(v))",
        ]
    for i, fld in enumerate(spec.fields):
        if fld.unsupported is not None:
            continue
        how, default = default_of(by_attr[fld.attr])
        lines.append(f"        f = {fld.wire!r}")
        if fld.required or default is attrs.NOTHING:
            absent = f"raise _Fail({_MISSING[fld.nonempty and fld.kind.is_list]!r})"
            # Present on every valid input: d[k] is cheaper than d.get(k).
            lines += [
                "        try:",
                f"            v = d[{fld.wire!r}]",
                "        except KeyError:",
                "            v = None",
            ]
        else:
            absent = f"o.{fld.attr} = {_default_source(name, str(i), how, default, ns)}"
            lines.append(f"        v = d.get({fld.wire!r})")
        lines += _decode_field(fld, absent)
    if strict:
        known = {f.wire for f in spec.fields} | {w for w, _ in spec.constants}
        ns[f"_K_{name}"] = frozenset(known)
        lines += [
            "        for k in d:",
            f"            if k not in _K_{name}:",
            "                f = k",
            "                raise _Fail('unknown field (strict mode)')",
        ]
    lines.append("        f = None")
    # Fields the dialect cannot carry take their defaults.
    for fld in spec.fields:
        if fld.unsupported is None:
            continue
        how, default = default_of(by_attr[fld.attr])
        lines.append(f"        o.{fld.attr} = {_default_source(name, fld.attr, how, default, ns)}")
    placeholders = dict(spec.placeholders)
    for attr, value in placeholders.items():
        ns[f"_P_{name}_{attr}"] = value
        lines.append(f"        o.{attr} = _P_{name}_{attr}")
    missing = set(by_attr) - {f.attr for f in spec.fields} - set(placeholders)
    for attr in sorted(missing):
        how, default = default_of(by_attr[attr])
        if default is attrs.NOTHING:
            raise TypeError(f"{name}: dialect table lacks required attribute {attr}")
        lines.append(f"        o.{attr} = {_default_source(name, attr, how, default, ns)}")
    lines.append(f"        o.__class__ = _C_{name}")
    if needs_post_validation(cls):
        # Cross-field rules (exactly one flow, ...) live in the model's validators.
        lines.append("        _validate(o)")
    lines += [
        "        return o",
        "    except _Fail as e:",
        "        if f is not None:",
        "            e.path.append(f)",
        "        raise",
    ]
    return "\n".join(lines)


def _decode_field(fld: Field, absent: str) -> list[str]:
    """Lines decoding the member value ``v`` of ``fld`` into the builder ``o``.

    Same checks, in the same order, as the plain form::

        if v is None [or v == <empty>]:   # ProtoJSON: the default means unset
            <absent>
        else:
            x = <decode>(v); [if not x: fail 'must not be empty']; o.attr = x

    but with the common shapes (a string, a short array of objects, an enum
    name) tested first so they pay for one class check.
    """
    kind = fld.kind
    unset = fld.empty_is_unset and kind.empty is not None
    store = f"o.{fld.attr} = x"
    nonempty = ["if not x:", f"    raise _Fail({_EMPTY!r})"] if fld.nonempty else []

    def block(body: list[str], depth: int) -> list[str]:
        return [" " * (4 * depth) + line for line in body]

    if kind.items is not None:
        # An array of objects: short arrays inline, longer ones map() in C. On
        # failure the slow helper re-runs it to put the failing index in the path.
        fn = f"_s_{kind.items}"
        fast = [
            "n = len(v)",
            "try:",
            "    if n == 1:",
            f"        x = ({fn}(v[0]),)",
            "    elif n == 2:",
            f"        x = ({fn}(v[0]), {fn}(v[1]))",
            "    else:",
            f"        x = _tuple(_imap({fn}, v))",
            "except _Fail:",
            f"    _list({fn}, v)",
            "    raise",
        ]
        if unset:
            # [] is the unset default: an empty array takes the absent branch.
            return [
                *block(["if v.__class__ is list and v:"], 2),
                *block([*fast, *nonempty, store], 3),
                *block(["elif v is None or v == []:", f"    {absent}", "else:"], 2),
                *block([f"x = _list({fn}, v)", *nonempty, store], 3),
            ]
        return [
            *block(["if v.__class__ is list:"], 2),
            *block([*fast, *nonempty, store], 3),
            *block(["elif v is None:", f"    {absent}", "else:"], 2),
            *block([f"x = _list({fn}, v)", *nonempty, store], 3),
        ]
    if kind.decode == STR_DECODE:
        # A string: one class check on the common path. With ProtoJSON's
        # rule, "" is the unset default and takes the absent branch.
        present = ["x = v", *nonempty, store] if nonempty else [f"o.{fld.attr} = v"]
        return block(
            [
                "if v.__class__ is str and v:" if unset else "if v.__class__ is str:",
                *block(present, 1),
                f"elif v is None or v == {kind.empty}:" if unset else "elif v is None:",
                f"    {absent}",
                "else:",
                "    _bad_str(v)",
            ],
            2,
        )
    missing_test = "v is None"
    if unset:
        op = "is" if kind.empty == "False" else "=="
        missing_test = f"v is None or v {op} {kind.empty}"
    if kind.enum is not None:
        # Enum.__hash__ is Python code: look the wire string up directly;
        # everything else (numbers, members, errors) goes to the full decoder.
        decode = [
            f"x = _EN_{kind.enum}.get(v) if v.__class__ is str else None",
            "if x is None:",
            f"    x = _E_{kind.enum}(v)",
        ]
    elif kind.decode:
        decode = [f"x = {kind.decode.format('v')}"]
    else:
        decode = ["x = v"]
    return block(
        [f"if {missing_test}:", f"    {absent}", "else:", *block([*decode, *nonempty, store], 1)],
        2,
    )


_MISSING = {
    False: "required field missing",
    True: "required field missing or empty (a REQUIRED repeated field, spec §5.7)",
}
_EMPTY = "must not be empty (a REQUIRED field, spec §5.7)"

#: The decode template of a JSON string (the generator specialises it).
STR_DECODE = "({0} if {0}.__class__ is str else _bad_str({0}))"


def _encode_source(spec: ClassSpec, name: str, by_attr: dict[str, Any], ns: Namespace) -> str:
    """The unstructure function: a dict literal of the leading always-written
    members, then one test per optional member."""
    lines = [f"def _u_{name}(o):", "    f = None", "    try:"]
    literal: list[str] = []  # "'wire': expr" items of the leading dict literal
    started = False

    def value_lines(fld: Field, target: str, indent: str) -> list[str]:
        """Lines computing the encoded ``v`` into ``target``."""
        kind = fld.kind
        if kind.items is not None:
            # Short tuples inline, longer ones map() in C; on failure the slow
            # helper re-runs it to put the failing index in the path.
            fn = f"_u_{kind.items}"
            # A dialect may give an inline expression for the commonest item
            # shape (falling back to the function), saving a call per item.
            inline = ns.get(f"_INLINE_u_{kind.items}")
            if inline is not None:
                one, two, rest = inline("p"), inline("q"), f"[{inline('p')} for p in v]"
            else:
                one, two, rest = f"{fn}(p)", f"{fn}(q)", f"[*_imap({fn}, v)]"
            return [
                f"{indent}f = {fld.wire!r}",
                f"{indent}n = len(v)",
                f"{indent}try:",
                f"{indent}    if n == 1:",
                f"{indent}        p = v[0]",
                f"{indent}        {target} = [{one}]",
                f"{indent}    elif n == 2:",
                f"{indent}        p, q = v",
                f"{indent}        {target} = [{one}, {two}]",
                f"{indent}    else:",
                f"{indent}        {target} = {rest}",
                f"{indent}except _Loss:",
                f"{indent}    _ulist({fn}, v)",
                f"{indent}    raise",
            ]
        if kind.encode:
            return [f"{indent}f = {fld.wire!r}", f"{indent}{target} = {kind.encode.format('v')}"]
        return [f"{indent}{target} = v"]

    # Index of the last computed member (encode expression or array) of the
    # literal prefix: reads before it stay in order as temporaries.
    last_computed = -1
    for i, fld in enumerate(spec.fields):
        d = default_of(by_attr[fld.attr])[1]
        if fld.unsupported is not None or not (d is attrs.NOTHING or fld.always) or d is None:
            break
        if fld.kind.items is not None or fld.kind.encode:
            last_computed = i
    for i, fld in enumerate(spec.fields):
        how, default = default_of(by_attr[fld.attr])
        if fld.unsupported is not None:
            if not started:
                lines.append(f"        r = {{{', '.join(literal)}}}")
                started = True
            lines.append(f"        v = o.{fld.attr}")
            lines.append(f"        if {present_test(how, default)}:")
            lines.append(f"            f = {fld.attr!r}")
            lines.append(f"            _lose({fld.unsupported!r})")
            continue
        always = default is attrs.NOTHING or fld.always
        if always and default is not None and not started:
            # Leading always-written members: computed in order, one dict literal
            # (plain reads go in the literal once no computed member follows).
            if fld.kind.items is None and not fld.kind.encode and i > last_computed:
                literal.append(f"{fld.wire!r}: o.{fld.attr}")
                continue
            lines.append(f"        v = o.{fld.attr}")
            lines += value_lines(fld, f"t{i}", "        ")
            literal.append(f"{fld.wire!r}: t{i}")
            continue
        if not started:
            lines.append(f"        r = {{{', '.join(literal)}}}")
            started = True
        lines.append(f"        v = o.{fld.attr}")
        if always:
            if default is None:
                # Optional in the model, REQUIRED in this dialect.
                lines.append("        if v is None:")
                lines.append(f"            f = {fld.attr!r}")
                lines.append(f"            _lose('required by this dialect ({fld.wire})')")
                lines.append("        else:")
                lines += value_lines(fld, f"r[{fld.wire!r}]", "            ")
            else:
                lines += value_lines(fld, f"r[{fld.wire!r}]", "        ")
        else:
            lines.append(f"        if {present_test(how, default)}:")
            lines += value_lines(fld, f"r[{fld.wire!r}]", "            ")
    if not started:
        lines.append(f"        r = {{{', '.join(literal)}}}")
    for wire, const in spec.constants:
        lines.append(f"        r[{wire!r}] = {const!r}")
    lines += [
        "        return r",
        "    except _Loss as e:",
        "        if f is not None:",
        "            e.path.append(f)",
        "        raise",
    ]
    return "\n".join(lines)


def present_test(how: str, default: Any) -> str:
    if default is None:
        return "v is not None"
    if how == "factory" or default in ((), "", False, 0):
        return "v"
    return f"v != {default!r}"


def needs_post_validation(cls: type[Any]) -> bool:
    return bool(getattr(cls, "__a2a_cross_field__", False))


_MARK = "<a2a_models codec "


def _exec(source: str, ns: Namespace) -> None:
    code = compile(source, f"{_MARK}{source.split('(')[0][4:]}>", "exec")
    exec(code, ns)


def is_generated(fn: Any) -> bool:
    """Whether ``fn`` is a generated function (not a hand-written hook or a lazy stub)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(_MARK)


def validate_model(obj: Any) -> None:
    """Run the model's own validators (for cross-field rules) and map errors to Fail."""
    try:
        attrs.validate(obj)
    except InvalidModelError as exc:
        raise Fail(exc.problem) from None


def unalias(d: dict[str, Any], aliases: dict[str, str]) -> dict[str, Any]:
    """``d`` with alias member names replaced by their wire names.

    Both spellings of one field at once is ambiguous: refused.
    """
    out: dict[str, Any] = {}
    for key, value in d.items():
        wire = aliases.get(key, key)
        if wire in out:
            first = next(k for k in d if aliases.get(k, k) == wire)
            raise Fail(f"given twice, as {first!r} and as {key!r}", wire)
        out[wire] = value
    return out


def base_namespace(*, quoted_ints: bool) -> Namespace:
    """The helpers every generated function may call."""
    return {
        "_Fail": Fail,
        "_quote": quote_input,
        "_Loss": Loss,
        "_lose": lose,
        "_type_name": type_name,
        "_new": object.__new__,
        "_validate": validate_model,
        "_list": list_of,
        "_str_list": str_list,
        "_str_map": str_map,
        "_map": map_of,
        "_struct": struct,
        "_obj": struct,
        "_json_any": json_any,
        "_int32": (lambda v: int32(v, True)) if quoted_ints else (lambda v: int32(v, False)),
        "_bool": boolean,
        "_ts": timestamp,
        "_fmt_ts": format_timestamp,
        "_unalias": unalias,
        "_nonneg_int32": (lambda v: non_negative_int32(v, True))
        if quoted_ints
        else (lambda v: non_negative_int32(v, False)),
        "_api_key_location": api_key_location,
        "_b64d": b64decode,
        "_b64e": b64encode,
        "_tuple": tuple,
        "_listify": list,
        "_imap": map,
    }


def compile_dialect(specs: list[ClassSpec], ns: Namespace, *, strict: bool) -> Namespace:
    """Install every spec's functions into ``ns``, each compiled on its first call.

    A dialect has ~40 classes; a program usually needs a few. Each class gets
    a stub ``_s_<name>``/``_u_<name>`` pair that compiles the class's real
    functions, puts them in ``ns`` (where the generated callers look them up
    on every call, so the steady state never sees a stub) and calls through.
    ``ns["_SPECS"]`` keeps the specs by name (for the accelerator's plans).
    """
    ns.setdefault("_SPECS", {}).update({spec.name or spec.cls.__name__: spec for spec in specs})
    for spec in specs:
        _install_lazy(spec, ns, strict)
    return ns


_BUILD_LOCK = threading.Lock()


def _install_lazy(spec: ClassSpec, ns: Namespace, strict: bool) -> None:
    name = spec.name or spec.cls.__name__
    s_key, u_key = f"_s_{name}", f"_u_{name}"
    built: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []

    def build() -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
        if not built:
            with _BUILD_LOCK:
                if not built:
                    current = ns.get(s_key), ns.get(u_key)
                    compile_class(spec, ns, strict=strict)
                    built.append((ns[s_key], ns[u_key]))
                    # A hand-written hook installed over the stub stays in place.
                    if current[0] is not stub_s:
                        ns[s_key] = current[0]
                    if current[1] is not stub_u:
                        ns[u_key] = current[1]
        return built[0]

    def stub_s(d: Any) -> Any:
        return build()[0](d)

    def stub_u(o: Any) -> Any:
        return build()[1](o)

    stub_s.a2a_build = stub_u.a2a_build = build  # type: ignore[attr-defined]
    ns[s_key], ns[u_key] = stub_s, stub_u


def resolve(fn: Any) -> Any:
    """The real function behind a lazy stub (compiling it now), else ``fn``."""
    build = getattr(fn, "a2a_build", None)
    if build is None:
        return fn
    s_fn, u_fn = build()
    return s_fn if fn.__name__ == "stub_s" else u_fn
