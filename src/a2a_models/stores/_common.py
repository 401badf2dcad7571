"""What the database stores share: JSON of models, scope keys, listing SQL, URLs,
and :class:`SQLTaskStore`, the reads that differ only by their SQL."""

from __future__ import annotations

import abc
import asyncio
import builtins
import json
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, Self
from urllib.parse import unquote, unquote_plus

import orjson

from .. import codec
from .._closing import AsyncClosing
from .._state import TaskState
from ..errors import InvalidParamsError, TaskNotFoundError
from ..models import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
)
from ..server import (
    ACTIVE_STATES,
    ConcurrentModificationError,
    LeaseLostError,
    StoredTask,
    TaskPage,
    TaskStore,
    extend_history,
    push_config_id,
    replace_task,
)
from ..server.paging import NO_TIMESTAMP, list_cursor, status_key, task_page, timestamp_key

__all__ = [
    "ACTIVE_KEYS",
    "ArtifactWrite",
    "FetchedTask",
    "NewTask",
    "TaskRead",
    "TaskWrite",
    "artifact_writes",
    "same_json",
    "PageRow",
    "decode_with_history",
    "encode_head",
    "encode_message",
    "new_messages",
    "all_messages",
    "MessageRow",
    "message_row",
    "own_head",
    "own_message",
    "whole_messages",
    "row_suffix",
    "PRUNE_BATCH",
    "ListSQL",
    "SQLTaskStore",
    "as_seconds",
    "check_identifier",
    "artifact_rows",
    "column_text",
    "column_value",
    "encode_artifact",
    "decode_config",
    "decode_event",
    "decode_task",
    "encode_config",
    "encode_event",
    "encode_task",
    "scope_key",
    "split_url",
    "storable",
    "task_columns",
]

_DIALECT = "1.0"


# --- model JSON ---------------------------------------------------------------------------


def encode_task(task: Task) -> bytes:
    return codec.encode(task, _DIALECT)


def decode_task(data: bytes | str) -> Task:
    return codec.decode(Task, data, _DIALECT)


def encode_head(task: Task) -> bytes:
    """The task row's snapshot: the task without its history and artifacts (kept as
    rows), nor (marked ``{"$":1,``) its ids, which the row's columns hold (see
    :func:`own_head`)."""
    if task.history or task.artifacts:
        task = replace_task(task, history=(), artifacts=())
    data = encode_task(task)
    if task.context_id is None:
        return data
    try:
        first = b'{"id":' + orjson.dumps(task.id) + b","
        last = b',"contextId":' + orjson.dumps(task.context_id) + b"}"
    except orjson.JSONEncodeError:  # lone surrogates
        return data
    if not (data.startswith(first) and data.endswith(last)):
        return data
    return _OWN + data[len(first) : -len(last)] + b"}"


def own_head(row: bytes | str, task_id: str, context_id: str | None) -> bytes | str:
    """The task row's snapshot with its ids put back (see :func:`encode_head`)."""
    text = _text(row)
    if not text.startswith('{"$"') or context_id is None:
        return row
    # After '{"$":1,' (SQLite) or '{"$": 1, ' (jsonb's text): the rest of the task.
    rest = text[text.index(",") + 1 : text.rindex("}")]
    ids = orjson.dumps(task_id).decode(), orjson.dumps(context_id).decode()
    return f'{{"id":{ids[0]},{rest},"contextId":{ids[1]}}}'


def encode_message(message: Message) -> bytes:
    return codec.encode(message, _DIALECT)


def _text(data: bytes | str) -> str:
    return data.decode() if isinstance(data, bytes) else data


def decode_with_history(
    head: bytes | str,
    messages: Sequence[bytes | str],
    artifacts: Sequence[bytes | str] = (),
) -> Task:
    """The task of a head snapshot and its history and artifact rows, decoded in one pass."""
    if not messages and not artifacts:
        return decode_task(head)
    text = _text(head).rstrip()[:-1]
    if messages:
        text += ',"history":[' + ",".join(_text(m) for m in messages) + "]"
    if artifacts:
        text += ',"artifacts":[' + ",".join(_text(a) for a in artifacts) + "]"
    return decode_task(text + "}")


