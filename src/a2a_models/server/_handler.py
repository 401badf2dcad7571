"""The engine's operations: every A2A operation as an async method on model objects.

Transports (JSON-RPC, HTTP+JSON, gRPC, in-process) decode a request into
its params object, call the matching ``on_*`` method with a
:class:`CallContext`, and encode what it returns or raises. Nothing here
knows about bytes, HTTP or JSON.

How a send works: the operations assign ids, create or continue the turn's
:class:`~a2a_models.server.AgentRun` and hand it to the
:class:`~a2a_models.server.TaskExecutor` (in this process by default, see
``_execution``); every change to the stored task goes through the
:class:`~a2a_models.server.TaskWriter`. Callers wait on the run (blocking
send), on its first event (``returnImmediately``) or read the event stream,
so nothing they do can stall the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import attrs

from .._state import TaskState
from ..errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    quote_input,
)
from ..models import (
    AgentCard,
    CancelTaskRequest,
    DataPart,
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
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    utc_now,
)
from ..models.rules import MAX_JSON_DEPTH, too_deep
from ._agent import Agent, CallContext, RequestContext
from ._execution import (
    UNRECORDED_TEXT,
    ExecutorFactory,
    InProcessExecutor,
    TaskExecutor,
    keep_trying,
)
from ._firsts import FirstMessages, check_same, started_key
from ._ids import fast_id
from ._lifecycle import apply_event, trim_history, without_artifacts
from ._operations import engine_observer
from ._push import PushDispatcher, PushNotificationSender
from ._run import AgentRun, RunFinished
from ._store import (
    DuplicateMessageError,
    InMemoryTaskStore,
    StoredTask,
    TaskStore,
    accepts_keyword,
)
from ._streams import EventBroker, EventStream, InMemoryEventBroker, task_event_stream
from ._writer import TaskWriter, written
from .paging import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    decode_cursor,
    encode_cursor,
    invalid_page_token,
)

__all__ = ["Repeat", "RequestHandler"]

log = logging.getLogger("a2a_models.server")


class RequestHandler:
    """The transport-agnostic A2A server engine.

    ``card`` decides the optional capabilities (streaming, push
    notifications, extended card, required extensions). ``store`` and
    ``broker`` default to the in-memory ones; ``push_sender`` is needed for
    push notifications to go anywhere. ``id_factory`` makes task and
    context ids. ``executor`` builds the :class:`TaskExecutor` that runs
    the agent (default: :class:`InProcessExecutor`).

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
        executor: ExecutorFactory = InProcessExecutor,
    ) -> None:
        self.agent = agent
        self.card = card
        self.extended_card = extended_card
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        #: The store can skip reading artifacts ListTasks drops (a store may predate that).
        self._list_skips_artifacts = accepts_keyword(self.store.list, "include_artifacts")
        self._get_skips_artifacts = accepts_keyword(self.store.get, "include_artifacts")
        observer = engine_observer()
        if observer is not None:
            self.store = observer.wrap_store(self.store)
        self.broker: EventBroker = broker if broker is not None else InMemoryEventBroker()
        self._new_id = id_factory
        self._push = PushDispatcher(push_sender, self.store) if push_sender is not None else None
        #: Every change to a stored task goes through the writer.
        self.writer = TaskWriter(self.store, self.broker, self._push, id_factory)
        #: Runs the agent (in this process unless ``executor`` says otherwise).
        self.executor: TaskExecutor = executor(agent, self.writer)
        #: Writes that go on after their request answered (failing a stranded task).
        self._background: set[asyncio.Task[None]] = set()
        #: The runs first messages started here (a retry joins one, or gets its task).
        self._firsts = FirstMessages()

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

    async def _check_push(
        self, config: TaskPushNotificationConfig, task_id: str, *, limit: bool = True
    ) -> None:
        """Refuse (``InvalidParams``) a push config that could not be stored or sent."""
        auth = config.authentication
        if auth is not None and auth.other_schemes:
            # 0.3 took a list of schemes: a webhook gets one Authorization header, and
            # 1.0 (which the stores keep configs in) holds one scheme.
            schemes = ", ".join(repr(s) for s in (auth.scheme, *auth.other_schemes))
            raise InvalidParamsError.of_field(
                "authentication.schemes",
                f"pushNotificationConfig.authentication.schemes: one scheme is supported "
                f"(it names the webhook's Authorization header), got {schemes}",
            )
        if self._push is not None:
            await self._push.check(config, task_id, limit=limit)

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
            raise InvalidParamsError.of_field(
                "tenant", "the request's tenant does not match the interface's"
            )
        return requested or call.tenant

    async def _get(
        self,
        task_id: str,
        call: CallContext,
        tenant: str | None,
        *,
        history_length: int | None = None,
    ) -> StoredTask:
        return await self.writer.get(task_id, call, tenant, history_length=history_length)

    async def _require_task(
        self, task_id: str, call: CallContext, tenant: str | None
    ) -> StoredTask:
        """The caller's task without its history and (if the store can) its artifacts, for a
        request that only needs the task to exist (or its state): reading them would make
        its cost grow with the conversation and the artifacts (a whole read of a task the
        store has not cached reads every message and every artifact part).
        """
        return await self.writer.get(
            task_id,
            call,
            tenant,
            history_length=0,
            include_artifacts=not self._get_skips_artifacts,
        )

    # -- SendMessage / SendStreamingMessage ----------------------------------------------

    async def on_send_message(
        self, request: SendMessageRequest, call: CallContext | None = None
    ) -> Task | Message:
        """``SendMessage`` (§3.1.1): a new task, a continued one, or a direct reply.

        Blocks until the task is terminal or interrupted unless
        ``configuration.returnImmediately``, which returns once the task
        exists (§3.2.2). The task's history is trimmed to
        ``configuration.historyLength``.

        A message the task already has (same ``messageId``: a client's retry)
        runs no turn (§3.3.1 lets agents use the id to detect duplicates): the
        answer is the task as it is now, once the turn in progress, if any, is
        over (see :meth:`_continue`). So does a message that started a task (same
        ``messageId``, no ``taskId``, same caller): a retry gets that task, and
        one sent while its first run goes on waits on that run (see :meth:`_first`).
        """
        call = call or CallContext()
        started = await self._start(request, call)
        config = request.configuration
        wanted = config.history_length if config else None
        if not isinstance(started, Repeat):
            immediate = config is not None and config.return_immediately
            await (started.started if immediate else started.settled).wait()
            started = await self._refused(started, request.message, call)
        if isinstance(started, Repeat):
            if config is None or not config.return_immediately:
                await self._settled(started)
            now = await self._get(
                started.task_id, started.call, started.tenant, history_length=_stored_length(wanted)
            )
            return trim_history(now.task, wanted)
        run = started
        if run.error is not None:
            raise run.error
        if run.direct is not None:
            return run.direct
        ended = run.whole()
        if ended is not None:
            # The task as the run's own write left it: nothing to read back.
            return trim_history(ended, wanted)
        stored = (
            await self.store.get(
                run.task_id, run.owner, run.tenant, history_length=_stored_length(wanted)
            )
            if run.created
            else None
        )
        if stored is None:
            raise InternalError("the task of this request is gone")
        return trim_history(stored.task, wanted)

    async def on_send_streaming_message(
        self, request: SendMessageRequest, call: CallContext | None = None
    ) -> EventStream:
        """``SendStreamingMessage`` (§3.1.2): ``await`` it, then iterate ``(seq, item)``.

        A direct reply is a stream of that one Message. Otherwise the first
        item is the Task, then its updates as the agent produces them; the
        stream ends at a terminal state or when the task needs the client
        (input-required, auth-required: the turn is over, §3.2.2, §11.7).

        A message the task already has (a client's retry) runs no turn: the
        stream starts with the task as it is now and follows it as the first
        send's stream does (to a terminal or interrupted state: a task already
        there is a stream of that one Task). A retried first message (see
        :meth:`on_send_message`) likewise streams the task it started.
        """
        self._require_streaming()
        call = call or CallContext()
        started = await self._start(request, call)
        config = request.configuration
        history_length = config.history_length if config else None
        if not isinstance(started, Repeat):
            await started.started.wait()
            started = await self._refused(started, request.message, call)
        if isinstance(started, Repeat):
            stored = await self._get(
                started.task_id,
                started.call,
                started.tenant,
                history_length=_stored_length(history_length),
            )
            return self._turn_stream(
                started.task_id, (stored.last_seq, stored.task), history_length, stored.task
            )
        run = started
        if run.error is not None:
            raise run.error
        if run.direct is not None:
            return EventStream.single(run.direct)
        if not run.created:
            raise InternalError("the agent produced no response")
        return self._turn_stream(run.task_id, run.first, history_length, _opening(run))

    def _turn_stream(
        self,
        task_id: str,
        first: tuple[int, Task] | None,
        history_length: int | None,
        opening: Task | None = None,
    ) -> EventStream:
        """The events of a send's turn: ``first`` (the task), then the task's events
        until it is terminal or waits for the client (``opening``: see :class:`EventStream`)."""
        return EventStream(
            task_event_stream(
                self.store,
                self.broker,
                task_id,
                after_seq=0,
                first=first,
                close_on_interrupted=True,
                history_length=history_length,
            ),
            opening,
        )

    async def _settled(self, repeat: Repeat) -> None:
        """Wait until the task of a repeated message is terminal or interrupted: its
        turn (or a later one) may still run, and a blocking send answers after it."""
        stored = await self._require_task(repeat.task_id, repeat.call, repeat.tenant)
        async with self._turn_stream(repeat.task_id, (stored.last_seq, stored.task), 0) as events:
            async for _ in events:
                pass

    async def _start(self, request: SendMessageRequest, call: CallContext) -> AgentRun | Repeat:
        _refuse_too_deep(request)
        tenant = self._tenant(request.tenant, call)
        self._check_extensions(call)
        config = request.configuration
        if config is not None and config.task_push_notification_config is not None:
            self._require_push()
            # A config that cannot be stored or sent is refused before any task exists.
            await self._check_push(config.task_push_notification_config, "", limit=False)
        message = request.message
        if message.task_id:
            continued = await self._continue(request, call, tenant)
            if isinstance(continued, Repeat):
                return continued  # no turn: the task has the message already
            run = continued
        else:
            # No id (a client that breaks the spec): nothing to tell a retry by.
            key = (
                started_key(call.owner, tenant, message.message_id) if message.message_id else None
            )
            first = None if key is None else await self._first(key, message, call, tenant)
            if first is not None:
                return first  # a retry: the run it joins, or the task it started
            context = RequestContext(
                message=message,
                task_id=self._new_id(),
                context_id=message.context_id or self._new_id(),
                configuration=config,
                metadata=request.metadata,
                call=call,
            )
            run = AgentRun(context, call.owner, tenant, created=False)
            run.started_by = key
            if key is not None:
                self._firsts.remember(key, run, run.task_id)
        self.executor.start(run)
        return run

    async def _first(
        self, key: bytes, message: Message, call: CallContext, tenant: str | None
    ) -> AgentRun | Repeat | None:
        """What a first message (no ``taskId``) whose ``key`` this handler started a run
        for gets: that run while it goes on (the callers wait on one run), else the task
        it started, as a :class:`Repeat`; ``None``: not known here (or its run made no
        task: a direct reply, a failure), the message starts a run.

        A retry that reaches another process (or this one after a restart) starts one,
        whose task's creation the store refuses (see :meth:`_refused`)."""
        found = self._firsts.find(key)
        if found is None:
            return None
        task_id, run = found
        if run is not None and not run.done.is_set():
            check_same(run.context.message, message)
            return run
        if run is not None and not run.created:
            if not isinstance(run.error, DuplicateMessageError):
                self._firsts.forget(key)
                return None
            task_id = run.error.task_id
        repeat = await self._first_repeat(task_id, message, call, tenant)
        if repeat is None:
            self._firsts.forget(key)
        return repeat

    async def _refused(
        self, run: AgentRun, message: Message, call: CallContext
    ) -> AgentRun | Repeat:
        """``run``, or the :class:`Repeat` of the task the store found its message started
        (it refused to create a second: ``DuplicateMessageError``)."""
        refusal = run.error
        if run.created or run.started_by is None or not isinstance(refusal, DuplicateMessageError):
            return run
        self._firsts.remember(run.started_by, None, refusal.task_id)
        repeat = await self._first_repeat(refusal.task_id, message, call, run.tenant)
        return Repeat(refusal.task_id, call, run.tenant) if repeat is None else repeat

    async def _first_repeat(
        self, task_id: str, message: Message, call: CallContext, tenant: str | None
    ) -> Repeat | None:
        """The :class:`Repeat` of the task ``message`` (a first message) started, if the
        task is still there; ``InvalidParams`` if the message it started is not this one."""
        known = await self.store.find_message(task_id, message.message_id)
        if known is not None:
            check_same(known, message)
        elif await self.store.get(task_id, call.owner, tenant, history_length=0) is None:
            return None
        return Repeat(task_id, call, tenant)

    async def _continue(
        self, request: SendMessageRequest, call: CallContext, tenant: str | None
    ) -> AgentRun | Repeat:
        """Accept a message for its task and make its turn; or, when the task's
        history has the message already (as the client's), a :class:`Repeat`.

        A repeat is found without reading the history: the accepting write asks
        the store to refuse a message it has (in the transaction that appends it,
        so two retries at once accept it once), and a task that accepts no
        message now (its turn runs, or it ended) is asked for that one message.
        """
        message = request.message
        assert message.task_id is not None
        # No history: accepting the message only appends to it (the store leaves out a
        # message it already has), and the agent's task is read whole once, below.
        stored = await self._get(message.task_id, call, tenant, history_length=0)
        task = stored.task
        if message.context_id and task.context_id and message.context_id != task.context_id:
            raise InvalidParamsError.of_field(
                "message.contextId",
                f"message contextId {quote_input(message.context_id)} does not match "
                f"the context {quote_input(task.context_id)} of task {task.id!r}",
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

        try:
            await self.writer.commit(
                task.id,
                call.owner,
                tenant,
                working,
                build=accept,
                base=stored,
                history=False,
                new_message=message.message_id,
            )
        except (UnsupportedOperationError, DuplicateMessageError) as exc:
            if not await self._repeated(task.id, message, refusal=exc):
                raise
            return Repeat(task.id, call, tenant)
        try:
            # The task as the turn starts, whole, for the agent: the one copy of the
            # history a turn makes (a tuple of the stored one and the messages added
            # since). Its last_seq is the accepting write's, or a later one's.
            turn = await self._get(task.id, call, tenant)
            seq, accepted = turn.last_seq, turn.task
            context = RequestContext(
                message=attrs.evolve(message, task_id=task.id, context_id=context_id),
                task_id=task.id,
                context_id=context_id,
                task=accepted,
                configuration=request.configuration,
                metadata=request.metadata,
                call=call,
            )
            run = AgentRun(context, call.owner, tenant, created=True, first=(seq, accepted))
            # The base of the run's first write: not read again (a write in between moves
            # the version on, and that write reads the task).
            run.written = written(turn)
            await self.writer.register_request_push(run)
        except Exception:
            # Accepted (the task is working on the message) but no turn can start:
            # left so, the task would stay working with nobody on it. The caller
            # gets the error now; the task is failed as soon as the store lets it.
            unstarted = RequestContext(
                message=message, task_id=task.id, context_id=context_id, task=task, call=call
            )
            failing = asyncio.create_task(
                self._fail_unstarted(unstarted.fail(UNRECORDED_TEXT), call.owner, tenant),
                name=f"a2a-fail-{task.id}",
            )
            self._background.add(failing)
            failing.add_done_callback(self._background.discard)
            raise
        return run

    async def _repeated(self, task_id: str, message: Message, *, refusal: A2AError) -> bool:
        """Whether ``message`` is one the task's history has as the client's (``refusal``:
        the store said it has one with that id, or the task accepts no message now)."""
        known = await self.store.find_message(task_id, message.message_id)
        if known is None:
            # A store that refuses repeats but cannot show them: take its word.
            return isinstance(refusal, DuplicateMessageError)
        if known.role is not Role.USER:
            raise InvalidParamsError(
                f"message.messageId {quote_input(message.message_id)} is the id of a message "
                f"of the agent in task {task_id!r}; a new message needs an id of its own",
                {"field": "message.messageId"},
            )
        return True

    async def _fail_unstarted(
        self, failed: TaskStatusUpdateEvent, owner: str | None, tenant: str | None
    ) -> None:
        """Write ``failed`` (the status of a task whose accepted turn could not start)."""

        async def attempt() -> None:
            with contextlib.suppress(RunFinished):  # it ended meanwhile (a cancel)
                await self.writer.commit(failed.task_id, owner, tenant, failed)

        await keep_trying(f"mark task {failed.task_id} failed", attempt)

    # -- GetTask / ListTasks -------------------------------------------------------------

    async def on_get_task(self, request: GetTaskRequest, call: CallContext | None = None) -> Task:
        """``GetTask`` (§3.1.3), with the history trimmed to ``historyLength``."""
        call = call or CallContext()
        stored = await self._get(
            request.id,
            call,
            self._tenant(request.tenant, call),
            history_length=_stored_length(request.history_length),
        )
        return trim_history(stored.task, request.history_length)

    async def on_list_tasks(
        self, request: ListTasksRequest, call: CallContext | None = None
    ) -> ListTasksResponse:
        """``ListTasks`` (§3.1.4): the caller's tasks, newest status first, by cursor."""
        call = call or CallContext()
        tenant = self._tenant(request.tenant, call)
        page_size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise InvalidParamsError.of_field(
                "pageSize", f"pageSize must be between 1 and {MAX_PAGE_SIZE}, got {page_size}"
            )
        status = request.status if request.status is not TaskState.UNSPECIFIED else None
        # ListTasks leaves artifacts out unless asked (spec): the store need not read them.
        skip = self._list_skips_artifacts and not request.include_artifacts
        page = await self.store.list(
            call.owner,
            tenant,
            context_id=request.context_id or None,
            status=status,
            status_timestamp_after=request.status_timestamp_after,
            page_size=page_size,
            page_token=request.page_token or None,
            history_length=_stored_length(request.history_length),
            **({"include_artifacts": False} if skip else {}),
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
            run = self.executor.running(request.id)
            if run is not None and run.canceling:
                await run.cancel_decided.wait()
                if run.canceled:
                    return await self._canceled_task(request.id, call, tenant)
                continue  # that cancel was refused: try ours
            return await self._cancel(stored, run, call, tenant, request)

    async def _cancel(
        self,
        stored: StoredTask,
        run: AgentRun | None,
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

            canceled, _ = await self.writer.commit(
                task.id, stored.owner, tenant, event, build=cancel
            )
        except BaseException:
            if run is not None:
                run.canceling = False
                run.cancel_decided.set()
            raise
        if run is not None:
            run.canceled = True
            run.canceling = False
            run.cancel_decided.set()
            self.executor.stop(run)
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
        # another replica): describe the task by its latest user message,
        # looked for from the end (a cancel does not go over a long history).
        message = next((m for m in reversed(task.history) if m.role is Role.USER), None)
        if message is None and task.history:
            message = task.history[-1]
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
        if after_seq is None:  # the stream starts with the task, whole
            stored = await self._get(request.id, call, tenant)
        else:  # a resume replays the log: only the state and last seq are needed
            stored = await self._require_task(request.id, call, tenant)
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
                task_event_stream(self.store, self.broker, request.id, after_seq=0, first=first),
                stored.task,
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
            raise InvalidParamsError.of_field("taskId", "taskId is required")
        tenant = self._tenant(config.tenant, call)
        await self._require_task(config.task_id, call, tenant)
        await self._check_push(config, config.task_id)
        stored = attrs.evolve(config, id=config.id or self._new_id(), tenant=tenant)
        return await self.writer.store_push_config(config.task_id, stored, call.version)

    async def on_get_task_push_notification_config(
        self, request: GetTaskPushNotificationConfigRequest, call: CallContext | None = None
    ) -> TaskPushNotificationConfig:
        """``GetTaskPushNotificationConfig`` (§3.1.8); a missing config is ``TaskNotFoundError``.

        Without an ``id`` (0.3 allowed that) the task's first config is returned.
        """
        self._require_push()
        call = call or CallContext()
        await self._require_task(request.task_id, call, self._tenant(request.tenant, call))
        if request.id is None:
            configs = await self.store.list_push_configs(request.task_id)
            config = configs[0] if configs else None
        else:
            config = await self.store.get_push_config(request.task_id, request.id)
        if config is None:
            raise TaskNotFoundError.of(request.task_id, config_id=request.id or "")
        return config

    async def on_list_task_push_notification_configs(
        self, request: ListTaskPushNotificationConfigsRequest, call: CallContext | None = None
    ) -> ListTaskPushNotificationConfigsResponse:
        """``ListTaskPushNotificationConfigs`` (§3.1.9), paginated if ``pageSize`` is set."""
        self._require_push()
        call = call or CallContext()
        await self._require_task(request.task_id, call, self._tenant(request.tenant, call))
        configs = await self.store.list_push_configs(request.task_id)
        start = _config_offset(configs, request.page_token)
        if not request.page_size:
            return ListTaskPushNotificationConfigsResponse(configs=configs[start:])
        end = start + request.page_size
        token = (
            encode_cursor(end, _CONFIG + (configs[end - 1].id or "")) if end < len(configs) else ""
        )
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
        await self._require_task(request.task_id, call, self._tenant(request.tenant, call))
        await self.store.delete_push_config(request.task_id, request.id)
        self.writer.forget_push_configs(request.task_id)

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
        return self.executor.active_runs()

    async def idle(self) -> None:
        """Wait until no agent execution, no push notification and no write left
        over from a request (failing a task whose turn could not start) is in progress."""
        await self.executor.idle()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self._push is not None:
            await self._push.idle()

    async def aclose(self) -> None:
        """Stop every run, then push delivery (for server shutdown and tests).

        A task still working when its run is stopped is marked failed, so its
        subscribers (here or on another replica) see it end instead of waiting,
        and its webhooks hear of it (queued notifications get
        ``PushDispatcher.drain_timeout`` to go out).
        """
        await self.executor.aclose()
        for pending in list(self._background):
            pending.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self._push is not None:
            await self._push.aclose()


@attrs.frozen(slots=True)
class Repeat:
    """A message its task already has (a client's retry): answered without a turn."""

    task_id: str
    call: CallContext
    tenant: str | None


#: Cursor ids of push-config pages start with this (a ListTasks token is refused).
_CONFIG = "config:"


def _config_offset(configs: list[TaskPushNotificationConfig], token: str | None) -> int:
    """Where a page of push configs starts: after the cursor's config.

    The cursor is ``(position, id)`` of the last config of the previous
    page; if that config was deleted since, the position stands in for it.
    """
    if not token:
        return 0
    issuer = "ListTaskPushNotificationConfigs"
    position, cursor_id = decode_cursor(token, issued_by=issuer)
    if position < 1 or not cursor_id.startswith(_CONFIG):
        raise invalid_page_token(issuer)
    last_id = cursor_id[len(_CONFIG) :]
    for index, config in enumerate(configs):
        if config.id == last_id:
            return index + 1
    return min(position, len(configs))


def _refuse_too_deep(request: SendMessageRequest) -> None:
    """Refuse free-form values nested past :data:`MAX_JSON_DEPTH`, before any task exists.

    Deeper ones were taken, then failed later where the call stack is deeper
    (recording the task: a hang and minutes of retries), or came out
    unreadable over gRPC.
    """
    message = request.message
    values = [("metadata", request.metadata), ("message.metadata", message.metadata)]
    for i, part in enumerate(message.parts):
        values.append((f"message.parts[{i}].metadata", part.metadata))
        if isinstance(part, DataPart):
            values.append((f"message.parts[{i}].data", part.data))
    for field, value in values:
        if value is not None and too_deep(value):
            raise InvalidParamsError.of_field(
                field,
                f"{field} is nested more than {MAX_JSON_DEPTH} levels deep "
                "(the most every A2A binding carries)",
            )


def _opening(run: AgentRun) -> Task | None:
    """The task a new stream of ``run`` starts from, as last known (without history)."""
    if run.first is not None:
        return run.first[1]
    return run.written.task if run.written is not None else None


def _stored_length(history_length: int | None) -> int | None:
    """The history a store needs to read for a request's ``historyLength``."""
    return None if history_length is None or history_length < 0 else history_length
