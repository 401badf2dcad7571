"""Differential fuzzing of the compiled gRPC reader (``_pbwire``) on hostile bytes.

``test_pbwire.py`` compares the C and pure paths on valid messages; here the
bytes are broken on purpose. Valid messages from the project's strategies are
serialized, then truncated, flipped, spliced, given repeated fields, wrong wire
types for known numbers, unknown fields (groups included), huge and overlong
varints, lengths past the end or near 2**31/2**63, deep Struct/ListValue
nesting, bad UTF-8 and NULs, at any depth of the message tree.

Two entry points are checked:

* the one that matters, what the server (``A2AServicer._prepare``) and the
  client (``GrpcClient._decode``) call: ``from_proto(tp, PB.FromString(raw))``.
  ``from_proto`` serializes the parsed message and reads those bytes in C
  (whole-message plans, Struct/Value members). It must give exactly what the
  pure path gives: the same model, or the same exception type and message;
* the C functions that take raw bytes (``MsgPlan.loads``, ``struct_loads``,
  ``value_loads``) fed the hostile bytes themselves: each must either give up
  (``None``) or return exactly what the pure path makes of the message
  protobuf parses from those bytes (and never read what protobuf rejects).

Each test also counts what the C did, and fails if it never read a message
(everything fell back: the comparison would prove nothing) or never gave up.

``A2A_FUZZ_EXAMPLES=5000`` (say) runs many more examples (for a sanitizer
build, see docs/accelerator.md).
"""

from __future__ import annotations

import importlib.util
import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
from google.protobuf import struct_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_models import models as m
from a2a_models.adapters.grpc import _convert
from a2a_models.adapters.grpc._pb import a2a_pb2 as pb
from a2a_models.codec.facts import Fail
from a2a_models.errors import EncodeError
from a2a_models.protocol._methods import METHODS
from a2a_models.testing import first_difference
from a2a_models.testing import strategies as a2a_st

if _convert._pbwire is None or _convert._REVERSE is None:
    if os.environ.get("A2A_REQUIRE_ACCEL") == "1" and os.environ.get("A2A_CODEC_PURE") != "1":
        raise RuntimeError("A2A_REQUIRE_ACCEL=1 but the accelerator (_pbwire) is not built")
    pytest.skip("the compiled accelerator is not built", allow_module_level=True)

EXAMPLES = int(os.environ.get("A2A_FUZZ_EXAMPLES", "0")) or None
FUZZ = settings(
    max_examples=EXAMPLES or 30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
NATIVE = _convert._pbwire
REVERSE = _convert._REVERSE
PLANS: dict[str, Any] = {n: p for n, p in _convert._NS.get("_PLANS", {}).items() if p is not None}

# --------------------------------------------------------------------------- wire helpers


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(number: int, wt: int) -> bytes:
    return varint((number << 3) | wt)


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


def split(buf: bytes) -> list[tuple[int, int, bytes, bytes]] | None:
    """The top-level fields of ``buf`` as (number, wire type, whole field, payload);
    None if ``buf`` is not a sequence of well-formed fields (groups: None too)."""
    out = []
    i, n = 0, len(buf)

    def read() -> int:
        nonlocal i
        v = shift = 0
        while True:
            if i >= n or shift > 63:
                raise ValueError
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    try:
        while i < n:
            start = i
            t = read()
            wt = t & 7
            if wt == 0:
                body = i
                read()
            elif wt == 1 or wt == 5:
                body = i
                i += 8 if wt == 1 else 4
            elif wt == 2:
                size = read()
                body = i
                i += size
            else:
                return None
            if i > n:
                return None
            out.append((t >> 3, wt, buf[start:i], buf[body:i]))
    except ValueError:
        return None
    return out


# --------------------------------------------------------------------------- hostile bytes

HUGE_LENGTHS = [2**31 - 1, 2**31, 2**32, 2**32 + 5, 2**63 - 1, 2**63, 2**64 - 1, 1000]
HUGE_VARINTS = [
    varint(2**64 - 1),
    varint(2**63),
    varint(2**32),
    varint(2**32 + 1),
    varint(2**31),
    varint(-1),
    varint(-(2**31)),
    b"\xff" * 10 + b"\x01",  # 11 bytes: overlong
    b"\x80" * 11 + b"\x00",  # 12 bytes of zero
    b"\x80" * 9 + b"\x00",  # an overlong 0 (10 bytes): protobuf accepts it
    b"\x81\x80\x80\x80\x00",  # an overlong 1
    b"\x80" * 10,  # truncated
    b"\xff\xff\xff\xff\x0f",  # 2**32 - 1
]
BAD_TEXT = [
    b"\xff",
    b"\xc3",
    b"\xc3\x28",
    b"\xed\xa0\x80",  # a surrogate
    b"\xf4\x90\x80\x80",  # beyond U+10FFFF
    b"\xc0\x80",  # an overlong NUL
    b"a\x00b",
    b"\x00",
    b"",
    "é\u2028\U0001f600".encode(),
]
FIELD_NUMBERS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 99, 2**29 - 1, 2**29, 2**32 + 1]


