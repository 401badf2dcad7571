"""The base of the SQL stores: :class:`SQLTaskStore`, what a task store does the
same whatever the SQL dialect (ids a database cannot hold, scoping, caches of
histories and artifacts read, push configs, pruning in batches), and the
:class:`TaskRead`, :class:`NewTask` and :class:`TaskWrite` a store's SQL carries out."""

from __future__ import annotations

import abc
import asyncio
import builtins
import functools
import inspect
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar, Self, TypeAlias

from .._closing import AsyncClosing
from .._state import TaskState
from ..errors import InvalidParamsError, TaskNotFoundError
from ..models import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    state_of,
)
from ..server import (
    PUSH_DIALECTS,
    ConcurrentModificationError,
    LeaseLostError,
    PushTarget,
    StoredTask,
    TaskPage,
    TaskStore,
    extend_history,
    push_config_id,
    replace_task,
)
from ..server.paging import task_page
from ._common import (
    ArtifactWrite,
    FetchedTask,
    Incarnation,
    ListSQL,
    MessageRow,
    PageRow,
    all_messages,
    artifact_rows,
    as_seconds,
    column_value,
    decode_config,
    decode_message,
    decode_task,
    decode_with_history,
    encode_config,
    encode_head,
    own_message,
    row_suffix,
    scope_key,
    storable,
)
from ._eventlog import compact_event
from ._pieces import ArtifactAppend, parts_appended

__all__ = [
    "FIRST_EPOCH",
    "PRUNE_BATCH",
    "ArtifactReads",
    "HistoryCache",
    "NewTask",
    "Owed",
    "PushlessSpans",
    "SQLTaskStore",
    "TaskRead",
    "TaskWrite",
]


class HistoryCache:
    """The decoded histories of the tasks read or written whole most recently, by task id.

    History rows never change once written (a task's history only grows), so
    a whole read of a task seen before decodes only the messages added since,
    and hands out the tuple it has (a write of a whole history keeps it: the
    engine's own tuple, whose message ids the engine keeps, see
    :func:`~a2a_models.server.extend_history`). The messages a write appends
    are kept aside until the next whole read, which copies the history once
    for all of them. An entry is only ever a prefix of the task's history:
    every read still asks the database how many messages the task has and
    reads the rows beyond the entry, so a message another store instance (a
    replica) added is seen. An entry belongs to one row (its
    :data:`~._common.Incarnation`): a task deleted and created again with the
    same id is read whole.

    Bounded: ``max_tasks`` tasks and ``max_messages`` messages in all; a
    history longer than ``max_messages // 4`` is not kept (its whole reads
    read every row again). The messages are the tasks' own objects: the cost
    is their memory, held that much longer.
    """

    def __init__(self, max_tasks: int = 4096, max_messages: int = 200_000) -> None:
        self.max_tasks = max_tasks
        self.max_messages = max_messages
        #: ``task id: (messages, the history as a tuple, messages written since, row)``.
        self._entries: OrderedDict[str, _HistoryEntry] = OrderedDict()
        self._messages = 0

    def get(self, task_id: str) -> _HistoryEntry | None:
        """``(messages, the first of them as a tuple, the others, row)`` of a task, if known."""
        entry = self._entries.get(task_id)
        if entry is not None:
            self._entries.move_to_end(task_id)
        return entry

    def pop(self, task_id: str) -> None:
        entry = self._entries.pop(task_id, None)
        if entry is not None:
            self._messages -= entry[0]

    def remember(
        self,
        task_id: str,
        row: Incarnation,
        count: int,
        history: tuple[Message, ...],
        pending: tuple[Message, ...] = (),
    ) -> None:
        self.pop(task_id)
        if len(history) + len(pending) != count or count > self.max_messages // 4:
            return
        self._entries[task_id] = (count, history, pending, row)
        self._messages += count
        while self._entries and (
            len(self._entries) > self.max_tasks or self._messages > self.max_messages
        ):
            _, (dropped, _, _, _) = self._entries.popitem(last=False)
            self._messages -= dropped

    def wrote(
        self,
        task_id: str,
        row: Incarnation,
        before: int,
        added: Sequence[Message] | None,
        whole: tuple[Message, ...] | None,
    ) -> None:
        """A write to ``row`` took the task's history from ``before`` messages to
        ``before + len(added)``.

        ``added``: the messages appended, in order (``None``: not known).
        ``whole``: the whole history after the write, if the write had it.
        """
        entry = self._entries.get(task_id)
        if entry is not None and entry[3] != row:
            self.pop(task_id)  # an entry of a row deleted since
            entry = None
        if added is None:
            return  # the entry, if any, is still a prefix
        if whole is not None and len(whole) == before + len(added):
            self.remember(task_id, row, len(whole), whole)
            return
        if entry is not None and entry[0] == before and added:
            count, history, pending, _ = entry
            self.remember(task_id, row, count + len(added), history, pending + tuple(added))


