"""Self-checks for ``sdk_vectors``: every vector round-trips through the SDK's own parser,
the 0.3 vectors validate against the 0.3 JSON Schema, and the documented SDK quirks hold.
"""

from __future__ import annotations

import copy
import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors
from google.protobuf import json_format
from jsonschema import Draft7Validator
from pydantic import ValidationError

from .sdk_vectors import (
    REQUEST_ID,
    V03_SCHEMA_DEVIATIONS,
    V03_UNPARSEABLE,
    V10_METHOD_PARAMS,
    V10_METHOD_RESULT,
    floats_to_ints,
    sdk_parse_v03,
    sdk_parse_v10,
    strict_equal,
    v03_jsonrpc_vectors,
    v03_vectors,
    v10_jsonrpc_vectors,
    v10_protos,
    v10_vectors,
    v10_wellknown_card_vectors,
)

SCHEMA_03 = Path("/work/shared/a2a-spec/0.3.0/a2a.json")

V10 = v10_vectors()
V10_RPC = v10_jsonrpc_vectors()
V03 = v03_vectors()
V03_RPC = v03_jsonrpc_vectors()


@cache
def _schema03() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_03.read_text())
    return schema


@cache
def _validator03(type_name: str) -> Draft7Validator:
    schema = {"$ref": f"#/definitions/{type_name}", "definitions": _schema03()["definitions"]}
    return Draft7Validator(schema)


def _json_roundtrip(obj: Any) -> Any:
    return json.loads(json.dumps(obj, ensure_ascii=False))


# ------------------------------------------------------------------------- inventory


def test_vector_counts_and_coverage() -> None:
    assert len(V10) >= 60 and len(V03) >= 80
    v10_types = {t for t, _ in V10.values()}
    for needed in (
        "Part", "Message", "Artifact", "Task", "TaskStatus", "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent", "StreamResponse", "SendMessageResponse", "AgentCard",
        "SendMessageRequest", "GetTaskRequest", "ListTasksRequest", "ListTasksResponse",
        "CancelTaskRequest", "SubscribeToTaskRequest", "TaskPushNotificationConfig",
        "GetTaskPushNotificationConfigRequest", "DeleteTaskPushNotificationConfigRequest",
        "ListTaskPushNotificationConfigsRequest", "ListTaskPushNotificationConfigsResponse",
        "GetExtendedAgentCardRequest",
    ):  # fmt: skip
        assert needed in v10_types, needed
    # every StreamResponse payload kind, every TaskState, every OAuth flow kind
    assert {next(iter(w)) for t, w in V10.values() if t == "StreamResponse"} == {
        "task", "message", "statusUpdate", "artifactUpdate"
    }  # fmt: skip
    assert {w["state"] for t, w in V10.values() if t == "TaskStatus"} == {
        v.name for v in pb.TaskState.DESCRIPTOR.values[1:]
    }
    flows = {
        next(iter(w["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"]))
        for t, w in V10.values()
        if t == "AgentCard" and "oauth" in w.get("securitySchemes", {})
    }
    assert flows == {"authorizationCode", "clientCredentials", "deviceCode", "implicit", "password"}
    assert set(V10_METHOD_PARAMS) == {
        k.removeprefix("request_") for k in V10_RPC if k.startswith("request_")
    }


# ------------------------------------------------------------------------- 1.0 round trips


@pytest.mark.parametrize("name", sorted(V10))
def test_v10_vector_roundtrips_through_sdk(name: str) -> None:
    type_name, wire = V10[name]
    assert strict_equal(_json_roundtrip(wire), wire), "vector must be plain JSON"
    parsed = sdk_parse_v10(type_name, wire)
    # Exact, type-aware equality: SDK output is a fixed point of SDK parse+serialize
    # (the Struct int→double conversion already happened when the vector was made).
    assert strict_equal(parsed, wire)


@pytest.mark.parametrize("name", sorted(k for k in V10_RPC if k.startswith("request_")))
def test_v10_jsonrpc_request(name: str) -> None:
    env = V10_RPC[name]
    method = name.removeprefix("request_")
    assert set(env) == {"jsonrpc", "id", "method", "params"}
    assert env["jsonrpc"] == "2.0" and env["id"] == REQUEST_ID and env["method"] == method
    assert strict_equal(sdk_parse_v10(V10_METHOD_PARAMS[method], env["params"]), env["params"])


@pytest.mark.parametrize("name", sorted(k for k in V10_RPC if k.startswith(("response_", "sse_"))))
def test_v10_jsonrpc_result(name: str) -> None:
    env = V10_RPC[name]
    assert set(env) == {"jsonrpc", "id", "result"} and env["id"] == REQUEST_ID
    if name.startswith("sse_"):
        result_type: str | None = "StreamResponse"
    else:
        result_type = V10_METHOD_RESULT[name.removeprefix("response_").split("_")[0]]
    if result_type is None:
        assert env["result"] is None
        return
    if name == "response_ListTasks_without_artifacts":
        assert all("artifacts" not in t for t in env["result"]["tasks"])
        return
    assert strict_equal(sdk_parse_v10(result_type, env["result"]), env["result"])


