"""A minimal dispatcher built only on the public API, as a server base would use it."""

from __future__ import annotations

import json
from typing import Any

from a2a_models import models as m
from a2a_models.errors import JSONRPCError, TaskNotFoundError
from a2a_models.protocol import (
    METHODS,
    Batch,
    ErrorResponse,
    Notification,
    ParsedItem,
    Request,
    Response,
    SuccessResponse,
    decode_params,
    decode_result,
    encode_request,
    encode_response,
    encode_result,
    method_for,
    negotiate_version,
    parse_message,
    parse_response,
)

TASK = m.Task(id="t1", context_id="c1", status=m.TaskStatus(state=m.TaskState.WORKING))


class Handler:
    def on_get_task(self, req: m.GetTaskRequest) -> m.Task:
        if req.id != "t1":
            raise TaskNotFoundError(f"no task {req.id}")
        return TASK

    def on_delete_task_push_notification_config(
        self, req: m.DeleteTaskPushNotificationConfigRequest
    ) -> None:
        return None


def _answer(item: ParsedItem, version: str, handler: Handler) -> Response | None:
    match item:
        case ErrorResponse() as invalid:
            return invalid
        case Notification():
            return None
        case Request(method, params, request_id):
            try:
                spec = method_for(method, version)
                req = decode_params(spec, params, version)
                result = getattr(handler, spec.handler)(req)
                return SuccessResponse(request_id, encode_result(spec, result, version))
            except JSONRPCError as exc:
                return ErrorResponse(request_id, exc)
    raise AssertionError(item)


def serve(body: bytes, header: str | None) -> bytes | None:
    """Return the HTTP body to send, or None for "no content"."""
    version = negotiate_version(header)
    handler = Handler()
    match parse_message(body):
        case Batch(items):
            answers = [a for a in (_answer(i, version, handler) for i in items) if a is not None]
            return encode_response(Batch(tuple(answers)), version) if answers else None
        case single:
            answer = _answer(single, version, handler)
            return None if answer is None else encode_response(answer, version)


def test_single_request_1_0() -> None:
    body = encode_request(METHODS["GetTask"], m.GetTaskRequest(id="t1"), "1.0", 1)
    reply = serve(body, "1.0")
    assert reply is not None
    resp = parse_response(reply)
    assert isinstance(resp, SuccessResponse) and resp.id == 1
    assert decode_result(METHODS["GetTask"], resp.result, "1.0") == TASK


def test_header_less_request_is_served_as_0_3() -> None:
    body = b'{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"t1"}}'
    reply = serve(body, None)
    assert reply is not None
    wire = json.loads(reply)
    assert wire["id"] == "a" and wire["result"]["kind"] == "task"
    # The same 1.0 call without the header is a helpful -32601.
    reply = serve(b'{"jsonrpc":"2.0","id":"b","method":"GetTask","params":{"id":"t1"}}', None)
    assert reply is not None
    error = json.loads(reply)["error"]
    assert error["code"] == -32601 and "A2A-Version: 1.0" in error["message"]


def test_mixed_batch_with_notification_and_errors() -> None:
    batch: list[Any] = [
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t1"}},
        {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "t1"}},  # notification
        {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "zz"}},
        {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": 5}},
        {"jsonrpc": "2.0", "id": 4, "method": "Nope"},
        {"jsonrpc": "2.0", "id": 5, "method": "DeleteTaskPushNotificationConfig",
         "params": {"taskId": "t1", "id": "c"}},
        "garbage",
    ]  # fmt: skip
    reply = serve(json.dumps(batch).encode(), "1.0")
    assert reply is not None
    wire = json.loads(reply)
    assert [r["id"] for r in wire] == [1, 2, 3, 4, 5, None]
    assert wire[0]["result"]["id"] == "t1"
    assert wire[1]["error"]["code"] == -32001
    assert wire[1]["error"]["data"][0]["reason"] == "TASK_NOT_FOUND"
    assert wire[2]["error"]["code"] == -32602 and "params.id" in wire[2]["error"]["message"]
    assert wire[3]["error"]["code"] == -32601
    assert wire[4]["result"] == {}
    assert wire[5]["error"]["code"] == -32600


def test_batch_of_notifications_gets_no_reply() -> None:
    body = b'[{"jsonrpc":"2.0","method":"GetTask"},{"jsonrpc":"2.0","method":"x"}]'
    assert serve(body, "1.0") is None
    assert serve(b'{"jsonrpc":"2.0","method":"GetTask"}', "1.0") is None


def test_invalid_json_reply() -> None:
    reply = serve(b'{"jsonrpc":', "1.0")
    assert reply is not None
    assert json.loads(reply) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": json.loads(reply)["error"]["message"]},
    }
    assert json.loads(reply)["error"]["message"].startswith("Invalid JSON payload")


def test_0_3_delete_result_is_null() -> None:
    body = (
        b'{"jsonrpc":"2.0","id":9,"method":"tasks/pushNotificationConfig/delete",'
        b'"params":{"id":"t1","pushNotificationConfigId":"c"}}'
    )
    reply = serve(body, "0.3")
    assert reply is not None
    assert json.loads(reply) == {"jsonrpc": "2.0", "id": 9, "result": None}
