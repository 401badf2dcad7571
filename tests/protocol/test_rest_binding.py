"""The I/O-free HTTP+JSON binding: one route table for server, client and conformance."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from a2a_models import Message, TaskState, codec
from a2a_models import models as m
from a2a_models.adapters.http import RESTClient
from a2a_models.errors import (
    InvalidParamsError,
    TaskNotFoundError,
    VersionNotSupportedError,
)
from a2a_models.protocol import (
    METHODS,
    REST_ROUTES,
    RestRouteError,
    SSEParser,
    build_rest_request,
    decode_rest_params,
    encode_request,
    match_rest_route,
    parse_response,
    rest_version,
    sse_frame,
)
from a2a_models.server import Agent as BaseAgent
from a2a_models.server import (
    AgentEvent,
    AgentServer,
    Reply,
    RequestContext,
    StreamingReply,
)

CARD = m.AgentCard(
    name="rest",
    description="rest binding tests",
    version="1.0.0",
    supported_interfaces=[m.AgentInterface(url="http://agent.test", protocol_binding="HTTP+JSON")],
    capabilities=m.AgentCapabilities(streaming=True, push_notifications=True),
    skills=[m.AgentSkill(id="echo", name="Echo", description="Echoes", tags=["test"])],
)

PARAMS: dict[str, Any] = {
    "SendMessage": m.SendMessageRequest(message=Message.user("hi")),
    "SendStreamingMessage": m.SendMessageRequest(message=Message.user("hi")),
    "GetTask": m.GetTaskRequest(id="t 1:x", history_length=3),
    "ListTasks": m.ListTasksRequest(context_id="c1", page_size=5, include_artifacts=True),
    "CancelTask": m.CancelTaskRequest(id="t1"),
    "SubscribeToTask": m.SubscribeToTaskRequest(id="t1"),
    "CreateTaskPushNotificationConfig": m.TaskPushNotificationConfig(
        task_id="t1", id="cfg", url="https://hook.example/x"
    ),
    "GetTaskPushNotificationConfig": m.GetTaskPushNotificationConfigRequest(task_id="t1", id="c"),
    "ListTaskPushNotificationConfigs": m.ListTaskPushNotificationConfigsRequest(task_id="t1"),
    "DeleteTaskPushNotificationConfig": m.DeleteTaskPushNotificationConfigRequest(
        task_id="t1", id="c"
    ),
    "GetExtendedAgentCard": m.GetExtendedAgentCardRequest(),
}


def test_every_operation_has_one_route_per_version() -> None:
    for name, spec in METHODS.items():
        v10 = [r for r in REST_ROUTES if r.operation == name and r.version == "1.0"]
        v03 = [r for r in REST_ROUTES if r.operation == name and r.version == "0.3"]
        assert len(v10) == 2, name  # plain and under /{tenant}
        assert len(v03) == (1 if spec.legacy_name else 0), name


@pytest.mark.parametrize("version", ["1.0", "0.3"])
@pytest.mark.parametrize("name", sorted(PARAMS))
def test_what_the_client_builds_the_server_decodes_back(name: str, version: str) -> None:
    spec = METHODS[name]
    if spec.name_for(version) is None:
        pytest.skip(f"{name} does not exist in {version}")
    request = build_rest_request(spec, PARAMS[name], version, tenant="acme")
    route, path_params = match_rest_route(request.method, unquote(request.path))
    assert route.operation == name and route.version == version
    decoded = decode_rest_params(route, path_params, request.query, request.content)
    expected = PARAMS[name]
    if version == "0.3" and name == "ListTaskPushNotificationConfigs":
        assert decoded.task_id == expected.task_id
        return
    assert decoded == expected
    if version == "1.0":
        assert path_params["tenant"] == "acme"


def test_unknown_paths_and_wrong_methods() -> None:
    with pytest.raises(RestRouteError) as missing:
        match_rest_route("GET", "/nothing/here/at/all")
    assert missing.value.status == 404
    with pytest.raises(RestRouteError) as wrong:
        match_rest_route("DELETE", "/tasks/t1")
    assert wrong.value.status == 405 and wrong.value.allowed == ("GET",)
    # Without 0.3, /v1/... is a tenant named v1.
    route, params = match_rest_route("GET", "/v1/tasks/t1", v03=False)
    assert route.version == "1.0" and params == {"tenant": "v1", "id": "t1"}


def test_head_is_get_without_the_body_except_on_a_stream() -> None:
    # RFC 9110 §9.3.2; Starlette's routes (and their Allow) take HEAD with GET, but
    # the table answered 405 "allowed: GET" to it.
    for path, operation in [
        ("/tasks/t1", "GetTask"),
        ("/tasks", "ListTasks"),
        ("/acme/tasks/t1/pushNotificationConfigs", "ListTaskPushNotificationConfigs"),
        ("/v1/tasks/t1", "GetTask"),
        ("/extendedAgentCard", "GetExtendedAgentCard"),
    ]:
        assert match_rest_route("HEAD", path)[0].operation == operation
    # A subscription is not opened for its headers, nor read as GetTask "t1:subscribe".
    for path in ("/tasks/t1:subscribe", "/v1/tasks/t1:subscribe"):
        with pytest.raises(RestRouteError) as stream:
            match_rest_route("HEAD", path)
        assert stream.value.status == 405 and stream.value.allowed == ("GET", "POST")
    with pytest.raises(RestRouteError) as post_only:
        match_rest_route("HEAD", "/message:send")
    assert post_only.value.status == 405 and post_only.value.allowed == ("POST",)


def test_version_rule_and_bad_bodies() -> None:
    route, path = match_rest_route("POST", "/message:send")
    with pytest.raises(VersionNotSupportedError, match=r"A2A-Version: 1\.0"):
        rest_version(route, None, ("1.0", "0.3"))
    assert rest_version(route, "1.0", ("1.0", "0.3")) == "1.0"
    with pytest.raises(InvalidParamsError, match="not valid JSON"):
        decode_rest_params(route, path, (), b"{nope")
    with pytest.raises(InvalidParamsError, match="expected a JSON object"):
        decode_rest_params(route, path, (), b"[1]")
    get, get_path = match_rest_route("GET", "/tasks/t1")
    with pytest.raises(InvalidParamsError, match="historyLength"):
        decode_rest_params(get, get_path, (("historyLength", "x"),), None)


@pytest.mark.parametrize(
    "query",
    [
        (("historyLength", "1"), ("historyLength", "2")),
        (("historyLength", "1"), ("history_length", "2")),
    ],
)
def test_a_query_parameter_given_twice_is_refused_not_half_read(
    query: tuple[tuple[str, str], ...],
) -> None:
    get, get_path = match_rest_route("GET", "/tasks/t1")
    with pytest.raises(InvalidParamsError, match="historyLength: given more than once"):
        decode_rest_params(get, get_path, query, None)
    listing, list_path = match_rest_route("GET", "/tasks")
    with pytest.raises(InvalidParamsError, match="pageSize: given more than once"):
        decode_rest_params(listing, list_path, (("pageSize", "5"), ("pageSize", "5")), None)


def test_rest_bodies_skip_the_free_form_json_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    # A body parsed by codec.loads holds only JSON, so decoding it must not walk
    # its free-form members again (as the JSON-RPC path does not).
    calls: list[bool] = []
    real = codec.from_wire

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("parsed", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(codec, "from_wire", spy)
    data = m.DataPart(data={"rows": [{"n": i} for i in range(50)]})
    request = m.SendMessageRequest(message=m.Message(role=m.Role.USER, parts=(data,)))
    for dialect, path in (("1.0", "/message:send"), ("0.3-http", "/v1/message:send")):
        route, params = match_rest_route("POST", path)
        decoded = decode_rest_params(route, params, (), codec.encode(request, dialect))
        assert decoded.message.parts[0].data == data.data
    get, get_path = match_rest_route("GET", "/tasks/t1")
    decode_rest_params(get, get_path, (("historyLength", "2"),), None)
    assert calls == [True, True, True]


def test_an_unparsed_body_is_still_checked() -> None:
    # Called with a value that did not come from codec.loads, a route's builder
    # still refuses what JSON cannot hold.
    route, params = match_rest_route("POST", "/message:send")
    wire = codec.to_wire(m.SendMessageRequest(message=Message.user("hi")), "1.0")
    wire["metadata"] = {"x": float("nan")}
    with pytest.raises(InvalidParamsError, match="metadata"):
        route.build(params, (), wire)
    assert route.build(params, (), {**wire, "metadata": {"x": 1}}).metadata == {"x": 1}


class Echo(BaseAgent):
    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        yield context.complete(f"echo: {context.message.text}")

    async def cancel(self, context: RequestContext) -> None:
        pass


async def test_handle_rest_answers_without_any_web_framework() -> None:
    server = AgentServer(Echo(), CARD)
    headers = {"A2A-Version": "1.0", "Content-Type": "application/a2a+json"}
    body = codec.encode(m.SendMessageRequest(message=Message.user("hi")), "1.0")
    reply = await server.handle_rest("POST", "/message:send", (), headers, body)
    assert isinstance(reply, Reply) and reply.status == 200
    assert reply.media_type == "application/a2a+json"
    assert reply.body is not None
    task = codec.decode(m.Task, codec.dumps(codec.loads(reply.body)["task"]), "1.0")
    assert task.status.state is TaskState.COMPLETED

    missing = await server.handle_rest("GET", "/tasks/nope", (), headers, None)
    assert isinstance(missing, Reply) and missing.status == 404
    assert missing.body is not None
    assert codec.loads(missing.body)["error"]["status"] == "NOT_FOUND"

    unversioned = await server.handle_rest("GET", f"/tasks/{task.id}", (), {}, None)
    assert isinstance(unversioned, Reply) and unversioned.status == 400
    versioned_by_query = await server.handle_rest(
        "GET", f"/tasks/{task.id}", (("A2A-Version", "1.0"),), {}, None
    )
    assert isinstance(versioned_by_query, Reply) and versioned_by_query.status == 200

    wrong = await server.handle_rest("DELETE", "/message:send", (), headers, None)
    assert isinstance(wrong, Reply) and wrong.status == 405
    assert wrong.headers["Allow"] == "POST"

    # A new message (the same one again would be a retry: the task it started).
    body = codec.encode(m.SendMessageRequest(message=Message.user("hi")), "1.0")
    stream = await server.handle_rest("POST", "/message:stream", (), headers, body)
    assert isinstance(stream, StreamingReply)
    events = [e async for e in stream.events]
    items = [codec.loads(e.data) for e in events]
    assert "task" in items[0] and items[-1]["statusUpdate"]["status"]["state"] == (
        "TASK_STATE_COMPLETED"
    )
    assert all(e.event is None for e in events)
    await server.aclose()


async def _over_handle_rest(server: AgentServer, request: httpx.Request) -> httpx.Response:
    """A whole transport in a few lines: httpx request in, handle_rest, httpx response out."""
    path = unquote(request.url.path)
    query = list(httpx.QueryParams(request.url.query).multi_items())
    reply = await server.handle_rest(
        request.method, path, query, dict(request.headers), request.content or None
    )
    if isinstance(reply, StreamingReply):
        frames = [sse_frame(e.data, id=e.id, event=e.event) async for e in reply.events]
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=b"".join(frames)
        )
    return httpx.Response(
        reply.status,
        headers={"content-type": reply.media_type, **reply.headers},
        content=reply.body or b"",
    )


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_rest_client_byte_methods_speak_jsonrpc_envelopes(version: str) -> None:
    server = AgentServer(Echo(), CARD)

    async def handler(request: httpx.Request) -> httpx.Response:
        return await _over_handle_rest(server, request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    client = RESTClient("http://agent.test", version=version, http_client=http)
    send = METHODS["SendMessage"]
    body = encode_request(send, PARAMS["SendMessage"], version, 7)
    answer = parse_response(await client.send_bytes(body, client._headers()))
    assert answer.id == 7 and not hasattr(answer, "error")

    get = METHODS["GetTask"]
    body = encode_request(get, m.GetTaskRequest(id="missing"), version, 8)
    error = parse_response(await client.send_bytes(body, client._headers()))
    assert error.id == 8 and isinstance(error.error, TaskNotFoundError)

    stream = METHODS["SendStreamingMessage"]
    body = encode_request(stream, PARAMS["SendStreamingMessage"], version, 9)
    chunks = [c async for c in client.stream_bytes(body, client._headers())]
    assert len(chunks) >= 2 and all(parse_response(c.data).id == 9 for c in chunks)
    # The operations work through the same route table.
    task = await client.send_message(Message.user("again"))
    assert isinstance(task, m.Task) and task.status.state is TaskState.COMPLETED
    await client.aclose()
    await server.aclose()


def test_sse_frames_parse_back() -> None:
    parser = SSEParser()
    events = parser.feed(sse_frame(b'{"a":1}', id="3") + sse_frame(b"x\ny", event="error"))
    assert [(e.data, e.id, e.event) for e in events] == [
        ('{"a":1}', "3", "message"),
        ("x\ny", "3", "error"),
    ]
