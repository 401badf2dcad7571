"""HTTPServer / ``a2a-models serve``: an idle server does not wake the process."""

from __future__ import annotations

import asyncio
import selectors
from typing import Any

from a2a_models.adapters.http import HTTPServer


class _CountingSelector(selectors.DefaultSelector):
    """Counts the event loop's wake-ups (each ``select`` it returns from)."""

    calls = 0

    def select(self, timeout: float | None = None) -> Any:
        self.calls += 1
        return super().select(timeout)


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


def test_an_idle_server_wakes_about_once_a_second() -> None:
    # Before, uvicorn's main loop slept 0.1 s between looks at should_exit: an idle
    # `a2a-models serve` woke 10 times a second (101 voluntary context switches in
    # 10 s). Now it ticks once a second (the date header) and stop() wakes it at once.
    selector = _CountingSelector()

    async def main() -> tuple[int, bytes]:
        http = HTTPServer(_app)
        async with http:
            await asyncio.sleep(0.3)
            before = selector.calls
            await asyncio.sleep(2.0)
            woke = selector.calls - before
            reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await reader.readuntil(b"\r\n\r\n")
            writer.close()
        return woke, head

    with asyncio.Runner(loop_factory=lambda: asyncio.SelectorEventLoop(selector)) as runner:
        woke, head = runner.run(main())
    assert head.startswith(b"HTTP/1.1 200") and b"date: " in head.lower()
    # The sleep and two ticks, two wake-ups each (before: 20 ticks, 40 wake-ups).
    assert woke <= 8
