"""The client subcommands: ``send``, ``get``, ``list``, ``cancel``, ``follow``, ``push``, ``card``.

Each is an ``async`` function of the parsed arguments and an
:class:`~a2a_models._cli._render.Output`, returning the exit status. The
HTTP client (the ``http`` extra) is imported here, never at start-up.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import models as m
from ._errors import UsageError
from ._render import Output, TaskView, exit_status

if TYPE_CHECKING:
    from ..adapters.grpc import GrpcClient
    from ..adapters.http import BaseHTTPClient

__all__ = ["COMMANDS"]

TRANSPORTS = {
    "auto": ("JSONRPC", "HTTP+JSON", "GRPC"),
    "jsonrpc": ("JSONRPC",),
    "rest": ("HTTP+JSON",),
    "grpc": ("GRPC",),
}


# ---------------------------------------------------------------------------- connecting

#: How ``send``/``follow`` resume a broken stream: 6 attempts in a row, 0.25 s to 8 s
#: apart, about 16 s in all - long enough for a server to be restarted (the library's
#: 3 attempts give up within 2 s, before a restarted ``serve`` answers).
STREAM_RECONNECT_ATTEMPTS = 6

#: Seconds a stream may stay silent before ``send``/``follow`` take its connection for
#: dead and resume it: four of the keep-alive comments servers send every 15 s (this
#: package's, sse-starlette's). Without a bound a stalled or half-open connection hung
#: the command for ever.
STREAM_IDLE_TIMEOUT = 60.0


def tls_context(args: argparse.Namespace) -> Any:
    """The client TLS context for ``--cert/--key/--cacert`` (``None``: the defaults)."""
    cert, key, ca = args.cert, args.key, args.cacert
    if not (cert or ca):
        return None
    from ..adapters.http import client_tls_context

    try:
        return client_tls_context(cert, key, ca=ca)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise UsageError(f"cannot load the TLS files: {reason}") from None


async def open_client(args: argparse.Namespace) -> BaseHTTPClient | GrpcClient:
    """A client for ``args.url``: through its agent card, else the URL as the endpoint;
    its streams are resumed after :data:`STREAM_IDLE_TIMEOUT` seconds of silence (over
    gRPC: without the server's answer, or when a keep-alive ping goes unanswered), up
    to :data:`STREAM_RECONNECT_ATTEMPTS` times in a row."""
    import attrs

    from ..adapters.http import BaseHTTPClient
    from ..client import Reconnect

    client = await _open_client(args)
    if isinstance(client, BaseHTTPClient):
        client.timeouts = attrs.evolve(client.timeouts, stream_read=STREAM_IDLE_TIMEOUT)
    else:  # bounds the wait for the server's answer; then keep-alive pings watch it
        client.idle_timeout = STREAM_IDLE_TIMEOUT
    client.reconnect = Reconnect(attempts=STREAM_RECONNECT_ATTEMPTS)
    return client


async def _open_client(args: argparse.Namespace) -> BaseHTTPClient | GrpcClient:
    from ..adapters.http import CardResolutionError, HTTPClient, RESTClient, connect

    headers = dict(args.header)
    grpc_options = _grpc_keepalive(args)
    transports = TRANSPORTS[args.transport]
    if args.transport == "auto":
        from ..adapters.http import DEFAULT_BINDINGS

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
                tls=tls_context(args),
                **grpc_options,
            )
        except CardResolutionError as exc:
            if not str(exc).startswith("no agent card"):
                raise  # the server is down or broken: calling it directly would not help
            print(
                f"a2a-models: no agent card found ({exc}); calling {args.url} directly",
                file=sys.stderr,
            )
    if args.transport == "grpc":
        from ..adapters.grpc import GrpcClient

        return GrpcClient(
            args.url, version=version, headers=headers, timeout=args.timeout, **grpc_options
        )
    kind = RESTClient if args.transport == "rest" else HTTPClient
    return kind(
        args.url, version=version, headers=headers, timeout=args.timeout, tls=tls_context(args)
    )


def _grpc_keepalive(args: argparse.Namespace) -> dict[str, Any]:
    """``GrpcClient`` keep-alive options for ``--keepalive`` (none: the defaults)."""
    seconds = getattr(args, "keepalive", None)
    if seconds is None:
        return {}
    from ..adapters.grpc import KEEPALIVE_TIMEOUT

    return {"keepalive_time": seconds, "keepalive_timeout": min(seconds, KEEPALIVE_TIMEOUT)}


# ---------------------------------------------------------------------------- send


def _message(args: argparse.Namespace) -> m.Message:
    text = sys.stdin.read() if args.text == "-" else args.text
    parts: list[m.Part | str] = [text] if text else []
    for value in args.data:
        try:
            parts.append(m.Part.data(json.loads(value)))
        except json.JSONDecodeError as exc:
            raise UsageError(f"--data {value!r} is not JSON: {exc}") from None
    for name in args.file:
        path = Path(name)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"--file {name!r}: {exc.strerror or exc}") from None
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        parts.append(m.Part.file(raw=raw, filename=path.name, media_type=media_type))
    if not parts:
        raise UsageError("nothing to send: TEXT is empty and there is no --data or --file")
    return m.Message.user(*parts, context_id=args.context_id, task_id=args.task_id)


def _history_to_read(out: Output, shown: int | None = None) -> int | None:
    """The ``historyLength`` to ask for a task that ``out`` prints: ``shown`` messages
    when a ``--history`` says so, else all for ``--json`` (the task as the agent keeps
    it) and none for people. Reading a history nobody sees made a command's cost grow
    with the conversation (9.5 MB for a turn at 50,000 messages, not 0.5 kB).
    """
    if shown is not None:
        return shown
    return None if out.json else 0


async def send(args: argparse.Namespace, out: Output) -> int:
    message = _message(args)
    configuration = m.SendMessageConfiguration(
        return_immediately=args.no_wait, history_length=_history_to_read(out)
    )
    async with await open_client(args) as client:
        stream = args.stream
        if stream is None:
            # People get the live view when the agent streams; scripts (--json) get one answer.
            card = client.card
            stream = (
                not out.json
                and not args.no_wait
                and card is not None
                and card.capabilities.streaming is True
            )
        if stream:
            events = client.send_streaming_message(message, configuration=configuration)
            try:
                view = await out.watch(events)
            finally:
                await events.aclose()
            return exit_status(view.result)
        result = await out.waiting(client.send_message(message, configuration=configuration))
    if out.json:
        out.emit_wire(result, m.SendMessageResponse)
    else:
        view = TaskView()
        view.apply(result)
        out.result(view)
    return 0 if args.no_wait else exit_status(result)


# ---------------------------------------------------------------------------- tasks


async def get(args: argparse.Namespace, out: Output) -> int:
    async with await open_client(args) as client:
        task = await client.get_task(
            args.task_id, history_length=_history_to_read(out, args.history)
        )
    out.show(task, out.task)
    if args.history and not out.json:
        _history(out, task)
    return 0


def _history(out: Output, task: m.Task) -> None:
    from ._render import plain_parts

    out.line()
    out.line(f"history ({len(task.history)} message{'s' if len(task.history) != 1 else ''}):")
    for message in task.history:
        role = "user" if message.role is m.Role.USER else "agent"
        text = plain_parts(message.parts).replace("\n", "\n    ")
        out.line(f"  {role}: {text}")


def _state(value: str) -> m.TaskState:
    try:
        return m.TaskState[value.upper().replace("-", "_")]
    except KeyError:
        raise UsageError(f"--state {value!r}: not a task state") from None


async def list_tasks(args: argparse.Namespace, out: Output) -> int:
    request = m.ListTasksRequest(
        context_id=args.context,
        status=_state(args.state) if args.state else None,
        page_size=args.limit,
        page_token=args.page_token,
        history_length=0,
        include_artifacts=False,
    )
    async with await open_client(args) as client:
        page = await client.list_tasks(request)
    out.show(page, out.tasks)
    return 0


async def cancel(args: argparse.Namespace, out: Output) -> int:
    async with await open_client(args) as client:
        task = await client.cancel_task(args.task_id)
    out.show(task, out.task)
    return 0


async def follow(args: argparse.Namespace, out: Output) -> int:
    from ..client import ENDED_TASK_REFUSALS, ended_task

    async with await open_client(args) as client:
        events = client.subscribe(args.task_id)
        try:
            view = await out.watch(events)
        except ENDED_TASK_REFUSALS as refusal:
            # The task already ended (spec: no subscribing to a terminal task): show it.
            history = _history_to_read(out)
            task = await ended_task(
                refusal, args.task_id, lambda tid: client.get_task(tid, history_length=history)
            )
            view = TaskView()
            view.apply(task)
            if out.json:
                out.emit_wire(task, m.StreamResponse)
            else:
                out.result(view)
        finally:
            await events.aclose()
    return exit_status(view.result)


# ---------------------------------------------------------------------------- push


async def push(args: argparse.Namespace, out: Output) -> int:
    async with await open_client(args) as client:
        if args.push_command == "set":
            auth = None
            if args.auth_scheme:
                auth = m.AuthenticationInfo(
                    scheme=args.auth_scheme, credentials=args.auth_credentials
                )
            elif args.auth_credentials:
                raise UsageError("--auth-credentials needs --auth-scheme")
            config = m.TaskPushNotificationConfig(
                url=args.webhook,
                id=args.id,
                task_id=args.task_id,
                token=args.token,
                authentication=auth,
            )
            stored = await client.create_push_config(config)
            return _show_push(out, stored)
        if args.push_command == "get":
            return _show_push(out, await client.get_push_config(args.task_id, args.config_id))
        if args.push_command == "list":
            page = await client.list_push_configs(args.task_id)
            out.show(page, lambda page: out.push_configs(page.configs))
            return 0
        await client.delete_push_config(args.task_id, args.config_id)
    if out.json:
        out.emit_json({})
    else:
        out.line(f"deleted push notification config {args.config_id} of task {args.task_id}")
    return 0


def _show_push(out: Output, config: m.TaskPushNotificationConfig) -> int:
    out.show(config, out.push_config)
    return 0


# ---------------------------------------------------------------------------- card


async def card(args: argparse.Namespace, out: Output) -> int:
    from .. import codec

    fmt = args.format or "1.0"
    if args.transport == "grpc":
        from ..adapters.grpc import GrpcClient

        headers = dict(args.header)
        async with GrpcClient(args.url, headers=headers, timeout=args.timeout) as client:
            agent_card = await client.get_extended_agent_card()
        fmt = "1.0" if fmt == "raw" else fmt  # no "as served" JSON over gRPC
    elif fmt == "raw":
        out.emit_json(await _raw_card(args))
        return 0
    else:
        agent_card, _ = await _fetch_card(args)
    if out.json or args.format:
        out.emit_json(codec.to_wire(agent_card, fmt, lossy=fmt == "0.3"))
    else:
        out.card(agent_card)
    return 0


async def _raw_card(args: argparse.Namespace) -> Any:
    """The card's JSON exactly as served (checked to be a card, and its signatures if asked)."""
    from .. import codec

    _, raw = await _fetch_card(args)
    return codec.loads(raw)


async def _fetch_card(args: argparse.Namespace) -> tuple[m.AgentCard, bytes]:
    """The card at ``args.url`` and its bytes; ``--timeout`` (else 30 s) bounds each fetch."""
    import httpx

    from ..adapters.http import CARD_TIMEOUT, fetch_card

    tls = tls_context(args)
    async with httpx.AsyncClient(verify=tls if tls is not None else True) as http:
        return await fetch_card(
            args.url,
            headers=dict(args.header),
            timeout=CARD_TIMEOUT if args.timeout is None else args.timeout,
            verifier=await _card_verifier(args),
            http_client=http,
        )


async def _card_verifier(args: argparse.Namespace) -> Any:
    """The card signature verifier for ``--verify-with`` (``None`` without it)."""
    if not args.verify_with:
        return None
    from ..signing import CardVerifier, fetch_jwks

    try:
        keys = await fetch_jwks(args.verify_with, timeout=args.timeout or 10.0)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return CardVerifier(keys, mode=args.verify or "require")


COMMANDS = {
    "send": send,
    "get": get,
    "list": list_tasks,
    "cancel": cancel,
    "follow": follow,
    "push": push,
    "card": card,
}