def encode_artifact(artifact: Artifact) -> bytes:
    return codec.encode(artifact, _DIALECT)


def artifact_rows(task: Task, only: Sequence[int] | None = None) -> dict[int, bytes]:
    """The JSON of the task's artifacts by position (``only``: at those positions)."""
    positions = range(len(task.artifacts)) if only is None else only
    return {i: encode_artifact(task.artifacts[i]) for i in positions}


#: A history message to store: ``(message_id column, JSON, the row's JSON)``.
MessageRow = tuple[str, bytes, bytes]

# A history row of a message carrying its task's ids holds it without them:
# ``{"$":1,`` and the rest of the JSON (see :func:`message_row`).
_OWN = b'{"$":1,'


def _ids(task_id: str, context_id: str) -> bytes:
    return b',"contextId":' + orjson.dumps(context_id) + b',"taskId":' + orjson.dumps(task_id)


def message_row(message: Message, data: bytes, task: Task) -> bytes:
    """What a history row holds of ``message`` (JSON ``data``) of ``task``."""
    if task.context_id is None or message.task_id != task.id:
        return data
    if message.context_id != task.context_id:
        return data
    try:
        ids = _ids(task.id, task.context_id)
    except orjson.JSONEncodeError:  # lone surrogates
        return data
    # The message's own ids are the only top-level occurrence when there is one.
    if data.count(ids) != 1:
        return data
    return _OWN + data[1:].replace(ids, b"", 1)


def row_suffix(task_id: str, context_id: str | None) -> str | None:
    """What :func:`own_message` puts back into the rows of a task (``None``: nothing)."""
    if context_id is None:
        return None
    try:
        return _ids(task_id, context_id).decode()
    except orjson.JSONEncodeError:
        return None


def own_message(row: bytes | str, suffix: str | None) -> bytes | str:
    """The JSON of a message from its history row (see :func:`message_row`)."""
    text = row.decode() if isinstance(row, bytes) else row
    if suffix is None or not text.startswith('{"$"'):
        return row
    # After '{"$":1,' (SQLite) or '{"$": 1, ' (jsonb's text): the rest of the message.
    rest = text[text.index(",") + 1 :].rstrip()
    return "{" + rest[:-1] + suffix + "}"


def whole_messages(
    rows: Iterable[tuple[int, bytes | str]], task_id: str, context_id: str | None
) -> list[tuple[int, bytes | str]]:
    """Of the ``(pos, JSON)`` history rows of a task, those that leave out its ids,
    with the ids ``task_id`` and ``context_id`` put back (see :func:`own_message`)."""
    suffix = row_suffix(task_id, context_id)
    return [(pos, whole) for pos, data in rows if (whole := own_message(data, suffix)) is not data]


def all_messages(task: Task) -> list[MessageRow]:
    """The rows of every message of a new task's history, as given."""
    out = []
    for m in task.history:
        data = encode_message(m)
        out.append((str(column_text(m.message_id)), data, message_row(m, data, task)))
    return out


def new_messages(
    task: Task, offset: int, stored: int, known: Callable[[list[str]], set[str]]
) -> list[MessageRow]:
    """The rows of the messages of ``task.history`` to append.

    ``task.history`` starts at message number ``offset``; ``stored`` are
    already rows. ``known`` returns which of some id columns the task already has.
    """
    fresh = task.history[max(0, stored - offset) :]
    if not fresh:
        return []
    ids = [str(column_text(m.message_id)) for m in fresh]
    taken = known(ids)
    out: list[MessageRow] = []
    for key, message in zip(ids, fresh, strict=True):
        if key not in taken:
            taken.add(key)
            data = encode_message(message)
            out.append((key, data, message_row(message, data, task)))
    return out


def encode_event(event: StreamResponse) -> bytes:
    return codec.encode(event, _DIALECT, as_type=StreamResponse)


def decode_event(data: bytes | str) -> StreamResponse:
    result: StreamResponse = codec.decode(StreamResponse, data, _DIALECT)
    return result


def encode_config(config: TaskPushNotificationConfig) -> bytes:
    return codec.encode(config, _DIALECT)


