"""JSON-RPC 2.0 envelopes: parsing requests, parsing responses, serializing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_models.errors import (
    InternalError,
    InvalidAgentResponseError,
    InvalidModelError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    JSONRPCError,
    MethodNotFoundError,
    TaskNotFoundError,
    VersionNotSupportedError,
)
from a2a_models.protocol import (
    DEFAULT_MAX_BATCH_SIZE,
    Batch,
    ErrorResponse,
    Notification,
    Request,
    Response,
    SuccessResponse,
    encode_message,
    encode_response,
    parse_message,
    parse_message_value,
    parse_response,
)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


def _error(result: object) -> ErrorResponse:
    assert isinstance(result, ErrorResponse), result
    return result


# -- valid single messages ------------------------------------------------------


def test_request_with_object_params() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t"}}')
    assert msg == Request("GetTask", {"id": "t"}, 7)
    assert isinstance(msg, Request) and type(msg.id) is int


def test_request_with_string_id_and_array_params() -> None:
    msg = parse_message('{"jsonrpc":"2.0","id":"abc","method":"m","params":[1,2]}')
    assert msg == Request("m", [1, 2], "abc")


def test_request_without_params_has_none() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","id":0,"method":"GetExtendedAgentCard"}')
    assert msg == Request("GetExtendedAgentCard", None, 0)


def test_negative_and_huge_integer_ids_are_kept_exactly() -> None:
    huge = 2**80
    msg = parse_message(f'{{"jsonrpc":"2.0","id":{huge},"method":"m"}}')
    assert isinstance(msg, Request) and msg.id == huge
    assert parse_message(b'{"jsonrpc":"2.0","id":-5,"method":"m"}') == Request("m", None, -5)


def test_notification_has_no_id_member() -> None:
    msg = parse_message(b'{"jsonrpc":"2.0","method":"SendMessage","params":{}}')
    assert msg == Notification("SendMessage", {})
    assert isinstance(msg, Notification)
    assert not hasattr(msg, "id")


def test_memoryview_and_bytearray_inputs() -> None:
    raw = b'{"jsonrpc":"2.0","id":1,"method":"m"}'
    assert parse_message(bytearray(raw)) == Request("m", None, 1)
    assert parse_message(memoryview(raw)) == Request("m", None, 1)


def test_unknown_extra_members_are_ignored() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m","x":1}') == Request("m", None, 1)


# -- parse errors (-32700) -----------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b'{"jsonrpc":"2.0","id":1,"method":"m"',  # truncated
        b'{"jsonrpc":"2.0",',
        b"\xff\xfe\x00",  # invalid UTF-8
        b'{"jsonrpc":"2.0","id":1,"method":"\xc3\x28"}',  # invalid UTF-8 in a string
        b"{'jsonrpc':'2.0'}",  # single quotes
        b'{"a":NaN}',
        b"[1,]",
        b'{"jsonrpc":"2.0"} trailing',
        b"[" * 100_000,  # deeply nested and unterminated
    ],
)
def test_invalid_json_is_a_parse_error_with_null_id(raw: bytes) -> None:
    err = _error(parse_message(raw))
    assert type(err.error) is JSONParseError
    assert err.error.code == -32700
    assert err.id is None


def test_deeply_nested_valid_json_never_escapes_as_recursion_error() -> None:
    # A long digit run forces the stdlib fallback, whose recursion limit is lower.
    raw = ("[" * 50_000) + "1" * 25 + ("]" * 50_000)
    err = _error(parse_message(raw))
    assert type(err.error) is JSONParseError and err.id is None


def test_a_number_too_long_to_read_is_a_parse_error_saying_so() -> None:
    # Python's own message was cut mid-advice ("...; use sys.set_in"): the peer learns
    # what is wrong with its payload instead.
    raw = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"historyLength":' + b"9" * 5000
    err = _error(parse_message(raw + b"}}"))
    assert type(err.error) is JSONParseError and err.id is None
    assert err.error.message.startswith("Invalid JSON payload: a number of 5000 digits")
    assert "sys." not in err.error.message


def test_parse_error_encodes_with_null_id() -> None:
    wire = json.loads(encode_response(_error(parse_message(b"{")), "1.0"))
    assert wire["id"] is None and wire["error"]["code"] == -32700 and wire["jsonrpc"] == "2.0"


# -- invalid requests (-32600) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected_id", "fragment"),
    [
        (1, None, "got integer"),
        ("x", None, "got string"),
        (None, None, "got null"),
        (True, None, "got boolean"),
        ({}, None, '"jsonrpc" is missing'),
        ({"jsonrpc": "1.0"}, None, '"jsonrpc" must be exactly "2.0"'),
        ({"jsonrpc": "1.0", "id": 3, "method": "m"}, 3, '"jsonrpc" must be exactly "2.0"'),
        ({"jsonrpc": 2.0, "id": "a", "method": "m"}, "a", '"jsonrpc" must be exactly "2.0"'),
        ({"jsonrpc": "2.0 ", "id": 1, "method": "m"}, 1, '"jsonrpc" must be exactly "2.0"'),
        ({"id": 1, "method": "m"}, 1, '"jsonrpc" is missing'),
        ({"jsonrpc": "2.0", "id": 1}, 1, '"method" is missing'),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, 1, "method must be a string, got integer"),
        ({"jsonrpc": "2.0", "id": "q", "method": None}, "q", "method must be a string, got null"),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": "s"}, 1, "got string"),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": 3}, 1, "got integer"),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": None}, 1, "got null"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "m"}, None, "got number"),
        ({"jsonrpc": "2.0", "id": 1.0, "method": "m"}, None, "got number"),
        ({"jsonrpc": "2.0", "id": True, "method": "m"}, None, "got boolean"),
        ({"jsonrpc": "2.0", "id": False, "method": "m"}, None, "got boolean"),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "m"}, None, "got object"),
        ({"jsonrpc": "2.0", "id": [1], "method": "m"}, None, "got array"),
        ({"jsonrpc": "2.0", "id": None, "method": "m"}, None, "not null"),
        # A notification that is invalid still gets an error (with id null).
        ({"jsonrpc": "2.0", "method": 1, "params": "bar"}, None, "method must be a string"),
    ],
)
def test_invalid_request(payload: Any, expected_id: object, fragment: str) -> None:
    err = _error(parse_message(_dumps(payload)))
    assert type(err.error) is InvalidRequestError
    assert err.error.code == -32600
    assert err.id == expected_id and type(err.id) is type(expected_id)
    assert fragment in err.error.message


def test_invalid_request_echoes_string_id_in_encoded_response() -> None:
    err = _error(parse_message(b'{"jsonrpc":"1.0","id":"req-9","method":"m"}'))
    wire = json.loads(encode_response(err, "1.0"))
    assert wire == {
        "jsonrpc": "2.0",
        "id": "req-9",
        "error": {"code": -32600, "message": err.error.message},
    }


def test_float_id_is_not_echoed() -> None:
    err = _error(parse_message(b'{"jsonrpc":"2.0","id":1.0,"method":"m"}'))
    assert json.loads(encode_response(err))["id"] is None


# -- batches --------------------------------------------------------------------


def test_empty_batch_is_a_single_invalid_request() -> None:
    err = _error(parse_message(b"[]"))
    assert type(err.error) is InvalidRequestError and err.id is None
    assert "empty batch" in err.error.message
    wire = json.loads(encode_response(err))
    assert isinstance(wire, dict)  # a single response object, not an array


def test_batch_of_one_non_object() -> None:
    result = parse_message(b"[1]")
    assert isinstance(result, Batch) and len(result) == 1
    item = _error(result.items[0])
    assert type(item.error) is InvalidRequestError and item.id is None


def test_batch_of_invalid_items_yields_one_error_each() -> None:
    result = parse_message(b"[1,2,3]")
    assert isinstance(result, Batch)
    assert [type(_error(i).error) for i in result] == [InvalidRequestError] * 3


def test_mixed_batch_keeps_order_and_good_items() -> None:
    payload = [
        {"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {}},
        {"jsonrpc": "2.0", "method": "notify", "params": [7]},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "id": 5, "method": 42},
        {"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": "t"}},
        [],
    ]
    result = parse_message(_dumps(payload))
    assert isinstance(result, Batch)
    items = result.items
    assert len(items) == 6
    assert items[0] == Request("SendMessage", {}, "1")
    assert items[1] == Notification("notify", [7])
    assert _error(items[2]).id is None and _error(items[2]).error.code == -32600
    assert _error(items[3]).id == 5 and _error(items[3]).error.code == -32600
    assert items[4] == Request("GetTask", {"id": "t"}, 6)
    assert _error(items[5]).error.code == -32600


def test_batch_of_only_notifications() -> None:
    result = parse_message(b'[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]')
    assert isinstance(result, Batch)
    assert all(isinstance(item, Notification) for item in result)


def test_nested_batch_item_is_invalid_not_recursed() -> None:
    result = parse_message(b'[[{"jsonrpc":"2.0","id":1,"method":"m"}]]')
    assert isinstance(result, Batch)
    assert _error(result.items[0]).error.code == -32600


def test_oversized_batch_is_rejected_as_a_whole() -> None:
    item = {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert DEFAULT_MAX_BATCH_SIZE == 100
    ok = parse_message(_dumps([item] * 100))
    assert isinstance(ok, Batch) and len(ok) == 100
    err = _error(parse_message(_dumps([item] * 101)))
    assert type(err.error) is InvalidRequestError and err.id is None
    assert "101" in err.error.message and "100" in err.error.message


def test_configurable_batch_limit() -> None:
    item = {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert isinstance(parse_message(_dumps([item] * 3), max_batch_size=2), ErrorResponse)
    assert isinstance(parse_message(_dumps([item] * 2), max_batch_size=2), Batch)
    unlimited = parse_message(_dumps([item] * 500), max_batch_size=None)
    assert isinstance(unlimited, Batch) and len(unlimited) == 500
    with pytest.raises(ValueError):
        parse_message(b"[]", max_batch_size=0)


def test_parse_message_value_matches_parse_message() -> None:
    value = {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": [1]}}
    assert parse_message_value(value) == parse_message(_dumps(value))


# -- envelope construction (local misuse) --------------------------------------------


@pytest.mark.parametrize("bad_id", [True, 1.5, None, [1], {"a": 1}])
def test_request_rejects_bad_ids(bad_id: Any) -> None:
    with pytest.raises(InvalidModelError):
        Request("m", None, bad_id)


def test_envelope_validation() -> None:
    with pytest.raises(InvalidModelError):
        Request(5, None, 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidModelError):
        Notification("m", "params")  # type: ignore[arg-type]
    with pytest.raises(InvalidModelError):
        SuccessResponse(False, 1)
    with pytest.raises(InvalidModelError):
        ErrorResponse(1, ValueError("x"))  # type: ignore[arg-type]
    with pytest.raises(InvalidModelError):
        Batch(())
    assert SuccessResponse(None, 1).id is None  # null ids are fine in responses


# -- serializing ------------------------------------------------------------------


def test_encode_success_response() -> None:
    raw = encode_response(SuccessResponse(3, {"task": {"id": "t"}}))
    assert json.loads(raw) == {"jsonrpc": "2.0", "id": 3, "result": {"task": {"id": "t"}}}
    assert raw.startswith(b'{"jsonrpc":"2.0","id":3,')  # compact, member order kept


def test_encode_null_result_keeps_the_member() -> None:
    assert json.loads(encode_response(SuccessResponse("x", None), "0.3")) == {
        "jsonrpc": "2.0",
        "id": "x",
        "result": None,
    }


def test_encode_error_response_per_version() -> None:
    err = ErrorResponse(1, TaskNotFoundError("no such task", {"taskId": "t"}))
    v10 = json.loads(encode_response(err, "1.0"))["error"]
    assert v10["code"] == -32001 and v10["message"] == "no such task"
    assert isinstance(v10["data"], list)
    info = [d for d in v10["data"] if d.get("@type", "").endswith("google.rpc.ErrorInfo")]
    assert info and info[0]["reason"] == "TASK_NOT_FOUND"
    v03 = json.loads(encode_response(err, "0.3"))["error"]
    assert v03 == {"code": -32001, "message": "no such task", "data": {"taskId": "t"}}


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (InvalidRequestError("bad envelope"), "INVALID_REQUEST"),
        (InvalidParamsError("params.id: expected a string", {"field": "id"}), "INVALID_PARAMS"),
        (MethodNotFoundError("no such route"), "METHOD_NOT_FOUND"),
        (InternalError("the task store failed (OperationalError)"), "INTERNAL_ERROR"),
    ],
)
def test_standard_errors_name_themselves_in_http_statuses(error: JSONRPCError, reason: str) -> None:
    # 400 INVALID_ARGUMENT is invalid params or an invalid request: the ErrorInfo
    # says which (the a2a-sdk's clients read nothing else), and it comes back typed.
    body = error.to_http_status()["error"]
    infos = [d for d in body["details"] if d["@type"].endswith("google.rpc.ErrorInfo")]
    assert infos == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "a2a-protocol.org",
        }
    ]
    back = JSONRPCError.from_http_status({"error": body})
    assert type(back) is type(error) and back.message == error.message
    # JSON-RPC's code already says it: no ErrorInfo there.
    assert "data" not in error.to_jsonrpc("1.0") or all(
        not d["@type"].endswith("ErrorInfo") for d in error.to_jsonrpc("1.0")["data"]
    )


def test_encode_response_rejects_unknown_version() -> None:
    with pytest.raises(VersionNotSupportedError):
        encode_response(ErrorResponse(1, TaskNotFoundError()), "2.0")


def test_encode_batch_response() -> None:
    batch: Batch[Response] = Batch(
        (SuccessResponse(1, 2), ErrorResponse(None, InvalidRequestError("bad")))
    )
    wire = json.loads(encode_response(batch, "1.0"))
    assert wire == [
        {"jsonrpc": "2.0", "id": 1, "result": 2},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad"}},
    ]


def test_encode_message_round_trips() -> None:
    for msg in (
        Request("GetTask", {"id": "t"}, 1),
        Request("m", None, "s"),
        Notification("n", [1]),
        Notification("n"),
    ):
        raw = encode_message(msg)
        assert parse_message(raw) == msg
    assert b'"id"' not in encode_message(Notification("n"))
    assert b'"params"' not in encode_message(Request("m", None, 1))
    batch: Batch[Request | Notification] = Batch((Request("a", None, 1), Notification("b")))
    assert parse_message(encode_message(batch)) == batch


# -- client side: parse_response ------------------------------------------------------


def test_parse_success_response() -> None:
    resp = parse_response(b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}')
    assert resp == SuccessResponse(1, {"task": {"id": "t"}})


def test_parse_success_with_null_result() -> None:
    assert parse_response(b'{"jsonrpc":"2.0","id":"a","result":null}') == SuccessResponse("a", None)


def test_parse_error_response_gives_typed_remote_error() -> None:
    raw = _dumps(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {"code": -32001, "message": "gone", "data": [{"@type": "x"}]},
        }
    )
    resp = parse_response(raw)
    assert isinstance(resp, ErrorResponse) and resp.id == 4
    assert type(resp.error) is TaskNotFoundError
    assert resp.error.remote is True and resp.error.message == "gone"
    assert resp.error.data == [{"@type": "x"}]


def test_parse_error_response_with_unknown_code_and_null_id() -> None:
    resp = parse_response(b'{"jsonrpc":"2.0","id":null,"error":{"code":-31999,"message":"?"}}')
    assert isinstance(resp, ErrorResponse) and resp.id is None
    assert type(resp.error) is JSONRPCError and resp.error.code == -31999


def test_parse_method_not_found_response() -> None:
    resp = parse_response(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}')
    assert isinstance(resp, ErrorResponse) and type(resp.error) is MethodNotFoundError


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "x"}}, "both"),
        ({"jsonrpc": "2.0", "id": 1}, "neither"),
        ({"jsonrpc": "1.0", "id": 1, "result": 1}, "jsonrpc"),
        ({"id": 1, "result": 1}, "jsonrpc"),
        ({"jsonrpc": "2.0", "result": 1}, '"id" is missing'),
        ({"jsonrpc": "2.0", "id": 1.5, "result": 1}, "id must be"),
        ({"jsonrpc": "2.0", "id": True, "result": 1}, "id must be"),
        ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, "error must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "x"}}, "error.code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "x"}}, "error.code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "x"}}, "error.code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1.5, "message": "x"}}, "error.code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -1}}, "error.message"),
        ([], "empty batch"),
        ("ok", "expected an object"),
        ([{"jsonrpc": "2.0", "id": 1, "result": 1}, 5], "batch item 1"),
    ],
)
def test_malformed_responses_raise_invalid_agent_response(payload: Any, fragment: str) -> None:
    with pytest.raises(InvalidAgentResponseError) as info:
        parse_response(_dumps(payload))
    assert fragment in info.value.message
    assert info.value.code == -32006


def test_null_result_reads_a_response_without_result_as_null() -> None:
    # The a2a-sdk's 0.3 servers drop "result": null (a push-config delete).
    bare = b'{"jsonrpc":"2.0","id":7}'
    assert parse_response(bare, null_result=True) == SuccessResponse(7, None)
    with pytest.raises(InvalidAgentResponseError, match="neither"):
        parse_response(bare)
    error = parse_response(
        b'{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"m"}}', null_result=True
    )
    assert isinstance(error, ErrorResponse) and type(error.error) is TaskNotFoundError
    with pytest.raises(InvalidAgentResponseError, match="jsonrpc"):
        parse_response(b'{"id":7}', null_result=True)


@pytest.mark.parametrize("raw", [b"", b"{", b"\xff", b'{"jsonrpc":"2.0","id":1,"result":}'])
def test_non_json_response_raises_invalid_agent_response(raw: bytes) -> None:
    with pytest.raises(InvalidAgentResponseError, match="not valid JSON"):
        parse_response(raw)


def test_parse_batch_response() -> None:
    raw = _dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "result": 1},
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad"}},
        ]
    )
    resp = parse_response(raw)
    assert isinstance(resp, Batch) and len(resp) == 2
    first, second = resp.items
    assert first == SuccessResponse(1, 1)
    assert isinstance(second, ErrorResponse) and second.error.code == -32602


def test_encode_then_parse_response_round_trip() -> None:
    sent = ErrorResponse("r", TaskNotFoundError("nope"))
    got = parse_response(encode_response(sent, "1.0"))
    assert isinstance(got, ErrorResponse) and got.id == "r"
    assert type(got.error) is TaskNotFoundError and got.error.remote
    assert got.error.message == "nope"


def test_error_responses_compare_by_value() -> None:
    assert ErrorResponse(1, TaskNotFoundError("x")) == ErrorResponse(1, TaskNotFoundError("x"))
    assert ErrorResponse(1, TaskNotFoundError("x")) != ErrorResponse(1, TaskNotFoundError("y"))
    assert ErrorResponse(1, InvalidRequestError("x")) != ErrorResponse(1, JSONParseError("x"))
    assert ErrorResponse(1, TaskNotFoundError("x")) != ErrorResponse(2, TaskNotFoundError("x"))
