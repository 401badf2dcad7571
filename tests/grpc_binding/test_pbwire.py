"""The compiled gRPC accelerator (``_pbwire``) agrees with the pure functions.

Struct/Value reader and writer, and whole-message plans (``_pbplans``).

For JSON values from the strategies and for edge cases (numbers a double
cannot hold, -0.0, NaN, lone surrogates, tuples, deep nesting, non-JSON
values, a Value without a kind): the same messages when writing, the same
values (types and key order included) when reading, and the same errors.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from a2a_models import models as m
from a2a_models.adapters.grpc import _convert
from a2a_models.adapters.grpc._pb import a2a_pb2 as pb
from a2a_models.codec.facts import Fail, Loss
from a2a_models.errors import EncodeError
from a2a_models.testing import assert_identical
from a2a_models.testing import strategies as a2a_st

if _convert._pbwire is None:
    if os.environ.get("A2A_REQUIRE_ACCEL") == "1" and os.environ.get("A2A_CODEC_PURE") != "1":
        raise RuntimeError("A2A_REQUIRE_ACCEL=1 but the accelerator (_pbwire) is not built")
    pytest.skip("the compiled accelerator is not built", allow_module_level=True)


def typed(x: Any) -> Any:
    """``x`` with every value tagged by its type, key order kept (== then compares all)."""
    if isinstance(x, dict):
        return ("dict", [(k, typed(v)) for k, v in x.items()])
    if isinstance(x, list | tuple):
        return (type(x).__name__, [typed(v) for v in x])
    if isinstance(x, float) and math.isnan(x):
        return ("float", "nan")
    if isinstance(x, float):
        return ("float", x, math.copysign(1.0, x))
    return (type(x).__name__, x)


def result(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("ok", call())
    except (Fail, Loss) as exc:
        return ("error", type(exc), getattr(exc, "expected", getattr(exc, "problem", "")), exc.path)
    except Exception as exc:  # e.g. UnicodeEncodeError of a lone surrogate: the same one
        return ("error", type(exc), str(exc))


def check_struct(d: Any) -> None:
    pure_msg, fast_msg = struct_pb2.Struct(), struct_pb2.Struct()
    pure = result(lambda: _convert._pure_struct_into(pure_msg, d))
    fast = result(lambda: _convert._struct_into(fast_msg, d))
    assert pure == fast
    if pure[0] == "ok":
        assert fast_msg == pure_msg
        assert fast_msg.SerializeToString() == pure_msg.SerializeToString()
        check_read_struct(pure_msg)


def check_read_struct(msg: Any) -> None:
    pure = result(lambda: _convert._pure_from_struct(msg))
    fast = result(lambda: _convert._from_struct(msg))
    assert pure[0] == fast[0]
    if pure[0] == "ok":
        assert typed(fast[1]) == typed(pure[1])
    else:
        assert pure == fast


def check_value(v: Any) -> None:
    pure_msg, fast_msg = struct_pb2.Value(), struct_pb2.Value()
    pure = result(lambda: _convert._pure_value_into(pure_msg, v))
    fast = result(lambda: _convert._value_into(fast_msg, v))
    assert pure == fast
    if pure[0] == "ok":
        assert fast_msg == pure_msg
        back_pure = result(lambda: _convert._pure_from_value(pure_msg))
        back_fast = result(lambda: _convert._from_value(pure_msg))
        assert back_pure[0] == back_fast[0] == "ok"
        assert typed(back_fast[1]) == typed(back_pure[1])


@given(value=a2a_st.json_values(max_leaves=30, surrogates=True))
def test_json_values_agree(value: Any) -> None:
    check_value(value)
    check_struct({"v": value, "w": [value, {"x": value}]})


@given(d=st.dictionaries(st.text(), a2a_st.json_values(), max_size=6))
def test_structs_agree(d: dict[str, Any]) -> None:
    check_struct(d)


def _deep(n: int) -> Any:
    v: Any = 1
    for i in range(n):
        v = {"k": v} if i % 2 else [v]
    return v


EDGES = [
    0,
    -0.0,
    0.0,
    1.5,
    2**53,
    -(2**53),
    2**53 + 1,  # no exact double: a Loss on both paths
    2**60,  # exact as a double: kept on both
    10**400,
    float("nan"),
    float("inf"),
    -float("inf"),
    "",
    "\ud800",
    "é\x00",
    True,
    False,
    None,
    [],
    {},
    (1, "a"),
    [[[]]],
    {"": {"": None}},
    {1: "x"},
    {"s": {1, 2}},
    [object()],
    b"bytes",
    _deep(10),
    _deep(300),
]


def _edge_id(value: Any) -> str:
    # no object address: every process (pytest-xdist's workers) must name the cases alike
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))[:30]


@pytest.mark.parametrize("value", EDGES, ids=_edge_id)
def test_edge_values_agree(value: Any) -> None:
    check_value(value)
    if isinstance(value, dict):
        check_struct(value)
    check_struct({"v": value})


def test_a_value_without_a_kind_fails_alike() -> None:
    msg = struct_pb2.Struct()
    msg.fields["empty"].SetInParent()  # a Value with no kind set
    msg.fields["ok"].string_value = "x"
    check_read_struct(msg)
    value = struct_pb2.Value()
    assert result(lambda: _convert._from_value(value)) == result(
        lambda: _convert._pure_from_value(value)
    )


# --------------------------------------------------------------------------- whole messages


_PLANS: dict[str, Any] = _convert._NS.get("_PLANS", {})
PLANNED = sorted(name for name, plan in _PLANS.items() if plan is not None)


def test_the_hot_messages_have_plans() -> None:
    for name in ("Task", "Message", "Artifact", "TaskStatus", "TaskStatusUpdateEvent"):
        assert name in PLANNED
        assert _convert._DECODERS[getattr(m, name)] is not _convert._NS[f"_from_{name}"]


def _fields(msg: Any) -> list[tuple[Any, Any]]:
    """(message, field descriptor) of every set field, at every depth."""
    out = []
    for fd, value in msg.ListFields():
        out.append((msg, fd))
        if fd.message_type is not None and not fd.message_type.full_name.startswith("google."):
            items = value if fd.is_repeated else [value]
            for item in items:
                if hasattr(item, "ListFields"):
                    out += _fields(item)
    return out


def _mutate(msg: Any, target: tuple[Any, Any], how: int) -> None:
    holder, fd = target
    if how == 0 or fd.is_repeated or fd.message_type is not None:
        holder.ClearField(fd.name)
    elif fd.type == fd.TYPE_ENUM:
        setattr(holder, fd.name, [0, 1, 7, 99][how % 4])
    elif fd.type == fd.TYPE_STRING:
        setattr(holder, fd.name, "")
    elif fd.type == fd.TYPE_INT32:
        setattr(holder, fd.name, -how)
    else:
        holder.ClearField(fd.name)


@pytest.mark.parametrize("name", PLANNED)
@given(data=st.data())
def test_message_plans_agree(name: str, data: st.DataObject) -> None:
    cls = getattr(m, name)
    x = data.draw(a2a_st.strategy_for(cls, "1.0"), label="value")
    try:
        msg = _convert.to_proto(x)
    except EncodeError:  # what protobuf cannot carry (big integers in Structs...)
        return
    if type(msg).DESCRIPTOR.name != name:  # a security scheme: its oneof wrapper
        msg = getattr(msg, msg.WhichOneof(msg.DESCRIPTOR.oneofs[0].name))
    pure = _convert._NS[f"_from_{name}"]
    # As from_proto reads a message: the bytes of the parsed message (a Struct's
    # map order is the parsed message's, see _pbwire.c).
    parsed = getattr(pb, name).FromString(msg.SerializeToString())
    fast = _PLANS[name].loads(parsed.SerializeToString())
    assert fast is not None  # a valid message: the plan reads it
    assert_identical(fast, pure(parsed))
    # Mutated into (often) invalid messages: the plan agrees or gives up.
    targets = _fields(msg)
    if targets:
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            _mutate(msg, data.draw(st.sampled_from(targets)), data.draw(st.integers(0, 7)))
        parsed = getattr(pb, name).FromString(msg.SerializeToString())
        expected = result(lambda: pure(parsed))
        fast = _PLANS[name].loads(parsed.SerializeToString())
        if fast is not None:
            assert expected[0] == "ok", expected
            assert_identical(fast, expected[1])
        # The decoder from_proto uses: the same model, or the same error.
        if _convert._DECODERS[cls].__qualname__ == "_first.<locals>.decode":
            got = result(lambda: _convert._DECODERS[cls](parsed))
            assert got[0] == expected[0]
            if got[0] == "ok":
                assert_identical(got[1], expected[1])
            else:
                assert got == expected


# --------------------------------------------------------------------------- hostile bytes
# (regressions found by test_pbwire_fuzz.py)


def _ld(number: int, payload: bytes) -> bytes:
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_a_map_entry_with_an_unknown_field_is_not_in_the_struct() -> None:
    # upb keeps such an entry as an unknown field of the Struct, out of the map,
    # and writes it back: the C read it as a member ({"k": ""} instead of {}).
    for extra in (b"\x18\x01", b"\x08\x01", b"\x15\x00\x00\x00\x00", _ld(3, b"x")):
        entry = _ld(1, b"k") + _ld(2, b"\x1a\x00") + extra  # "k": "" + an unknown field
        struct = struct_pb2.Struct.FromString(
            _ld(1, entry) + _ld(1, _ld(1, b"j") + _ld(2, b"\x20\x01"))
        )
        assert list(struct.fields) == ["j"]
        assert _convert._from_struct(struct) == _convert._pure_from_struct(struct) == {"j": True}
        # as a server reads a client's Message
        raw = _convert.to_proto(
            m.Message(message_id="1", role=m.Role.USER, parts=(m.TextPart("hi"),))
        )
        msg = pb.Message.FromString(raw.SerializeToString() + _ld(6, _ld(1, entry)))
        assert _convert.from_proto(m.Message, msg).metadata == {}


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out) + bytes([n])


@pytest.mark.parametrize("number", [0, 2**29, 2**32 + 1, 2**61 - 1])
def test_field_numbers_protobuf_rejects_give_up(number: int) -> None:
    # The C skipped field 0 and cast larger numbers to int: 2**32 + 1 read as field 1.
    valid = pb.TaskStatus(state=pb.TASK_STATE_WORKING).SerializeToString()
    for raw in (valid + _varint(number << 3) + b"\x03", _varint(number << 3) + b"\x03" + valid):
        with pytest.raises(Exception):  # noqa: B017 - protobuf's DecodeError
            pb.TaskStatus.FromString(raw)
        assert _PLANS["TaskStatus"].loads(raw) is None
    assert _convert._pbwire.struct_loads(_varint(number << 3) + b"\x01", True) is None
    assert _convert._pbwire.value_loads(_varint(number << 3) + b"\x01", True) is None


def test_a_member_twice_gives_up() -> None:
    # Protobuf merges a message field given twice and keeps a map's last entry of a
    # key: the C took the last list (losing the first's items), the first key.
    null = _ld(6, _ld(1, b"\x08\x00"))  # list_value [null]
    entry = _ld(1, b"k") + _ld(2, b"\x20\x01")
    for is_struct, raw in (
        (False, null + null),  # a list twice: [None, None] in protobuf
        (False, _ld(5, b"") + _ld(5, _ld(1, entry))),  # a struct twice
        (True, _ld(1, entry) + _ld(1, _ld(1, b"k") + _ld(2, b"\x1a\x01x"))),  # "k" twice
        (True, _ld(1, entry + _ld(2, b"\x1a\x00"))),  # an entry with two values
    ):
        parsed = (struct_pb2.Struct if is_struct else struct_pb2.Value).FromString(raw)
        loads = _convert._pbwire.struct_loads if is_struct else _convert._pbwire.value_loads
        assert loads(raw, True) is None, raw
        read = _convert._from_struct if is_struct else _convert._from_value
        pure = _convert._pure_from_struct if is_struct else _convert._pure_from_value
        assert typed(read(parsed)) == typed(pure(parsed))
    raw = _convert.to_proto(m.DataPart(data=[None])).SerializeToString()
    message = pb.Message(message_id="1", role=pb.ROLE_USER).SerializeToString()
    twice = message + _ld(5, raw + raw)  # one part, its data twice: merged in protobuf
    assert pb.Message.FromString(twice).parts[0].data.list_value.values.__len__() == 2
    assert _PLANS["Message"].loads(twice) is None


def test_an_int32_or_none_reads_its_low_32_bits() -> None:
    # No plan has an "int32 or None" field today; the C tested "or None" on all 64
    # bits, so 2**32 (0 as protobuf reads an int32) gave 0 instead of None.
    import attrs

    @attrs.define(slots=True)
    class Box:
        n: Any = None
        k: Any = None

    native = _convert._pbwire
    plan = native.MsgPlan(Box)
    plan.setup(
        (
            (1, native.Q_INT, native.M_OPT, Box.__dict__["n"], True),  # int32
            (2, native.Q_INT, native.M_OPT, Box.__dict__["k"], False),  # int64
        ),
        (),
    )
    for value, int32, int64 in (
        (2**32, None, 2**32),
        (2**32 + 7, 7, 2**32 + 7),
        (2**64 - 1, -1, -1),
    ):
        got = plan.loads(b"\x08" + _varint(value) + b"\x10" + _varint(value))
        assert (got.n, got.k) == (int32, int64)


@pytest.mark.parametrize("kind", ["dict", "list", "mixed"])
def test_values_deeper_than_protobuf_parses_are_written(kind: str) -> None:
    # The C wrote up to 100 JSON levels and the message parsed those bytes: past
    # about 33 levels (100 messages) protobuf refused them and to_proto raised its
    # DecodeError, where the pure path writes member by member.
    for depth in (30, 31, 32, 33, 34, 40, 60, 120):
        v: Any = 0
        for i in range(depth):
            as_dict = kind == "dict" or (kind == "mixed" and i % 2)
            v = {"k": v} if as_dict else [v]
        msg = m.Message(
            message_id="1", role=m.Role.USER, parts=(m.DataPart(data=v),), metadata={"k": v}
        )
        assert _convert.from_proto(m.Message, _convert.to_proto(msg)) == msg
        check_value(v)
        check_struct({"k": v})
