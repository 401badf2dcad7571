"""Stages 2 and 3 of the LLM request handler: one task, the tool loop, streamed artifacts.

:class:`TaskRun` runs a skill for one task turn and yields A2A events:

* ``working``; then the tool loop: the model is streamed with the skill's
  tools plus the artifact tool and the ask-user tool, its tool calls are
  executed (in order) and answered, until it stops calling tools, up to the
  step limit (then the task fails, saying so);
* an artifact tool call is streamed while the model writes it: each chunk of
  the ``content`` argument becomes one artifact-update event (``append`` from
  the second on, ``last_chunk`` on the last), each emitted exactly once;
* short ``working`` status updates every ``status_interval`` seconds while
  the model or a tool works (recent texts are not repeated), until an
  artifact starts;
* stage 3: without an artifact, one is forced (tool choice = the artifact
  tool), streamed the same way; then ``completed``.

A Task or Message returned by a tool becomes the result; ``ask_user`` ends
the turn with ``input-required``; a :class:`ModelError` fails the task with
the reason. Cancellation (the engine cancelling the task that iterates, or
:meth:`LLMAgent.cancel`) aborts the model stream at once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ... import observability
from ..._state import TaskState
from ...models import JSONObject, Message, Part, Task, TextPart, new_id
from ...server import AgentEvent, RequestContext
from ...tools import Tool, ToolContext, ToolInputError, ToolOutput, ToolResult
from ._errors import ModelError
from ._model import (
    AssistantMessage,
    ChatMessage,
    Finish,
    ForceTool,
    Model,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallError,
    ToolCallStart,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from ._partial_json import StringFieldDecoder
from ._skills import ARTIFACT_TOOL, ASK_USER_TOOL, LLMSkill
from ._workflows import WORKFLOW_SINK, Workflow, WorkflowArtifact, WorkflowEvent, WorkflowStatus

if TYPE_CHECKING:
    from ._agent import LLMAgent

__all__ = [
    "DEFAULT_TOOL_RESULT_LIMIT",
    "KIND_METADATA_KEY",
    "SKILL_METADATA_KEY",
    "Activity",
    "TaskRun",
    "artifact_tool_spec",
    "ask_user_tool_spec",
    "default_status_text",
    "render_parts",
    "tool_text_for_model",
]

log = logging.getLogger("a2a_models.adapters.llm")

#: Characters of one tool result the model is given by default (``LLMAgent``'s
#: ``tool_result_limit``, the workspace setting ``toolResultLimit``): about 25,000
#: tokens, a fraction of any current context window.
DEFAULT_TOOL_RESULT_LIMIT = 100_000


def tool_text_for_model(text: str, limit: int | None) -> str:
    """``text`` (a tool's result as the model reads it) cut to its first ``limit``
    characters, with a note saying how much was left out; unchanged if shorter."""
    if limit is None or len(text) <= limit:
        return text
    return (
        f"{text[:limit]}\n\n[The tool result was cut short for you: only its first "
        f"{limit:,} of {len(text):,} characters are shown; the other {len(text) - limit:,} "
        "were left out. Ask the tool for less (a narrower query, a page of the result) if "
        "you need what is missing.]"
    )


#: Metadata of the agent messages this handler writes: the skill being fulfilled ...
SKILL_METADATA_KEY = "a2a-models/skill"
#: ... and what the message is: ``progress`` (a periodic status), ``question``
#: (ask-user), ``answer`` (the final text) or ``workflow`` (a workflow's status).
KIND_METADATA_KEY = "a2a-models/kind"


def artifact_tool_spec() -> ToolSpec:
    """The artifact tool: ``name`` (a short title) and ``content`` (streamed)."""
    return ToolSpec(
        ARTIFACT_TOOL,
        "Deliver a result to the user as an artifact. `content` is the complete result "
        "(Markdown or plain text) and is shown to the user as you write it; `name` is a "
        "short title. Call it once per result.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "a short title of the artifact"},
                "content": {"type": "string", "description": "the full content of the result"},
            },
            "required": ["content"],
        },
    )


def ask_user_tool_spec() -> ToolSpec:
    """The ask-user tool: ``question``; the task becomes input-required."""
    return ToolSpec(
        ASK_USER_TOOL,
        "Ask the user for information you need and cannot get otherwise. The work pauses "
        "until the user answers.",
        {
            "type": "object",
            "properties": {"question": {"type": "string", "description": "the question"}},
            "required": ["question"],
        },
    )


# ------------------------------------------------------------------------------- status


@attrs.frozen(slots=True)
class Activity:
    """What the task is doing when a periodic status update is due.

    ``kind``: ``thinking`` (waiting for the model), ``writing`` (the model
    writes text; ``text`` is what it wrote so far), ``calling`` (the model
    writes a call of ``tool``), ``running`` (``tool`` runs).
    """

    kind: Literal["thinking", "writing", "calling", "running"]
    skill: str
    tool: str | None = None
    text: str = ""


def _humanize(name: str) -> str:
    return re.sub(r"[_\-]+", " ", name).strip()


def _snippet(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    tail = flat[-limit:]
    cut = tail.find(" ")
    return "..." + (tail[cut + 1 :] if 0 <= cut < limit // 2 else tail)


def default_status_text(activity: Activity) -> str | None:
    """A short status text for ``activity`` (``None``: say nothing)."""
    if activity.kind == "writing" and activity.text.strip():
        return f"Thinking: {_snippet(activity.text)}"
    if activity.kind == "calling" and activity.tool:
        return f"Preparing {_humanize(activity.tool)}"
    if activity.kind == "running" and activity.tool:
        return f"Running {_humanize(activity.tool)}"
    return f"Working on {activity.skill}"


# ------------------------------------------------------------------------------ helpers


class _Tick:
    __slots__ = ()


_TICK = _Tick()


class _Interrupted(Exception):
    """The pump was cancelled from outside (a cancel request)."""


class _TimeLimit(Exception):
    """The task's time limit passed."""


class _Stop(Exception):
    """End the turn (the events that end it were yielded)."""


@attrs.frozen(slots=True)
class _WorkflowEvents:
    """The A2A events of one event of a running workflow."""

    events: list[AgentEvent]


@attrs.define(slots=True)
class _ToolDone:
    output: ToolOutput | None
    error: str | None = None


class _ArtifactWriter:
    """Turns the argument chunks of one artifact-tool call into artifact events.

    The latest decoded piece is held back until the next one arrives (or the
    call ends), so that the last event carries ``last_chunk`` and every piece
    is sent exactly once.
    """

    def __init__(self, context: RequestContext, media_type: str | None) -> None:
        self.context = context
        self.media_type = media_type
        self.decoder = StringFieldDecoder("content")
        self.artifact_id = new_id()
        self.pending: str | None = None
        self.sent: list[str] = []
        self.closed = False

    def _event(self, text: str, *, last: bool, name: str | None = None) -> AgentEvent:
        event = self.context.artifact(
            TextPart(text, media_type=self.media_type),
            append=bool(self.sent),
            last_chunk=last,
            artifact_id=self.artifact_id,
            name=name,
        )
        self.sent.append(text)
        return event

    def feed(self, chunk: str) -> list[AgentEvent]:
        new = self.decoder.feed(chunk)
        if not new:
            return []
        out = []
        if self.pending is not None:
            out.append(self._event(self.pending, last=False))
        self.pending = new
        return out

    def finish(self, arguments: Mapping[str, Any] | None) -> list[AgentEvent]:
        if self.closed:
            return []
        self.closed = True
        pending = self.pending or ""
        if arguments is not None:
            content = arguments.get("content")
            streamed = "".join(self.sent) + pending
            if isinstance(content, str) and content != streamed:
                if content.startswith(streamed):
                    pending += content[len(streamed) :]
                else:  # pragma: no cover - the decoder follows json.loads
                    log.warning("artifact content decoded incrementally differs from the final one")
        name = arguments.get("name") if arguments is not None else None
        return [self._event(pending, last=True, name=name if isinstance(name, str) else None)]

    @property
    def text(self) -> str:
        return "".join(self.sent)


# ------------------------------------------------------------------------------ the run


class TaskRun:
    """One turn of one task: stage 2 (the tool loop) and stage 3 (the forced artifact)."""

    def __init__(
        self,
        agent: LLMAgent,
        context: RequestContext,
        skill: LLMSkill,
        *,
        tools: Sequence[Tool],
        model: Model,
        messages: Sequence[ChatMessage],
        skill_input: JSONObject,
    ) -> None:
        self.agent = agent
        self.context = context
        self.skill = skill
        self.tools = {t.name: t for t in tools}
        self.model = model
        self.messages: list[ChatMessage] = list(messages)
        self.tool_context = ToolContext(
            skill_id=skill.id, skill_input=skill_input, custom=agent.custom_context
        )
        guard = skill.guardrails
        self.max_steps = int(guard.max_steps) if guard.max_steps else agent.max_steps
        self.max_tool_calls = guard.max_tool_calls
        loop = asyncio.get_running_loop()
        self.deadline = loop.time() + guard.timeout if guard.timeout else None
        self.specs = tuple(
            ToolSpec(t.name, t.description, t.input_schema) for t in self.tools.values()
        )
        self.artifact_spec = artifact_tool_spec()
        self.ask_spec = ask_user_tool_spec()
        # progress
        self.steps = 0
        self.tool_calls = 0
        self.artifacts = 0
        self.artifact_started = False
        self.activity = Activity("thinking", skill.name)
        #: The text the model wrote so far in the current model call (the
        #: ``writing`` activity's text, joined only when a status update is due).
        self.written: list[str] = []
        self.recent: collections.deque[str] = collections.deque(maxlen=agent.status_memory)
        self.next_status: float | None = None
        self.workflow_artifacts: dict[tuple[str, str], str] = {}
        self.last_workflow_artifact: dict[str, str] = {}
        # tokens the model calls of this turn used (None: never reported)
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None

    # ---------------------------------------------------------------- event helpers

    def _metadata(self, kind: str) -> JSONObject:
        return {SKILL_METADATA_KEY: self.skill.id, KIND_METADATA_KEY: kind}

    def _message(self, text: str, kind: str) -> Message:
        return self.context.agent_message(text, metadata=self._metadata(kind))

    def _status(self, state: TaskState, text: str | None, kind: str) -> AgentEvent:
        message = self._message(text, kind) if text else None
        return self._status_event(state, message)

    def _status_event(self, state: TaskState, message: Message | None) -> AgentEvent:
        """A status update; one ending the turn carries the task's usage, and stores it
        in the task's metadata."""
        usage = self._usage() if state != TaskState.WORKING else None
        if usage is not None:
            self.context.update_task_metadata(usage)
        return self.context.status(state, message=message, metadata=usage)

    def _count(self, finish: Finish) -> None:
        if finish.usage.input_tokens is not None:
            self.input_tokens = (self.input_tokens or 0) + finish.usage.input_tokens
        if finish.usage.output_tokens is not None:
            self.output_tokens = (self.output_tokens or 0) + finish.usage.output_tokens

    def _usage(self) -> JSONObject | None:
        """The task's token usage with this turn's, under ``USAGE_METADATA_KEY``
        (``None``: this turn reported none)."""
        turn: dict[str, int] = {}
        if self.input_tokens is not None:
            turn["inputTokens"] = self.input_tokens
        if self.output_tokens is not None:
            turn["outputTokens"] = self.output_tokens
        if not turn:
            return None
        key = observability.USAGE_METADATA_KEY
        task = self.context.task
        previous = (task.metadata or {}).get(key) if task is not None else None
        return {key: observability.add_usage(previous, turn)}

    def _fail(self, text: str) -> AgentEvent:
        return self._status(TaskState.FAILED, text, "error")

    def _reset_timer(self) -> None:
        interval = self.agent.status_interval
        if interval is not None:
            self.next_status = asyncio.get_running_loop().time() + interval

    def _progress(self) -> AgentEvent | None:
        """The periodic status update due now (``None``: nothing new to say)."""
        self._reset_timer()
        if self.artifact_started:
            return None
        activity = self.activity
        if activity.kind == "writing":
            activity = attrs.evolve(activity, text="".join(self.written))
        text = self.agent.status_text(activity)
        if not text or text in self.recent:
            return None
        self.recent.append(text)
        return self._status(TaskState.WORKING, text, "progress")

    # ---------------------------------------------------------------- the pump

    async def _pump(
        self, producer: Callable[[Callable[[Any], None]], Awaitable[None]]
    ) -> AsyncGenerator[Any, None]:
        """Run ``producer(emit)`` in a task of its own; yield what it emits, and
        :data:`_TICK` whenever a periodic status update is due.

        The producer task is registered with the agent so that a cancel request
        aborts it (closing the model stream) at once; leaving early cancels it too.
        """
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def emit(item: Any) -> None:
            queue.put_nowait(("item", item))

        async def main() -> None:
            try:
                await producer(emit)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                queue.put_nowait(("error", exc))
                return
            queue.put_nowait(("end", None))

        loop = asyncio.get_running_loop()
        task = asyncio.create_task(main(), name=f"a2a-llm-{self.context.task_id}")
        self.agent._register(self.context.task_id, task)
        getter: asyncio.Future[tuple[str, Any]] | None = None
        try:
            while True:
                if self.context.cancel_requested:
                    raise _Interrupted
                if getter is None:
                    getter = asyncio.ensure_future(queue.get())
                now = loop.time()
                timeouts = []
                if self.next_status is not None and not self.artifact_started:
                    timeouts.append(max(0.0, self.next_status - now))
                if self.deadline is not None:
                    if now >= self.deadline:
                        raise _TimeLimit
                    timeouts.append(self.deadline - now)
                waits: set[asyncio.Future[Any]] = {getter} if task.done() else {getter, task}
                done, _ = await asyncio.wait(
                    waits,
                    timeout=min(timeouts) if timeouts else None,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if getter in done:
                    kind, value = getter.result()
                    getter = None
                    if kind == "end":
                        return
                    if kind == "error":
                        raise value
                    yield value
                elif task in done:
                    if task.cancelled():
                        raise _Interrupted
                elif not done and self.next_status is not None:
                    if loop.time() >= self.next_status:
                        yield _TICK
        finally:
            for pending in (getter, task):
                if pending is not None and not pending.done():
                    pending.cancel()
            await asyncio.gather(
                *(f for f in (getter, task) if f is not None), return_exceptions=True
            )
            self.agent._unregister(self.context.task_id, task)

    # ---------------------------------------------------------------- the turn

    async def run(self) -> AsyncGenerator[AgentEvent, None]:
        """The events of this turn, ending with a terminal or interrupted status."""
        opening = f"Working on {self.skill.name}"
        self.recent.append(opening)
        yield self._status(TaskState.WORKING, opening, "progress")
        self._reset_timer()
        try:
            async with contextlib.aclosing(self._loop()) as events:
                async for event in events:
                    yield event
        except _Stop:
            return
        except _Interrupted:
            return  # canceled: the engine marks the task; nothing more from us
        except _TimeLimit:
            timeout = self.skill.guardrails.timeout
            yield self._fail(f"The task exceeded its time limit of {timeout:g} s.")
        except ModelError as exc:
            yield self._fail(f"The model failed: {exc}")

    async def _loop(self) -> AsyncGenerator[AgentEvent, None]:
        final_text = ""
        while True:
            if self.steps >= self.max_steps:
                yield self._fail(
                    f"Stopped: the step limit of {self.max_steps} model calls was reached "
                    "before the task was finished."
                )
                raise _Stop
            self.steps += 1
            request = ModelRequest(
                tuple(self.messages),
                tools=(*self.specs, self.artifact_spec, self.ask_spec),
                tool_choice="auto",
            )
            text, calls, finish = "", [], None
            async with contextlib.aclosing(self._model_turn(request)) as items:
                async for item in items:
                    if isinstance(item, _TurnResult):
                        text, calls, finish = item.text, item.calls, item.finish
                    else:
                        yield item
            if finish is not None and finish.reason == "error":
                yield self._fail(
                    f"The model failed: {finish.message or 'the turn ended abnormally'}"
                )
                raise _Stop
            self.messages.append(AssistantMessage(text, tuple(c.call for c in calls)))
            if not calls:
                final_text = text
                break
            asked = next((c for c in calls if c.name == ASK_USER_TOOL), None)
            if asked is not None:
                question = ""
                if isinstance(asked, ToolCallEnd):
                    question = str(asked.arguments.get("question") or "")
                question = question or text or "Could you tell me more?"
                yield self._status(TaskState.INPUT_REQUIRED, question, "question")
                raise _Stop
            produced = False
            only_artifacts = True
            for call in calls:
                if call.name == ARTIFACT_TOOL:
                    produced = produced or isinstance(call, ToolCallEnd)
                    answer = (
                        "The artifact was delivered to the user."
                        if isinstance(call, ToolCallEnd)
                        else f"Error: {call.message}. The part that could be read was delivered."
                    )
                    self.messages.append(
                        ToolMessage(call.id, answer, is_error=isinstance(call, ToolCallError))
                    )
                    continue
                only_artifacts = False
                executed = observability.traced_tool_call(
                    self._execute(call), name=call.name, call_id=call.id
                )
                async with contextlib.aclosing(executed) as events:
                    async for event in events:
                        yield event
            if produced and only_artifacts and self.agent.finish_on_artifact:
                final_text = text
                break
        if not self.artifacts:
            async for event in self._forced_artifact(final_text):
                yield event
        yield self._status(TaskState.COMPLETED, final_text.strip() or None, "answer")

    # ---------------------------------------------------------------- model turns

    async def _model_turn(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
        """Stream one model call: artifact chunks and status updates as they come,
        then one :class:`_TurnResult`."""
        writers: dict[str, _ArtifactWriter] = {}
        text: list[str] = []
        calls: dict[int, ToolCallEnd | ToolCallError] = {}
        finish: Finish | None = None
        self.activity = Activity("thinking", self.skill.name)
        self.written = text

        async def produce(emit: Callable[[Any], None]) -> None:
            async with self.model.stream(request) as stream:
                async for event in stream:
                    emit(event)

        async with contextlib.aclosing(self._pump(produce)) as items:
            async for item in items:
                for out in self._on_model_event(item, writers, text, calls):
                    yield out
                if isinstance(item, Finish):
                    finish = item
                    self._count(item)
        yield _TurnResult("".join(text), [calls[i] for i in sorted(calls)], finish)

    def _on_model_event(
        self,
        item: Any,
        writers: dict[str, _ArtifactWriter],
        text: list[str],
        calls: dict[int, ToolCallEnd | ToolCallError],
    ) -> list[AgentEvent]:
        out: list[AgentEvent] = []
        if item is _TICK:
            progress = self._progress()
            if progress is not None:
                out.append(progress)
        elif isinstance(item, TextDelta):
            text.append(item.text)
            # Not joined here: joining the text so far for each delta cost O(N²) for
            # an answer of N deltas; _progress joins it when a status update is due.
            if self.activity.kind != "writing":
                self.activity = Activity("writing", self.skill.name)
        elif isinstance(item, ToolCallStart):
            if item.name == ARTIFACT_TOOL:
                writers[item.id] = _ArtifactWriter(self.context, self.agent.artifact_media_type)
                self.artifact_started = True
            else:
                self.activity = Activity("calling", self.skill.name, tool=item.name)
        elif isinstance(item, ToolCallDelta):
            writer = writers.get(item.id)
            if writer is not None:
                out.extend(writer.feed(item.arguments_delta))
        elif isinstance(item, ToolCallEnd | ToolCallError):
            calls[item.index] = item
            writer = writers.get(item.id)
            if writer is not None:
                arguments = item.arguments if isinstance(item, ToolCallEnd) else None
                out.extend(writer.finish(arguments))
                self.artifacts += 1
        return out

    async def _forced_artifact(self, final_text: str) -> AsyncGenerator[AgentEvent, None]:
        """Stage 3: force the artifact tool and stream the artifact it writes."""
        messages = list(self.messages)
        messages.append(
            UserMessage(
                "Deliver the final result to the user now with the artifact tool: put the "
                "complete result in `content`."
            )
        )
        request = ModelRequest(
            tuple(messages), tools=(self.artifact_spec,), tool_choice=ForceTool(ARTIFACT_TOOL)
        )
        async with contextlib.aclosing(self._model_turn(request)) as items:
            async for item in items:
                if not isinstance(item, _TurnResult):
                    yield item
        if not self.artifacts:
            if final_text.strip():
                # The model would not call the tool: its answer is the artifact.
                yield self.context.artifact(
                    TextPart(final_text, media_type=self.agent.artifact_media_type),
                    last_chunk=True,
                )
                self.artifacts += 1
            else:
                yield self._fail("The model produced no result.")
                raise _Stop

    # ---------------------------------------------------------------- tools

    async def _execute(self, call: ToolCallEnd | ToolCallError) -> AsyncGenerator[AgentEvent, None]:
        """Run one tool call, streaming a workflow's events; answer the model.

        A Task or Message returned by the tool ends the turn as the result.
        """
        if isinstance(call, ToolCallError):
            self.messages.append(ToolMessage(call.id, call.message, is_error=True))
            return
        tool = self.tools.get(call.name)
        if tool is None:
            self.messages.append(
                ToolMessage(call.id, f"There is no tool named {call.name!r}.", is_error=True)
            )
            return
        if self.max_tool_calls is not None and self.tool_calls >= self.max_tool_calls:
            yield self._fail(
                f"Stopped: the limit of {self.max_tool_calls} tool calls was reached before "
                "the task was finished."
            )
            raise _Stop
        self.tool_calls += 1
        self.activity = Activity("running", self.skill.name, tool=call.name)
        arguments: JSONObject = dict(call.arguments)

        async def produce(emit: Callable[[Any], None]) -> None:
            async def sink(workflow: Workflow, event: WorkflowEvent) -> None:
                # Made into A2A events here, in the workflow's task: a workflow that
                # misuses its artifacts fails its tool call (the model is told), as
                # any other exception of the tool does.
                emit(_WorkflowEvents(self._workflow_event(workflow, event)))

            WORKFLOW_SINK.set(sink)  # this task's context only
            try:
                output = await tool.call(arguments, self.tool_context)
            except ToolInputError as exc:
                emit(_ToolDone(None, str(exc)))
            except Exception as exc:
                log.warning("tool %s failed", call.name, exc_info=True)
                emit(_ToolDone(None, f"the tool failed: {type(exc).__name__}: {exc}"))
            else:
                emit(_ToolDone(output))

        done: _ToolDone | None = None
        async with contextlib.aclosing(self._pump(produce)) as items:
            async for item in items:
                if item is _TICK:
                    progress = self._progress()
                    if progress is not None:
                        yield progress
                elif isinstance(item, _ToolDone):
                    done = item
                elif isinstance(item, _WorkflowEvents):
                    for event in item.events:
                        yield event
        if done is None or done.output is None:
            problem = done.error if done is not None else "the tool produced nothing"
            self._answer_tool(call, problem or "failed", is_error=True)
            return
        output = done.output
        if isinstance(output, Task | Message):
            for event in self._adopt(output):
                yield event
            raise _Stop
        if isinstance(output, ToolResult):
            text = output.as_text(self.agent.tool_results)
        else:  # pragma: no cover - tools return ToolMessage, Task or Message
            text = str(output)
        self._answer_tool(call, text or "(no output)", is_error=output.is_error)

    def _answer_tool(self, call: ToolCallEnd, text: str, *, is_error: bool) -> None:
        """Give the model what the tool returned, bounded by the agent's ``tool_result_limit``."""
        answer = tool_text_for_model(text, self.agent.tool_result_limit)
        if answer is not text:
            log.info(
                "tool %s: its result of %d characters was cut to %d for the model",
                call.name,
                len(text),
                self.agent.tool_result_limit,
            )
        self.messages.append(ToolMessage(call.id, answer, is_error=is_error))

    def _workflow_event(self, workflow: Workflow, event: WorkflowEvent) -> list[AgentEvent]:
        if isinstance(event, str):
            event = WorkflowStatus(event)
        if isinstance(event, WorkflowStatus):
            self.recent.append(event.text)
            self._reset_timer()
            return [self._status(TaskState.WORKING, event.text, "workflow")]
        if isinstance(event, WorkflowArtifact):
            self.artifact_started = True
            if event.append:
                key = (workflow.id, event.artifact_id or "")
                artifact_id = (
                    self.workflow_artifacts.get(key)
                    if event.artifact_id
                    else self.last_workflow_artifact.get(workflow.id)
                )
                if artifact_id is None:
                    raise ValueError(
                        f"workflow {workflow.id!r} appended to an artifact it did not start"
                    )
            else:
                artifact_id = new_id()
                if event.artifact_id:
                    self.workflow_artifacts[(workflow.id, event.artifact_id)] = artifact_id
            self.last_workflow_artifact[workflow.id] = artifact_id
            if not event.append:
                self.artifacts += 1
            return [
                self.context.artifact(
                    event.parts,
                    append=event.append,
                    last_chunk=event.last_chunk,
                    artifact_id=artifact_id,
                    name=event.name,
                    description=event.description,
                )
            ]
        return []

    def _adopt(self, result: Task | Message) -> list[AgentEvent]:
        """A tool's Task or Message as the result of this task."""
        if isinstance(result, Message):
            reply = self.context.agent_message(*result.parts, metadata=result.metadata)
            return [self._status_event(TaskState.COMPLETED, reply)]
        events: list[AgentEvent] = []
        for artifact in result.artifacts:
            events.append(
                self.context.artifact(
                    artifact.parts,
                    last_chunk=True,
                    name=artifact.name,
                    description=artifact.description,
                    metadata=artifact.metadata,
                )
            )
        state = result.status.state
        if not (state.is_terminal or state.is_interrupted):
            state = TaskState.COMPLETED
        status_message = result.status.message
        message: Message | None = None
        if status_message is not None:
            message = self.context.agent_message(
                *status_message.parts, metadata=status_message.metadata
            )
        events.append(self._status_event(state, message))
        return events


@attrs.define(slots=True)
class _TurnResult:
    text: str
    calls: list[ToolCallEnd | ToolCallError]
    finish: Finish | None


def render_parts(parts: Sequence[Part]) -> str:
    """A message's parts as text for the model (data as JSON, files as references)."""
    return ToolResult(parts=tuple(parts)).as_text()
