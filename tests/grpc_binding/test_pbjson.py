"""The compiled ProtoJSON -> bytes writer of the 0.3 gRPC path (``_pbjson``, ``_pbwire.JsonPlan``)
against the path it short-cuts: ``_protojson``'s fill functions (then ``json_format``) and
protobuf's ``SerializeToString``.

What the writer answers must be those very bytes; where a ``Struct`` holds more than
one entry, protobuf writes its entries in its hash table's order and the writer in the
dict's, so there the parsed messages (and their deterministic bytes) must be equal.
What it does not answer (None) goes to the fill path, unchanged.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.adapters.grpc import _convert
from a2a_models.adapters.grpc._pb import a2a_v03_pb2 as pb
from a2a_models.adapters.grpc._v03 import (
    _DUMPS,
    _PROTOJSON,
    BY_OPERATION,
    _from_json,
    _serialize,
    result_of,
)
from a2a_models.errors import EncodeError
from a2a_models.protocol import METHODS, V0_3, encode_rest_result
from a2a_models.testing import strategies as a2a_st

pytestmark = pytest.mark.skipif(
    not _DUMPS, reason="the compiled accelerator is not built (scripts/build_accel.py)"
)
SETTINGS = settings(max_examples=60, suppress_health_check=list(HealthCheck), deadline=None)
SRC = Path(__file__).resolve().parents[2] / "src"


def _multi_entry_struct(value: Any, in_struct: bool = False) -> bool:
    """Whether ``value`` holds a Struct (a JSON object under a Struct field) of 2+ entries."""
    if value.__class__ is dict:
        if in_struct and len(value) > 1:
            return True
        return any(
            _multi_entry_struct(v, in_struct or k in ("metadata", "data", "params", "header"))
            for k, v in value.items()
        )
    if value.__class__ is list:
        return any(_multi_entry_struct(v, in_struct) for v in value)
    return False


def _pure(wire: Any, cls: Any) -> Any:
    """The fill path's message, or the exception it raises."""
    try:
        return _from_json(wire, cls)
    except Exception as exc:
        return exc


def _check(wire: Any, cls: Any) -> bytes | None:
    """The writer's bytes for ``wire`` are the fill path's (None: it gave up)."""
    got = _DUMPS[cls](wire)
    if got is None:
        return None
    expected = _pure(wire, cls)
    assert not isinstance(expected, Exception), (wire, expected)
    if not _multi_entry_struct(wire):
        assert got == expected.SerializeToString()
    parsed = cls.FromString(got)
    assert parsed == expected
    assert parsed.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )
    # parsed in the dict's order, the message's table is the fill path's: the same bytes
    assert parsed.SerializeToString() == expected.SerializeToString()
    return got


RESULTS = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
]


@pytest.mark.parametrize("operation", RESULTS)
def test_results_are_written_as_the_fill_path_serializes_them(operation: str) -> None:
    rpc, spec = BY_OPERATION[operation], METHODS[operation]
    answered = []

    @SETTINGS
    @given(a2a_st.strategy_for(spec.result_type, "0.3-http"))
    def check(result: Any) -> None:
        try:
            wire = encode_rest_result(spec, result, V0_3)
        except EncodeError:  # what 0.3 cannot express at all
            return
        written = _check(wire, rpc.response)
        expected = _pure(wire, rpc.response)
        if isinstance(expected, Exception):  # the fill path's error, as before
            with pytest.raises(type(expected)):
                rpc.encode_result(result)
        else:
            answered.append(written is not None)
            assert rpc.encode_result(result) == _serialize(wire, rpc.response)

    check()
    # the common case is the writer's (what it leaves: mostly integers beyond 2**53)
    assert sum(answered) > len(answered) // 2


