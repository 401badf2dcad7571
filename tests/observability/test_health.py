"""``/healthz`` and ``/readyz`` on the HTTP app: no auth, not in the card, 503 naming the failure."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest
from _otel_support import Echo, card

from a2a_models.adapters.http import AuthenticationError, HTTPServer
from a2a_models.server import AgentServer, InMemoryTaskStore


class DownStore(InMemoryTaskStore):
    async def get(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionRefusedError("connect to postgresql://admin:s3cret@db failed")


class Refuse:
    """An authenticator that refuses everyone."""

    async def authenticate(self, request: Any) -> Any:
        raise AuthenticationError("no credentials")


async def test_healthz_and_readyz_answer_without_credentials() -> None:
    server = AgentServer(Echo(), card("h"))
    async with HTTPServer(server) as http, httpx.AsyncClient(base_url=http.url) as client:
        health = await client.get("/healthz")
        ready = await client.get("/readyz")
        card_doc = (await client.get("/.well-known/agent-card.json")).text
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": {"store": "ok", "broker": "ok"}}
    assert ready.headers["cache-control"] == "no-store"
    assert "healthz" not in card_doc and "readyz" not in card_doc


async def test_readyz_is_503_naming_the_component_not_the_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = AgentServer(Echo(), card("h"), store=DownStore())
    with caplog.at_level(logging.WARNING, "a2a_models.server"):
        async with HTTPServer(server) as http, httpx.AsyncClient(base_url=http.url) as client:
            ready = await client.get("/readyz")
            health = await client.get("/healthz")
    assert health.status_code == 200  # the process is up
    assert ready.status_code == 503
    body = ready.json()
    assert body == {
        "status": "unavailable",
        "checks": {"store": "failed (ConnectionRefusedError)", "broker": "ok"},
    }
    assert "s3cret" not in ready.text
    assert [r.getMessage() for r in caplog.records if "readiness" in r.getMessage()] == [
        "readiness: the store failed: connect to postgresql://admin:s3cret@db failed"
    ]


async def test_health_routes_skip_the_authenticator() -> None:
    server = AgentServer(Echo(), card("h"))
    async with (
        HTTPServer(server, authenticator=Refuse()) as http,
        httpx.AsyncClient(base_url=http.url) as client,
    ):
        refused = await client.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"})
        health = await client.get("/healthz")
        ready = await client.get("/readyz")
    assert refused.status_code == 401
    assert (health.status_code, ready.status_code) == (200, 200)


class Frozen(InMemoryTaskStore):
    """A store on a database that stopped answering: a read never ends, and its
    cancellation waits for the database too (as psycopg's does) until ``thawed``."""

    def __init__(self) -> None:
        super().__init__()
        self.thawed = asyncio.Event()
        self.cancelled = 0

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            await self.thawed.wait()
            raise


async def test_readyz_answers_at_its_timeout_however_long_the_probe_takes_to_cancel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # /readyz waited for the probe's cancellation: with PostgreSQL frozen, psycopg's
    # cancel talks to the frozen server, and the answer came after 13 s, not 3.
    from a2a_models.server import _readiness

    monkeypatch.setattr(_readiness, "READY_TIMEOUT", 0.2)
    store = Frozen()
    server = AgentServer(Echo(), card("h"), store=store)
    async with HTTPServer(server) as http, httpx.AsyncClient(base_url=http.url) as client:
        try:
            ready = await client.get("/readyz", timeout=5)
            health = await client.get("/healthz", timeout=5)
        finally:
            store.thawed.set()
    assert store.cancelled == 1  # the probe was given up on, still finishing
    assert ready.status_code == 503
    assert ready.json()["checks"]["store"] == "no answer within 0.2 s"
    assert health.status_code == 200
