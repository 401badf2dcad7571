"""create_app as a whole: the well-known card, CORS, routing, and HTTPServer."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from _server_support import (
    V10,
    SSEReader,
    asgi_client,
    make_card,
    make_server,
    message_v10,
    rpc,
    running,
)
from a2a.client.card_resolver import parse_agent_card

from a2a_models import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    codec,
)
from a2a_models.adapters.http import (
    CORSConfig,
    HTTPServer,
    authenticator_for_card,
    combined_card,
    create_app,
    normalize_base_path,
)
from a2a_models.server import A2AServer, Agent, AgentEvent, AgentServer, RequestContext

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def _secured_card() -> AgentCard:
    return make_card(
        interfaces=[("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")],
        extended=True,
        security_schemes={
            "bearer": HTTPAuthSecurityScheme(scheme="Bearer"),
            "key": APIKeySecurityScheme(location="header", name="X-API-Key"),
        },
        security_requirements=[
            SecurityRequirement(schemes={"bearer": ["read"]}),
            SecurityRequirement(schemes={"key": []}),
        ],
    )


async def test_well_known_card_in_both_dialects() -> None:
    card = _secured_card()
    auth = authenticator_for_card(card, bearer_tokens={"t": "u"}, api_keys={"k": "u"})
    app = create_app(A2AServer(card), base_path="a2a", authenticator=auth)
    async with asgi_client(app) as client:
        for path in (*CARD_PATHS, "/a2a/.well-known/agent-card.json"):
            combined = await client.get(path)
            assert combined.status_code == 200
            assert combined.headers["content-type"] == "application/json"
            wire = combined.json()
            # 1.0 readers and 0.3 readers both find what they need.
            assert wire["supportedInterfaces"] and wire["securityRequirements"]
            assert wire["url"] == "http://testserver" and wire["protocolVersion"] == "0.3"
            assert wire["preferredTransport"] == "JSONRPC"
            assert wire["supportsAuthenticatedExtendedCard"] is True
            assert wire["security"] == [{"bearer": ["read"]}, {"key": []}]
            assert codec.from_wire(AgentCard, wire, "1.0") == card
            legacy = codec.from_wire(AgentCard, wire, "0.3")
            assert legacy.security_schemes == card.security_schemes
            assert legacy.security_requirements == card.security_requirements
        pure = await client.get(CARD_PATHS[0], headers=V10)
        query = await client.get(CARD_PATHS[0], params={"A2A-Version": "1.0"})
    assert pure.json() == query.json() == codec.to_wire(card, "1.0")
    assert pure.headers["etag"] != combined.headers["etag"]
    assert "A2A-Version" in pure.headers["vary"]


def test_combined_card_is_read_by_the_sdk() -> None:
    card = _secured_card()
    parsed = parse_agent_card(combined_card(card))
    assert parsed.name == card.name
    assert [i.protocol_version for i in parsed.supported_interfaces] == ["1.0", "0.3", "1.0"]
    assert set(parsed.security_schemes) == {"bearer", "key"}
    assert parsed.capabilities.extended_agent_card


async def test_card_etag_and_304() -> None:
    app = create_app(A2AServer(make_card()), card_max_age=60)
    async with asgi_client(app) as client:
        first = await client.get(CARD_PATHS[0])
        etag = first.headers["etag"]
        assert first.headers["cache-control"] == "public, max-age=60"
        for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
            again = await client.get(CARD_PATHS[0], headers={"If-None-Match": header})
            assert again.status_code == 304 and again.content == b""
            assert again.headers["etag"] == etag
        changed = await client.get(CARD_PATHS[0], headers={"If-None-Match": '"stale"'})
    assert changed.status_code == 200


async def test_card_is_1_0_only_without_0_3_support() -> None:
    server = A2AServer(make_card(), supported_versions=["1.0"])
    async with asgi_client(create_app(server)) as client:
        wire = (await client.get(CARD_PATHS[0])).json()
    assert "url" not in wire and "protocolVersion" not in wire


async def test_no_card_is_404() -> None:
    async with asgi_client(create_app(A2AServer())) as client:
        response = await client.get(CARD_PATHS[0])
    assert response.status_code == 404


async def test_cors() -> None:
    server, _ = make_server()
    preflight = {
        "Origin": "https://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, a2a-version, authorization",
    }
    async with asgi_client(create_app(server)) as client:
        allowed = await client.options("/message:send", headers=preflight)
        simple = await client.get(CARD_PATHS[0], headers={"Origin": "https://app.example"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "*"
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert simple.headers["access-control-allow-origin"] == "*"
    assert "A2A-Extensions" in simple.headers["access-control-expose-headers"]

    strict = CORSConfig(allow_origins=["https://trusted.example"])
    async with asgi_client(create_app(server, cors=strict)) as client:
        refused = await client.options("/message:send", headers=preflight)
    assert refused.status_code == 400

    async with asgi_client(create_app(server, cors=False)) as client:
        off = await client.options("/message:send", headers=preflight)
    assert off.status_code == 405
    assert "access-control-allow-origin" not in off.headers


def test_normalize_base_path() -> None:
    assert normalize_base_path("") == normalize_base_path("/") == ""
    assert normalize_base_path("a2a") == normalize_base_path("/a2a/") == "/a2a"
    assert normalize_base_path(" /x/y/ ") == "/x/y"


def test_create_app_refuses_an_unchecked_secured_card() -> None:
    server, _ = make_server(_secured_card())
    with pytest.raises(ValueError, match="authenticator"):
        create_app(server)

    class OwnAuth(A2AServer):
        async def authenticate(self, headers: object) -> str | None:
            return "someone"

    create_app(OwnAuth(_secured_card()))


def test_importing_the_package_does_not_import_starlette() -> None:
    code = (
        "import sys, a2a_models, a2a_models.server, a2a_models.client\n"
        "assert 'starlette' not in sys.modules and 'uvicorn' not in sys.modules\n"
        "import a2a_models.adapters\n"
        "assert 'starlette' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_http_server_lifecycle() -> None:
    server, _ = make_server()
    http = HTTPServer(server)
    with pytest.raises(RuntimeError, match="not running"):
        _ = http.url
    port = await http.start()
    try:
        assert http.url == f"http://127.0.0.1:{port}"
        with pytest.raises(RuntimeError, match="already running"):
            await http.start()
        async with httpx.AsyncClient() as client:
            response = await client.get(http.url + CARD_PATHS[0])
        assert response.status_code == 200
    finally:
        await http.stop()
    await http.stop()  # idempotent
    assert not http.running
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as client:
            await client.get(f"http://127.0.0.1:{port}{CARD_PATHS[0]}")
    # It can start again.
    await http.start()
    await http.stop()


async def test_http_server_reports_a_busy_port() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        http = HTTPServer(A2AServer(make_card()), port=taken.getsockname()[1])
        with pytest.raises(OSError):
            await http.start()
    with pytest.raises(TypeError, match="only apply"):
        HTTPServer(create_app(A2AServer()), base_path="/x")


async def test_stop_closes_open_streams() -> None:
    server, agent = make_server()
    async with running(server) as (http, client):
        body = rpc("SendStreamingMessage", {"message": message_v10("wait")})
        async with client.stream("POST", "/", json=body, headers=V10) as response:
            reader = SSEReader(response)
            assert len(await reader.read(limit=2)) == 2
            loop = asyncio.get_running_loop()
            started = loop.time()
            await http.stop()
            # The stream ended cleanly (no more events, no error) and quickly.
            assert await reader.read() == []
            assert loop.time() - started < 2.0
    assert not agent.gate.is_set()


class _Flood(Agent):
    """Sends ``count`` artifacts of 64 KiB, then works until canceled."""

    def __init__(self, count: int) -> None:
        self.count = count

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        for i in range(self.count):
            yield context.artifact("x" * 65536, append=i > 0, name="big")
        await asyncio.Event().wait()


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def test_stop_drops_a_client_that_stopped_reading(caplog: pytest.LogCaptureFixture) -> None:
    # 25 MiB of events to a client that reads nothing: its stream can never end.
    # Stopping waited for it until uvicorn's graceful timeout ran out, which then
    # cancelled the response with 'Exception in ASGI application' and a traceback.
    agent = _Flood(400)
    server = AgentServer(agent, make_card())
    http = HTTPServer(server, graceful_timeout=3.0)
    await http.start()
    loop = asyncio.get_running_loop()
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.setblocking(False)
    try:
        await loop.sock_connect(stalled, ("127.0.0.1", http.port))
        body = json.dumps({"message": message_v10("flood")}).encode()
        await loop.sock_sendall(
            stalled,
            b"POST /message:stream HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body,
        )
        # The server's buffer for it is full: uvicorn stopped writing to it.
        connections = http._server.server_state.connections  # type: ignore[union-attr]
        await _until(lambda: any(c.flow.write_paused for c in connections))
        with caplog.at_level(logging.INFO):
            await http.stop(before_drain=server.aclose)
    finally:
        stalled.close()
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "Exception in ASGI application" in m]
    assert not [m for m in messages if "graceful shutdown exceeded" in m]