# ProtoJSON of a 0.3 Message written directly: every part kind, odd values included.
_keys = st.sampled_from(["a", "", "é", "𝄞", "metadata", "0"])
_metadata = a2a_st.json_objects(max_leaves=12)
_parts = st.one_of(
    st.fixed_dictionaries({"text": a2a_st.texts()}),
    st.fixed_dictionaries(
        {"file": st.fixed_dictionaries({}, optional={"fileWithUri": a2a_st.texts()})},
    ),
    st.fixed_dictionaries(
        {
            "file": st.fixed_dictionaries(
                {"fileWithBytes": st.sampled_from(["", "YQ==", "-_8", "+/8=", "aGk", "!!"])},
                optional={"mimeType": a2a_st.texts()},
            )
        }
    ),
    st.fixed_dictionaries({"data": st.fixed_dictionaries({}, optional={"data": _metadata})}),
)
_messages = st.fixed_dictionaries(
    {},
    optional={
        "messageId": a2a_st.texts(surrogates=True),
        "contextId": a2a_st.texts(),
        "taskId": st.none() | a2a_st.texts(),
        "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED"]),
        "content": st.lists(_parts, max_size=4),
        "metadata": _metadata | st.dictionaries(_keys, a2a_st.json_values(), max_size=3),
        "extensions": st.lists(a2a_st.texts(), max_size=3),
    },
)
# the codec's 0.3 form of any timestamp a model holds
_timestamps = a2a_st.timestamps().map(
    lambda d: codec.to_wire(m.TaskStatus(state=m.TaskState.WORKING, timestamp=d), "0.3-http")[
        "timestamp"
    ]
)


@SETTINGS
@given(_messages)
def test_messages_are_written_as_the_fill_path_serializes_them(wire: dict[str, Any]) -> None:
    _check(wire, pb.Message)
    event = {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}}
    event["statusUpdate"]["status"]["message"] = wire  # type: ignore[index]
    _check(event, pb.StreamResponse)


@SETTINGS
@given(_timestamps | st.sampled_from(["1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z"]))
def test_timestamps_read_as_from_json_string(text: str) -> None:
    got = _check({"timestamp": text}, pb.TaskStatus)
    assert got is not None, text  # the codec's form: always the writer's
    for fraction in ("", ".5", ".123", ".123456", ".000000001", ".999999999"):
        variant = text[:19] + fraction + "Z"
        assert _check({"timestamp": variant, "state": "TASK_STATE_FAILED"}, pb.TaskStatus)


@pytest.mark.parametrize(
    ("wire", "cls"),
    [
        ({"messageId": "m", "unknown": 1}, pb.Message),  # not a field
        ({"message_id": "m"}, pb.Message),  # the proto name: json_format reads it
        ({"historyLength": "3", "name": "tasks/t"}, pb.GetTaskRequest),  # "3" for an int32
        ({"historyLength": 3.0, "name": "tasks/t"}, pb.GetTaskRequest),  # a float for an int
        ({"historyLength": True, "name": "tasks/t"}, pb.GetTaskRequest),  # a bool for an int
        ({"historyLength": 2**31, "name": "tasks/t"}, pb.GetTaskRequest),  # out of int32
        ({"historyLength": -(2**31) - 1}, pb.GetTaskRequest),
        ({"blocking": 1}, pb.SendMessageConfiguration),  # an int for a bool
        ({"role": 2}, pb.Message),  # an enum by number
        ({"role": "ROLE_NOBODY"}, pb.Message),  # a name the enum lacks
        ({"text": "a", "file": {"fileWithUri": "u"}}, pb.Part),  # two members of a oneof
        ({"text": "a", "file": None}, pb.Part),  # ...one of them null
        ({"metadata": {"x": math.nan}}, pb.Message),  # JSON has no NaN
        ({"metadata": {"x": [math.inf]}}, pb.Message),
        ({"metadata": {"x": 2**53 + 1}}, pb.Message),  # a double cannot hold it
        ({"metadata": {"x": {1: 2}}}, pb.Message),  # a key that is not a string
        ({"metadata": [1]}, pb.Message),  # a Struct that is no object
        ({"content": {"text": "a"}}, pb.Message),  # not a list
        ({"content": ["a"]}, pb.Message),  # a part that is no object
        ({"extensions": "abc"}, pb.Message),
        ({"extensions": ["a", 1]}, pb.Message),
        ({"messageId": "\ud800"}, pb.Message),  # a lone surrogate
        ({"messageId": 5}, pb.Message),
        ({"fileWithBytes": "a"}, pb.FilePart),  # not base64
        ({"fileWithBytes": b"YQ=="}, pb.FilePart),
        ({"timestamp": "2026-01-02T03:04:05+01:00"}, pb.TaskStatus),  # an offset
        ({"timestamp": "2026-01-02t03:04:05Z"}, pb.TaskStatus),  # lowercase 't'
        ({"timestamp": "2026-02-29T03:04:05Z"}, pb.TaskStatus),  # no such day
        ({"timestamp": "2026-01-02T03:04:60Z"}, pb.TaskStatus),  # a leap second
        ({"timestamp": "2026-01-02T03:04:05.1234567891Z"}, pb.TaskStatus),  # 10 digits
        ({"timestamp": "2026-01-02T03:04:05.Z"}, pb.TaskStatus),
        ({"timestamp": "2026-1-2T3:4:5Z"}, pb.TaskStatus),  # strptime reads it
        ({"timestamp": "0000-01-02T03:04:05Z"}, pb.TaskStatus),
        ({"timestamp": 0}, pb.TaskStatus),
        ({"status": []}, pb.Task),  # a message that is no object
        ({"task": {"id": "t"}, "message": {}}, pb.StreamResponse),
    ],
)
def test_what_the_writer_leaves_to_the_fill_path(wire: dict[str, Any], cls: Any) -> None:
    assert _DUMPS[cls](wire) is None
    expected = _pure(wire, cls)
    try:
        got: Any = _serialize(wire, cls)
    except Exception as exc:
        assert isinstance(expected, Exception)
        assert type(exc) is type(expected) and str(exc) == str(expected)
    else:
        assert got == expected.SerializeToString()


