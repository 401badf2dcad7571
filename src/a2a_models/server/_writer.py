"""Writing tasks: every change goes to the store, the event log, the broker and push.

:class:`TaskWriter` is shared by the engine's operations (a follow-up
message, a cancel) and by the :class:`~a2a_models.server.TaskExecutor` that
runs the agent, so a change is recorded the same way wherever it comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ..errors import InvalidAgentResponseError, TaskNotFoundError
from ..models import (
    JSONObject,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    state_of,
)
from ._agent import CallContext
from ._lifecycle import append_history, apply_event, merge_metadata, replace_task
from ._operations import engine_observer
from ._push import PushDispatcher
from ._run import AgentRun, RunFinished
from ._store import ConcurrentModificationError, StoredTask, TaskStore, accepts_keyword
from ._streams import EventBroker

__all__ = ["TaskWriter", "written"]

#: Attempts of one optimistic write before giving up.
_MAX_ATTEMPTS = 32


class TaskWriter:
    """Applies changes to stored tasks and announces them (broker, push notifications).

    ``new_id`` makes ids (of push configs here; the engine's task ids too).
    """

    def __init__(
        self,
        store: TaskStore,
        broker: EventBroker,
        push: PushDispatcher | None,
        new_id: Callable[[], str],
    ) -> None:
        self.store = store
        self.broker = broker
        self.push = push
        self.new_id = new_id
        #: The store refuses a message its task already has (``update``'s ``new_message``).
        self.refuses_repeats = accepts_keyword(store.update, "new_message")
        #: The store refuses a second task for a first message (``create``'s ``started_by``).
        self.creates_once = accepts_keyword(store.create, "started_by")

    async def get(
        self,
        task_id: str,
        call: CallContext,
        tenant: str | None,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> StoredTask:
        """The caller's task; ``TaskNotFoundError`` if it does not exist or is not theirs.

        ``history_length`` (``None``: all): read only the newest that many history messages.
        ``include_artifacts=False`` is passed on to the store (which must take it).
        """
        read: dict[str, Any] = {"history_length": history_length}
        if not include_artifacts:
            read["include_artifacts"] = False
        stored = await self.store.get(task_id, call.owner, tenant, **read)
        if stored is None:
            # Same answer whether it does not exist or is not the caller's (§3.3.2).
            raise TaskNotFoundError.of(task_id)
        return stored

    def started_by(self, run: AgentRun) -> dict[str, Any]:
        """``create``'s ``started_by`` argument for the task of ``run``, if it has a key
        and the store takes it (a store written before it is passed nothing)."""
        if run.started_by is None or not self.creates_once:
            return {}
        return {"started_by": run.started_by}

    async def created(self, task: Task) -> None:
        """Announce a task just created in the store (its event 1)."""
        await self.broker.publish(task.id, 1, task)
        self.notify(task.id, task, 1)
        observer = engine_observer()
        if observer is not None:
            observer.state_changed(None, task.status.state)

    async def commit(
        self,
        task_id: str,
        owner: str | None,
        tenant: str | None,
        event: StreamResponse,
        *,
        build: Callable[[Task], Task] | None = None,
        logged: bool = True,
        metadata: JSONObject | None = None,
        run: AgentRun | None = None,
        base: StoredTask | None = None,
        history: bool = True,
        new_message: str | None = None,
    ) -> tuple[Task, int]:
        """Apply ``event`` (or ``build``) to the stored task; returns it and the event's seq.

        Optimistic: on a concurrent write, re-read and re-apply. Raises
        :class:`~a2a_models.server.RunFinished` if the task is already terminal
        (unless ``build`` decides). ``logged=False`` changes the snapshot only.
        ``run``: the run whose agent produced ``event``. Its task as the run
        last wrote it (``run.written``) is the base of the write, and the store
        is read only when another write came in between (the version moved on).
        ``base``: likewise the stored task ``build`` is first applied to.
        ``history=False``: ``build`` needs no history and gets the task without
        it (what it appends goes after the stored messages; one already stored,
        same id, is not added again).
        ``new_message``: the id of the client's message ``build`` adds; if the task
        already has it, the store raises :class:`~a2a_models.server.DuplicateMessageError`
        (not retried, nothing written), if it can tell (:attr:`refuses_repeats`).
        A run that holds a lease writes fenced (``run.lease``): once its lease was
        taken again, the store raises :class:`~a2a_models.server.LeaseLostError`,
        which is not retried: nothing is written or published, and the executor
        stops the run.
        """
        error: ConcurrentModificationError | None = None
        # Applying an event needs no history (it only appends to it): read none,
        # so a write costs the size of the event, not of the conversation.
        # ``build`` callers get (and may need) the whole task, unless ``history=False``.
        history_length = None if build is not None and history else 0
        known = run.written if run is not None and build is None else base
        # No ``lease`` argument unless fenced, no ``new_message`` unless the store takes
        # it: a store written before fencing (or before repeats) takes neither.
        options: dict[str, Any] = (
            {"lease": run.lease} if run is not None and run.lease is not None else {}
        )
        if new_message is not None and self.refuses_repeats:
            options["new_message"] = new_message
        state = state_of(event)
        ends = state is not None and (state.is_terminal or state.is_interrupted)
        # The run's write that ends its turn gives its lease up (see AgentRun.release_at_end).
        releasing = run if ends and build is None and run is not None else None
        if releasing is not None and releasing.release_at_end and "lease" in options:
            options["release_lease"] = True
        else:
            releasing = None
        for _ in range(_MAX_ATTEMPTS):
            stored, known = known, None
            reread = False
            task: Task | None = None
            if stored is not None and build is not None:
                task = build(stored.task)
            elif stored is not None:
                try:
                    task = apply_event(stored.task, event)
                except InvalidAgentResponseError:
                    pass  # decided on what the store holds, as without ``run``
            if task is None or stored is None:
                reread = True
                stored = await self.store.get(task_id, owner, tenant, history_length=history_length)
                if stored is None:
                    raise TaskNotFoundError.of(task_id)
                if stored.task.status.state.is_terminal and build is None:
                    raise RunFinished(stored.task)
                task = build(stored.task) if build is not None else apply_event(stored.task, event)
            task = merge_metadata(task, metadata)
            if releasing is not None:
                # Before the write: the keeper then never takes the lease's absence for
                # a loss while its commit's answer is on the way.
                releasing.released = True
            try:
                version = await self.store.update(
                    task,
                    stored.version,
                    event=event if logged else None,
                    history_offset=stored.history_offset,
                    **options,
                )
            except ConcurrentModificationError as exc:
                error = exc
                if releasing is not None:
                    releasing.released = False
                continue
            except BaseException:
                if releasing is not None:
                    releasing.released = False
                raise
            seq = stored.last_seq + 1 if logged else stored.last_seq
            if run is not None and build is None:
                if run.history is not None:
                    # The messages the write added, as the store keeps them (a known id
                    # is not added twice); unknown once the task was read again.
                    run.history = None if reread else append_history(run.history, task.history)
                run.ended = ends
                run.written = written(
                    StoredTask(
                        task=task,
                        version=version,
                        owner=owner,
                        tenant=tenant,
                        last_seq=seq,
                        history_offset=stored.history_offset,
                    )
                )
            if not logged:
                return task, seq
            observer = engine_observer()
            if observer is not None and task.status.state != stored.task.status.state:
                observer.state_changed(stored.task.status.state, task.status.state)
            await self.broker.publish(task_id, seq, event)
            self.notify(task_id, event, seq, task)
            return task, seq
        assert error is not None
        raise error

    def notify(
        self, task_id: str, event: StreamResponse, seq: int | None = None, task: Task | None = None
    ) -> None:
        """Hand a state change (logged as event ``seq``, if known; ``task``: the task it
        made) to the push dispatcher."""
        # Push notifications carry what a stream does (§4.3.3): state changes and artifacts.
        if self.push is not None and (
            state_of(event) is not None or isinstance(event, TaskArtifactUpdateEvent)
        ):
            self.push.dispatch(task_id, event, seq, task)

    async def register_request_push(self, run: AgentRun) -> None:
        """Store the push config a ``SendMessage`` request carries, if any."""
        config = run.context.configuration
        if config is None or config.task_push_notification_config is None:
            return
        push = config.task_push_notification_config
        if self.push is not None:  # the URL was checked before the task was created
            await self.push.check(push, run.task_id, url=False)
        await self.store_push_config(
            run.task_id,
            attrs.evolve(push, id=push.id or self.new_id(), task_id=run.task_id, tenant=run.tenant),
            run.context.call.version,
        )

    async def store_push_config(
        self, task_id: str, config: TaskPushNotificationConfig, version: str
    ) -> TaskPushNotificationConfig:
        """Store ``config``, set through a request of protocol ``version``: its webhook gets
        what that version sends (a store that keeps no dialect keeps 1.0 configs)."""
        dialect = "0.3" if version == "0.3" else "1.0"
        if dialect != "1.0" and accepts_keyword(self.store.set_push_config, "dialect"):
            stored = await self.store.set_push_config(task_id, config, dialect=dialect)
        else:
            stored = await self.store.set_push_config(task_id, config)
        self.forget_push_configs(task_id)
        return stored

    def forget_push_configs(self, task_id: str) -> None:
        """The task's push configs changed: its next notification reads them."""
        if self.push is not None:
            self.push.forget(task_id)


def written(stored: StoredTask) -> StoredTask:
    """``stored`` as a run keeps it between its writes: without its history (an
    event only appends to it), which then starts after the messages left out."""
    if not stored.task.history:
        return stored
    return attrs.evolve(
        stored,
        task=replace_task(stored.task, history=()),
        history_offset=stored.history_offset + len(stored.task.history),
    )