def deep_value(depth: int, leaf: bytes = b"\x11" + b"\x00" * 8) -> bytes:
    """A Value nesting ``depth`` Structs/ListValues."""
    v = leaf
    for i in range(depth):
        if i % 2:
            v = ld(5, ld(1, ld(1, b"k") + ld(2, v)))  # struct_value {k: v}
        else:
            v = ld(6, ld(1, v))  # list_value [v]
    return v


@st.composite
def payloads(draw: st.DrawFn, wt: int, wellformed: bool = False) -> bytes:
    """The bytes after a tag of wire type ``wt`` (``wellformed``: that protobuf parses)."""
    if wt == 0:
        if wellformed:
            return draw(st.sampled_from(HUGE_VARINTS[:7] + HUGE_VARINTS[9:11]))
        return draw(st.sampled_from(HUGE_VARINTS) | st.integers(0, 2**64 - 1).map(varint))
    if wt == 1:
        return draw(st.binary(min_size=8, max_size=8) if wellformed else st.binary(max_size=9))
    if wt == 5:
        return draw(st.binary(min_size=4, max_size=4) if wellformed else st.binary(max_size=5))
    if wt == 2:
        body = draw(
            st.sampled_from(BAD_TEXT)
            | st.binary(max_size=12)
            | st.integers(1, 150).map(deep_value)
            | st.builds(
                lambda n, p: tag(n, 0) + p,
                st.sampled_from(FIELD_NUMBERS),
                st.sampled_from(HUGE_VARINTS),
            )
        )
        if wellformed:
            return varint(len(body)) + body
        size = draw(st.sampled_from([len(body)] * 4 + [len(body) + 1] + HUGE_LENGTHS))
        return varint(size) + body
    if wt == 3:
        inside = draw(st.sampled_from([b"", b"\x08\x01", b"\x12\x01x"]))
        return inside + (b"\x0c" if wellformed else draw(st.sampled_from([b"", b"\x0c"])))
    return draw(st.binary(max_size=4))


@st.composite
def hostile_fields(draw: st.DrawFn, known: list[int], wellformed: bool = False) -> bytes:
    numbers = known + FIELD_NUMBERS
    if wellformed:
        numbers = [n for n in numbers if 0 < n < 2**29]
    number = draw(st.sampled_from(numbers))
    wt = draw(st.sampled_from([0, 1, 2, 3, 5] if wellformed else range(8)))
    body = draw(payloads(wt, wellformed))
    if wt == 3 and body.endswith(b"\x0c"):  # a group closed by its own number
        body = body[:-1] + tag(number, 4)
    return tag(number, wt) + body


