"""Card resolution and interface selection (spec §8)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from _client_support import ScriptAgent, endless_json, jsonrpc_app, raw_peer, serve_in_thread

from a2a_models import Message, codec
from a2a_models import models as m
from a2a_models.adapters.http import (
    MAX_CARD_BYTES,
    CardResolutionError,
    HTTPClient,
    NoCompatibleInterfaceError,
    RESTClient,
    connect,
    decode_card,
    resolve_card,
    select_interface,
)
from a2a_models.server import AgentServer

SKILL = m.AgentSkill(id="s", name="s", description="s", tags=["t"])


def card(*interfaces: tuple[str, str, str] | m.AgentInterface) -> m.AgentCard:
    return m.AgentCard(
        name="agent",
        description="d",
        version="1",
        supported_interfaces=[
            i
            if isinstance(i, m.AgentInterface)
            else m.AgentInterface(url=i[0], protocol_binding=i[1], protocol_version=i[2])
            for i in interfaces
        ],
        skills=[SKILL],
    )


V03_CARD: dict[str, Any] = {
    "name": "legacy",
    "description": "a 0.3 agent",
    "version": "2",
    "url": "http://old.test/rpc",
    "preferredTransport": "JSONRPC",
    "protocolVersion": "0.3.0",
    "additionalInterfaces": [{"url": "http://old.test/rest", "transport": "HTTP+JSON"}],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}],
}


def mock(routes: dict[str, httpx.Response]) -> tuple[httpx.AsyncClient, list[str]]:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return routes.get(str(request.url), httpx.Response(404))

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), seen


# ------------------------------------------------------------------------ resolve_card


async def test_resolves_a_1_0_card() -> None:
    wire = card(("http://a.test/rpc", "JSONRPC", "1.0"))
    http, seen = mock(
        {
            "http://a.test/.well-known/agent-card.json": httpx.Response(
                200, content=codec.encode(wire)
            )
        }
    )
    async with http:
        assert await resolve_card("http://a.test/", http_client=http) == wire
    assert seen == ["http://a.test/.well-known/agent-card.json"]


async def test_resolves_a_0_3_card() -> None:
    http, _ = mock(
        {"http://old.test/.well-known/agent-card.json": httpx.Response(200, json=V03_CARD)}
    )
    async with http:
        got = await resolve_card("http://old.test", http_client=http)
    assert [(i.url, i.protocol_binding, i.protocol_version) for i in got.supported_interfaces] == [
        ("http://old.test/rpc", "JSONRPC", "0.3.0"),
        ("http://old.test/rest", "HTTP+JSON", "0.3.0"),
    ]


async def test_falls_back_to_the_root_and_to_the_legacy_name() -> None:
    http, seen = mock({"http://a.test/.well-known/agent.json": httpx.Response(200, json=V03_CARD)})
    async with http:
        got = await resolve_card("http://a.test/agents/one", http_client=http)
    assert got.name == "legacy"
    assert seen == [
        "http://a.test/agents/one/.well-known/agent-card.json",
        "http://a.test/.well-known/agent-card.json",
        "http://a.test/agents/one/.well-known/agent.json",
        "http://a.test/.well-known/agent.json",
    ]


async def test_a_card_url_is_fetched_as_is() -> None:
    http, seen = mock({"http://a.test/cards/x.json": httpx.Response(200, json=V03_CARD)})
    async with http:
        assert (await resolve_card("http://a.test/cards/x.json", http_client=http)).name == "legacy"
    assert seen == ["http://a.test/cards/x.json"]


@pytest.mark.parametrize(
    ("response", "match"),
    [
        (httpx.Response(404), "no agent card"),
        (httpx.Response(500, text="boom"), "500"),
        (httpx.Response(200, text="not json"), "not a valid agent card"),
        (httpx.Response(200, json={"name": "x"}), "not a valid agent card"),
    ],
)
async def test_resolution_errors(response: httpx.Response, match: str) -> None:
    http, _ = mock({"http://a.test/.well-known/agent-card.json": response})
    async with http:
        with pytest.raises(CardResolutionError, match=match):
            await resolve_card("http://a.test", http_client=http)


async def trickle_a_card(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """200 and a promised 100000-byte body, one byte every 0.1 s: every read gets data."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    writer.write(b"Content-Length: 100000\r\n\r\n")
    while True:
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.write(b" ")


async def test_a_card_trickled_a_byte_at_a_time_is_given_up_at_the_timeout() -> None:
    async with raw_peer(trickle_a_card) as (url, requests):
        with pytest.raises(CardResolutionError, match=r"no complete answer within 1 s"):
            await asyncio.wait_for(resolve_card(url, timeout=1), 15)
    assert requests == ["GET /.well-known/agent-card.json"]


async def test_connect_bounds_the_card_fetch_by_the_call_timeout() -> None:
    async with raw_peer(trickle_a_card) as (url, _):
        with pytest.raises(CardResolutionError, match=r"within 0\.5 s"):
            await asyncio.wait_for(connect(url, timeout=0.5), 15)


