"""JSON-RPC 2.0 binding checks (spec §9; JSON-RPC 2.0 §4-§6; 0.3 §6.11, §8)."""

from __future__ import annotations

from typing import Any

from ... import codec
from ... import models as m
from ...errors import (
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
    MethodNotFoundError,
    TaskNotFoundError,
)
from .._context import CheckContext
from .._registry import JSONRPC, Level, check
from .._replies import ERROR_INFO_TYPE, HttpReply, RemoteError
from .._target import excerpt

MUST, SHOULD = Level.MUST, Level.SHOULD
_RPC = (JSONRPC,)
_UNKNOWN = "a2a-conformance-no-such-task"


def _headers(ctx: CheckContext) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json",
        **ctx.version_headers(),
    }


async def _post(ctx: CheckContext, body: bytes) -> HttpReply:
    return await ctx.request("POST", ctx._endpoint().url, headers=_headers(ctx), content=body)


def _envelope(ctx: CheckContext, reply: HttpReply, what: str) -> dict[str, Any]:
    if reply.status is None:
        ctx.fail(f"{what}: no response ({reply.error})")
    try:
        env = reply.json()
    except ValueError:
        ctx.fail(f"{what}: HTTP {reply.status}, the body is not JSON: {excerpt(reply.body, 120)!r}")
    if not isinstance(env, dict):
        ctx.fail(f"{what}: expected one JSON-RPC response object, got {type(env).__name__}")
    if env.get("jsonrpc") != "2.0":
        ctx.fail(f"{what}: the response has jsonrpc={env.get('jsonrpc')!r}, expected '2.0'")
    return env


def _expect_code(ctx: CheckContext, env: dict[str, Any], code: int, what: str) -> dict[str, Any]:
    err = env.get("error")
    if not isinstance(err, dict):
        ctx.fail(f"{what}: expected error {code}, got {excerpt(codec.dumps(env), 200)}")
    if err.get("code") != code:
        ctx.fail(
            f"{what}: expected error code {code}, got {err.get('code')!r} ({err.get('message')!r})"
        )
    return err


def _get_task(ctx: CheckContext, id: Any, task_id: str = _UNKNOWN) -> dict[str, Any]:
    body: dict[str, Any] = ctx.jsonrpc_body("GetTask", {"id": task_id}, id=id)
    return body