@pytest.mark.parametrize("name", sorted(k for k in V10_RPC if k.startswith("error_")))
def test_v10_jsonrpc_error_shape(name: str) -> None:
    env = V10_RPC[name]
    assert set(env) == {"jsonrpc", "id", "error"}
    err = env["error"]
    assert isinstance(err["code"], int) and isinstance(err["message"], str)
    if name.startswith("error_dispatcher_parse_error"):
        assert env["id"] is None and err["code"] == -32700 and "data" not in err
        return
    if name == "error_dispatcher_method_not_found":
        assert err == {"code": -32601, "message": "Method not found"}
        return
    # A2AError path: data is a list of google.rpc typed details, ErrorInfo first.
    info = err["data"][0]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert info["domain"] == "a2a-protocol.org"
    cls_name = name.removeprefix("error_").split("_")[0]
    if hasattr(sdk_errors, cls_name):
        cls = getattr(sdk_errors, cls_name)
        assert err["code"] == sdk_errors.JSON_RPC_ERROR_CODE_MAP[cls]
        assert info["reason"] == sdk_errors.A2A_ERROR_REASONS.get(cls, "UNKNOWN_ERROR")


def test_v10_error_examples() -> None:
    assert V10_RPC["error_TaskNotFoundError"] == {
        "jsonrpc": "2.0",
        "id": REQUEST_ID,
        "error": {
            "code": -32001,
            "message": "Task not found",
            "data": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "TASK_NOT_FOUND",
                    "domain": "a2a-protocol.org",
                    "metadata": {},
                }
            ],
        },
    }
    assert V10_RPC["error_TaskNotFoundError_with_data"]["error"]["data"][0]["metadata"] == {
        "taskId": "task-9"
    }
    violations = V10_RPC["error_InvalidParamsError_field_violations"]["error"]["data"][1]
    assert violations == {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{"field": "message.parts", "description": "must not be empty"}],
    }
    assert V10_RPC["error_version_not_supported"]["error"]["code"] == -32009


# ------------------------------------------------------------------------- 0.3


@pytest.mark.parametrize("name", sorted(V03))
def test_v03_vector_roundtrips_through_sdk(name: str) -> None:
    type_name, wire = V03[name]
    assert strict_equal(_json_roundtrip(wire), wire), "vector must be plain JSON"
    if name in V03_UNPARSEABLE:
        with pytest.raises(ValidationError):  # quirk 8: the SDK rejects its own output
            sdk_parse_v03(type_name, wire)
        return
    assert strict_equal(sdk_parse_v03(type_name, wire), wire)


@pytest.mark.parametrize("name", sorted(V03))
def test_v03_vector_matches_schema(name: str) -> None:
    type_name, wire = V03[name]
    errors = list(_validator03(type_name).iter_errors(wire))
    if name in V03_SCHEMA_DEVIATIONS:
        assert errors, f"{name} is listed as an SDK schema deviation but now validates"
    else:
        assert not errors, [e.message for e in errors]


@pytest.mark.parametrize("name", sorted(V03_RPC))
def test_v03_jsonrpc_vector(name: str) -> None:
    type_name, wire = V03_RPC[name]
    errors = list(_validator03(type_name).iter_errors(wire))
    assert not errors, [e.message for e in errors]
    parsed = sdk_parse_v03(type_name, wire)
    expected = copy.deepcopy(wire)
    if "error" in expected and expected["error"].get("data") is None:
        expected["error"].pop("data", None)  # quirk 9: adapter emits data: null, models drop it
    if type_name == "GetAuthenticatedExtendedCardRequest":
        expected.pop("params")  # the transport sends params: {}, the model has no params
    assert parsed == expected


def test_v03_error_shapes() -> None:
    assert V03_RPC["error_adapter_TaskNotFoundError"][1] == {
        "jsonrpc": "2.0",
        "id": REQUEST_ID,
        "error": {"code": -32001, "data": None, "message": "Task not found"},
    }
    assert V03["error_TaskNotFoundError"][1] == {
        "jsonrpc": "2.0",
        "id": REQUEST_ID,
        "error": {"code": -32001, "message": "Task not found"},
    }
    assert V03_RPC["error_adapter_TaskNotFoundError_with_data"][1]["error"]["data"] == {
        "taskId": "task-9"
    }
    # codes unknown to 0.3 collapse to -32603
    assert V03_RPC["error_adapter_VersionNotSupportedError"][1]["error"]["code"] == -32603
    assert V03_RPC["error_adapter_ExtensionSupportRequiredError"][1]["error"]["code"] == -32603


