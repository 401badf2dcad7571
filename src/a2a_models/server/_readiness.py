"""Readiness: whether a server can do its work now, i.e. its task store and event
broker answer. The one probe behind HTTP's ``/readyz`` and gRPC's health service.

Each probe runs within a timeout: the store reads a task that does not exist, the
broker :meth:`~a2a_models.server.EventBroker.check_ready`. A failure is reported by
component and exception type, never by its message (a DSN may be in it), which is
logged instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ._base import A2AServer

__all__ = ["READY_TIMEOUT", "check_readiness"]

#: Seconds each readiness probe may take.
READY_TIMEOUT = 3.0
#: What a component that answered is reported as.
OK = "ok"
_PROBE_ID = "a2a-models-readiness-probe"

log = logging.getLogger("a2a_models.server")


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


async def check_readiness(
    server: A2AServer, *, timeout: float | None = None, log_failures: bool = True
) -> dict[str, str]:
    """Probe ``server``'s store and broker (those it has), each within ``timeout``
    seconds (default :data:`READY_TIMEOUT`): ``{"store": "ok", "broker": "ok"}`` when
    both answered, else the failing one as ``"failed (ConnectionRefusedError)"`` or
    ``"no answer within 3 s"``. The server is ready when every value is ``"ok"``.

    Each failure is a WARNING on ``a2a_models.server`` with the exception's message
    (``log_failures=False``: none, for a caller that reports a lasting failure once).
    """
    seconds = READY_TIMEOUT if timeout is None else timeout
    checks: dict[str, str] = {}
    for name, probe in _probes(server).items():
        try:
            await _within(probe, seconds)
        except TimeoutError:
            checks[name] = f"no answer within {seconds:g} s"
            if log_failures:
                log.warning("readiness: the %s did not answer within %g s", name, seconds)
        except Exception as exc:
            checks[name] = f"failed ({type(exc).__name__})"
            if log_failures:
                log.warning("readiness: the %s failed: %s", name, exc)
        else:
            checks[name] = OK
    return checks
