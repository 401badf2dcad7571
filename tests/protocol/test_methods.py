"""Method tables, params decoding, result encoding/decoding, request building."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_models import models as m
from a2a_models.errors import (
    EncodeError,
    InvalidAgentResponseError,
    InvalidParamsError,
    MethodNotFoundError,
    VersionNotSupportedError,
)
from a2a_models.protocol import (
    METHODS,
    MethodSpec,
    Request,
    build_request,
    decode_params,
    decode_result,
    encode_request,
    encode_result,
    method_for,
    parse_message,
)

# (1.0 name, 0.3 name, params type, result type, streaming, handler)
TABLE: list[tuple[str, str | None, type[Any], Any, bool, str]] = [
    (
        "SendMessage",
        "message/send",
        m.SendMessageRequest,
        m.SendMessageResponse,
        False,
        "on_send_message",
    ),
    (
        "SendStreamingMessage",
        "message/stream",
        m.SendMessageRequest,
        m.StreamResponse,
        True,
        "on_send_streaming_message",
    ),
    ("GetTask", "tasks/get", m.GetTaskRequest, m.Task, False, "on_get_task"),
    ("ListTasks", None, m.ListTasksRequest, m.ListTasksResponse, False, "on_list_tasks"),
    ("CancelTask", "tasks/cancel", m.CancelTaskRequest, m.Task, False, "on_cancel_task"),
    (
        "SubscribeToTask",
        "tasks/resubscribe",
        m.SubscribeToTaskRequest,
        m.StreamResponse,
        True,
        "on_subscribe_to_task",
    ),
    (
        "CreateTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/set",
        m.TaskPushNotificationConfig,
        m.TaskPushNotificationConfig,
        False,
        "on_create_task_push_notification_config",
    ),
    (
        "GetTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/get",
        m.GetTaskPushNotificationConfigRequest,
        m.TaskPushNotificationConfig,
        False,
        "on_get_task_push_notification_config",
    ),
    (
        "ListTaskPushNotificationConfigs",
        "tasks/pushNotificationConfig/list",
        m.ListTaskPushNotificationConfigsRequest,
        m.ListTaskPushNotificationConfigsResponse,
        False,
        "on_list_task_push_notification_configs",
    ),
    (
        "DeleteTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/delete",
        m.DeleteTaskPushNotificationConfigRequest,
        None,
        False,
        "on_delete_task_push_notification_config",
    ),
    (
        "GetExtendedAgentCard",
        "agent/getAuthenticatedExtendedCard",
        m.GetExtendedAgentCardRequest,
        m.AgentCard,
        False,
        "on_get_extended_agent_card",
    ),
]


# -- fixtures -------------------------------------------------------------------------

TASK = m.Task(id="t1", context_id="c1", status=m.TaskStatus(state=m.TaskState.WORKING))
MESSAGE = m.Message(
    message_id="m1", role=m.Role.AGENT, parts=(m.TextPart(text="hi"),), context_id="c1"
)
STATUS_EVENT = m.TaskStatusUpdateEvent(
    task_id="t1",
    context_id="c1",
    status=m.TaskStatus(state=m.TaskState.COMPLETED),
    final=True,
)
ARTIFACT_EVENT = m.TaskArtifactUpdateEvent(
    task_id="t1",
    context_id="c1",
    artifact=m.Artifact(artifact_id="a1", parts=(m.TextPart(text="x"),)),
    last_chunk=True,
)
CONFIG = m.TaskPushNotificationConfig(url="https://hook.example/x", id="cfg1", task_id="t1")
CARD = m.AgentCard(
    name="agent",
    description="d",
    version="1",
    supported_interfaces=[
        m.AgentInterface(url="https://a.example/rpc", protocol_binding="JSONRPC")
    ],
    skills=[m.AgentSkill(id="s", name="skill", description="d", tags=["t"])],
)

USER_MSG_10 = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
USER_MSG_03 = {
    "kind": "message",
    "messageId": "m1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}

# Valid params per version for every method, and the model they decode to.
PARAMS: dict[str, tuple[Any, Any, Any]] = {
    # name: (1.0 params, 0.3 params, expected model)
    "SendMessage": (
        {"message": USER_MSG_10},
        {"message": USER_MSG_03},
        m.SendMessageRequest(
            message=m.Message(message_id="m1", role=m.Role.USER, parts=(m.TextPart(text="hi"),))
        ),
    ),
    "SendStreamingMessage": (
        {"message": USER_MSG_10},
        {"message": USER_MSG_03},
        m.SendMessageRequest(
            message=m.Message(message_id="m1", role=m.Role.USER, parts=(m.TextPart(text="hi"),))
        ),
    ),
    "GetTask": (
        {"id": "t1", "historyLength": 3},
        {"id": "t1", "historyLength": 3},
        m.GetTaskRequest(id="t1", history_length=3),
    ),
    "ListTasks": (
        {"contextId": "c1", "status": "TASK_STATE_WORKING", "pageSize": 10},
        None,
        m.ListTasksRequest(context_id="c1", status=m.TaskState.WORKING, page_size=10),
    ),
    "CancelTask": ({"id": "t1"}, {"id": "t1"}, m.CancelTaskRequest(id="t1")),
    "SubscribeToTask": ({"id": "t1"}, {"id": "t1"}, m.SubscribeToTaskRequest(id="t1")),
    "CreateTaskPushNotificationConfig": (
        {"taskId": "t1", "id": "cfg1", "url": "https://hook.example/x"},
        {"taskId": "t1", "pushNotificationConfig": {"id": "cfg1", "url": "https://hook.example/x"}},
        CONFIG,
    ),
    "GetTaskPushNotificationConfig": (
        {"taskId": "t1", "id": "cfg1"},
        {"id": "t1", "pushNotificationConfigId": "cfg1"},
        m.GetTaskPushNotificationConfigRequest(task_id="t1", id="cfg1"),
    ),
    "ListTaskPushNotificationConfigs": (
        {"taskId": "t1"},
        {"id": "t1"},
        m.ListTaskPushNotificationConfigsRequest(task_id="t1"),
    ),
    "DeleteTaskPushNotificationConfig": (
        {"taskId": "t1", "id": "cfg1"},
        {"id": "t1", "pushNotificationConfigId": "cfg1"},
        m.DeleteTaskPushNotificationConfigRequest(task_id="t1", id="cfg1"),
    ),
    "GetExtendedAgentCard": ({}, {}, m.GetExtendedAgentCardRequest()),
}


# -- the table ------------------------------------------------------------------------


def test_table_is_complete_and_in_spec_order() -> None:
    assert list(METHODS) == [row[0] for row in TABLE]


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_every_method_resolves_in_both_versions(
    row: tuple[str, str | None, type[Any], Any, bool, str],
) -> None:
    name, legacy, params_type, result_type, streaming, handler = row
    spec = method_for(name, "1.0")
    assert isinstance(spec, MethodSpec)
    assert spec is METHODS[name]
    assert spec.name == name and spec.legacy_name == legacy
    assert spec.params_type is params_type
    assert spec.result_type == result_type
    assert spec.streaming is streaming
    assert spec.handler == handler
    assert spec.name_for("1.0") == name and spec.name_for("0.3") == legacy
    if legacy is None:
        with pytest.raises(MethodNotFoundError):
            method_for(name, "0.3")
    else:
        assert method_for(legacy, "0.3") is spec


def test_dialect_enum_is_accepted_as_version() -> None:
    from a2a_models.codec import Dialect

    assert method_for("message/send", Dialect.V0_3) is METHODS["SendMessage"]
    assert method_for("SendMessage", Dialect.V1_0) is METHODS["SendMessage"]


def test_unknown_method() -> None:
    with pytest.raises(MethodNotFoundError) as info:
        method_for("tasks/list", "0.3")
    assert info.value.code == -32601 and "'tasks/list'" in info.value.message


def test_1_0_name_with_version_0_3_hints_at_the_header() -> None:
    with pytest.raises(MethodNotFoundError) as info:
        method_for("SendMessage", "0.3")
    msg = info.value.message
    assert "'SendMessage'" in msg and "message/send" in msg and "A2A-Version: 1.0" in msg


def test_list_tasks_with_version_0_3_says_it_is_1_0_only() -> None:
    with pytest.raises(MethodNotFoundError) as info:
        method_for("ListTasks", "0.3")
    assert "only in A2A 1.0" in info.value.message


def test_0_3_name_with_version_1_0_hints_at_the_1_0_name() -> None:
    with pytest.raises(MethodNotFoundError) as info:
        method_for("tasks/get", "1.0")
    assert "'GetTask'" in info.value.message and "0.3" in info.value.message


def test_case_mismatch_hint() -> None:
    with pytest.raises(MethodNotFoundError, match="did you mean 'GetTask'"):
        method_for("getTask", "1.0")


def test_method_for_rejects_unnegotiated_versions() -> None:
    with pytest.raises(VersionNotSupportedError):
        method_for("SendMessage", "1.0.1")


def test_long_method_names_are_truncated_in_the_message() -> None:
    with pytest.raises(MethodNotFoundError) as info:
        method_for("x" * 10_000, "1.0")
    assert len(info.value.message) < 400


# -- decode_params ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(PARAMS))
def test_decode_params_1_0(name: str) -> None:
    params_10, _, expected = PARAMS[name]
    assert decode_params(METHODS[name], params_10, "1.0") == expected


@pytest.mark.parametrize("name", [n for n in PARAMS if PARAMS[n][1] is not None])
def test_decode_params_0_3(name: str) -> None:
    _, params_03, expected = PARAMS[name]
    assert decode_params(METHODS[name], params_03, "0.3") == expected


def test_decode_params_error_has_code_and_path_1_0() -> None:
    bad = {"message": {**USER_MSG_10, "parts": [{"text": "ok"}, {"bogus": 1}]}}
    with pytest.raises(InvalidParamsError) as info:
        decode_params(METHODS["SendMessage"], bad, "1.0")
    err = info.value
    assert err.code == -32602
    assert "params.message.parts[1]: expected" in err.message
    wire = err.to_jsonrpc("1.0")
    violation = wire["data"][0]
    assert violation["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert violation["fieldViolations"][0]["field"] == "message.parts[1]"


def test_decode_params_error_has_code_and_path_0_3() -> None:
    bad = {"message": {**USER_MSG_03, "parts": [{"kind": "bogus"}]}}
    with pytest.raises(InvalidParamsError) as info:
        decode_params(METHODS["SendMessage"], bad, "0.3")
    assert info.value.code == -32602
    assert "params.message.parts[0]" in info.value.message


def test_decode_params_missing_required_field() -> None:
    with pytest.raises(InvalidParamsError, match=r"params\.id"):
        decode_params(METHODS["GetTask"], {"historyLength": 1}, "1.0")


def test_decode_params_wrong_member_type() -> None:
    with pytest.raises(InvalidParamsError, match=r"params\.historyLength"):
        decode_params(METHODS["GetTask"], {"id": "t", "historyLength": "many"}, "1.0")


def test_decode_params_uses_the_version_dialect() -> None:
    # A 1.0 payload is not valid 0.3 and vice versa.
    with pytest.raises(InvalidParamsError):
        decode_params(METHODS["SendMessage"], {"message": USER_MSG_10}, "0.3")
    with pytest.raises(InvalidParamsError):
        decode_params(METHODS["SendMessage"], {"message": USER_MSG_03}, "1.0")


@pytest.mark.parametrize(
    "name", [n for n in METHODS if n not in ("ListTasks", "GetExtendedAgentCard")]
)
@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_missing_params_is_invalid_params(name: str, version: str) -> None:
    with pytest.raises(InvalidParamsError, match="required") as info:
        decode_params(METHODS[name], None, version)
    assert info.value.code == -32602


def test_optional_params_may_be_absent() -> None:
    assert decode_params(METHODS["ListTasks"], None, "1.0") == m.ListTasksRequest()
    card = METHODS["GetExtendedAgentCard"]
    assert decode_params(card, None, "1.0") == m.GetExtendedAgentCardRequest()
    assert decode_params(card, {"tenant": "t"}, "1.0") == m.GetExtendedAgentCardRequest(tenant="t")
    assert decode_params(card, None, "0.3") == m.GetExtendedAgentCardRequest()
    assert decode_params(card, {}, "0.3") == m.GetExtendedAgentCardRequest()


@pytest.mark.parametrize("version", ["1.0", "0.3"])
@pytest.mark.parametrize("params", [[], ["t1"], "t1", 5])
def test_params_must_be_an_object(version: str, params: Any) -> None:
    with pytest.raises(InvalidParamsError, match="expected an object"):
        decode_params(METHODS["GetTask"], params, version)
    with pytest.raises(InvalidParamsError, match="expected an object"):
        decode_params(METHODS["GetExtendedAgentCard"], params, version)


def test_strict_rejects_unknown_members() -> None:
    params = {"id": "t1", "surprise": True}
    assert decode_params(METHODS["GetTask"], params, "1.0") == m.GetTaskRequest(id="t1")
    with pytest.raises(InvalidParamsError, match="surprise"):
        decode_params(METHODS["GetTask"], params, "1.0", strict=True)


def test_decode_params_for_a_method_missing_in_the_version() -> None:
    with pytest.raises(MethodNotFoundError):
        decode_params(METHODS["ListTasks"], {}, "0.3")


# -- encode_result ------------------------------------------------------------------


def test_send_message_result_1_0_is_wrapped() -> None:
    spec = METHODS["SendMessage"]
    task = encode_result(spec, TASK, "1.0")
    assert task == {
        "task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
    }
    message = encode_result(spec, MESSAGE, "1.0")
    assert list(message) == ["message"] and message["message"]["role"] == "ROLE_AGENT"
    assert "kind" not in message["message"]


def test_send_message_result_0_3_is_bare_and_kind_tagged() -> None:
    spec = METHODS["SendMessage"]
    task = encode_result(spec, TASK, "0.3")
    assert task["kind"] == "task" and task["id"] == "t1" and task["contextId"] == "c1"
    assert task["status"] == {"state": "working"}
    assert "task" not in task
    message = encode_result(spec, MESSAGE, "0.3")
    assert message["kind"] == "message" and message["role"] == "agent"
    assert message["parts"] == [{"kind": "text", "text": "hi"}]


@pytest.mark.parametrize("name", ["SendStreamingMessage", "SubscribeToTask"])
def test_stream_items_1_0(name: str) -> None:
    spec = METHODS[name]
    assert list(encode_result(spec, TASK, "1.0")) == ["task"]
    assert list(encode_result(spec, MESSAGE, "1.0")) == ["message"]
    status = encode_result(spec, STATUS_EVENT, "1.0")
    assert list(status) == ["statusUpdate"]
    assert status["statusUpdate"]["status"] == {"state": "TASK_STATE_COMPLETED"}
    assert "final" not in status["statusUpdate"]  # removed in 1.0
    artifact = encode_result(spec, ARTIFACT_EVENT, "1.0")
    assert list(artifact) == ["artifactUpdate"]
    assert artifact["artifactUpdate"]["lastChunk"] is True


@pytest.mark.parametrize("name", ["SendStreamingMessage", "SubscribeToTask"])
def test_stream_items_0_3(name: str) -> None:
    spec = METHODS[name]
    assert encode_result(spec, TASK, "0.3")["kind"] == "task"
    assert encode_result(spec, MESSAGE, "0.3")["kind"] == "message"
    status = encode_result(spec, STATUS_EVENT, "0.3")
    assert status["kind"] == "status-update" and status["final"] is True
    assert status["status"] == {"state": "completed"}
    assert encode_result(spec, ARTIFACT_EVENT, "0.3")["kind"] == "artifact-update"


def test_plain_results_in_both_versions() -> None:
    get = METHODS["GetTask"]
    assert encode_result(get, TASK, "1.0")["status"] == {"state": "TASK_STATE_WORKING"}
    assert encode_result(get, TASK, "0.3")["kind"] == "task"
    cfg10 = encode_result(METHODS["GetTaskPushNotificationConfig"], CONFIG, "1.0")
    assert cfg10 == {"url": "https://hook.example/x", "id": "cfg1", "taskId": "t1"}
    cfg03 = encode_result(METHODS["CreateTaskPushNotificationConfig"], CONFIG, "0.3")
    assert cfg03["taskId"] == "t1"
    assert cfg03["pushNotificationConfig"]["url"] == "https://hook.example/x"
    listed = encode_result(METHODS["ListTasks"], m.ListTasksResponse(tasks=[TASK]), "1.0")
    assert listed["tasks"][0]["id"] == "t1" and listed["nextPageToken"] == ""
    card10 = encode_result(METHODS["GetExtendedAgentCard"], CARD, "1.0")
    assert card10["supportedInterfaces"][0]["url"] == "https://a.example/rpc"
    card03 = encode_result(METHODS["GetExtendedAgentCard"], CARD, "0.3")
    assert card03["url"] == "https://a.example/rpc" and "supportedInterfaces" not in card03


def test_list_push_configs_shapes() -> None:
    spec = METHODS["ListTaskPushNotificationConfigs"]
    resp = m.ListTaskPushNotificationConfigsResponse(configs=[CONFIG])
    v10 = encode_result(spec, resp, "1.0")
    assert isinstance(v10, dict) and v10["configs"][0]["id"] == "cfg1"
    v03 = encode_result(spec, resp, "0.3")
    assert isinstance(v03, list) and len(v03) == 1
    assert v03[0]["pushNotificationConfig"]["id"] == "cfg1"
    assert encode_result(spec, m.ListTaskPushNotificationConfigsResponse(), "0.3") == []


def test_delete_result_shapes() -> None:
    spec = METHODS["DeleteTaskPushNotificationConfig"]
    assert encode_result(spec, None, "1.0") == {}
    assert encode_result(spec, None, "0.3") is None


def test_0_3_encoding_is_lossy_by_default() -> None:
    spec = METHODS["GetTaskPushNotificationConfig"]
    cfg = m.TaskPushNotificationConfig(url="https://h.example", task_id="t1", tenant="acme")
    assert "tenant" not in json.dumps(encode_result(spec, cfg, "0.3"))
    with pytest.raises(EncodeError):
        encode_result(spec, cfg, "0.3", lossy=False)
    paged = m.ListTaskPushNotificationConfigsResponse(configs=[CONFIG], next_page_token="p2")
    listing = METHODS["ListTaskPushNotificationConfigs"]
    assert len(encode_result(listing, paged, "0.3")) == 1
    with pytest.raises(EncodeError, match="nextPageToken"):
        encode_result(listing, paged, "0.3", lossy=False)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("SendMessage", STATUS_EVENT),
        ("GetTask", MESSAGE),
        ("DeleteTaskPushNotificationConfig", {}),
        ("ListTaskPushNotificationConfigs", [CONFIG]),
        ("SubscribeToTask", CONFIG),
    ],
)
def test_encode_result_rejects_the_wrong_type(name: str, bad: Any) -> None:
    with pytest.raises(TypeError, match=METHODS[name].handler):
        encode_result(METHODS[name], bad, "1.0")


def test_encode_result_for_a_method_missing_in_the_version() -> None:
    with pytest.raises(MethodNotFoundError):
        encode_result(METHODS["ListTasks"], m.ListTasksResponse(tasks=[]), "0.3")


# -- decode_result (client side) ---------------------------------------------------------

RESULTS: list[tuple[str, Any]] = [
    ("SendMessage", TASK),
    ("SendMessage", MESSAGE),
    ("SendStreamingMessage", STATUS_EVENT),
    ("SubscribeToTask", ARTIFACT_EVENT),
    ("GetTask", TASK),
    ("CancelTask", TASK),
    ("CreateTaskPushNotificationConfig", CONFIG),
    ("GetTaskPushNotificationConfig", CONFIG),
    (
        "ListTaskPushNotificationConfigs",
        m.ListTaskPushNotificationConfigsResponse(configs=[CONFIG]),
    ),
    ("DeleteTaskPushNotificationConfig", None),
    ("GetExtendedAgentCard", CARD),
]


@pytest.mark.parametrize(
    ("name", "value"), RESULTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(RESULTS)]
)
@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_result_round_trip(name: str, value: Any, version: str) -> None:
    spec = METHODS[name]
    wire = json.loads(json.dumps(encode_result(spec, value, version)))
    back = decode_result(spec, wire, version)
    if isinstance(value, m.TaskStatusUpdateEvent) and version == "1.0":
        value = m.TaskStatusUpdateEvent(  # ``final`` does not exist in 1.0
            task_id=value.task_id, context_id=value.context_id, status=value.status
        )
    if isinstance(value, m.AgentCard) and version == "0.3":
        assert back.name == value.name
        assert back.supported_interfaces[0].url == value.supported_interfaces[0].url
        return
    assert back == value


def test_list_tasks_result_round_trip() -> None:
    spec = METHODS["ListTasks"]
    value = m.ListTasksResponse(tasks=[TASK], next_page_token="n", page_size=1, total_size=3)
    assert decode_result(spec, encode_result(spec, value, "1.0"), "1.0") == value


def test_decode_result_errors_name_the_path() -> None:
    with pytest.raises(InvalidAgentResponseError, match=r"result\.task\.status"):
        decode_result(METHODS["SendMessage"], {"task": {"id": "t", "status": 5}}, "1.0")
    with pytest.raises(InvalidAgentResponseError, match=r"result\[1\]"):
        decode_result(
            METHODS["ListTaskPushNotificationConfigs"],
            [encode_result(METHODS["GetTaskPushNotificationConfig"], CONFIG, "0.3"), 5],
            "0.3",
        )
    with pytest.raises(InvalidAgentResponseError, match="expected an array"):
        decode_result(METHODS["ListTaskPushNotificationConfigs"], {"configs": []}, "0.3")
    with pytest.raises(InvalidAgentResponseError):
        decode_result(METHODS["DeleteTaskPushNotificationConfig"], {"x": 1}, "1.0")
    assert decode_result(METHODS["DeleteTaskPushNotificationConfig"], {}, "0.3") is None


# -- encode_request (client side) ----------------------------------------------------------


def test_encode_request_1_0() -> None:
    raw = encode_request(METHODS["GetTask"], m.GetTaskRequest(id="t1", history_length=2), "1.0", 9)
    assert json.loads(raw) == {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "GetTask",
        "params": {"id": "t1", "historyLength": 2},
    }


def test_encode_request_0_3() -> None:
    params = m.GetTaskPushNotificationConfigRequest(task_id="t1", id="cfg1")
    raw = encode_request(METHODS["GetTaskPushNotificationConfig"], params, "0.3", "r1")
    assert json.loads(raw) == {
        "jsonrpc": "2.0",
        "id": "r1",
        "method": "tasks/pushNotificationConfig/get",
        "params": {"id": "t1", "pushNotificationConfigId": "cfg1"},
    }


def test_extended_card_request_shapes() -> None:
    spec = METHODS["GetExtendedAgentCard"]
    v03 = json.loads(encode_request(spec, m.GetExtendedAgentCardRequest(), "0.3", 1))
    assert v03 == {"jsonrpc": "2.0", "id": 1, "method": "agent/getAuthenticatedExtendedCard"}
    v10 = json.loads(encode_request(spec, m.GetExtendedAgentCardRequest(), "1.0", 1))
    assert v10["method"] == "GetExtendedAgentCard" and v10["params"] == {}


def test_encode_request_errors() -> None:
    with pytest.raises(MethodNotFoundError):
        encode_request(METHODS["ListTasks"], m.ListTasksRequest(), "0.3", 1)
    with pytest.raises(TypeError, match="GetTaskRequest"):
        encode_request(METHODS["GetTask"], m.CancelTaskRequest(id="t"), "1.0", 1)
    with pytest.raises(EncodeError):
        encode_request(
            METHODS["GetTask"], m.GetTaskRequest(id="t", tenant="x"), "0.3", 1, lossy=False
        )


@pytest.mark.parametrize(
    ("name", "version"),
    [(n, v) for n in PARAMS for v in ("1.0", "0.3") if METHODS[n].name_for(v) is not None],
)
def test_request_round_trip_through_the_server_path(name: str, version: str) -> None:
    spec = METHODS[name]
    model = PARAMS[name][2]
    req = parse_message(encode_request(spec, model, version, 42))
    assert isinstance(req, Request) and req.id == 42
    resolved = method_for(req.method, version)
    assert resolved is spec
    assert decode_params(resolved, req.params, version) == model


def test_build_request_returns_the_envelope() -> None:
    req = build_request(METHODS["CancelTask"], m.CancelTaskRequest(id="t"), "0.3", 1)
    assert req == Request("tasks/cancel", {"id": "t"}, 1)