async def test_a_huge_card_is_refused_not_held() -> None:
    async with raw_peer(endless_json) as (url, _):
        with pytest.raises(CardResolutionError, match=f"larger than {MAX_CARD_BYTES} bytes"):
            await asyncio.wait_for(resolve_card(url), 15)
        with pytest.raises(CardResolutionError, match="larger than 1000 bytes"):
            await asyncio.wait_for(resolve_card(url, max_size=1000), 15)


def test_the_card_command_has_a_time_limit_without_timeout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An agent that accepts the connection and never answers: the kernel
    # completes the handshake for a listening socket nobody accepts on.
    import a2a_models.adapters.http as http_adapter
    from a2a_models._cli import main

    monkeypatch.setattr(http_adapter, "CARD_TIMEOUT", 0.5, raising=False)  # 30 s in use
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        for argv in (["card", url], ["card", url, "--format", "raw"]):
            status: list[int] = []
            runner = threading.Thread(
                target=lambda a=argv, s=status: s.append(main(a)), daemon=True
            )
            runner.start()
            runner.join(20)
            assert status == [1], f"a2a-models {' '.join(argv)} did not end"
            err = capsys.readouterr().err
            assert "no complete answer within 0.5 s" in err and err.count("\n") == 1


def test_decode_card_picks_the_version() -> None:
    assert decode_card(V03_CARD).supported_interfaces[0].url == "http://old.test/rpc"
    one = card(("http://a/", "GRPC", "1.0"))
    assert decode_card(codec.encode(one)) == one


# ------------------------------------------------------------------------ selection


def test_the_card_order_decides() -> None:
    c = card(
        ("grpc.test:443", "GRPC", "1.0"),
        ("http://a/v03", "JSONRPC", "0.3"),
        ("http://a/rest", "HTTP+JSON", "1.0"),
    )
    assert select_interface(c)[0].url == "http://a/v03"
    assert select_interface(c, prefer=("1.0",))[0].url == "http://a/rest"
    interface, version = select_interface(c, transports=("JSONRPC",))
    assert (interface.url, version) == ("http://a/v03", "0.3")
    with pytest.raises(NoCompatibleInterfaceError, match=r"GRPC 1\.0 at grpc\.test:443"):
        select_interface(c, prefer=("1.0",), transports=("JSONRPC",))


def test_a_0_3_grpc_interface_is_selected() -> None:
    # What an a2a-sdk 0.3.x agent serving gRPC advertises: 0.3's a2a.v1 service (before:
    # skipped, "gRPC is A2A 1.0 only here").
    c = card(("http://a/rpc", "JSONRPC", "0.3.0"), ("grpc.test:50051", "GRPC", "0.3.0"))
    interface, version = select_interface(c, transports=("GRPC",))
    assert (interface.url, version) == ("grpc.test:50051", "0.3")
    with pytest.raises(NoCompatibleInterfaceError):
        select_interface(c, prefer=("1.0",), transports=("GRPC",))


def test_unknown_versions_are_skipped() -> None:
    c = card(("http://a/2", "JSONRPC", "2.0"), ("http://a/1", "JSONRPC", "1.0.1"))
    assert select_interface(c) == (c.supported_interfaces[1], "1.0")


async def test_connect_uses_tenant_version_and_relative_urls() -> None:
    c = card(
        m.AgentInterface(
            url="/api", protocol_binding="HTTP+JSON", protocol_version="1.0", tenant="t1"
        )
    )
    client = await connect(c, card_url="http://a.test/.well-known/agent-card.json")
    async with client:
        assert isinstance(client, RESTClient)
        assert (client.url, client.version, client.tenant) == ("http://a.test/api", "1.0", "t1")
        assert client.card is c


# ------------------------------------------------------------------------ end to end


@pytest.fixture(scope="module")
def legacy_agent() -> Iterator[str]:
    """Our engine with a 0.3-only card at the well-known path."""
    holder: list[str] = []

    def card_json() -> bytes:
        return codec.dumps({**V03_CARD, "url": holder[0] + "/"})

    server = AgentServer(ScriptAgent(), card(("http://x/", "JSONRPC", "1.0")))
    with serve_in_thread(jsonrpc_app(server, card_json=card_json)) as url:
        holder.append(url)
        yield url


async def test_connect_speaks_0_3_to_a_0_3_agent(legacy_agent: str) -> None:
    client = await connect(legacy_agent, headers={"X-Test": "1"})
    async with client:
        assert isinstance(client, HTTPClient)
        assert client.version == "0.3"
        reply = await client.send_message(Message.user("old"))
        assert isinstance(reply, m.Message) and reply.text == "echo: old"
    with pytest.raises(NoCompatibleInterfaceError):
        await connect(legacy_agent, prefer=("1.0",))
