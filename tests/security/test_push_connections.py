"""WebhookPushSender keeps connections to a webhook and reuses them, only to a checked
address and, over TLS, only for the host name the certificate was verified for."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import pytest
from _keys import write_pki

from a2a_models import TaskState
from a2a_models import models as m
from a2a_models.adapters.http import WebhookDeliveryError, WebhookPushSender

ITEM = m.TaskStatusUpdateEvent(
    task_id="t1", context_id="c1", status=m.TaskStatus(state=TaskState.WORKING)
)


@attrs.define
class Hook:
    port: int = 0
    connections: int = 0
    hosts: list[str] = attrs.field(factory=list)


@asynccontextmanager
async def keepalive_hook(tls: ssl.SSLContext | None = None) -> AsyncIterator[Hook]:
    """A webhook on 127.0.0.1 answering 200 (with a short body) to each request of a
    kept-alive connection, counting connections and recording Host headers."""
    hook = Hook()
    handlers: set[asyncio.Task[object]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.add(asyncio.current_task())  # type: ignore[arg-type]
        hook.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                headers = dict(
                    line.split(": ", 1) for line in head.decode("latin-1").split("\r\n")[1:-2]
                )
                headers = {k.lower(): v for k, v in headers.items()}
                hook.hosts.append(headers["host"])
                await reader.readexactly(int(headers.get("content-length", "0")))
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass  # the sender hung up (or refused the certificate)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    hook.port = server.sockets[0].getsockname()[1]
    try:
        yield hook
    finally:
        server.close()
        for handler in handlers:
            handler.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)


async def to_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def pinned_sender(**kw: object) -> WebhookPushSender:
    """Host names resolve to 127.0.0.1 (allowed), so deliveries are pinned to it."""
    return WebhookPushSender(
        resolver=to_loopback, allowlist=["127.0.0.0/8"], rate_per_task=None, **kw
    )


def config(url: str) -> m.TaskPushNotificationConfig:
    return m.TaskPushNotificationConfig(task_id="t1", url=url)


async def test_notifications_to_one_webhook_share_one_pinned_connection() -> None:
    # Each notification opened a connection of its own (1,000 notifications: 1,000
    # connections, and as many TLS handshakes): the answer was closed unread.
    async with keepalive_hook() as hook:
        push = pinned_sender()
        for _ in range(50):
            await push.send(config(f"http://hooks.test:{hook.port}/hook"), ITEM)
        await push.aclose()
    # hooks.test resolves nowhere but through the sender's check: every connection
    # went to the checked address, under the URL's host name.
    assert hook.connections == 1
    assert hook.hosts == [f"hooks.test:{hook.port}"] * 50


async def test_a_tls_connection_is_reused_only_for_the_name_it_was_verified_for(
    tmp_path: Path,
) -> None:
    pki = write_pki(tmp_path)  # the server certificate names localhost and 127.0.0.1
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(pki["server"], pki["server_key"])
    client_tls = ssl.create_default_context(cafile=str(pki["ca"]))
    async with keepalive_hook(server_tls) as hook:
        push = pinned_sender(tls=client_tls, max_attempts=1)
        for _ in range(3):
            await push.send(config(f"https://localhost:{hook.port}/hook"), ITEM)
        assert hook.connections == 1
        # Same address, same port, another name: not the localhost connection, but
        # a new one whose certificate is checked for that name (and refused in the
        # handshake: no request for other.test ever reaches the server).
        with pytest.raises(WebhookDeliveryError, match="CERTIFICATE_VERIFY_FAILED"):
            await push.send(config(f"https://other.test:{hook.port}/hook"), ITEM)
        await push.send(config(f"https://localhost:{hook.port}/hook"), ITEM)
        await push.aclose()
    assert hook.connections == 1
    assert hook.hosts == [f"localhost:{hook.port}"] * 4
