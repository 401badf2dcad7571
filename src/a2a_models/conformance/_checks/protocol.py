"""Version negotiation, HTTP+JSON error format, and robustness checks
(spec §3.6, §11.1, §11.6, §3.3.2; 0.3 §3.2.3)."""

from __future__ import annotations

from ... import codec
from ... import models as m
from ...errors import (
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotFoundError,
    VersionNotSupportedError,
)
from .._catalogue import requirement
from .._context import ROUTE_MISSING, STATUS_CODES_03, CheckContext
from .._registry import JSONRPC, REST, Level, check
from .._replies import ERROR_INFO_TYPE, CallResult, HttpReply
from .._target import excerpt

MUST, SHOULD = Level.MUST, Level.SHOULD
_UNKNOWN = "a2a-conformance-no-such-task"


def _probe() -> m.GetTaskRequest:
    return m.GetTaskRequest(id=_UNKNOWN)


def _served(ctx: CheckContext, res: CallResult, what: str) -> None:
    """The request was processed as the version asked (not refused, not unknown)."""
    err = res.error
    if err is None:
        ctx.expect(res.problem is None, f"{what}: {res.problem}")
        return
    # 0.3 has no VersionNotSupportedError: over its HTTP+JSON, whose errors have no fixed
    # body or status (0.3 §3.2.3), only an ErrorInfo reason can say the version was refused.
    untyped_03 = err.transport == REST and ctx.version == "0.3" and err.reason is None
    ctx.expect(
        untyped_03 or not err.is_(VersionNotSupportedError),
        f"{what}: refused with {err.describe()}",
    )
    if ctx.transport == JSONRPC:
        ctx.expect(
            not err.is_(MethodNotFoundError),
            f"{what}: the method is unknown ({err.describe()}): not served as {ctx.version}",
        )
    elif err.route_missing:
        ctx.fail(f"{what}: HTTP {err.http_status}: {ROUTE_MISSING}")
    elif ctx.version == "1.0" and err.http_status in (404, 405) and not err.body_shape_ok:
        ctx.fail(
            f"{what}: HTTP {err.http_status} without a google.rpc.Status body (§11.6): "
            "not an A2A answer"
        )


@check(
    "version.header",
    "§3.6.2",
    MUST,
    "A2A-Version: 1.0 is processed with 1.0 semantics",
    versions=("1.0",),
)
async def version_header(ctx: CheckContext) -> str | None:
    _served(ctx, await ctx.call("GetTask", _probe()), "GetTask with A2A-Version: 1.0")
    return None


@check("version.missing-header", "§3.6.2", MUST, "A request without A2A-Version is treated as 0.3")
async def version_missing(ctx: CheckContext) -> str | None:
    if ctx.version == "0.3":
        _served(
            ctx,
            await ctx.call("GetTask", _probe(), version_headers={}),
            "0.3 GetTask without A2A-Version",
        )
        return None
    ep = ctx._endpoint()
    twin = ctx.target.endpoint("0.3", ctx.transport)
    if twin is not None and twin.url.rstrip("/") == ep.url.rstrip("/"):
        ctx.not_applicable("this URL also serves 0.3: checked by the 0.3 run")
    res = await ctx.call("GetTask", _probe(), version_headers={})
    ctx.expect_error(
        res,
        VersionNotSupportedError,
        "a 1.0 request without A2A-Version to an interface without 0.3",
    )
    return None


@check(
    "version.unsupported",
    "§3.6.2, §5.4",
    MUST,
    "An unsupported A2A-Version gets VersionNotSupportedError",
    versions=("1.0",),
)
async def version_unsupported(ctx: CheckContext) -> str | None:
    res = await ctx.call("GetTask", _probe(), version_headers={"A2A-Version": "9.9"})
    ctx.expect_error(res, VersionNotSupportedError, "A2A-Version: 9.9")
    return None


@check(
    "version.patch-ignored",
    "§3.6",
    SHOULD,
    "A patch number in A2A-Version is ignored (1.0.1 is 1.0)",
    versions=("1.0",),
)
async def version_patch(ctx: CheckContext) -> str | None:
    _served(
        ctx,
        await ctx.call("GetTask", _probe(), version_headers={"A2A-Version": "1.0.1"}),
        "A2A-Version: 1.0.1",
    )
    return None


