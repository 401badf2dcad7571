"""The optional compiled accelerator: plans for ``_speedups`` built from the dialect tables.

``_speedups`` (C, built only on request: ``python scripts/build_accel.py`` or
``A2A_BUILD_ACCEL=1`` when building the wheel) knows nothing of A2A. This
module turns each generated class of a dialect into a *plan*: per member its
wire name, the slot it fills, its kind (string, enum, nested object, array of
objects, or a call of the same helper the generated code calls), its flags
(required, ProtoJSON unset rule, must not be empty) and its default, all read
from the same :class:`~a2a_models.codec._gen.ClassSpec` the pure functions
are generated from.

A plan runs the valid, common path in C and gives up on anything else, and
then calls the pure generated function on the same input: results and errors
are the pure codec's by construction. ``A2A_CODEC_PURE=1`` (read when a
dialect is first used) forces the pure path; without the built module the
pure path is all there is.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import threading
from typing import Any

import attrs

from .. import models as m
from . import _gen
from ._gen import ClassSpec, Namespace

_native: Any
try:  # (a compiled module mypy cannot see: imported by name)
    _native = importlib.import_module(f"{__package__}._speedups")
except ImportError:  # not built: the pure codec
    _native = None

__all__ = ["ABI", "PURE_ENV", "active", "decoder", "encoder", "reader", "unique_keys", "writer"]

#: The plan format this module builds; the compiled module must say the same.
#: (2: the module also has the bytes reader and writer, ``read`` and ``write``;
#: 3: and ``unique_keys``, the duplicate-member test of ``_json.loads``.)
ABI = 3
#: Set to ``1`` to force the pure-Python codec although the accelerator is built.
PURE_ENV = "A2A_CODEC_PURE"


def active() -> bool:
    """Whether decoding and encoding go through the compiled accelerator."""
    return (
        _native is not None
        and getattr(_native, "ABI", None) == ABI
        and os.environ.get(PURE_ENV, "").strip().lower() not in ("1", "true", "yes")
    )


def decoder(ns: Namespace, name: str, dialect: str) -> Any:
    """The accelerated structure function of class ``name`` in ``ns`` (else the pure one)."""
    return _planner(ns, dialect).decoder(name)


def encoder(ns: Namespace, name: str, dialect: str) -> Any:
    """The accelerated unstructure function of class ``name`` in ``ns`` (else the pure one)."""
    return _planner(ns, dialect).encoder(name)


def reader(plan: Any) -> Any:
    """``data -> model or None`` reading JSON bytes straight through ``plan``
    (None: it gave up, decode the existing way); None if ``plan`` is not native."""
    if _native is None or type(plan) not in (_native.Plan, _native.PartPlan):
        return None
    return functools.partial(_native.read, plan)


def writer(plan: Any) -> Any:
    """``model -> bytes or None`` writing JSON straight through ``plan`` (None:
    it gave up, encode the existing way); None if ``plan`` is not native."""
    if _native is None or type(plan) not in (_native.Plan, _native.PartPlan):
        return None
    return functools.partial(_native.write, plan)


def unique_keys() -> Any:
    """The compiled ``_json.unique_keys`` (``(raw, value) -> bool``), or None (pure)."""
    return _native.unique_keys if active() else None


_LOCK = threading.RLock()
_CALL = re.compile(r"(_\w+)\(\{\}\)\Z")
_ITEMS = re.compile(r"_(?:list|ulist)\((_[su]_\w+), \{\}\)\Z")


class _Unplannable(Exception):
    """A class the plans cannot describe: it keeps its pure function."""


def _planner(ns: Namespace, dialect: str) -> _Planner:
    planner = ns.get("_PLANNER")
    if planner is None:
        with _LOCK:
            planner = ns.get("_PLANNER")
            if planner is None:
                planner = ns["_PLANNER"] = _Planner(ns, dialect)
    return planner


def _defaults(cls: type[Any]) -> dict[str, tuple[str, Any]]:
    """Attribute name -> ``("value", v)`` or ``("factory", f)``, in attribute order."""
    return {a.name: _gen.default_of(a) for a in attrs.fields(cls)}


def _slots(cls: type[Any]) -> dict[str, Any]:
    """Attribute name -> its slot member descriptor."""
    out = {}
    for a in attrs.fields(cls):
        for klass in cls.__mro__:
            desc = klass.__dict__.get(a.name)
            if desc is not None:
                out[a.name] = desc
                break
    return out


class _Planner:
    """Builds (once) and caches the plans of one namespace."""

    def __init__(self, ns: Namespace, dialect: str) -> None:
        self.ns = ns
        self.specs: dict[str, ClassSpec] = ns.get("_SPECS", {})
        # Bare parts in C: the 1.0 oneof and the 0.3 JSON-RPC kind-tagged form.
        self.part_form = {"1.0": "plain", "0.3": "tagged"}.get(dialect)
        self.plans: dict[tuple[str, bool], Any] = {}

    def decoder(self, name: str) -> Any:
        return self._plan(name, encode=False)

    def encoder(self, name: str) -> Any:
        return self._plan(name, encode=True)

    def _plan(self, name: str, *, encode: bool) -> Any:
        key = (name, encode)
        found = self.plans.get(key)
        if found is not None:
            return found
        with _LOCK:
            found = self.plans.get(key)
            if found is not None:
                return found
            fn = _gen.resolve(self.ns[f"_{'u' if encode else 's'}_{name}"])
            spec = self.specs.get(name)
            if name == "Part" and self.part_form is not None and _native is not None:
                self.plans[key] = self._part(fn, encode)
            elif spec is None or _native is None or not _gen.is_generated(fn):
                self.plans[key] = fn  # a hand-written hook: pure
            else:
                plan = _native.Plan(spec.cls, fn, encode)
                # Registered before its tables: nested plans may refer back to it.
                self.plans[key] = plan
                try:
                    tables = self._encode_tables(spec) if encode else self._decode_tables(spec)
                    plan.setup(*tables)
                except (_Unplannable, TypeError):
                    # A plan without tables always gives up: anything that
                    # already refers to it still gets the pure result.
                    self.plans[key] = fn
            return self.plans[key]

    def _part(self, fn: Any, encode: bool) -> Any:
        assert _native is not None
        text, data = _slots(m.TextPart), _slots(m.DataPart)
        tagged = self.part_form == "tagged"
        plan = _native.PartPlan(
            m.TextPart,
            (text["text"], text["metadata"], text["filename"], text["media_type"]),
            m.DataPart,
            (data["data"], data["metadata"], data["filename"], data["media_type"]),
            fn,
            tagged,
            encode,
        )
        file = _slots(m.FilePart)
        if not encode and tagged:
            # 0.3 file parts are read in C too (base64 by the namespace's own helper).
            plan.set_file(
                m.FilePart,
                tuple(file[a] for a in ("raw", "url", "metadata", "filename", "media_type")),
                self.ns["_b64d"],
                ("bytes", "uri", "name", "mimeType", "file"),
            )
        if encode:
            plan.set_file(
                m.FilePart,
                tuple(file[a] for a in ("raw", "url", "metadata", "filename", "media_type")),
                _gen.b64encode,
                ("bytes", "uri", "name", "mimeType", "file")
                if tagged
                else ("raw", "url", "filename", "mediaType", None),
            )
        return plan

    def _callable(self, template: str, encode: bool) -> tuple[int, Any]:
        """(kind, arg) for an expression template of the generated code."""
        assert _native is not None
        call = _CALL.match(template)
        nested = "_u_" if encode else "_s_"
        if call is not None and call.group(1).startswith(nested):
            return (_native.E_OBJ if encode else _native.K_OBJ), self._plan(
                call.group(1)[3:], encode=encode
            )
        if call is not None and call.group(1) in self.ns:
            return (_native.E_CALL if encode else _native.K_CALL), _gen.resolve(
                self.ns[call.group(1)]
            )
        # Any other expression: the same source, as a function of the namespace.
        fn = eval(f"lambda v: {template.format('v')}", self.ns)  # (our own tables' source)
        return (_native.E_CALL if encode else _native.K_CALL), fn

    def _decode_tables(self, spec: ClassSpec) -> tuple[Any, ...]:
        n = _native
        assert n is not None
        defaults, slots = _defaults(spec.cls), _slots(spec.cls)
        fields = []
        for fld in spec.fields:
            if fld.unsupported is not None:
                continue
            how, default = defaults[fld.attr]
            kind = fld.kind
            unset = fld.empty_is_unset and kind.empty is not None
            flags = (
                (n.F_REQUIRED if fld.required or default is attrs.NOTHING else 0)
                | (n.F_FACTORY if how == "factory" else 0)
                | (n.F_NONEMPTY if fld.nonempty else 0)
                | (n.F_UNSET if unset else 0)
            )
            empty: Any = None
            if kind.items is not None:
                code, arg = n.K_LIST, self._plan(kind.items, encode=False)
            elif kind.decode == _gen.STR_DECODE:
                code, arg = n.K_STR, None
            elif unset and kind.empty not in ("False", "0", "[]", "''"):
                raise _Unplannable(f"{spec.name}.{fld.attr}: empty value {kind.empty}")
            elif kind.enum is not None:
                if unset:
                    raise _Unplannable(f"{spec.name}.{fld.attr}: enum with an empty value")
                code, arg = n.K_ENUM, self.ns[f"_EN_{kind.enum}"]
            elif kind.decode is None:
                if unset:
                    raise _Unplannable(f"{spec.name}.{fld.attr}: plain value with an empty value")
                code, arg = n.K_ANY, None
            else:
                code, arg = self._callable(kind.decode, encode=False)
                if code == n.K_CALL and arg is _gen.struct and not unset and not fld.nonempty:
                    # A parsed JSON object kept as it is (plans run only on parsed JSON).
                    code = n.K_STRUCT
                if code == n.K_OBJ and unset:
                    raise _Unplannable(f"{spec.name}.{fld.attr}: object with an empty value")
                if unset:
                    empty = {"False": False, "0": 0, "[]": [], "''": ""}[kind.empty or ""]
                    flags |= n.F_EMPTY_IS if kind.empty == "False" else 0
            fields.append(
                (
                    fld.wire,
                    slots[fld.attr],
                    code,
                    flags,
                    arg,
                    empty,
                    None if default is attrs.NOTHING else default,
                )
            )
        tail = []
        placeholders = dict(spec.placeholders)
        carried = {f.attr for f in spec.fields if f.unsupported is None}
        for attr in defaults:
            if attr in carried:
                continue
            if attr in placeholders:
                how, default = "value", placeholders[attr]
            else:
                how, default = defaults[attr]
                if default is attrs.NOTHING:
                    raise _Unplannable(f"{spec.name}: no value for {attr}")
            flags = n.F_FACTORY if how == "factory" else 0
            tail.append((attr, slots[attr], 0, flags, None, None, default))
        aliases = tuple(alias for alias, _ in spec.aliases) or None
        constants = tuple(spec.constants) or None
        validate = _gen.validate_model if _gen.needs_post_validation(spec.cls) else None
        return tuple(fields), tuple(tail), aliases, constants, validate

    def _encode_tables(self, spec: ClassSpec) -> tuple[Any, ...]:
        n = _native
        assert n is not None
        defaults, slots = _defaults(spec.cls), _slots(spec.cls)
        fields = []
        for fld in spec.fields:
            how, default = defaults[fld.attr]
            test = _gen.present_test(how, default)
            presence = {"v is not None": n.P_NOT_NONE, "v": n.P_TRUTHY}.get(test, n.P_NE)
            if fld.unsupported is not None:
                if presence == n.P_NE:
                    raise _Unplannable(f"{spec.name}.{fld.attr}: unsupported, compared")
                fields.append(
                    (fld.wire, slots[fld.attr], n.E_PLAIN, n.P_UNSUPPORTED, None, None, presence)
                )
                continue
            if default is attrs.NOTHING or fld.always:
                presence = n.P_REQUIRED if default is None else n.P_ALWAYS
            kind = fld.kind
            arg: Any = None
            if kind.items is not None:
                code, arg = n.E_LIST, self._plan(kind.items, encode=True)
            elif kind.encode is None:
                code = n.E_PLAIN
            elif kind.enum is not None and kind.encode == f"_X_{kind.enum}[{{}}._value_]":
                # (member, wire name) pairs of what the dialect can write.
                names = self.ns[f"_X_{kind.enum}"]
                members = set(self.ns[f"_EN_{kind.enum}"].values())
                code, arg = (
                    n.E_ENUM,
                    tuple(
                        (mb, dict.get(names, mb.value))
                        for mb in members
                        if dict.get(names, mb.value)
                    ),
                )
            else:
                code, arg = self._callable(kind.encode, encode=True)
                if code == n.E_CALL and arg is _gen.format_timestamp:
                    code = n.E_TIMESTAMP  # (the writer formats UTC datetimes itself)
            fields.append((fld.wire, slots[fld.attr], code, presence, arg, None, default))
        constants = tuple(spec.constants) or None
        return tuple(fields), (), None, constants, None