# ------------------------------------------------------------------------- quirks


def test_struct_numbers_become_doubles() -> None:
    wire = {
        "messageId": "m",
        "role": "ROLE_USER",
        "parts": [{"data": {"n": 18, "list": [1, 2.5, True]}}, {"data": 3}],
        "metadata": {"i": 1, "b": False},
    }
    parsed = sdk_parse_v10("Message", wire)
    assert parsed["parts"][0]["data"]["n"] == 18.0 and isinstance(
        parsed["parts"][0]["data"]["n"], float
    )
    assert isinstance(parsed["parts"][1]["data"], float)
    assert parsed["metadata"]["b"] is False  # bools stay bools
    assert parsed == wire  # Python == hides the difference ...
    assert not strict_equal(parsed, wire)  # ... a type-aware comparison does not
    assert strict_equal(floats_to_ints(parsed), wire)


def test_struct_large_ints_lose_precision() -> None:
    parsed = sdk_parse_v10("Part", {"data": {"big": 2**53 + 1}})
    assert parsed["data"]["big"] == float(2**53) != 2**53 + 1


def test_typed_int_fields_stay_ints() -> None:
    parsed = sdk_parse_v10("GetTaskRequest", {"id": "t", "historyLength": 3})
    assert strict_equal(parsed, {"id": "t", "historyLength": 3})
    # ProtoJSON accepts quoted int32 and snake_case names on input
    assert strict_equal(sdk_parse_v10("GetTaskRequest", {"id": "t", "history_length": "3"}), parsed)


def test_optional_presence_and_defaults() -> None:
    assert V10["send_message_request_history_zero"][1]["configuration"] == {"historyLength": 0}
    assert V10["agent_card_full"][1]["capabilities"]["pushNotifications"] is False
    assert "append" not in V10["artifact_update_first_chunk"][1]
    assert V10["list_tasks_request_include_artifacts_false"][1] == {"includeArtifacts": False}
    assert V10["list_tasks_response_last_page"][1] == {
        "tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0
    }  # fmt: skip
    # always_print_fields_with_no_presence recurses into tasks of ListTasksResponse
    minimal = V10["list_tasks_response"][1]["tasks"][1]
    assert minimal == {
        "id": "task-min", "contextId": "ctx-91ab", "status": {"state": "TASK_STATE_SUBMITTED"},
        "artifacts": [], "history": [],
    }  # fmt: skip
    agent_msg = V10["list_tasks_response"][1]["tasks"][0]["history"][1]
    assert agent_msg["extensions"] == [] and agent_msg["referenceTaskIds"] == []
    assert "nextPageToken" not in V10["list_task_push_notification_configs_response_last_page"][1]
    assert V10["agent_card_full"][1]["securityRequirements"][1] == {"schemes": {"apiKey": {}}}
    assert V10["part_data_null"][1] == {"data": None}


def test_strict_v10_parse_rejects_unknown_members() -> None:
    with pytest.raises(json_format.ParseError):
        sdk_parse_v10(
            "Task", {"id": "t", "status": {"state": "TASK_STATE_WORKING"}, "kind": "task"}
        )
    with pytest.raises(json_format.ParseError):
        sdk_parse_v10("Task", {"id": "t", "status": {"state": "working"}})


def test_v03_parse_ignores_unknown_members() -> None:
    wire = {"id": "t", "contextId": "c", "kind": "task", "status": {"state": "working"}, "bogus": 1}
    assert "bogus" not in sdk_parse_v03("Task", wire)
    with pytest.raises(ValidationError):
        sdk_parse_v03(
            "Task", {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}
        )


def test_v10_to_v03_conversion_quirks() -> None:
    assert V03["from_v10_status_update_input_required"][1]["final"] is False
    assert V03["from_v10_status_update_completed"][1]["final"] is True
    card = V03["from_v10_agent_card_full"][1]
    assert card["url"] == "https://agent.example.com/a2a/v03" and card["protocolVersion"] == "0.3"
    assert "additionalInterfaces" not in card  # 1.0 interfaces are dropped
    assert card["capabilities"]["extensions"][1]["required"] is False
    assert (
        V03["from_v10_agent_card_oauth_device_code"][1]["securitySchemes"]["oauth"]["flows"] == {}
    )
    parts = V03["from_v10_message_user_all_parts"][1]["parts"]
    assert parts[4] == {"kind": "data", "data": {"value": [1.0, "two", {"three": 3.0}, None, True]},
                        "metadata": {"data_part_compat": True}}  # fmt: skip
    params = V03["from_v10_send_message_request"][1]["params"]
    assert params["configuration"]["blocking"] is False
    assert params["configuration"]["pushNotificationConfig"]["authentication"]["schemes"] == [
        "Bearer"
    ]