@check(
    "version.query-parameter",
    "§3.6.1",
    SHOULD,
    "A2A-Version is also accepted as a query parameter",
    versions=("1.0",),
)
async def version_query(ctx: CheckContext) -> str | None:
    ep = ctx._endpoint()
    if ctx.transport == JSONRPC:
        body = codec.dumps(ctx.jsonrpc_body("GetTask", {"id": _UNKNOWN}))
        reply = await ctx.request(
            "POST",
            ep.url,
            params=[("A2A-Version", "1.0")],
            headers={"Content-Type": "application/json"},
            content=body,
        )
    else:
        headers = {
            k: v for k, v in ctx.rest_headers(with_body=False).items() if k.lower() != "a2a-version"
        }
        reply = await ctx.request(
            "GET",
            ctx.rest_url(f"/tasks/{_UNKNOWN}"),
            headers=headers,
            params=[("A2A-Version", "1.0")],
        )
    _served(ctx, ctx._interpret("GetTask", reply, None), "?A2A-Version=1.0 without the header")
    return None


# ---------------------------------------------------------------- HTTP+JSON errors

_REST = (REST,)


@check(
    "rest.error-format",
    "§11.6",
    MUST,
    "HTTP+JSON errors are google.rpc.Status bodies with the mapped HTTP status",
    versions=("1.0",),
    transports=_REST,
)
async def rest_error_format(ctx: CheckContext) -> str | None:
    res = await ctx.call("GetTask", _probe())
    err = ctx.expect_error(res, TaskNotFoundError, "GET /tasks/{unknown}")
    ctx.expect(
        err.body_shape_ok,
        f'the error body is not {{"error": {{...}}}}: {excerpt(res.http.body, 200)!r}',
    )
    body = err.data if isinstance(err.data, dict) else {}
    problems = []
    if body.get("code") != 404:
        problems.append(f"error.code is {body.get('code')!r}, expected 404")
    if body.get("status") != "NOT_FOUND":
        problems.append(f"error.status is {body.get('status')!r}, expected 'NOT_FOUND'")
    if not isinstance(body.get("message"), str):
        problems.append("error.message is missing")
    details = body.get("details", [])
    if not isinstance(details, list) or any(
        not (isinstance(d, dict) and isinstance(d.get("@type"), str)) for d in details
    ):
        problems.append("error.details must be an array of objects with @type")
    ctx.expect(not problems, "; ".join(problems))
    return None


@check(
    "rest.error-info",
    "§11.6, §5.4",
    MUST,
    "HTTP+JSON A2A errors include a google.rpc.ErrorInfo with reason and domain",
    versions=("1.0",),
    transports=_REST,
)
async def rest_error_info(ctx: CheckContext) -> str | None:
    res = await ctx.call("GetTask", _probe())
    err = ctx.expect_error(res, TaskNotFoundError, "GET /tasks/{unknown}")
    info = err.error_info()
    ctx.expect(info is not None, f"error.details has no {ERROR_INFO_TYPE}")
    assert info is not None
    ctx.expect(
        info.get("reason") == "TASK_NOT_FOUND" and info.get("domain") == "a2a-protocol.org",
        f"ErrorInfo reason/domain are {info.get('reason')!r}/{info.get('domain')!r}",
    )
    return None


@check(
    "rest.error-status",
    "0.3 §3.2.3",
    MUST,
    "0.3 HTTP+JSON errors: an error status of the error's class (4xx for the client's), a "
    "JSON body, from a route that exists (0.3 fixes no status per error type)",
    versions=("0.3",),
    transports=_REST,
)
async def rest_error_status_03(ctx: CheckContext) -> str | None:
    res = await ctx.call("GetTask", _probe())
    ctx.expect_error(res, TaskNotFoundError, "GET /v1/tasks/{unknown}")
    try:
        res.http.json()
    except ValueError:
        ctx.fail(f"the error body is not JSON: {excerpt(res.http.body, 200)!r}")
    return None


async def _task_media_type(ctx: CheckContext) -> str:
    """The media type of a successful GetTask answer."""
    task = await ctx.any_task()
    res = await ctx.call("GetTask", m.GetTaskRequest(id=task.id))
    ctx.expect_result(res, "GetTask")
    return res.http.media_type


@check(
    "rest.content-type",
    "§11.1",
    SHOULD,
    "HTTP+JSON responses are application/a2a+json",
    versions=("1.0",),
    transports=_REST,
)
async def rest_content_type(ctx: CheckContext) -> str | None:
    media = await _task_media_type(ctx)
    ctx.expect(media == "application/a2a+json", f"Content-Type {media or '(none)'!r}")
    return None


