"""The request handler: every A2A operation as an async method on model objects.

Transports (JSON-RPC, HTTP+JSON, gRPC, in-process) decode a request into
its params object, call the matching ``on_*`` method with a
:class:`CallContext`, and encode what it returns or raises. Nothing here
knows about bytes, HTTP or JSON.

How a send works: the engine assigns ids and runs :meth:`Agent.execute` in
a background asyncio task (a *run*). Each event the agent yields is applied
to the stored task (:func:`apply_event`, optimistic concurrency with
retries), appended to the task's event log, published to the broker and,
for state changes, handed to the push dispatcher. Callers wait on the run
(blocking send), on its first event (``returnImmediately``) or read the
event stream, so nothing they do can stall the agent.

The run's task starts *eagerly* (as with Python 3.12's eager tasks, which
it uses there): its first step runs at once, inside the new task, until the
agent first waits for something. An agent that answers without waiting (a
direct reply, say) is thus done before the caller looks, with no round
trip through the event loop; one that waits goes on in the background as
any task does.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import contextvars
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Generator, Iterator
from typing import Any

import attrs

from .._state import TaskState
from ..errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..models import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    utc_now,
)
from ._agent import Agent, AgentEvent, CallContext, RequestContext
from ._lifecycle import apply_event, state_of, track_chunks, trim_history, without_artifacts
from ._push import PushDispatcher, PushNotificationSender
from ._store import ConcurrentModificationError, InMemoryTaskStore, StoredTask, TaskStore
from ._streams import EventBroker, EventStream, InMemoryEventBroker, task_event_stream

__all__ = ["RequestHandler"]

log = logging.getLogger("a2a_models.server")

#: Attempts of one optimistic write before giving up.
_MAX_ATTEMPTS = 32
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


# -- ids ------------------------------------------------------------------------------------

_IDS_PER_REFILL = 128
_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}


def _fresh_ids() -> Iterator[str]:
    # One getrandom call for many ids; each is a UUID4 in its usual text form.
    h = os.urandom(16 * _IDS_PER_REFILL).hex()
    return iter(
        [
            f"{h[i : i + 8]}-{h[i + 8 : i + 12]}-4{h[i + 13 : i + 16]}-"
            f"{_VARIANT[h[i + 16]]}{h[i + 17 : i + 20]}-{h[i + 20 : i + 32]}"
            for i in range(0, 32 * _IDS_PER_REFILL, 32)
        ]
    )


_ids: Iterator[str] = _fresh_ids()


def _reset_ids() -> None:
    # A forked child must not hand out the ids its parent has buffered.
    global _ids
    _ids = _fresh_ids()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_ids)


def fast_id() -> str:
    """A random UUID4 string, like :func:`~a2a_models.new_id` at a fraction of the cost.

    The random bytes come from ``os.urandom`` in batches (a forked child
    starts a new batch).
    """
    global _ids
    try:
        return next(_ids)
    except StopIteration:
        _ids = _fresh_ids()
        return next(_ids)


# -- eager tasks ------------------------------------------------------------------------------


class _Started(Coroutine[Any, Any, None]):
    """A coroutine whose first step already ran; the task that owns it does the rest."""

    __slots__ = ("_coro", "_fresh", "_outcome", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, None]) -> None:
        self._coro = coro
        self._fresh = True
        self._yielded: Any = None
        #: How the first step ended: ``None`` (it waits), or the exception it raised.
        self._outcome: BaseException | None = None

    def first_step(self) -> None:
        try:
            self._yielded = self._coro.send(None)
        except BaseException as exc:  # StopIteration too: re-raised by the task's first step
            self._outcome = exc

    def send(self, value: Any) -> Any:
        if self._fresh:
            self._fresh = False
            outcome = self._outcome
            if outcome is not None:
                self._outcome = None
                raise outcome
            yielded, self._yielded = self._yielded, None
            return yielded
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        if isinstance(typ, BaseException):
            exc = typ
        elif isinstance(val, BaseException):
            exc = val
        else:
            exc = typ() if val is None else typ(val)
        if tb is not None:
            exc = exc.with_traceback(tb)
        if self._fresh:
            self._fresh = False
            if self._outcome is not None:
                self._outcome = None
                raise exc  # canceled after the coroutine was done
            yielded, self._yielded = self._yielded, None
            if isinstance(exc, asyncio.CancelledError) and asyncio.isfuture(yielded):
                yielded.cancel()  # what Task.cancel does to the future a task waits on
        return self._coro.throw(exc)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("only an asyncio task runs this")  # pragma: no cover

    def __iter__(self) -> _Started:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def __getattr__(self, name: str) -> Any:
        # cr_frame, __qualname__...: the task's repr shows the real coroutine.
        return getattr(self._coro, name)


def _enter_leave() -> tuple[Callable[..., None], Callable[..., None]] | None:
    enter = getattr(asyncio.tasks, "_enter_task", None)
    leave = getattr(asyncio.tasks, "_leave_task", None)
    return (enter, leave) if callable(enter) and callable(leave) else None


_SWITCH = _enter_leave()


if sys.version_info >= (3, 12):  # pragma: no cover (the checks run on 3.11)

    def start_eager_task(coro: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        """An asyncio task whose first step runs now, in the task (an eager task)."""
        return asyncio.Task(coro, loop=asyncio.get_running_loop(), name=name, eager_start=True)

else:

    def start_eager_task(coro: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        """An asyncio task whose first step runs now, in the task (3.12's eager start).

        The task is created as usual; its first step runs right away with
        the task as the current one and in its context, and the step the
        loop then schedules carries on from where that one stopped.
        """
        loop = asyncio.get_running_loop()
        if _SWITCH is None:  # pragma: no cover
            return loop.create_task(coro, name=name)
        enter, leave = _SWITCH
        context = contextvars.copy_context()
        started = _Started(coro)
        task: asyncio.Task[None] = loop.create_task(started, name=name, context=context)
        current = asyncio.current_task(loop)
        if current is not None:
            leave(loop, current)
        enter(loop, task)
        try:
            context.run(started.first_step)
        finally:
            leave(loop, task)
            if current is not None:
                enter(loop, current)
        return task


class _Finished(Exception):
    """The task reached a terminal state before our write (e.g. it was canceled)."""

    def __init__(self, task: Task) -> None:
        self.task = task
        super().__init__(task.status.state.name)


class _Abort(Exception):
    """The run cannot go on (its task could not be created); ``run.error`` says why."""


class _Run:
    """One execution of the agent for one turn of one task."""

    def __init__(
        self,
        context: RequestContext,
        owner: str | None,
        tenant: str | None,
        *,
        created: bool,
        first: tuple[int, Task] | None = None,
    ) -> None:
        self.context = context
        self.owner = owner
        self.tenant = tenant
        #: The task exists in the store.
        self.created = created
        #: For a continued task: the snapshot its streams start with.
        self.first = first
        self.direct: Message | None = None
        self.error: A2AError | None = None
        self.closed_artifacts: frozenset[str] = frozenset()
        #: The task exists (or the agent replied directly, or creation failed).
        self.started = asyncio.Event()
        #: A terminal or interrupted state, a direct reply, or the run ended.
        self.settled = asyncio.Event()
        self.done = asyncio.Event()
        #: A cancel is between ``Agent.cancel`` and its outcome; events wait.
        self.canceling = False
        self.canceled = False
        self.cancel_decided = asyncio.Event()
        self.cancel_decided.set()
        #: The runner waits in :meth:`proceed` (not inside the agent).
        self.at_gate = False
        self.runner: asyncio.Task[None] | None = None
        if created:
            self.started.set()

    @property
    def task_id(self) -> str:
        return self.context.task_id

    @property
    def context_id(self) -> str:
        return self.context.context_id

    async def proceed(self) -> bool:
        """Wait out a cancel in progress; False if the task got canceled."""
        if self.canceling:
            self.at_gate = True
            try:
                await self.cancel_decided.wait()
            finally:
                self.at_gate = False
        return not self.canceled


def _page_offset(token: str | None) -> int:
    if not token:
        return 0
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        if not raw.startswith("o:"):
            raise ValueError(raw)
        offset = int(raw[2:])
        if offset < 0:
            raise ValueError(raw)
        return offset
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidParamsError("invalid pageToken", {"field": "pageToken"}) from None


def _offset_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode("ascii").rstrip("=")


class RequestHandler:
    """The transport-agnostic A2A server engine.

    ``card`` decides the optional capabilities (streaming, push
    notifications, extended card, required extensions). ``store`` and
    ``broker`` default to the in-memory ones; ``push_sender`` is needed for
    push notifications to go anywhere. ``id_factory`` makes task and
    context ids.

    Every ``on_*`` method takes the operation's params and a
    :class:`CallContext` (default: anonymous) and raises the
    :mod:`a2a_models.errors` the spec names. Streaming methods are
    coroutines returning an :class:`EventStream`, so errors are raised
    before the first item and a transport can still answer with an error
    response instead of opening a stream.
    """

    def __init__(
        self,
        agent: Agent,
        card: AgentCard,
        *,
        store: TaskStore | None = None,
        broker: EventBroker | None = None,
        push_sender: PushNotificationSender | None = None,
        extended_card: AgentCard | None = None,
        id_factory: Callable[[], str] = fast_id,
    ) -> None:
        self.agent = agent
        self.card = card
        self.extended_card = extended_card
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.broker: EventBroker = broker if broker is not None else InMemoryEventBroker()
        self._new_id = id_factory
        self._push = PushDispatcher(push_sender, self.store) if push_sender is not None else None
        self._runs: dict[str, _Run] = {}

    # -- capabilities --------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        """Whether the card declares ``capabilities.streaming``."""
        return self.card.capabilities.streaming is True

    @property
    def push_notifications(self) -> bool:
        """Whether the card declares ``capabilities.pushNotifications``."""
        return self.card.capabilities.push_notifications is True

    def _require_streaming(self) -> None:
        if not self.streaming:
            raise UnsupportedOperationError("this agent does not support streaming")

    def _require_push(self) -> None:
        if not self.push_notifications:
            raise PushNotificationNotSupportedError()

    def _check_extensions(self, call: CallContext) -> None:
        missing = [
            ext.uri
            for ext in self.card.capabilities.extensions
            if ext.required and ext.uri and ext.uri not in call.extensions
        ]
        if missing:
            raise ExtensionSupportRequiredError(
                f"this agent requires the extension(s): {', '.join(missing)}",
                {"extensions": missing},
            )

    @staticmethod
    def _tenant(requested: str | None, call: CallContext) -> str | None:
        if requested and call.tenant and requested != call.tenant:
            raise InvalidParamsError(
                "the request's tenant does not match the interface's", {"field": "tenant"}
            )
        return requested or call.tenant

    async def _get(self, task_id: str, call: CallContext, tenant: str | None) -> StoredTask:
        stored = await self.store.get(task_id, call.owner, tenant)
        if stored is None:
            # Same answer whether it does not exist or is not the caller's (§3.3.2).
            raise TaskNotFoundError(f"task {task_id!r} not found", {"taskId": task_id})
        return stored

    # -- SendMessage / SendStreamingMessage ----------------------------------------------

    async def on_send_message(
        self, request: SendMessageRequest, call: CallContext | None = None
    ) -> Task | Message:
        """``SendMessage`` (§3.1.1): a new task, a continued one, or a direct reply.

        Blocks until the task is terminal or interrupted unless
        ``configuration.returnImmediately``, which returns once the task
        exists (§3.2.2). The task's history is trimmed to
        ``configuration.historyLength``.
        """
        run = await self._start(request, call or CallContext())
        config = request.configuration
        if config is not None and config.return_immediately:
            await run.started.wait()
        else:
            await run.settled.wait()
        if run.error is not None:
            raise run.error
        if run.direct is not None:
            return run.direct
        stored = await self.store.get(run.task_id, run.owner, run.tenant) if run.created else None
        if stored is None:
            raise InternalError("the task of this request is gone")
        return trim_history(stored.task, config.history_length if config else None)

    async def on_send_streaming_message(
        self, request: SendMessageRequest, call: CallContext | None = None
    ) -> EventStream:
        """``SendStreamingMessage`` (§3.1.2): ``await`` it, then iterate ``(seq, item)``.

        A direct reply is a stream of that one Message. Otherwise the first
        item is the Task, then its updates as the agent produces them; the
        stream ends at a terminal state or when the task needs the client
        (input-required, auth-required: the turn is over, §3.2.2, §11.7).
        """
        self._require_streaming()
        call = call or CallContext()
        run = await self._start(request, call)
        await run.started.wait()
        if run.error is not None:
            raise run.error
        if run.direct is not None:
            return EventStream.single(run.direct)
        if not run.created:
            raise InternalError("the agent produced no response")
        config = request.configuration
        return EventStream(
            task_event_stream(
                self.store,
                self.broker,
                run.task_id,
                after_seq=0,
                first=run.first,
                close_on_interrupted=True,
                history_length=config.history_length if config else None,
            )
        )

    async def _start(self, request: SendMessageRequest, call: CallContext) -> _Run:
        tenant = self._tenant(request.tenant, call)
        self._check_extensions(call)
        config = request.configuration
        if config is not None and config.task_push_notification_config is not None:
            self._require_push()
            # Refuse a bad webhook URL before any task exists (the limit is checked on store).
            await self._check_push_config(config.task_push_notification_config, "", limit=False)
        message = request.message
        if message.task_id:
            run = await self._continue(request, call, tenant)
        else:
            context = RequestContext(
                message=message,
                task_id=self._new_id(),
                context_id=message.context_id or self._new_id(),
                configuration=config,
                metadata=request.metadata,
                call=call,
            )
            run = _Run(context, call.owner, tenant, created=False)
        self._runs[run.task_id] = run
        # Eager: an agent that needs no I/O for its first event (a direct
        # reply, say) has settled the run when this returns.
        run.runner = start_eager_task(self._execute(run), name=f"a2a-run-{run.task_id}")
        return run

    async def _continue(
        self, request: SendMessageRequest, call: CallContext, tenant: str | None
    ) -> _Run:
        message = request.message
        assert message.task_id is not None
        stored = await self._get(message.task_id, call, tenant)
        task = stored.task
        if message.context_id and task.context_id and message.context_id != task.context_id:
            raise InvalidParamsError(
                f"message contextId {message.context_id!r} does not match "
                f"the context {task.context_id!r} of task {task.id!r}",
                {"field": "message.contextId"},
            )
        context_id = task.context_id or task.id
        working = TaskStatusUpdateEvent(
            task_id=task.id,
            context_id=context_id,
            status=TaskStatus(state=TaskState.WORKING, timestamp=utc_now()),
        )

        def accept(current: Task) -> Task:
            # Checked again on every attempt: a concurrent message or cancel
            # may have moved the task on.
            state = current.status.state
            if state.is_terminal:
                raise UnsupportedOperationError(
                    f"task {current.id!r} is {state.name} and accepts no more messages",
                    {"taskId": current.id},
                )
            if not state.is_interrupted:
                raise UnsupportedOperationError(
                    f"task {current.id!r} is {state.name}: it accepts a message "
                    "only when it waits for input (input-required or auth-required)",
                    {"taskId": current.id},
                )
            return apply_event(apply_event(current, message), working)

        accepted, seq = await self._commit(task.id, call.owner, tenant, working, build=accept)
        context = RequestContext(
            message=attrs.evolve(message, task_id=task.id, context_id=context_id),
            task_id=task.id,
            context_id=context_id,
            task=accepted,
            configuration=request.configuration,
            metadata=request.metadata,
            call=call,
        )
        run = _Run(context, call.owner, tenant, created=True, first=(seq, accepted))
        await self._register_request_push(run)
        return run

    async def _register_request_push(self, run: _Run) -> None:
        config = run.context.configuration
        if config is None or config.task_push_notification_config is None:
            return
        push = config.task_push_notification_config
        await self._check_push_config(push, run.task_id, url=False)  # URL checked by _start
        await self.store.set_push_config(
            run.task_id,
            attrs.evolve(
                push, id=push.id or self._new_id(), task_id=run.task_id, tenant=run.tenant
            ),
        )

    # -- the run -------------------------------------------------------------------------

    async def _execute(self, run: _Run) -> None:
        try:
            await self._drive(run)
        except asyncio.CancelledError:
            log.debug("run of task %s stopped", run.task_id)
            raise
        except _Abort:
            pass
        except _Finished as finished:
            log.warning(
                "task %s is already %s; discarding the rest of the agent's events",
                run.task_id,
                finished.task.status.state.name,
            )
        except InvalidAgentResponseError as exc:
            log.warning("agent response for task %s rejected: %s", run.task_id, exc.message)
            await self._fail(run, f"The agent produced an invalid response: {exc.message}")
        except Exception:
            log.exception("agent failed on task %s", run.task_id)
            await self._fail(run, "The agent failed with an internal error.")
        finally:
            run.started.set()
            run.settled.set()
            run.done.set()
            if self._runs.get(run.task_id) is run:
                del self._runs[run.task_id]

    async def _drive(self, run: _Run) -> None:
        events = self.agent.execute(run.context)
        try:
            async for event in events:
                if (run.canceling or run.canceled) and not await run.proceed():
                    log.warning(
                        "task %s was canceled; discarding the agent's %s",
                        run.task_id,
                        type(event).__name__,
                    )
                    return
                if await self._on_event(run, event):
                    return
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception:
                    log.warning(
                        "closing the agent's events of task %s failed", run.task_id, exc_info=True
                    )
        # The agent stopped without a terminal or interrupted state.
        if not await run.proceed():
            return
        if not run.created:
            raise InvalidAgentResponseError("the agent produced no response")
        raise InvalidAgentResponseError(
            "the agent ended its turn without a terminal or interrupted state"
        )

    async def _on_event(self, run: _Run, event: AgentEvent) -> bool:
        """Apply one agent event; True when the turn is over."""
        if not run.created:
            if isinstance(event, Message):
                run.direct = self._direct_reply(run, event)
                run.started.set()
                run.settled.set()
                return True
            if isinstance(event, Task):
                task = await self._create(run, event)
                return self._settles(run, task.status.state)
            await self._create(run, None)
        event = self._stamp(event)
        run.closed_artifacts = track_chunks(run.closed_artifacts, event)
        await self._commit(
            run.task_id, run.owner, run.tenant, event, logged=not isinstance(event, Message)
        )
        state = state_of(event)
        return state is not None and self._settles(run, state)

    @staticmethod
    def _settles(run: _Run, state: TaskState) -> bool:
        if state.is_terminal or state.is_interrupted:
            run.settled.set()
            return True
        return False

    @staticmethod
    def _stamp(event: AgentEvent) -> AgentEvent:
        # Status timestamps order ListTasks: never store a status without one.
        if isinstance(event, TaskStatusUpdateEvent) and event.status.timestamp is None:
            return attrs.evolve(event, status=attrs.evolve(event.status, timestamp=utc_now()))
        if isinstance(event, Task):
            return RequestHandler._stamp_task(event)
        return event

    @staticmethod
    def _stamp_task(task: Task) -> Task:
        if task.status.timestamp is None:
            return attrs.evolve(task, status=attrs.evolve(task.status, timestamp=utc_now()))
        return task

    @staticmethod
    def _direct_reply(run: _Run, message: Message) -> Message:
        if message.context_id is not None and message.context_id != run.context_id:
            raise InvalidAgentResponseError(
                f"direct reply has contextId {message.context_id!r}, "
                f"the request's is {run.context_id!r}"
            )
        if message.task_id is not None and message.task_id != run.task_id:
            raise InvalidAgentResponseError("a direct reply must not reference a task")
        if message.context_id == run.context_id and message.task_id is None:
            return message
        # No task exists for a direct reply; it carries the context (§3.4.1).
        return attrs.evolve(message, context_id=run.context_id, task_id=None)

    async def _create(self, run: _Run, snapshot: Task | None) -> Task:
        message = run.context.message
        if snapshot is None:
            task = Task.submitted(message, task_id=run.task_id, context_id=run.context_id)
        else:
            if snapshot.id != run.task_id:
                raise InvalidAgentResponseError(
                    f"the agent's task has id {snapshot.id!r}, the engine assigned "
                    f"{run.task_id!r} (use context.task_id)"
                )
            if snapshot.context_id not in (None, run.context_id):
                raise InvalidAgentResponseError(
                    f"the agent's task has contextId {snapshot.context_id!r}, "
                    f"the request's is {run.context_id!r}"
                )
            if snapshot.status.state is TaskState.UNSPECIFIED:
                raise InvalidAgentResponseError("the agent's task has no state")
            task = self._stamp_task(attrs.evolve(snapshot, context_id=run.context_id))
            if all(m.message_id != message.message_id for m in task.history):
                # The client's message starts the history of its task.
                own = attrs.evolve(message, task_id=task.id, context_id=run.context_id)
                task = attrs.evolve(task, history=(own, *task.history))
        try:
            await self.store.create(task, run.owner, run.tenant, event=task)
            run.created = True
            await self._register_request_push(run)
        except A2AError as exc:
            log.warning("could not create task %s: %s", run.task_id, exc)
            run.error = exc
            raise _Abort from exc
        await self.broker.publish(task.id, 1, task)
        self._notify(task.id, task)
        run.started.set()
        return task

    async def _stop_failed(self, run: _Run) -> None:
        event = run.context.status(TaskState.FAILED, "The server stopped before the task finished.")
        try:
            await self._commit(run.task_id, run.owner, run.tenant, event)
        except (_Abort, _Finished):
            pass

    async def _fail(self, run: _Run, text: str) -> None:
        """Move the run's task to failed with ``text`` as the status message."""
        try:
            if run.error is not None or run.direct is not None:
                return
            if not await run.proceed():
                return
            if not run.created:
                await self._create(run, None)
            event = run.context.status(TaskState.FAILED, text)
            await self._commit(run.task_id, run.owner, run.tenant, event)
            run.settled.set()
        except (_Abort, _Finished):
            pass
        except Exception:
            log.exception("could not mark task %s failed", run.task_id)

    # -- writing -------------------------------------------------------------------------

    async def _commit(
        self,
        task_id: str,
        owner: str | None,
        tenant: str | None,
        event: StreamResponse,
        *,
        build: Callable[[Task], Task] | None = None,
        logged: bool = True,
    ) -> tuple[Task, int]:
        """Apply ``event`` (or ``build``) to the stored task; returns it and the event's seq.

        Optimistic: on a concurrent write, re-read and re-apply. Raises
        :class:`_Finished` if the task is already terminal.
        """
        error: ConcurrentModificationError | None = None
        for _ in range(_MAX_ATTEMPTS):
            stored = await self.store.get(task_id, owner, tenant)
            if stored is None:
                raise TaskNotFoundError(f"task {task_id!r} not found", {"taskId": task_id})
            if stored.task.status.state.is_terminal and build is None:
                raise _Finished(stored.task)
            task = build(stored.task) if build is not None else apply_event(stored.task, event)
            try:
                await self.store.update(task, stored.version, event=event if logged else None)
            except ConcurrentModificationError as exc:
                error = exc
                continue
            if not logged:
                return task, stored.last_seq
            seq = stored.last_seq + 1
            await self.broker.publish(task_id, seq, event)
            self._notify(task_id, event)
            return task, seq
        assert error is not None
        raise error

    def _notify(self, task_id: str, event: StreamResponse) -> None:
        # Push notifications go out on state changes (§3.5.1).
        if self._push is not None and state_of(event) is not None:
            self._push.dispatch(task_id, event)

    # -- GetTask / ListTasks -------------------------------------------------------------

    async def on_get_task(self, request: GetTaskRequest, call: CallContext | None = None) -> Task:
        """``GetTask`` (§3.1.3), with the history trimmed to ``historyLength``."""
        call = call or CallContext()
        stored = await self._get(request.id, call, self._tenant(request.tenant, call))
        return trim_history(stored.task, request.history_length)

    async def on_list_tasks(
        self, request: ListTasksRequest, call: CallContext | None = None
    ) -> ListTasksResponse:
        """``ListTasks`` (§3.1.4): the caller's tasks, newest status first, by cursor."""
        call = call or CallContext()
        tenant = self._tenant(request.tenant, call)
        page_size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise InvalidParamsError(
                f"pageSize must be between 1 and {MAX_PAGE_SIZE}, got {page_size}",
                {"field": "pageSize"},
            )
        status = request.status if request.status is not TaskState.UNSPECIFIED else None
        page = await self.store.list(
            call.owner,
            tenant,
            context_id=request.context_id or None,
            status=status,
            status_timestamp_after=request.status_timestamp_after,
            page_size=page_size,
            page_token=request.page_token or None,
        )
        tasks = [trim_history(t, request.history_length) for t in page.tasks]
        if not request.include_artifacts:
            tasks = [without_artifacts(t) for t in tasks]
        return ListTasksResponse(
            tasks=tasks,
            next_page_token=page.next_page_token,
            page_size=page_size,
            total_size=page.total_size,
        )

    # -- CancelTask ----------------------------------------------------------------------

    async def on_cancel_task(
        self, request: CancelTaskRequest, call: CallContext | None = None
    ) -> Task:
        """``CancelTask`` (§3.1.5): ask the agent to stop, then mark the task canceled.

        A terminal task (including an already canceled one) raises
        ``TaskNotCancelableError`` (§3.1.5); cancels that overlap a cancel in
        progress get its outcome (the "same effect" of §3.3.1). The agent may
        refuse by raising ``TaskNotCancelableError`` from ``Agent.cancel``.
        Once canceled, nothing the agent yields changes the task.
        """
        call = call or CallContext()
        tenant = self._tenant(request.tenant, call)
        while True:
            stored = await self._get(request.id, call, tenant)
            state = stored.task.status.state
            if state.is_terminal:
                raise TaskNotCancelableError(
                    f"task {request.id!r} is already {state.name}", {"taskId": request.id}
                )
            run = self._runs.get(request.id)
            if run is not None and run.canceling:
                await run.cancel_decided.wait()
                if run.canceled:
                    return await self._canceled_task(request.id, call, tenant)
                continue  # that cancel was refused: try ours
            return await self._cancel(stored, run, call, tenant, request)

    async def _cancel(
        self,
        stored: StoredTask,
        run: _Run | None,
        call: CallContext,
        tenant: str | None,
        request: CancelTaskRequest,
    ) -> Task:
        task = stored.task
        if run is not None and not run.done.is_set():
            context = run.context
            run.canceling = True
            run.cancel_decided.clear()
        else:
            run = None
            context = self._context_for(task, call, request)
        context.cancel_requested = True
        try:
            try:
                await self.agent.cancel(context)
            except TaskNotCancelableError:
                raise
            except Exception:
                log.exception("the agent's cancel of task %s failed; canceling anyway", task.id)
            event = context.status(TaskState.CANCELED)

            def cancel(current: Task) -> Task:
                if current.status.state.is_terminal:
                    raise TaskNotCancelableError(
                        f"task {current.id!r} is already {current.status.state.name}",
                        {"taskId": current.id},
                    )
                return apply_event(current, event)

            canceled, _ = await self._commit(task.id, stored.owner, tenant, event, build=cancel)
        except BaseException:
            if run is not None:
                run.canceling = False
                run.cancel_decided.set()
            raise
        if run is not None:
            run.canceled = True
            run.canceling = False
            run.cancel_decided.set()
            if run.runner is not None and not run.at_gate:
                # Stuck inside the agent: stop it. At the gate, the runner
                # wakes up, discards what it holds and closes the agent itself.
                run.runner.cancel()
        return canceled

    async def _canceled_task(self, task_id: str, call: CallContext, tenant: str | None) -> Task:
        stored = await self._get(task_id, call, tenant)
        if stored.task.status.state is not TaskState.CANCELED:
            raise TaskNotCancelableError(
                f"task {task_id!r} is {stored.task.status.state.name}", {"taskId": task_id}
            )
        return stored.task

    def _context_for(
        self, task: Task, call: CallContext, request: CancelTaskRequest
    ) -> RequestContext:
        # No turn is running here (the task waits for input, or runs on
        # another replica): describe the task by its latest user message.
        users = [m for m in task.history if m.role is Role.USER]
        message = users[-1] if users else (task.history[-1] if task.history else None)
        if message is None:
            message = Message.user("(cancel)", task_id=task.id, context_id=task.context_id)
        return RequestContext(
            message=message,
            task_id=task.id,
            context_id=task.context_id or task.id,
            task=task,
            metadata=request.metadata,
            call=call,
        )

    # -- SubscribeToTask -----------------------------------------------------------------

    async def on_subscribe_to_task(
        self,
        request: SubscribeToTaskRequest,
        call: CallContext | None = None,
        *,
        after_seq: int | None = None,
    ) -> EventStream:
        """``SubscribeToTask`` (§3.1.6): the current Task, then live events until terminal.

        With ``after_seq`` (a transport's resume point, e.g. SSE
        ``Last-Event-ID``) the stream instead replays the logged events after
        it, then continues live, with no gap and no duplicate. A task that
        is terminal raises ``UnsupportedOperationError``, unless a resume
        still has events to replay. The stream stays open while the task
        waits for input: §3.1.6 ends it only at a terminal state.
        """
        self._require_streaming()
        call = call or CallContext()
        tenant = self._tenant(request.tenant, call)
        stored = await self._get(request.id, call, tenant)
        terminal = stored.task.status.state.is_terminal
        if after_seq is None:
            if terminal:
                raise UnsupportedOperationError(
                    f"task {request.id!r} is {stored.task.status.state.name}: "
                    "a terminal task has no updates to subscribe to",
                    {"taskId": request.id},
                )
            first = (stored.last_seq, stored.task)
            return EventStream(
                task_event_stream(self.store, self.broker, request.id, after_seq=0, first=first)
            )
        if not 0 <= after_seq <= stored.last_seq:
            raise InvalidParamsError(
                f"cannot resume task {request.id!r} after event {after_seq}: "
                f"its last event is {stored.last_seq}"
            )
        if terminal and after_seq == stored.last_seq:
            raise UnsupportedOperationError(
                f"task {request.id!r} is {stored.task.status.state.name} and has no further events",
                {"taskId": request.id},
            )
        return EventStream(
            task_event_stream(self.store, self.broker, request.id, after_seq=after_seq)
        )

    # -- push notification configs -------------------------------------------------------

    async def on_create_task_push_notification_config(
        self, config: TaskPushNotificationConfig, call: CallContext | None = None
    ) -> TaskPushNotificationConfig:
        """``CreateTaskPushNotificationConfig`` (§3.1.7): store it, assigning an id."""
        self._require_push()
        call = call or CallContext()
        if not config.task_id:
            raise InvalidParamsError("taskId is required", {"field": "taskId"})
        tenant = self._tenant(config.tenant, call)
        await self._get(config.task_id, call, tenant)
        await self._check_push_config(config, config.task_id)
        stored = attrs.evolve(config, id=config.id or self._new_id(), tenant=tenant)
        return await self.store.set_push_config(config.task_id, stored)

    async def _check_push_config(
        self,
        config: TaskPushNotificationConfig,
        task_id: str,
        *,
        url: bool = True,
        limit: bool = True,
    ) -> None:
        """The sender's URL check and its per-task limit, as InvalidParams."""
        if self._push is None:
            return
        sender = self._push.sender
        if url:
            try:
                await sender.check_config(config)
            except ValueError as exc:
                raise InvalidParamsError(
                    f"pushNotificationConfig.url refused: {exc}", {"field": "url"}
                ) from None
        most = sender.max_configs_per_task
        if most is not None and limit:
            existing = await self.store.list_push_configs(task_id)
            if len(existing) >= most and all(c.id != config.id for c in existing):
                raise InvalidParamsError(
                    f"task {task_id} already has {len(existing)} push notification configs, "
                    "the most allowed; delete one first",
                    {"field": "taskId", "limit": most},
                )

    async def on_get_task_push_notification_config(
        self, request: GetTaskPushNotificationConfigRequest, call: CallContext | None = None
    ) -> TaskPushNotificationConfig:
        """``GetTaskPushNotificationConfig`` (§3.1.8); a missing config is ``TaskNotFoundError``.

        Without an ``id`` (0.3 allowed that) the task's first config is returned.
        """
        self._require_push()
        call = call or CallContext()
        await self._get(request.task_id, call, self._tenant(request.tenant, call))
        if request.id is None:
            configs = await self.store.list_push_configs(request.task_id)
            config = configs[0] if configs else None
        else:
            config = await self.store.get_push_config(request.task_id, request.id)
        if config is None:
            raise TaskNotFoundError(
                f"push notification config {request.id!r} of task {request.task_id!r} not found",
                {"taskId": request.task_id},
            )
        return config

    async def on_list_task_push_notification_configs(
        self, request: ListTaskPushNotificationConfigsRequest, call: CallContext | None = None
    ) -> ListTaskPushNotificationConfigsResponse:
        """``ListTaskPushNotificationConfigs`` (§3.1.9), paginated if ``pageSize`` is set."""
        self._require_push()
        call = call or CallContext()
        await self._get(request.task_id, call, self._tenant(request.tenant, call))
        configs = await self.store.list_push_configs(request.task_id)
        start = _page_offset(request.page_token)
        if not request.page_size:
            return ListTaskPushNotificationConfigsResponse(configs=configs[start:])
        end = start + request.page_size
        token = _offset_token(end) if end < len(configs) else ""
        return ListTaskPushNotificationConfigsResponse(
            configs=configs[start:end],
            next_page_token=token,
        )

    async def on_delete_task_push_notification_config(
        self, request: DeleteTaskPushNotificationConfigRequest, call: CallContext | None = None
    ) -> None:
        """``DeleteTaskPushNotificationConfig`` (§3.1.10); deleting twice is fine."""
        self._require_push()
        call = call or CallContext()
        await self._get(request.task_id, call, self._tenant(request.tenant, call))
        await self.store.delete_push_config(request.task_id, request.id)

    # -- GetExtendedAgentCard ------------------------------------------------------------

    async def on_get_extended_agent_card(
        self, request: GetExtendedAgentCardRequest | None = None, call: CallContext | None = None
    ) -> AgentCard:
        """``GetExtendedAgentCard`` (§3.1.11). Authenticating the caller is the transport's job."""
        if self.card.capabilities.extended_agent_card is not True:
            raise UnsupportedOperationError("this agent has no extended agent card")
        if self.extended_card is None:
            raise ExtendedAgentCardNotConfiguredError()
        return self.extended_card

    # -- lifecycle -----------------------------------------------------------------------

    def active_runs(self) -> int:
        """How many agent executions are in progress."""
        return len(self._runs)

    async def idle(self) -> None:
        """Wait until no agent execution and no push notification is in progress."""
        while self._runs:
            await asyncio.gather(
                *(r.done.wait() for r in list(self._runs.values())), return_exceptions=True
            )
        if self._push is not None:
            await self._push.idle()

    async def aclose(self) -> None:
        """Stop every run and push delivery (for server shutdown and tests).

        A task still working when its run is stopped is marked failed, so its
        subscribers (here or on another replica) see it end instead of waiting.
        """
        runs = list(self._runs.values())
        runners = [r.runner for r in runs if r.runner is not None]
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)
        for run in runs:
            if not run.created or run.canceled:
                continue
            stored = await self.store.get(run.task_id, run.owner, run.tenant)
            if stored is None or not stored.task.status.state.is_active:
                continue  # finished, or waiting for its client: nothing was cut short
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_failed(run), 5.0)
        if self._push is not None:
            await self._push.aclose()
