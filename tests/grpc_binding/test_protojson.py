"""The 0.3 gRPC conversion's generated ProtoJSON (``_protojson``) against ``json_format``,
which it replaced on the common path and which still decides everything else.

Before, every 0.3 request and result went through ``json_format.MessageToDict`` /
``ParseDict`` (~15 µs a short message); the counts below are what tells the two apart.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.adapters.grpc._pb import a2a_v03_pb2 as pb
from a2a_models.adapters.grpc._protojson import ProtoJSON, Refused, _timestamp_fill
from a2a_models.adapters.grpc._v03 import (
    _PROTOJSON,
    BY_OPERATION,
    RPCS,
    _check_doubles,
    _from_doubles,
    _from_json,
    _to_json,
    request_message,
    result_of,
)
from a2a_models.errors import EncodeError
from a2a_models.protocol import METHODS, V0_3, encode_rest_result
from a2a_models.testing import strategies as a2a_st

SETTINGS = settings(max_examples=40, suppress_health_check=list(HealthCheck), deadline=None)


def _reference_message(wire: Any, cls: Any) -> Any:
    """What the old path made of ``wire`` (None: it refused it)."""
    try:
        _check_doubles(wire, "$")
        return json_format.ParseDict(wire, cls())
    except (EncodeError, json_format.ParseError):
        return None


def _agrees(wire: Any, cls: Any) -> None:
    """The generated functions answer for ``wire`` exactly as json_format does, both ways."""
    expected = _reference_message(wire, cls)
    if expected is None:  # the old path refused it: the new one must not answer either
        with pytest.raises(Exception):  # noqa: B017  (Refused, Loss, protobuf's errors)
            _PROTOJSON.from_dict(wire, cls)
        return
    got = _PROTOJSON.from_dict(wire, cls)  # answers: json_format is not called
    assert got == expected
    assert _PROTOJSON.to_dict(got) == _from_doubles(json_format.MessageToDict(expected))


RESULT_OPERATIONS = [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "GetExtendedAgentCard",
]


def test_every_03_message_has_its_functions() -> None:
    names = set(pb.DESCRIPTOR.message_types_by_name)
    assert len(names) == 45
    generated = ProtoJSON(pb.DESCRIPTOR)
    for name in names:
        message = getattr(pb, name)()
        assert generated.to_dict(message) == {} == json_format.MessageToDict(message)
        assert generated.from_dict({}, getattr(pb, name)) == message


@pytest.mark.parametrize("operation", RESULT_OPERATIONS)
def test_results_convert_as_json_format_does(operation: str) -> None:
    rpc = BY_OPERATION[operation]
    spec = METHODS[operation]

    @SETTINGS
    @given(a2a_st.strategy_for(spec.result_type, "0.3-http"))
    def check(result: Any) -> None:
        try:
            wire = encode_rest_result(spec, result, V0_3)
        except EncodeError:  # what 0.3 cannot express at all
            return
        _agrees(wire, rpc.response)

    check()


@pytest.mark.parametrize("rpc", RPCS, ids=lambda rpc: rpc.name)
def test_requests_convert_as_json_format_does(rpc: Any) -> None:
    @SETTINGS
    @given(a2a_st.strategy_for(rpc.spec.params_type, "0.3-http"))
    def check(params: Any) -> None:
        try:
            wire = rpc.message(params)
        except (ValueError, EncodeError):  # no 0.3 resource name, no 0.3 form
            return
        _agrees(wire, rpc.request)

    check()


def _task(messages: int, **metadata: Any) -> m.Task:
    history = tuple(
        m.Message.user(f"turn {i}") if i % 2 == 0 else m.Message.agent(f"got turn {i}")
        for i in range(messages)
    )
    return m.Task(
        id="t-1",
        context_id="c-1",
        status=m.TaskStatus(state=m.TaskState.INPUT_REQUIRED),
        history=history,
        metadata=metadata or None,
    )


@pytest.fixture
def json_format_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"ParseDict": 0, "MessageToDict": 0}
    for name in calls:
        real = getattr(json_format, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(json_format, name, counted)
    return calls


def test_the_common_path_does_not_call_json_format(json_format_calls: dict[str, int]) -> None:
    get = BY_OPERATION["GetTask"]
    task = _task(1000, trace={"n": 1, "x": 1.5, "tags": ["a", None, True]})
    raw = get.encode_result(task)
    wire = encode_rest_result(METHODS["GetTask"], task, V0_3)
    assert json_format_calls == {"ParseDict": 0, "MessageToDict": 0}  # old code: 1 ParseDict
    assert pb.Task.FromString(raw) == json_format.ParseDict(wire, pb.Task())
    json_format_calls["ParseDict"] = 0
    assert result_of(get, pb.Task.FromString(raw)) == task
    send = BY_OPERATION["SendMessage"]
    sent = m.SendMessageRequest(
        message=m.Message.user("hi"),
        configuration=m.SendMessageConfiguration(history_length=2, return_immediately=False),
        metadata={"n": 1},
    )
    assert send.decode_request(request_message(send, sent).SerializeToString()) == sent
    # old code: 1 MessageToDict (result_of), 1 ParseDict and 1 MessageToDict (the request)
    assert json_format_calls == {"ParseDict": 0, "MessageToDict": 0}


def test_json_format_decides_what_the_generated_functions_refuse(
    json_format_calls: dict[str, int],
) -> None:
    cases: list[tuple[dict[str, Any], Any]] = [
        ({"messageId": "m", "unknown": 1}, pb.Message),  # not a field
        ({"message_id": "m"}, pb.Message),  # the proto name: json_format reads it
        ({"historyLength": "3", "name": "tasks/t"}, pb.GetTaskRequest),  # "3" for an int32
        ({"historyLength": 3.0, "name": "tasks/t"}, pb.GetTaskRequest),
        ({"blocking": 1}, pb.SendMessageConfiguration),  # an int for a bool: refused
        ({"role": 2}, pb.Message),  # an enum by number
        ({"text": "a", "file": {"fileWithUri": "u"}}, pb.Part),  # two members of a oneof
        ({"text": "a", "file": None}, pb.Part),  # ...one of them null
        ({"metadata": {"x": math.nan}}, pb.Message),  # JSON has no NaN
        ({"content": {"text": "a"}}, pb.Message),  # not a list
        ({"extensions": "abc"}, pb.Message),
    ]
    for wire, cls in cases:
        with pytest.raises(Exception):  # noqa: B017
            _PROTOJSON.from_dict(wire, cls)
        try:
            expected: Any = json_format.ParseDict(wire, cls())
        except json_format.ParseError as exc:
            expected = str(exc)
        try:
            got: Any = _from_json(wire, cls)
        except json_format.ParseError as exc:
            got = str(exc)
        assert got == expected, wire
    assert json_format_calls["ParseDict"] == 2 * len(cases)


def test_json_format_decides_the_messages_the_generated_functions_refuse() -> None:
    kindless = pb.Message(message_id="m")
    kindless.metadata.fields["k"].SetInParent()  # a Value without a kind: json_format's null
    nan = pb.Message(message_id="m")
    nan.metadata.fields["k"].number_value = math.nan
    for message in (kindless, nan):
        with pytest.raises(Exception):  # noqa: B017
            _PROTOJSON.to_dict(message)
        try:
            expected: Any = _from_doubles(json_format.MessageToDict(message))
        except (ValueError, json_format.Error) as exc:
            expected = str(exc)
        try:
            got: Any = _to_json(message)
        except (ValueError, json_format.Error) as exc:
            got = str(exc)
        assert got == expected


def test_what_the_generated_functions_answer_for_odd_messages() -> None:
    unknown_role = pb.Message(message_id="m", role=7)  # proto3 enums are open
    empty_text = pb.Part(text="")  # a oneof member at its default is still set
    empty_file = pb.Part(file=pb.FilePart(file_with_bytes=b"\xfb\xff"))
    status = pb.TaskStatus(state=pb.TASK_STATE_WORKING)
    status.timestamp.FromJsonString("2026-01-02T03:04:05.123456789Z")
    struct = pb.Message(message_id="m")
    struct.metadata.update({"n": 3.0, "neg0": -0.0, "big": 1e300, "l": [1.0, "a", None]})
    extra = pb.StreamResponse(task=pb.Task(id="t")).SerializeToString() + b"\x80\xf1\x04\x05"
    odd = [
        unknown_role,
        empty_text,
        empty_file,
        status,
        struct,
        pb.StreamResponse.FromString(extra),  # an event id in field 10000: ignored
        pb.SendMessageResponse(msg=pb.Message(message_id="m")),
        pb.AgentCard(
            security_schemes={"k": pb.SecurityScheme(api_key_security_scheme={"name": "n"})},
            security=[pb.Security(schemes={"k": pb.StringList(list=["a"])})],
        ),
    ]
    for message in odd:
        expected = _from_doubles(json_format.MessageToDict(message))
        got = _PROTOJSON.to_dict(message)
        assert got == expected
        assert _from_json(got, type(message)) == json_format.ParseDict(expected, type(message)())
    assert _PROTOJSON.to_dict(empty_file)["file"]["fileWithBytes"] == base64.b64encode(
        b"\xfb\xff"
    ).decode("ascii")
    assert type(_PROTOJSON.to_dict(struct)["metadata"]["neg0"]) is float
    # json_format reads base64 of either alphabet, padded or not
    for text in ("-_8", "+/8=", "+/8", ""):
        wire = {"fileWithBytes": text, "mimeType": "a/b"}
        assert _PROTOJSON.from_dict(wire, pb.FilePart) == json_format.ParseDict(wire, pb.FilePart())


def test_refused_is_what_the_generated_functions_raise() -> None:
    with pytest.raises(Refused):
        _PROTOJSON.from_dict({"nope": 1}, pb.Task)
    with pytest.raises(Refused):
        _PROTOJSON.from_dict([], pb.Task)


@SETTINGS
@given(
    a2a_st.timestamps().map(
        lambda d: codec.to_wire(m.TaskStatus(state=m.TaskState.WORKING, timestamp=d), "0.3-http")[
            "timestamp"
        ]
    )
    | st.sampled_from(
        [
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59.999999999Z",
            "2024-02-29T12:00:00.5Z",
            "2026-02-29T12:00:00Z",  # no such day
            "2026-01-02T24:00:00Z",
            "2026-01-02T03:60:00Z",
            "2026-01-02T03:04:60Z",
            "2026-01-02T03:04:05.Z",
            "2026-01-02T03:04:05.1234567891Z",
            "2026-01-02T03:04:05+01:00",
            "2026-1-2T3:4:5Z",
            "０２０２-01-02T03:04:05Z",  # not ASCII digits
        ]
    )
)
def test_timestamps_fill_as_from_json_string(text: str) -> None:
    def outcome(fill: Any) -> Any:
        ts = pb.TaskStatus().timestamp
        try:
            fill(ts)
        except ValueError as exc:
            return type(exc), str(exc)
        return ts.seconds, ts.nanos

    expected = outcome(lambda ts: ts.FromJsonString(text))
    assert outcome(lambda ts: _timestamp_fill(ts, text)) == expected
    status = pb.TaskStatus()
    if not isinstance(expected[0], type):
        _timestamp_fill(status.timestamp, text)
        assert status.HasField("timestamp")  # set even at the epoch