#: A :class:`HistoryCache` entry: ``(messages, the first of them as a tuple, the
#: others, the row they are of)``.
_HistoryEntry = tuple[int, tuple[Message, ...], tuple[Message, ...], Incarnation]


class ArtifactReads:
    """The artifacts of the tasks read or written most recently, by task id, with the
    version read.

    A write computed from such a read keeps the artifacts it did not change
    as the very objects read, so the store writes only the rows of the
    others, and only the appended parts of an artifact streamed in chunks
    (see :meth:`SQLTaskStore._changed_artifacts`). A task without an entry is
    written whole: every artifact again. An entry belongs to one row (see
    :class:`HistoryCache`).

    Only tasks that may still be written are kept (a terminal one is
    dropped), so every task a replica is running keeps its entry: at more
    running tasks than the cache held, each append of each stream would have
    rewritten its whole artifact. Bounded: ``max_tasks`` tasks and
    ``max_parts`` artifact parts in all (the parts are the tasks' own
    objects, which a running task holds anyway), least recently used first out.
    """

    def __init__(self, max_tasks: int = 4096, max_parts: int = 1_000_000) -> None:
        self.max_tasks = max_tasks
        self.max_parts = max_parts
        #: ``task id: (version, artifacts, row, parts)``.
        self._entries: OrderedDict[str, tuple[int, tuple[Artifact, ...], Incarnation, int]] = (
            OrderedDict()
        )
        self._parts = 0

    def get(self, task_id: str) -> tuple[int, tuple[Artifact, ...], Incarnation] | None:
        """``(version, artifacts, row)`` of the task, if known."""
        entry = self._entries.get(task_id)
        return None if entry is None else entry[:3]

    def pop(self, task_id: str) -> None:
        entry = self._entries.pop(task_id, None)
        if entry is not None:
            self._parts -= entry[3]

    def remember(self, task_id: str, row: Incarnation, version: int, task: Task) -> None:
        """Keep the artifacts of ``task`` (at ``version``), or drop them if it is terminal."""
        self.pop(task_id)
        if task.status.state.is_terminal:
            return
        parts = sum(len(artifact.parts) for artifact in task.artifacts)
        self._entries[task_id] = (version, task.artifacts, row, parts)
        self._parts += parts
        while self._entries and (
            len(self._entries) > self.max_tasks or self._parts > self.max_parts
        ):
            _, (_, _, _, dropped) = self._entries.popitem(last=False)
            self._parts -= dropped


#: What a task write found of the event's push configs, in its transaction: ``(seq, how
#: many configs are owed event seq)``; ``None``: it logged no status.
Owed: TypeAlias = tuple[int, int] | None