def decode_config(data: bytes | str) -> TaskPushNotificationConfig:
    return codec.decode(TaskPushNotificationConfig, data, _DIALECT)


# --- scope ------------------------------------------------------------------------------


def scope_key(owner: str | None, tenant: str | None) -> str:
    """``(owner, tenant)`` as one comparable text: the JSON ``[owner, tenant]``."""
    return json.dumps([owner, tenant], ensure_ascii=True, separators=(",", ":"))


#: Starts the escaped form of a text a database column cannot hold as is.
_ESCAPED = "\x1b"


def column_text(text: str | None) -> str | None:
    """``text`` as stored in a filterable column such as ``context_id``.

    Itself when PostgreSQL and SQLite can hold it (the usual case, readable
    in the database); otherwise (NUL, lone surrogates) ESC and its ASCII
    JSON. Texts starting with ESC are escaped too, so the mapping is
    one-to-one and equality filters stay exact.
    """
    if text is None or (storable(text, nul=False) and not text.startswith(_ESCAPED)):
        return text
    return _ESCAPED + json.dumps(text, ensure_ascii=True)


def column_value(column: str | None) -> str | None:
    """The text a :func:`column_text` column holds."""
    if column is None or not column.startswith(_ESCAPED):
        return column
    value: str = json.loads(column[1:])
    return value


def task_columns(task: Task) -> tuple[str | None, str, int, bool]:
    """``(context_id column, state, status_key, is_terminal)`` of a snapshot."""
    state = task.status.state
    return column_text(task.context_id), state.value, status_key(task), state.is_terminal


# --- listing ------------------------------------------------------------------------------


# Left out of the task counts' per context and state keys (see _migrations v5).
_STATE_PREFIX = "TASK_STATE_"