def test_subclasses_of_the_json_classes_are_left_to_the_fill_path() -> None:
    class Str(str):
        pass

    class Dict(dict[str, Any]):
        pass

    for wire in (
        {"messageId": Str("m")},
        {Str("messageId"): "m"},
        {"metadata": Dict(a=1)},
        {"metadata": {"a": Str("x")}},
        {"content": [Dict(text="a")]},
        {"extensions": ("a",)},
    ):
        assert _DUMPS[pb.Message](wire) is None
        expected = _pure(wire, pb.Message)
        if not isinstance(expected, Exception):
            assert _serialize(wire, pb.Message) == expected.SerializeToString()
    assert _DUMPS[pb.Message](Dict(messageId="m")) is None


def test_defaults_presence_and_oneof_members() -> None:
    cases: list[tuple[dict[str, Any], Any]] = [
        ({}, pb.Task),
        ({"id": "", "contextId": "", "history": [], "artifacts": None}, pb.Task),  # unset
        ({"status": {}}, pb.Task),  # a set message, empty
        ({"metadata": {}}, pb.Task),  # an empty Struct, set
        ({"text": ""}, pb.Part),  # a oneof member at its default: set
        ({"file": {"fileWithBytes": ""}}, pb.Part),
        ({"file": {"fileWithUri": ""}}, pb.Part),
        ({"data": {}}, pb.Part),
        ({"role": "ROLE_UNSPECIFIED", "extensions": ["", ""]}, pb.Message),
        ({"blocking": False, "historyLength": 0}, pb.SendMessageConfiguration),
        ({"blocking": True, "historyLength": -1}, pb.SendMessageConfiguration),  # 10 bytes
        ({"historyLength": 2**31 - 1, "acceptedOutputModes": ["a"]}, pb.SendMessageConfiguration),
        ({"timestamp": "1969-12-31T23:59:59.5Z"}, pb.TaskStatus),  # negative seconds
        ({"timestamp": "9999-12-31T23:59:59.999999999Z"}, pb.TaskStatus),
        (
            {"metadata": {"": None, "f": False, "z": 0, "n": -0.0, "e": "", "l": [], "o": {}}},
            pb.Message,
        ),
        ({"metadata": {"big": 2**53, "small": -(2**53), "x": 1e300, "u": "é𝄞"}}, pb.Message),
        ({"messageId": "x" * 300, "content": [{"text": "y" * 20000}]}, pb.Message),  # long lengths
        ({"message": {"messageId": "m"}}, pb.SendMessageResponse),
        ({"artifactUpdate": {"artifact": {"parts": []}, "append": True}}, pb.StreamResponse),
        (
            {"configs": [{"name": "n", "pushNotificationConfig": {"url": "u"}}]},
            pb.ListTaskPushNotificationConfigResponse,
        ),
    ]
    for wire, cls in cases:
        assert _check(wire, cls) is not None, wire


