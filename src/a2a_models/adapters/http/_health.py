"""``/healthz`` (the process answers) and ``/readyz`` (its store and broker answer).

Both are plain ``GET`` routes outside the A2A gateway: no authentication,
not in the agent card. ``/readyz`` is :func:`~a2a_models.server.check_readiness`
(the probe gRPC's health service uses too): 200 when the store and the broker
answered within :data:`~a2a_models.server.READY_TIMEOUT` seconds, else 503
naming the component and the exception type, never its message (a DSN may be
in it), which is logged instead.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import codec
from ...server import A2AServer, check_readiness

__all__ = ["HEALTH_PATH", "READY_PATH", "health_routes"]

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"


def _json(body: dict[str, Any], status: int = 200) -> Response:
    return Response(
        codec.dumps(body),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def health_routes(server: A2AServer) -> list[Route]:
    """The ``/healthz`` and ``/readyz`` routes for ``server``'s app."""

    async def healthz(request: Request) -> Response:
        return _json({"status": "ok"})

    async def readyz(request: Request) -> Response:
        checks = await check_readiness(server)
        ready = all(value == "ok" for value in checks.values())
        return _json(
            {"status": "ok" if ready else "unavailable", "checks": checks}, 200 if ready else 503
        )

    return [
        Route(HEALTH_PATH, healthz, methods=["GET"]),
        Route(READY_PATH, readyz, methods=["GET"]),
    ]