class PushlessSpans:
    """Per task, the span of event seqs this store logged while the task had no push
    config (:meth:`SQLTaskStore.no_push_configs_at`).

    A span ``(first, last)`` grows with each status this store logs next, one seq
    after its last, in a transaction that found no config to owe it (a new task has
    none: its event 1 starts one). A status that found some, an event logged without
    that look (an artifact update), a write of another store instance (a seq this
    one did not log), a config created here: the span ends, and the next read of
    the configs is a real one. Bounded: ``max_tasks`` tasks, least recently written
    first out (a task forgotten has its configs read, as before).
    """

    def __init__(self, max_tasks: int = 4096) -> None:
        self.max_tasks = max_tasks
        self._spans: OrderedDict[str, tuple[int, int]] = OrderedDict()

    def logged(self, task_id: str, owed: Owed) -> None:
        """A write of this store logged a status (``owed``: see :data:`Owed`)."""
        if owed is None:
            return
        seq, configs = owed
        span = self._spans.pop(task_id, None)
        if configs:
            return
        self._spans[task_id] = (
            (span[0], seq)
            if span is not None and span[1] == seq - 1
            else (
                seq,
                seq,
            )
        )
        if len(self._spans) > self.max_tasks:
            self._spans.popitem(last=False)

    def forget(self, task_id: str) -> None:
        self._spans.pop(task_id, None)

    def covers(self, task_id: str, seq: int) -> bool:
        span = self._spans.get(task_id)
        return span is not None and span[0] <= seq <= span[1]


def _decode_row(row: PageRow) -> Task:
    head, count, messages, artifacts = row
    if count is None:
        return decode_task(head)
    return decode_with_history(head, messages, artifacts or ())


#: Default rows per transaction when deleting old finished tasks.
PRUNE_BATCH = 500

#: The lease epoch of a task created with its lease (``create_leased``): the first
#: acquisition of a new row, whose epoch starts at 0.
FIRST_EPOCH = 1


@dataclass(frozen=True, slots=True)
class TaskRead:
    """What :meth:`SQLTaskStore._fetch_task` reads of the task ``task_id`` in ``scope``."""

    task_id: str
    scope: str
    #: The newest this many history rows; ``None``: the rows from position ``since`` on.
    history_length: int | None
    since: int
    #: The version at which the store holds the task's artifacts (``None``: none held);
    #: a row still at that version need not have its artifact rows read.
    artifacts_at: int | None = None
    #: ``False``: read no artifact rows at all (the caller needs no artifacts).
    artifacts: bool = True

    def first_message(self, count: int | None) -> int:
        """Position of the first history row to read of a task with ``count`` rows."""
        if self.history_length is None:
            return self.since
        return max(0, (count or 0) - self.history_length)


@dataclass(frozen=True, slots=True)
class NewTask:
    """What :meth:`SQLTaskStore._insert_task` inserts: ``task`` at version 1."""

    task: Task
    scope: str
    #: The task row's JSON (:func:`encode_head`).
    snapshot: bytes
    #: The stored form of the event logged as entry 1 (``None``: no event).
    event: bytes | None
    #: The history rows.
    messages: Sequence[MessageRow]
    #: The artifact rows' JSON by position.
    artifacts: Mapping[int, bytes]
    #: ``(worker, ttl)``: the row is inserted with the task's lease taken by ``worker``
    #: for ``ttl`` seconds, at epoch :data:`FIRST_EPOCH` (``None``: no lease).
    lease: tuple[str, float] | None = None
    #: The digest of the client's first message that starts the task (``TaskStore.create``'s
    #: ``started_by``): a task of the scope that has it already makes the insert raise
    #: ``DuplicateMessageError`` naming that task (``None``: none).
    started_by: bytes | None = None

    def artifact_writes(self) -> list[ArtifactWrite]:
        """The artifact rows to write (no event refers to one yet)."""
        return [(pos, data, None) for pos, data in self.artifacts.items()]


_NO_APPENDS: Mapping[int, ArtifactAppend] = {}


