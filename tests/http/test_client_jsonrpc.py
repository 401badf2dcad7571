"""HTTPClient (JSON-RPC over HTTP) against our engine behind a small Starlette app."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Iterator

import httpx
import pytest
from _client_support import (
    Recorder,
    ScriptAgent,
    endless_json,
    jsonrpc_app,
    make_card,
    raw_peer,
    serve_in_thread,
)
from _procs import free_port

from a2a_models import Message, TaskState, codec
from a2a_models import models as m
from a2a_models.adapters.http import (
    HTTPClient,
    HTTPStatusError,
    HTTPTransportError,
    Reconnect,
    RESTClient,
    StreamDisconnectedError,
    Timeouts,
)
from a2a_models.client import ClientCall, ClientInterceptor, ClientTimeoutError, ended_task
from a2a_models.errors import (
    AuthenticationError,
    InvalidAgentResponseError,
    InvalidParamsError,
    MethodNotFoundError,
    PermissionDeniedError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_models.server import AgentServer

VERSIONS = ["1.0", "0.3"]


class Site:
    def __init__(self, url: str, recorder: Recorder, agent: ScriptAgent) -> None:
        self.url = url
        self.recorder = recorder
        self.agent = agent

    def client(self, version: str = "1.0", **options: object) -> HTTPClient:
        options.setdefault("reconnect", Reconnect(attempts=3, delay=0.01))
        return HTTPClient(self.url + "/", version=version, **options)  # type: ignore[arg-type]

    def bodies(self) -> list[dict[str, object]]:
        return [codec.loads(body) for _, body in self.recorder.requests]


@pytest.fixture(scope="module")
def shared_site() -> Iterator[Site]:
    agent = ScriptAgent()
    server = AgentServer(agent, make_card("http://placeholder/"))
    recorder = Recorder()
    with serve_in_thread(jsonrpc_app(server, None, recorder)) as url:
        yield Site(url, recorder, agent)


@pytest.fixture
def site(shared_site: Site) -> Site:
    shared_site.recorder.reset()
    return shared_site


# ------------------------------------------------------------------------ operations


@pytest.mark.parametrize("version", VERSIONS)
async def test_send_message_gets_a_message(site: Site, version: str) -> None:
    async with site.client(version) as client:
        reply = await client.send_message(Message.user("hi"))
    assert isinstance(reply, m.Message)
    assert reply.text == "echo: hi"
    headers, body = site.recorder.requests[0]
    assert headers["content-type"] == "application/json"
    assert headers.get("a2a-version") == ("1.0" if version == "1.0" else None)
    assert codec.loads(body)["method"] == ("SendMessage" if version == "1.0" else "message/send")


@pytest.mark.parametrize("version", VERSIONS)
async def test_task_lifecycle(site: Site, version: str) -> None:
    async with site.client(version) as client:
        task = await client.send_message(Message.user("task"))
        assert isinstance(task, m.Task)
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].name == "answer"
        again = await client.get_task(task.id, history_length=0)
        assert again.id == task.id and again.history == ()
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("no-such-task")
        assert info.value.remote


@pytest.mark.parametrize("version", VERSIONS)
async def test_stream_has_event_ids_and_ends_at_the_terminal_state(
    site: Site, version: str
) -> None:
    async with site.client(version) as client:
        stream = client.send_streaming_message(Message.user("task"))
        items = [item async for item in stream]
    assert isinstance(items[0], m.Task)
    assert isinstance(items[-1], m.TaskStatusUpdateEvent)
    assert items[-1].status.state is TaskState.COMPLETED
    assert any(isinstance(i, m.TaskArtifactUpdateEvent) for i in items)
    assert stream.last_event_id == str(len(items))
    headers, _ = site.recorder.requests[0]
    assert headers["accept"].startswith("text/event-stream")


@pytest.mark.parametrize("version", VERSIONS)
async def test_cancel_and_subscribe(site: Site, version: str) -> None:
    async with site.client(version) as client:
        task = await client.send_message(
            Message.user("wait"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(task, m.Task)
        stream = client.subscribe(task.id)
        first = await anext(stream)
        assert isinstance(first, m.Task) and first.id == task.id
        canceled = await client.cancel_task(task.id)
        assert canceled.status.state is TaskState.CANCELED
        rest = [item async for item in stream]
        assert rest and rest[-1].status.state is TaskState.CANCELED  # type: ignore[union-attr]
        with pytest.raises(UnsupportedOperationError):
            async for _ in client.subscribe(task.id):
                pass


async def test_push_config_operations(site: Site) -> None:
    async with site.client() as client:
        task = await client.send_message(Message.user("task"))
        assert isinstance(task, m.Task)
        created = await client.create_push_config(
            m.TaskPushNotificationConfig(url="https://example.com/hook", task_id=task.id, token="t")
        )
        assert created.id
        got = await client.get_push_config(task.id, created.id)
        assert got.url == "https://example.com/hook"
        listed = await client.list_push_configs(task.id)
        assert [c.id for c in listed.configs] == [created.id]
        await client.delete_push_config(task.id, created.id)
        assert (await client.list_push_configs(task.id)).configs == ()


async def test_list_tasks_pages(site: Site) -> None:
    async with site.client() as client:
        await client.send_message(Message.user("task"))
        await client.send_message(Message.user("task"))
        page = await client.list_tasks(m.ListTasksRequest(page_size=1))
        assert len(page.tasks) == 1 and page.next_page_token
        assert page.total_size >= 2


async def test_list_tasks_last_page(site: Site) -> None:
    async with site.client() as client:
        await client.send_message(Message.user("task"))
        page = await client.list_tasks(m.ListTasksRequest(page_size=100))
        assert page.next_page_token == ""


async def test_list_tasks_does_not_exist_in_0_3(site: Site) -> None:
    async with site.client("0.3") as client:
        with pytest.raises(MethodNotFoundError, match=r"does not exist in A2A 0\.3"):
            await client.list_tasks()
    assert site.recorder.requests == []  # refused before sending


# ------------------------------------------------------------------------ headers


async def test_headers_interceptors_extensions_and_tenant(site: Site) -> None:
    class Auth(ClientInterceptor):
        async def before(self, call: ClientCall) -> None:
            call.headers["Authorization"] = "Bearer secret"

    client = site.client(
        headers={"X-Trace": "abc"},
        interceptors=[Auth()],
        extensions=["https://example.com/ext"],
        tenant="acme",
    )
    async with client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task("t1")
    headers, body = site.recorder.requests[0]
    assert headers["authorization"] == "Bearer secret"
    assert headers["x-trace"] == "abc"
    assert headers["a2a-extensions"] == "https://example.com/ext"
    assert codec.loads(body)["params"] == {"id": "t1", "tenant": "acme"}


async def test_last_event_id_is_passed_through(site: Site) -> None:
    async with site.client() as client:
        task = await client.send_message(Message.user("slow"))
        assert isinstance(task, m.Task)
        with pytest.raises(InvalidParamsError, match="after event 999"):
            async for _ in client.subscribe(task.id, resume_after="999"):
                pass
    assert site.recorder.requests[-1][0]["last-event-id"] == "999"


async def test_resume_replays_what_was_missed(site: Site) -> None:
    async with site.client() as client:
        task = await client.send_message(Message.user("slow"))
        assert isinstance(task, m.Task)
        stream = client.subscribe(task.id, resume_after="3")
        items = [item async for item in stream]
    assert stream.last_event_id == "8"
    assert len(items) == 5  # events 4..8
    assert items[-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]


# ------------------------------------------------------------------------ resumption


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_dropped_stream_resumes_by_itself(site: Site, version: str) -> None:
    site.recorder.drop_after = [2, 3]
    async with site.client(version) as client:
        stream = client.send_streaming_message(Message.user("slow"))
        items = [item async for item in stream]
    # 1 task + 6 working + completed, each exactly once, in order.
    assert len(items) == 8
    assert stream.last_event_id == "8"
    assert items[-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]
    resumes = [h.get("last-event-id") for h, _ in site.recorder.requests[1:]]
    assert resumes == ["2", "5"]
    methods = [b["method"] for b in site.bodies()]
    expected = "SubscribeToTask" if version == "1.0" else "tasks/resubscribe"
    assert methods[1:] == [expected, expected]


async def test_resumption_gives_up_after_the_configured_attempts(site: Site) -> None:
    site.recorder.drop_after = [1, 0, 0, 0]
    async with site.client(reconnect=Reconnect(attempts=2, delay=0.01)) as client:
        stream = client.send_streaming_message(Message.user("slow"))
        items = []
        with pytest.raises(StreamDisconnectedError) as info:
            async for item in stream:
                items.append(item)
    assert len(items) == 1
    assert info.value.last_event_id == "1"
    assert len(site.recorder.requests) == 3


async def test_no_resumption_without_a_task(site: Site) -> None:
    site.recorder.drop_after = [0]
    async with site.client() as client:
        with pytest.raises(StreamDisconnectedError):
            async for _ in client.send_streaming_message(Message.user("slow")):
                pass
    assert len(site.recorder.requests) == 1


#: How a re-subscription to a task that ended is refused: 1.0's UnsupportedOperationError
#: (§3.1.6), and the a2a-sdk 0.3.x's InvalidParams (0.3 names no error).
ENDED_REFUSALS = [
    ("1.0", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32004,"message":"terminal"}}'),
    (
        "0.3",
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32602,'
        b'"message":"Task t is in terminal state: completed"}}',
    ),
]


@pytest.mark.parametrize(("version", "refused"), ENDED_REFUSALS, ids=["1.0", "0.3-sdk"])
async def test_a_task_that_ended_while_away_is_reported_with_get_task(
    site: Site, version: str, refused: bytes
) -> None:
    # The stream breaks; the server then refuses the re-subscription because
    # the task is over (what servers without replay do): the client reads it.
    async with site.client(version) as client:
        stream = client.send_streaming_message(Message.user("task"))
        site.recorder.drop_after = [1]
        first = await anext(stream)
        site.recorder.canned = [(200, refused, "application/json")]
        rest = [item async for item in stream]
    assert isinstance(first, m.Task)
    assert len(rest) == 1 and isinstance(rest[0], m.Task)
    assert rest[0].status.state is TaskState.COMPLETED
    names = ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
    if version == "0.3":
        names = ["message/stream", "tasks/resubscribe", "tasks/get"]
    assert [b["method"] for b in site.bodies()] == names


async def test_an_invalid_params_refusal_of_a_live_task_is_raised() -> None:
    # InvalidParams may mean "ended" (the a2a-sdk 0.3.x) or a real parameter problem:
    # the task's own state tells, and a task still working is no reason to swallow it.
    working = m.Task(id="t", context_id="c", status=m.TaskStatus(state=TaskState.WORKING))
    done = m.Task(id="t", context_id="c", status=m.TaskStatus(state=TaskState.COMPLETED))

    async def get(state: m.Task) -> m.Task:
        return state

    refusal = InvalidParamsError("bad Last-Event-ID")
    with pytest.raises(InvalidParamsError, match="bad Last-Event-ID"):
        await ended_task(refusal, "t", lambda _: get(working))
    assert await ended_task(refusal, "t", lambda _: get(done)) is done
    assert await ended_task(UnsupportedOperationError(), "t", lambda _: get(working)) is working


# ------------------------------------------------------------------------ failures


async def test_http_errors_without_an_a2a_body(site: Site) -> None:
    site.recorder.canned = [(401, b"go away", "text/plain")]
    async with site.client() as client:
        with pytest.raises(HTTPStatusError) as info:
            await client.get_task("t")
    assert info.value.status_code == 401
    assert "go away" in str(info.value)


async def test_http_errors_with_a_jsonrpc_body_are_typed(site: Site) -> None:
    error = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad"}}'
    status = b'{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"v","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"}]}}'
    site.recorder.canned = [
        (400, error, "application/json"),
        (400, error, "application/json"),
        (400, status, "application/json"),
    ]
    async with site.client() as client:
        with pytest.raises(InvalidParamsError):
            await client.get_task("t")
        with pytest.raises(InvalidParamsError):
            async for _ in client.subscribe("t"):
                pass
        with pytest.raises(VersionNotSupportedError):
            await client.get_task("t")


async def test_a_refusal_with_a_jsonrpc_body_is_typed_by_its_http_status(site: Site) -> None:
    # -32000 is any server error; with 401/403 it is the agent refusing the caller.
    refused = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no token"}}'
    scoped = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"needs scope x"}}'
    other = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"gone"}}'
    site.recorder.canned = [
        (401, refused, "application/json"),
        (403, scoped, "application/json"),
        (401, refused, "application/json"),
        (401, other, "application/json"),
    ]
    async with site.client() as client:
        with pytest.raises(AuthenticationError, match="no token") as info:
            await client.get_task("t")
        assert info.value.remote and info.value.code == -32000
        with pytest.raises(PermissionDeniedError, match="needs scope x"):
            await client.get_task("t")
        with pytest.raises(AuthenticationError, match="no token"):
            async for _ in client.subscribe("t"):
                pass
        with pytest.raises(TaskNotFoundError):  # another code keeps its own class
            await client.get_task("t")


async def test_connection_refused() -> None:
    # A stream that never connected is not resumed.
    async with HTTPClient(f"http://127.0.0.1:{free_port()}/") as client:
        with pytest.raises(HTTPTransportError):
            await client.get_task("t")
        with pytest.raises(HTTPTransportError):
            async for _ in client.subscribe("t"):
                pass


async def test_read_timeout_is_a_client_timeout(site: Site) -> None:
    async with site.client(timeouts=Timeouts(read=0.2)) as client:
        with pytest.raises(ClientTimeoutError):
            await client.send_message(Message.user("sleep"))
    async with site.client(timeout=0.2) as client:
        with pytest.raises(ClientTimeoutError):
            await client.send_message(Message.user("sleep"))


@pytest.mark.parametrize("kind", [HTTPClient, RESTClient])
async def test_an_answer_larger_than_max_event_size_is_refused_not_held(
    kind: type[HTTPClient | RESTClient],
) -> None:
    async with raw_peer(endless_json) as (url, requests):
        async with kind(url, max_event_size=500_000) as client:
            with pytest.raises(InvalidAgentResponseError, match="larger than 500000 bytes"):
                await asyncio.wait_for(client.get_task("t"), 15)
            # The stream calls read a non-stream answer the same way.
            with pytest.raises(InvalidAgentResponseError, match="larger than 500000 bytes"):
                await asyncio.wait_for(anext(client.subscribe("t")), 15)
    assert len(requests) == 2


async def test_a_compressed_answer_is_read_once() -> None:
    task = m.Task(id="t", context_id="c", status=m.TaskStatus(state=TaskState.COMPLETED))
    body = codec.dumps({"jsonrpc": "2.0", "id": 1, "result": codec.to_wire(task, "1.0")})
    zipped = gzip.compress(body)

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        return httpx.Response(200, headers=headers, content=zipped)

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        async with HTTPClient("http://agent.test/", http_client=http) as client:
            assert await client.get_task("t") == task
            assert client.last_headers["content-encoding"] == "gzip"


async def test_shared_http_client_is_not_closed(site: Site) -> None:
    async with httpx.AsyncClient() as http:
        async with site.client(http_client=http) as client:
            await client.send_message(Message.user("hi"))
        assert not http.is_closed
        assert client.last_headers["content-type"] == "application/json"


async def test_early_close_releases_the_stream(site: Site) -> None:
    async with site.client() as client:
        stream = client.send_streaming_message(Message.user("slow"))
        await anext(stream)
        await stream.aclose()
        # The client is still usable afterwards.
        assert isinstance(await client.send_message(Message.user("x")), m.Message)
    await asyncio.sleep(0)


async def test_a_silent_stream_is_taken_for_dead_and_resumed(site: Site) -> None:
    # The agent pauses 1 s mid-task; with stream_read=0.3 the client reconnects meanwhile.
    async with site.client(
        timeouts=Timeouts(stream_read=0.3), reconnect=Reconnect(attempts=10, delay=0.05)
    ) as client:
        task = await client.send_message(
            Message.user("nap"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(task, m.Task)
        stream = client.subscribe(task.id)
        items = [item async for item in stream]
    assert items[-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]
    assert len(site.recorder.requests) > 2  # send, subscribe, at least one resume
