"""Task storage: the abstract :class:`TaskStore` and a bounded in-memory one.

A store keeps, per task, one record: the latest :class:`~a2a_models.Task`
snapshot, its ``version``, the caller that owns it (``owner``/``tenant``), an
append-only event log and the task's push-notification configs.

Concurrency is optimistic: every write names the version it was computed
from and fails with :class:`ConcurrentModificationError` if the record moved
on meanwhile. The engine re-reads, re-applies its event and tries again.

Every write to a record (``create``, ``update``, ``append_event``) increases
its version by exactly one. Event sequence numbers start at 1 and grow by
exactly one per appended event, so ``update(task, v, event=e)`` succeeding
means ``e`` got ``last_seq + 1`` of the record read at version ``v``. A
database store implements ``update`` with ``event`` as one transaction:
snapshot and log must never disagree, because subscribers resume from
``(snapshot, last_seq)``.
"""

from __future__ import annotations

import abc
import inspect
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NamedTuple, TypeAlias

import attrs
from sortedcontainers import SortedList

from .._state import TaskState
from ..errors import A2AError, InternalError, TaskNotFoundError
from ..models import Message, StreamResponse, Task, TaskPushNotificationConfig
from ._lifecycle import extend_history, replace_task
from .paging import (
    TaskPage,
    list_cursor,
    status_key,
    task_page,
    timestamp_key,
)

__all__ = [
    "ConcurrentModificationError",
    "DuplicateMessageError",
    "InMemoryTaskStore",
    "LeaseLostError",
    "LoggedEvent",
    "PUSH_DIALECTS",
    "PushTarget",
    "StoredTask",
    "TaskPage",
    "TaskStore",
    "TaskStoreFullError",
    "TaskStoreUnavailableError",
    "ActiveTaskLimitError",
]

#: One entry of a task's event log: ``(seq, event)``.
LoggedEvent: TypeAlias = tuple[int, StreamResponse]
_Events: TypeAlias = list[LoggedEvent]
_Configs: TypeAlias = list[TaskPushNotificationConfig]

#: The protocol dialects a push config can be created in; the body its webhook gets
#: follows it (1.0: a StreamResponse; 0.3, JSON-RPC or HTTP+JSON alike: the Task).
PUSH_DIALECTS = ("1.0", "0.3")


class PushTarget(NamedTuple):
    """A stored push config and the protocol dialect it was created in (``"1.0"`` or
    ``"0.3"``), which decides what its webhook is sent."""

    config: TaskPushNotificationConfig
    dialect: str = "1.0"


_Targets: TypeAlias = list[PushTarget]


class ConcurrentModificationError(A2AError):
    """A write named a stale version: someone else changed the task first."""

    def __init__(self, task_id: str, expected_version: int, actual_version: int) -> None:
        self.task_id = task_id
        self.expected_version = expected_version
        self.actual_version = actual_version
        super().__init__(
            f"task {task_id!r} is at version {actual_version}, "
            f"the write expected version {expected_version}"
        )


class DuplicateMessageError(A2AError):
    """A write that adds a client's message was refused: the task's history already
    holds a message with that id (see ``TaskStore.update``'s ``new_message``).

    The store raises it in the step that would have appended the message, and
    writes nothing; the engine then answers the message as the repeat it is
    (a client's retry: no second turn), see ``RequestHandler.on_send_message``.
    ``create`` raises it too, for a ``started_by`` a task of the scope was created
    with: ``task_id`` is then that task's (a retried first message: no second task).
    """

    def __init__(self, task_id: str, message_id: str) -> None:
        self.task_id = task_id
        self.message_id = message_id
        super().__init__(f"task {task_id!r} already has a message with id {message_id!r}")

    @classmethod
    def started(cls, task_id: str, task: Task) -> DuplicateMessageError:
        """``create``'s refusal of ``task``: its first message (the client's, which starts
        it) already started the task ``task_id``."""
        return cls(task_id, task.history[0].message_id if task.history else "")


class LeaseLostError(A2AError):
    """A fenced write was refused: the run's lease on the task was taken after it.

    A run that holds a lease (see :class:`~a2a_models.server.LeasingExecutor`)
    names the epoch of its acquisition in every write (``TaskStore.update``'s
    ``lease``); once another acquisition came after it (the run's worker stalled
    past the lease and another took the task over), the store refuses the write
    with this error, in the transaction that checks the version, and writes
    nothing. The writer does not retry it: the executor stops that run at once.
    """

    def __init__(self, task_id: str, lease: int, actual: int) -> None:
        self.task_id = task_id
        self.lease = lease
        self.actual = actual
        super().__init__(
            f"task {task_id!r}: the write holds lease epoch {lease}, the task's lease "
            f"was taken again since (epoch {actual})"
        )


