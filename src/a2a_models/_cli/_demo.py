"""The built-in demo agent (``a2a-models serve --agent demo``).

* Any message is answered with one agent :class:`~a2a_models.Message`
  echoing its text (no task is created).
* The text ``task`` (the trigger, case-insensitive, surrounding spaces
  ignored) starts a multi-step task instead: three ``working`` status
  updates, an artifact sent in two chunks, then ``completed``. Stream it to
  watch the steps arrive (``a2a-models send URL task --stream``).
* Canceling the task stops it between steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Final

from ..models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    DataPart,
    FilePart,
)
from ..server import Agent, AgentEvent, RequestContext

__all__ = ["TASK_TRIGGER", "DemoAgent", "demo_card"]

#: The text that makes the demo agent run a task.
TASK_TRIGGER: Final = "task"


class DemoAgent(Agent):
    """Echoes messages; runs a short multi-step task for :data:`TASK_TRIGGER`.

    ``step_delay`` is the pause in seconds between the task's steps.
    """

    def __init__(self, step_delay: float = 0.5) -> None:
        self.step_delay = step_delay

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text.strip()
        if text.lower() != TASK_TRIGGER:
            yield context.reply(_echo(context))
            return
        steps = ("Planning", "Working", "Checking")
        for number, step in enumerate(steps[:2], 1):
            yield context.working(f"{step} (step {number} of {len(steps)})")
            await asyncio.sleep(self.step_delay)
        yield context.artifact("The demo task ", name="report", description="what the task made")
        await asyncio.sleep(self.step_delay)
        yield context.artifact("is done.", append=True, last_chunk=True, name="report")
        yield context.working(f"{steps[2]} (step 3 of {len(steps)})")
        await asyncio.sleep(self.step_delay)
        yield context.complete("Demo task complete")


def _echo(context: RequestContext) -> str:
    text = context.message.text
    others = [p for p in context.message.parts if isinstance(p, DataPart | FilePart)]
    if not text and not others:
        return "echo: (empty message)"
    reply = f"echo: {text}" if text else "echo:"
    if others:
        reply += f" (+{len(others)} non-text part{'s' if len(others) > 1 else ''})"
    return reply


def demo_card(
    url: str,
    *,
    bindings: Sequence[str] = ("JSONRPC",),
    versions: Sequence[str] = ("1.0", "0.3"),
    streaming: bool = True,
    push_notifications: bool = True,
) -> AgentCard:
    """The demo agent's card, with one interface per binding and version at ``url``."""
    return AgentCard(
        name="a2a-models demo agent",
        description=(
            f"Echoes what you send. Send {TASK_TRIGGER!r} to run a short multi-step task "
            "with status updates and an artifact."
        ),
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
            for version in versions
            for binding in bindings
        ],
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push_notifications),
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Answers with the text it was sent.",
                tags=["demo", "echo"],
                examples=["hello"],
            ),
            AgentSkill(
                id="task",
                name="Demo task",
                description="A multi-step task with status updates and an artifact.",
                tags=["demo", "task", "streaming"],
                examples=[TASK_TRIGGER],
            ),
        ],
    )


# ------------------------------------------------------------------------ a2a-models demo


def _prog() -> str:
    """How the user ran us, to print commands they can paste."""
    import os
    import shutil
    import sys

    argv0 = sys.argv[0] if sys.argv else ""
    if argv0.endswith("__main__.py"):
        return "python -m a2a_models"
    found = shutil.which("a2a-models")
    if argv0 and found and os.path.realpath(found) == os.path.realpath(argv0):
        return "a2a-models"
    return argv0 or "a2a-models"


#: Where ``a2a-models demo`` listens unless told otherwise (a free port if it is taken).
DEMO_PORT: Final = 8000


def _bindable(host: str, port: int) -> int | None:
    """``port`` if it can be bound on ``host`` now (0: a free one), else ``None``."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return None
        return int(sock.getsockname()[1])


async def run_demo(
    *, host: str = "127.0.0.1", port: int | None = None, store: str = "sqlite:///a2a-tasks.db"
) -> int:
    """``a2a-models demo``: serve the demo agent, send it :data:`TASK_TRIGGER`, keep serving.

    ``port`` ``None`` is :data:`DEMO_PORT`, or any free port when that one is
    taken. The answer is shown as ``send`` shows it (live on a terminal);
    then the commands to try next are printed and the server runs until
    Ctrl-C or SIGTERM. The exit status is the server's.
    """
    import sys

    from ..adapters.http import connect
    from ..models import Message
    from ._errors import report_error
    from ._render import Output
    from ._run import run_server
    from ._serve import ServeOptions

    if port is None:
        port = _bindable(host, DEMO_PORT)
        if port is None:
            port = _bindable(host, 0) or 0
            print(
                f"a2a-models demo: port {DEMO_PORT} is taken; using {port} instead",
                file=sys.stderr,
            )
    elif port == 0:
        port = _bindable(host, 0) or 0
    options = ServeOptions(host=host, port=port, store=store, log_level="warning")
    ready = asyncio.Event()
    server = asyncio.create_task(run_server(options, ready=ready))
    started = asyncio.create_task(ready.wait())
    await asyncio.wait({server, started}, return_when=asyncio.FIRST_COMPLETED)
    if server.done():  # it could not start (and said why)
        started.cancel()
        return int(server.result() or 0)
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::', '') else host}:{port}"
    prog = _prog()
    out = Output(sys.stdout)
    out.line(f"\n$ {prog} send {url} {TASK_TRIGGER}")
    try:
        async with await connect(url) as client:
            events = client.send_streaming_message(Message.user(TASK_TRIGGER))
            try:
                view = await out.watch(events)
            finally:
                await events.aclose()
    except Exception as exc:
        report_error("a2a-models demo", exc)
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        return 1
    task_id = view.task.id if view.task is not None else "TASK"
    where = (
        f" (tasks are kept in {store.removeprefix('sqlite:///')})"
        if store.startswith("sqlite:///")
        else ""
    )
    for line in (
        "",
        f"The demo agent is serving at {url}{where}. Try, in another terminal:",
        f"  {prog} send {url} hello",
        f"  {prog} send {url} {TASK_TRIGGER}",
        f"  {prog} list {url}",
        f"  {prog} get {url} {task_id}",
        f"  {prog} card {url}",
        "Stop it with Ctrl-C.",
    ):
        out.line(line)
    return int(await server or 0)
