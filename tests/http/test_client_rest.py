"""RESTClient (HTTP+JSON) on the wire: routes, bodies, headers, errors (httpx mock transport)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import httpx
import pytest

from a2a_models import Message, TaskState, codec
from a2a_models import models as m
from a2a_models.adapters.http import (
    BaseHTTPClient,
    HTTPClient,
    HTTPStatusError,
    Reconnect,
    RESTClient,
    StreamDisconnectedError,
    Timeouts,
)
from a2a_models.client import ClientTimeoutError
from a2a_models.errors import (
    InvalidAgentResponseError,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_models.protocol import format_event

TASK = m.Task(
    id="t/1",
    context_id="c1",
    status=m.TaskStatus(state=TaskState.WORKING),
)
DONE = m.TaskStatusUpdateEvent(
    task_id="t/1", context_id="c1", status=m.TaskStatus(state=TaskState.COMPLETED)
)
A2A_JSON = "application/a2a+json"


class Wire:
    """A mock server: records requests, answers with ``handler``."""

    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        self.requests: list[httpx.Request] = []
        self.handler = handler

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)

    def client(self, version: str = "1.0", **options: Any) -> RESTClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self))
        options.setdefault("reconnect", Reconnect(attempts=2, delay=0.001))
        return RESTClient("http://agent.test/api/", version=version, http_client=http, **options)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]


def ok(value: Any, dialect: str = "1.0", as_type: Any = None) -> httpx.Response:
    return httpx.Response(200, content=codec.encode(value, dialect, as_type=as_type))


def sse(*items: Any, dialect: str = "1.0", ids: bool = True) -> httpx.Response:
    body = b"".join(
        format_event(codec.encode(item, dialect, as_type=m.StreamResponse), str(n) if ids else None)
        for n, item in enumerate(items, 1)
    )
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


def status_error(error: Any) -> httpx.Response:
    return httpx.Response(error.http_status, json=error.to_http_status())


# ------------------------------------------------------------------------ 1.0 routes


async def test_send_message_route_body_and_headers() -> None:
    wire = Wire(lambda r: ok(TASK, as_type=m.SendMessageResponse))
    async with wire.client(headers={"Authorization": "Bearer x"}) as client:
        result = await client.send_message(Message.user("hi"))
    assert result == TASK
    request = wire.last
    assert (request.method, request.url.path) == ("POST", "/api/message:send")
    assert request.headers["content-type"] == A2A_JSON
    assert request.headers["a2a-version"] == "1.0"
    assert request.headers["authorization"] == "Bearer x"
    body = codec.loads(request.content)
    assert body["message"]["parts"] == [{"text": "hi"}]
    assert "tenant" not in body


@pytest.mark.parametrize(
    ("call", "method", "path", "query"),
    [
        (
            lambda c: c.get_task("t/1", history_length=2),
            "GET",
            "/api/tasks/t%2F1",
            "historyLength=2",
        ),
        (lambda c: c.cancel_task("t/1"), "POST", "/api/tasks/t%2F1:cancel", ""),
        (
            lambda c: c.list_tasks(
                m.ListTasksRequest(status=TaskState.WORKING, page_size=5, include_artifacts=False)
            ),
            "GET",
            "/api/tasks",
            "status=TASK_STATE_WORKING&pageSize=5&includeArtifacts=false",
        ),
        (
            lambda c: c.get_push_config("t/1", "c 1"),
            "GET",
            "/api/tasks/t%2F1/pushNotificationConfigs/c%201",
            "",
        ),
        (
            lambda c: c.delete_push_config("t1", "c1"),
            "DELETE",
            "/api/tasks/t1/pushNotificationConfigs/c1",
            "",
        ),
        (lambda c: c.list_push_configs("t1"), "GET", "/api/tasks/t1/pushNotificationConfigs", ""),
        (lambda c: c.get_extended_agent_card(), "GET", "/api/extendedAgentCard", ""),
    ],
)
async def test_routes(
    call: Callable[[RESTClient], Any], method: str, path: str, query: str
) -> None:
    results: dict[str, Any] = {
        "/api/tasks": m.ListTasksResponse(
            tasks=[TASK], next_page_token="n", page_size=1, total_size=2
        ),
        "/api/extendedAgentCard": m.AgentCard(
            name="n",
            description="d",
            version="1",
            supported_interfaces=[m.AgentInterface(url="http://x", protocol_binding="JSONRPC")],
            skills=[m.AgentSkill(id="s", name="s", description="s", tags=["t"])],
        ),
    }

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200, json={})
        if request.url.path.endswith("pushNotificationConfigs"):
            return ok(m.ListTaskPushNotificationConfigsResponse())
        if "pushNotificationConfigs/" in request.url.path:
            return ok(m.TaskPushNotificationConfig(url="https://h", id="c 1", task_id="t/1"))
        return ok(results.get(request.url.path, TASK))

    wire = Wire(answer)
    async with wire.client() as client:
        await call(client)
    assert wire.last.method == method
    assert wire.last.url.raw_path.decode().split("?")[0] == path
    assert wire.last.url.query.decode() == query


async def test_tenant_prefix() -> None:
    wire = Wire(lambda r: ok(TASK))
    async with wire.client(tenant="acme corp") as client:
        await client.get_task("t1")
        await client.cancel_task("t1")
    assert [r.url.raw_path.decode() for r in wire.requests] == [
        "/api/acme%20corp/tasks/t1",
        "/api/acme%20corp/tasks/t1:cancel",
    ]
    assert "tenant" not in codec.loads(wire.last.content)


async def test_a_request_tenant_goes_into_the_path() -> None:
    wire = Wire(lambda r: ok(TASK, as_type=m.SendMessageResponse))
    async with wire.client() as client:
        await client.send_message(m.SendMessageRequest(message=Message.user("x"), tenant="t2"))
    assert wire.last.url.path == "/api/t2/message:send"
    assert "tenant" not in codec.loads(wire.last.content)


async def test_create_push_config_body() -> None:
    config = m.TaskPushNotificationConfig(url="https://hook", task_id="t1", token="tok")
    wire = Wire(lambda r: ok(config))
    async with wire.client() as client:
        assert await client.create_push_config(config) == config
    assert wire.last.url.path == "/api/tasks/t1/pushNotificationConfigs"
    assert codec.loads(wire.last.content) == {"url": "https://hook", "taskId": "t1", "token": "tok"}


# ------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "error", [TaskNotFoundError("gone"), TaskNotCancelableError(), UnsupportedOperationError()]
)
async def test_google_rpc_status_errors_are_typed(error: Any) -> None:
    wire = Wire(lambda r: status_error(error))
    async with wire.client() as client:
        with pytest.raises(type(error)) as info:
            await client.cancel_task("t1")
    assert info.value.remote
    assert info.value.message == error.message


async def test_errors_without_an_a2a_body() -> None:
    wire = Wire(lambda r: httpx.Response(502, text="<html>bad gateway</html>"))
    async with wire.client() as client:
        with pytest.raises(HTTPStatusError) as info:
            await client.get_task("t1")
    assert info.value.status_code == 502


@pytest.mark.parametrize("binding", [RESTClient, HTTPClient])
async def test_a_body_that_never_ends_is_a_timeout(binding: type[BaseHTTPClient]) -> None:
    # A server trickling bytes: each read is quick, so httpx's read timeout never
    # fires, and the call lasted as long as the server went on (here: forever,
    # were it not for the guard below).
    sent = 0

    async def trickle() -> AsyncIterator[bytes]:
        nonlocal sent
        while sent < 200_000:
            sent += 1
            await asyncio.sleep(0)
            yield b" "
        raise AssertionError("the client is still reading")

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=trickle(), headers={"content-type": A2A_JSON})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = binding(
        "http://agent.test/", http_client=http, timeouts=Timeouts(read=0.2), max_event_size=None
    )
    async with client:
        with pytest.raises(
            ClientTimeoutError, match=r"the answer.s body did not end within 0\.2 s"
        ):
            await client.get_task("t1")
    assert 0 < sent < 200_000


async def test_invalid_result_is_an_invalid_agent_response() -> None:
    wire = Wire(lambda r: httpx.Response(200, json={"id": 5}))
    async with wire.client() as client:
        with pytest.raises(InvalidAgentResponseError, match="GetTask"):
            await client.get_task("t1")


# ------------------------------------------------------------------------ streams


async def test_stream_and_event_ids() -> None:
    wire = Wire(lambda r: sse(TASK, DONE))
    async with wire.client() as client:
        stream = client.send_streaming_message(Message.user("go"))
        assert [item async for item in stream] == [TASK, DONE]
    assert stream.last_event_id == "2"
    assert wire.last.url.path == "/api/message:stream"
    assert wire.last.headers["accept"].startswith("text/event-stream")


async def test_stream_error_event_is_raised_typed() -> None:
    error = format_event(codec.dumps(TaskNotFoundError("no").to_http_status()), event="error")
    wire = Wire(
        lambda r: httpx.Response(200, content=error, headers={"content-type": "text/event-stream"})
    )
    async with wire.client() as client:
        with pytest.raises(TaskNotFoundError):
            async for _ in client.subscribe("t1"):
                pass


async def test_stream_refused_before_it_starts() -> None:
    wire = Wire(lambda r: status_error(UnsupportedOperationError("terminal")))
    async with wire.client() as client:
        with pytest.raises(UnsupportedOperationError):
            async for _ in client.subscribe("t1"):
                pass


async def test_subscribe_falls_back_to_get_on_405() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(405)
        return sse(TASK, DONE)

    wire = Wire(answer)
    async with wire.client() as client:
        assert len([i async for i in client.subscribe("t1")]) == 2
        assert len([i async for i in client.subscribe("t1")]) == 2
    assert [r.method for r in wire.requests] == ["POST", "GET", "GET"]
    assert wire.requests[0].url.path == "/api/tasks/t1:subscribe"


async def test_rest_stream_resumes_with_last_event_id() -> None:
    calls: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) == 1:  # the first stream ends after the task, too early
            return sse(TASK)
        return httpx.Response(
            200,
            content=format_event(codec.encode(DONE, "1.0", as_type=m.StreamResponse), "2"),
            headers={"content-type": "text/event-stream"},
        )

    wire = Wire(answer)
    async with wire.client() as client:
        stream = client.send_streaming_message(Message.user("go"))
        assert [i async for i in stream] == [TASK, DONE]
    assert calls[1].url.raw_path == b"/api/tasks/t%2F1:subscribe"
    assert calls[1].headers["last-event-id"] == "1"


async def test_rest_stream_gives_up() -> None:
    wire = Wire(lambda r: sse(TASK) if r.url.path.endswith("message:stream") else sse())
    async with wire.client() as client:
        with pytest.raises(StreamDisconnectedError):
            async for _ in client.send_streaming_message(Message.user("go")):
                pass
    assert len(wire.requests) == 3  # the stream, then two attempts


@pytest.mark.parametrize("ids", [True, False])
async def test_a_server_that_only_repeats_the_snapshot_is_given_up_on(ids: bool) -> None:
    # Each resumption gets the Task snapshot again and the stream ends: nothing new
    # arrived, so it is a failed attempt (it restarted the count, and the client
    # reconnected forever: ~18 times a second, and in a tight loop with "retry: 0").
    def answer(request: httpx.Request) -> httpx.Response:
        if len(wire.requests) > 20:
            raise AssertionError("still reconnecting")
        return sse(TASK, ids=ids)

    wire = Wire(answer)
    seen: list[Any] = []
    async with wire.client() as client:
        with pytest.raises(StreamDisconnectedError):
            async for item in client.subscribe("t1"):
                seen.append(item)
    assert len(wire.requests) == 3  # the stream, then two attempts
    assert seen == [TASK, TASK, TASK]


async def test_a_resumed_stream_that_moves_on_restarts_the_count() -> None:
    # Every stream is cut after one new event: the task progresses, so the client
    # keeps following it (more cuts than Reconnect.attempts) to the end.
    updates = [
        m.TaskStatusUpdateEvent(
            task_id="t1", context_id="c1", status=m.TaskStatus(state=TaskState.WORKING)
        )
        for _ in range(4)
    ]
    done = attrs.evolve(DONE, task_id="t1")

    def answer(request: httpx.Request) -> httpx.Response:
        n = len(wire.requests)
        item = updates[n - 1] if n <= len(updates) else done
        body = format_event(codec.encode(item, "1.0", as_type=m.StreamResponse), str(n))
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    wire = Wire(answer)
    async with wire.client() as client:
        got = [i async for i in client.subscribe("t1")]
    assert got == [*updates, done]
    assert [r.headers.get("last-event-id") for r in wire.requests] == [None, "1", "2", "3", "4"]


# ------------------------------------------------------------------------ 0.3


async def test_v03_routes_and_dialect() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("message:send"):
            return ok(TASK, "0.3-http", as_type=m.SendMessageResponse)
        if request.url.path.endswith("pushNotificationConfigs"):
            return ok(
                m.TaskPushNotificationConfig(url="https://h", id="c1", task_id="t1"), "0.3-http"
            )
        if request.url.path == "/api/v1/card":
            return httpx.Response(404, json={"error": {"code": 404, "status": "NOT_FOUND"}})
        return ok(TASK, "0.3-http")

    wire = Wire(answer)
    async with wire.client("0.3") as client:
        assert await client.send_message(Message.user("hi")) == TASK
        sent = codec.loads(wire.last.content)
        assert sent["message"]["content"] == [{"text": "hi"}]
        assert wire.last.headers["content-type"] == "application/json"
        assert "a2a-version" not in wire.last.headers
        assert await client.get_task("t1", history_length=1) == TASK
        assert wire.last.url.path == "/api/v1/tasks/t1"
        assert await client.cancel_task("t1") == TASK
        assert wire.last.url.path == "/api/v1/tasks/t1:cancel"
        config = await client.create_push_config(
            m.TaskPushNotificationConfig(url="https://h", id="c1", task_id="t1")
        )
        assert config.task_id == "t1"
        body = codec.loads(wire.last.content)
        # The whole CreateTaskPushNotificationConfigRequest (0.3 §7.5's {config} plus the
        # parent the SDK needs) and nothing else: the a2a-sdk 0.3.x servers parse it
        # strictly and answer 500 to any other member.
        assert body == {
            "parent": "tasks/t1",
            "configId": "c1",
            "config": {
                "name": "tasks/t1/pushNotificationConfigs/c1",
                "pushNotificationConfig": {"url": "https://h", "id": "c1"},
            },
        }
        with pytest.raises(MethodNotFoundError):
            await client.list_tasks()
        with pytest.raises(TaskNotFoundError):  # a bare NOT_FOUND status
            await client.get_extended_agent_card()
