"""``a2a-models serve``: build the agent, its card, the store and the app, then serve.

It lives with the CLI (it loads agents by name, including the conformance
agent), so the HTTP adapter never imports the CLI or the conformance suite.

Runs until SIGINT or SIGTERM, then stops gracefully (open streams are
closed, running agents are cancelled, the store is released).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import TYPE_CHECKING, Any

from .._closing import aclose_if_closable
from ..adapters.http import (
    Authenticator,
    BearerTokenAuthenticator,
    HTTPServer,
    TLSConfig,
    create_app,
)
from ..models import AgentCard, HTTPAuthSecurityScheme, ProtocolBinding, SecurityRequirement
from ..server import AgentServer
from ._secure import JWKSApp, limits_of
from ._serve import handling_stop_signals
from ._store import open_at_start

if TYPE_CHECKING:
    from ..adapters.http import WebhookPushSender
    from ..signing import CardSigner
    from ._security import SecurityOptions
    from ._serve import ServeOptions

__all__ = ["build_agent_server", "grpc_url_for", "run_server"]


def cannot_listen(where: str, exc: OSError) -> str:
    """The line saying why ``where`` (a host, or host:port) cannot be listened on: a port
    that is taken, an address this machine does not have."""
    return f"cannot listen on {where}: {exc.strerror or exc}"


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _agent_and_card(spec: str, url: str) -> tuple[Any, AgentCard]:
    bindings = (ProtocolBinding.JSONRPC, ProtocolBinding.HTTP_JSON)
    if spec == "conformance":
        from ..conformance import ConformanceAgent, conformance_card

        return ConformanceAgent(), conformance_card(url)
    from ._demo import demo_card
    from ._serve import load_agent

    agent = load_agent(spec)
    card = getattr(agent, "card", None)
    if callable(card):
        card = card(url)
    if not isinstance(card, AgentCard):
        # An agent without its own card is served under the demo card's shape.
        card = demo_card(url, bindings=bindings)
        if spec != "demo":
            import attrs

            from ..models import AgentSkill

            name = type(agent).__name__
            description = (type(agent).__doc__ or "An A2A agent").strip().splitlines()[0]
            # A card needs at least one skill (spec §5.7): the agent itself.
            skill = AgentSkill(id=name, name=name, description=description, tags=("agent",))
            card = attrs.evolve(card, name=name, description=description, skills=(skill,))
    return agent, card


def _with_bearer_security(card: AgentCard) -> AgentCard:
    import attrs

    schemes = dict(card.security_schemes)
    schemes.setdefault("bearer", HTTPAuthSecurityScheme(scheme="Bearer"))
    return attrs.evolve(
        card,
        security_schemes=schemes,
        security_requirements=(SecurityRequirement(schemes={"bearer": ()}),),
    )


def _with_grpc_interface(card: AgentCard, grpc_url: str) -> AgentCard:
    """The card with a ``GRPC`` interface at ``grpc_url`` for each A2A version its other
    interfaces offer (the gRPC server serves 1.0's and 0.3's service on one port)."""
    import attrs

    from ..models import AgentInterface

    others = tuple(i for i in card.supported_interfaces if i.protocol_binding != "GRPC")
    versions = dict.fromkeys(i.protocol_version for i in others) or {"1.0": None}
    # 0.3 clients (the a2a-sdk 0.3.x's) hand the URL to grpc.aio.insecure_channel as
    # it is, which takes host:port but not grpc://host:port ("Misformatted domain
    # name"): its servers advertise host:port, and so does the 0.3 interface here.
    bare = grpc_url.removeprefix("grpc://")
    grpc = tuple(
        AgentInterface(
            url=bare if v.startswith("0.") else grpc_url,
            protocol_binding=ProtocolBinding.GRPC,
            protocol_version=v,
        )
        for v in versions
    )
    return attrs.evolve(card, supported_interfaces=(*others, *grpc))


def grpc_url_for(options: ServeOptions, grpc_port: int) -> str:
    """The ``grpc://host:port`` advertised for ``serve --grpc-port``."""
    from urllib.parse import urlsplit

    host = urlsplit(options.public_url).hostname if options.public_url else None
    host = host or options.host
    return f"grpc://[{host}]:{grpc_port}" if ":" in host else f"grpc://{host}:{grpc_port}"


def build_agent_server(
    options: ServeOptions, url: str, *, grpc_url: str | None = None
) -> tuple[AgentServer, Any]:
    """The :class:`AgentServer` and the authenticator (or ``None``) for ``options``.

    ``grpc_url``: gRPC is served too; the card lists it as a ``GRPC`` interface.
    """
    server, authenticator, _ = _build(options, url, grpc_url=grpc_url)
    return server, authenticator


