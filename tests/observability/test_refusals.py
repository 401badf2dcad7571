"""One log line per refused request, on every binding, from real ``serve`` processes.

Before, only a request refused by its operation (GetTask of an unknown task) made the
line; everything refused before that (bad JSON, bad params, unknown method or route,
wrong HTTP method, a body too big, a wrong content type, a missing or wrong token, on
JSON-RPC, HTTP+JSON and gRPC) made none. Each case here sends its own ``traceparent``,
so its lines are counted by trace id.
"""

from __future__ import annotations

import json
import logging
import socket
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import httpx
import pytest
from _procs import CliProcess, cli_env, free_port

from a2a_models.adapters.grpc import SERVICE_NAME
from a2a_models.server import A2AServer, refuse
from a2a_models.server._operations import refusals

pb = pytest.importorskip("a2a_models.adapters.grpc._pb.a2a_pb2")

TOKEN = "s3cret-token-value"
WRONG = "wrong-token-value"
BODY_MARKER = "BODY-CONTENT-MARKER"
BIG = 11 * 1024 * 1024  # over the 10 MiB limit


def _env() -> dict[str, str]:
    env = cli_env({"A2A_AUTH_TOKENS": TOKEN, "OTEL_METRICS_EXPORTER": "none"})
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER", "A2A_OTEL_DETAIL"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[CliProcess, str, str]]:
    port, grpc_port = free_port(), free_port()
    args = ["serve", "--otel", "--store", "memory:", "--port", str(port)]
    proc = CliProcess([*args, "--grpc-port", str(grpc_port)], name="serve", env=_env())
    try:
        proc.wait_ready(60)
        yield proc, f"http://127.0.0.1:{port}", f"127.0.0.1:{grpc_port}"
    finally:
        proc.stop()


def _rpc(method: str, params: Any, id_: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def _cases(base: str, target: str) -> dict[str, tuple[int, Callable[[dict[str, str]], Any]]]:
    """name -> (lines expected, send(headers with the case's traceparent))."""
    http = httpx.Client(timeout=30)
    channel = grpc.insecure_channel(target)
    v1 = {"A2A-Version": "1.0"}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    json_type = {"Content-Type": "application/json"}
    get = pb.GetTaskRequest(id="x").SerializeToString()
    subscribe = pb.SubscribeToTaskRequest(id="x").SerializeToString()

    def post(path: str, body: bytes | None = None, **kw: Any) -> Any:
        def send(h: dict[str, str]) -> Any:
            headers = {**auth, **v1, **json_type, **kw.pop("headers", {}), **h}
            return http.post(base + path, content=body, headers=headers, **kw)

        return send

    def rpc(payload: Any, **headers: str) -> Any:
        return post("/", json.dumps(payload).encode(), headers=headers)

    def unary(method: str, body: bytes, *metadata: tuple[str, str], token: bool = True) -> Any:
        def send(h: dict[str, str]) -> Any:
            md = [*h.items(), *metadata] + ([("authorization", f"Bearer {TOKEN}")] * token)
            try:
                channel.unary_unary(f"/{SERVICE_NAME}/{method}")(body, metadata=md, timeout=30)
            except grpc.RpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK

        return send

    def stream(method: str, body: bytes, *metadata: tuple[str, str], token: bool = True) -> Any:
        def send(h: dict[str, str]) -> Any:
            md = [*h.items(), *metadata] + ([("authorization", f"Bearer {TOKEN}")] * token)
            try:
                list(channel.unary_stream(f"/{SERVICE_NAME}/{method}")(body, metadata=md))
            except grpc.RpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK

        return send

    bad_json = b'{"jsonrpc": "2.0", "params": {"note": "' + BODY_MARKER.encode() + b'"'
    return {
        # JSON-RPC, 1.0 and 0.3
        "bad JSON": (1, post("/", bad_json)),
        "bad params": (1, rpc(_rpc("GetTask", {"id": 5}))),
        "unknown method": (1, rpc(_rpc("NoSuchMethod", {}))),
        "unknown task (refused by the operation)": (1, rpc(_rpc("GetTask", {"id": "x"}))),
        "0.3 bad params": (1, rpc(_rpc("tasks/get", {"id": 5}), **{"A2A-Version": "0.3"})),
        "unsupported version": (1, rpc(_rpc("GetTask", {"id": "x"}), **{"A2A-Version": "9"})),
        "batch of two bad items": (2, rpc([_rpc("GetTask", {"id": 5}), {"jsonrpc": "2.0"}])),
        "notification with bad params": (1, rpc({"jsonrpc": "2.0", "method": "GetTask"})),
        "stream with bad params": (1, rpc(_rpc("SendStreamingMessage", {"message": 5}))),
        "stream with a bad Last-Event-ID": (
            1,
            rpc(_rpc("SubscribeToTask", {"id": "x"}), **{"Last-Event-ID": "abc"}),
        ),
        "body too big": (1, post("/", b"x" * BIG)),
        "wrong content type": (1, post("/", b"{}", headers={"Content-Type": "text/plain"})),
        "missing token": (1, post("/", b"{}", headers={"Authorization": ""})),
        "wrong token": (1, post("/", b"{}", headers={"Authorization": f"Bearer {WRONG}"})),
        # HTTP+JSON (REST), its SSE stream included
        "REST unknown route": (1, lambda h: http.get(base + "/no/such/route", headers=h)),
        "REST wrong HTTP method": (1, lambda h: http.delete(base + "/message:send", headers=h)),
        "REST bad params": (1, post("/message:send", b'{"message": 5}')),
        "REST body too big": (1, post("/message:send", b"x" * BIG)),
        "REST wrong content type": (
            1,
            post("/message:send", b"{}", headers={"Content-Type": "text/plain"}),
        ),
        "REST missing token": (1, lambda h: http.get(base + "/tasks/x", headers={**v1, **h})),
        "REST wrong token": (
            1,
            lambda h: http.get(
                base + "/tasks/x", headers={**v1, "Authorization": f"Bearer {WRONG}", **h}
            ),
        ),
        "REST stream with a bad Last-Event-ID": (
            1,
            post("/tasks/x:subscribe", headers={"Last-Event-ID": "abc"}),
        ),
        # gRPC
        "gRPC bad protobuf": (1, unary("GetTask", b"\xff\xff\xff")),
        "gRPC unsupported version": (1, unary("GetTask", get, ("a2a-version", "0.3"))),
        "gRPC missing token": (1, unary("GetTask", get, token=False)),
        "gRPC wrong token": (
            1,
            unary("GetTask", get, ("authorization", f"Bearer {WRONG}"), token=False),
        ),
        "gRPC stream with a bad Last-Event-ID": (
            1,
            stream("SubscribeToTask", subscribe, ("last-event-id", "abc")),
        ),
        "gRPC unknown method": (1, unary("NoSuchMethod", b"")),
        "gRPC message too big": (1, unary("SendMessage", b"x" * BIG)),
        # not an A2A request: no token needed, no refusal, no line
        "gRPC health check without a token": (
            0,
            lambda h: channel.unary_unary("/grpc.health.v1.Health/Check")(
                b"", metadata=list(h.items()), timeout=30
            ),
        ),
    }


def _refusal_lines(output: list[str]) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in output if line.startswith("{")]
    return [line for line in lines if line.get("logger") == "a2a_models.server.refusals"]


