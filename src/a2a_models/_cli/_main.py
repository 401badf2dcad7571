"""Argument parsing and dispatch of the ``a2a-models`` command.

Only ``argparse`` and ``sys`` are imported at start-up, so ``a2a-models --help``
stays fast and works without the ``http`` extra; each subcommand imports what
it needs (the HTTP client, rich) when it runs. There is one builder function
per subcommand. Failures are one line on stderr (``--debug`` adds the
traceback); the exit statuses are listed in :mod:`a2a_models._cli._errors`.
"""

from __future__ import annotations

import argparse
import sys

from .._argtypes import (
    header,
    non_negative_number,
    port_number,
    positive_number,
    whole_number,
)

TYPE_CHECKING = False  # typing and collections cost start-up time; mypy knows the name
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]

_VERSIONS = ("auto", "1.0", "0.3")
_STATES = (
    "submitted",
    "working",
    "completed",
    "failed",
    "canceled",
    "rejected",
    "input-required",
    "auth-required",
)


class _Ignored:
    """Takes any call and ignores it: the options of a subcommand that is not being run."""

    def __getattr__(self, name: str) -> object:
        return self._ignore

    def _ignore(self, *args: object, **kwargs: object) -> _Ignored:
        return self


class _HelpOnly:
    """Registers a subcommand's name and help (for ``--help``), not its options.

    Building every subcommand's options costs start-up time that only the
    command being run needs.
    """

    def __init__(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        self._commands = commands

    def add_parser(self, name: str, **kwargs: object) -> _Ignored:
        self._commands.add_parser(name, help=kwargs.get("help"))  # type: ignore[arg-type]
        return _Ignored()


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print results as 1.0 ProtoJSON, one document per line (for scripts)",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of a failure")


def _add_store_wait_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store-wait",
        type=non_negative_number,
        default=0.0,
        metavar="SECONDS",
        help="keep trying to open the store this long at start (a database that starts "
        "with this one); default 0: a store that cannot be opened stops it at once",
    )


def _add_header_option(parser: argparse.ArgumentParser, about: str) -> None:
    parser.add_argument(
        "--header",
        "-H",
        action="append",
        type=header,
        default=[],
        metavar="NAME:VALUE",
        help=about,
    )


def _add_otel_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--otel",
        action="store_true",
        help=f"{what} with the OpenTelemetry SDK, configured from the OTEL_* variables "
        "(e.g. OTEL_TRACES_EXPORTER=console); needs opentelemetry-sdk",
    )


def _add_tls_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cert", metavar="FILE", help="client certificate (PEM) for mutual TLS")
    parser.add_argument("--key", metavar="FILE", help="the client certificate's private key")
    parser.add_argument("--cacert", metavar="FILE", help="trust this CA for the server (PEM)")


def _add_connection_options(parser: argparse.ArgumentParser, *, url: bool = True) -> None:
    if url:
        parser.add_argument(
            "url",
            metavar="URL",
            help="the agent's base URL (its card says where to call) or, with --no-card, "
            "the endpoint",
        )
    _add_header_option(
        parser,
        "add an HTTP header to every request (repeatable), e.g. 'Authorization: Bearer T'",
    )
    parser.add_argument(
        "--timeout",
        type=positive_number,
        default=None,
        metavar="SECONDS",
        help="per-call time limit",
    )
    _add_tls_options(parser)
    parser.add_argument(
        "--version",
        choices=_VERSIONS,
        default="auto",
        help="protocol version (auto: the agent card's preferred one)",
    )
    parser.add_argument(
        "--transport",
        choices=("auto", "jsonrpc", "rest", "grpc"),
        default="auto",
        help="binding: JSON-RPC, HTTP+JSON (rest), gRPC (grpc: needs the grpc extra), "
        "or whatever the card prefers (auto)",
    )
    parser.add_argument(
        "--keepalive",
        type=positive_number,
        default=None,
        metavar="SECONDS",
        help="gRPC: ping the server after SECONDS of silence and take the connection for "
        "dead when it does not answer (default: 60; the server must allow pings this often)",
    )
    parser.add_argument(
        "--no-card", action="store_true", help="do not read the agent card; URL is the endpoint"
    )
    _add_otel_option(parser, "trace the calls")
    _add_output_options(parser)