@check(
    "rest.content-type-json",
    "0.3 §3.2.3",
    MUST,
    "0.3 HTTP+JSON responses are application/json",
    versions=("0.3",),
    transports=_REST,
)
async def rest_content_type_03(ctx: CheckContext) -> str | None:
    media = await _task_media_type(ctx)
    ctx.expect(media == "application/json", f"Content-Type {media or '(none)'!r}")
    return None


@check(
    "rest.invalid-body",
    "§3.3.2, §11.6",
    MUST,
    "An invalid request body gets HTTP 400",
    transports=_REST,
)
async def rest_invalid_body(ctx: CheckContext) -> str | None:
    cases = {
        "a message whose parts is not a list": {
            "message": {
                "messageId": "x",
                "role": "ROLE_USER" if ctx.version == "1.0" else "user",
                "parts": "not-a-list",
                "content": "not-a-list",
            }
        },
        "a body that is a JSON array": [1, 2],
    }
    for what, body in cases.items():
        res = await ctx.call("SendMessage", ctx.send_request("hello"), raw_params=body)
        ctx.expect_error(res, InvalidParamsError, f"POST message:send with {what}")
    return None


# ---------------------------------------------------------------- robustness


def _malformed(ctx: CheckContext) -> dict[str, bytes]:
    return {
        "truncated JSON": b'{"jsonrpc": "2.0", "id": 1, "method": ',
        "an empty body": b"",
        "invalid UTF-8": b'{"jsonrpc": "2.0", "id": "\xff\xfe", "method": "x"}',
        "a JSON number": b"42",
        "JSON null": b"null",
        "deeply nested arrays": b"[" * 100_000 + b"]" * 100_000,
        "deeply nested objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    }


async def _post_raw(ctx: CheckContext, body: bytes) -> HttpReply:
    if ctx.transport == JSONRPC:
        return await ctx.request(
            "POST",
            ctx._endpoint().url,
            content=body,
            headers={"Content-Type": "application/json", **ctx.version_headers()},
        )
    return await ctx.request(
        "POST",
        ctx.rest_url("/message:send"),
        content=body,
        headers=ctx.rest_headers(with_body=True),
    )


@check(
    "robustness.malformed-bodies",
    "§3.3.2, §9.5",
    MUST,
    "Malformed bodies get an error answer, never a 5xx or a dropped connection",
)
async def malformed(ctx: CheckContext) -> str | None:
    problems = []
    for what, body in _malformed(ctx).items():
        reply = await _post_raw(ctx, body)
        sent = excerpt(body, 40)
        if reply.status is None:
            problems.append(f"{what}: no response ({reply.error}) to {sent!r}")
        elif reply.status >= 500:
            problems.append(f"{what}: HTTP {reply.status} to {sent!r}")
        elif ctx.transport == REST and reply.status < 400:
            problems.append(f"{what}: HTTP {reply.status}, expected a 4xx, to {sent!r}")
    if ctx.version == "0.3" and ctx.transport == REST:
        why = (
            " (a malformed request is the client's error, -32700/-32600 in 0.3 §8.1, and 0.3 "
            f"§3.2.3 asks for statuses that correspond to it: {requirement(STATUS_CODES_03).sentence!r}; "
            "5xx is for the server's own failures)"
        )
    else:
        why = (
            " (§3.3.2: a malformed request is the client's error, answered "
            + ("-32700/-32600 (§9.5)" if ctx.transport == JSONRPC else "HTTP 400 (§11.6)")
            + "; 5xx is for the server's own failures)"
        )
    ctx.expect(not problems, "; ".join(problems) + why)
    return None


@check(
    "robustness.oversized-body",
    "§3.3.2",
    SHOULD,
    "An 8 MiB request gets an answer (an error or a result), not a 5xx or a dropped connection",
)
async def oversized(ctx: CheckContext) -> str | None:
    big = "x" * (8 * 1024 * 1024)
    if ctx.transport == JSONRPC:
        body = codec.dumps(ctx.jsonrpc_body("GetTask", {"id": big}))
    else:
        body = codec.dumps(
            codec.to_wire(ctx.send_request(big[:16]), ctx.dialect) | {"padding": big}
        )
    reply = await _post_raw(ctx, body)
    if reply.status is None:
        ctx.fail(f"no response to an 8 MiB body ({reply.error})")
    # (0.3 sets no size rule: there a failure is an advisory, see _citations.py)
    ctx.expect(reply.status < 500, f"HTTP {reply.status} for an 8 MiB body")
    return f"HTTP {reply.status}"


__all__: list[str] = []