def _build(
    options: ServeOptions, url: str, *, grpc_url: str | None = None
) -> tuple[AgentServer, Any, CardSigner | None]:
    """:func:`build_agent_server`, and the card signer whose key ``run_server`` publishes."""
    from ..observability import instrument_if_configured
    from ..stores import store_from_url
    from ._secure import secure_card

    instrument_if_configured()  # an SDK provider set by the embedding program
    agent, card = _agent_and_card(options.agent, url)
    if grpc_url is not None:
        card = _with_grpc_interface(card, grpc_url)
    authenticator: Authenticator | None = None
    if options.auth_tokens:
        card = _with_bearer_security(card)
        authenticator = BearerTokenAuthenticator(
            {token: f"user-{i}" for i, token in enumerate(options.auth_tokens, 1)}
        )
    security = getattr(options, "security", None)
    signer = None
    if security is not None:
        secured = secure_card(card, security, url, bearer=authenticator)
        card, authenticator, signer = secured.card, secured.authenticator, secured.signer
    store = store_from_url(
        options.store, max_active_tasks_per_owner=options.max_active_tasks_per_owner
    )
    push_sender = push_sender_for(card, security)
    if getattr(options, "front_end", False):
        from ..server import FrontEndHandler
        from ..stores import broker_from_url

        if not options.store.startswith("postgres"):
            raise ValueError("--front-end needs a postgresql:// store (workers share it)")
        # Turns go to `a2a-models worker` processes; the agent was loaded for its card only.
        front = FrontEndHandler(
            card, store=store, broker=broker_from_url(options.store), push_sender=push_sender
        )
        server = AgentServer(None, card, handler=front)
    else:
        server = engine_server(
            agent,
            card,
            store,
            options.store,
            push_sender=push_sender,
            lease_ttl=options.lease_ttl,
        )
    if signer is not None:
        extended = server.handler.extended_card
        if extended is not None:
            server.handler.extended_card = signer.sign(extended)
    return server, authenticator, signer


def push_sender_for(
    card: AgentCard, security: SecurityOptions | None = None
) -> WebhookPushSender | None:
    """The webhook sender of an agent whose card declares push notifications (else ``None``);
    ``security`` (a :class:`SecurityOptions`) sets its allowlist and limits."""
    if not card.capabilities.push_notifications:
        return None
    from ..adapters.http import WebhookPushSender

    if security is None:
        return WebhookPushSender()
    return WebhookPushSender(
        allowlist=security.push_allowlist,
        max_configs_per_task=security.push_max_configs,
        rate_per_task=security.push_rate,
    )


def engine_server(
    agent: Any,
    card: AgentCard,
    store: Any,
    store_url: str,
    *,
    push_sender: WebhookPushSender | None = None,
    lease_ttl: float = 15.0,
) -> AgentServer:
    """The :class:`AgentServer` running ``agent`` on ``store`` (opened from ``store_url``),
    as ``serve`` and ``agent run`` both need it.

    A PostgreSQL store gets its event broker (replicas see each other's events); a store
    that keeps leases (the SQL ones) gets a :class:`~a2a_models.server.LeasingExecutor`, so
    that the tasks a process left running when it died are taken over (failed, saying
    so) instead of staying ``working`` for ever. Call :func:`take_over_orphans` once
    serving.
    """
    from ..server import LeasingExecutor, RequestHandler, supports_leases
    from ..stores import broker_from_url

    broker = broker_from_url(store_url) if store_url.startswith("postgres") else None
    if not supports_leases(store):
        return AgentServer(agent, card, store=store, broker=broker, push_sender=push_sender)
    handler = RequestHandler(
        agent,
        card,
        store=store,
        broker=broker,
        push_sender=push_sender,
        executor=lambda a, w: LeasingExecutor(a, w, ttl=lease_ttl),
    )
    return AgentServer(None, card, handler=handler)


async def take_over_orphans(server: AgentServer) -> None:
    """Start the lease keeper of ``server``'s executor (if it keeps leases): it renews this
    process's leases and takes over the tasks of a process that died."""
    opener = getattr(server.handler.executor, "open", None)
    if opener is not None:
        await opener()


async def close_engine(server: AgentServer) -> None:
    """Close ``server``, then its store and event broker."""
    await server.aclose()
    for resource in (server.handler.store, getattr(server.handler, "broker", None)):
        await aclose_if_closable(resource)


