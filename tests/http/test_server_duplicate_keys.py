"""A request naming a member twice in one object is refused on every JSON binding, with
the member's path, and nothing runs: in process (both codec paths) and through a real
``a2a-models serve``.

Read last-wins, ``{"messageId":"a",...,"messageId":"b"}`` would run with one of the ids
silently dropped (the official SDKs' JSON-RPC servers do that). JSON-RPC answers -32700
(the text has no one meaning: protobuf's JSON parser calls it a parse error too) and
HTTP+JSON 400 with a ``BadRequest`` field violation at the member.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _procs import CliProcess
from _server_support import V10, asgi_client, make_server

from a2a_models.adapters.http import create_app

pytestmark = pytest.mark.usefixtures("codec_path")

TWICE = "given more than once (the names in an object must be unique)"
JSON = {"Content-Type": "application/json"}

M10 = '"role":"ROLE_USER","parts":[{"text":"run"}]'
M03 = '"kind":"message","role":"user","parts":[{"kind":"text","text":"run"}]'

#: (headers, JSON-RPC body, the path the error names)
RPC = {
    "1.0 messageId": (
        V10,
        '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
        f'{{"messageId":"a",{M10},"messageId":"b"}}}}}}',
        "params.message.messageId",
    ),
    "1.0 escaped name": (
        V10,
        '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
        f'{{"messageId":"a",{M10},"message\\u0049d":"b"}}}}}}',
        "params.message.messageId",
    ),
    "1.0 id": (
        V10,
        '{"jsonrpc":"2.0","id":1,"id":2,"method":"SendMessage","params":{"message":'
        f'{{"messageId":"a",{M10}}}}}}}',
        "id",
    ),
    "1.0 metadata": (
        V10,
        '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
        f'{{"messageId":"a",{M10},"metadata":{{"k":1,"k":2}}}}}}}}',
        "params.message.metadata.k",
    ),
    "0.3 part text": (
        {},
        '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message",'
        '"messageId":"a","role":"user","parts":[{"kind":"text","text":"one","text":"two"}]}}}',
        "params.message.parts[0].text",
    ),
    "1.0 batch": (
        V10,
        '[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}},'
        '{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"x","id":"y"}}]',
        "[1].params.id",
    ),
}

#: (route, headers, body, the field the error names)
REST = {
    "1.0": (
        "/message:send",
        V10,
        f'{{"message":{{"messageId":"a",{M10},"messageId":"b"}}}}',
        "message.messageId",
    ),
    "1.0 configuration": (
        "/message:send",
        V10,
        f'{{"message":{{"messageId":"a",{M10}}},"configuration":{{"historyLength":1,'
        '"historyLength":2}}',
        "configuration.historyLength",
    ),
    "0.3": (
        "/v1/message:send",
        {},
        '{"message":{"messageId":"a","role":"ROLE_USER","content":[{"text":"run"}],'
        '"content":[{"text":"other"}]}}',
        "message.content",
    ),
}


def _tasks(answer: dict[str, Any]) -> int:
    return len(answer["result"]["tasks"])


async def test_jsonrpc_refuses_with_the_path_and_runs_nothing() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        for name, (headers, body, path) in RPC.items():
            answer = await client.post("/", content=body, headers={**headers, **JSON})
            assert answer.status_code == 200, name
            assert answer.json() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": f"Invalid JSON payload: {path}: {TWICE}"},
            }, name
        listed = await client.post(
            "/", json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}, headers=V10
        )
        assert _tasks(listed.json()) == 0
        # The same request once each: it runs (one task).
        body = RPC["1.0 messageId"][1].replace(',"messageId":"b"', "")
        assert "result" in (await client.post("/", content=body, headers={**V10, **JSON})).json()
        listed = await client.post(
            "/", json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}, headers=V10
        )
        assert _tasks(listed.json()) == 1


@pytest.mark.parametrize("case", sorted(REST))
async def test_rest_refuses_with_a_field_violation_and_runs_nothing(case: str) -> None:
    route, headers, body, field = REST[case]
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        answer = await client.post(route, content=body, headers={**headers, **JSON})
        listed = await client.get("/tasks", headers=V10)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"] == f"Invalid request: {field}: {TWICE}"
    violations = [d for d in error["details"] if d["@type"].endswith("google.rpc.BadRequest")]
    assert violations == [
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": field, "description": TWICE}],
        }
    ]
    assert listed.status_code == 200 and listed.json().get("tasks", []) == []


@pytest.fixture(scope="module")
def serve(codec_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """``a2a-models serve`` (SQLite) on the module's codec path (``A2A_CODEC_PURE``, inherited)."""
    tmp = tmp_path_factory.mktemp("dupkeys")
    proc = CliProcess(
        ["serve", "--port", "0", "--store", f"sqlite:///{tmp}/tasks.db"], cwd=Path(tmp)
    ).wait_ready()
    try:
        with httpx.Client(base_url=proc.url, timeout=30) as client:
            yield client
    finally:
        proc.stop()
    assert "Traceback" not in proc.text, proc.log()


def test_serve_refuses_on_every_json_binding(serve: httpx.Client) -> None:
    for name, (headers, body, path) in RPC.items():
        answer = serve.post("/", content=body, headers={**headers, **JSON})
        assert answer.json()["error"] == {
            "code": -32700,
            "message": f"Invalid JSON payload: {path}: {TWICE}",
        }, name
    for name, (route, headers, body, field) in REST.items():
        answer = serve.post(route, content=body, headers={**headers, **JSON})
        assert answer.status_code == 400, name
        assert answer.json()["error"]["message"] == f"Invalid request: {field}: {TWICE}", name
    listed = serve.post(
        "/",
        content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}),
        headers={**V10, **JSON},
    )
    assert _tasks(listed.json()) == 0
