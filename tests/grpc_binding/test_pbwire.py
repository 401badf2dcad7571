"""The compiled Struct/Value reader and writer (``_pbwire``) agree with the pure functions.

For JSON values from the strategies and for edge cases (numbers a double
cannot hold, -0.0, NaN, lone surrogates, tuples, deep nesting, non-JSON
values, a Value without a kind): the same messages when writing, the same
values (types and key order included) when reading, and the same errors.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from a2a_models.adapters.grpc import _convert
from a2a_models.codec.facts import Fail, Loss
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


@pytest.mark.parametrize("value", EDGES, ids=lambda v: repr(v)[:30])
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