async def run_server(options: ServeOptions, *, ready: asyncio.Event | None = None) -> int:
    """Serve ``options`` until SIGINT/SIGTERM (or until the task is cancelled)."""
    try:
        port = options.port or _free_port(options.host)
    except OSError as exc:  # e.g. an address this machine does not have
        print(f"a2a-models serve: {cannot_listen(options.host, exc)}", file=sys.stderr)
        return 1
    base = options.base_path.strip("/")
    security = getattr(options, "security", None)
    tls = None
    if security is not None and security.tls_cert and security.tls_key:
        tls = TLSConfig(
            cert=security.tls_cert,
            key=security.tls_key,
            key_password=security.tls_key_password,
            client_ca=security.tls_client_ca,
        )
    scheme = "https" if tls else "http"
    public = (options.public_url or f"{scheme}://{options.host}:{port}").rstrip("/")
    url = f"{public}/{base}" if base else public
    grpc_port = getattr(options, "grpc_port", None)
    grpc_server: Any = None
    if grpc_port is not None:
        try:
            from ..adapters.grpc import KEEPALIVE_TIMEOUT, MIN_CLIENT_PING_INTERVAL, GrpcServer
        except ImportError as exc:
            print(f"a2a-models serve: --grpc-port needs the grpc extra ({exc})", file=sys.stderr)
            return 2
        grpc_port = grpc_port or _free_port(options.host)
    try:
        from ..stores import parse_age

        retain = parse_age(options.retain_terminal)
        if tls is not None:
            tls.check()
        server, authenticator, signer = _build(
            options,
            url,
            grpc_url=grpc_url_for(options, grpc_port) if grpc_port is not None else None,
        )
    except ValueError as exc:
        print(f"a2a-models serve: {exc}", file=sys.stderr)
        return 2
    problem = await open_at_start(
        server.handler.store, options.store, wait=options.store_wait, command="a2a-models serve"
    )
    if problem is not None:
        print(f"a2a-models serve: {problem}", file=sys.stderr)
        await close_engine(server)
        return 1
    retention = None
    if retain is not None and hasattr(server.handler.store, "delete_terminal_older_than"):
        from ..stores import Retention

        retention = Retention(server.handler.store, retain)
    if grpc_port is not None:
        keepalive: dict[str, Any] = {}
        if options.grpc_keepalive is not None:
            seconds = options.grpc_keepalive
            keepalive = {
                "keepalive_time": seconds,
                "keepalive_timeout": min(seconds, KEEPALIVE_TIMEOUT),
                # Half: a client pinging every `seconds` is never early by a hair.
                "min_client_ping_interval": min(seconds / 2, MIN_CLIENT_PING_INTERVAL),
            }
        grpc_server = GrpcServer(
            server, host=options.host, port=grpc_port, authenticator=authenticator, **keepalive
        )
    app: Any = create_app(server, base_path=base, authenticator=authenticator)
    if signer is not None:
        app = JWKSApp(app, signer.jwks())
    http = HTTPServer(
        app,
        host=options.host,
        port=port,
        log_level=options.log_level,
        limits=limits_of(security),
        tls=tls,
    )
    stop = asyncio.Event()
    signals = 0

    def on_signal() -> None:
        # The first signal stops gracefully; a second one during the stop hurries it.
        nonlocal signals
        signals += 1
        stop.set()
        if signals > 1:
            print("a2a-models: second signal, stopping now", file=sys.stderr, flush=True)
            http.graceful_timeout = 0.0

    with handling_stop_signals(on_signal):
        try:
            await http.start()
        except OSError as exc:
            where = f"{options.host}:{port}"
            print(f"a2a-models serve: {cannot_listen(where, exc)}", file=sys.stderr)
            await server.aclose()
            return 1
        if grpc_server is not None:
            try:
                await grpc_server.start()
            except (OSError, RuntimeError) as exc:
                print(
                    f"a2a-models serve: cannot serve gRPC on {options.host}:{grpc_port}: {exc}",
                    file=sys.stderr,
                )
                await http.stop()
                await server.aclose()
                return 1
        print(
            f"a2a-models: serving {server.card.name if server.card else 'agent'} at {url}",
            flush=True,
        )
        if grpc_server is not None:
            print(f"a2a-models: gRPC at {grpc_url_for(options, grpc_server.port)}", flush=True)
        if ready is not None:
            ready.set()
        if retention is not None:
            retention.start()
        await take_over_orphans(server)
        await stop.wait()
        if retention is not None:
            await retention.aclose()
        # Both bindings refuse new calls first; then the agents are stopped (their
        # tasks failed) while the calls in flight drain, so that a blocking
        # SendMessage gets its failed task instead of being cut off at the end of
        # the graceful timeout (500 and a traceback; gRPC CANCELLED).
        grpc_stopping = None
        if grpc_server is not None:
            # Health NOT_SERVING first, while the gRPC port still accepts: a load
            # balancer watching it stops sending before the port closes.
            await grpc_server.health.enter_graceful_shutdown()
            grpc_stopping = asyncio.create_task(grpc_server.stop())
            await asyncio.sleep(0)  # under way: it refuses new calls before the agents stop
        try:
            await http.stop(before_drain=server.aclose)
        finally:
            if grpc_stopping is not None:
                await grpc_stopping
        await close_engine(server)
    print("a2a-models: stopped", flush=True)
    return 0
