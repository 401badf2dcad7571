"""Every JSON-RPC path through ``A2AServer.handle``: bytes in, exact bytes out.

Runs against :class:`AgentServer` (the engine) and bare :class:`A2AServer`
subclasses, in both protocol versions, looking at the raw reply bodies, SSE
events and response headers a transport would send.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import pytest

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    InvalidModelError,
    JSONRPCError,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_models import models as m
from a2a_models.protocol import METHODS, encode_request
from a2a_models.server import (
    A2AServer,
    Agent,
    AgentEvent,
    AgentServer,
    CallContext,
    EventStream,
    InMemoryEventBroker,
    Reply,
    RequestContext,
    ServerSentEvent,
    StreamingReply,
    StreamItem,
)

V10 = {"A2A-Version": "1.0"}
V03: dict[str, str] = {}  # a missing header means 0.3 (spec §3.6.2)
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"

Execute = Callable[[RequestContext], AsyncIterator[AgentEvent]]


# --------------------------------------------------------------------------- helpers


def make_card(
    *,
    streaming: bool = True,
    push: bool = True,
    extended: bool | None = None,
    extensions: tuple[str, ...] = (),
) -> AgentCard:
    return AgentCard(
        name="test agent",
        description="an agent for tests",
        version="1.0.0",
        skills=[m.AgentSkill(id="s", name="s", description="a skill", tags=["t"])],
        supported_interfaces=[AgentInterface(url="http://test/a2a", protocol_binding="JSONRPC")],
        capabilities=AgentCapabilities(
            streaming=streaming,
            push_notifications=push,
            extended_agent_card=extended,
            extensions=[AgentExtension(uri=u) for u in extensions],
        ),
    )


class FuncAgent(Agent):
    """An agent made of an async generator function; records every context."""

    def __init__(self, execute: Execute) -> None:
        self._execute = execute
        self.contexts: list[RequestContext] = []

    def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.contexts.append(context)
        return self._execute(context)


async def echo(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.working()
    yield context.artifact(context.message.text or "-")
    yield context.complete("done")


def rpc(method: str, params: Any = None, id: Any = 1, *, notify: bool = False) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if not notify:
        body["id"] = id
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


def user_message(version: str, text: str = "hello", message_id: str = "m-1") -> dict[str, Any]:
    if version == "1.0":
        return {"role": "ROLE_USER", "parts": [{"text": text}], "messageId": message_id}
    return {
        "kind": "message",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "messageId": message_id,
    }


def send_name(version: str) -> str:
    return "SendMessage" if version == "1.0" else "message/send"


def stream_name(version: str) -> str:
    return "SendStreamingMessage" if version == "1.0" else "message/stream"


def headers_for(version: str) -> dict[str, str]:
    return dict(V10) if version == "1.0" else dict(V03)


async def reply_of(server: A2AServer, body: bytes, headers: Mapping[str, str]) -> Reply:
    reply = await server.handle(body, headers)
    assert isinstance(reply, Reply), "expected a complete reply, got a stream"
    return reply


async def answer(server: A2AServer, body: bytes, headers: Mapping[str, str] = V10) -> Any:
    """The parsed JSON of a complete reply (it must have a body)."""
    reply = await reply_of(server, body, headers)
    assert reply.body is not None
    return json.loads(reply.body)


#: 0.3's streaming methods: even an error is answered as an SSE stream (0.3 §7).
STREAMING_V03 = ("message/stream", "tasks/resubscribe")


async def error_of(server: A2AServer, body: bytes, headers: Mapping[str, str] = V10) -> Any:
    """The error response to ``body``: a complete reply, or for a 0.3 streaming method the
    one event of a stream (what the a2a-sdk 0.3 clients read)."""
    try:
        request = json.loads(body)
    except ValueError:
        request = None
    if isinstance(request, dict) and request.get("method") in STREAMING_V03:
        events = await events_of(server, body, headers)
        assert len(events) == 1, events
        wire = json.loads(events[0].data)
    else:
        wire = await answer(server, body, headers)
    assert set(wire) == {"jsonrpc", "id", "error"}, wire
    assert wire["jsonrpc"] == "2.0"
    return wire


async def events_of(
    server: A2AServer, body: bytes, headers: Mapping[str, str], *, timeout: float = 2.0
) -> list[ServerSentEvent]:
    reply = await server.handle(body, headers)
    assert isinstance(reply, StreamingReply), reply

    async def drain() -> list[ServerSentEvent]:
        return [event async for event in reply.events]

    try:
        return await asyncio.wait_for(drain(), timeout)
    finally:
        await reply.aclose()


@pytest.fixture(autouse=True)
def _server_log(caplog: pytest.LogCaptureFixture) -> None:
    # The server logger's own level, so that a level set on a parent logger by
    # other tests (or the application) cannot hide the records checked here.
    caplog.set_level(logging.WARNING, logger="a2a_models.server")


@pytest.fixture
async def engine() -> AsyncGenerator[AgentServer, None]:
    server = AgentServer(FuncAgent(echo), make_card())
    yield server
    await server.aclose()


class Bare(A2AServer):
    """A server that implements nothing."""


# --------------------------------------------------------------------------- malformed input

SERVERS: dict[str, Callable[[], A2AServer]] = {
    "agent-server": lambda: AgentServer(FuncAgent(echo), make_card()),
    "bare": Bare,
}


@pytest.fixture(params=sorted(SERVERS))
async def any_server(request: pytest.FixtureRequest) -> AsyncGenerator[A2AServer, None]:
    server = SERVERS[request.param]()
    yield server
    if isinstance(server, AgentServer):
        await server.aclose()


@pytest.mark.parametrize("headers", [V10, V03], ids=["1.0", "0.3"])
@pytest.mark.parametrize(
    "body",
    [
        b"\xff\xfe\xfd",  # not UTF-8
        b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"\xe9"}}',  # latin-1 byte
        b'{"jsonrpc":"2.0","id":1,"method":"GetTask"',  # truncated
        b'{"jsonrpc":',
        b"",
        b"   ",
        b"{'jsonrpc': '2.0'}",  # single quotes
        b'{"jsonrpc":"2.0","id":1,"method":"GetTask"} trailing',
        b'[{"jsonrpc":"2.0","id":1,"method":"GetTask"},',  # truncated batch
        b"NaN",
    ],
    ids=[
        "invalid-utf8",
        "latin1-byte",
        "truncated",
        "cut-after-member",
        "empty",
        "blank",
        "single-quotes",
        "trailing-garbage",
        "truncated-batch",
        "nan",
    ],
)
async def test_unparsable_bytes_are_a_parse_error_with_null_id(
    any_server: A2AServer, body: bytes, headers: dict[str, str]
) -> None:
    wire = await error_of(any_server, body, headers)
    assert wire["id"] is None
    assert wire["error"]["code"] == -32700
    assert wire["error"]["message"].startswith("Invalid JSON payload")
    assert "data" not in wire["error"]


@pytest.mark.parametrize("headers", [V10, V03], ids=["1.0", "0.3"])
@pytest.mark.parametrize(
    ("message", "echoed_id", "fragment"),
    [
        (42, None, "expected an object, got integer"),
        ("GetTask", None, "expected an object, got string"),
        (None, None, "expected an object, got null"),
        (True, None, "expected an object, got boolean"),
        ([], None, "empty batch"),
        ({"id": 7, "method": "GetTask"}, 7, '"jsonrpc" is missing'),
        ({"jsonrpc": "1.0", "id": 7, "method": "GetTask"}, 7, '"jsonrpc" must be exactly "2.0"'),
        ({"jsonrpc": 2.0, "id": "a", "method": "GetTask"}, "a", '"jsonrpc" must be exactly'),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "GetTask"}, None, "got number"),
        ({"jsonrpc": "2.0", "id": 1.0, "method": "GetTask"}, None, "got number"),
        ({"jsonrpc": "2.0", "id": True, "method": "GetTask"}, None, "got boolean"),
        ({"jsonrpc": "2.0", "id": None, "method": "GetTask"}, None, "not null"),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "GetTask"}, None, "got object"),
        ({"jsonrpc": "2.0", "id": [1], "method": "GetTask"}, None, "got array"),
        ({"jsonrpc": "2.0", "id": 3, "method": 5}, 3, "method must be a string, got integer"),
        ({"jsonrpc": "2.0", "id": 3, "method": None}, 3, "method must be a string, got null"),
        ({"jsonrpc": "2.0", "id": 3}, 3, '"method" is missing'),
        ({"jsonrpc": "2.0", "id": "x", "method": "GetTask", "params": "t-1"}, "x", "got string"),
        ({"jsonrpc": "2.0", "id": 0, "method": "GetTask", "params": 3}, 0, "got integer"),
        ({"jsonrpc": "2.0", "id": -4, "method": "GetTask", "params": False}, -4, "got boolean"),
        ({"jsonrpc": "2.0", "id": "", "method": "GetTask", "params": None}, "", "got null"),
    ],
)
async def test_invalid_requests_are_32600_and_echo_only_readable_ids(
    any_server: A2AServer,
    message: Any,
    echoed_id: Any,
    fragment: str,
    headers: dict[str, str],
) -> None:
    wire = await error_of(any_server, json.dumps(message).encode(), headers)
    assert wire["id"] == echoed_id and type(wire["id"]) is type(echoed_id)
    assert wire["error"]["code"] == -32600
    assert fragment in wire["error"]["message"]


async def test_large_integer_ids_are_echoed_exactly(engine: AgentServer) -> None:
    big = 2**70
    body = b'{"jsonrpc":"2.0","id":%d,"method":"Nope"}' % big
    reply = await reply_of(engine, body, V10)
    assert reply.body is not None and b'"id":%d' % big in reply.body


# --------------------------------------------------------------------------- methods and versions


@pytest.mark.parametrize(
    ("method", "headers", "hint"),
    [
        ("Nope", V10, None),
        ("nope/nope", V03, None),
        ("", V10, None),
        ("message/send", V10, "it is the A2A 0.3 name of 1.0's 'SendMessage'"),
        ("getTask", V10, "did you mean 'GetTask'?"),
        ("tasks/Get", V03, "did you mean 'tasks/get'?"),
        # A 1.0 client that forgot the header is served as 0.3 (§3.6.2).
        ("SendMessage", V03, "Send the header 'A2A-Version: 1.0'"),
        ("GetTask", {"A2A-Version": ""}, "a missing header means 0.3"),
        ("ListTasks", V03, "it exists only in A2A 1.0"),
    ],
)
async def test_unknown_methods_are_32601(
    any_server: A2AServer, method: str, headers: dict[str, str], hint: str | None
) -> None:
    wire = await error_of(any_server, rpc(method, {"id": "t"}, id="req-9"), headers)
    assert wire["id"] == "req-9"
    error = wire["error"]
    assert error["code"] == -32601
    assert error["message"].startswith("Method not found")
    assert repr(method) in error["message"]
    if hint is not None:
        assert hint in error["message"]
    assert "data" not in error  # not an A2A error: no ErrorInfo


@pytest.mark.parametrize("value", ["2.0", "1.1", "0.2", "abc", "1.0-beta", "v1", "1.0,0.3"])
async def test_unsupported_version_header_is_32009(any_server: A2AServer, value: str) -> None:
    wire = await error_of(any_server, rpc("GetTask", {"id": "t"}, id=11), {"A2A-Version": value})
    assert wire["id"] == 11
    error = wire["error"]
    assert error["code"] == -32009
    assert "Supported versions: 1.0, 0.3" in error["message"]
    assert error["data"] == [
        {"@type": ERROR_INFO, "reason": "VERSION_NOT_SUPPORTED", "domain": "a2a-protocol.org"}
    ]


async def test_missing_header_on_a_1_0_only_server_is_32009() -> None:
    server = AgentServer(FuncAgent(echo), make_card(), supported_versions=["1.0"])
    try:
        wire = await error_of(server, rpc("tasks/get", {"id": "t"}), V03)
        assert wire["error"]["code"] == -32009
        assert "send an A2A-Version header" in wire["error"]["message"]
        # ... and "0.3" explicitly is refused as well, while 1.0 works.
        wire = await error_of(server, rpc("tasks/get", {"id": "t"}), {"A2A-Version": "0.3"})
        assert wire["error"]["code"] == -32009
        wire = await error_of(server, rpc("GetTask", {"id": "t"}), V10)
        assert wire["error"]["code"] == -32001
    finally:
        await server.aclose()


async def test_version_error_answers_even_a_notification_and_a_batch(engine: AgentServer) -> None:
    # The request as a whole is refused, so there is no id to echo.
    for body in (rpc("GetTask", {"id": "t"}, notify=True), b'[{"jsonrpc":"2.0","id":1}]'):
        wire = await error_of(engine, body, {"A2A-Version": "9.9"})
        assert wire["id"] is None and wire["error"]["code"] == -32009


@pytest.mark.parametrize(
    ("name", "value", "method"),
    [
        ("a2a-version", "1.0", "GetTask"),
        ("A2A-VERSION", "1.0", "GetTask"),
        ("A2a-Version", " 1.0 ", "GetTask"),
        ("A2A-Version", "1", "GetTask"),
        ("A2A-Version", "1.0.1", "GetTask"),
        ("A2A-Version", "0.3.0", "tasks/get"),
        ("A2A-Version", "0.3", "tasks/get"),
    ],
)
async def test_version_header_is_case_insensitive_and_normalized(
    engine: AgentServer, name: str, value: str, method: str
) -> None:
    wire = await error_of(engine, rpc(method, {"id": "nope"}), {name: value})
    assert wire["error"]["code"] == -32001  # reached the engine: TaskNotFound


def test_constructor_rejects_bad_limits_and_versions() -> None:
    with pytest.raises(ValueError, match="max_batch_size"):
        Bare(max_batch_size=0)
    with pytest.raises(ValueError, match="supported_versions"):
        Bare(supported_versions=["1.0", "2.0"])
    with pytest.raises(ValueError, match="supported_versions"):
        Bare(supported_versions=[])


# --------------------------------------------------------------------------- params


@pytest.mark.parametrize(
    ("version", "method", "params", "path"),
    [
        ("1.0", "GetTask", None, "params: required for method GetTask"),
        ("1.0", "GetTask", [], "params: expected an object (by-name parameters), got an array"),
        ("1.0", "GetTask", {"id": 5}, "params.id: expected a string, got number"),
        ("1.0", "GetTask", {"id": "t", "historyLength": "x"}, "params.historyLength"),
        ("1.0", "SendMessage", {}, "params.message: required field missing"),
        ("1.0", "SendMessage", {"message": "hi"}, "params.message: expected an object"),
        (
            "1.0",
            "SendMessage",
            {"message": {"role": "ROLE_USER", "parts": [{"text": 5}], "messageId": "m"}},
            "params.message.parts[0].text: expected a string, got number",
        ),
        (
            "1.0",
            "SendMessage",
            {"message": {"role": "user", "parts": [{"text": "x"}], "messageId": "m"}},
            "params.message.role: expected a role",
        ),
        ("1.0", "ListTasks", {"pageSize": "ten"}, "params.pageSize: expected an integer"),
        ("1.0", "ListTasks", {"status": "DONE"}, "params.status: expected a task state"),
        ("1.0", "CancelTask", {"id": None}, "params.id"),
        ("1.0", "CreateTaskPushNotificationConfig", {"taskId": "t"}, "params.url"),
        ("0.3", "tasks/get", None, "params: required for method tasks/get"),
        ("0.3", "tasks/get", {"id": []}, "params.id: expected a string, got array"),
        ("0.3", "message/send", {}, "params.message: required field missing"),
        (
            "0.3",
            "message/send",
            {"message": {**user_message("0.3"), "parts": [{"kind": "nope"}]}},
            "params.message.parts[0]",
        ),
        (
            "0.3",
            "message/send",
            {"message": user_message("0.3"), "configuration": {"historyLength": -1}},
            "params.configuration.historyLength: must not be negative",
        ),
    ],
)
async def test_invalid_params_are_32602_with_the_json_path(
    engine: AgentServer, version: str, method: str, params: Any, path: str
) -> None:
    wire = await error_of(engine, rpc(method, params, id="p"), headers_for(version))
    assert wire["id"] == "p"
    error = wire["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid parameters: ")
    assert path in error["message"]
    if version == "1.0":
        # 1.0: a google.rpc.BadRequest detail naming the field, relative to params.
        [detail] = error["data"]
        assert detail["@type"] == BAD_REQUEST
        [violation] = detail["fieldViolations"]
        field = path.split(":")[0].removeprefix("params").removeprefix(".")
        assert violation["field"] == field
    else:
        assert "data" not in error


@pytest.mark.parametrize(
    "params",
    [
        {"id": "t", "historyLength": -1},
        {"message": user_message("1.0"), "configuration": {"historyLength": -1}},
    ],
    ids=["GetTask", "SendMessage"],
)
async def test_negative_history_length_is_invalid_in_1_0(
    engine: AgentServer, params: dict[str, Any]
) -> None:
    method = "GetTask" if "id" in params else "SendMessage"
    wire = await answer(engine, rpc(method, params))
    assert wire.get("error", {}).get("code") == -32602, wire


# --------------------------------------------------------------------------- notifications


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_notification_gets_no_response_but_runs(version: str) -> None:
    agent = FuncAgent(echo)
    server = AgentServer(agent, make_card())
    try:
        body = rpc(send_name(version), {"message": user_message(version, "ping")}, notify=True)
        reply = await reply_of(server, body, headers_for(version))
        assert reply.body is None
        await server.handler.idle()
        [context] = agent.contexts
        assert context.message.text == "ping"
        page = await server.handler.store.list(None, None, page_size=10)
        assert [t.status.state for t in page.tasks] == [TaskState.COMPLETED]
    finally:
        await server.aclose()


@pytest.mark.parametrize(
    "body",
    [
        rpc("Nope", notify=True),
        rpc("GetTask", {"id": 5}, notify=True),
        rpc("GetTask", {"id": "missing"}, notify=True),
        rpc("SendStreamingMessage", {"message": user_message("1.0")}, notify=True),
        rpc("SubscribeToTask", {"id": "t"}, notify=True),
    ],
    ids=["unknown-method", "bad-params", "a2a-error", "streaming", "subscribe"],
)
async def test_failing_notifications_are_silent(engine: AgentServer, body: bytes) -> None:
    reply = await reply_of(engine, body, V10)
    assert reply.body is None


async def test_streaming_notification_does_not_start_the_agent() -> None:
    agent = FuncAgent(echo)
    server = AgentServer(agent, make_card())
    try:
        body = rpc("SendStreamingMessage", {"message": user_message("1.0")}, notify=True)
        assert (await reply_of(server, body, V10)).body is None
        assert agent.contexts == []
    finally:
        await server.aclose()


async def test_failing_notification_on_a_bare_server_is_silent_and_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="a2a_models.server")
    reply = await reply_of(Bare(), rpc("GetTask", {"id": "t"}, notify=True), V10)
    assert reply.body is None
    assert caplog.records == []  # an unsupported operation is not a server fault


# --------------------------------------------------------------------------- batches


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_mixed_batch_is_answered_item_by_item_in_order(version: str) -> None:
    agent = FuncAgent(echo)
    server = AgentServer(agent, make_card())
    headers = headers_for(version)
    try:
        created = await answer(
            server, rpc(send_name(version), {"message": user_message(version)}), headers
        )
        task_id = (created["result"]["task"] if version == "1.0" else created["result"])["id"]
        get = "GetTask" if version == "1.0" else "tasks/get"
        batch = [
            {"jsonrpc": "2.0", "id": "a", "method": get, "params": {"id": task_id}},
            {"jsonrpc": "2.0", "id": 2, "method": get, "params": {"id": 5}},
            {
                "jsonrpc": "2.0",
                "method": send_name(version),
                "params": {"message": user_message(version, "from-notification", "m-n")},
            },
            {"jsonrpc": "2.0", "id": 3, "method": "Nope"},
            "garbage",
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": stream_name(version),
                "params": {"message": user_message(version, "s", "m-s")},
            },
            {"jsonrpc": "2.0", "id": 5, "method": get, "params": {"id": "missing"}},
            {"jsonrpc": "1.0", "id": 6, "method": get},
        ]
        wire = await answer(server, json.dumps(batch).encode(), headers)
        assert isinstance(wire, list)
        assert [r["id"] for r in wire] == ["a", 2, 3, None, 4, 5, 6]
        assert wire[0]["result"]["id"] == task_id
        codes = [r.get("error", {}).get("code") for r in wire]
        assert codes == [None, -32602, -32601, -32600, -32600, -32001, -32600]
        assert "send it alone, not in a batch" in wire[4]["error"]["message"]
        # The notification ran; the streaming item did not start the agent.
        await server.handler.idle()
        assert sorted(c.message.text for c in agent.contexts) == ["from-notification", "hello"]
    finally:
        await server.aclose()


async def test_batch_of_only_notifications_has_no_body(engine: AgentServer) -> None:
    batch = [
        {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}},
        {"jsonrpc": "2.0", "method": "Nope"},
    ]
    reply = await reply_of(engine, json.dumps(batch).encode(), V10)
    assert reply.body is None


async def test_oversized_batch_is_one_32600() -> None:
    server = Bare(max_batch_size=3)
    item = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
    wire = await error_of(server, json.dumps([item] * 4).encode())
    assert wire["id"] is None
    assert wire["error"]["code"] == -32600
    assert "batch of 4 requests exceeds the limit of 3" in wire["error"]["message"]
    # At the limit it is answered item by item.
    wire = await answer(server, json.dumps([item] * 3).encode())
    assert [r["error"]["code"] for r in wire] == [-32004] * 3


async def test_batch_without_limit() -> None:
    server = Bare(max_batch_size=None)
    item = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
    wire = await answer(server, json.dumps([item] * 150).encode())
    assert len(wire) == 150


async def test_batch_items_are_authenticated_one_by_one() -> None:
    seen: list[str | None] = []

    class Auth(Bare):
        async def authenticate(self, headers: Mapping[str, str]) -> str | None:
            seen.append(headers.get("authorization"))
            return "alice"

        async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
            raise TaskNotFoundError(f"{call.owner} has no task {request.id}")

    item = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
    wire = await answer(Auth(), json.dumps([item, item]).encode(), {**V10, "Authorization": "x"})
    assert seen == ["x", "x"]
    assert [r["error"]["message"] for r in wire] == ["alice has no task t"] * 2


# --------------------------------------------------------------------------- the bare server


def _params(name: str) -> Any:
    return {
        "SendMessage": SendMessageRequest(message=Message.user("hi")),
        "SendStreamingMessage": SendMessageRequest(message=Message.user("hi")),
        "GetTask": GetTaskRequest(id="t"),
        "ListTasks": ListTasksRequest(),
        "CancelTask": CancelTaskRequest(id="t"),
        "SubscribeToTask": SubscribeToTaskRequest(id="t"),
        "CreateTaskPushNotificationConfig": TaskPushNotificationConfig(
            url="https://hook.example/a2a", task_id="t"
        ),
        "GetTaskPushNotificationConfig": GetTaskPushNotificationConfigRequest(task_id="t", id="c"),
        "ListTaskPushNotificationConfigs": ListTaskPushNotificationConfigsRequest(task_id="t"),
        "DeleteTaskPushNotificationConfig": DeleteTaskPushNotificationConfigRequest(
            task_id="t", id="c"
        ),
        "GetExtendedAgentCard": GetExtendedAgentCardRequest(),
    }[name]


BARE_CASES = [
    (name, version)
    for name in METHODS
    for version in ("1.0", "0.3")
    if METHODS[name].name_for(version) is not None
]


@pytest.mark.parametrize(("name", "version"), BARE_CASES)
async def test_unimplemented_operations_say_unsupported_never_internal(
    name: str, version: str, caplog: pytest.LogCaptureFixture
) -> None:
    spec = METHODS[name]
    body = encode_request(spec, _params(name), version, 21)
    wire = await error_of(Bare(), body, headers_for(version))
    assert wire["id"] == 21
    error = wire["error"]
    push = "PushNotificationConfig" in name
    assert error["code"] == (-32003 if push else -32004)
    if version == "1.0":
        reason = "PUSH_NOTIFICATION_NOT_SUPPORTED" if push else "UNSUPPORTED_OPERATION"
        assert error["data"][0] == {
            "@type": ERROR_INFO,
            "reason": reason,
            "domain": "a2a-protocol.org",
        }
    else:
        assert "data" not in error
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_server_with_only_send_message() -> None:
    class Hello(A2AServer):
        async def on_send_message(
            self, request: m.SendMessageRequest, call: CallContext
        ) -> m.Task | m.Message:
            return Message.agent(f"hello {request.message.text}", context_id="c")

    for version in ("1.0", "0.3"):
        wire = await answer(
            Hello(),
            rpc(send_name(version), {"message": user_message(version, "bob")}),
            headers_for(version),
        )
        result = wire["result"]["message"] if version == "1.0" else wire["result"]
        assert result["parts"][0]["text"] == "hello bob"
        assert result["contextId"] == "c"


# --------------------------------------------------------------------------- internal failures


class Faulty(A2AServer):
    """Every operation fails the way a buggy server might."""

    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        if request.id == "runtime":
            raise RuntimeError("secret-detail /srv/db password=hunter2")
        if request.id == "model":
            raise InvalidModelError("Secret.internal_field", "secret-detail")
        if request.id == "unencodable":
            raise TaskNotFoundError("no such task", [object()])
        if request.id == "wrong-type":
            return "secret-detail"  # type: ignore[return-value]
        if request.id == "custom":
            raise JSONRPCError("Rate limited", {"retryAfter": 3}, code=-32099)
        raise TaskNotFoundError(f"task {request.id!r} not found", {"taskId": request.id})

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream:
        async def items() -> AsyncGenerator[StreamItem, None]:
            yield 1, Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
            raise RuntimeError("secret-detail in the middle of a stream")

        return EventStream(items())


@pytest.mark.parametrize("version", ["1.0", "0.3"])
@pytest.mark.parametrize("case", ["runtime", "model", "unencodable", "wrong-type"])
async def test_internal_failures_are_a_bare_32603_and_logged(
    case: str, version: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="a2a_models.server")
    method = "GetTask" if version == "1.0" else "tasks/get"
    reply = await reply_of(Faulty(), rpc(method, {"id": case}, id=8), headers_for(version))
    assert reply.body is not None
    assert json.loads(reply.body) == {
        "jsonrpc": "2.0",
        "id": 8,
        "error": {"code": -32603, "message": "Internal error"},
    }
    for leak in (b"secret", b"Traceback", b"Error", b"object"):
        assert leak not in reply.body.replace(b"Internal error", b"")
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert record.exc_info is not None  # the log keeps the traceback


async def test_authenticate_crashing_is_a_32603(caplog: pytest.LogCaptureFixture) -> None:
    class Crashing(Bare):
        async def authenticate(self, headers: Mapping[str, str]) -> str | None:
            raise KeyError("secret-detail")

    wire = await error_of(Crashing(), rpc("GetTask", {"id": "t"}))
    assert wire["error"] == {"code": -32603, "message": "Internal error"}
    assert any(r.exc_info for r in caplog.records)


async def test_authenticate_can_refuse_with_its_own_error() -> None:
    class Unauthenticated(JSONRPCError):
        code = -32040
        default_message = "Unauthenticated"

    class Guarded(Bare):
        async def authenticate(self, headers: Mapping[str, str]) -> str | None:
            if headers.get("authorization") != "Bearer ok":
                raise Unauthenticated()
            return "ok"

    wire = await error_of(Guarded(), rpc("GetTask", {"id": "t"}), {"A2A-VERSION": "1.0"})
    assert wire["error"] == {"code": -32040, "message": "Unauthenticated"}
    wire = await error_of(
        Guarded(), rpc("GetTask", {"id": "t"}), {**V10, "AUTHORIZATION": "Bearer ok"}
    )
    assert wire["error"]["code"] == -32004  # authenticated; GetTask is just not implemented


async def test_custom_jsonrpc_errors_pass_through() -> None:
    wire = await error_of(Faulty(), rpc("GetTask", {"id": "custom"}))
    error = wire["error"]
    assert (error["code"], error["message"]) == (-32099, "Rate limited")
    # 1.0: every detail is typed; an error without a reason has no ErrorInfo.
    [detail] = error["data"]
    assert detail["@type"] != ERROR_INFO and "retryAfter" in json.dumps(detail)
    wire = await error_of(Faulty(), rpc("tasks/get", {"id": "custom"}), V03)
    assert wire["error"] == {"code": -32099, "message": "Rate limited", "data": {"retryAfter": 3}}


async def test_a_stream_failing_midway_ends_with_a_32603_event(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = await events_of(
        Faulty(), rpc("SendStreamingMessage", {"message": user_message("1.0")}, id="s"), V10
    )
    assert [e.id for e in events] == ["1", None]
    first, last = (json.loads(e.data) for e in events)
    assert first["result"]["task"]["id"] == "t"
    assert last == {
        "jsonrpc": "2.0",
        "id": "s",
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert b"secret" not in events[-1].data
    assert any("secret-detail" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


# --------------------------------------------------------------------------- error details


async def test_1_0_a2a_errors_carry_error_info(engine: AgentServer) -> None:
    wire = await error_of(engine, rpc("GetTask", {"id": "nope"}, id=3))
    error = wire["error"]
    assert error["code"] == -32001
    info = error["data"][0]
    assert info["@type"] == ERROR_INFO
    assert info["reason"] == "TASK_NOT_FOUND"
    assert info["domain"] == "a2a-protocol.org"


async def test_0_3_errors_have_no_error_info(engine: AgentServer) -> None:
    wire = await error_of(engine, rpc("tasks/get", {"id": "nope"}), V03)
    error = wire["error"]
    assert error["code"] == -32001
    assert b"@type" not in json.dumps(error).encode()
    assert error.get("data") in (None, {"taskId": "nope"})


@pytest.mark.parametrize(
    ("body", "headers", "code"),
    [
        (rpc("GetTask", {"id": "nope"}), V10, -32001),
        (rpc("ListTasks", {"pageSize": 500}), V10, -32602),
        (rpc("GetTask", {"id": 5}), V10, -32602),
        (rpc("GetTask", {"id": "t"}), {"A2A-Version": "7.0"}, -32009),
        (rpc("SubscribeToTask", {"id": "t"}), {**V10, "Last-Event-ID": "x"}, -32600),
        (rpc("CancelTask", {"id": "nope"}), V10, -32001),
        (rpc("GetTaskPushNotificationConfig", {"taskId": "nope", "id": "c"}), V10, -32001),
    ],
    ids=["TaskNotFound", "pageSize", "params", "version", "last-event-id", "cancel", "push"],
)
async def test_every_1_0_error_detail_has_a_type(
    engine: AgentServer, body: bytes, headers: dict[str, str], code: int
) -> None:
    error = (await error_of(engine, body, headers))["error"]
    assert error["code"] == code
    assert all("@type" in detail for detail in error.get("data", [])), error
    if code > -32100 and code < -32000:  # A2A errors lead with their ErrorInfo
        assert error["data"][0]["@type"] == ERROR_INFO


# --------------------------------------------------------------------------- extensions


@pytest.mark.parametrize(
    ("version", "header", "echo_name"),
    [
        ("1.0", "A2A-Extensions", "A2A-Extensions"),
        ("1.0", "a2a-extensions", "A2A-Extensions"),
        ("1.0", "A2A-EXTENSIONS", "A2A-Extensions"),
        ("1.0", "x-a2a-extensions", "A2A-Extensions"),
        ("0.3", "X-A2A-Extensions", "X-A2A-Extensions"),
        ("0.3", "x-A2A-extensions", "X-A2A-Extensions"),
    ],
)
async def test_activated_extensions_are_echoed(version: str, header: str, echo_name: str) -> None:
    agent = FuncAgent(echo)
    server = AgentServer(agent, make_card(extensions=("urn:a", "urn:b")))
    try:
        headers = {**headers_for(version), header: "urn:b,  urn:unknown , urn:a"}
        body = rpc(send_name(version), {"message": user_message(version)})
        reply = await reply_of(server, body, headers)
        assert dict(reply.headers) == {echo_name: "urn:a, urn:b"}
        # The agent sees every extension the client asked for.
        assert agent.contexts[0].requested_extensions == {"urn:a", "urn:b", "urn:unknown"}
        # Streams carry the header too, and so do errors.
        stream = await engine_stream(server, version, headers)
        assert dict(stream.headers) == {echo_name: "urn:a, urn:b"}
        await stream.aclose()
        error = await reply_of(server, rpc("Nope"), headers)
        assert dict(error.headers) == {echo_name: "urn:a, urn:b"}
    finally:
        await server.aclose()


async def engine_stream(server: A2AServer, version: str, headers: dict[str, str]) -> StreamingReply:
    body = rpc(stream_name(version), {"message": user_message(version, "s", "m-s")})
    reply = await server.handle(body, headers)
    assert isinstance(reply, StreamingReply)
    return reply


@pytest.mark.parametrize(
    "headers",
    [V10, {**V10, "A2A-Extensions": "urn:other"}, {**V10, "A2A-Extensions": " , "}],
    ids=["none", "not-offered", "empty"],
)
async def test_no_extension_header_without_an_activated_extension(
    headers: dict[str, str],
) -> None:
    server = AgentServer(FuncAgent(echo), make_card(extensions=("urn:a",)))
    try:
        reply = await reply_of(server, rpc("GetTask", {"id": "x"}), headers)
        assert dict(reply.headers) == {}
    finally:
        await server.aclose()


async def test_a_server_without_a_card_activates_nothing() -> None:
    reply = await reply_of(Bare(), rpc("GetTask", {"id": "x"}), {**V10, "A2A-Extensions": "urn:a"})
    assert dict(reply.headers) == {}


# --------------------------------------------------------------------------- streams and resume


async def completed_task(server: AgentServer, version: str = "1.0") -> str:
    """A finished echo task: events 1 task, 2 working, 3 artifact, 4 completed."""
    wire = await answer(server, rpc(send_name(version), {"message": user_message(version)}),
                        headers_for(version))  # fmt: skip
    result = wire["result"]["task"] if version == "1.0" else wire["result"]
    return str(result["id"])


@pytest.mark.parametrize("version", ["1.0", "0.3"])
@pytest.mark.parametrize("header", ["Last-Event-ID", "last-event-id", "LAST-EVENT-ID"])
async def test_subscribe_resumes_after_last_event_id(
    engine: AgentServer, version: str, header: str
) -> None:
    task_id = await completed_task(engine, version)
    method = "SubscribeToTask" if version == "1.0" else "tasks/resubscribe"
    events = await events_of(
        engine, rpc(method, {"id": task_id}, id="r"), {**headers_for(version), header: "2"}
    )
    assert [e.id for e in events] == ["3", "4"]
    items = [json.loads(e.data) for e in events]
    assert all(i["id"] == "r" for i in items)
    if version == "1.0":
        assert list(items[0]["result"]) == ["artifactUpdate"]
        assert items[1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    else:
        assert items[0]["result"]["kind"] == "artifact-update"
        assert items[1]["result"]["status"]["state"] == "completed"


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("abc", -32600),
        ("-1", -32600),
        ("+2", -32600),
        ("1_0", -32600),
        ("\u0663", -32600),  # an Arabic-Indic digit 3
        ("9" * 40, -32600),
        ("1.5", -32600),
        ("0x2", -32600),
        ("99", -32602),  # beyond the task's last event: the engine's call
    ],
)
async def test_bad_last_event_id(engine: AgentServer, value: str, code: int) -> None:
    task_id = await completed_task(engine)
    wire = await error_of(
        engine, rpc("SubscribeToTask", {"id": task_id}, id=5), {**V10, "Last-Event-ID": value}
    )
    assert wire["id"] == 5
    assert wire["error"]["code"] == code
    if code == -32600:
        assert "Last-Event-ID" in wire["error"]["message"]


async def test_blank_last_event_id_is_no_resume(engine: AgentServer) -> None:
    task_id = await completed_task(engine)
    wire = await error_of(
        engine, rpc("SubscribeToTask", {"id": task_id}), {**V10, "Last-Event-ID": "  "}
    )
    # A plain subscribe to a terminal task (§3.1.6).
    assert wire["error"]["code"] == -32004


async def test_last_event_id_is_ignored_by_send_streaming(engine: AgentServer) -> None:
    body = rpc("SendStreamingMessage", {"message": user_message("1.0")})
    events = await events_of(engine, body, {**V10, "Last-Event-ID": "garbage"})
    assert [e.id for e in events] == ["1", "2", "3", "4"]


def test_only_subscribe_to_task_reads_last_event_id_on_every_binding() -> None:
    # The one statement of the rule, which the JSON-RPC, REST and gRPC servers all call.
    from a2a_models.errors import InvalidRequestError
    from a2a_models.protocol import METHODS
    from a2a_models.server import resume_point

    resumed = {name: resume_point("7", spec) for name, spec in METHODS.items()}
    assert resumed == {name: 7 if name == "SubscribeToTask" else None for name in METHODS}
    assert resume_point("garbage", METHODS["SendStreamingMessage"]) is None  # unread
    with pytest.raises(InvalidRequestError, match="Last-Event-ID"):
        resume_point("garbage", METHODS["SubscribeToTask"])


async def input_required(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.working()
    yield context.artifact("draft")
    yield context.ask("more?")


@pytest.mark.parametrize("agent_says_final", [False, True])
async def test_0_3_streams_mark_the_last_status_event_final(agent_says_final: bool) -> None:
    async def agent(context: RequestContext) -> AsyncIterator[AgentEvent]:
        working = context.working()
        # An agent's own (wrong) final flag is overridden by the server.
        yield TaskStatusUpdateEvent(
            task_id=working.task_id,
            context_id=working.context_id,
            status=working.status,
            final=agent_says_final,
        )
        yield context.artifact("a")
        yield context.complete()

    server = AgentServer(FuncAgent(agent), make_card())
    try:
        body = rpc("message/stream", {"message": user_message("0.3")})
        events = await events_of(server, body, V03)
        kinds = [json.loads(e.data)["result"]["kind"] for e in events]
        assert kinds == ["task", "status-update", "artifact-update", "status-update"]
        assert b'"final":false' in events[1].data
        assert b'"final":true' in events[3].data
        assert all(b'"final":true' not in e.data for e in events[:-1])
    finally:
        await server.aclose()


async def test_0_3_message_stream_ends_final_at_input_required() -> None:
    server = AgentServer(FuncAgent(input_required), make_card())
    try:
        events = await events_of(
            server, rpc("message/stream", {"message": user_message("0.3")}), V03
        )
        last = json.loads(events[-1].data)["result"]
        assert last["status"]["state"] == "input-required"
        assert last["final"] is True
        assert b'"final":true' in events[-1].data
    finally:
        await server.aclose()


async def test_0_3_resubscribe_stays_open_and_not_final_at_input_required() -> None:
    server = AgentServer(FuncAgent(input_required), make_card())
    try:
        wire = await answer(server, rpc("message/send", {"message": user_message("0.3")}), V03)
        task_id = wire["result"]["id"]
        reply = await server.handle(
            rpc("tasks/resubscribe", {"id": task_id}), {"Last-Event-ID": "2"}
        )
        assert isinstance(reply, StreamingReply)
        received = [await asyncio.wait_for(anext(reply.events), 1) for _ in range(2)]
        assert [e.id for e in received] == ["3", "4"]
        assert b'"state":"input-required"' in received[1].data
        assert b'"final":false' in received[1].data
        # ... and the stream waits for more: nothing else arrives by itself.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(reply.events), 0.05)
        await reply.aclose()
    finally:
        await server.aclose()


async def test_1_0_streams_have_no_final_member(engine: AgentServer) -> None:
    events = await events_of(
        engine, rpc("SendStreamingMessage", {"message": user_message("1.0")}), V10
    )
    members = [next(iter(json.loads(e.data)["result"])) for e in events]
    assert members == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert all(b"final" not in e.data for e in events)
    assert [e.id for e in events] == ["1", "2", "3", "4"]


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a_direct_reply_stream_is_one_event_without_id(version: str) -> None:
    async def reply(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.reply("hi there")

    server = AgentServer(FuncAgent(reply), make_card())
    try:
        body = rpc(stream_name(version), {"message": user_message(version)})
        [event] = await events_of(server, body, headers_for(version))
        assert event.id is None
        result = json.loads(event.data)["result"]
        message = result["message"] if version == "1.0" else result
        assert message["parts"][0]["text"] == "hi there"
    finally:
        await server.aclose()


async def test_streaming_without_the_capability_is_an_error_reply() -> None:
    server = AgentServer(FuncAgent(echo), make_card(streaming=False))
    try:
        for version in ("1.0", "0.3"):
            body = rpc(stream_name(version), {"message": user_message(version)})
            wire = await error_of(server, body, headers_for(version))
            assert wire["error"]["code"] == -32004
    finally:
        await server.aclose()


async def test_closing_a_streaming_reply_early_releases_the_subscription() -> None:
    gate = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await gate.wait()
        yield context.complete()

    broker = InMemoryEventBroker()
    server = AgentServer(FuncAgent(slow), make_card(), broker=broker)
    try:
        reply = await server.handle(
            rpc("SendStreamingMessage", {"message": user_message("1.0")}), V10
        )
        assert isinstance(reply, StreamingReply)
        first = json.loads((await anext(reply.events)).data)["result"]["task"]
        assert broker.subscriber_count(first["id"]) == 1
        await reply.aclose()
        assert broker.subscriber_count(first["id"]) == 0
        # The task itself goes on (§3.5.2).
        gate.set()
        await server.handler.idle()
        task = await server.handler.on_get_task(GetTaskRequest(id=first["id"]))
        assert task.status.state is TaskState.COMPLETED
    finally:
        await server.aclose()


async def test_handle_awaits_nothing_for_unused_streams() -> None:
    # A stream that is never iterated can still be closed.
    server = AgentServer(FuncAgent(echo), make_card())
    try:
        reply = await server.handle(
            rpc("SendStreamingMessage", {"message": user_message("1.0")}), V10
        )
        assert isinstance(reply, StreamingReply)
        await reply.aclose()
        await server.handler.idle()
    finally:
        await server.aclose()


async def test_handle_is_safe_to_call_concurrently(engine: AgentServer) -> None:
    bodies = [rpc("SendMessage", {"message": user_message("1.0", f"n{i}", f"m{i}")}, id=i)
              for i in range(20)]  # fmt: skip
    replies: list[Awaitable[Any]] = [answer(engine, b) for b in bodies]
    wires = await asyncio.gather(*replies)
    assert [w["id"] for w in wires] == list(range(20))
    assert {w["result"]["task"]["artifacts"][0]["parts"][0]["text"] for w in wires} == {
        f"n{i}" for i in range(20)
    }


async def test_list_tasks_on_the_wire(engine: AgentServer) -> None:
    for i in range(3):
        await answer(engine, rpc("SendMessage", {"message": user_message("1.0", f"t{i}", f"m{i}")}))
    wire = await answer(engine, rpc("ListTasks", {"pageSize": 2}))
    page = wire["result"]
    assert (page["pageSize"], page["totalSize"], len(page["tasks"])) == (2, 3, 2)
    assert page["nextPageToken"]
    assert all("artifacts" not in t for t in page["tasks"])  # only with includeArtifacts
    token = page["nextPageToken"]
    wire = await answer(engine, rpc("ListTasks", {"pageSize": 2, "pageToken": token}))
    last = wire["result"]
    assert len(last["tasks"]) == 1
    assert last["nextPageToken"] == ""  # always present, empty on the last page (§3.1.4)
    ids = [t["id"] for t in page["tasks"] + last["tasks"]]
    assert len(set(ids)) == 3
    wire = await answer(engine, rpc("ListTasks", {"contextId": "none-such"}))
    assert wire["result"] == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}
    wire = await answer(engine, rpc("ListTasks", {"pageToken": "garbage!"}))
    assert wire["error"]["code"] == -32602
    wire = await answer(engine, rpc("ListTasks", {"pageSize": 101}))
    assert wire["error"]["code"] == -32602
