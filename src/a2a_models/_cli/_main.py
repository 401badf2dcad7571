"""Argument parsing and the ``send`` and ``card`` subcommands.

Everything beyond ``argparse`` is imported inside the subcommands, so
``a2a-models --help`` stays fast and works without the ``http`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from ..adapters.http._client import BaseHTTPClient

__all__ = ["build_parser", "main"]

_VERSIONS = ("auto", "1.0", "0.3")
_TRANSPORTS = {
    "auto": ("JSONRPC", "HTTP+JSON", "GRPC"),
    "jsonrpc": ("JSONRPC",),
    "rest": ("HTTP+JSON",),
    "grpc": ("GRPC",),
}


class _UsageError(Exception):
    pass


def _header(value: str) -> tuple[str, str]:
    name, sep, content = value.partition(":")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME:VALUE, got {value!r}")
    return name.strip(), content.strip()


def _add_connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--header",
        "-H",
        action="append",
        type=_header,
        default=[],
        metavar="NAME:VALUE",
        help="add an HTTP header to every request (repeatable), e.g. 'Authorization: Bearer T'",
    )
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="per-call time limit"
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``a2a-models`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="a2a-models",
        description="Talk to A2A agents (protocol 1.0 and 0.3), show their cards, serve one.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    send = commands.add_parser(
        "send",
        help="send a text message to an agent and print the answer",
        description=(
            "Send TEXT to the agent at URL. URL is the agent's base URL (its card is read "
            "from /.well-known/agent-card.json and the best interface chosen) or, with "
            "--no-card, a JSON-RPC (or --transport rest) endpoint."
        ),
    )
    send.add_argument("url", metavar="URL")
    send.add_argument("text", metavar="TEXT")
    send.add_argument("--stream", action="store_true", help="stream the answer, one line per event")
    send.add_argument(
        "--version",
        choices=_VERSIONS,
        default="auto",
        help="protocol version (auto: the agent card's preferred one)",
    )
    send.add_argument(
        "--transport",
        choices=tuple(_TRANSPORTS),
        default="auto",
        help="binding: JSON-RPC, HTTP+JSON (rest), gRPC (grpc: needs the grpc extra), "
        "or whatever the card prefers (auto)",
    )
    send.add_argument(
        "--no-card", action="store_true", help="do not read the agent card; URL is the endpoint"
    )
    send.add_argument("--context-id", help="continue this context")
    send.add_argument("--task-id", help="continue this (interrupted) task")
    send.add_argument(
        "--json", action="store_true", help="print each result as one line of 1.0 ProtoJSON"
    )
    _add_connection_options(send)

    card = commands.add_parser("card", help="print an agent's card as JSON")
    card.add_argument("url", metavar="URL", help="the agent's base URL (or the card's URL)")
    card.add_argument(
        "--format",
        choices=("1.0", "0.3", "raw"),
        default="1.0",
        help="print the card as 1.0 ProtoJSON (default), in 0.3 form, or as served (raw)",
    )
    card.add_argument(
        "--transport",
        choices=("http", "grpc"),
        default="http",
        help="http: the well-known card; grpc: URL is a grpc://host:port endpoint and the "
        "card is its GetExtendedAgentCard answer",
    )
    _add_connection_options(card)

    serve = commands.add_parser(
        "serve",
        help="run an A2A server (JSON-RPC and HTTP+JSON, 1.0 and 0.3)",
        description="Serve an agent over HTTP until interrupted (Ctrl-C or SIGTERM).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (0: any)")
    serve.add_argument(
        "--store",
        default="sqlite:///a2a-tasks.db",
        metavar="URL",
        help="task store: sqlite:///path.db (default: sqlite:///a2a-tasks.db), "
        "postgresql://... or memory:",
    )
    serve.add_argument(
        "--base-path", default="", metavar="PATH", help="path prefix of the A2A endpoints"
    )
    serve.add_argument(
        "--agent",
        default="demo",
        metavar="AGENT",
        help="demo (default), conformance, or module:object naming an Agent",
    )
    serve.add_argument(
        "--auth-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="accept 'Authorization: Bearer TOKEN' (repeatable; none: no authentication)",
    )
    serve.add_argument("--public-url", metavar="URL", help="base URL advertised in the agent card")
    serve.add_argument(
        "--grpc-port",
        type=int,
        default=None,
        metavar="PORT",
        help="also serve gRPC (lf.a2a.v1) on this port, same agent and store (0: any; "
        "needs the grpc extra)",
    )
    serve.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
    serve.add_argument(
        "--retain-terminal",
        default="7d",
        metavar="AGE",
        help="delete finished tasks this old from an SQL store, in the background "
        "(default: 7d; e.g. 12h, 30d; off: keep forever)",
    )
    serve.add_argument(
        "--max-active-tasks-per-owner",
        type=int,
        default=1000,
        metavar="N",
        help="most unfinished tasks one caller may have; more get a -32603 / HTTP 429 error "
        "(default: 1000; 0: no limit)",
    )
    serve.add_argument(
        "--otel",
        action="store_true",
        help="trace and measure requests with the OpenTelemetry SDK, configured from the "
        "OTEL_* variables (e.g. OTEL_TRACES_EXPORTER=console); needs opentelemetry-sdk",
    )
    store = commands.add_parser("store", help="maintain a task store (prune old tasks)")
    store_commands = store.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    prune = store_commands.add_parser(
        "prune", help="delete finished tasks older than an age, in small batches"
    )
    prune.add_argument("url", metavar="URL", help="the store: sqlite:///path.db or postgresql://...")
    prune.add_argument(
        "--older-than", required=True, metavar="AGE", help="e.g. 7d, 12h, 30m (finished that long ago)"
    )
    commands.add_parser(
        "agent",
        help="LLM agent workspaces: init, doctor, print-config, bundle, run (see: agent --help)",
        add_help=False,
    )
    commands.add_parser(
        "conformance",
        help="check an A2A server against the specification (see: conformance --help)",
        add_help=False,
    )
    commands.add_parser(
        "conformance-client",
        help="check an A2A client: a scripted reference server judges its requests "
        "(see: conformance-client --help)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status (0 ok, 1 failure, 2 usage, 130 interrupted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["conformance"]:
        # The harness owns its options; hand it the rest of the line untouched.
        from ..conformance._cli import main as conformance_main

        return conformance_main(argv[1:], prog="a2a-models conformance")
    if argv[:1] == ["conformance-client"]:
        from ..conformance._client import main as client_main

        return client_main(argv[1:], prog="a2a-models conformance-client")
    if argv[:1] == ["agent"]:
        from ._agent import main as agent_main

        return agent_main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from ._serve import ServeOptions, run

        return run(
            ServeOptions(
                host=args.host,
                port=args.port,
                store=args.store,
                base_path=args.base_path,
                agent=args.agent,
                auth_tokens=tuple(args.auth_token),
                public_url=args.public_url,
                log_level=args.log_level,
                retain_terminal=args.retain_terminal,
                max_active_tasks_per_owner=args.max_active_tasks_per_owner or None,
                grpc_port=args.grpc_port,
                otel=args.otel,
            )
        )
    if args.command == "store":
        from ..stores._cli import prune

        return prune(args.url, args.older_than)
    try:
        if args.command == "send":
            return asyncio.run(_send(args, sys.stdout))
        return asyncio.run(_card(args, sys.stdout))
    except KeyboardInterrupt:
        return 130
    except _UsageError as exc:
        print(f"a2a-models {args.command}: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(
            f"a2a-models {args.command}: {exc}. "
            "Install the extra with: pip install 'a2a-models[http]'",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:
        from ..errors import A2AError

        if not isinstance(exc, A2AError | OSError):
            raise
        print(f"a2a-models {args.command}: error: {exc}", file=sys.stderr)
        return 1


# ---------------------------------------------------------------------------- send


async def _open(args: argparse.Namespace) -> BaseHTTPClient:
    from ..adapters.http._client import HTTPClient, RESTClient
    from ..adapters.http._discovery import CardResolutionError, connect

    headers = dict(args.header)
    transports = _TRANSPORTS[args.transport]
    if args.transport == "auto":
        from ..adapters.http._discovery import DEFAULT_BINDINGS

        transports = DEFAULT_BINDINGS  # gRPC only when its extra is installed
    version = "1.0" if args.version == "auto" else args.version
    if not args.no_card:
        prefer = ("1.0", "0.3") if args.version == "auto" else (args.version,)
        try:
            return await connect(
                args.url,
                prefer=prefer,
                transports=transports,
                headers=headers,
                timeout=args.timeout,
            )
        except CardResolutionError as exc:
            print(
                f"a2a-models: no agent card ({exc}); calling {args.url} directly",
                file=sys.stderr,
            )
    if args.transport == "grpc":
        from ..adapters.grpc import GrpcClient

        return GrpcClient(args.url, headers=headers, timeout=args.timeout)  # type: ignore[return-value]
    kind = RESTClient if args.transport == "rest" else HTTPClient
    return kind(args.url, version=version, headers=headers, timeout=args.timeout)


async def _send(args: argparse.Namespace, out: TextIO) -> int:
    from .. import models as m
    from ._format import describe, to_json

    message = m.Message.user(args.text, context_id=args.context_id, task_id=args.task_id)
    client = await _open(args)
    async with client:
        if args.stream:
            stream = client.send_streaming_message(message)
            try:
                async for item in stream:
                    line = to_json(item, m.StreamResponse) if args.json else describe(item)
                    print(line, file=out, flush=True)
            finally:
                await stream.aclose()
        else:
            result = await client.send_message(message)
            line = to_json(result, m.SendMessageResponse) if args.json else describe(result)
            print(line, file=out, flush=True)
    return 0


# ---------------------------------------------------------------------------- card


async def _card(args: argparse.Namespace, out: TextIO) -> int:
    import json

    import httpx

    from .. import codec
    from ..adapters.http._discovery import decode_card, resolve_card

    headers = dict(args.header)
    if getattr(args, "transport", "http") == "grpc":
        from ..adapters.grpc import GrpcClient

        async with GrpcClient(args.url, headers=headers, timeout=args.timeout) as client:
            extended = await client.get_extended_agent_card()
        dialect = "1.0" if args.format == "raw" else args.format
        shown = codec.to_wire(extended, dialect, lossy=dialect == "0.3")
        print(json.dumps(shown, indent=2, ensure_ascii=False), file=out)
        return 0
    if args.format == "raw":
        from ..adapters.http._discovery import CardResolutionError, _candidates

        value: Any = None
        async with httpx.AsyncClient() as http:
            for url in _candidates(args.url, None):
                try:
                    response = await http.get(url, headers=headers, timeout=args.timeout)
                except httpx.HTTPError as exc:
                    raise CardResolutionError(f"fetching {url} failed: {exc!r}", url) from exc
                if response.status_code in (404, 410):
                    continue
                if not response.is_success:
                    raise CardResolutionError(f"{url} answered {response.status_code}", url)
                decode_card(response.content)  # it must be a card
                value = response.json()
                break
            else:
                raise CardResolutionError(f"no agent card for {args.url}", args.url)
    else:
        card = await resolve_card(args.url, headers=headers, timeout=args.timeout)
        value = codec.to_wire(card, args.format, lossy=args.format == "0.3")
    print(json.dumps(value, indent=2, ensure_ascii=False), file=out)
    return 0