@dataclass(frozen=True, slots=True)
class TaskWrite:
    """What :meth:`SQLTaskStore._update_task` writes over the task's stored row.

    ``changed``: the positions of the only artifacts that may differ from
    the stored rows, apart from those of ``appends`` (``None``: any may; rows
    of artifacts the task no longer has are deleted). ``appends``: the
    artifacts that are the stored ones with parts appended, by position (see
    ``_pieces``). ``lease``: the row's ``lease_epoch`` must still be this.
    """

    task: Task
    expected_version: int
    #: The task row's JSON (:func:`encode_head`).
    snapshot: bytes
    event: StreamResponse | None
    #: ``task.history`` starts at history message number ``history_offset``.
    history_offset: int
    changed: Sequence[int] | None
    lease: int | None = None
    appends: Mapping[int, ArtifactAppend] = field(default_factory=dict)
    #: The id of a message the write must add (``TaskStore.update``'s ``new_message``).
    new_message: str | None = None
    #: The write gives up the task's lease (``TaskStore.update``'s ``release_lease``):
    #: only with :attr:`lease`, whose epoch :meth:`check` verified under the row's lock.
    release: bool = False

    @property
    def releases(self) -> bool:
        """Whether the row's lease owner and expiry are cleared by this write."""
        return self.release and self.lease is not None

    @property
    def owed(self) -> bool:
        """Whether the task's push configs are owed :attr:`event`: it carries a status, as
        the engine's push notifications (§3.5.1)."""
        return state_of(self.event) is not None

    def check(self, row: Sequence[Any] | None) -> None:
        """Raise unless the stored ``row`` (starting ``version, lease_epoch``; ``None``: no
        row) is the one to write over. The lease is checked first: a run that lost it
        learns that rather than of a version another run moved on."""
        task_id = self.task.id
        if row is None:
            raise TaskNotFoundError.of(task_id)
        version, lease_epoch = row[0], row[1]
        if self.lease is not None and lease_epoch != self.lease:
            raise LeaseLostError(task_id, self.lease, lease_epoch)
        if version != self.expected_version:
            raise ConcurrentModificationError(task_id, self.expected_version, version)

    def artifact_rows(
        self, stored_count: int | None
    ) -> tuple[bool, dict[int, bytes], Mapping[int, ArtifactAppend]]:
        """``(full, rows, appends)``: whether every artifact row is written whole (and the
        rows of removed artifacts deleted), the JSON of the rows to write whole by
        position, and the parts to append to the others.
        ``stored_count``: the row's ``artifact_count`` (NULL: the artifacts move to rows now)."""
        if self.changed is None or stored_count is None:
            return True, artifact_rows(self.task), _NO_APPENDS
        return False, artifact_rows(self.task, self.changed), self.appends

    def logged(
        self, messages: Sequence[MessageRow], stored: int, rows: Mapping[int, bytes]
    ) -> tuple[bytes | None, int | None]:
        """The stored form of :attr:`event` (``None``: no event) and the artifact row it
        refers to, given the history ``messages`` appended after ``stored`` rows and the
        artifact ``rows`` written (see ``_eventlog.compact_event``)."""
        if self.event is None:
            return None, None
        positions = {message: stored + i for i, (_, message, _) in enumerate(messages)}
        return compact_event(self.event, self.task, positions, rows)