class ListSQL:
    """The WHERE clauses of a listing: the filters, and the filters plus the cursor."""

    def __init__(
        self,
        placeholder: str,
        owner: str | None,
        tenant: str | None,
        *,
        context_id: str | None,
        status: TaskState | None,
        status_timestamp_after: datetime | None,
        page_size: int,
        page_token: str | None,
        history_length: int | None = None,
    ) -> None:
        cursor = list_cursor(page_size, page_token)
        #: History messages to read per task (``None``: all).
        self.history_length = None if history_length is None else max(0, history_length)
        p = placeholder
        clauses = [f"scope = {p}"]
        params: list[Any] = [scope_key(owner, tenant)]
        if context_id is not None:
            clauses.append(f"context_id = {p}")
            params.append(column_text(context_id))
        if status is not None:
            clauses.append(f"state = {p}")
            params.append(status.value)
        if status_timestamp_after is not None:
            # Tasks without a timestamp never match (as in InMemoryTaskStore).
            clauses.append(f"status_key >= {p} AND status_key <> {NO_TIMESTAMP}")
            params.append(timestamp_key(status_timestamp_after))
        self.where = " AND ".join(clauses)
        self.params = params
        self.placeholder = p
        # The counter rows for the context/status filters (the timestamp filter has none).
        scope = params[0]
        keys: list[str]
        if context_id is None and status is None:
            dim, keys = "all", [""]
        elif context_id is None and status is not None:
            dim, keys = "state", [status.value]
        else:
            # A context's total is the sum of its rows per state: a row per
            # context as well took as much room again (a context usually has
            # one task or a few).
            states = list(TaskState) if status is None else [status]
            context = column_text(context_id)
            dim, keys = "cs", [f"{s.value.removeprefix(_STATE_PREFIX)} {context}" for s in states]
        counter = [scope, dim, *keys]
        #: The context filter (and state filter, if any) the counter rows stand for.
        self._context: tuple[str | None, str | None] | None = None
        if dim == "cs":
            self._context = (column_text(context_id), None if status is None else status.value)
        #: The parameters ``scope, dim, key...`` of the ``a2a_task_counts`` rows
        #: whose sum is the total, or ``None``: a timestamp filter (see :meth:`count`).
        self.counter: list[str] | None = None
        self._bounded: tuple[str, list[Any], list[str]] | None = None
        if status_timestamp_after is None:
            self.counter = counter
        else:
            base = " AND ".join(clauses[:-1])
            self._bounded = (
                f"{base} AND status_key < {p}",
                [*params[:-1], params[-1]],
                counter,
            )
        self.limit = page_size + 1
        self.page_size = page_size
        if cursor is None:
            self.page_where = self.where
            self.page_params = list(params)
        else:
            key, task_id = cursor
            # Newest status first, then by id: continue strictly after the cursor.
            self.page_where = (
                f"{self.where} AND status_key <= {p} AND (status_key < {p} OR id > {p})"
            )
            self.page_params = [*params, key, key, task_id]

    ORDER = "ORDER BY status_key DESC, id ASC"

    #: A side of a timestamp filter with at most this many tasks is counted row by row.
    COUNT_BOUND = 2000
    #: Both sides are first tried with this smaller bound, so a filter with few tasks
    #: on one side costs the same whatever the number on the other.
    COUNT_PROBE = 64

    def count(
        self, tasks: str, counts: str, context_counted: int | None = None
    ) -> tuple[str, list[Any]]:
        """SQL (one scalar) and parameters giving the exact number of matches.

        Without a timestamp filter: the counter row (``context_counted``: a
        context has counter rows only when marked as holding more tasks than
        that; otherwise its tasks are counted, see ``_migrations`` v7). With one, the smaller
        side is counted: the matches, or the tasks *before* the timestamp
        (subtracted from the counter), each tried up to :attr:`COUNT_PROBE`
        and then up to :attr:`COUNT_BOUND` rows; only when both sides are
        larger are all matches counted.
        """
        p = self.placeholder
        counter = self.counter if self._bounded is None else self._bounded[2]
        assert counter is not None
        keys = ", ".join([p] * (len(counter) - 2))
        counter_sql = (
            f"CAST(coalesce((SELECT sum(n) FROM {counts} WHERE scope = {p} AND dim = {p}"
            f" AND key IN ({keys})), 0) AS BIGINT)"
        )
        counter_params: list[Any] = list(counter)
        if context_counted is not None and self._context is not None:
            context, state = self._context
            # In the context index's order: a plan made for any context (a generic
            # one) reads at most that many entries, never the whole table.
            small = f"SELECT 1 FROM {tasks} WHERE scope = {p} AND context_id = {p}"
            small_params: list[Any] = [counter[0], context]
            if state is not None:
                small += f" AND state = {p}"
                small_params.append(state)
            counter_sql = (
                f"(CASE WHEN EXISTS (SELECT 1 FROM {counts} WHERE scope = {p} AND dim = 'c'"
                f" AND key = {p}) THEN {counter_sql} ELSE (SELECT count(*) FROM ({small}"
                f" ORDER BY status_key DESC LIMIT {context_counted + 1}) AS small) END)"
            )
            counter_params = [counter[0], context, *counter, *small_params]
        if self._bounded is None:
            return f"SELECT {counter_sql}", counter_params
        before_where, before_params, _ = self._bounded
        sql = "SELECT CASE"
        params: list[Any] = []
        for bound in (self.COUNT_PROBE, self.COUNT_BOUND):
            after = (
                f"(SELECT count(*) FROM (SELECT 1 FROM {tasks} WHERE {self.where}"
                f" LIMIT {bound + 1}) a)"
            )
            before = (
                f"(SELECT count(*) FROM (SELECT 1 FROM {tasks} WHERE {before_where}"
                f" LIMIT {bound + 1}) b)"
            )
            sql += (
                f" WHEN {after} <= {bound} THEN {after}"
                f" WHEN {before} <= {bound} THEN {counter_sql} - {before}"
            )
            params += [
                *self.params,
                *self.params,
                *before_params,
                *counter_params,
                *before_params,
            ]
        sql += f" ELSE (SELECT count(*) FROM {tasks} WHERE {self.where}) END"
        return sql, [*params, *self.params]

    def first_message(self, count: int) -> int:
        """Position of the first history row to read of a task with ``count`` messages."""
        return 0 if self.history_length is None else max(0, count - self.history_length)


