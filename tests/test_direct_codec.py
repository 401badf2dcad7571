"""The accelerator's bytes-direct reader and writer agree with the existing path.

``codec.decode(T, bytes)`` and ``codec.encode(obj)`` first try the compiled
reader/writer (``codec/_read.c``, ``codec/_write.c``), which scan or write the JSON bytes
through the plans without the wire dicts, and give up (return None) on
anything but the valid, common path. Here every outcome is compared with the
existing path on the same input (``_json.loads`` + dict plans, dict plans +
``orjson.dumps``): equal models or the same ``DecodeError``, the same bytes
or the same ``EncodeError``; valid values, payloads mutated at the byte and
the member level, generic JSON text, and inputs the reader must refuse.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_accelerator import _JUNK, _matrix, _paths
from test_accelerator import _mutate as _mutate_copy

from a2a_models import codec
from a2a_models import models as m
from a2a_models.codec import _fast
from a2a_models.errors import DecodeError, EncodeError
from a2a_models.testing import assert_identical
from a2a_models.testing import strategies as a2a_st

REQUIRE_ACCEL = os.environ.get("A2A_REQUIRE_ACCEL") == "1"
DIRECT_DIALECTS = ("1.0", "0.3", "0.3-http")


@pytest.fixture(scope="module", autouse=True)
def _built() -> Iterator[None]:
    saved = os.environ.pop("A2A_CODEC_PURE", None)
    codec._reset()
    if not codec.accelerated():
        if REQUIRE_ACCEL:
            pytest.fail("A2A_REQUIRE_ACCEL=1 but the codec accelerator is not built")
        pytest.skip("the codec accelerator is not built (python scripts/build_accel.py)")
    yield
    if saved is not None:
        os.environ["A2A_CODEC_PURE"] = saved
    codec._reset()


@contextlib.contextmanager
def existing_path() -> Iterator[None]:
    """The codec without the bytes-direct reader and writer (dict plans + JSON)."""
    codec._reset()
    try:
        with (
            mock.patch.object(_fast, "reader", lambda plan: None),
            mock.patch.object(_fast, "writer", lambda plan: None),
        ):
            yield
    finally:
        codec._reset()


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("ok", call())
    except (DecodeError, EncodeError) as exc:
        return ("error", type(exc), str(exc))


def agree(call: Callable[[], Any]) -> tuple[Any, ...]:
    """``call`` with and without the direct path: the same outcome (returned)."""
    direct = outcome(call)
    with existing_path():
        old = outcome(call)
    assert direct[0] == old[0], (direct, old)
    if direct[0] == "ok" and not isinstance(old[1], bytes):
        assert_identical(direct[1], old[1])
    else:
        assert direct == old
    return old


def reader(tp: Any, dialect: str) -> Any:
    read = codec._decoder(tp, dialect, False)[2]
    assert read is not None, (tp, dialect)
    return read


def writer(obj: Any, dialect: str, as_type: Any = None) -> Any:
    write = codec._encoder(obj, dialect, as_type)[2]
    assert write is not None, (type(obj), dialect)
    return write


def decode_agrees(tp: Any, payload: bytes | str, dialect: str) -> tuple[Any, ...]:
    """Public decode agrees; the reader, when it does not give up, gives the same model."""
    old = agree(lambda: codec.decode(tp, payload, dialect))
    got = codec._decoder(tp, dialect, False)[2]
    if got is not None:
        result = got(payload)
        if result is not None and isinstance(tp, type) and isinstance(result, tp):
            assert old[0] == "ok", (payload, old)
            assert_identical(result, old[1])
    return old


def _mutate(wire: Any, path: tuple[Any, ...], how: str, junk: Any) -> Any:
    """test_accelerator's mutation, on a deep copy (the wire may hold big integers)."""
    with (
        mock.patch.object(orjson, "loads", lambda b: b),
        mock.patch.object(orjson, "dumps", copy.deepcopy),
    ):
        return _mutate_copy(wire, path, how, junk)


# --------------------------------------------------------------------------- payload text


