"""``/healthz`` (the process answers) and ``/readyz`` (its store and broker answer).

Both are plain ``GET`` routes outside the A2A gateway: no authentication,
not in the agent card. ``/readyz`` reads a task that does not exist from the
engine's store and asks its broker whether it can deliver
(:meth:`~a2a_models.server.EventBroker.check_ready`), each within
:data:`READY_TIMEOUT` seconds; a failure answers 503 naming the
component and the exception type, never its message (a DSN may be in it),
which is logged instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import codec
from ...server import A2AServer

__all__ = ["HEALTH_PATH", "READY_PATH", "READY_TIMEOUT", "health_routes"]

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
#: Seconds each readiness probe may take.
READY_TIMEOUT = 3.0
_PROBE_ID = "a2a-models-readiness-probe"

log = logging.getLogger("a2a_models.http")


def _json(body: dict[str, Any], status: int = 200) -> Response:
    return Response(
        codec.dumps(body),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _probes(server: A2AServer) -> dict[str, Callable[[], Awaitable[None]]]:
    handler = getattr(server, "handler", None)
    store = getattr(handler, "store", None)
    broker = getattr(handler, "broker", None)
    probes: dict[str, Callable[[], Awaitable[None]]] = {}
    if store is not None:

        async def read_store() -> None:
            await store.get(_PROBE_ID, None)

        probes["store"] = read_store
    if broker is not None:
        probes["broker"] = broker.check_ready
    return probes


#: Probes given up on, finishing their cancellation in the background (kept referenced).
_abandoned: set[asyncio.Future[None]] = set()


def _done(probe: asyncio.Future[None]) -> None:
    _abandoned.discard(probe)
    if not probe.cancelled():
        probe.exception()  # retrieved: a late failure is no "never retrieved" warning


async def _within(probe: Callable[[], Awaitable[None]], seconds: float) -> None:
    """``await probe()`` for at most ``seconds`` (:class:`TimeoutError` after that).

    A probe late is cancelled but not waited for: a database driver's cancellation
    talks to the database that is not answering (psycopg sends a cancel request and
    then waits for the statement's end), which made ``/readyz`` of a frozen PostgreSQL
    answer after 13 s instead of 3.
    """
    running = asyncio.ensure_future(probe())
    try:
        await asyncio.wait_for(asyncio.shield(running), seconds)
    except BaseException:
        if not running.done():
            running.cancel()
            _abandoned.add(running)
            running.add_done_callback(_done)
        raise


def health_routes(server: A2AServer) -> list[Route]:
    """The ``/healthz`` and ``/readyz`` routes for ``server``'s app."""

    async def healthz(request: Request) -> Response:
        return _json({"status": "ok"})

    async def readyz(request: Request) -> Response:
        checks: dict[str, str] = {}
        for name, probe in _probes(server).items():
            try:
                await _within(probe, READY_TIMEOUT)
            except TimeoutError:
                checks[name] = f"no answer within {READY_TIMEOUT:g} s"
                log.warning("readiness: the %s did not answer within %g s", name, READY_TIMEOUT)
            except Exception as exc:
                checks[name] = f"failed ({type(exc).__name__})"
                log.warning("readiness: the %s failed: %s", name, exc)
            else:
                checks[name] = "ok"
        ready = all(value == "ok" for value in checks.values())
        return _json(
            {"status": "ok" if ready else "unavailable", "checks": checks}, 200 if ready else 503
        )

    return [
        Route(HEALTH_PATH, healthz, methods=["GET"]),
        Route(READY_PATH, readyz, methods=["GET"]),
    ]