def test_build_error_response_crashes_on_a2a_json_parse_error() -> None:
    with pytest.raises(ValidationError):
        build_error_response("x", sdk_errors.JSONParseError())


def test_wellknown_card_is_hybrid() -> None:
    cards = v10_wellknown_card_vectors()
    full = cards["agent_card_full"]
    assert full["url"] == "https://agent.example.com/a2a/v03" and full["protocolVersion"] == "0.3"
    assert full["securitySchemes"]["apiKey"]["type"] == "apiKey"
    with pytest.raises(json_format.ParseError):
        sdk_parse_v10("AgentCard", full)
    lenient = json_format.ParseDict(copy.deepcopy(full), pb.AgentCard(), ignore_unknown_fields=True)
    assert lenient == v10_protos()["agent_card_full"]
    assert not list(_validator03("AgentCard").iter_errors(full))
    # without a 0.3 interface the card is served as plain ProtoJSON
    assert strict_equal(cards["agent_card_minimal"], V10["agent_card_minimal"][1])


# ------------------------------------------------------------------------- live SDK server


@pytest.fixture(scope="module")
def sdk_app_client() -> Any:
    """A real a2a-sdk server (1.0 + 0.3 compat JSON-RPC) behind Starlette's TestClient."""
    from starlette.applications import Starlette

    with warnings.catch_warnings():  # "use httpx2" deprecation notice of newer Starlette
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore

    class EchoExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            await event_queue.enqueue_event(
                pb.Message(
                    message_id="echo-1",
                    role=pb.ROLE_AGENT,
                    context_id=context.context_id or "",
                    parts=list(context.message.parts),
                )
            )

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise sdk_errors.TaskNotCancelableError

    card = v10_protos()["agent_card_full"]
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
        ]
    )
    with TestClient(app) as client:
        yield client


V1_HEADERS = {"A2A-Version": "1.0"}


def test_live_wellknown_card(sdk_app_client: Any) -> None:
    body = sdk_app_client.get("/.well-known/agent-card.json").json()
    assert body == v10_wellknown_card_vectors()["agent_card_full"]


def test_live_v10_task_not_found(sdk_app_client: Any) -> None:
    req = V10_RPC["request_GetTask"]
    body = sdk_app_client.post("/", json=req, headers=V1_HEADERS).json()
    assert body == V10_RPC["error_TaskNotFoundError"]


def test_live_v10_without_version_header_is_treated_as_v03(sdk_app_client: Any) -> None:
    body = sdk_app_client.post("/", json=V10_RPC["request_GetTask"]).json()
    assert body["error"]["code"] == -32009


def test_live_v10_unknown_method(sdk_app_client: Any) -> None:
    req = {"jsonrpc": "2.0", "id": REQUEST_ID, "method": "NoSuchMethod", "params": {}}
    body = sdk_app_client.post("/", json=req, headers=V1_HEADERS).json()
    assert body == V10_RPC["error_dispatcher_method_not_found"]


def test_live_v10_send_message(sdk_app_client: Any) -> None:
    req = copy.deepcopy(V10_RPC["request_SendStreamingMessage"])
    req["method"] = "SendMessage"
    req["params"]["message"] = copy.deepcopy(V10["message_user_all_parts"][1])
    del req["params"]["message"]["taskId"]  # unknown task ids are rejected
    body = sdk_app_client.post("/", json=req, headers=V1_HEADERS).json()
    result = body["result"]
    assert strict_equal(sdk_parse_v10("SendMessageResponse", result), result)
    assert strict_equal(result["message"]["parts"], V10["message_user_all_parts"][1]["parts"])


def test_live_v03_task_not_found(sdk_app_client: Any) -> None:
    body = sdk_app_client.post("/", json=V03["request_tasks_get"][1]).json()
    assert body == V03_RPC["error_adapter_TaskNotFoundError"][1]


def test_live_v03_send_message(sdk_app_client: Any) -> None:
    req = {"jsonrpc": "2.0", "id": 5, "method": "message/send",
           "params": V03["message_send_params_minimal"][1]}  # fmt: skip
    req["params"]["message"] = copy.deepcopy(V03["message_user_all_parts"][1])
    del req["params"]["message"]["taskId"]
    body = sdk_app_client.post("/", json=req).json()
    assert not list(_validator03("SendMessageSuccessResponse").iter_errors(body))
    msg = body["result"]
    assert msg["kind"] == "message" and msg["role"] == "agent"
    # 0.3 → 1.0 → 0.3: ints inside data/metadata come back as floats (quirks 1 and 10)
    assert msg["parts"][-1]["data"]["count"] == 18.0
    assert floats_to_ints(msg["parts"]) == V03["message_user_all_parts"][1]["parts"]
