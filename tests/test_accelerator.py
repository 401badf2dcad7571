"""The compiled codec accelerator gives exactly the pure codec's results and errors.

Every codec test module also runs on both paths (the ``codec_path`` fixture);
this module compares the two paths directly, value by value: the same bytes
when encoding (in the value's own dialect and, lossy or not, in the others),
identical models when decoding, and the same ``DecodeError`` (path and
message) for payloads mutated into invalid ones. It also checks that the plans
cover the classes (a plan that silently fell back to the pure function would
still agree, but would not be fast).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.codec import _fast
from a2a_models.codec._converters import Dialect, get_namespace
from a2a_models.codec._gen import is_generated, resolve
from a2a_models.errors import DecodeError, EncodeError
from a2a_models.testing import assert_identical
from a2a_models.testing import strategies as a2a_st

JSON_DIALECTS = ("1.0", "0.3", "0.3-http")
#: Set by scripts/test.sh (which builds it): the accelerator must be there.
REQUIRE_ACCEL = os.environ.get("A2A_REQUIRE_ACCEL") == "1"


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


def outcome(call: Callable[[], Any], *, pure: bool) -> tuple[Any, ...]:
    """``call()`` on one codec path: ("ok", result) or ("error", type, message)."""
    os.environ["A2A_CODEC_PURE"] = "1" if pure else "0"
    codec._reset()
    try:
        return ("ok", call())
    except (DecodeError, EncodeError) as exc:
        return ("error", type(exc), str(exc))
    finally:
        del os.environ["A2A_CODEC_PURE"]
        codec._reset()


def agree(call: Callable[[], Any]) -> tuple[Any, ...]:
    """Run ``call`` on both paths; assert the same outcome; return it."""
    pure, fast = outcome(call, pure=True), outcome(call, pure=False)
    assert pure[0] == fast[0], (pure, fast)
    if pure[0] == "ok" and isinstance(pure[1], bytes | dict | list):
        assert pure[1] == fast[1]
    elif pure[0] == "ok":
        assert_identical(fast[1], pure[1])
    else:
        assert pure == fast
    return pure


def _matrix() -> list[Any]:
    return [
        pytest.param(tp, dialect, id=f"{dialect}-{getattr(tp, '__name__', tp)}")
        for dialect in JSON_DIALECTS
        for tp in (*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES)
        if a2a_st.expressible(tp, dialect)
    ]


@pytest.mark.parametrize(("tp", "dialect"), _matrix())
@given(data=st.data())
def test_valid_values_encode_and_decode_alike(tp: Any, dialect: str, data: st.DataObject) -> None:
    x = data.draw(a2a_st.strategy_for(tp, dialect), label="value")
    as_type = tp if tp in a2a_st.UNION_TYPES else None
    encoded = agree(lambda: codec.encode(x, dialect, as_type=as_type))
    assert encoded[0] == "ok"
    back = agree(lambda: codec.decode(tp, encoded[1], dialect))
    assert back[0] == "ok"
    assert back[1] == x
    agree(lambda: codec.to_dict(x, as_type=as_type))


@pytest.mark.parametrize("lossy", [False, True])
@given(data=st.data())
def test_other_dialects_lose_alike(lossy: bool, data: st.DataObject) -> None:
    """A 1.0 value in the 0.3 dialects (and back): the same losses, or the same bytes."""
    source, target = data.draw(
        st.sampled_from([("1.0", "0.3"), ("1.0", "0.3-http"), ("0.3", "1.0")]), label="dialects"
    )
    tp = data.draw(st.sampled_from([m.Task, m.Message, m.AgentCard, m.SendMessageRequest]))
    x = data.draw(a2a_st.strategy_for(tp, source), label="value")
    agree(lambda: codec.encode(x, target, lossy=lossy))


_JUNK = [None, "", "x", 0, -1, 2**40, 1.5, True, False, [], [{}], {}, {"x": 1}, "2025-13-01"]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _mutate(wire: Any, path: tuple[Any, ...], how: str, junk: Any) -> Any:
    """A copy of ``wire`` with the member at ``path`` replaced, deleted, aliased or joined."""
    if not path:
        return junk
    wire = orjson.loads(orjson.dumps(wire))  # a deep copy
    parent = wire
    for seg in path[:-1]:
        parent = parent[seg]
    last = path[-1]
    if how == "replace" or not isinstance(parent, dict):
        parent[last] = junk
    elif how == "delete":
        del parent[last]
    elif how == "alias":
        # The snake_case spelling next to (or instead of) the camelCase one.
        snake = "".join("_" + c.lower() if c.isupper() else c for c in last)
        parent[snake] = parent[last]
        if junk is None:
            del parent[last]
    else:
        parent["unknownMember"] = junk
    return wire


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@given(data=st.data())
def test_mutated_payloads_fail_alike(dialect: str, data: st.DataObject) -> None:
    tp = data.draw(st.sampled_from([m.Task, m.Message, m.AgentCard, m.SendMessageRequest]))
    if not a2a_st.expressible(tp, dialect):
        return
    x = data.draw(a2a_st.strategy_for(tp, dialect), label="value")
    wire = orjson.loads(codec.encode(x, dialect))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        path = data.draw(st.sampled_from(list(_paths(wire))), label="path")
        how = data.draw(st.sampled_from(["replace", "delete", "alias", "unknown"]), label="how")
        wire = _mutate(wire, path, how, data.draw(st.sampled_from(_JUNK), label="junk"))
    payload = orjson.dumps(wire)
    for strict in (False, True):
        agree(lambda: codec.decode(tp, payload, dialect, strict=strict))  # noqa: B023
    agree(lambda: codec.from_wire(tp, wire, dialect))


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.3-http", "python"])
def test_every_generated_class_has_a_plan(dialect: str) -> None:
    """No class silently stays on the pure path (which would agree, but slowly)."""
    from a2a_models.codec import _speedups  # type: ignore[attr-defined]

    ns = get_namespace(Dialect(dialect), False)
    for name in ns["_SPECS"]:
        for encode, get in ((False, _fast.decoder), (True, _fast.encoder)):
            fn = resolve(ns[f"_{'u' if encode else 's'}_{name}"])
            plan = get(ns, name, dialect)
            if is_generated(fn):
                assert isinstance(plan, _speedups.Plan), (name, encode)
                assert plan.fallback is fn
                assert plan.direct, (name, encode)  # the bytes-direct path runs it too
            elif name == "Part" and dialect in ("1.0", "0.3"):
                assert isinstance(plan, _speedups.PartPlan)
            else:
                assert plan is fn  # a hand-written hook stays itself


def test_the_environment_variable_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert codec.accelerated()
    monkeypatch.setenv("A2A_CODEC_PURE", "1")
    assert not codec.accelerated()
    codec._reset()
    try:
        _, fn, read = codec._decoder(m.Task, "1.0", False)
        assert is_generated(fn)
        assert read is None  # no bytes-direct reader either
        task = m.Task(id="t", status=m.TaskStatus(state=m.TaskState.WORKING))
        assert codec._encoder(task, "1.0", None)[2] is None  # nor writer
    finally:
        monkeypatch.delenv("A2A_CODEC_PURE")
        codec._reset()
    assert type(codec._decoder(m.Task, "1.0", False)[1]).__name__ == "Plan"


_MSG = {"role": "ROLE_USER", "parts": [{"text": "hi"}], "messageId": "m1"}
_MSG03 = {
    "kind": "message",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
    "messageId": "m1",
}
_CARD_CAPS = {"streaming": True, "stateTransitionHistory": 0}
_EDGES: list[tuple[Any, str, Any]] = [
    (m.Message, "1.0", _MSG),
    (m.Message, "1.0", {**_MSG, "role": 1}),  # ProtoJSON enum numbers: the pure path
    (m.Message, "1.0", {**_MSG, "role": "ROLE_NOPE"}),
    (m.Message, "1.0", {**_MSG, "messageId": ""}),
    (m.Message, "1.0", {**_MSG, "parts": []}),
    (m.Message, "1.0", {**_MSG, "parts": ()}),
    (m.Message, "1.0", {**_MSG, "message_id": "m2"}),
    (m.Message, "1.0", {**_MSG, "contextId": "", "taskId": None, "extensions": []}),
    (m.Message, "1.0", {**_MSG, "parts": [{"text": "a", "metadata": None}]}),
    (m.Message, "1.0", {**_MSG, "parts": [{"text": "a", "metadata": []}]}),
    (m.Message, "1.0", {**_MSG, "parts": [{"data": 1, "metadata": {"k": 1}}]}),
    (m.Message, "1.0", {**_MSG, "parts": [{"data": None}]}),
    (m.Message, "1.0", {**_MSG, "parts": [{"text": "a", "data": 1}]}),
    (m.Message, "1.0", {**_MSG, "parts": [{"text": 1}]}),
    (m.Message, "1.0", {**_MSG, "parts": [{"url": "https://x", "mediaType": ""}]}),
    (m.AgentCapabilities, "1.0", _CARD_CAPS),  # 0 is not false
    (m.AgentCapabilities, "1.0", {"streaming": False, "stateTransitionHistory": False}),
    (m.AgentExtension, "1.0", {"uri": "u", "required": 0.0}),
    (m.Task, "1.0", {"id": "t", "status": {"state": "TASK_STATE_WORKING"}, "history": {}}),
    (m.Task, "1.0", {"id": "t", "status": {"state": "TASK_STATE_WORKING", "timestamp": "x"}}),
    (m.Task, "1.0", {"id": "t", "status": {"state": "TASK_STATE_UNSPECIFIED"}}),
    (m.Message, "0.3", _MSG03),
    (m.Message, "0.3", {**_MSG03, "kind": "task"}),
    (m.Message, "0.3", {**_MSG03, "parts": [{"kind": "text", "text": "a", "metadata": {}}]}),
    (m.Message, "0.3", {**_MSG03, "parts": [{"kind": "data", "data": [1]}]}),
    (m.Message, "0.3", {**_MSG03, "parts": [{"kind": "data", "data": {}, "metadata": None}]}),
    (m.Message, "0.3", {**_MSG03, "parts": [{"text": "no kind"}]}),
    (m.Message, "0.3", {**_MSG03, "parts": []}),
    (m.Message, "0.3-http", {"role": "ROLE_USER", "content": [{"text": "a"}], "messageId": "m"}),
]


@pytest.mark.parametrize(("tp", "dialect", "wire"), _EDGES)
def test_edge_payloads_agree(tp: Any, dialect: str, wire: Any) -> None:
    payload = orjson.dumps(wire)
    for strict in (False, True):
        agree(lambda: codec.decode(tp, payload, dialect, strict=strict))  # noqa: B023
    agree(lambda: codec.from_wire(tp, wire, dialect))
    decoded = outcome(lambda: codec.decode(tp, payload, dialect), pure=True)
    if decoded[0] == "ok":
        agree(lambda: codec.encode(decoded[1], dialect))