@st.composite
def mutated(draw: st.DrawFn, buf: bytes, depth: int = 0, wellformed: bool = False) -> bytes:
    """``buf`` broken in one of many ways, possibly deep inside (``wellformed``: only
    in ways protobuf's parser takes: unknown fields, wrong wire types, repeats...)."""
    fields = split(buf)
    known = sorted({f[0] for f in fields}) if fields else []
    ops = ["hostile"] if wellformed else ["truncate"] * 3 + ["flip", "insert", "delete", "hostile"]
    if fields:
        # descending often: the damage is then inside lengths that still add up
        ops += ["repeat", "drop", "swap", "retype"] + ["descend"] * (4 + len(ops))
        ops += [] if wellformed else ["text", "length"]
    op = draw(st.sampled_from(ops))
    n = len(buf)
    if op == "truncate":
        return buf[: draw(st.integers(0, max(n - 1, 0)))]
    if op == "flip" and n:
        i = draw(st.integers(0, n - 1))
        return buf[:i] + bytes([buf[i] ^ draw(st.integers(1, 255))]) + buf[i + 1 :]
    if op == "insert":
        i = draw(st.integers(0, n))
        return buf[:i] + draw(st.binary(min_size=1, max_size=4)) + buf[i:]
    if op == "delete" and n:
        i = draw(st.integers(0, n - 1))
        return buf[:i] + buf[i + draw(st.integers(1, 4)) :]
    if not fields:  # hostile (or an op on an empty buffer)
        return buf + draw(hostile_fields(known, wellformed))
    k = draw(st.integers(0, len(fields) - 1))
    parts = [f[2] for f in fields]
    number, wt, whole, payload = fields[k]
    if op == "hostile":
        parts.insert(draw(st.integers(0, len(parts))), draw(hostile_fields(known, wellformed)))
    elif op == "repeat":
        parts.insert(draw(st.integers(0, len(parts))), whole)
    elif op == "drop":
        del parts[k]
    elif op == "swap":
        j = draw(st.integers(0, len(parts) - 1))
        parts[k], parts[j] = parts[j], parts[k]
    elif op == "retype":
        others = [0, 1, 2, 3, 5] if wellformed else range(8)
        other = draw(st.sampled_from([w for w in others if w != wt]))
        parts[k] = tag(number, other) + draw(payloads(other, wellformed))
        if other == 3 and parts[k].endswith(b"\x0c"):
            parts[k] = parts[k][:-1] + tag(number, 4)
    elif op == "text" and wt == 2:
        parts[k] = ld(number, draw(st.sampled_from(BAD_TEXT)))
    elif op == "length" and wt == 2:
        parts[k] = tag(number, 2) + varint(draw(st.sampled_from(HUGE_LENGTHS))) + payload
    elif op == "descend" and wt == 2 and depth < 8 and split(payload) is not None:
        parts[k] = ld(number, draw(mutated(payload, depth + 1, wellformed)))
    elif wt == 0:
        parts[k] = tag(number, 0) + draw(payloads(0, wellformed))
    else:
        parts[k] = draw(hostile_fields(known, wellformed))
    return b"".join(parts)


def inner_cuts(buf: bytes, depth: int = 0) -> Iterator[bytes]:
    """``buf`` with the payload of one length-delimited field, at any depth, cut at
    every position, the lengths around it still adding up (so the reader meets the
    end of a nested message in the middle of a field, varint or number)."""
    fields = split(buf) or []
    for k, (number, wt, _whole, payload) in enumerate(fields):
        if wt != 2:
            continue
        before = b"".join(f[2] for f in fields[:k])
        after = b"".join(f[2] for f in fields[k + 1 :])
        for cut in range(len(payload)):
            yield before + ld(number, payload[:cut]) + after
        if depth < 8:
            for inner in inner_cuts(payload, depth + 1):
                yield before + ld(number, inner) + after


