"""Encode models to, and decode them from, every A2A wire dialect.

>>> from a2a_models import Message, codec
>>> wire = codec.encode(Message.user("hi"), dialect="1.0")
>>> codec.decode(Message, wire, dialect="1.0").text
'hi'

* :func:`encode` / :func:`decode` work on JSON bytes (or text);
  :func:`to_wire` / :func:`from_wire` on already-parsed JSON values.
* :func:`to_dict` / :func:`from_dict` give the snake_case Python-dict form.
* :func:`expresses` tells whether a dialect writes a model attribute;
  :mod:`a2a_models.codec.facts` holds the dialect tables and facts behind it.
* ``strict=True`` rejects unknown members (lenient by default, as the spec asks).
* What a dialect cannot express raises :class:`~a2a_models.errors.EncodeError`
  naming the path; ``lossy=True`` drops it instead.
* Every decoding problem raises :class:`~a2a_models.errors.DecodeError` with
  the JSON path of the first problem; nothing else escapes.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .. import models as m
from ..errors import DecodeError, EncodeError, InvalidModelError
from . import _json
from ._converters import Dialect, get_namespace, make_converter, union_name
from ._gen import (
    CHECK_JSON,
    LOSSY,
    Fail,
    Loss,
    format_timestamp,
    render_path,
    resolve,
)

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "Dialect",
    "accelerated",
    "decode",
    "dumps",
    "encode",
    "expresses",
    "from_dict",
    "from_wire",
    "get_converter",
    "loads",
    "make_converter",
    "to_dict",
    "to_wire",
]

T = TypeVar("T")

loads = _json.loads
dumps = _json.dumps


@functools.cache
def get_converter(dialect: Dialect | str = Dialect.V1_0, strict: bool = False) -> cattrs.Converter:
    """The shared (cached) cattrs converter of ``dialect``."""
    return make_converter(Dialect(dialect), strict=strict)


def _hook_name(tp: Any) -> str:
    name = union_name(tp)
    if name is not None:
        return name
    if isinstance(tp, type):
        if issubclass(tp, m.Part):
            return "Part"
        if issubclass(tp, m.SecurityScheme):
            return "SecurityScheme"
        return tp.__name__
    raise TypeError(f"cannot decode into {tp!r}: not an A2A model type")


def _structure_fn(tp: Any, dialect: Dialect, strict: bool) -> tuple[Any, Any, Any]:
    """(pure, accelerated, bytes reader or None) structure functions; the same one
    twice (and no reader) without the accelerator."""
    ns = get_namespace(dialect, strict)
    name = _hook_name(tp)
    fn = ns.get(f"_s_{name}")
    if fn is None:
        raise TypeError(f"{tp!r} has no {dialect.value} form")
    fn = resolve(fn)  # cached by the caller: skip the lazy stub
    from . import _fast  # (imported on first use: import a2a_models stays cheap)

    if strict or not _fast.active():
        return fn, fn, None
    fast = _fast.decoder(ns, name, dialect.value)
    return fn, fast, _fast.reader(fast)


# (type, dialect value, strict) -> (pure, accelerated, reader) structure functions, and
# (type, dialect value) -> (unstructure function, name, writer): one dict lookup per
# call instead of the Dialect() conversion, the namespace lookup and the name
# formatting. Keys use the dialect's plain string: Enum.__hash__ is Python code.
# The reader and writer (the accelerator's bytes-direct path, or None) return
# None when they give up: the existing path then runs on the same input.
_DECODERS: dict[tuple[Any, Any, bool], tuple[Any, Any, Any]] = {}
_ENCODERS: dict[tuple[Any, Any], tuple[Any, str, Any]] = {}


def _decoder(tp: Any, dialect: Any, strict: bool) -> tuple[Any, Any, Any]:
    cls = dialect.__class__
    key = dialect if cls is str else dialect._value_ if cls is Dialect else None
    try:
        fns = _DECODERS.get((tp, key, strict))
    except TypeError:  # an unhashable "type": the slow path explains
        fns = key = None
    if fns is not None:
        return fns
    fns = _structure_fn(tp, Dialect(dialect), strict)
    if key is not None:  # only valid (tp, dialect) pairs get here
        _DECODERS[tp, key, strict] = fns
    return fns


def _from_wire(
    tp: Any, value: Any, dialect: Any, strict: bool, lossy: bool, parsed: bool = False
) -> Any:
    """Decode ``value``; ``parsed``: it came from our JSON parser, so its
    free-form members cannot hold what JSON cannot (no walk needed)."""
    pure, fast, _ = _decoder(tp, dialect, strict)
    token = LOSSY.set(lossy) if lossy else None
    check = None if parsed else CHECK_JSON.set(True)
    # The accelerator's plans take free-form members as they are: parsed JSON only.
    fn = pure if CHECK_JSON.get() else fast
    try:
        result = fn(value)
    except Fail as exc:
        raise DecodeError(render_path(exc.path[::-1]), exc.expected) from None
    except Loss as exc:
        raise DecodeError(render_path(exc.path[::-1]), exc.problem) from None
    except InvalidModelError as exc:
        raise DecodeError("$", exc.problem) from None
    except RecursionError:
        raise DecodeError("$", "input nested too deeply") from None
    finally:
        if token is not None:
            LOSSY.reset(token)
        if check is not None:
            CHECK_JSON.reset(check)
    if result.__class__ is not tp and isinstance(tp, type) and not isinstance(result, tp):
        raise DecodeError("$", f"expected a {tp.__name__}, got a {type(result).__name__}")
    return result


def accelerated() -> bool:
    """Whether the optional compiled accelerator is built and in use.

    Build it with ``python scripts/build_accel.py`` (or ``A2A_BUILD_ACCEL=1``
    when building the wheel); ``A2A_CODEC_PURE=1`` turns it off. Results and
    errors are the same either way (see ``docs/accelerator.md``).
    """
    from . import _fast

    return _fast.active()


def _reset() -> None:
    """Forget the functions picked so far (the next use picks again, reading ``A2A_CODEC_PURE``)."""
    _DECODERS.clear()
    _ENCODERS.clear()
    _json.reset()


@overload
def from_wire(
    tp: type[T],
    value: Any,
    dialect: Dialect | str = ...,
    *,
    strict: bool = ...,
    lossy: bool = ...,
    parsed: bool = ...,
) -> T: ...
@overload
def from_wire(
    tp: Any,
    value: Any,
    dialect: Dialect | str = ...,
    *,
    strict: bool = ...,
    lossy: bool = ...,
    parsed: bool = ...,
) -> Any: ...
def from_wire(
    tp: Any,
    value: Any,
    dialect: Dialect | str = Dialect.V1_0,
    *,
    strict: bool = False,
    lossy: bool = False,
    parsed: bool = False,
) -> Any:
    """Decode an already-parsed JSON value into ``tp`` (a model class or a union alias).

    Free-form members (metadata, data parts, params) are checked at every
    depth: a NaN, a non-string key or a non-JSON type is a :class:`DecodeError`.
    ``parsed=True`` says ``value`` came straight from :func:`loads`, which
    cannot produce those, so the walk is skipped (as :func:`decode` of bytes does).
    """
    return _from_wire(tp, value, dialect, strict, lossy, parsed)


@overload
def decode(
    tp: type[T],
    data: bytes | bytearray | memoryview | str,
    dialect: Dialect | str = ...,
    *,
    strict: bool = ...,
    lossy: bool = ...,
) -> T: ...
@overload
def decode(
    tp: Any,
    data: bytes | bytearray | memoryview | str,
    dialect: Dialect | str = ...,
    *,
    strict: bool = ...,
    lossy: bool = ...,
) -> Any: ...
def decode(
    tp: Any,
    data: bytes | bytearray | memoryview | str | dict[str, Any] | list[Any],
    dialect: Dialect | str = Dialect.V1_0,
    *,
    strict: bool = False,
    lossy: bool = False,
) -> Any:
    """Decode JSON (bytes, text, or an already-parsed dict) into ``tp``.

    Raises :class:`DecodeError` (with the JSON path of the first problem) for
    invalid JSON and for anything that is not a valid ``tp`` in ``dialect``.
    """
    cls = data.__class__
    if data.__class__ is not bytes and isinstance(data, dict | list):
        return _from_wire(tp, data, dialect, strict, lossy)
    if cls is bytes or cls is str:
        try:
            read = _decoder(tp, dialect, strict)[2]
        except Exception:  # (a bad type or dialect: the existing path reports it)
            read = None
        if read is not None and not lossy and not CHECK_JSON.get():
            # Straight from the bytes (None: it gave up, the existing path decides).
            result = read(data)
            if result is not None and (
                result.__class__ is tp or not isinstance(tp, type) or isinstance(result, tp)
            ):
                return result
    try:
        value = _json.loads(data)
    except DecodeError:  # a member named twice, at its path
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError("$", f"expected valid JSON ({exc})") from None
    return _from_wire(tp, value, dialect, strict, lossy, True)


def to_wire(
    obj: Any,
    dialect: Dialect | str = Dialect.V1_0,
    *,
    as_type: Any = None,
    lossy: bool = False,
) -> Any:
    """Encode a model into JSON-ready Python values of ``dialect``.

    ``as_type`` picks a union form, e.g. ``as_type=StreamResponse`` wraps a
    Task as ``{"task": {...}}`` in 1.0 (and tags it with ``kind`` in 0.3).
    """
    return _to_wire(obj, dialect, as_type, lossy)


def _to_wire(obj: Any, dialect: Any, as_type: Any, lossy: bool) -> Any:
    fn, name, _ = _encoder(obj, dialect, as_type)
    token = LOSSY.set(lossy) if lossy else None
    try:
        return fn(obj)
    except Loss as exc:
        raise EncodeError(render_path(exc.path[::-1]), exc.problem) from None
    except (AttributeError, KeyError, TypeError) as exc:
        raise EncodeError("$", f"not a valid {name}: {exc!r}") from None
    finally:
        if token is not None:
            LOSSY.reset(token)


def _encoder(obj: Any, dialect: Any, as_type: Any) -> tuple[Any, str, Any]:
    """The unstructure function, the name used in messages and the bytes writer
    (or None) for ``obj``."""
    tp = as_type if as_type is not None else obj.__class__
    cls = dialect.__class__
    key = dialect if cls is str else dialect._value_ if cls is Dialect else None
    try:
        found = _ENCODERS.get((tp, key))
    except TypeError:  # unhashable as_type: the slow path explains
        found = key = None
    if found is not None:
        return found
    d = Dialect(dialect)
    ns = get_namespace(d, False)
    name = _hook_name(as_type) if as_type is not None else _hook_name(type(obj))
    fn = ns.get(f"_u_{name}")
    if fn is None:
        raise TypeError(f"{type(obj).__name__} has no {d.value} form")
    fn = resolve(fn)  # cached below: skip the lazy stub
    from . import _fast

    write = None
    if _fast.active():
        fn = _fast.encoder(ns, name, d.value)
        write = _fast.writer(fn)
    if key is not None:  # only valid (type, dialect) pairs get here
        _ENCODERS[tp, key] = (fn, name, write)
    return fn, name, write


def encode(
    obj: Any,
    dialect: Dialect | str = Dialect.V1_0,
    *,
    as_type: Any = None,
    lossy: bool = False,
) -> bytes:
    """Encode a model to compact UTF-8 JSON bytes of ``dialect``."""
    if not lossy:
        write = _encoder(obj, dialect, as_type)[2]
        if write is not None:
            # Straight to bytes (None: it gave up, the existing path decides).
            out = write(obj)
            if out is not None:
                return out  # type: ignore[no-any-return]
    wire = _to_wire(obj, dialect, as_type, lossy)
    try:
        return _json.dumps(wire)
    except (TypeError, ValueError) as exc:
        # Only free-form members (metadata, data, params) can hold such values.
        raise EncodeError(
            "$", f"a free-form member holds a value JSON cannot carry: {exc}"
        ) from None


def to_dict(obj: Any, *, as_type: Any = None) -> Any:
    """The snake_case Python-dict form of a model (``datetime``/``bytes`` kept native)."""
    return _to_wire(obj, Dialect.PYTHON, as_type, False)


@overload
def from_dict(tp: type[T], value: Any, *, strict: bool = ...) -> T: ...
@overload
def from_dict(tp: Any, value: Any, *, strict: bool = ...) -> Any: ...
def from_dict(tp: Any, value: Any, *, strict: bool = False) -> Any:
    """Build a model from its snake_case Python-dict form."""
    return _from_wire(tp, value, Dialect.PYTHON, strict, False)


def expresses(tp: type[Any], attr: str, dialect: Dialect | str) -> bool:
    """Whether ``dialect`` writes attribute ``attr`` of the model class ``tp``
    (see :func:`a2a_models.codec.facts.expresses`)."""
    # Imported here: the dialect tables are built on first use, not on import.
    from .facts import expresses as answer

    return answer(tp, attr, str(getattr(dialect, "value", dialect)))


# Re-exported for adapters that format timestamps outside models.
__all__ += ["format_timestamp"]
