"""Property tests: bad input only ever yields envelopes or the typed errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_models.errors import (
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    JSONRPCError,
)
from a2a_models.protocol import (
    METHODS,
    Batch,
    ErrorResponse,
    Notification,
    Request,
    SuccessResponse,
    decode_params,
    encode_message,
    encode_response,
    parse_message,
    parse_message_value,
    parse_response,
    parse_response_value,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_integers = st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(
    [-(2**63), -(2**63) - 1, -(10**19) + 1, -(10**19), 2**63, 2**64]
)
_scalars = (
    st.none()
    | st.booleans()
    | _integers
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=25,
)

_MISSING = object()
_ids = (
    st.text(max_size=8)
    | _integers
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
    | st.none()
)
_maybe = st.just(_MISSING)


@st.composite
def request_like(draw: st.DrawFn) -> dict[str, Any]:
    """Objects that look like JSON-RPC requests, each member valid or not."""
    members = {
        "jsonrpc": draw(_maybe | st.just("2.0") | st.sampled_from(["1.0", "2", 2.0, None])),
        "id": draw(_maybe | _ids | json_values),
        "method": draw(_maybe | st.sampled_from(["SendMessage", "tasks/get", ""]) | json_values),
        "params": draw(_maybe | st.dictionaries(st.text(max_size=5), _scalars) | json_values),
    }
    return {k: v for k, v in members.items() if v is not _MISSING}


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _oracle(obj: object) -> tuple[str, object]:
    """What JSON-RPC 2.0 says a single item is: (kind, id to echo)."""
    if not isinstance(obj, dict):
        return "error", None
    echo = obj["id"] if "id" in obj and _valid_id(obj["id"]) else None
    ok = (
        ("id" not in obj or _valid_id(obj["id"]))
        and obj.get("jsonrpc") == "2.0"
        and isinstance(obj.get("jsonrpc"), str)
        and isinstance(obj.get("method"), str)
        and ("params" not in obj or isinstance(obj["params"], dict | list))
    )
    if not ok:
        return "error", echo
    return ("request" if "id" in obj else "notification"), echo


def _check_item(item: object, source: object) -> None:
    kind, echo = _oracle(source)
    if kind == "error":
        assert isinstance(item, ErrorResponse)
        assert type(item.error) is InvalidRequestError
        assert item.id == echo and type(item.id) is type(echo)
    elif kind == "request":
        assert isinstance(item, Request)
        assert isinstance(source, dict)
        assert item.id == source["id"] and type(item.id) is type(source["id"])
        assert item.method == source["method"] and item.params == source.get("params")
    else:
        assert isinstance(item, Notification)
        assert isinstance(source, dict)
        assert item.method == source["method"] and item.params == source.get("params")


def _check_envelope(result: object) -> None:
    items = result.items if isinstance(result, Batch) else (result,)
    for item in items:
        assert isinstance(item, Request | Notification | ErrorResponse)
        if isinstance(item, ErrorResponse):
            assert type(item.error) in (JSONParseError, InvalidRequestError)
            # Every error we produce can be sent back.
            json.loads(encode_response(item, "1.0"))


@SETTINGS
@given(st.binary(max_size=200))
def test_parse_message_on_arbitrary_bytes(data: bytes) -> None:
    _check_envelope(parse_message(data))


@SETTINGS
@given(st.text(max_size=200))
def test_parse_message_on_arbitrary_text(data: str) -> None:
    _check_envelope(parse_message(data))


@SETTINGS
@given(json_values)
def test_parse_message_on_arbitrary_json(value: Any) -> None:
    result = parse_message(json.dumps(value))
    _check_envelope(result)
    assert result == parse_message_value(value)
    if isinstance(value, list) and 0 < len(value) <= 100:
        assert isinstance(result, Batch) and len(result) == len(value)
        for item, source in zip(result, value, strict=True):
            _check_item(item, source)
    elif isinstance(value, list):
        assert isinstance(result, ErrorResponse) and result.id is None
    else:
        _check_item(result, value)


@SETTINGS
@given(request_like())
def test_request_like_objects_follow_the_spec(obj: dict[str, Any]) -> None:
    result = parse_message(json.dumps(obj))
    _check_envelope(result)
    _check_item(result, obj)


@SETTINGS
@given(st.lists(request_like() | json_values, min_size=1, max_size=8))
def test_batches_are_validated_item_by_item(items: list[Any]) -> None:
    result = parse_message(json.dumps(items))
    assert isinstance(result, Batch) and len(result) == len(items)
    for item, source in zip(result, items, strict=True):
        _check_item(item, source)


@SETTINGS
@given(
    st.text(max_size=20),
    st.none()
    | st.dictionaries(st.text(max_size=5), json_values, max_size=3)
    | st.lists(json_values, max_size=3),
    st.none() | st.text(max_size=10) | _integers,
)
def test_encode_message_round_trips(method: str, params: Any, id_: str | int | None) -> None:
    msg: Request | Notification = (
        Notification(method, params) if id_ is None else Request(method, params, id_)
    )
    assert parse_message(encode_message(msg)) == msg


@SETTINGS
@given(st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_parse_response_raises_only_invalid_agent_response(data: bytes) -> None:
    try:
        result = parse_response(data)
    except InvalidAgentResponseError:
        return
    items = result.items if isinstance(result, Batch) else (result,)
    for item in items:
        assert isinstance(item, SuccessResponse | ErrorResponse)
        if isinstance(item, ErrorResponse):
            assert isinstance(item.error, JSONRPCError) and item.error.remote


@SETTINGS
@given(
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "id": st.none() | _integers | st.text(max_size=5)},
        optional={
            "result": json_values,
            "error": st.fixed_dictionaries(
                {"code": st.integers(-33000, 0), "message": st.text(max_size=10)},
                optional={"data": json_values},
            )
            | json_values,
        },
    )
)
def test_response_exclusivity(obj: dict[str, Any]) -> None:
    has_result, has_error = "result" in obj, "error" in obj
    error = obj.get("error")
    well_formed_error = (
        isinstance(error, dict)
        and _valid_id(error.get("code"))
        and not isinstance(error.get("code"), str)
        and isinstance(error.get("message"), str)
    )
    try:
        result = parse_response_value(obj)
    except InvalidAgentResponseError:
        assert has_result == has_error or (has_error and not well_formed_error)
        return
    assert has_result != has_error
    assert has_result or well_formed_error
    if has_result:
        assert result == SuccessResponse(obj["id"], obj["result"])
    else:
        assert isinstance(result, ErrorResponse) and result.error.code == obj["error"]["code"]


@pytest.mark.parametrize("version", ["1.0", "0.3"])
@pytest.mark.parametrize("name", list(METHODS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=st.none() | json_values)
def test_decode_params_raises_only_invalid_params(name: str, version: str, params: Any) -> None:
    spec = METHODS[name]
    if spec.name_for(version) is None:
        return
    try:
        decode_params(spec, params, version)
    except InvalidParamsError as exc:
        assert exc.code == -32602 and "params" in exc.message


@pytest.mark.parametrize("request_id", [-(2**63) - 1, -(10**19) + 1, -(2**64)])
def test_int64_underflow_is_kept_exact(request_id: int) -> None:
    raw = f'{{"jsonrpc":"2.0","id":{request_id},"method":"m"}}'
    assert parse_message(raw) == Request("m", None, request_id)