# --- the stores ---------------------------------------------------------------------------


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
    replica) added is seen.

    Bounded: ``max_tasks`` tasks and ``max_messages`` messages in all; a
    history longer than ``max_messages // 4`` is not kept (its whole reads
    read every row again). The messages are the tasks' own objects: the cost
    is their memory, held that much longer.
    """

    def __init__(self, max_tasks: int = 256, max_messages: int = 200_000) -> None:
        self.max_tasks = max_tasks
        self.max_messages = max_messages
        #: ``task id: (messages, the history as a tuple, messages written since)``.
        self._entries: OrderedDict[str, tuple[int, tuple[Message, ...], tuple[Message, ...]]] = (
            OrderedDict()
        )
        self._messages = 0

    def get(self, task_id: str) -> tuple[int, tuple[Message, ...], tuple[Message, ...]] | None:
        """``(messages, the first of them as a tuple, the others)`` of a task, if known."""
        entry = self._entries.get(task_id)
        if entry is not None:
            self._entries.move_to_end(task_id)
        return entry

    def pop(self, task_id: str, default: None = None) -> None:
        entry = self._entries.pop(task_id, None)
        if entry is not None:
            self._messages -= entry[0]

    def remember(
        self,
        task_id: str,
        count: int,
        history: tuple[Message, ...],
        pending: tuple[Message, ...] = (),
    ) -> None:
        self.pop(task_id)
        if len(history) + len(pending) != count or count > self.max_messages // 4:
            return
        self._entries[task_id] = (count, history, pending)
        self._messages += count
        while self._entries and (
            len(self._entries) > self.max_tasks or self._messages > self.max_messages
        ):
            _, (dropped, _, _) = self._entries.popitem(last=False)
            self._messages -= dropped

    def wrote(
        self,
        task_id: str,
        before: int,
        added: Sequence[Message] | None,
        whole: tuple[Message, ...] | None,
    ) -> None:
        """A write took the task's history from ``before`` messages to ``before + len(added)``.

        ``added``: the messages appended, in order (``None``: not known).
        ``whole``: the whole history after the write, if the write had it.
        """
        if added is None:
            return  # the entry, if any, is still a prefix
        if whole is not None and len(whole) == before + len(added):
            self.remember(task_id, len(whole), whole)
            return
        entry = self._entries.get(task_id)
        if entry is not None and entry[0] == before and added:
            count, history, pending = entry
            self.remember(task_id, count + len(added), history, pending + tuple(added))


class ArtifactReads:
    """The artifacts of the tasks read most recently, by task id, with the version read.

    A write computed from such a read keeps the artifacts it did not change
    as the very objects read, so the store writes only the rows of the
    others (see :meth:`SQLTaskStore._changed_artifacts`).
    """

    def __init__(self, max_tasks: int = 256) -> None:
        self.max_tasks = max_tasks
        self._entries: OrderedDict[str, tuple[int, tuple[Artifact, ...]]] = OrderedDict()

    def get(self, task_id: str) -> tuple[int, tuple[Artifact, ...]] | None:
        return self._entries.get(task_id)

    def remember(self, task_id: str, version: int, artifacts: tuple[Artifact, ...]) -> None:
        self._entries[task_id] = (version, artifacts)
        self._entries.move_to_end(task_id)
        while len(self._entries) > self.max_tasks:
            self._entries.popitem(last=False)


#: A task as read: ``(snapshot JSON, version, last_seq, history_count, messages, artifacts)``.
FetchedTask = tuple[
    bytes | str, int, int, int | None, Sequence[bytes | str], Sequence[bytes | str] | None
]

#: A listed task as read: ``(snapshot JSON, history_count, history JSON, artifact JSON)``;
#: artifacts ``None``: the snapshot holds them (a row of an older schema).
PageRow = tuple[bytes | str, int | None, Sequence[bytes | str], Sequence[bytes | str] | None]


def _decode_row(row: PageRow) -> Task:
    head, count, messages, artifacts = row
    if count is None:
        return decode_task(head)
    return decode_with_history(head, messages, artifacts or ())


def same_json(a: bytes | str, b: bytes | str) -> bool:
    """Whether two JSON texts hold the same values (as read back, not only as written)."""
    if (a.encode() if isinstance(a, str) else a) == (b.encode() if isinstance(b, str) else b):
        return True
    try:
        return orjson.dumps(codec.loads(a), option=orjson.OPT_SORT_KEYS) == orjson.dumps(
            codec.loads(b), option=orjson.OPT_SORT_KEYS
        )
    except (TypeError, ValueError):  # beyond orjson (a big integer): say changed
        return False


#: An artifact row to write: ``(position, JSON, ref_seq)``.
ArtifactWrite = tuple[int, bytes, int | None]


def artifact_writes(
    rows: Mapping[int, bytes],
    referenced: Mapping[int, tuple[bytes | str, int]],
    artifact_ref: int | None,
    seq: int,
) -> tuple[list[ArtifactWrite], list[tuple[int, bytes | str]]]:
    """The artifact rows to write, and the logged events to give their artifact back.

    ``rows`` are the rows a write stores (JSON by position), ``referenced``
    the stored rows among them (or deleted) that a logged event refers to
    (``position: (JSON, ref_seq)``), ``artifact_ref`` the row the new event
    (number ``seq``) refers to. An event keeps its reference only while the
    row keeps the content it referred to and no newer event takes it over;
    otherwise it gets ``(ref_seq, old JSON)`` back to inline.
    """
    inline: list[tuple[int, bytes | str]] = []
    kept: dict[int, int] = {}
    for position, (old, ref_seq) in referenced.items():
        new = rows.get(position)
        if position == artifact_ref or new is None or not same_json(old, new):
            inline.append((ref_seq, old))
        else:
            kept[position] = ref_seq
    writes = [
        (position, data, seq if position == artifact_ref else kept.get(position))
        for position, data in rows.items()
    ]
    return writes, inline


#: Default rows per transaction when deleting old finished tasks.
PRUNE_BATCH = 500


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

    def artifact_writes(self) -> list[ArtifactWrite]:
        """The artifact rows to write (no event refers to one yet)."""
        return [(pos, data, None) for pos, data in self.artifacts.items()]


@dataclass(frozen=True, slots=True)
class TaskWrite:
    """What :meth:`SQLTaskStore._update_task` writes over the task's stored row.

    ``changed``: the positions of the only artifacts that may differ from
    the stored rows (``None``: any may; rows of artifacts the task no longer
    has are deleted). ``lease``: the row's ``lease_epoch`` must still be this.
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

    def check(self, row: Sequence[Any] | None) -> None:
        """Raise unless the stored ``row`` (starting ``version, lease_epoch``; ``None``: no
        row) is the one to write over. The lease is checked first: a run that lost it
        learns that rather than of a version another run moved on."""
        task_id = self.task.id
        if row is None:
            raise TaskNotFoundError(f"task {task_id!r} not found")
        version, lease_epoch = row[0], row[1]
        if self.lease is not None and lease_epoch != self.lease:
            raise LeaseLostError(task_id, self.lease, lease_epoch)
        if version != self.expected_version:
            raise ConcurrentModificationError(task_id, self.expected_version, version)

    def artifact_rows(self, stored_count: int | None) -> tuple[bool, dict[int, bytes]]:
        """``(full, rows)``: whether every artifact row is written (and the rows of removed
        artifacts deleted), and the JSON of the rows to write by position.
        ``stored_count``: the row's ``artifact_count`` (NULL: the artifacts move to rows now)."""
        full = self.changed is None or stored_count is None
        return full, artifact_rows(self.task, None if full else self.changed)

    def logged(
        self, messages: Sequence[MessageRow], stored: int, rows: Mapping[int, bytes]
    ) -> tuple[bytes | None, int | None]:
        """The stored form of :attr:`event` (``None``: no event) and the artifact row it
        refers to, given the history ``messages`` appended after ``stored`` rows and the
        artifact ``rows`` written (see ``_eventlog.compact_event``)."""
        if self.event is None:
            return None, None
        from ._eventlog import compact_event

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

    @property
    def _histories(self) -> HistoryCache:
        cache: HistoryCache | None = self.__dict__.get("_history_cache")
        if cache is None:
            cache = self.__dict__["_history_cache"] = HistoryCache()
        return cache

    #: Most non-terminal tasks one ``(owner, tenant)`` may have (``None``: no limit).
    max_active_tasks_per_owner: int | None = None

    def _ok(self, *texts: str | None) -> bool:
        """Whether the database can hold ``texts`` as keys (an id it cannot hold matches nothing)."""
        return all(storable(text, nul=self.NUL) for text in texts)

    @property
    def _artifact_reads(self) -> ArtifactReads:
        reads: ArtifactReads | None = self.__dict__.get("_artifact_read_cache")
        if reads is None:
            reads = self.__dict__["_artifact_read_cache"] = ArtifactReads()
        return reads

    @abc.abstractmethod
    async def _fetch_task(self, read: TaskRead) -> FetchedTask | None:
        """``(snapshot JSON, version, last_seq, history_count, messages, artifacts)``.

        ``messages``: the JSON of the history rows from ``read.first_message``
        on, oldest first, never beyond ``history_count``. ``history_count`` is
        ``None`` for a row of an older schema whose snapshot holds the history.
        ``artifacts``: the JSON of the artifact rows in order, or ``None`` for
        a row whose snapshot holds its artifacts (written before migration 5);
        a store may skip reading them (``[]``) when the row is at version
        ``read.artifacts_at`` (this store holds the artifacts it had then).
        """

    @abc.abstractmethod
    async def _insert_task(self, new: NewTask) -> None:
        """Insert ``new.task`` at version 1 with its event, history and artifact rows.

        Raises ``ConcurrentModificationError`` if the id is taken.
        """

    @abc.abstractmethod
    async def _update_task(self, write: TaskWrite) -> tuple[int, int]:
        """Write the task's row over its ``write.expected_version``, append its new
        history messages (see :func:`new_messages`), write its artifact rows and log
        the event (if any, in its stored form: see ``_eventlog``), atomically, after
        :meth:`TaskWrite.check` under the row's write lock.

        Returns ``(history rows before the write, history rows appended)``.
        Raises ``TaskNotFoundError``, ``LeaseLostError`` or ``ConcurrentModificationError``.
        """

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
    ) -> StoredTask | None:
        if not self._ok(task_id):
            return None
        if history_length is not None:
            history_length = max(0, history_length)
        scope = scope_key(owner, tenant)
        cached = self._histories.get(task_id) if history_length is None else None
        since = 0 if cached is None else cached[0]
        # Artifact rows unchanged since this store's last read (or write) are not read again.
        known = self._artifact_reads.get(task_id)
        at = None if known is None else known[0]
        row = await self._fetch_task(TaskRead(task_id, scope, history_length, since, at))
        if row is not None and cached is not None and (row[3] or 0) < since:
            # Not the task the cache knew (history never shrinks): read it all.
            self._histories.pop(task_id, None)
            cached, row = None, await self._fetch_task(TaskRead(task_id, scope, None, 0, at))
        if row is None:
            return None
        data, version, last_seq, count, messages, artifacts = row
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
            self._histories.remember(task_id, count, task.history)
        if same:
            assert known is not None
            task = replace_task(task, artifacts=known[1]) if known[1] else task
        elif artifacts is not None:
            self._artifact_reads.remember(task_id, version, task.artifacts)
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
    ) -> StoredTask:
        from ._eventlog import compact_event

        snapshot = encode_head(task)
        if not self._ok(task.id):
            raise InvalidParamsError(self.BAD_TASK_ID)
        messages = all_messages(task)
        artifacts = artifact_rows(task)
        logged = None
        if event is not None:
            positions = {data: i for i, (_, data, _) in enumerate(messages)}
            logged, _ = compact_event(event, task, positions, {})
        await self._insert_task(
            NewTask(task, scope_key(owner, tenant), snapshot, logged, messages, artifacts)
        )
        self._artifact_reads.remember(task.id, 1, task.artifacts)
        last_seq = 0 if event is None else 1
        return StoredTask(task=task, version=1, owner=owner, tenant=tenant, last_seq=last_seq)

    def _changed_artifacts(self, task: Task, expected_version: int) -> list[int] | None:
        """Positions of the artifacts of ``task`` that are not the very ones read at
        ``expected_version`` (``None``: unknown, or some were removed or moved)."""
        read = self._artifact_reads.get(task.id)
        if read is None or read[0] != expected_version:
            return None
        before, after = read[1], task.artifacts
        if len(after) < len(before) or any(
            a.artifact_id != b.artifact_id for a, b in zip(before, after, strict=False)
        ):
            return None
        return [i for i, a in enumerate(after) if i >= len(before) or a is not before[i]]

    async def update(
        self,
        task: Task,
        expected_version: int,
        *,
        event: StreamResponse | None = None,
        history_offset: int = 0,
        lease: int | None = None,
    ) -> int:
        snapshot = encode_head(task)
        if not self._ok(task.id):
            raise TaskNotFoundError(f"task {task.id!r} not found")
        changed = self._changed_artifacts(task, expected_version)
        before, appended = await self._update_task(
            TaskWrite(task, expected_version, snapshot, event, history_offset, changed, lease)
        )
        self._artifact_reads.remember(task.id, expected_version + 1, task.artifacts)
        # The next whole read of the task then reads no history row it wrote.
        fresh = task.history[max(0, before - history_offset) :]
        self._histories.wrote(
            task.id,
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
        )
        total, rows = await self._fetch_page(query)
        return task_page(rows, query.page_size, total, _decode_row)

    # -- push configs: an id the database cannot hold names no task or config ---------------

    @abc.abstractmethod
    async def _upsert_config(self, task_id: str, config_id: str, data: bytes) -> None:
        """Store the config JSON ``data`` of the task (one with ``config_id`` keeps its
        place in the creation order). Raises ``TaskNotFoundError`` if there is no task."""

    @abc.abstractmethod
    async def _select_config(self, task_id: str, config_id: str) -> bytes | str | None:
        """The JSON of a config of the task (``None``: none)."""

    @abc.abstractmethod
    async def _select_configs(self, task_id: str) -> Sequence[bytes | str]:
        """The JSON of the task's configs, in creation order."""

    @abc.abstractmethod
    async def _delete_config(self, task_id: str, config_id: str) -> None:
        """Delete a config of the task, if there is one."""

    async def set_push_config(
        self, task_id: str, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        config_id = push_config_id(config)
        data = encode_config(config)
        if not self._ok(task_id, config_id):
            raise TaskNotFoundError(f"task {task_id!r} not found")
        await self._upsert_config(task_id, config_id, data)
        return config

    async def get_push_config(
        self, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        if not self._ok(task_id, config_id):
            return None
        data = await self._select_config(task_id, config_id)
        return None if data is None else decode_config(data)

    async def list_push_configs(self, task_id: str) -> builtins.list[TaskPushNotificationConfig]:
        if not self._ok(task_id):
            return []
        return [decode_config(data) for data in await self._select_configs(task_id)]

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        if self._ok(task_id, config_id):
            await self._delete_config(task_id, config_id)

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


def storable(text: str | None, *, nul: bool) -> bool:
    """Whether a database text column can hold ``text`` (``nul``: it may contain NUL)."""
    if text is None:
        return True
    if not nul and "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return False
    return True


# --- misc ---------------------------------------------------------------------------------

#: The ``a2a_task_counts`` keys whose sum is a scope's number of active tasks.
ACTIVE_KEYS: tuple[str, ...] = tuple(state.value for state in ACTIVE_STATES)


def as_seconds(age: timedelta | float) -> float:
    seconds = age.total_seconds() if isinstance(age, timedelta) else float(age)
    if seconds < 0:
        raise ValueError("age must not be negative")
    return seconds


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_identifier(name: str, what: str) -> str:
    if not _IDENT.fullmatch(name):
        raise ValueError(
            f"{what} {name!r} is not a plain SQL identifier (letters, digits, underscore)"
        )
    return name


def split_url(url: str, ours: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """``url`` without the query parameters named in ``ours``, and their values.

    The rest of the URL is kept verbatim (libpq parses it).
    """
    base, sep, query = url.partition("?")
    if not sep:
        return url, {}
    mine: dict[str, str] = {}
    kept: list[str] = []
    for piece in query.split("&"):
        key, _, value = piece.partition("=")
        if unquote(key) in ours:
            mine[unquote(key)] = unquote_plus(value)
        elif piece:
            kept.append(piece)
    return (f"{base}?{'&'.join(kept)}" if kept else base), mine