def some_cuts(data: st.DataObject, buf: bytes, n: int = 24) -> list[bytes]:
    cuts = list(inner_cuts(buf))
    if len(cuts) <= n:
        return cuts
    start = data.draw(st.integers(0, len(cuts) - 1), label="cuts from")
    return [cuts[(start + i * len(cuts) // n) % len(cuts)] for i in range(n)]


@st.composite
def hostile(draw: st.DrawFn, valid: st.SearchStrategy[bytes]) -> bytes:
    buf = draw(valid)
    wellformed = draw(st.booleans())  # half of them get past protobuf's parser
    for _ in range(draw(st.integers(1, 3))):
        buf = draw(mutated(buf, 0, wellformed))
    return buf


# --------------------------------------------------------------------------- the two paths


@contextmanager
def pure_path() -> Iterator[None]:
    """Everything of ``_convert`` on its pure functions (plans and Struct/Value readers off)."""
    ns = _convert._NS
    saved = (
        _convert._DECODERS,
        _convert._from_struct,
        _convert._from_value,
        ns["_from_struct"],
        ns["_from_value"],
    )
    pure = dict(_convert._DECODERS)
    for tp, fn in pure.items():
        if getattr(fn, "__qualname__", "") == "_first.<locals>.decode":
            pure[tp] = ns[f"_from_{tp.__name__}"]
    _convert._DECODERS = pure
    _convert._from_struct = ns["_from_struct"] = _convert._pure_from_struct
    _convert._from_value = ns["_from_value"] = _convert._pure_from_value
    try:
        yield
    finally:
        (
            _convert._DECODERS,
            _convert._from_struct,
            _convert._from_value,
            ns["_from_struct"],
            ns["_from_value"],
        ) = saved


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("ok", call())
    except Fail as exc:
        return ("error", Fail, exc.expected, list(exc.path))
    except Exception as exc:
        return ("error", type(exc), str(exc))


def assert_same(fast: tuple[Any, ...], pure: tuple[Any, ...]) -> None:
    assert fast[0] == pure[0], (fast, pure)
    if fast[0] == "ok":
        diff = first_difference(fast[1], pure[1])
        assert diff is None, diff
    else:
        assert fast == pure


def canon(x: Any) -> Any:
    """``x`` with its maps' keys sorted, every value tagged by its type: protobuf maps
    have no order, so bytes that protobuf did not write give no order to compare."""
    if attrs.has(type(x)):
        return (type(x).__name__, tuple(canon(getattr(x, f.name)) for f in attrs.fields(type(x))))
    if isinstance(x, dict):
        return ("dict", sorted((k, canon(v)) for k, v in x.items()))
    if isinstance(x, list | tuple):
        return (type(x).__name__, [canon(v) for v in x])
    return (type(x).__name__, repr(x))


def assert_same_unordered(direct: Any, expected: tuple[Any, ...], raw: bytes) -> None:
    assert expected[0] == "ok", f"the C read {raw!r}, the pure path fails: {expected}"
    assert canon(direct) == canon(expected[1]), f"the C read {raw!r} differently"


def parse(pb_cls: Any, raw: bytes) -> Any:
    try:
        return pb_cls.FromString(raw)
    except Exception:  # protobuf's DecodeError: the server answers INVALID_ARGUMENT
        return None


def assert_protobuf_reads(pb_cls: Any, raw: bytes) -> bool:
    """That protobuf parses what the C read: False if only its depth limit stops it.

    The C's limit is 100 Struct/ListValue levels, protobuf's 100 messages (about 33
    JSON levels, each a Struct, a map entry and a Value): deeper input never gets
    past protobuf's parser to from_proto, and a message built in Python that deep
    reads alike on both paths (test_deep_nesting_around_the_limit)."""
    try:
        pb_cls.FromString(raw)
    except Exception as exc:
        assert "MaxDepth" in str(exc), f"the C read bytes protobuf rejects: {raw!r} ({exc})"
        return False
    return True


# --------------------------------------------------------------------------- what is fuzzed


def _decoded_types() -> list[Any]:
    """Every type from_proto reads on the network: the planned classes, and what the
    server (params) and the client (results) decode."""
    out: list[Any] = [getattr(m, name) for name in sorted(PLANS)]
    for spec in METHODS.values():
        for tp in (spec.params_type, spec.result_type):
            if tp is None:
                continue
            if getattr(tp, "__args__", None):  # Task | Message...: StreamResponse on the wire
                tp = m.StreamResponse if len(tp.__args__) > 2 else m.SendMessageResponse
            if tp not in out:
                out.append(tp)
    return out


TYPES = _decoded_types()


def _name(tp: Any) -> str:
    if tp is m.StreamResponse:
        return "StreamResponse"
    if tp is m.SendMessageResponse:
        return "SendMessageResponse"
    return str(tp.__name__)


def planned(tp: Any) -> bool:
    """Whether from_proto(tp) reads with a plan (a scheme's is its SecurityScheme oneof)."""
    return getattr(_convert._DECODERS[tp], "__qualname__", "") == "_first.<locals>.decode"


def valid_bytes(tp: Any, inner: bool = False) -> st.SearchStrategy[bytes]:
    """Serialized valid ``tp`` (``inner``: a scheme's own message, not its oneof)."""

    def encode(x: Any) -> bytes:
        try:
            msg = _convert.to_proto(x, tp)
        except EncodeError:  # what protobuf cannot carry (big integers in Structs...)
            return b""
        if inner and msg.DESCRIPTOR.name != _name(tp):
            msg = getattr(msg, msg.WhichOneof(msg.DESCRIPTOR.oneofs[0].name))
        return bytes(msg.SerializeToString())

    return a2a_st.strategy_for(tp, "1.0").map(encode)


def check_plan(name: str, raw: bytes) -> None:
    """(b) ``MsgPlan.loads`` of raw bytes: gives up, or reads what protobuf would."""
    direct = PLANS[name].loads(raw)
    if direct is None:
        return
    if not assert_protobuf_reads(getattr(pb, name), raw):
        return
    parsed = parse(getattr(pb, name), raw)
    with pure_path():
        expected = outcome(lambda: _convert._NS[f"_from_{name}"](parsed))
    assert_same_unordered(direct, expected, raw)


def check_message(tp: Any, raw: bytes, stats: Counter[str]) -> None:
    name = _name(tp)
    pb_cls = _convert.proto_class(tp)
    parsed = parse(pb_cls, raw)
    plan = PLANS.get(name) if planned(tp) else None
    if plan is not None:
        check_plan(name, raw)
    if parsed is None:
        stats["rejected by protobuf"] += 1
        return
    # (a) what the server and the client call.
    if plan is not None:
        stats[
            "plan read" if plan.loads(parsed.SerializeToString()) is not None else "plan gave up"
        ] += 1
    fast = outcome(lambda: _convert.from_proto(tp, parsed))
    with pure_path():
        pure = outcome(lambda: _convert.from_proto(tp, parsed))
    assert_same(fast, pure)
    stats[fast[0]] += 1


_WIRE_TYPES = {9: 2, 11: 2, 12: 2, 14: 0, 8: 0, 5: 0, 3: 0, 13: 0, 4: 0}  # type -> wt


def wrong_wire_type(pb_cls: Any) -> bytes:
    """Its first field with another wire type: protobuf keeps it as an unknown field,
    and the plan, seeing a known number, must give up."""
    fd = pb_cls.DESCRIPTOR.fields[0]
    return tag(fd.number, 5) + b"\x00\x00\x00\x00" if _WIRE_TYPES[fd.type] != 5 else b""


@pytest.mark.parametrize("tp", TYPES, ids=_name)
def test_hostile_messages(tp: Any) -> None:
    stats: Counter[str] = Counter()
    odd = wrong_wire_type(_convert.proto_class(tp))

    @FUZZ
    @given(valid=valid_bytes(tp), data=st.data())
    def run(valid: bytes, data: st.DataObject) -> None:
        check_message(tp, valid, stats)  # the plan reads it (counted)
        check_message(tp, valid + odd, stats)  # the plan gives up (counted)
        for cut in some_cuts(data, valid):
            check_message(tp, cut, stats)
        raw = valid
        wellformed = data.draw(st.booleans())  # half of them get past protobuf's parser
        for _ in range(data.draw(st.integers(1, 3))):
            raw = data.draw(mutated(raw, 0, wellformed))
        check_message(tp, raw, stats)

    run()
    assert stats["ok"] + stats["error"] > 0, stats  # some survived protobuf's parser
    if planned(tp):
        assert stats["plan read"] > 0 and stats["plan gave up"] > 0, stats


UNUSED_PLANS = [n for n in sorted(PLANS) if not planned(getattr(m, n))]


@pytest.mark.parametrize("name", UNUSED_PLANS)
def test_hostile_bytes_into_plans_from_proto_does_not_use(name: str) -> None:
    """The security schemes' plans (from_proto reads a scheme through its oneof, in
    Python): still never a wrong model from any bytes."""

    @FUZZ
    @given(raw=hostile(valid_bytes(getattr(m, name), inner=True)), data=st.data())
    def run(raw: bytes, data: st.DataObject) -> None:
        check_plan(name, raw)
        for cut in some_cuts(data, raw):
            check_plan(name, cut)

    run()


# --------------------------------------------------------------------------- Struct / Value


def _struct_bytes(d: dict[str, Any]) -> bytes:
    msg = struct_pb2.Struct()
    try:
        _convert._pure_struct_into(msg, d)
    except Exception:
        return b""
    return bytes(msg.SerializeToString())


def _value_bytes(v: Any) -> bytes:
    msg = struct_pb2.Value()
    try:
        _convert._pure_value_into(msg, v)
    except Exception:
        return b""
    return bytes(msg.SerializeToString())


STRUCTS = st.dictionaries(a2a_st.texts(), a2a_st.json_values(max_leaves=12), max_size=5).map(
    _struct_bytes
)
VALUES = a2a_st.json_values(max_leaves=15).map(_value_bytes)


def check_struct_or_value(is_struct: bool, raw: bytes, stats: Counter[str]) -> None:
    pb_cls = struct_pb2.Struct if is_struct else struct_pb2.Value
    fast_fn = _convert._from_struct if is_struct else _convert._from_value
    pure_fn = _convert._pure_from_struct if is_struct else _convert._pure_from_value
    parsed = parse(pb_cls, raw)
    # (b) raw bytes straight into the C reader.
    direct = NATIVE.struct_loads(raw, REVERSE) if is_struct else NATIVE.value_loads(raw, REVERSE)
    if direct is not None and assert_protobuf_reads(pb_cls, raw):
        with pure_path():
            expected = outcome(lambda: pure_fn(parsed))
        assert_same_unordered(direct if is_struct else direct[0], expected, raw)
    if parsed is None:
        stats["rejected by protobuf"] += 1
        return
    # (a) as from_proto reads a Struct/Value member of a parsed message.
    loads = NATIVE.struct_loads if is_struct else NATIVE.value_loads
    stats["read" if loads(parsed.SerializeToString(), REVERSE) is not None else "gave up"] += 1
    fast = outcome(lambda: fast_fn(parsed))
    with pure_path():
        pure = outcome(lambda: pure_fn(parsed))
    assert_same(fast, pure)


@pytest.mark.parametrize("is_struct", [True, False], ids=["Struct", "Value"])
def test_hostile_structs_and_values(is_struct: bool) -> None:
    stats: Counter[str] = Counter()

    @settings(FUZZ, max_examples=(EXAMPLES or 30) * 4)
    @given(valid=STRUCTS if is_struct else VALUES, data=st.data())
    def run(valid: bytes, data: st.DataObject) -> None:
        for cut in some_cuts(data, valid, 8):
            check_struct_or_value(is_struct, cut, stats)
        raw = valid
        wellformed = data.draw(st.booleans())
        for _ in range(data.draw(st.integers(1, 3))):
            raw = data.draw(mutated(raw, 0, wellformed))
        check_struct_or_value(is_struct, raw, stats)

    run()
    assert stats["read"] > 0 and stats["gave up"] > 0, stats


_PARTS = [
    b"",  # no content
    ld(6, b"f.txt"),  # a filename, no content
    ld(1, b"hi") + tag(99, 0) + b"\x01" + tag(15, 1) + bytes(8) + ld(16, b"x"),  # unknown fields
    ld(1, b"hi") + tag(12, 3) + b"\x08\x01" + tag(12, 4),  # a group
    ld(1, b"hi") + ld(6, b"") + ld(7, b""),  # empty filename and media type
    ld(1, b"hi") + ld(5, b"") + ld(5, b""),  # metadata twice
    ld(1, b"hi") + tag(5, 0) + b"\x01",  # metadata as a varint
    ld(1, b"hi") + ld(2, b"\x00"),  # text then raw
    ld(2, b""),  # empty raw
    ld(3, b""),  # empty url
    ld(4, b""),  # data: a Value without a kind
    ld(4, b"\x08\x00") + ld(5, ld(1, ld(1, b"k") + ld(2, b"\x08\x00"))),  # null data, metadata
    ld(4, b"\x08\x00\x11" + bytes(8)),  # data: two kinds
    ld(1, b"a\x00b\xc3\xa9"),  # a NUL, an e acute
    ld(1, b"\xc3\x28"),  # bad UTF-8
]
_TIMESTAMPS = [
    b"",
    b"\x08\x01\x10\x01",
    tag(1, 0) + varint(-(2**63)),  # the smallest int64 second
    tag(1, 0) + varint(2**62),
    tag(2, 0) + varint(-1),  # negative nanos
    tag(2, 0) + varint(10**9),
    tag(2, 0) + varint(2**32 + 5),  # nanos keep their low 32 bits
    b"\x08\x01\x1a\x00\x25" + bytes(4),  # unknown fields
    b"\x08",  # truncated
    b"\x08\x01\x08\x02",  # seconds twice: the last one
]


@pytest.mark.parametrize("part", _PARTS, ids=repr)
def test_hostile_parts(part: bytes) -> None:
    message = pb.Message(message_id="1", role=pb.ROLE_USER).SerializeToString()
    for raw in (message + ld(5, part), message + ld(5, ld(1, b"ok")) + ld(5, part)):
        check_message(m.Message, raw, Counter())
        check_plan("Message", raw)


@pytest.mark.parametrize("timestamp", _TIMESTAMPS, ids=repr)
def test_hostile_timestamps(timestamp: bytes) -> None:
    for raw in (b"\x08\x03" + ld(3, timestamp), ld(3, timestamp) + b"\x08\x03"):
        check_message(m.TaskStatus, raw, Counter())
        check_plan("TaskStatus", raw)


@pytest.mark.parametrize("depth", [1, 98, 99, 100, 101, 102, 150, 400])
def test_deep_nesting_around_the_limit(depth: int) -> None:
    """Raw bytes (any depth), and from_proto of a message built in Python (protobuf's
    parser stops at 100 levels of messages, about 33 of JSON)."""
    raw = deep_value(depth)
    for is_struct, data in ((False, raw), (True, ld(1, ld(1, b"k") + ld(2, raw)))):
        check_struct_or_value(is_struct, data, Counter())
    if depth > 150:
        return
    value: Any = 0
    for i in range(depth):  # as deep_value
        value = {"k": value} if i % 2 else [value]
    msg = pb.Message(message_id="1", role=pb.ROLE_USER)
    _convert._pure_struct_into(msg.metadata, {"k": value})
    fast = outcome(lambda: _convert.from_proto(m.Message, msg))
    with pure_path():
        pure = outcome(lambda: _convert.from_proto(m.Message, msg))
    assert_same(fast, pure)


@pytest.mark.parametrize("size", [0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152])
def test_lengths_of_every_varint_size_are_written_alike(size: int) -> None:
    """The writer moves a member when its length needs more bytes than reserved."""
    text = "x" * size
    for value in (text, [text], {"k": {"j": [text, text]}}, [[{"": text}] * 3]):
        pure, fast = struct_pb2.Value(), struct_pb2.Value()
        _convert._pure_value_into(pure, value)
        _convert._value_into(fast, value)
        assert fast.SerializeToString() == pure.SerializeToString()
        assert NATIVE.value_loads(fast.SerializeToString(), REVERSE) == (value,)


# --------------------------------------------------------------------------- leaks


def test_no_leaks_on_valid_and_invalid_input() -> None:
    """A short run of scripts/pbwire_leaks.py (allocated blocks, refcounts of None,
    True, False, the enum members, the model classes; the script runs 1,000,000)."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "pbwire_leaks.py"
    spec = importlib.util.spec_from_file_location("pbwire_leaks", path)
    assert spec is not None and spec.loader is not None
    leaks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(leaks)
    assert leaks.check(60_000, verbose=False) == []
