"""What the client commands print: for people (rich on a terminal, plain text otherwise) or JSON.

* On a terminal (stdout is a tty and ``TERM`` is not ``dumb``) output is drawn
  with `rich <https://rich.readthedocs.io>`_: colours, tables, and a live view
  of a streamed task (a spinner while it works, artifacts growing in place).
  ``NO_COLOR`` is honoured.
* Otherwise it is plain text, no escape codes, nothing redrawn: what a pipe,
  a file or a CI log should get.
* ``--json`` prints the results as 1.0 ProtoJSON, one document per line
  (indented on a terminal).

Artifacts read as their producer meant them: the text chunks of an artifact
joined exactly (no separator is added between chunks), data parts as
indented JSON, files as name, media type and size. Token usage is read from
the task's metadata under :data:`USAGE_METADATA_KEY`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, TextIO, TypeVar

from .. import models as m
from ..observability import USAGE_METADATA_KEY

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.spinner import Spinner

__all__ = [
    "STATE_EXIT_STATUS",
    "USAGE_METADATA_KEY",
    "Output",
    "TaskView",
    "exit_status",
    "state_name",
    "usage_of",
]

_T = TypeVar("_T")

#: The exit status of ``send`` and ``follow`` per final task state (anything else: 0).
STATE_EXIT_STATUS: Final[Mapping[m.TaskState, int]] = {
    m.TaskState.FAILED: 3,
    m.TaskState.REJECTED: 4,
    m.TaskState.CANCELED: 5,
    m.TaskState.INPUT_REQUIRED: 6,
    m.TaskState.AUTH_REQUIRED: 7,
}

_STYLE: Final = {
    m.TaskState.SUBMITTED: ("…", "cyan"),
    m.TaskState.WORKING: ("…", "cyan"),
    m.TaskState.COMPLETED: ("✓", "bold green"),
    m.TaskState.FAILED: ("✗", "bold red"),
    m.TaskState.REJECTED: ("✗", "bold red"),
    m.TaskState.CANCELED: ("■", "yellow"),
    m.TaskState.INPUT_REQUIRED: ("?", "bold yellow"),
    m.TaskState.AUTH_REQUIRED: ("!", "bold yellow"),
    m.TaskState.UNSPECIFIED: ("·", "dim"),
}


#: How many screenfuls of each artifact text the live view draws (it shows one).
_LIVE_SCREENS: Final = 4


def state_name(state: m.TaskState) -> str:
    """``input-required`` for ``TaskState.INPUT_REQUIRED`` (the 0.3 wire name)."""
    return state.name.lower().replace("_", "-")


def exit_status(result: m.Task | m.Message | None) -> int:
    """The exit status for the outcome of ``send``/``follow`` (see :data:`STATE_EXIT_STATUS`)."""
    if isinstance(result, m.Task):
        return STATE_EXIT_STATUS.get(result.status.state, 0)
    return 0


def usage_of(metadata: Mapping[str, Any] | None) -> tuple[int | None, int | None] | None:
    """``(input, output)`` tokens from metadata carrying :data:`USAGE_METADATA_KEY`."""
    usage = (metadata or {}).get(USAGE_METADATA_KEY)
    if not isinstance(usage, Mapping):
        return None

    def count(key: str) -> int | None:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    tokens = count("inputTokens"), count("outputTokens")
    return None if tokens == (None, None) else tokens


def _usage_line(usage: tuple[int | None, int | None]) -> str:
    said = []
    if usage[0] is not None:
        said.append(f"{usage[0]:,} input")
    if usage[1] is not None:
        said.append(f"{usage[1]:,} output")
    return "tokens: " + ", ".join(said)


def human_size(size: int) -> str:
    """``1.5 kB`` for 1500 (decimal units, as file managers show)."""
    if size < 1000:
        return f"{size} byte{'s' if size != 1 else ''}"
    value = float(size)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def file_label(part: m.FilePart) -> str:
    """``report.pdf (application/pdf, 12.3 kB)``; a file by reference shows its URL."""
    name = part.filename or (part.url.rstrip("/").rsplit("/", 1)[-1] if part.url else "") or "file"
    about = [part.media_type or "unknown type"]
    if part.raw is not None:
        about.append(human_size(len(part.raw)))
    if part.url:
        about.append(part.url)
    return f"{name} ({', '.join(about)})"


def blocks(parts: Iterable[m.Part]) -> list[m.Part]:
    """The parts as read: consecutive text parts become one (joined exactly, chunk by chunk).

    Each run of text parts is joined once, at its end: joining chunk by chunk
    copied the text read so far for every chunk, so an artifact streamed in N
    chunks cost O(N²) bytes each time it was drawn.
    """
    out: list[m.Part] = []
    run: list[m.TextPart] = []  # the text parts of the run being read

    def end_run() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            out.append(m.TextPart("".join(p.text for p in run), media_type=run[0].media_type))
        run.clear()

    for part in parts:
        if isinstance(part, m.TextPart):
            if run and part.media_type != run[0].media_type:
                end_run()
            run.append(part)
        else:
            end_run()
            out.append(part)
    end_run()
    return out


def plain_parts(parts: Iterable[m.Part]) -> str:
    """Parts as plain text: text as is, data as indented JSON, files as a label."""
    out: list[str] = []
    for part in blocks(parts):
        if isinstance(part, m.TextPart):
            out.append(part.text)
        elif isinstance(part, m.DataPart):
            out.append(json.dumps(part.data, indent=2, ensure_ascii=False))
        elif isinstance(part, m.FilePart):
            out.append(f"[file] {file_label(part)}")
    return "\n".join(out)


def _one_line(parts: Iterable[m.Part]) -> str:
    return " ".join(plain_parts(parts).split())


def status_text(status: m.TaskStatus) -> str:
    """The status message on one line ("" when there is none)."""
    return _one_line(status.message.parts) if status.message is not None else ""


def _artifact_title(artifact: m.Artifact) -> str:
    title = artifact.name or artifact.artifact_id
    return f"{title}: {artifact.description}" if artifact.description else title


# ------------------------------------------------------------------------ the task so far


class TaskView:
    """What a stream (or a single answer) has said so far: the task, or a direct reply.

    Events are applied with the server's own :func:`~a2a_models.server.apply_event`
    (so chunks merge exactly as they are stored); an event it refuses (a peer
    that breaks the rules) is applied leniently rather than stopping the view.

    Each event costs the same however many came before: the view keeps no
    history (nothing it draws shows it), and an appended chunk goes to a list
    of the artifact's new parts, joined to its earlier ones only when the whole
    task is asked for (:attr:`task`). Rebuilding the task for each event copied
    its history and the artifact's parts every time, O(N²) over a stream of N.
    """

    def __init__(self) -> None:
        # The task without history, and the parts appended to each of its artifacts
        # since: one attribute, rebound whole, for the live view's drawing thread.
        self._now: tuple[m.Task | None, dict[str, list[m.Part]]] = (None, {})
        self.reply: m.Message | None = None
        self.usage: tuple[int | None, int | None] | None = None
        #: The last event seen (for progress lines).
        self.last: object = None

    @property
    def task(self) -> m.Task | None:
        """The task so far, without its history (its artifacts' parts joined: O(parts))."""
        import attrs

        task, appended = self._now
        if task is None or not appended:
            return task
        from ..server import replace_task

        artifacts = tuple(
            attrs.evolve(a, parts=(*a.parts, *appended[a.artifact_id]))
            if a.artifact_id in appended
            else a
            for a in task.artifacts
        )
        return replace_task(task, artifacts=artifacts)

    @property
    def status(self) -> m.TaskStatus | None:
        """The task's status so far, at no cost (``None`` before any task)."""
        task = self._now[0]
        return None if task is None else task.status

    @property
    def task_id(self) -> str | None:
        task = self._now[0]
        return None if task is None else task.id

    @property
    def result(self) -> m.Task | m.Message | None:
        task = self.task
        return task if task is not None else self.reply

    @property
    def active(self) -> bool:
        status = self.status
        return status is not None and status.state.is_active

    def apply(self, item: object) -> None:
        from ..errors import A2AError
        from ..server import apply_event

        self.last = item
        task, appended = self._now
        if isinstance(item, m.Message) and (task is None or item.task_id not in (None, task.id)):
            self.reply = item
            return
        if _chunk_of(task, item, appended):
            assert isinstance(item, m.TaskArtifactUpdateEvent)
            appended.setdefault(item.artifact.artifact_id, []).extend(item.artifact.parts)
            return
        # A status update or message leaves the artifacts (and the chunks appended) be.
        same_artifacts = isinstance(item, m.TaskStatusUpdateEvent | m.Message)
        if not same_artifacts:
            task, appended = self.task, {}
        if isinstance(item, m.Task) and (task is None or item.id != task.id):
            task = item
        elif task is not None and isinstance(
            item, m.Task | m.Message | m.TaskStatusUpdateEvent | m.TaskArtifactUpdateEvent
        ):
            try:
                task = apply_event(task, item)
            except A2AError:
                task = _lenient(task, item)
        elif isinstance(item, m.TaskStatusUpdateEvent | m.TaskArtifactUpdateEvent):
            # An update before any Task (a peer that skips it): start from the update.
            task = _lenient(
                m.Task(
                    id=item.task_id,
                    context_id=item.context_id,
                    status=m.TaskStatus(state=m.TaskState.SUBMITTED),
                ),
                item,
            )
        if task is not None and task.history:
            from ..server import replace_task

            task = replace_task(task, history=())
        self._now = (task, appended)
        metadata = item.metadata if isinstance(item, m.TaskStatusUpdateEvent) else None
        usage = usage_of(metadata) or (usage_of(task.metadata) if task else None)
        if usage is not None:
            self.usage = usage


def _chunk_of(task: m.Task | None, item: object, appended: Mapping[str, list[m.Part]]) -> bool:
    """Whether ``item`` only appends parts to an artifact of ``task``, as
    :func:`~a2a_models.server.apply_event` would without complaint, and changes
    nothing else (no name, description or metadata; not the last chunk, whose text
    parts apply_event joins)."""
    if not (
        isinstance(item, m.TaskArtifactUpdateEvent)
        and item.append
        and not item.last_chunk
        and task is not None
        and not task.status.state.is_terminal
        and item.task_id == task.id
        and item.context_id in (None, task.context_id)
    ):
        return False
    new = item.artifact
    if new.name is not None or new.description is not None or new.metadata or new.extensions:
        return False
    return new.artifact_id in appended or any(
        a.artifact_id == new.artifact_id for a in task.artifacts
    )


def _lenient(task: m.Task, item: object) -> m.Task:
    import attrs

    if isinstance(item, m.TaskStatusUpdateEvent):
        return attrs.evolve(task, status=item.status)
    if isinstance(item, m.Task):
        return attrs.evolve(item, history=task.history)
    if isinstance(item, m.TaskArtifactUpdateEvent):
        new = item.artifact
        artifacts = list(task.artifacts)
        for i, old in enumerate(artifacts):
            if old.artifact_id == new.artifact_id:
                parts = (*old.parts, *new.parts) if item.append else new.parts
                artifacts[i] = attrs.evolve(old, parts=parts)
                break
        else:
            artifacts.append(new)
        return attrs.evolve(task, artifacts=artifacts)
    return task


# ------------------------------------------------------------------------ output


def _wants_rich(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


class Output:
    """Where and how a command prints: ``json`` (ProtoJSON lines), rich, or plain text."""

    def __init__(self, stream: TextIO, *, json_output: bool = False) -> None:
        self.stream = stream
        self.json = json_output
        self.tty = _wants_rich(stream)
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False)
        return self._console

    @property
    def rich(self) -> bool:
        """True when drawing with rich (a terminal, and rich installed)."""
        if not self.tty:
            return False
        try:
            import rich  # noqa: F401
        except ImportError:  # pragma: no cover - rich ships with the http extra
            self.tty = False
        return self.tty

    def line(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    # -------------------------------------------------------------- JSON

    def emit_json(self, value: Any) -> None:
        """One JSON document: indented on a terminal, else on one line."""
        if self.tty:
            self.line(json.dumps(value, indent=2, ensure_ascii=False))
        else:
            self.line(json.dumps(value, ensure_ascii=False, separators=(",", ":")))

    def emit_wire(self, item: Any, as_type: Any = None) -> None:
        """``item`` as 1.0 ProtoJSON (wrapped as ``as_type``, e.g. ``StreamResponse``)."""
        from .. import codec

        self.emit_json(codec.to_wire(item, "1.0", as_type=as_type))

    def show(self, item: _T, render: Callable[[_T], None]) -> None:
        """``item`` as 1.0 ProtoJSON under ``--json``, else drawn for people by ``render``."""
        if self.json:
            self.emit_wire(item)
        else:
            render(item)

    # -------------------------------------------------------------- results

    def result(self, view: TaskView) -> None:
        """The final picture of a task (or the reply), as people read it."""
        task = view.task
        if view.reply is not None and task is None:
            self.message(view.reply)
        elif task is not None:
            if self.rich:
                self.console.print(_rich_task(task, view.usage))
            else:
                self.line(_plain_task_header(task))
                self._plain_task_body(task, view.usage)

    def message(self, message: m.Message) -> None:
        if self.rich:
            self.console.print(_rich_parts(message.parts))
        else:
            self.line(plain_parts(message.parts))

    def task(self, task: m.Task) -> None:
        view = TaskView()
        view.apply(task)
        self.result(view)

    def _plain_task_body(self, task: m.Task, usage: tuple[int | None, int | None] | None) -> None:
        if usage is not None:
            self.line(_usage_line(usage))
        for artifact in task.artifacts:
            self.line()
            self.line(f"── {_artifact_title(artifact)} ──")
            self.line(plain_parts(artifact.parts))

    async def watch(self, events: AsyncIterator[Any]) -> TaskView:
        """Show a stream as it happens; the final view.

        Rich: a live view redrawn in place, then the final picture. Plain: one
        line per state or status change as it happens, then the artifacts.
        JSON: each event as a ``StreamResponse`` line.
        """
        view = TaskView()
        if self.json:
            async for item in events:
                view.apply(item)
                self.emit_wire(item, m.StreamResponse)
            return view
        if self.rich:
            return await self._watch_live(events, view)
        shown: tuple[m.TaskState, str] | None = None
        async for item in events:
            view.apply(item)
            status = view.status  # not view.task: that joins every chunk so far
            if status is None:
                continue
            now = (status.state, status_text(status))
            if shown is None:
                self.line(f"task {view.task_id}  {state_name(status.state)}")
                if now[1]:
                    self.line(f"{state_name(now[0])}  {now[1]}")
            elif now != shown:
                self.line(f"{state_name(now[0])}  {now[1]}".rstrip())
            shown = now
        task = view.task
        if task is not None:
            self._plain_task_body(task, view.usage)
        elif view.reply is not None:
            self.message(view.reply)
        return view

    async def _watch_live(self, events: AsyncIterator[Any], view: TaskView) -> TaskView:
        from rich.live import Live
        from rich.spinner import Spinner

        spinner = Spinner("dots", text="waiting for the agent…", style="cyan")

        def draw() -> RenderableType:
            # Called by Live when it refreshes (12 times a second, from its own
            # thread), not per event: drawing costs the whole task, so drawing it
            # for each chunk of an artifact streamed in N chunks cost O(N²).
            task = view.task  # made afresh, from what apply() last left
            if task is None:
                return spinner
            # The view is cut to the screen's height: text past a few screenfuls
            # (Markdown's markup is not drawn) is not drawn either, so that a
            # refresh does not cost the whole of a long artifact.
            width, height = self.console.size
            active = task.status.state.is_active
            return _rich_task(
                task,
                view.usage,
                spinner=spinner if active else None,
                limit=_LIVE_SCREENS * width * height,
            )

        with Live(
            console=self.console,
            get_renderable=draw,
            transient=True,
            refresh_per_second=12,
            vertical_overflow="ellipsis",
        ):
            async for item in events:
                view.apply(item)
        self.result(view)
        return view

    async def waiting(self, call: Any) -> Any:
        """Await ``call`` under a spinner (rich only)."""
        if not self.rich:
            return await call
        with self.console.status("waiting for the agent…", spinner="dots"):
            return await call

    # -------------------------------------------------------------- other things

    def tasks(self, page: m.ListTasksResponse) -> None:
        rows = [
            (
                task.id,
                state_name(task.status.state),
                _timestamp(task.status.timestamp),
                task.context_id or "",
                status_text(task.status),
            )
            for task in page.tasks
        ]
        headers = ("TASK", "STATE", "UPDATED", "CONTEXT", "STATUS")
        more = f"more: --page-token {page.next_page_token}" if page.next_page_token else ""
        if self.rich:
            from rich.table import Table

            table = Table(box=None, header_style="bold", pad_edge=False)
            for name in headers:
                table.add_column(name, overflow="fold" if name == "TASK" else "ellipsis")
            for row in rows:
                style = _STYLE.get(m.TaskState[row[1].upper().replace("-", "_")], ("", ""))[1]
                table.add_row(row[0], f"[{style}]{row[1]}[/]", *map(_escape, row[2:]))
            if rows:
                self.console.print(table)
            else:
                self.console.print("[dim]no tasks[/]")
            if more:
                self.console.print(f"[dim]{_escape(more)}[/]")
            return
        if rows:
            widths = [max(len(r[i]) for r in (headers, *rows)) for i in range(len(headers) - 1)]
            for row in (headers, *rows):
                cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
                self.line("  ".join([*cells, row[-1]]).rstrip())
        else:
            self.line("no tasks")
        if more:
            self.line(more)

    def push_configs(self, configs: Iterable[m.TaskPushNotificationConfig]) -> None:
        configs = list(configs)
        if not configs:
            self.line("no push notification configs")
            return
        for config in configs:
            self.push_config(config)

    def push_config(self, config: m.TaskPushNotificationConfig) -> None:
        auth = config.authentication
        fields = [
            ("id", config.id or ""),
            ("task", config.task_id or ""),
            ("url", config.url),
            ("token", "(set)" if config.token else ""),
            (
                "auth",
                auth.scheme + (" (credentials set)" if auth.credentials else "") if auth else "",
            ),
        ]
        if self.rich:
            self.console.print(
                "  ".join(f"[dim]{k}[/] {_escape(v)}" for k, v in fields if v), soft_wrap=True
            )
        else:
            self.line("  ".join(f"{k} {v}" for k, v in fields if v))

    def card(self, card: m.AgentCard) -> None:
        if self.rich:
            self.console.print(_rich_card(card))
        else:
            for text in _plain_card(card):
                self.line(text)


def _timestamp(value: Any) -> str:
    if value is None:
        return ""
    return str(value.isoformat(timespec="seconds")).replace("+00:00", "Z")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _plain_task_header(task: m.Task) -> str:
    text = status_text(task.status)
    header = f"task {task.id}  {state_name(task.status.state)}"
    return f"{header}  {text}" if text else header


# ------------------------------------------------------------------------ rich drawing


def _rich_parts(parts: Iterable[m.Part], *, limit: int | None = None) -> RenderableType:
    """The parts as drawn; ``limit``: draw at most that many characters of each text."""
    from rich.console import Group
    from rich.json import JSON
    from rich.markdown import Markdown
    from rich.text import Text

    drawn: list[RenderableType] = []
    for part in blocks(parts):
        if isinstance(part, m.TextPart):
            text = part.text if limit is None else part.text[:limit]
            if part.media_type == "text/markdown":
                drawn.append(Markdown(text))
            else:
                drawn.append(Text(text))
        elif isinstance(part, m.DataPart):
            drawn.append(JSON.from_data(part.data, indent=2, ensure_ascii=False))
        elif isinstance(part, m.FilePart):
            drawn.append(Text.assemble(("file ", "dim"), (file_label(part), "bold")))
    return Group(*drawn)


def _rich_task(
    task: m.Task,
    usage: tuple[int | None, int | None] | None,
    *,
    spinner: Spinner | None = None,
    limit: int | None = None,
) -> RenderableType:
    """The task as drawn: state and status, ids, artifacts, usage; ``spinner`` while live;
    ``limit``: at most that many characters of each artifact text."""
    from rich.console import Group
    from rich.rule import Rule
    from rich.text import Text

    state = task.status.state
    symbol, style = _STYLE.get(state, ("·", ""))
    text = status_text(task.status)
    headline = Text.assemble((state_name(state), style), ("  " + text) if text else "")
    lines: list[RenderableType] = []
    if spinner is not None:
        spinner.update(text=headline, style=style)
        lines.append(spinner)
    else:
        lines.append(Text.assemble((symbol + " ", style), headline))
    ids = f"  task {task.id}" + (f"  context {task.context_id}" if task.context_id else "")
    lines.append(Text(ids, style="dim"))
    for artifact in task.artifacts:
        lines.append(Rule(Text(_artifact_title(artifact), style="bold"), align="left"))
        lines.append(_rich_parts(artifact.parts, limit=limit))
    if usage is not None:
        lines.append(Text(_usage_line(usage), style="dim"))
    return Group(*lines)


def _scheme_text(scheme: m.SecurityScheme) -> str:
    if isinstance(scheme, m.HTTPAuthSecurityScheme):
        text = f"HTTP {scheme.scheme}" + (
            f" ({scheme.bearer_format})" if scheme.bearer_format else ""
        )
    elif isinstance(scheme, m.APIKeySecurityScheme):
        text = f"API key in {scheme.location} {scheme.name!r}"
    elif isinstance(scheme, m.OAuth2SecurityScheme):
        flows = [f.name for f in attrs_fields(m.OAuthFlows) if getattr(scheme.flows, f.name)]
        text = "OAuth 2.0" + (
            f" ({', '.join(f.replace('_', ' ') for f in flows)})" if flows else ""
        )
    elif isinstance(scheme, m.OpenIdConnectSecurityScheme):
        text = f"OpenID Connect {scheme.open_id_connect_url}"
    elif isinstance(scheme, m.MutualTlsSecurityScheme):
        text = "mutual TLS"
    else:  # pragma: no cover - every scheme of the spec is named above
        text = type(scheme).__name__
    return f"{text}: {scheme.description}" if scheme.description else text


def attrs_fields(cls: type) -> tuple[Any, ...]:
    import attrs

    return tuple(attrs.fields(cls))


def _security_lines(card: m.AgentCard) -> list[str]:
    lines = [f"{name}: {_scheme_text(scheme)}" for name, scheme in card.security_schemes.items()]
    for requirement in card.security_requirements:
        needed = " and ".join(
            name + (f" (scopes {', '.join(scopes)})" if scopes else "")
            for name, scopes in requirement.schemes.items()
        )
        lines.append(f"requires: {needed or 'nothing (anonymous allowed)'}")
    return lines


def _capabilities(card: m.AgentCard) -> list[str]:
    caps = card.capabilities
    said = []
    if caps.streaming:
        said.append("streaming")
    if caps.push_notifications:
        said.append("push notifications")
    if caps.extended_agent_card:
        said.append("extended card")
    said.extend(f"extension {e.uri}" for e in caps.extensions if e.uri)
    return said


def _plain_card(card: m.AgentCard) -> list[str]:
    out = [f"{card.name}  v{card.version}", card.description]
    if card.provider is not None:
        out.append(f"by {card.provider.organization} ({card.provider.url})")
    out += ["", "interfaces:"]
    out += [
        f"  {i.protocol_binding:<10} {i.protocol_version:<4} {i.url}"
        + (f"  tenant {i.tenant}" if i.tenant else "")
        for i in card.supported_interfaces
    ]
    caps = _capabilities(card)
    out.append(f"capabilities: {', '.join(caps) if caps else 'none'}")
    out.append(
        f"input: {', '.join(card.default_input_modes) or '-'}   "
        f"output: {', '.join(card.default_output_modes) or '-'}"
    )
    out += ["", "skills:" if card.skills else "skills: none"]
    for skill in card.skills:
        out.append(f"  {skill.id}  {skill.name}: {skill.description}")
        if skill.tags:
            out.append(f"      tags: {', '.join(skill.tags)}")
        if skill.examples:
            out.append(f"      e.g.: {' | '.join(skill.examples)}")
    security = _security_lines(card)
    out += ["", "security:" if security else "security: none (no authentication)"]
    out += [f"  {line}" for line in security]
    if card.signatures:
        out.append(f"signed: {len(card.signatures)} signature(s)")
    return out


def _rich_card(card: m.AgentCard) -> RenderableType:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[RenderableType] = [
        Text.assemble((card.name, "bold"), ("  v" + card.version, "dim")),
        Text(card.description),
    ]
    if card.provider is not None:
        parts.append(Text(f"by {card.provider.organization} ({card.provider.url})", style="dim"))
    interfaces = Table(title=None, box=None, show_header=True, header_style="bold", pad_edge=False)
    for name in ("BINDING", "VERSION", "URL"):
        interfaces.add_column(name)
    for i in card.supported_interfaces:
        url = i.url + (f"  (tenant {i.tenant})" if i.tenant else "")
        interfaces.add_row(i.protocol_binding, i.protocol_version, url)
    caps = _capabilities(card)
    parts += [
        Text(""),
        interfaces,
        Text(""),
        Text.assemble(("capabilities ", "dim"), ", ".join(caps) if caps else "none"),
    ]
    if card.skills:
        skills = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
        for name in ("SKILL", "NAME", "DESCRIPTION", "EXAMPLES"):
            skills.add_column(name, overflow="fold")
        for skill in card.skills:
            skills.add_row(skill.id, skill.name, skill.description, " | ".join(skill.examples))
        parts += [Text(""), skills]
    security = _security_lines(card)
    parts += [
        Text(""),
        Text.assemble(
            ("security ", "dim"), "; ".join(security) if security else "none (no authentication)"
        ),
    ]
    return Group(*parts)