def test_every_refused_request_is_one_line_on_every_binding(
    served: tuple[CliProcess, str, str],
) -> None:
    proc, base, target = served
    cases = _cases(base, target)
    trace_ids: dict[str, str] = {}
    answers: dict[str, Any] = {}
    for name, (_, send) in cases.items():
        trace_ids[name] = trace_id = uuid.uuid4().hex
        answer = send({"traceparent": f"00-{trace_id}-b7ad6b7169203331-01"})
        answers[name] = getattr(answer, "status_code", answer)
    # The line is written before the answer; a last refusal's line, once read, says every
    # earlier one has been read too.
    last = uuid.uuid4().hex
    traceparent = f"00-{last}-b7ad6b7169203331-01"
    httpx.post(base + "/", content=b"{", headers={"traceparent": traceparent, **_auth()})
    proc.wait_for(f'"trace_id": "{last}"')
    lines = _refusal_lines(proc.output)
    counted = Counter(line.get("trace_id") for line in lines)
    got = {name: counted[trace_ids[name]] for name in cases}
    assert got == {name: expected for name, (expected, _) in cases.items()}, (answers, got)
    assert len(lines) == sum(got.values()) + 1  # none without the trace id that came
    # Refusals answered as before (a sample), and nothing logged that is not the peer's
    # mistake in its own bounded words.
    assert answers["body too big"] == 413 and answers["REST wrong content type"] == 415
    assert answers["REST wrong HTTP method"] == 405 and answers["wrong token"] == 401
    assert answers["gRPC unknown method"] is grpc.StatusCode.UNIMPLEMENTED
    assert answers["gRPC wrong token"] is grpc.StatusCode.UNAUTHENTICATED
    assert answers["gRPC message too big"] is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert answers["gRPC health check without a token"] == b"\x08\x01"  # status: SERVING
    text = proc.text
    assert "Traceback" not in text
    for secret in (TOKEN, WRONG, BODY_MARKER, "xxxxxxxx"):
        assert secret not in text
    by_case = {
        name: [ln for ln in lines if ln.get("trace_id") == tid] for name, tid in trace_ids.items()
    }
    (unknown_task,) = by_case["unknown task (refused by the operation)"]
    assert (
        unknown_task["message"] == "GetTask refused: -32001 TaskNotFoundError (task 'x' not found)"
    )
    assert unknown_task["task_id"] == "x" and unknown_task["span_id"]  # in the server span
    (wrong_token,) = by_case["wrong token"]
    assert wrong_token["message"] == (
        "JSON-RPC request refused: -32000 AuthenticationError (Invalid bearer token)"
    )
    (route,) = by_case["REST unknown route"]
    assert route["message"] == (
        "HTTP request refused: -32601 RestRouteError (No A2A route at '/no/such/route')"
    )
    (grpc_params,) = by_case["gRPC bad protobuf"]
    assert grpc_params["message"].startswith("GetTask refused: -32602 InvalidParamsError (")
    (too_big,) = by_case["gRPC message too big"]
    assert too_big["message"] == (
        f"SendMessage refused: -32600 InvalidRequestError (Request message too large: {BIG} "
        "bytes, the limit is 10485760 bytes)"
    )


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def test_without_otel_serve_logs_no_refusals() -> None:
    port = free_port()
    args = ["serve", "--store", "memory:", "--port", str(port)]
    proc = CliProcess(args, name="serve", env=_env()).wait_ready(60)
    try:
        url = f"http://127.0.0.1:{port}/"
        refused = [
            httpx.post(url, content=b"{", headers=_auth()),
            httpx.post(url, content=b"{}", headers={"Authorization": f"Bearer {WRONG}"}),
            httpx.get(url + "no/such/route"),
        ]
    finally:
        code = proc.stop()
    assert [r.status_code for r in refused] == [200, 401, 404]
    assert code == 0
    assert "refused" not in proc.text, proc.log()


