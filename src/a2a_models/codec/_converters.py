"""One cattrs converter per dialect, each built by :func:`make_converter`.

This is the only place hooks are installed. A converter's hooks are the
generated functions of ``_gen`` (tables from ``_v10``/``_v03``) plus the
hand-written oneof hooks; cattrs is the registry and dispatcher, so
``converter.structure(wire_dict, Task)`` and ``converter.unstructure(task)``
work as users of cattrs expect.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import models as m
from .._state import TaskState
from . import _gen
from ._gen import Fail, Namespace, type_name

if TYPE_CHECKING:
    import cattrs

# ``cattrs`` and the dialect tables (``_v10``, ``_v03``) are imported on first
# use: ``import a2a_models`` stays cheap, and a process that never touches a
# dialect never builds it.

__all__ = ["Dialect", "get_namespace", "make_converter", "union_name"]


class Dialect(str, enum.Enum):
    """A wire form of A2A JSON.

    * ``V1_0`` - A2A 1.0 (ProtoJSON) for JSON-RPC, HTTP+JSON and push bodies.
    * ``V0_3`` - A2A 0.3 JSON-RPC (``kind`` discriminators, lowercase states).
    * ``V0_3_HTTP`` - A2A 0.3 HTTP+JSON (ProtoJSON of the 0.3 proto).
    * ``PYTHON`` - snake_case dicts with native values (``datetime``, ``bytes``).
    """

    V1_0 = "1.0"
    V0_3 = "0.3"
    V0_3_HTTP = "0.3-http"
    PYTHON = "python"


_UNIONS: dict[Any, str] = {
    m.StreamResponse: "StreamResponse",
    m.SendMessageResponse: "SendMessageResponse",
}


def union_name(tp: Any) -> str | None:
    """The namespace name of a union alias, if ``tp`` is one we know."""
    try:
        return _UNIONS.get(tp)
    except TypeError:
        return None


def _bad(expected: str) -> Callable[[Any], Any]:
    def raise_(value: Any) -> Any:
        raise Fail(f"expected {expected}, got {type_name(value)}")

    return raise_


def _ulist(fn: Callable[[Any], Any], items: tuple[Any, ...]) -> list[Any]:
    try:
        return [fn(x) for x in items]
    except _gen.Loss:
        for i, item in enumerate(items):  # find the index, once, on failure
            try:
                fn(item)
            except _gen.Loss as exc:
                exc.path.append(i)
                raise
        raise


def _umap(fn: Callable[[Any], Any], items: dict[str, Any]) -> dict[str, Any]:
    return {k: fn(v) for k, v in items.items()}


def _python_list(fn: Callable[[Any], Any], value: Any) -> tuple[Any, ...]:
    if value.__class__ is tuple:
        value = list(value)
    return _gen.list_of(fn, value)


def _python_str_list(value: Any) -> tuple[str, ...]:
    if value.__class__ is tuple:
        value = list(value)
    return _gen.str_list(value)


def _python_bytes(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return _gen.b64decode(value)


def _python_ts(value: Any) -> datetime:
    return _gen.timestamp(value)


def enum_names(dialect: Dialect) -> tuple[dict[TaskState, str], dict[m.Role, str]]:
    """How ``dialect`` spells each task state and role (members it cannot write are missing)."""
    if dialect is Dialect.V0_3:
        from . import _v03

        return dict(_v03.V03_STATES), {m.Role.USER: "user", m.Role.AGENT: "agent"}
    states = {s: s.value for s in TaskState}
    if dialect is Dialect.V0_3_HTTP:
        states[TaskState.CANCELED] = "TASK_STATE_CANCELLED"  # the 0.3 proto's spelling
    return states, {r: r.value for r in m.Role}


def _enum_tables(ns: Namespace, dialect: Dialect) -> None:
    """Install ``_E_<Enum>`` decoders and ``_X_<Enum>`` encode maps."""
    ts_names, role_names = enum_names(dialect)
    ts_decode: dict[Any, Any] = {name: s for s, name in ts_names.items()}
    role_decode: dict[Any, Any] = {name: r for r, name in role_names.items()}
    if dialect is Dialect.PYTHON:
        ts_decode.update({s: s for s in TaskState})
        role_decode.update({r: r for r in m.Role})
    elif dialect is not Dialect.V0_3:
        # ProtoJSON parsers accept enum numbers too.
        ts_decode.update({s.proto_number: s for s in TaskState})
        role_decode.update({i: r for i, r in enumerate(m.Role)})
    # String fast paths of the decoders, inlined by the generated functions.
    ns["_EN_TaskState"] = {k: v for k, v in ts_decode.items() if k.__class__ is str}
    ns["_EN_Role"] = {k: v for k, v in role_decode.items() if k.__class__ is str}
    ns["_E_TaskState"] = _gen.enum_decoder(ts_decode, "task state")
    ns["_X_TaskState"] = {s.value: name for s, name in ts_names.items()}
    ns["_E_Role"] = _gen.enum_decoder(role_decode, "role")
    role_x = {r.value: name for r, name in role_names.items()}
    # A plain dict where every member has a name: the generated code's
    # ``_X_Role[...]`` then takes CPython's exact-dict fast path.
    ns["_X_Role"] = role_x if len(role_x) == len(m.Role) else _Unexpressible(role_x, "role")


class _Unexpressible(dict[str, str]):
    """An encode table whose missing entries are losses (0.3 has no unspecified role)."""

    def __init__(self, names: dict[str, str], what: str) -> None:
        super().__init__(names)
        self.what = what

    def __missing__(self, key: str) -> str:
        _gen.lose(f"{key} is not a {self.what} this dialect can express")
        return "agent"


def _base_ns(dialect: Dialect) -> Namespace:
    ns = _gen.base_namespace(quoted_ints=dialect in (Dialect.V1_0, Dialect.V0_3_HTTP))
    ns.update(
        _bad_str=_bad("a string"),
        _bad_bool=_bad("a boolean"),
        _bad_obj=_bad("an object"),
        _ulist=_ulist,
        _umap=_umap,
        _bytes=_python_bytes,
    )
    if dialect is Dialect.PYTHON:
        ns.update(_list=_python_list, _str_list=_python_str_list, _ts=_python_ts)
    _enum_tables(ns, dialect)
    return ns


@functools.cache
def get_namespace(dialect: Dialect, strict: bool) -> Namespace:
    """The compiled hook namespace of a dialect (cached: compile once per process)."""
    ns = _base_ns(dialect)
    if dialect in (Dialect.V1_0, Dialect.PYTHON):
        from . import _v10

        python = dialect is Dialect.PYTHON
        ns.update(
            _v10.inline_part_encoder(
                "{{'text': {p}.text}}",
                "{{'data': {p}.data}}",
                text_meta="{{'text': {p}.text, 'metadata': {p}.metadata}}",
                keep_empty=python,
            )
        )
        _gen.compile_dialect(_v10.build_specs(python=python), ns, strict=strict)
        _v10.install_oneof_hooks(ns, python=python, strict=strict)
    else:
        from . import _v03

        _v03.install(ns, http=dialect is Dialect.V0_3_HTTP, strict=strict)
    return ns


def _hooked() -> tuple[type[Any], ...]:
    from . import _v10

    return (
        *_v10.TABLE_CLASSES,
        m.Part,
        m.TextPart,
        m.FilePart,
        m.DataPart,
        m.SecurityScheme,
        *_v10._SCHEME_KEYS,
        m.OAuthFlows,
        m.SecurityRequirement,
    )


def make_converter(dialect: Dialect | str, *, strict: bool = False) -> cattrs.Converter:
    """Build the cattrs converter of ``dialect``.

    ``strict`` rejects unknown members; otherwise they are ignored, as the
    spec asks (free-form ``metadata``/``data``/``params`` keep everything).
    """
    import cattrs

    dialect = Dialect(dialect)
    ns = get_namespace(dialect, strict)
    conv = cattrs.Converter()
    for cls in _hooked():
        name = cls.__name__
        if issubclass(cls, m.Part):
            name = "Part"
        elif issubclass(cls, m.SecurityScheme):
            name = "SecurityScheme"
        s = ns.get(f"_s_{name}")
        u = ns.get(f"_u_{name}")
        if s is None or u is None:
            continue
        conv.register_structure_hook(cls, _structure_adapter(s))
        conv.register_unstructure_hook(cls, u)
    for alias, name in _UNIONS.items():
        conv.register_structure_hook(alias, _structure_adapter(ns[f"_s_{name}"]))
    return conv


def _structure_adapter(fn: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _type: Any) -> Any:
        return fn(value)

    return hook