@check(
    "jsonrpc.parse-error",
    "§9.5 (JSON-RPC 2.0 §5.1)",
    MUST,
    "Invalid JSON gets error -32700 with id null",
    transports=_RPC,
)
async def parse_error(ctx: CheckContext) -> str | None:
    reply = await _post(ctx, b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {')
    env = _envelope(ctx, reply, "truncated JSON")
    _expect_code(ctx, env, JSONParseError.code, "truncated JSON")
    ctx.expect(
        "id" in env and env["id"] is None,
        f'the parse error response must have "id": null, got {env.get("id", "(absent)")!r}',
    )
    return None


@check(
    "jsonrpc.invalid-request",
    "§9.5 (JSON-RPC 2.0 §4, §5.1)",
    MUST,
    "Valid JSON that is not a Request object gets error -32600",
    transports=_RPC,
)
async def invalid_request(ctx: CheckContext) -> str | None:
    name = ctx.jsonrpc_body("GetTask", {})["method"]
    cases = {
        "no method member": {"jsonrpc": "2.0", "id": "ir-1"},
        'jsonrpc "1.0"': {
            "jsonrpc": "1.0",
            "id": "ir-2",
            "method": name,
            "params": {"id": _UNKNOWN},
        },
        "method is a number": {"jsonrpc": "2.0", "id": "ir-3", "method": 42},
    }
    for what, body in cases.items():
        reply = await _post(ctx, codec.dumps(body))
        env = _envelope(ctx, reply, what)
        _expect_code(ctx, env, InvalidRequestError.code, what)
        ctx.expect(
            env.get("id") in (body["id"], None),
            f"{what}: the response id {env.get('id')!r} is neither the request id nor null",
        )
    return None


@check(
    "jsonrpc.method-not-found",
    "§9.5 (JSON-RPC 2.0 §5.1)",
    MUST,
    "An unknown method gets error -32601 with the request id",
    transports=_RPC,
)
async def method_not_found(ctx: CheckContext) -> str | None:
    body = {"jsonrpc": "2.0", "id": "mnf-1", "method": "a2a.conformance/NoSuchMethod", "params": {}}
    env = _envelope(ctx, await _post(ctx, codec.dumps(body)), "unknown method")
    _expect_code(ctx, env, MethodNotFoundError.code, "unknown method")
    ctx.expect(env.get("id") == "mnf-1", f"the response id is {env.get('id')!r}, expected 'mnf-1'")
    return None


@check(
    "jsonrpc.id-echo",
    "§9.3 (JSON-RPC 2.0 §5)",
    MUST,
    "String and integer request ids are echoed exactly",
    transports=_RPC,
)
async def id_echo(ctx: CheckContext) -> str | None:
    for rid in ("conformance-id-\u00e9\u4e2d", 4242, 0):
        env = _envelope(ctx, await _post(ctx, codec.dumps(_get_task(ctx, rid))), f"id {rid!r}")
        got = env.get("id", "(absent)")
        ctx.expect(
            got == rid and type(got) is type(rid), f"request id {rid!r} came back as {got!r}"
        )
        ctx.expect(
            ("result" in env) != ("error" in env),
            "a response must have exactly one of result and error",
        )
    return None


@check(
    "jsonrpc.notification",
    "§9.3 (JSON-RPC 2.0 §4.1)",
    MUST,
    "A notification (no id) gets no JSON-RPC response",
    transports=_RPC,
)
async def notification(ctx: CheckContext) -> str | None:
    body = ctx.jsonrpc_body("GetTask", {"id": _UNKNOWN})
    del body["id"]
    reply = await _post(ctx, codec.dumps(body))
    if reply.status is None:
        ctx.fail(f"no response ({reply.error})")
    ctx.expect(reply.status < 500, f"HTTP {reply.status} for a notification")
    ctx.expect(
        not reply.body.strip(),
        f"a notification was answered with a body: {excerpt(reply.body, 200)!r} (JSON-RPC 2.0 "
        "§4.1: the server MUST NOT reply to a notification)",
    )
    return None


@check(
    "jsonrpc.batch",
    "§9.3 (JSON-RPC 2.0 §6)",
    SHOULD,
    "A batch gets an array with one response per request",
    transports=_RPC,
)
async def batch(ctx: CheckContext) -> str | None:
    items = [_get_task(ctx, "batch-a"), _get_task(ctx, "batch-b")]
    reply = await _post(ctx, codec.dumps(items))
    if reply.status is None:
        ctx.fail(f"no response ({reply.error})")
    try:
        value = reply.json()
    except ValueError:
        ctx.fail(f"HTTP {reply.status}: the body is not JSON")
    if isinstance(value, dict):
        err = value.get("error") or {}
        ctx.fail(
            f"the batch was answered with a single object (error {err.get('code')!r} "
            f"{err.get('message')!r}): batches are not supported"
        )
    ctx.expect(isinstance(value, list), "the batch reply is not a JSON array")
    ids = sorted(str(v.get("id")) for v in value if isinstance(v, dict))
    ctx.expect(
        ids == ["batch-a", "batch-b"], f"the batch reply has ids {ids}, expected batch-a, batch-b"
    )
    return None


@check(
    "jsonrpc.empty-batch",
    "§9.3 (JSON-RPC 2.0 §6)",
    SHOULD,
    "An empty batch gets a single -32600 error",
    transports=_RPC,
)
async def empty_batch(ctx: CheckContext) -> str | None:
    env = _envelope(ctx, await _post(ctx, b"[]"), "empty array")
    _expect_code(ctx, env, InvalidRequestError.code, "empty array")
    return None


@check(
    "jsonrpc.content-type", "§9.1", MUST, "JSON-RPC responses are application/json", transports=_RPC
)
async def content_type(ctx: CheckContext) -> str | None:
    replies = [
        await _post(ctx, codec.dumps(_get_task(ctx, "ct-1"))),
        await _post(ctx, b"{not json"),
    ]
    for reply in replies:
        if reply.status is None:
            ctx.fail(f"no response ({reply.error})")
        ctx.expect(
            reply.media_type == "application/json",
            f"Content-Type {reply.content_type or '(none)'!r}, expected application/json",
        )
    return None


async def _task_not_found(ctx: CheckContext) -> RemoteError:
    res = await ctx.call("GetTask", m.GetTaskRequest(id=_UNKNOWN))
    return ctx.expect_error(res, TaskNotFoundError, "GetTask of an unknown task")


@check(
    "jsonrpc.error-data",
    "§9.5",
    MUST,
    "Error data is an array of objects, each with @type",
    versions=("1.0",),
    transports=_RPC,
)
async def error_data(ctx: CheckContext) -> str | None:
    err = await _task_not_found(ctx)
    if err.data is None:
        return "no error data"
    ctx.expect(
        isinstance(err.data, list), f"error.data is a {type(err.data).__name__}, expected an array"
    )
    bad = [d for d in err.data if not (isinstance(d, dict) and isinstance(d.get("@type"), str))]
    ctx.expect(not bad, f"error.data entries without @type: {excerpt(codec.dumps(bad), 200)}")
    return None


@check(
    "jsonrpc.error-info",
    "§9.5, §5.4",
    SHOULD,
    "A2A errors carry a google.rpc.ErrorInfo with reason and domain",
    versions=("1.0",),
    transports=_RPC,
)
async def error_info(ctx: CheckContext) -> str | None:
    err = await _task_not_found(ctx)
    info = err.error_info()
    ctx.expect(info is not None, f"error.data has no {ERROR_INFO_TYPE}")
    assert info is not None
    ctx.expect(
        info.get("reason") == "TASK_NOT_FOUND",
        f"ErrorInfo.reason is {info.get('reason')!r}, expected 'TASK_NOT_FOUND'",
    )
    ctx.expect(
        info.get("domain") == "a2a-protocol.org",
        f"ErrorInfo.domain is {info.get('domain')!r}, expected 'a2a-protocol.org'",
    )
    return None


@check(
    "jsonrpc.invalid-params",
    "§3.3.2, §9.5",
    MUST,
    "Params of the wrong type or missing required members get -32602",
    transports=_RPC,
)
async def invalid_params(ctx: CheckContext) -> str | None:
    user = codec.to_wire(ctx.user_message("hello"), ctx.dialect)
    bad_parts = dict(user)
    bad_parts["parts"] = "not-a-list"
    cases: list[tuple[str, str, Any]] = [
        ("SendMessage without message", "SendMessage", {}),
        ("SendMessage with parts not a list", "SendMessage", {"message": bad_parts}),
        ("GetTask with an object id", "GetTask", {"id": {"nested": True}}),
        ("GetTask with by-position params", "GetTask", [_UNKNOWN]),
    ]
    for what, op, params in cases:
        res = await ctx.call(op, raw_params=params)
        ctx.expect_error(res, InvalidParamsError, what)
    return None


__all__: list[str] = []