def test_deep_structs_are_left_to_the_fill_path() -> None:
    deep: Any = 1
    for _ in range(60):
        deep = {"k": [deep]}
    assert _DUMPS[pb.Message]({"metadata": deep}) is None
    assert (
        _serialize({"metadata": deep}, pb.Message)
        == _from_json({"metadata": deep}, pb.Message).SerializeToString()
    )
    shallow: Any = 1
    for _ in range(15):  # 5 messages a level (Struct, entry, Value, ListValue, Value)
        shallow = {"k": [shallow]}
    assert _check({"metadata": shallow}, pb.Message) is not None


def test_a_long_task_is_the_writers_and_reads_back() -> None:
    history = tuple(
        m.Message.user(f"turn {i}") if i % 2 == 0 else m.Message.agent(f"got turn {i}")
        for i in range(1000)
    )
    task = m.Task(
        id="t-1",
        context_id="c-1",
        status=m.TaskStatus(state=m.TaskState.INPUT_REQUIRED, timestamp=datetime.now(UTC)),
        history=history,
        metadata={"n": 1, "tags": ["a", None, True]},
    )
    get = BY_OPERATION["GetTask"]
    wire = encode_rest_result(METHODS["GetTask"], task, V0_3)
    raw = get.encode_result(task)
    assert raw == _check(wire, pb.Task)
    assert result_of(get, pb.Task.FromString(raw)) == task


def test_messages_with_maps_have_no_plan() -> None:
    names = {cls.DESCRIPTOR.name for cls in _DUMPS}
    assert {"AgentCard", "AgentSkill", "Security", "OAuthFlows"}.isdisjoint(names)
    assert {"Task", "Message", "StreamResponse", "SendMessageResponse"} <= names
    card = BY_OPERATION["GetExtendedAgentCard"]
    assert card.response not in _DUMPS


def test_a_plan_refuses_a_bad_table() -> None:
    native = _convert._pbwire
    plan = native.JsonPlan()
    assert plan.dumps({"a": "x"}) is None  # not set up: gives up
    for fields, error in [
        ((("a", 1, 99, 0, None),), ValueError),  # no such kind
        ((("a", 2, native.J_STR, 0, None), ("b", 1, native.J_STR, 0, None)), ValueError),
        ((("a", 1, native.J_STR, 9, None),), ValueError),  # oneof out of range
        ((("a", 1, native.J_MSG, 0, None),), TypeError),  # a message without its plan
        ((("a", 1, native.J_ENUM, 0, None),), TypeError),
        ((("a", 1, native.J_BYTES, 0, None),), TypeError),
        ((("a",) * 5,), TypeError),
    ]:
        with pytest.raises(error):
            native.JsonPlan().setup(fields)
    plan.setup((("a", 1, native.J_STR, 0, None),))
    assert plan.dumps({"a": "x"}) == b"\x0a\x01x"
    with pytest.raises(RuntimeError):
        plan.setup(())


def test_the_pure_binding_has_no_writer() -> None:
    code = (
        "from a2a_models.adapters.grpc import _v03, _convert\n"
        "from a2a_models import models as m\n"
        "assert _convert._pbwire is None and not _v03._DUMPS\n"
        "get = _v03.BY_OPERATION['GetTask']\n"
        "task = m.Task(id='t', context_id='c', status=m.TaskStatus(state=m.TaskState.WORKING),"
        " history=(m.Message.user('hi'),), metadata={'a': 1, 'b': [True]})\n"
        "print(get.encode_result(task).hex())\n"
    )
    env = {**os.environ, "A2A_CODEC_PURE": "1", "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    raw = bytes.fromhex(out.stdout.strip())
    task = result_of(BY_OPERATION["GetTask"], pb.Task.FromString(raw))
    assert task.metadata == {"a": 1, "b": [True]}
    assert task.history[0].parts[0].text == "hi"
    wire = encode_rest_result(METHODS["GetTask"], task, V0_3)
    assert pb.Task.FromString(_serialize(wire, pb.Task)) == pb.Task.FromString(raw)


def test_the_fill_path_still_answers_without_the_writer() -> None:
    wire = {"id": "t", "status": {"state": "TASK_STATE_WORKING"}, "metadata": {"a": 1}}
    assert _PROTOJSON.from_dict(wire, pb.Task).SerializeToString() == _DUMPS[pb.Task](wire)