class TaskStoreFullError(InternalError):
    """The store holds its maximum number of tasks and none can be evicted."""

    default_message = "Task store is full"


class ActiveTaskLimitError(InternalError):
    """The caller already has the most active (non-terminal) tasks a store allows one owner.

    The spec files a limit like this under system errors (rate limit
    exceeded): JSON-RPC -32603; the HTTP+JSON binding answers 429 Too Many
    Requests (gRPC ``RESOURCE_EXHAUSTED``). ``data`` says the limit.
    """

    default_message = "Too many active tasks"
    http_status = 429
    grpc_status = "RESOURCE_EXHAUSTED"

    @classmethod
    def of(cls, limit: int) -> ActiveTaskLimitError:
        return cls(
            f"you have {limit} active tasks, the most this server runs for one caller; "
            "retry when some have finished (or cancel some)",
            {"activeTaskLimit": limit},
        )


class TaskStoreUnavailableError(InternalError):
    """The task store could not be used for this request: the database is down, or did
    not answer within the store's limit. JSON-RPC -32603; HTTP+JSON 503 Service
    Unavailable (gRPC ``UNAVAILABLE``): the request may be retried later."""

    default_message = "the task store is unavailable"
    http_status = 503
    grpc_status = "UNAVAILABLE"


#: The states that count as active for :class:`ActiveTaskLimitError`.
ACTIVE_STATES = tuple(s for s in TaskState if not s.is_terminal and s is not TaskState.UNSPECIFIED)


def check_active_limit(limit: int | None) -> int | None:
    """``limit`` if it is a valid per-owner active-task limit (``None``: no limit).

    Raises :class:`ValueError` for a limit below 1; stores call it on their
    ``max_active_tasks_per_owner`` argument.
    """
    if limit is not None and limit < 1:
        raise ValueError("max_active_tasks_per_owner must be at least 1 (or None for no limit)")
    return limit


@attrs.frozen(slots=True, kw_only=True)
class StoredTask:
    """A task as read from the store, with what the engine needs to write it back."""

    task: Task
    #: Revision of the record; the next write must name it.
    version: int
    owner: str | None
    tenant: str | None
    #: Sequence number of the newest logged event ``task`` already reflects (0: none).
    last_seq: int = 0
    #: How many history messages precede ``task.history`` (read with a
    #: ``history_length``): ``task.history[0]`` is message number ``history_offset``.
    history_offset: int = 0