def _emit_str(s: str, draw: Any) -> str:
    """A JSON string of ``s``, each character plain or escaped (at random)."""
    out = ['"']
    for ch in s:
        cp = ord(ch)
        how = draw(st.integers(0, 9)) if cp >= 0x20 else 0
        if ch in '"\\' or cp < 0x20 or how == 0:
            short = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "/": "\\/"}.get(ch)
            if short is not None and draw(st.booleans()):
                out.append(short)
            elif cp > 0xFFFF:
                hi, lo = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
                out.append(f"\\u{hi:04x}\\u{lo:04X}")
            else:
                out.append(f"\\u{cp:04x}" if draw(st.booleans()) else f"\\u{cp:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _emit_float(x: float, draw: Any) -> str:
    if not math.isfinite(x):
        return draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999"]))
    forms = [repr(x), f"{x:.17e}", f"{x:.17g}", f"{x:e}".replace("e+0", "E"), f"{x:.3f}"]
    text = draw(st.sampled_from(forms))
    if "." not in text and "e" not in text.lower() and "n" not in text:
        text += ".0"
    return text


def emit(v: Any, draw: Any, *, dup: bool = True) -> str:
    """JSON text of ``v`` with random white space, escapes, number forms and
    (``dup``) duplicated object members."""
    ws = lambda: draw(st.sampled_from(["", "", "", " ", "\n", "\t ", "\r\n  "]))  # noqa: E731
    if v is None or isinstance(v, bool):
        return {None: "null", True: "true", False: "false"}[v]
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _emit_float(v, draw)
    if isinstance(v, str):
        return _emit_str(v, draw)
    if isinstance(v, list | tuple):
        return "[" + ws() + ",".join(ws() + emit(x, draw, dup=dup) + ws() for x in v) + "]"
    items = [
        ws() + _emit_str(k, draw) + ws() + ":" + ws() + emit(x, draw, dup=dup) + ws()
        for k, x in v.items()
    ]
    if dup and items and draw(st.integers(0, 5)) == 0:
        k = draw(st.sampled_from(list(v)))
        items.insert(
            draw(st.integers(0, len(items))),
            _emit_str(k, draw)
            + ":"
            + emit(draw(st.sampled_from([None, 1, "x", [], {}])), draw, dup=False),
        )
    return "{" + ws() + ",".join(items) + "}"


# --------------------------------------------------------------------------- valid values


@pytest.mark.parametrize(("tp", "dialect"), _matrix())
@given(data=st.data())
@settings(max_examples=40)
def test_valid_values_read_and_write_alike(tp: Any, dialect: str, data: st.DataObject) -> None:
    x = data.draw(a2a_st.strategy_for(tp, dialect), label="value")
    as_type = tp if tp in a2a_st.UNION_TYPES else None
    with existing_path():
        old = outcome(lambda: codec.encode(x, dialect, as_type=as_type))
    assert old[0] == "ok"
    write = codec._encoder(x, dialect, as_type)[2]
    if write is not None:
        written = write(x)
        assert written is None or written == old[1]
    assert agree(lambda: codec.encode(x, dialect, as_type=as_type)) == old
    back = decode_agrees(tp, old[1], dialect)
    assert back[0] == "ok" and back[1] == x
    decode_agrees(tp, old[1].decode("utf-8", "surrogatepass"), dialect)


@pytest.mark.parametrize("dialect", DIRECT_DIALECTS)
@given(data=st.data())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_rewritten_text_reads_alike(dialect: str, data: st.DataObject) -> None:
    """The same members written with white space, escapes, other number forms, duplicates."""
    tp = data.draw(st.sampled_from([m.Task, m.Message, m.AgentCard, m.SendMessageRequest]))
    if not a2a_st.expressible(tp, dialect):
        return
    x = data.draw(a2a_st.strategy_for(tp, dialect), label="value")
    with existing_path():
        wire = orjson.loads(codec.encode(x, dialect))
    text = emit(wire, data.draw)
    decode_agrees(tp, text.encode("utf-8", "surrogatepass"), dialect)


@pytest.mark.parametrize("dialect", DIRECT_DIALECTS)
@given(data=st.data())
def test_mutated_members_read_alike(dialect: str, data: st.DataObject) -> None:
    """Wrong types, deletions, aliases and unknown members at every path."""
    tp = data.draw(st.sampled_from([m.Task, m.Message, m.AgentCard, m.SendMessageRequest]))
    if not a2a_st.expressible(tp, dialect):
        return
    x = data.draw(a2a_st.strategy_for(tp, dialect), label="value")
    with existing_path():
        wire = orjson.loads(codec.encode(x, dialect))
    junk = [*_JUNK, 2**63, -(2**63) - 1, 10**30, 1e300, -0.0, "\u0000", {"a": [[[]]]}]
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        path = data.draw(st.sampled_from(list(_paths(wire))), label="path")
        how = data.draw(st.sampled_from(["replace", "delete", "alias", "unknown"]), label="how")
        wire = _mutate(wire, path, how, data.draw(st.sampled_from(junk), label="junk"))
    decode_agrees(tp, emit(wire, data.draw).encode("utf-8", "surrogatepass"), dialect)


@pytest.mark.parametrize("dialect", DIRECT_DIALECTS)
@given(data=st.data())
def test_mutated_bytes_read_alike(dialect: str, data: st.DataObject) -> None:
    """Truncated bytes, flipped bytes, inserted and deleted bytes."""
    tp = data.draw(st.sampled_from([m.Task, m.Message, m.SendMessageRequest]))
    if not a2a_st.expressible(tp, dialect):
        return
    x = data.draw(a2a_st.strategy_for(tp, dialect), label="value")
    with existing_path():
        payload = bytearray(codec.encode(x, dialect))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        at = data.draw(st.integers(0, len(payload)), label="at")
        how = data.draw(st.sampled_from(["truncate", "flip", "insert", "delete"]), label="how")
        if how == "truncate":
            del payload[at:]
        elif how == "flip" and at < len(payload):
            payload[at] ^= data.draw(st.sampled_from([1, 0x20, 0x40, 0x80, 0xFF]))
        elif how == "insert":
            payload[at:at] = data.draw(
                st.sampled_from(
                    [
                        b" ",
                        b",",
                        b"}",
                        b"]",
                        b'"',
                        b"\\",
                        b"\x00",
                        b"\xc3",
                        b"\xff",
                        b"\xed\xa0\x80",
                        b"0",
                        b"-",
                        b"e",
                        b"1e400",
                        b"null",
                        b"\n",
                    ]
                )
            )
        elif at < len(payload):
            del payload[at]
    decode_agrees(tp, bytes(payload), dialect)


# --------------------------------------------------------------------------- generic JSON


def _json_values(*, finite: bool = False) -> st.SearchStrategy[Any]:
    """Any JSON value; ``finite``: no NaN or infinity (what the models take)."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.integers(-(10**18), 10**18)
        | st.floats(allow_nan=not finite, allow_infinity=not finite)
        | st.floats(min_value=-1e-300, max_value=1e-300)
        | st.text(max_size=8)
        | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=8)
    )
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=5), children, max_size=4)
        ),
        max_leaves=20,
    )


_JSON = _json_values()
_TASK = '{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":%s}'
_TASK03 = '{"kind":"task","id":"t","contextId":"c","status":{"state":"working"},"metadata":%s}'


@given(data=st.data(), value=st.dictionaries(st.text(max_size=5), _JSON, max_size=5))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_generic_json_in_metadata_reads_as_orjson(data: st.DataObject, value: Any) -> None:
    """Arbitrary JSON text in a free-form member: read as orjson.loads reads it, or given up."""
    text = emit(value, data.draw)
    template, dialect = data.draw(st.sampled_from([(_TASK, "1.0"), (_TASK03, "0.3")]))
    payload = (template % text).encode("utf-8", "surrogatepass")
    try:
        expected: Any = ("ok", orjson.loads(text.encode("utf-8", "surrogatepass")))
    except orjson.JSONDecodeError:
        expected = ("error",)
    got = reader(m.Task, dialect)(payload)
    if got is not None:
        assert expected[0] == "ok", text
        assert got.metadata == expected[1]
        assert orjson.dumps(got.metadata) == orjson.dumps(expected[1])  # key order, -0.0
    decode_agrees(m.Task, payload, dialect)


@given(st.binary(max_size=40))
def test_random_bytes_read_alike(raw: bytes) -> None:
    for payload in (raw, b'{"role":"ROLE_USER","parts":[{"text":"' + raw + b'"}],"messageId":"m"}'):
        decode_agrees(m.Message, payload, "1.0")


_META = b'{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"k":%s}}'
_REFUSED = [
    b"[1,]",
    b'{"a":1,}',
    b"01",
    b"-",
    b"+1",
    b"1.",
    b".5",
    b"1e",
    b"1e+",
    b"-01",
    b"0x10",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"-1e400",
    b"tru",
    b"nul",
    b"True",
    b"None",
    b'"\\ud800"',
    b'"\\udc00"',
    b'"\\ud800\\u0041"',
    b'"\\ud83d"',
    b'"a\x01"',
    b'"\x1f"',
    b'"\t"',
    b'"\\x41"',
    b'"\\u12"',
    b'"\\u12G4"',
    b'"\xff"',
    b'"\xc3"',
    b'"\xed\xa0\x80"',
    b'"\xc0\x80"',
    b'"\xf4\x90\x80\x80"',
    b"12345678901234567890",
    b"-9223372036854775809",
    b"1234567890123456789",
    b"[" * 100 + b"]" * 100,
    b'{"a":' * 70 + b"1" + b"}" * 70,
    b'"abc',
    b"[1 2]",
    b'{"a" 1}',
    b"{1:2}",
    b"'a'",
    b"[1]]",
    b"\x00",
    b'{"a":1,"b":2,"a":3}',  # a name twice: refused at its path, not read last-wins
    b'{"a":1,"\\u0061":2}',
]


@pytest.mark.parametrize("value", _REFUSED)
def test_the_reader_refuses_what_it_must(value: bytes) -> None:
    """Invalid JSON (and what might not fit): the reader gives up, the existing path decides."""
    payload = _META % value
    assert reader(m.Task, "1.0")(payload) is None
    decode_agrees(m.Task, payload, "1.0")


@pytest.mark.parametrize(
    "payload",
    [
        b'\xef\xbb\xbf{"id":"t","status":{"state":"TASK_STATE_WORKING"}}',
        b'{"id":"t","status":{"state":"TASK_STATE_WORKING"}} x',
        b'{"id":"t","status":{"state":"TASK_STATE_WORKING"}}\x00',
        b'{"id":"t","id":"u","status":{"state":"TASK_STATE_WORKING"}}',
        b'{"i\\u0064":"t","status":{"state":"TASK_STATE_WORKING"}}',
        b'{"id":"t","status":{"state":"TASK_STATE_WORKING"},"context_id":"c"}',
        b'{"id":"t","status":{"state":"TASK_STATE_WORKING","state":"TASK_STATE_FAILED"}}',
    ],
)
def test_model_objects_give_up_on_the_unusual(payload: bytes) -> None:
    assert reader(m.Task, "1.0")(payload) is None
    decode_agrees(m.Task, payload, "1.0")


@pytest.mark.parametrize(
    "value",
    [
        b"0",
        b"-0",
        b"-0.0",
        b"1E2",
        b"1.0e+2",
        b"1e-400",
        b"123456789012345678",
        b"-123456789012345678",
        b"5e-324",
        b"1.7976931348623157e308",
        b"0.1",
        b'"\\ud83d\\ude00"',
        b'"\\u00e9\\u20AC"',
        b'"\x7f"',
        b'"\xf0\x9f\x98\x80"',
        b'"\\/\\b\\f\\n\\r\\t\\"\\\\"',
        b'{"a":1,"b":2,"A":3}',
        b'{"\\u0061":1}',
        b" [ 1 , { } , [ ] ] ",
    ],
)
def test_the_reader_takes_valid_json_as_orjson(value: bytes) -> None:
    payload = _META % value
    got = reader(m.Task, "1.0")(payload)
    assert got is not None
    expected = orjson.loads(value)
    assert got.metadata == {"k": expected}
    assert orjson.dumps(got.metadata) == orjson.dumps({"k": expected})
    decode_agrees(m.Task, payload, "1.0")


# --------------------------------------------------------------------------- the writer

_T0 = datetime(2025, 6, 1, 12, 0, 0, 123000, tzinfo=UTC)


def _task(meta: Any = None, data: Any = None) -> m.Task:
    parts = [
        m.Part.text('hé "q" \\ \n \u2028 😀'),
        m.Part.data(data if data is not None else {"a": 1}),
    ]
    parts.append(m.Part.file(raw=b"\x00\x01binary", media_type="image/png", filename="x.png"))
    parts.append(m.Part.file(url="https://x/y.pdf"))
    msg = m.Message(
        role=m.Role.USER, parts=parts, message_id="m1", context_id="c", task_id="t", metadata=meta
    )
    return m.Task(
        id="t",
        context_id="c",
        history=[msg],
        status=m.TaskStatus(state=m.TaskState.WORKING, message=msg, timestamp=_T0),
        artifacts=[m.Artifact(artifact_id="a", parts=parts, metadata=meta)],
        metadata=meta,
    )


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_the_direct_path_is_taken_for_a_typical_task(dialect: str) -> None:
    """A Task with every part shape is read and written without giving up."""
    task = _task({"n": 1, "f": 0.5, "l": [True, None, "x"], "o": {"é": -3}})
    data = writer(task, dialect)(task)
    assert data is not None
    with existing_path():
        assert codec.encode(task, dialect) == data
    back = reader(m.Task, dialect)(data)
    assert back is not None and back == task


_ODD_META = [
    {"f": 1e16},
    {"f": 1e-5},
    {"f": -0.0},
    {"f": 5e-324},
    {"f": 1.7976931348623157e308},
    {"f": math.nan},
    {"f": math.inf},
    {"i": 2**63 - 1},
    {"i": -(2**63)},
    {"i": 2**63},
    {"i": 2**64},
    {"i": -(2**63) - 1},
    {"s": "\ud800"},
    {"s": "a\udfffb"},
    {"\ud800": 1},
    {1: "non-string key"},
    {"t": (1, 2)},
    {"b": b"bytes"},
    {"e": m.Role.USER},
    {"d": _T0},
    {"c": "".join(map(chr, range(0x20))) + "\x7f"},
    {"x": [[[[[]]]]]},
    {"set": {1}},
    {"sub": type("S", (str,), {})("x")},
    {"sub": type("I", (int,), {})(1)},
    {"bool": True},
]


@pytest.mark.parametrize("meta", _ODD_META, ids=range(len(_ODD_META)))
@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.3-http"])
def test_odd_free_form_values_write_alike(meta: Any, dialect: str) -> None:
    """The same bytes or the same EncodeError (the writer gives up on the unusual)."""
    task = _task()
    # (past the models' own checks, as a caller's mutable value could get there)
    for obj in (task, task.history[0], task.artifacts[0]):
        object.__setattr__(obj, "metadata", meta)
    object.__setattr__(task.history[0].parts[1], "data", meta)
    agree(lambda: codec.encode(task, dialect))
    agree(lambda: codec.encode(task, dialect, lossy=True))


@given(value=_json_values(finite=True))  # the models refuse NaN and the infinities
def test_generic_values_write_as_orjson(value: Any) -> None:
    task = _task({"v": value}, data={"v": value})
    agree(lambda: codec.encode(task, "1.0"))


def test_deep_free_form_values_write_alike() -> None:
    deep: Any = 1
    for _ in range(80):
        deep = [deep]
    agree(lambda: codec.encode(_task({"d": deep}), "1.0"))
    agree(lambda: codec.decode(m.Task, codec.encode(_task({"d": deep}), "1.0"), "1.0"))


_TIMESTAMPS = [
    datetime(2025, 6, 1, 12, 0, 5, tzinfo=UTC),
    datetime(2025, 6, 1, 12, 0, 5, 123000, tzinfo=UTC),
    datetime(2025, 6, 1, 12, 0, 5, 123456, tzinfo=UTC),
    datetime(2025, 6, 1, 12, 0, 5, 1, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
    datetime(2025, 6, 1, 12, 0, 5, 5000, tzinfo=timezone(timedelta(hours=2))),
    datetime(2025, 6, 1, 12, 0, 5, tzinfo=timezone(timedelta(0), "other UTC")),
    m.Timestamp.with_nanoseconds(datetime(2025, 6, 1, 12, 0, 5, 123456, tzinfo=UTC), 789),
]


@pytest.mark.parametrize("when", _TIMESTAMPS, ids=range(len(_TIMESTAMPS)))
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_timestamps_write_alike(when: datetime, dialect: str) -> None:
    """The writer formats UTC datetimes itself; every other one goes through the formatter."""
    task = _task()
    object.__setattr__(task.status, "timestamp", when)
    assert agree(lambda: codec.encode(task, dialect))[0] == "ok"
    assert writer(task, dialect)(task) is not None


def test_plans_of_the_other_direction_are_refused() -> None:
    """read() of an encoder plan, write() of a decoder plan: None (memory-safe, unused)."""
    from a2a_models.codec import _speedups  # type: ignore[attr-defined]

    task = _task()
    data = codec.encode(task, "1.0")
    dec = codec._decoder(m.Task, "1.0", False)[1]
    enc = codec._encoder(task, "1.0", None)[0]
    assert _speedups.read(enc, data) is None and _speedups.write(dec, task) is None
    assert _speedups.read(dec, data) == task and _speedups.write(enc, task) == data
    assert _speedups.read(object(), data) is None and _speedups.write(object(), task) is None