async def test_a_disabled_logger_formats_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    make = refusals.makeRecord

    def counting(*args: Any, **kwargs: Any) -> logging.LogRecord:
        made.append(args)
        return make(*args, **kwargs)

    monkeypatch.setattr(refusals, "makeRecord", counting)
    server = A2AServer()
    headers = {"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01"}
    monkeypatch.setattr(refusals, "level", logging.WARNING)
    await server.handle(b"{", headers)
    assert made == []
    monkeypatch.setattr(refusals, "level", logging.INFO)
    logging.getLogger("a2a_models").manager._clear_cache()
    await server.handle(b"{", headers)
    assert len(made) == 1


def test_a_bogus_traceparent_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    from a2a_models.errors import InvalidRequestError

    cases = {
        "00-" + "a" * 32 + "-" + "b" * 16 + "-01": "a" * 32,
        "00-" + "0" * 32 + "-" + "b" * 16 + "-01": "",  # the invalid all-zero trace id
        "ff-" + "a" * 32 + "-" + "b" * 16 + "-01": "",  # the forbidden version
        "00-" + "A" * 32 + "-" + "b" * 16 + "-01": "",  # upper case is not W3C
        "00-" + "a" * 32 + "-" + "b" * 16 + "-01" + "x" * 100_000: "",
        "x" * 1_000_000: "",
    }
    with caplog.at_level(logging.INFO, refusals.name):
        for value in cases:
            refuse(InvalidRequestError("no"), "JSON-RPC request", headers={"traceparent": value})
    assert [getattr(r, "trace_id", None) for r in caplog.records] == list(cases.values())
    assert all(len(r.getMessage()) < 100 for r in caplog.records)


def test_a_client_gone_before_its_body_is_no_error() -> None:
    # An HTTP+JSON request whose client went away mid-body was logged as an unexpected
    # error with a traceback (starlette's ClientDisconnect); JSON-RPC's was not.
    port = free_port()
    args = ["serve", "--store", "memory:", "--port", str(port)]
    proc = CliProcess(args, name="serve", env=_env()).wait_ready(60)
    try:
        for path in ("/message:send", "/"):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Authorization: Bearer {TOKEN}\r\nA2A-Version: 1.0\r\n"
                    "Content-Length: 1000\r\n\r\n{".encode()
                )
        answered = httpx.get(f"http://127.0.0.1:{port}/healthz").status_code
    finally:
        code = proc.stop()  # graceful: the two requests' handlers have ended
    assert answered == 200 and code == 0
    assert "Traceback" not in proc.text and "error" not in proc.text.lower(), proc.log()
