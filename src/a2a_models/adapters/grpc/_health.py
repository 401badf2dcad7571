"""``grpc.health.v1.Health`` on the A2A gRPC port: what ``/readyz`` says, in gRPC's
health protocol (``grpc_health_probe``, Kubernetes' gRPC probes, Envoy, gRPC's
client-side health checking). The messages and stubs are ``grpcio-health-checking``'s.

* Services: ``""`` (the server as a whole) and each A2A service it serves
  (``lf.a2a.v1.A2AService``; ``a2a.v1.A2AService`` when it serves 0.3). Another name
  is ``NOT_FOUND`` (``Check``) or ``SERVICE_UNKNOWN`` (``Watch``).
* ``SERVING`` means what ``/readyz``'s 200 means: the store and the broker answered
  (:func:`~a2a_models.server.check_readiness`, the same probe); ``NOT_SERVING`` that
  one did not, or that the server is stopping. All services share the verdict: one
  engine serves them all.
* ``Check`` and ``List`` probe on every call, as ``/readyz`` does. A ``Watch`` is sent
  the status when it changes, so while one is open a probe runs every ``interval``
  seconds (one for all of them).
* :meth:`HealthService.enter_graceful_shutdown` makes every answer ``NOT_SERVING``
  and sends it to every ``Watch``: a server calls it while its port is still open, so
  that a load balancer stops sending before the port closes; once it closes,
  :meth:`HealthService.end_watches` ends them (``UNAVAILABLE``, as the A2A streams).
* No authentication, not in the card, not an A2A operation (no span, metric or
  refusal line), as ``/healthz`` and ``/readyz``.

The library's own ``HealthServicer`` keeps statuses someone sets; here the status is
what a probe finds, and a stopping server ends the ``Watch`` streams (the library's
never end, which held the stop for its whole graceful timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ...errors import quote_input
from ...server import A2AServer, check_readiness

__all__ = ["HEALTH_INTERVAL", "HealthService"]

log = logging.getLogger("a2a_models.adapters.grpc")

#: Seconds between two probes while a ``Watch`` is open.
HEALTH_INTERVAL = 5.0
#: Seconds a stopping server waits for its ``Watch`` streams to take ``NOT_SERVING``
#: (a client that stopped reading is not waited for longer, as over SSE).
_TELL_TIMEOUT = 1.0

_Response = health_pb2.HealthCheckResponse
SERVING = _Response.SERVING
NOT_SERVING = _Response.NOT_SERVING
SERVICE_UNKNOWN = _Response.SERVICE_UNKNOWN


class HealthService(health_pb2_grpc.HealthServicer):  # type: ignore[misc]
    """The ``grpc.health.v1.Health`` servicer of ``server`` for ``services`` (and ``""``);
    register it with ``grpc_health.v1.health_pb2_grpc.add_HealthServicer_to_server``."""

    def __init__(
        self, server: A2AServer, services: Iterable[str], *, interval: float = HEALTH_INTERVAL
    ) -> None:
        if interval <= 0:
            raise ValueError("the health probe interval must be positive")
        self.server = server
        self.services = frozenset(("", *services))
        self.interval = interval
        self._ready: bool | None = None  # the last probe's verdict (None: none yet)
        self._closing = False
        self._changed = asyncio.Event()  # replaced each time it is set: a broadcast
        self._watches: set[asyncio.Task[Any]] = set()
        self._untold: set[asyncio.Task[Any]] = set()  # stopping: not yet sent NOT_SERVING
        self._all_told = asyncio.Event()
        self._ended = asyncio.Event()
        self._monitor: asyncio.Task[None] | None = None

    @property
    def stopping(self) -> bool:
        """Whether :meth:`enter_graceful_shutdown` was called (``NOT_SERVING`` for good)."""
        return self._closing

    @property
    def status(self) -> int:
        """``SERVING`` or ``NOT_SERVING``, as the last probe found (or stopping)."""
        return int(SERVING if self._ready and not self._closing else NOT_SERVING)

    async def probe(self) -> int:
        """Probe the store and broker now; the :attr:`status` that follows."""
        # An outage is logged once: its first failed probe says why, the first
        # good one after it that it is over.
        checks = await check_readiness(self.server, log_failures=self._ready is not False)
        ready = all(value == "ok" for value in checks.values())
        if ready != self._ready:
            if ready and self._ready is False:
                log.warning("readiness: the store and the broker answer again (gRPC SERVING)")
            self._ready = ready
            self._changed.set()
            self._changed = asyncio.Event()
        return self.status

    async def Check(self, request: Any, context: Any) -> Any:
        if request.service not in self.services:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"no service {quote_input(request.service)} here"
            )
        return _Response(status=self.status if self._closing else await self.probe())

    async def List(self, request: Any, context: Any) -> Any:
        status = self.status if self._closing else await self.probe()
        return health_pb2.HealthListResponse(
            statuses={name: _Response(status=status) for name in sorted(self.services)}
        )

    async def Watch(self, request: Any, context: Any) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._watches.add(task)
        if self._monitor is None and not self._closing and request.service in self.services:
            self._monitor = asyncio.create_task(self._probing(), name="a2a-grpc-health")
        try:
            sent = None
            while True:
                changed = self._changed
                if request.service not in self.services:
                    status = SERVICE_UNKNOWN
                elif self._ready is None and not self._closing:
                    await changed.wait()  # the first probe's verdict
                    continue
                else:
                    status = self.status
                if status != sent:
                    await context.write(_Response(status=status))
                    sent = status
                if self._closing:
                    break
                await changed.wait()
            self._told(task)
            await self._ended.wait()
        finally:
            self._told(task)
            self._watches.discard(task)
            if not self._watches:
                self._stop_probing()
        await context.abort(
            grpc.StatusCode.UNAVAILABLE, "the server is shutting down: watch again elsewhere"
        )

    async def _probing(self) -> None:
        while True:
            await self.probe()
            await asyncio.sleep(self.interval)

    def _told(self, task: asyncio.Task[Any]) -> None:
        self._untold.discard(task)
        if not self._untold:
            self._all_told.set()

    def _stop_probing(self) -> None:
        monitor, self._monitor = self._monitor, None
        if monitor is not None:
            monitor.cancel()

    async def enter_graceful_shutdown(self, timeout: float = _TELL_TIMEOUT) -> None:
        """Answer ``NOT_SERVING`` from now on; returns once every open ``Watch`` was sent
        it, or after ``timeout`` seconds."""
        if not self._closing:
            self._closing = True
            self._stop_probing()
            self._untold = set(self._watches)
            self._all_told.clear()
            self._changed.set()
            self._changed = asyncio.Event()
        if self._untold:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._all_told.wait()

    def end_watches(self) -> None:
        """End every ``Watch`` (``UNAVAILABLE``) once it was sent ``NOT_SERVING``: the
        port no longer accepts (see :meth:`enter_graceful_shutdown`)."""
        self._ended.set()
