"""Errors for bad input through a real ``a2a-models serve`` (SQLite and PostgreSQL stores),
on every binding: JSON-RPC 1.0 and 0.3, HTTP+JSON 1.0 and 0.3, gRPC.

A caller's value that an error repeats is cut (``'hhh…'... (N characters)``), so the
answer to a huge bogus value stays small: each case sends the value at two sizes and
counts the bytes of both answers. The code or status is checked at both, the message
names the value's length, nothing stored changes and the server prints no traceback.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _procs import PG_DSN, CliProcess, free_port

#: Two sizes of the bogus value: the answer must not grow with it.
SMALL, LARGE = 50_000, 1_000_000
#: URLs carry less (the server's request line limit): path ids use these.
PATH_SMALL, PATH_LARGE = 5_000, 50_000
#: Most an error answer may take, whatever the value's size.
MAX_ANSWER = 2_048

#: (status or code, answer bytes, message) of one refused request.
Answer = tuple[Any, int, str]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    pytest.importorskip("grpc")
    schema = None
    if request.param == "sqlite":
        store = f"sqlite:///{tmp_path_factory.mktemp('errors')}/tasks.db"
    else:
        psycopg = pytest.importorskip("psycopg")
        try:
            psycopg.connect(PG_DSN, connect_timeout=3).close()
        except psycopg.Error as exc:
            pytest.fail(f"PostgreSQL at {PG_DSN} is needed: {exc}")
        schema = f"a2a_errors_{uuid.uuid4().hex[:12]}"
        store = f"{PG_DSN}?schema={schema}&channel={schema}"
    grpc_port = free_port()
    proc = CliProcess(
        ["serve", "--port", "0", "--grpc-port", str(grpc_port), "--store", store],
        cwd=Path(str(tmp_path_factory.mktemp("cwd"))),
    ).wait_ready()
    try:
        with httpx.Client(base_url=proc.url, timeout=60) as client:
            seed = _rpc(client, "SendMessage", {"message": _message("seed", "task")}).json()
            task = seed["result"]["task"]
            yield {"proc": proc, "http": client, "grpc": f"127.0.0.1:{grpc_port}", "task": task}
    finally:
        proc.stop()
        if schema is not None:
            import psycopg

            with psycopg.connect(PG_DSN, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    assert "Traceback" not in proc.text, proc.log()


def _message(message_id: str, text: str, **more: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **more}


def _rpc(client: httpx.Client, method: str, params: Any, version: str = "1.0") -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"A2A-Version": version, "Content-Type": "application/json"}
    return client.post("/", content=json.dumps(body), headers=headers)


def _rpc_case(
    method: str, params: Callable[[str, dict[str, Any]], Any], version: str = "1.0"
) -> Callable[[dict[str, Any], str], Answer]:
    def run(server: dict[str, Any], value: str) -> Answer:
        answer = _rpc(server["http"], method, params(value, server["task"]), version)
        assert answer.status_code == 200, answer.text[:500]
        error = answer.json()["error"]
        return error["code"], len(answer.content), error["message"]

    return run


def _rest_case(
    verb: str, path: Callable[[str, dict[str, Any]], str], body: Any = None, version: str = "1.0"
) -> Callable[[dict[str, Any], str], Answer]:
    def run(server: dict[str, Any], value: str) -> Answer:
        headers = {"A2A-Version": version, "Content-Type": "application/json"}
        content = None if body is None else json.dumps(body(value, server["task"]))
        answer = server["http"].request(
            verb, path(value, server["task"]), content=content, headers=headers
        )
        return answer.status_code, len(answer.content), answer.json()["error"]["message"]

    return run


def _grpc_case(method: str, build: Callable[[Any, str, dict[str, Any]], Any]) -> Any:
    def run(server: dict[str, Any], value: str) -> Answer:
        import grpc

        from a2a_models.adapters.grpc._pb import a2a_pb2, a2a_pb2_grpc

        with grpc.insecure_channel(
            server["grpc"], options=[("grpc.max_send_message_length", 16 << 20)]
        ) as channel:
            call = getattr(a2a_pb2_grpc.A2AServiceStub(channel), method)
            request = build(a2a_pb2, value, server["task"])
            try:
                if method == "SubscribeToTask":
                    next(iter(call(request, metadata=[("a2a-version", "1.0")])))
                else:
                    call(request, metadata=[("a2a-version", "1.0")])
            except grpc.RpcError as exc:
                details = exc.details() or ""
                trailers = exc.trailing_metadata() or ()
                size = len(details) + sum(len(k) + len(v) for k, v in trailers)
                return exc.code().name, size, details
        pytest.fail(f"{method} accepted a bogus value")

    return run


def _task_id(value: str, task: dict[str, Any]) -> dict[str, Any]:
    return {"id": value}


CASES: dict[str, tuple[Callable[[dict[str, Any], str], Answer], Any]] = {
    "jsonrpc GetTask id": (_rpc_case("GetTask", _task_id), -32001),
    "jsonrpc CancelTask id": (_rpc_case("CancelTask", _task_id), -32001),
    "jsonrpc SubscribeToTask id": (_rpc_case("SubscribeToTask", _task_id), -32001),
    "jsonrpc SendMessage taskId": (
        _rpc_case("SendMessage", lambda v, t: {"message": _message("m", "x", taskId=v)}),
        -32001,
    ),
    "jsonrpc SendMessage contextId": (
        _rpc_case(
            "SendMessage",
            lambda v, t: {"message": _message("m", "x", taskId=t["id"], contextId=v)},
        ),
        -32602,
    ),
    "jsonrpc SendMessage role": (
        _rpc_case("SendMessage", lambda v, t: {"message": {**_message("m", "x"), "role": v}}),
        -32602,
    ),
    "jsonrpc ListTasks status": (_rpc_case("ListTasks", lambda v, t: {"status": v}), -32602),
    "jsonrpc ListTasks statusTimestampAfter": (
        _rpc_case("ListTasks", lambda v, t: {"statusTimestampAfter": v}),
        -32602,
    ),
    "jsonrpc CreateTaskPushNotificationConfig taskId": (
        _rpc_case(
            "CreateTaskPushNotificationConfig",
            lambda v, t: {"taskId": v, "url": "https://127.0.0.1/hook"},
        ),
        -32001,
    ),
    "jsonrpc CreateTaskPushNotificationConfig url": (
        _rpc_case("CreateTaskPushNotificationConfig", lambda v, t: {"taskId": t["id"], "url": v}),
        -32602,
    ),
    "jsonrpc GetTaskPushNotificationConfig id": (
        _rpc_case("GetTaskPushNotificationConfig", lambda v, t: {"taskId": t["id"], "id": v}),
        -32001,
    ),
    "jsonrpc ListTaskPushNotificationConfigs taskId": (
        _rpc_case("ListTaskPushNotificationConfigs", lambda v, t: {"taskId": v}),
        -32001,
    ),
    "jsonrpc DeleteTaskPushNotificationConfig taskId": (
        _rpc_case("DeleteTaskPushNotificationConfig", lambda v, t: {"taskId": v, "id": "c"}),
        -32001,
    ),
    "jsonrpc 0.3 tasks/get id": (_rpc_case("tasks/get", _task_id, "0.3"), -32001),
    "jsonrpc 0.3 tasks/cancel id": (_rpc_case("tasks/cancel", _task_id, "0.3"), -32001),
    "jsonrpc 0.3 message/send kind": (
        _rpc_case(
            "message/send",
            lambda v, t: {"message": {"kind": v, "messageId": "m", "role": "user", "parts": []}},
            "0.3",
        ),
        -32602,
    ),
    "rest GET /tasks/{id}": (_rest_case("GET", lambda v, t: f"/tasks/{v}"), 404),
    "rest POST /tasks/{id}:cancel": (
        _rest_case("POST", lambda v, t: f"/tasks/{v}:cancel", lambda v, t: {}),
        404,
    ),
    "rest GET /tasks?status": (_rest_case("GET", lambda v, t: f"/tasks?status={v}"), 400),
    "rest POST /message:send taskId": (
        _rest_case(
            "POST",
            lambda v, t: "/message:send",
            lambda v, t: {"message": _message("m", "x", taskId=v)},
        ),
        404,
    ),
    "rest POST pushNotificationConfigs url": (
        _rest_case(
            "POST",
            lambda v, t: f"/tasks/{t['id']}/pushNotificationConfigs",
            lambda v, t: {"taskId": t["id"], "url": v},
        ),
        400,
    ),
    "rest GET {unknown path}": (_rest_case("GET", lambda v, t: f"/nope/{v}"), 404),
    "rest DELETE /tasks/{id} (no such method)": (
        _rest_case("DELETE", lambda v, t: f"/tasks/{v}"),
        405,
    ),
    "rest 0.3 GET /v1/tasks/{id}": (
        _rest_case("GET", lambda v, t: f"/v1/tasks/{v}", None, "0.3"),
        404,
    ),
    "grpc GetTask id": (
        _grpc_case("GetTask", lambda pb, v, t: pb.GetTaskRequest(id=v)),
        "NOT_FOUND",
    ),
    "grpc CancelTask id": (
        _grpc_case("CancelTask", lambda pb, v, t: pb.CancelTaskRequest(id=v)),
        "NOT_FOUND",
    ),
    "grpc SubscribeToTask id": (
        _grpc_case("SubscribeToTask", lambda pb, v, t: pb.SubscribeToTaskRequest(id=v)),
        "NOT_FOUND",
    ),
    "grpc CreateTaskPushNotificationConfig url": (
        _grpc_case(
            "CreateTaskPushNotificationConfig",
            lambda pb, v, t: pb.TaskPushNotificationConfig(task_id=t["id"], url=v),
        ),
        "INVALID_ARGUMENT",
    ),
    "grpc GetTaskPushNotificationConfig id": (
        _grpc_case(
            "GetTaskPushNotificationConfig",
            lambda pb, v, t: pb.GetTaskPushNotificationConfigRequest(task_id=t["id"], id=v),
        ),
        "NOT_FOUND",
    ),
}


def _method_name(server: dict[str, Any], value: str) -> Answer:
    answer = _rpc(server["http"], value, {})
    error = answer.json()["error"]
    return error["code"], len(answer.content), error["message"]


CASES["jsonrpc method name"] = (_method_name, -32601)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_huge_bogus_value_gets_a_small_precise_error(server: dict[str, Any], case: str) -> None:
    run, expected = CASES[case]
    small, large = (
        (PATH_SMALL, PATH_LARGE)
        if case.startswith("rest GET") or "{id}" in case
        else (SMALL, LARGE)
    )
    before = _stored(server)
    answers = {n: run(server, "h" * n) for n in (small, large)}
    for n, (code, size, message) in answers.items():
        assert code == expected, (n, message[:300])
        # The value is repeated cut, with its length: the reader still sees what it was.
        cut = re.search(r"'\.\.\. \((\d+) characters\)", message)
        assert cut is not None and n <= int(cut[1]) <= n + 10, message[:300]
        assert size <= MAX_ANSWER, (n, size, message[:300])
    # Bytes answered for the large value vs the small one: only the length's digits differ.
    assert answers[large][1] - answers[small][1] <= 8, answers
    assert _stored(server) == before


def _stored(server: dict[str, Any]) -> Any:
    """Every stored task, whole: a refused request changes none of them."""
    answer = _rpc(server["http"], "ListTasks", {"pageSize": 100, "includeArtifacts": True})
    return answer.json()["result"]


def test_quote_input_cuts_a_long_value_and_counts_it() -> None:
    from a2a_models.errors import ECHO_LIMIT, clip_input, quote_input

    assert quote_input("abc") == "'abc'"
    cut = quote_input("x" * 8_000_000)
    assert cut == f"'{'x' * ECHO_LIMIT}'... (8000000 characters)"
    assert clip_input("x" * 100) == f"{'x' * ECHO_LIMIT}... (100 characters)"
    assert quote_input(list(range(10_000))).endswith("characters)")
    assert len(quote_input(list(range(10_000)))) < 2 * ECHO_LIMIT


def test_a_missing_task_is_worded_in_one_place() -> None:
    from a2a_models.errors import TaskNotFoundError

    error = TaskNotFoundError.of("t" * 1_000_000, config_id="c")
    answer = json.dumps(error.to_jsonrpc()) + json.dumps(error.to_http_status())
    assert len(answer) < MAX_ANSWER
    assert error.message.startswith("push notification config 'c' of task 'ttt")
    # A long but plausible id stays whole where a program reads it (the data).
    assert TaskNotFoundError.of("i" * 200).data == {"taskId": "i" * 200}
    # No other module words it: each site calls TaskNotFoundError.of.
    src = Path(__file__).parents[1] / "src" / "a2a_models"
    spelled = [
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if 'TaskNotFoundError(f"' in path.read_text(encoding="utf-8")
    ]
    assert spelled == []