def _add_send(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    send = commands.add_parser(
        "send",
        help="send a message to an agent and show the answer",
        description=(
            "Send TEXT to the agent at URL and show the answer. On a terminal a task is "
            "shown live (status, artifacts growing) when the agent streams. Exit status: "
            "0 completed (or a direct reply), 3 failed, 4 rejected, 5 canceled, "
            "6 input-required, 7 auth-required, 1 error."
        ),
    )
    _add_connection_options(send)
    send.add_argument("text", metavar="TEXT", help="the message text ('-': read it from stdin)")
    send.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stream the answer (default: on a terminal when the agent streams; with --json "
        "one StreamResponse per line)",
    )
    send.add_argument(
        "--no-wait",
        action="store_true",
        help="return as soon as the task exists (then: get, follow or cancel it)",
    )
    send.add_argument("--context-id", help="continue this context")
    send.add_argument("--task-id", help="continue this (interrupted) task")
    send.add_argument(
        "--data", action="append", default=[], metavar="JSON", help="add a data part (repeatable)"
    )
    send.add_argument(
        "--file", action="append", default=[], metavar="PATH", help="attach a file (repeatable)"
    )


def _add_get(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    get = commands.add_parser("get", help="show a task: state, artifacts, token usage")
    _add_connection_options(get)
    get.add_argument("task_id", metavar="TASK", help="the task's id")
    get.add_argument(
        "--history",
        type=whole_number(0),
        default=None,
        metavar="N",
        help="also show the last N messages",
    )


def _add_list(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tasks = commands.add_parser("list", help="list tasks, newest first (a table)")
    _add_connection_options(tasks)
    tasks.add_argument("--context", metavar="ID", help="only the tasks of this context")
    tasks.add_argument("--state", choices=_STATES, help="only tasks in this state")
    tasks.add_argument("--limit", type=whole_number(1), default=None, metavar="N", help="at most N")
    tasks.add_argument("--page-token", metavar="TOKEN", help="the next page of an earlier list")


def _add_cancel(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cancel = commands.add_parser("cancel", help="cancel a task")
    _add_connection_options(cancel)
    cancel.add_argument("task_id", metavar="TASK", help="the task's id")


def _add_follow(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    follow = commands.add_parser(
        "follow",
        help="watch a task until it ends (exit status as for send)",
        description="Subscribe to TASK and show its updates until it ends.",
    )
    _add_connection_options(follow)
    follow.add_argument("task_id", metavar="TASK", help="the task's id")


def _add_push(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    push = commands.add_parser(
        "push", help="a task's push notification configs: set, get, list, delete"
    )
    actions = push.add_subparsers(dest="push_command", metavar="ACTION", required=True)
    put = actions.add_parser("set", help="send the task's updates to WEBHOOK")
    _add_connection_options(put)
    put.add_argument("task_id", metavar="TASK", help="the task's id")
    put.add_argument("webhook", metavar="WEBHOOK", help="the URL the agent will POST updates to")
    put.add_argument("--id", help="the config's id (default: the agent chooses)")
    put.add_argument("--token", help="a token the agent sends back with every notification")
    put.add_argument(
        "--auth-scheme", metavar="SCHEME", help="how the agent authenticates to WEBHOOK (Bearer)"
    )
    put.add_argument("--auth-credentials", metavar="CREDENTIALS", help="its credentials")
    for name, about in (("get", "show one config"), ("delete", "delete one config")):
        action = actions.add_parser(name, help=about)
        _add_connection_options(action)
        action.add_argument("task_id", metavar="TASK", help="the task's id")
        action.add_argument("config_id", metavar="CONFIG", help="the config's id")
    listing = actions.add_parser("list", help="list the task's configs")
    _add_connection_options(listing)
    listing.add_argument("task_id", metavar="TASK", help="the task's id")


def _add_demo(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser(
        "demo",
        help="serve the demo agent, send it a task, show the answer, keep serving",
        description="Start the demo agent (as 'serve' does), send it 'task' and show the "
        "answer live, print the commands to try next, and serve until Ctrl-C.",
    )
    demo.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    demo.add_argument(
        "--port",
        type=port_number,
        default=None,
        help="port to listen on (default: 8000, or a free one if 8000 is taken; 0: any)",
    )
    demo.add_argument(
        "--store",
        default="sqlite:///a2a-tasks.db",
        metavar="URL",
        help="task store (default: sqlite:///a2a-tasks.db)",
    )


def _add_card(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    card = commands.add_parser(
        "card",
        help="show an agent's card: name, interfaces, skills, security",
        description="Show the agent card at URL (its base URL or the card's URL).",
    )
    card.add_argument("url", metavar="URL", help="the agent's base URL (or the card's URL)")
    card.add_argument(
        "--format",
        choices=("1.0", "0.3", "raw"),
        default=None,
        help="print JSON: 1.0 ProtoJSON (what --json prints), 0.3 form, or as served (raw)",
    )
    card.add_argument(
        "--verify-with",
        metavar="JWKS_URL|FILE",
        help="check the card's signatures against these trusted keys (fails if unsigned)",
    )
    card.add_argument(
        "--verify",
        choices=("require", "verify-if-present", "ignore"),
        default=None,
        help="what an unsigned card means with --verify-with (default: require)",
    )
    card.add_argument(
        "--transport",
        choices=("http", "grpc"),
        default="http",
        help="http: the well-known card; grpc: URL is a grpc://host:port endpoint and the "
        "card is its GetExtendedAgentCard answer",
    )
    _add_header_option(card, "add an HTTP header to the request (repeatable)")
    card.add_argument(
        "--timeout", type=positive_number, default=None, metavar="SECONDS", help="time limit"
    )
    _add_tls_options(card)
    _add_output_options(card)


def _add_worker(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser(
        "worker",
        help="run an agent on the turns queued by 'serve --front-end' (PostgreSQL)",
        description="Pull turns from the queue in the PostgreSQL store and run the agent on "
        "them, until interrupted (SIGTERM: stop pulling, finish or hand back the turns).",
    )
    worker.add_argument(
        "--store",
        default="",
        metavar="URL",
        help="the front ends' postgresql://... store (default: $A2A_STORE)",
    )
    worker.add_argument(
        "--agent",
        default="demo",
        metavar="AGENT",
        help="demo (default), conformance, or module:object naming an Agent (as for serve)",
    )
    worker.add_argument(
        "--concurrency",
        type=whole_number(1),
        default=16,
        metavar="N",
        help="most turns this worker runs at once (default: 16)",
    )
    _add_store_wait_option(worker)
    worker.add_argument(
        "--lease-ttl",
        type=positive_number,
        default=15.0,
        metavar="SECONDS",
        help="a running turn's lease lasts this long unless renewed; the tasks of a worker "
        "that died are failed (or re-run) within about that (default: 15)",
    )
    worker.add_argument(
        "--grace",
        type=non_negative_number,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, let running turns finish this long before handing them back "
        "(default: 30)",
    )
    worker.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), default="info"
    )
    _add_otel_option(worker, "trace and measure turns")
    # The worker delivers the push notifications of the turns it runs: the front
    # ends' --push-allow and --push-rate must be given to it too.
    from ._security import add_push_delivery_options

    add_push_delivery_options(worker)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``a2a-models`` argument parser.

    With ``only``, the client subcommands other than ``only`` get their name and
    help but no options (what ``main`` does: it runs one command).
    """
    parser = argparse.ArgumentParser(
        prog="a2a-models",
        description="Talk to A2A agents (protocol 1.0 and 0.3), show their cards, serve one.",
        epilog="Run 'a2a-models COMMAND --help' for a command's options. New here? a2a-models demo",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of a failure (any command)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    client = {
        "demo": _add_demo,
        "send": _add_send,
        "get": _add_get,
        "list": _add_list,
        "cancel": _add_cancel,
        "follow": _add_follow,
        "push": _add_push,
        "card": _add_card,
    }
    for name, add in client.items():
        add(commands if only is None or only == name else _HelpOnly(commands))  # type: ignore[arg-type]

    serve = commands.add_parser(
        "serve",
        help="run an A2A server (JSON-RPC and HTTP+JSON, 1.0 and 0.3)",
        description="Serve an agent over HTTP until interrupted (Ctrl-C or SIGTERM).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    serve.add_argument("--port", type=port_number, default=8000, help="port to listen on (0: any)")
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
        help="accept 'Authorization: Bearer TOKEN' (repeatable; deprecated: visible in ps, "
        "use --auth-token-file or A2A_AUTH_TOKENS)",
    )
    serve.add_argument("--public-url", metavar="URL", help="base URL advertised in the agent card")
    serve.add_argument(
        "--grpc-port",
        type=port_number,
        default=None,
        metavar="PORT",
        help="also serve gRPC (1.0: lf.a2a.v1, 0.3: a2a.v1, and grpc.health.v1) on this "
        "port, same agent and store (0: any; "
        "needs the grpc extra)",
    )
    serve.add_argument(
        "--grpc-keepalive",
        type=positive_number,
        default=None,
        metavar="SECONDS",
        help="gRPC: ping a client after SECONDS of silence and drop it when it does not "
        "answer (default: 30; clients may ping twice as often)",
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
        type=whole_number(0),
        default=1000,
        metavar="N",
        help="most unfinished tasks one caller may have; more get a -32603 / HTTP 429 error "
        "(default: 1000; 0: no limit)",
    )
    _add_store_wait_option(serve)
    serve.add_argument(
        "--lease-ttl",
        type=positive_number,
        default=15.0,
        metavar="SECONDS",
        help="SQL stores: a running task's lease lasts this long unless renewed; the tasks "
        "of a process that died are failed (or re-run) within about that (default: 15)",
    )
    serve.add_argument(
        "--front-end",
        action="store_true",
        help="PostgreSQL store only: run no agent here; queue each turn for "
        "'a2a-models worker' processes (--agent still names the agent, for its card)",
    )
    _add_otel_option(serve, "trace and measure requests")
    _add_worker(commands)
    store = commands.add_parser("store", help="maintain a task store (prune old tasks)")
    store_commands = store.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    prune = store_commands.add_parser(
        "prune", help="delete finished tasks older than an age, in small batches"
    )
    prune.add_argument(
        "url", metavar="URL", help="the store: sqlite:///path.db or postgresql://..."
    )
    prune.add_argument(
        "--older-than",
        required=True,
        metavar="AGE",
        help="e.g. 7d, 12h, 30m (finished that long ago)",
    )
    from ._security import add_security_arguments

    add_security_arguments(serve)
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


#: Commands that parse their own options: only a ``--debug`` before them is ours.
_OWN_OPTIONS = ("conformance", "conformance-client")


def _take_debug(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` without ``--debug`` (any command takes it, before ``--``); whether it was there."""
    end = argv.index("--") if "--" in argv else len(argv)
    first = next((i for i, arg in enumerate(argv) if arg != "--debug"), len(argv))
    if first < len(argv) and argv[first] in _OWN_OPTIONS:
        end = min(end, first)
    found = "--debug" in argv[:end]
    return [a for i, a in enumerate(argv) if i >= end or a != "--debug"], found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status (see :mod:`a2a_models._cli._errors`)."""
    from . import _errors

    args, _errors.debug = _take_debug(list(sys.argv[1:] if argv is None else argv))
    command = next((a for a in args if not a.startswith("-")), "")
    return _errors.guarded(f"a2a-models {command}".rstrip(), lambda: _run(args))


def _run(argv: list[str]) -> int:
    if argv[:1] == ["conformance"]:
        # The harness owns its options; hand it the rest of the line untouched.
        from ..conformance import main as conformance_main

        return conformance_main(argv[1:], prog="a2a-models conformance")
    if argv[:1] == ["conformance-client"]:
        from ..conformance import client_main

        return client_main(argv[1:], prog="a2a-models conformance-client")
    if argv[:1] == ["agent"]:
        from ._agent import main as agent_main

        return agent_main(argv[1:])
    args = build_parser(only=argv[0] if argv else "").parse_args(argv)
    if args.command == "serve":
        from ._security import security_from_args, store_from_env, warn
        from ._serve import ServeOptions, run

        try:
            security, tokens, warnings = security_from_args(args)
        except ValueError as exc:
            print(f"a2a-models serve: {exc}", file=sys.stderr)
            return 2
        warn(warnings)
        return run(
            ServeOptions(
                host=args.host,
                port=args.port,
                store=store_from_env(args.store, "sqlite:///a2a-tasks.db"),
                base_path=args.base_path,
                agent=args.agent,
                auth_tokens=tokens,
                security=security,
                public_url=args.public_url,
                log_level=args.log_level,
                retain_terminal=args.retain_terminal,
                max_active_tasks_per_owner=args.max_active_tasks_per_owner or None,
                lease_ttl=args.lease_ttl,
                store_wait=args.store_wait,
                front_end=args.front_end,
                grpc_port=args.grpc_port,
                grpc_keepalive=args.grpc_keepalive,
                otel=args.otel,
            )
        )
    if args.command == "worker":
        from ._worker import WorkerOptions, run_worker

        return run_worker(
            WorkerOptions(
                store=args.store,
                agent=args.agent,
                concurrency=args.concurrency,
                lease_ttl=args.lease_ttl,
                grace=args.grace,
                store_wait=args.store_wait,
                log_level=args.log_level,
                otel=args.otel,
                push_allowlist=tuple(args.push_allow),
                push_rate=args.push_rate,
            )
        )
    if args.command == "store":
        from ._store import prune

        return prune(args.url, args.older_than)
    import asyncio

    if args.command == "demo":
        from ._demo import run_demo

        return asyncio.run(run_demo(host=args.host, port=args.port, store=args.store))
    if getattr(args, "otel", False):
        from ._otel import start_otel

        if not start_otel(args.command):
            return 2
    from ._commands import COMMANDS
    from ._render import Output

    out = Output(sys.stdout, json_output=args.json)
    return asyncio.run(COMMANDS[args.command](args, out))