class SQLTaskStore(TaskStore, AsyncClosing):
    """The task records of a database store, as far as they do not depend on the SQL dialect.

    Here: the ids a database cannot hold, scoping, encoding snapshots and
    events, the listing's filters and pages, rows to models. A store brings
    its SQL in :meth:`_fetch_task`, :meth:`_insert_task`, :meth:`_update_task`
    and :meth:`_fetch_page`, and says :attr:`PLACEHOLDER` (its driver's
    parameter marker), :attr:`NUL` (whether its text columns can hold NUL)
    and :attr:`BAD_TASK_ID` (why ``create`` refuses an id it cannot hold).
    """

    PLACEHOLDER: ClassVar[str]
    NUL: ClassVar[bool]
    BAD_TASK_ID: ClassVar[str]

    # The caches are made on first use, not in ``__init__``: the stores' own
    # ``__init__`` (and a subclass's) need not call this class's.
    @functools.cached_property
    def _histories(self) -> HistoryCache:
        return HistoryCache()

    #: Most non-terminal tasks one ``(owner, tenant)`` may have (``None``: no limit).
    max_active_tasks_per_owner: int | None = None

    #: Seconds the process that logs a status event has to deliver it to the task's
    #: webhooks before another may (:meth:`claim_owed_pushes`); the lease TTL.
    push_claim_ttl: float = 15.0

    def _ok(self, *texts: str | None) -> bool:
        """Whether the database can hold ``texts`` as keys (an id it cannot hold matches nothing)."""
        return all(storable(text, nul=self.NUL) for text in texts)

    @functools.cached_property
    def _artifact_reads(self) -> ArtifactReads:
        return ArtifactReads()

    @functools.cached_property
    def _pushless(self) -> PushlessSpans:
        return PushlessSpans()

    def no_push_configs_at(self, task_id: str, seq: int) -> bool:
        # Known from the transaction that logged event seq (see PushlessSpans): a config
        # created after it commits is not owed that event, here or by claim_owed_pushes.
        return self._pushless.covers(task_id, seq)

    @abc.abstractmethod
    async def _fetch_task(self, read: TaskRead) -> FetchedTask | None:
        """``(snapshot JSON, version, last_seq, history_count, messages, artifacts, row)``.

        ``messages``: the JSON of the history rows from ``read.first_message``
        on, oldest first, never beyond ``history_count``. ``history_count`` is
        ``None`` for a row of an older schema whose snapshot holds the history.
        ``artifacts``: the JSON of the artifact rows in order, or ``None`` for
        a row whose snapshot holds its artifacts (written before migration 5);
        a store may skip reading them (``[]``) when the row is at version
        ``read.artifacts_at`` (this store holds the artifacts it had then).
        ``row``: the row's :data:`~._common.Incarnation`.
        """

    @abc.abstractmethod
    async def _insert_task(self, new: NewTask) -> Incarnation:
        """Insert ``new.task`` at version 1 with its event, history and artifact rows;
        the new row's :data:`~._common.Incarnation`.

        Raises ``ConcurrentModificationError`` if the id is taken.
        """

    @abc.abstractmethod
    async def _update_task(self, write: TaskWrite) -> tuple[int, int, Incarnation, Owed]:
        """Write the task's row over its ``write.expected_version``, append its new
        history messages (see :func:`new_messages`), write its artifact rows and log
        the event (if any, in its stored form: see ``_eventlog``), atomically, after
        :meth:`TaskWrite.check` under the row's write lock.

        Returns ``(history rows before the write, history rows appended, the row's
        Incarnation, what it owed the task's push configs: see Owed)``.
        Raises ``TaskNotFoundError``, ``LeaseLostError`` or ``ConcurrentModificationError``.
        """

    @abc.abstractmethod
    async def _select_message(
        self, task_id: str, message_id: str
    ) -> tuple[bytes | str, str | None] | None:
        """The history row of the message with id ``message_id`` of the task ``task_id`` and
        the task's ``context_id`` column (``None``: no such message or task), found by the
        ``(task, message id)`` index: one row, however long the history."""

    async def find_message(self, task_id: str, message_id: str) -> Message | None:
        if not self._ok(task_id):
            return None
        row = await self._select_message(task_id, message_id)
        if row is None:
            return None
        data, context = row
        return decode_message(own_message(data, row_suffix(task_id, column_value(context))))

    @abc.abstractmethod
    async def _fetch_page(self, query: ListSQL) -> tuple[int, Sequence[PageRow]]:
        """``(how many match query.where, the next query.limit of them)``.

        The page is ``query.page_where`` in ``ListSQL.ORDER``; both come from
        one snapshot of the database. Each row is ``(snapshot JSON,
        history_count, history JSON, artifact JSON)``: the history rows from
        ``query.first_message(history_count)`` on and the artifact rows (for
        the first ``query.page_size`` rows only).
        """

    async def get(
        self,
        task_id: str,
        owner: str | None,
        tenant: str | None = None,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> StoredTask | None:
        if not self._ok(task_id):
            return None
        if history_length is not None:
            history_length = max(0, history_length)
        scope = scope_key(owner, tenant)
        cached = self._histories.get(task_id) if history_length is None else None
        since = 0 if cached is None else cached[0]
        # Artifact rows unchanged since this store's last read (or write) are not read again.
        known = self._artifact_reads.get(task_id) if include_artifacts else None
        at = None if known is None else known[0]
        read = TaskRead(task_id, scope, history_length, since, at, include_artifacts)
        row = await self._fetch_task(read)
        if row is not None and (
            (cached is not None and (row[6] != cached[3] or (row[3] or 0) < since))
            or (known is not None and row[6] != known[2])
        ):
            # Not the row the caches knew (deleted, and its id taken again since; a
            # history never shrinks): read it all.
            self._histories.pop(task_id)
            self._artifact_reads.pop(task_id)
            cached = known = None
            read = TaskRead(task_id, scope, history_length, 0, None, include_artifacts)
            row = await self._fetch_task(read)
        if row is None:
            return None
        data, version, last_seq, count, messages, artifacts, incarnation = row
        same = artifacts is not None and known is not None and version == known[0]
        if same:
            artifacts = []
        offset = 0
        if count is None:  # an older row: the whole history is in the snapshot
            task = decode_task(data)
        elif history_length is not None:
            task = decode_with_history(data, messages, artifacts or ())
            offset = count - len(messages)
        else:
            # The whole history: what this store read before, plus the rows since.
            task = decode_with_history(data, messages, artifacts or ())
            if cached is not None:
                # The rows read now were validated as they were decoded, the
                # cached ones when they were: no pass over the history again.
                added = cached[2] + task.history if cached[2] else task.history
                task = replace_task(task, history=extend_history(cached[1], added))
            self._histories.remember(task_id, incarnation, count, task.history)
        if same:
            assert known is not None
            task = replace_task(task, artifacts=known[1]) if known[1] else task
        elif artifacts is not None and include_artifacts:
            self._artifact_reads.remember(task_id, incarnation, version, task)
        return StoredTask(
            task=task,
            version=version,
            owner=owner,
            tenant=tenant,
            last_seq=last_seq,
            history_offset=offset,
        )

    async def create(
        self,
        task: Task,
        owner: str | None,
        tenant: str | None = None,
        *,
        event: StreamResponse | None = None,
        started_by: bytes | None = None,
    ) -> StoredTask:
        return await self._create(task, owner, tenant, event, None, started_by)

    async def create_leased(
        self,
        task: Task,
        owner: str | None,
        tenant: str | None = None,
        *,
        event: StreamResponse | None = None,
        worker: str,
        ttl: float,
        started_by: bytes | None = None,
    ) -> tuple[StoredTask, int | None]:
        """:meth:`create` that also takes the new task's lease for ``worker`` for ``ttl``
        seconds, in the same transaction (one commit where ``create`` then
        ``acquire_lease`` made two): the task and the lease epoch, :data:`FIRST_EPOCH`.

        A task is run at once by the process that creates it: no other worker can
        hold its lease yet, and a crash right after leaves a lease that lapses (the
        task is then taken over as any other). A subclass with a ``create`` of its own
        has it called and takes no lease (epoch ``None``): the caller takes it then
        with ``acquire_lease``, once it knows the task exists (two transactions).
        """
        if type(self).create is not SQLTaskStore.create:
            parameters = inspect.signature(self.create).parameters.values()
            takes = any(p.name == "started_by" or p.kind is p.VAR_KEYWORD for p in parameters)
            started = {"started_by": started_by} if started_by is not None and takes else {}
            return await self.create(task, owner, tenant, event=event, **started), None
        lease = (worker, ttl)
        return await self._create(task, owner, tenant, event, lease, started_by), FIRST_EPOCH

    async def _create(
        self,
        task: Task,
        owner: str | None,
        tenant: str | None,
        event: StreamResponse | None,
        lease: tuple[str, float] | None,
        started_by: bytes | None = None,
    ) -> StoredTask:
        snapshot = encode_head(task)
        if not self._ok(task.id):
            raise InvalidParamsError(self.BAD_TASK_ID)
        messages = all_messages(task)
        artifacts = artifact_rows(task)
        logged = None
        if event is not None:
            positions = {data: i for i, (_, data, _) in enumerate(messages)}
            logged, _ = compact_event(event, task, positions, {})
        row = await self._insert_task(
            NewTask(
                task,
                scope_key(owner, tenant),
                snapshot,
                logged,
                messages,
                artifacts,
                lease,
                started_by,
            )
        )
        self._histories.pop(task.id)  # of a task that had this id before, if any
        self._artifact_reads.remember(task.id, row, 1, task)
        last_seq = 0 if event is None else 1
        # A new row has no push config (a former one's went with it): nothing owed event 1.
        self._pushless.forget(task.id)
        self._pushless.logged(task.id, (1, 0) if event is not None else None)
        return StoredTask(task=task, version=1, owner=owner, tenant=tenant, last_seq=last_seq)

    def _changed_artifacts(
        self, task: Task, expected_version: int
    ) -> tuple[list[int] | None, dict[int, ArtifactAppend]]:
        """Positions of the artifacts of ``task`` that are not the very ones read at
        ``expected_version`` (``None``: unknown, or some were removed or moved), apart
        from those that are the ones read with parts appended (by position)."""
        read = self._artifact_reads.get(task.id)
        if read is None or read[0] != expected_version:
            return None, {}
        before, after = read[1], task.artifacts
        if len(after) < len(before) or any(
            a.artifact_id != b.artifact_id for a, b in zip(before, after, strict=False)
        ):
            return None, {}
        changed: list[int] = []
        appends: dict[int, ArtifactAppend] = {}
        for i, artifact in enumerate(after):
            if i < len(before) and artifact is before[i]:
                continue
            added = None if i >= len(before) else parts_appended(before[i], artifact)
            if added is None:
                changed.append(i)
            else:
                appends[i] = added
        return changed, appends

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
        snapshot = encode_head(task)
        if not self._ok(task.id):
            raise TaskNotFoundError.of(task.id)
        changed, appends = self._changed_artifacts(task, expected_version)
        before, appended, row, owed = await self._update_task(
            TaskWrite(
                task,
                expected_version,
                snapshot,
                event,
                history_offset,
                changed,
                lease,
                appends,
                new_message,
                release_lease,
            )
        )
        self._artifact_reads.remember(task.id, row, expected_version + 1, task)
        self._pushless.logged(task.id, owed)
        # The next whole read of the task then reads no history row it wrote.
        fresh = task.history[max(0, before - history_offset) :]
        self._histories.wrote(
            task.id,
            row,
            before,
            fresh if len(fresh) == appended else None,
            task.history if history_offset == 0 else None,
        )
        return expected_version + 1

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
        query = ListSQL(
            self.PLACEHOLDER,
            owner,
            tenant,
            context_id=context_id,
            status=status,
            status_timestamp_after=status_timestamp_after,
            page_size=page_size,
            page_token=page_token,
            history_length=history_length,
            artifacts=include_artifacts,
            nul=self.NUL,
        )
        total, rows = await self._fetch_page(query)
        return task_page(rows, query.page_size, total, _decode_row)

    # -- push configs: an id the database cannot hold names no task or config ---------------

    @abc.abstractmethod
    async def _upsert_config(self, task_id: str, config_id: str, data: bytes, dialect: str) -> None:
        """Store the config JSON ``data`` of the task and the dialect it was created in (one
        with ``config_id`` keeps its place in the creation order, and takes the new
        dialect). Raises ``TaskNotFoundError`` if there is no task."""

    @abc.abstractmethod
    async def _select_config(self, task_id: str, config_id: str) -> tuple[bytes | str, str] | None:
        """The JSON of a config of the task and its dialect (``None``: none)."""

    @abc.abstractmethod
    async def _select_configs(self, task_id: str) -> Sequence[tuple[bytes | str, str]]:
        """The JSON of the task's configs and their dialects, in creation order."""

    @abc.abstractmethod
    async def _delete_config(self, task_id: str, config_id: str) -> None:
        """Delete a config of the task, if there is one."""

    async def set_push_config(
        self, task_id: str, config: TaskPushNotificationConfig, *, dialect: str = "1.0"
    ) -> TaskPushNotificationConfig:
        config_id = push_config_id(config)
        if dialect not in PUSH_DIALECTS:
            raise ValueError(f"push config dialect {dialect!r}: expected one of {PUSH_DIALECTS}")
        data = encode_config(config)
        if not self._ok(task_id, config_id):
            raise TaskNotFoundError.of(task_id)
        self._pushless.forget(task_id)  # its next notification reads the configs
        await self._upsert_config(task_id, config_id, data, dialect)
        return config

    async def get_push_config(
        self, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        target = await self.get_push_target(task_id, config_id)
        return None if target is None else target.config

    async def list_push_configs(self, task_id: str) -> builtins.list[TaskPushNotificationConfig]:
        return [target.config for target in await self.list_push_targets(task_id)]

    async def get_push_target(self, task_id: str, config_id: str) -> PushTarget | None:
        if not self._ok(task_id, config_id):
            return None
        row = await self._select_config(task_id, config_id)
        return None if row is None else PushTarget(decode_config(row[0]), row[1])

    async def list_push_targets(self, task_id: str) -> builtins.list[PushTarget]:
        if not self._ok(task_id):
            return []
        rows = await self._select_configs(task_id)
        return [PushTarget(decode_config(data), dialect) for data, dialect in rows]

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        if self._ok(task_id, config_id):
            await self._delete_config(task_id, config_id)

    # -- leases (see LeasingExecutor) ---------------------------------------------------------

    @abc.abstractmethod
    async def acquire_lease(self, task_id: str, worker: str, ttl: float) -> int | None:
        """Take (or keep) the lease on a task's turn: the new lease epoch, ``None`` if
        another live worker holds it."""

    # -- push notifications owed (at least once, across crashes) ------------------------------

    @abc.abstractmethod
    async def claim_owed_pushes(
        self, ttl: float, limit: int
    ) -> builtins.list[tuple[str, str, int]]:
        """Claim for ``ttl`` seconds up to ``limit`` configs owed a notification whose
        claim lapsed: ``(task_id, config_id, seq)`` each, ``seq`` the logged event owed
        (the task's latest status). Reads only the owed rows (a partial index)."""

    @abc.abstractmethod
    async def push_delivered(self, task_id: str, config_id: str, seq: int) -> None:
        """The delivery of event ``seq`` to the config ended: it is owed nothing up to it."""

    # -- maintenance -------------------------------------------------------------------------

    @abc.abstractmethod
    def _terminal_deleter(self, seconds: float, batch_size: int) -> Callable[[], Awaitable[int]]:
        """A function deleting, in one transaction, up to ``batch_size`` of the tasks
        terminal for ``seconds`` (as of now), oldest first: how many it deleted."""

    async def delete_terminal_older_than(
        self, age: timedelta | float, *, batch_size: int = PRUNE_BATCH
    ) -> int:
        """Delete the tasks that reached a terminal state at least ``age`` ago.

        ``age`` is a ``timedelta`` or seconds. Their event logs and push
        configs go with them. Deletes ``batch_size`` tasks per transaction,
        oldest first, so other operations of the store run between batches.
        Returns how many tasks were deleted.
        """
        seconds = as_seconds(age)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        delete_batch = self._terminal_deleter(seconds, batch_size)
        total = 0
        while True:
            deleted = await delete_batch()
            total += deleted
            if deleted < batch_size:
                return total
            await asyncio.sleep(0)  # let waiting operations in before the next batch

    @abc.abstractmethod
    async def open(self) -> Self:
        """Connect and migrate the schema now (otherwise done on first use)."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release the store's connections; idempotent."""

    async def __aenter__(self) -> Self:  # leaving ``async with`` closes the store
        return await self.open()