class TaskStore(abc.ABC):
    """Abstract async storage of tasks, their event logs and push configs.

    Visibility is scoped by ``(owner, tenant)``: a task created for one owner
    is ``None``/absent for every other one. The per-task methods that take no
    owner (``update``, the event log, push configs) are called by the engine
    only after it has read the task with the caller's scope.
    """

    @abc.abstractmethod
    async def get(
        self,
        task_id: str,
        owner: str | None,
        tenant: str | None = None,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> StoredTask | None:
        """The task with ``task_id`` if it exists *and* belongs to ``(owner, tenant)``.

        ``history_length`` (``None``: all) reads only the newest that many
        history messages; ``StoredTask.history_offset`` says how many precede them.
        ``include_artifacts=False``: the caller needs no artifacts, so a store need
        not read them (a database store reads none; the task may still carry them).
        The engine passes it only to a store whose ``get`` takes it (by name, or
        through ``**kwargs``): a store written before it keeps working.
        """

    @abc.abstractmethod
    async def create(
        self,
        task: Task,
        owner: str | None,
        tenant: str | None = None,
        *,
        event: StreamResponse | None = None,
    ) -> StoredTask:
        """Store a new task at version 1; ``event`` (if any) becomes log entry 1.

        Raises :class:`TaskStoreFullError` if the store cannot take it and
        :class:`ConcurrentModificationError` if the id is already taken.

        A store may also take the keyword ``started_by`` (``bytes``: the engine's
        digest of the caller and the ``messageId`` of the client's message that
        starts the task: a 16-byte BLAKE2b digest): if a task of
        ``(owner, tenant)`` was created with the same ``started_by``, the store
        raises :class:`DuplicateMessageError` naming that task and writes nothing,
        in the atomic step that checks the id (two creations at once: one task).
        The engine passes it only to a store whose ``create`` takes it: with a
        store written before it, a retried first message starts a second task
        (unless the first is still running in this process).
        """

    @abc.abstractmethod
    async def update(
        self,
        task: Task,
        expected_version: int,
        *,
        event: StreamResponse | None = None,
        history_offset: int = 0,
        lease: int | None = None,
        new_message: str | None = None,
        release_lease: bool = False,
    ) -> int:
        """Replace the snapshot of ``task.id`` and return the new version.

        History is append-only: ``task.history`` holds the messages from
        number ``history_offset`` on (the ``history_offset`` of the read it was
        computed from); those beyond the stored ones are appended, and a
        message whose id the history already has is not added again.
        ``event`` is appended to the log in the same atomic step. Raises
        :class:`ConcurrentModificationError` if the record is not at
        ``expected_version`` and :class:`~a2a_models.errors.TaskNotFoundError`
        if it does not exist.

        ``lease`` (a fenced write, by a run that holds the task's lease): the
        epoch its lease acquisition returned. A store that keeps leases checks
        it in the same atomic step and raises :class:`LeaseLostError` (writing
        nothing) if the lease was taken again since. The engine passes it only
        to stores whose ``acquire_lease`` returned an epoch (an ``int``) and
        whose ``update`` takes ``lease``: a store written before fencing keeps
        working, unfenced. A store without leases ignores it.

        ``new_message``: the id of a message of ``task.history`` that the write
        adds (a client's message accepted by the task). If the stored history
        already has a message with that id, the store raises
        :class:`DuplicateMessageError` and writes nothing, in the atomic step
        whose look-up drops repeated ids anyway (after the version check: a write
        that also named a stale version raises
        :class:`ConcurrentModificationError`). The engine passes it only to a
        store whose ``update`` takes it: with a store written before it, a
        repeated message runs a turn again.

        ``release_lease`` (with ``lease``): the write ends the run's turn and gives its
        lease up in the same atomic step (a store that keeps leases clears the task's
        lease owner and expiry, once the epoch check passed), instead of a
        ``release_lease`` call of its own afterwards. The engine passes it only to a
        store whose ``update`` takes it; a store without leases ignores it.
        """

    @abc.abstractmethod
    async def list(
        self,
        owner: str | None,
        tenant: str | None = None,
        *,
        context_id: str | None = None,
        status: TaskState | None = None,
        status_timestamp_after: datetime | None = None,
        page_size: int = 50,
        page_token: str | None = None,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> TaskPage:
        """The tasks of ``(owner, tenant)`` matching the filters, newest status first.

        ``history_length`` (``None``: all) keeps the newest that many history
        messages of each task (a database store reads no more than that).
        ``include_artifacts=False``: the caller drops the artifacts, so a store
        need not read them (a database store reads none; the tasks may still
        carry them). The engine passes it only to a store whose ``list`` takes
        it (by name, or through ``**kwargs``): a store written before it keeps working.

        Ties are broken by task id. ``status_timestamp_after`` keeps tasks whose
        status timestamp is at or after it. ``page_token`` is a cursor from an
        earlier page; a token this store did not issue raises
        :class:`~a2a_models.errors.InvalidParamsError`.
        """

    @abc.abstractmethod
    async def append_event(self, task_id: str, event: StreamResponse) -> int:
        """Append ``event`` to the task's log without changing the snapshot; returns its seq."""

    @abc.abstractmethod
    async def events_after(self, task_id: str, seq: int, *, limit: int | None = None) -> _Events:
        """The logged events with a sequence number greater than ``seq``, in order; with
        ``limit``, the first that many of them (streams read the log in pages; a store
        written before ``limit`` is read to the end)."""

    async def find_message(self, task_id: str, message_id: str) -> Message | None:
        """The message of the task's history with id ``message_id`` (``None``: none).

        Reads that one message, however long the history (a database store looks
        it up by its ``(task, message id)`` index). The engine asks it when a
        message names a task that does not accept it now, or that
        :meth:`update` found it already has (``new_message``): a repeated message
        is answered without a turn. This default, for a store written before the
        method, knows of no message (a repeated one is refused or run as before).
        """
        return None

    async def event_at(self, task_id: str, seq: int) -> StreamResponse | None:
        """The logged event number ``seq`` (``None``: no such event, or no such task).

        Reads that one event, whatever follows it (the push dispatcher's resume). This
        default reads the log from ``seq`` to its end, for a store written before the
        method: a store overrides it with a read of the one event.
        """
        return next(
            (event for at, event in await self.events_after(task_id, seq - 1) if at == seq), None
        )

    def no_push_configs_at(self, task_id: str, seq: int) -> bool:
        """Whether the task had no push config when this store logged its event ``seq``
        (found in the transaction that logged it; ``False``: not known).

        The push dispatcher then reads no configs for that event: a config created
        after it is owed only the events logged after. This default knows of none:
        the configs are read for every status, as for a store written before it.
        """
        return False

    @abc.abstractmethod
    async def set_push_config(
        self, task_id: str, config: TaskPushNotificationConfig, *, dialect: str = "1.0"
    ) -> TaskPushNotificationConfig:
        """Store ``config`` (which has an ``id``) for the task, replacing one with that id
        (and its dialect: a config replaced through 0.3 is a 0.3 one).

        ``dialect``: the protocol dialect the config was created in (see
        :class:`PushTarget`). The engine passes it only to a store whose method takes
        it (:func:`accepts_keyword`): a store written before it keeps 1.0 configs.
        """

    @abc.abstractmethod
    async def get_push_config(
        self, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        """The task's config with ``config_id``, if any."""

    @abc.abstractmethod
    async def list_push_configs(self, task_id: str) -> _Configs:
        """Every config of the task, in creation order."""

    @abc.abstractmethod
    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        """Remove a config; removing an absent one is not an error."""

    async def list_push_targets(self, task_id: str) -> _Targets:
        """Every config of the task with its dialect, in creation order (what the push
        dispatcher reads). This default, for a store written before dialects were
        kept, has every config 1.0."""
        return [PushTarget(config) for config in await self.list_push_configs(task_id)]

    async def get_push_target(self, task_id: str, config_id: str) -> PushTarget | None:
        """The task's config with ``config_id`` and its dialect, if any (the default:
        1.0, as :meth:`list_push_targets`)."""
        config = await self.get_push_config(task_id, config_id)
        return None if config is None else PushTarget(config)


def accepts_keyword(method: Callable[..., object], name: str) -> bool:
    """Whether ``method`` takes the keyword argument ``name`` (by name, or through
    ``**kwargs``); for the arguments added to :class:`TaskStore` methods over time,
    which a store written before them does not take. A wrapper of a store's method
    that takes ``**kwargs`` names the method it calls in ``__wrapped__``
    (``functools.wraps``), and is judged by it."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in parameters)


# --- listing order (the scheme is in .paging) ------------------------------------------


def _same(task: Task) -> Task:
    return task


# --- push configs -----------------------------------------------------------------------


def push_config_id(config: TaskPushNotificationConfig) -> str:
    """The id a store keys ``config`` by (the engine gives every config one before storing it)."""
    if not config.id:
        raise ValueError("a stored push config needs an id")
    return config.id


# --- in memory --------------------------------------------------------------------------


@attrs.define(slots=True, kw_only=True)
class _Record:
    #: The task without its history (``history`` holds it, oldest first).
    head: Task
    version: int
    owner: str | None
    tenant: str | None
    history: list[Message] = attrs.field(factory=list)
    events: _Events = attrs.field(factory=list)
    push: dict[str, PushTarget] = attrs.field(factory=dict)
    #: The history's messages by id (a message is never added twice).
    by_id: dict[str, Message] = attrs.field(factory=dict)
    #: The listing key and filter values the record is indexed under (see _Index).
    indexed: tuple[tuple[int, str], str | None, TaskState] | None = None
    #: The whole task, built on the first whole read after a change.
    full: Task | None = None
    #: The history as a tuple as of the last whole read or write: a prefix of
    #: ``history`` (which only grows), so a whole read copies the messages
    #: added since onto it instead of building it again (see ``stored``).
    whole: tuple[Message, ...] = ()
    #: The last partial read ``(history_length, task)``, until a change.
    tail: tuple[int, Task] | None = None
    #: ``create``'s ``started_by`` (``None``: none).
    started_by: bytes | None = None

    @classmethod
    def of(cls, task: Task, owner: str | None, tenant: str | None) -> _Record:
        head = replace_task(task, history=()) if task.history else task
        record = cls(head=head, version=1, owner=owner, tenant=tenant, full=task)
        record.history.extend(task.history)  # as given (a write never adds a known id)
        for message in task.history:
            record.by_id.setdefault(message.message_id, message)
        record.whole = task.history
        return record

    def set(self, task: Task, offset: int) -> None:
        """Take ``task`` (its history from message ``offset`` on) as the new state."""
        new = task.history[max(0, len(self.history) - offset) :]
        added = 0
        for message in new:
            if message.message_id not in self.by_id:
                self.by_id[message.message_id] = message
                self.history.append(message)
                added += 1
        # Its items are the task's, validated: no pass over the history to check them.
        self.head = replace_task(task, history=()) if task.history else task
        # Reuse ``task`` as the whole task when it is exactly that (then its
        # history is the very tuple the engine built, whose ids it keeps).
        whole = offset == 0 and added == len(new) and len(task.history) == len(self.history)
        self.full = task if whole else None
        if whole:
            self.whole = task.history
        self.tail = None

    def stored(self, history_length: int | None = None) -> StoredTask:
        offset = 0
        if history_length is None or history_length >= len(self.history):
            if self.full is None:
                # The messages added since the last whole read or write, appended to
                # its tuple: O(added) Python work (the copy of the tuple is C's).
                history = extend_history(self.whole, self.history[len(self.whole) :])
                self.whole = history
                self.full = replace_task(self.head, history=history)
            task = self.full
        else:
            offset = len(self.history) - history_length
            if self.tail is not None and self.tail[0] == history_length:
                task = self.tail[1]
            else:
                tail = tuple(self.history[offset:])
                task = replace_task(self.head, history=tail) if tail else self.head
                self.tail = (history_length, task)
        return StoredTask(
            task=task,
            version=self.version,
            owner=self.owner,
            tenant=self.tenant,
            last_seq=len(self.events),
            history_offset=offset,
        )


#: An ordered index of listing keys ``(-status_key, task_id)``: ascending = listing order.
_Ordered: TypeAlias = "SortedList[tuple[int, str]]"
_IndexKey: TypeAlias = tuple[str | None, str | None, str | None, TaskState | None]


class _Index:
    """Each task's listing key in four ordered lists: per scope, per scope and context,
    per scope and state, per scope, context and state.

    A listing with any combination of the context and status filters reads
    one list; the timestamp filter and the page cursor are binary searches
    in it. A page and its exact total cost O(log n + page size), whatever the
    number of tasks.
    """

    def __init__(self) -> None:
        self._lists: dict[_IndexKey, _Ordered] = {}

    @staticmethod
    def _keys(record: _Record, context: str | None, state: TaskState) -> tuple[_IndexKey, ...]:
        o, t = record.owner, record.tenant
        keys = (
            (o, t, None, None),
            (o, t, context, None),
            (o, t, None, state),
            (o, t, context, state),
        )
        return tuple(dict.fromkeys(keys))  # a task without a context: two distinct lists

    def add(self, record: _Record) -> None:
        task = record.head
        entry = (-status_key(task), task.id)
        indexed = (entry, task.context_id, task.status.state)
        if record.indexed == indexed:
            return
        self.remove(record)
        for key in self._keys(record, task.context_id, task.status.state):
            ordered = self._lists.get(key)
            if ordered is None:
                ordered = self._lists[key] = SortedList()
            ordered.add(entry)
        record.indexed = indexed

    def remove(self, record: _Record) -> None:
        if record.indexed is None:
            return
        entry, context, state = record.indexed
        for key in self._keys(record, context, state):
            ordered = self._lists.get(key)
            if ordered is not None and entry in ordered:
                ordered.remove(entry)
                if not ordered:
                    del self._lists[key]
        record.indexed = None

    def count_states(
        self, owner: str | None, tenant: str | None, states: Sequence[TaskState]
    ) -> int:
        """How many tasks of ``(owner, tenant)`` are in one of ``states``."""
        return sum(len(self._lists.get((owner, tenant, None, s), ())) for s in states)

    def page(
        self,
        key: _IndexKey,
        after_key: int | None,
        cursor: tuple[int, str] | None,
        limit: int,
    ) -> tuple[list[str], int]:
        """The ids of the next ``limit`` matches after ``cursor``, and how many match in all."""
        ordered = self._lists.get(key)
        if ordered is None:
            return [], 0
        # Matches are a prefix: status_key >= after_key <=> -status_key <= -after_key.
        end = len(ordered) if after_key is None else ordered.bisect_left((-after_key + 1, ""))
        start = 0 if cursor is None else ordered.bisect_right((-cursor[0], cursor[1]))
        stop = min(end, start + limit)
        ids = [entry[1] for entry in ordered.islice(start, stop)] if start < stop else []
        return ids, end


class InMemoryTaskStore(TaskStore):
    """A :class:`TaskStore` in a dict, bounded in size and in how long it keeps finished tasks.

    * ``terminal_ttl`` (seconds): a task that reached a terminal state is
      forgotten that long afterwards (``None``: kept until evicted for space).
    * ``max_tasks``: when full, creating a task first evicts the terminal
      tasks that finished longest ago. Active and interrupted tasks are never
      evicted; if every stored task is one, ``create`` raises
      :class:`TaskStoreFullError`.
    * ``clock``: monotonic seconds, injectable for tests.
    * ``max_active_tasks_per_owner``: creating a non-terminal task for an
      ``(owner, tenant)`` that already has that many raises
      :class:`ActiveTaskLimitError` (``None``: no limit).

    Evicting a task drops its event log and push configs too.
    """

    def __init__(
        self,
        *,
        max_tasks: int | None = 10_000,
        terminal_ttl: float | None = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        max_active_tasks_per_owner: int | None = None,
    ) -> None:
        if max_tasks is not None and max_tasks < 1:
            raise ValueError("max_tasks must be at least 1 (or None for no bound)")
        if terminal_ttl is not None and terminal_ttl < 0:
            raise ValueError("terminal_ttl must not be negative (or None to keep forever)")
        self.max_tasks = max_tasks
        self.terminal_ttl = terminal_ttl
        self.max_active_tasks_per_owner = check_active_limit(max_active_tasks_per_owner)
        self._clock = clock
        self._records: dict[str, _Record] = {}
        self._index = _Index()
        # Terminal task ids with the time they finished, oldest first (dicts keep order).
        self._finished: dict[str, float] = {}
        #: The tasks created with a ``started_by``, by ``(owner, tenant, started_by)``.
        self._started: dict[tuple[str | None, str | None, bytes], str] = {}

    def __len__(self) -> int:
        """Number of tasks currently held (after evicting expired ones)."""
        self._evict_expired()
        return len(self._records)

    # -- eviction ------------------------------------------------------------------------

    def _evict_expired(self) -> None:
        if self.terminal_ttl is None or not self._finished:
            return
        deadline = self._clock() - self.terminal_ttl
        while self._finished:
            task_id, finished_at = next(iter(self._finished.items()))
            if finished_at > deadline:
                break
            self._drop(task_id)

    def _drop(self, task_id: str) -> None:
        self._finished.pop(task_id, None)
        record = self._records.pop(task_id, None)
        if record is not None:
            self._index.remove(record)
            if record.started_by is not None:
                self._started.pop((record.owner, record.tenant, record.started_by), None)

    def _make_room(self) -> None:
        if self.max_tasks is None:
            return
        while len(self._records) >= self.max_tasks and self._finished:
            self._drop(next(iter(self._finished)))
        if len(self._records) >= self.max_tasks:
            raise TaskStoreFullError(
                f"task store is full: all {self.max_tasks} stored tasks are still active; "
                "retry when some have finished"
            )

    def _note_state(self, record: _Record) -> None:
        if record.head.status.state.is_terminal and record.head.id not in self._finished:
            self._finished[record.head.id] = self._clock()

    def _record(self, task_id: str) -> _Record:
        self._evict_expired()
        record = self._records.get(task_id)
        if record is None:
            raise TaskNotFoundError.of(task_id)
        return record

    # -- tasks ---------------------------------------------------------------------------

    async def get(
        self,
        task_id: str,
        owner: str | None,
        tenant: str | None = None,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,  # the task is in memory: nothing to skip reading
    ) -> StoredTask | None:
        self._evict_expired()
        record = self._records.get(task_id)
        if record is None or record.owner != owner or record.tenant != tenant:
            return None  # absent and not yours look the same
        return record.stored(history_length)

    async def create(
        self,
        task: Task,
        owner: str | None,
        tenant: str | None = None,
        *,
        event: StreamResponse | None = None,
        started_by: bytes | None = None,
    ) -> StoredTask:
        self._evict_expired()
        if task.id in self._records:
            raise ConcurrentModificationError(task.id, 0, self._records[task.id].version)
        started = None if started_by is None else (owner, tenant, started_by)
        if started is not None and started in self._started:
            raise DuplicateMessageError.started(self._started[started], task)
        limit = self.max_active_tasks_per_owner
        if (
            limit is not None
            and not task.status.state.is_terminal
            and self._index.count_states(owner, tenant, ACTIVE_STATES) >= limit
        ):
            raise ActiveTaskLimitError.of(limit)
        self._make_room()
        record = _Record.of(task, owner, tenant)
        if event is not None:
            record.events.append((1, event))
        self._records[task.id] = record
        if started is not None:
            record.started_by = started_by
            self._started[started] = task.id
        self._index.add(record)
        self._note_state(record)
        return record.stored()

    async def update(
        self,
        task: Task,
        expected_version: int,
        *,
        event: StreamResponse | None = None,
        history_offset: int = 0,
        lease: int | None = None,  # no leases in memory: nothing to fence
        new_message: str | None = None,
        release_lease: bool = False,  # nor to give up
    ) -> int:
        record = self._record(task.id)
        if record.version != expected_version:
            raise ConcurrentModificationError(task.id, expected_version, record.version)
        if new_message is not None and new_message in record.by_id:
            raise DuplicateMessageError(task.id, new_message)
        record.set(task, history_offset)
        record.version += 1
        if event is not None:
            record.events.append((len(record.events) + 1, event))
        self._index.add(record)
        self._note_state(record)
        return record.version

    async def list(
        self,
        owner: str | None,
        tenant: str | None = None,
        *,
        context_id: str | None = None,
        status: TaskState | None = None,
        status_timestamp_after: datetime | None = None,
        page_size: int = 50,
        page_token: str | None = None,
        history_length: int | None = None,
        include_artifacts: bool = True,  # the tasks are in memory: nothing to skip reading
    ) -> TaskPage:
        cursor = list_cursor(page_size, page_token)
        self._evict_expired()
        after_key = (
            None if status_timestamp_after is None else timestamp_key(status_timestamp_after)
        )
        ids, total = self._index.page(
            (owner, tenant, context_id, status), after_key, cursor, page_size + 1
        )
        rows = [self._records[task_id].stored(history_length).task for task_id in ids]
        return task_page(rows, page_size, total, _same)

    # -- event log -----------------------------------------------------------------------

    async def append_event(self, task_id: str, event: StreamResponse) -> int:
        record = self._record(task_id)
        seq = len(record.events) + 1
        record.events.append((seq, event))
        record.version += 1
        return seq

    async def events_after(self, task_id: str, seq: int, *, limit: int | None = None) -> _Events:
        self._evict_expired()
        record = self._records.get(task_id)
        if record is None:
            return []
        start = max(seq, 0)
        return record.events[start : None if limit is None else start + limit]

    async def find_message(self, task_id: str, message_id: str) -> Message | None:
        self._evict_expired()
        record = self._records.get(task_id)
        return None if record is None else record.by_id.get(message_id)

    async def event_at(self, task_id: str, seq: int) -> StreamResponse | None:
        self._evict_expired()
        record = self._records.get(task_id)
        if record is None or not 0 < seq <= len(record.events):
            return None
        return record.events[seq - 1][1]

    # -- push configs --------------------------------------------------------------------

    async def set_push_config(
        self, task_id: str, config: TaskPushNotificationConfig, *, dialect: str = "1.0"
    ) -> TaskPushNotificationConfig:
        if dialect not in PUSH_DIALECTS:
            raise ValueError(f"push config dialect {dialect!r}: expected one of {PUSH_DIALECTS}")
        self._record(task_id).push[push_config_id(config)] = PushTarget(config, dialect)
        return config

    async def get_push_config(
        self, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        target = await self.get_push_target(task_id, config_id)
        return None if target is None else target.config

    async def list_push_configs(self, task_id: str) -> _Configs:
        return [target.config for target in await self.list_push_targets(task_id)]

    async def get_push_target(self, task_id: str, config_id: str) -> PushTarget | None:
        self._evict_expired()
        record = self._records.get(task_id)
        return None if record is None else record.push.get(config_id)

    async def list_push_targets(self, task_id: str) -> _Targets:
        self._evict_expired()
        record = self._records.get(task_id)
        return [] if record is None else list(record.push.values())

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        self._evict_expired()
        record = self._records.get(task_id)
        if record is not None:
            record.push.pop(config_id, None)
