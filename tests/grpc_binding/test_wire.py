"""The wire-bytes reader of ``google.protobuf.Struct``/``Value`` (``adapters.grpc._wire``).

* For every JSON value, reading the bytes upb serializes gives what the upb
  attribute walk (``_from_value``/``_from_struct``) gives.
* Any layout other than upb's canonical one raises ``Odd``, and the
  converter then falls back to the upb walk, so valid but unusual messages
  (unknown fields, a kind written twice) still decode like protobuf says.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from a2a_models import models as m
from a2a_models.adapters.grpc import _convert, _wire, from_proto, to_proto
from a2a_models.adapters.grpc._pb import a2a_pb2 as pb
from a2a_models.codec._gen import Loss
from a2a_models.errors import DecodeError, EncodeError
from a2a_models.testing import strategies as a2a_st


def _value_pb(v: Any) -> Any:
    msg = struct_pb2.Value()
    try:
        _convert._value_into(msg, v)
    except Loss:
        assume(False)
    return msg


def _same(a: Any, b: Any) -> bool:
    # NaN != NaN; compare structure and types (int vs float matters for JSON).
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(a2a_st.json_values(max_leaves=30))
def test_value_bytes_read_like_the_upb_walk(v: Any) -> None:
    msg = _value_pb(v)
    assert _same(_wire.value(msg.SerializeToString()), _convert._from_value(msg))
    assert _same(_convert._value_of(msg), _convert._from_value(msg))


@settings(max_examples=200, deadline=None)
@given(a2a_st.json_objects(max_leaves=30))
def test_struct_bytes_read_like_the_upb_walk(d: dict[str, Any]) -> None:
    msg = _value_pb(d).struct_value
    assert _same(_wire.struct_value(msg.SerializeToString()), _convert._from_struct(msg))


def test_long_strings_deep_nesting_and_non_ascii() -> None:
    # Multi-byte length varints at every level, keys included.
    d = {
        "k" * 300: "v" * 20_000,
        "ключ": ["é" * 200, {"x": [1.5, -0.0, 0, None, True, False, "🙂"]}],
        "": {"": ""},
        "big": 2.0**60,
        "inf": math.inf,
    }
    inner: Any = d
    for _ in range(40):
        inner = {"n": inner, "pad": "p" * 150}
    msg = _value_pb(inner)
    got = _wire.value(msg.SerializeToString())
    assert _same(got, _convert._from_value(msg))
    for _ in range(40):
        assert got["pad"] == "p" * 150
        got = got["n"]
    assert got["k" * 300] == "v" * 20_000 and got["ключ"][0] == "é" * 200
    assert got["big"] == 2**60 and type(got["big"]) is int  # integral doubles are ints
    assert got["inf"] == math.inf and got[""] == {"": ""}


def _entry(key: bytes, value: bytes) -> bytes:
    body = b"\x0a" + bytes([len(key)]) + key + b"\x12" + bytes([len(value)]) + value
    return b"\x0a" + bytes([len(body)]) + body


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(_entry(b"a", b"\x1a\x01x") + b"\x10\x01", id="unknown field in Struct"),
        pytest.param(_entry(b"a", b"\x1a\x01x\x20\x01"), id="two kinds in one Value"),
        pytest.param(_entry(b"a", b"\x1a\x01x\x38\x05"), id="unknown field in Value"),
        pytest.param(_entry(b"a", b"\x20\x02"), id="bool written as 2"),
        pytest.param(b"\x0a\x08\x12\x03\x1a\x01x\x0a\x01a", id="value before key (valid, unusual)"),
        pytest.param(_entry(b"a", b""), id="Value without a kind"),
        pytest.param(_entry(b"a", b"\x1a\x05x"), id="truncated string"),
        pytest.param(b"\x0a\x05\x0a\x01a", id="truncated entry"),
    ],
)
def test_unusual_layouts_are_odd(raw: bytes) -> None:
    with pytest.raises(_wire.Odd):
        _wire.struct_value(raw)


def test_unusual_but_valid_layouts_fall_back_to_upb() -> None:
    raw = (
        _entry(b"a", b"\x1a\x01x\x20\x01")  # the last kind wins: True
        + _entry(b"b", b"\x1a\x01y")
        + b"\x10\x01"  # an unknown field: kept by upb, skipped by the walk
        + b"\x0a\x08\x12\x03\x1a\x01z\x0a\x01c"  # value before key
    )
    s = struct_pb2.Struct.FromString(raw)
    assert _convert._struct_of(s) == {"a": True, "b": "y", "c": "z"}
    task = pb.Task(id="t", context_id="c", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
    task.metadata.MergeFromString(raw)
    assert from_proto(m.Task, task).metadata == {"a": True, "b": "y", "c": "z"}


def test_a_value_without_kind_is_still_a_decode_error() -> None:
    part = pb.Part()
    part.data.SetInParent()
    msg = pb.Message(message_id="m", role=pb.ROLE_USER, parts=[part])
    with pytest.raises(DecodeError, match=r"parts\[0\]\.data"):
        from_proto(m.Message, msg)


@given(st.data())
@settings(max_examples=50, deadline=None)
def test_parts_decode_through_the_wire_reader(data: st.DataObject) -> None:
    part = data.draw(a2a_st.data_parts())
    try:
        raw = to_proto(part).SerializeToString()
    except EncodeError:  # an integer a double cannot hold
        assume(False)
    assert from_proto(m.Part, pb.Part.FromString(raw)) == part
