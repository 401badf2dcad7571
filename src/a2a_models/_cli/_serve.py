"""``a2a-models serve``: the options, the agent loader, and the hand-off to the HTTP server.

The command line is parsed into a :class:`ServeOptions` and passed to
``a2a_models._cli._run.run_server(options)``, which owns everything from
there (building the app, the store, signals, shutdown). ``run_server`` may be
a plain function or a coroutine function; its return value is the exit code
(``None`` means 0).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs

from ._security import SecurityOptions

__all__ = ["ServeOptions", "load_agent", "run"]


def _tokens(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(slots=True, kw_only=True)
class ServeOptions:
    """What ``a2a-models serve`` was asked for.

    * ``host``, ``port``: where to listen (port 0: any free port).
    * ``store``: the task store URL: ``memory:``, ``sqlite:///path/to.db``,
      ``postgresql://user:pass@host/db``.
    * ``base_path``: the path prefix of the A2A endpoints (``""``: at the root).
    * ``agent``: ``demo`` (the built-in demo agent), ``conformance`` (the
      agent the conformance suite drives) or ``module:object`` (an
      :class:`~a2a_models.server.Agent` instance, class or factory).
    * ``auth_tokens``: bearer tokens accepted (none: no authentication).
    * ``public_url``: the base URL advertised in the agent card (default:
      ``http://{host}:{port}``).
    * ``log_level``: ``debug``, ``info``, ``warning`` or ``error``.
    * ``security``: the :class:`SecurityOptions` (TLS, OIDC, signing, limits).
    * ``retain_terminal``: how long finished tasks are kept in an SQL store
      (``7d``, ``12h``, ...; ``off``: forever).
    * ``max_active_tasks_per_owner``: most non-terminal tasks one caller may
      have (``None``: no limit).
    * ``lease_ttl``: seconds a running turn's lease lasts without renewal (SQL
      stores): a task of a process that died is taken over within about that.
    * ``store_wait``: seconds to keep trying to open the store at start (a
      database that starts with the server); 0: refuse to start at once.
    * ``front_end``: run no agent here: queue each turn in the (PostgreSQL) store
      for ``a2a-models worker`` processes (see docs/replicas.md).
    * ``grpc_port``: also serve gRPC on this port (0: any; ``None``: no gRPC).
    * ``grpc_keepalive``: seconds of silence before gRPC pings a client (clients may
      ping twice as often); ``None``: the default.
    * ``otel``: configure the OpenTelemetry SDK from the ``OTEL_*`` environment
      variables and trace/measure every request (see docs/observability.md).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    store: str = "sqlite:///a2a-tasks.db"
    base_path: str = ""
    agent: str = "demo"
    auth_tokens: tuple[str, ...] = attrs.field(default=(), converter=_tokens, repr=False)
    public_url: str | None = None
    log_level: str = "info"
    retain_terminal: str = "7d"
    max_active_tasks_per_owner: int | None = 1000
    lease_ttl: float = 15.0
    store_wait: float = 0.0
    front_end: bool = False
    grpc_port: int | None = None
    grpc_keepalive: float | None = None
    #: TLS, OIDC, card signing, push and slow-client limits (see ``_cli/_security.py``).
    security: SecurityOptions = attrs.field(factory=SecurityOptions)
    otel: bool = False


def load_agent(spec: str) -> Any:
    """The agent named by ``spec``: ``demo`` or ``module:object`` (``module.object`` too).

    A class or a factory function is called without arguments. Other names
    (``conformance``) are left to the server: :class:`ValueError`.
    """
    from ..server import Agent

    if spec == "demo":
        from ._demo import DemoAgent

        return DemoAgent()
    if "" not in sys.path and os.getcwd() not in sys.path:
        # As `python -m` and uvicorn do: an agent module next to you is importable.
        sys.path.insert(0, os.getcwd())
    module_name, sep, attr = spec.partition(":")
    if not sep:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise ValueError(f"--agent {spec!r}: expected demo, conformance or module:object")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"--agent {spec!r}: cannot import {module_name!r}: {exc}") from exc
    obj: Any = module
    for name in attr.split("."):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            raise ValueError(f"--agent {spec!r}: {module_name!r} has no {attr!r}") from None
    if isinstance(obj, Agent):
        return obj
    if callable(obj):
        try:
            made = obj()
        except TypeError as exc:
            raise ValueError(
                f"--agent {spec!r}: calling it without arguments failed: {exc}"
            ) from None
        if isinstance(made, Agent):
            return made
    raise ValueError(f"--agent {spec!r} is not an a2a_models.server.Agent (nor makes one)")


def run(options: ServeOptions) -> int:
    """Hand ``options`` to :func:`._run.run_server` (which needs the ``http`` extra)."""
    try:
        importlib.import_module("a2a_models.adapters.http")  # ImportError without the extra
        from ._run import run_server
    except ImportError as exc:
        print(
            f"a2a-models serve: the HTTP server is not available ({exc}). "
            "Install the extra with: pip install 'a2a-models[http]'",
            file=sys.stderr,
        )
        return 2
    if options.otel:
        from ._otel import start_otel

        if not start_otel("serve", options.log_level):
            return 2
    return asyncio.run(run_server(options))


@contextlib.contextmanager
def handling_stop_signals(callback: Callable[[], object]) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM call ``callback`` (where the event loop can say so)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, callback)
    try:
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
