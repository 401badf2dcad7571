"""What the database stores share: JSON of models and rows, scope keys, listing SQL,
URLs (the store base, :class:`SQLTaskStore`, is in ``_sqlstore``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import unquote, unquote_plus

import orjson

from .. import codec
from .._state import TaskState
from ..models import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
)
from ..server import (
    ACTIVE_STATES,
    DuplicateMessageError,
    replace_task,
)
from ..server.paging import NO_TIMESTAMP, list_cursor, status_key, timestamp_key

__all__ = [
    "ACTIVE_KEYS",
    "ArtifactWrite",
    "FetchedTask",
    "Incarnation",
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
    "ListSQL",
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
    "PG_PARAMS",
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


def decode_message(data: bytes | str) -> Message:
    return codec.decode(Message, data, _DIALECT)


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
    task: Task,
    offset: int,
    stored: int,
    known: Callable[[list[str]], set[str]],
    *,
    new_message: str | None = None,
) -> list[MessageRow]:
    """The rows of the messages of ``task.history`` to append.

    ``task.history`` starts at message number ``offset``; ``stored`` are
    already rows. ``known`` returns which of some id columns the task already has.
    ``new_message``: the id of a message the write must add (a client's), refused
    with :class:`~a2a_models.server.DuplicateMessageError` if the task has it.
    """
    fresh = task.history[max(0, stored - offset) :]
    if not fresh:
        return []
    ids = [str(column_text(m.message_id)) for m in fresh]
    taken = known(ids)
    if new_message is not None and column_text(new_message) in taken:
        raise DuplicateMessageError(task.id, new_message)
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
        artifacts: bool = True,
        nul: bool = True,
    ) -> None:
        cursor = list_cursor(page_size, page_token)
        #: History messages to read per task (``None``: all).
        self.history_length = None if history_length is None else max(0, history_length)
        #: Whether to read the tasks' artifact rows (``False``: the page has none).
        self.artifacts = artifacts
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
            if not nul:
                # An id column without NUL (``nul``: it holds NUL) has no id between the
                # cursor's cut at its first NUL and the cursor (COLLATE "C" orders as
                # Python does): the same page, where PostgreSQL refused the NUL (-32603).
                task_id = task_id.partition("\x00")[0]
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


#: What tells two rows that held the same task id apart (one deleted, the other
#: created later with that id): compared for equality only. The caches of a store
#: hold a task's rows as of one row; a task id can be taken again once its task is
#: deleted (a custom id factory, a store used directly), and the new row's counts
#: and versions start again from where the old one's had been.
Incarnation = object

#: A task as read: ``(snapshot JSON, version, last_seq, history_count, messages,
#: artifacts, incarnation)``.
FetchedTask = tuple[
    bytes | str,
    int,
    int,
    int | None,
    Sequence[bytes | str],
    Sequence[bytes | str] | None,
    Incarnation,
]

#: A listed task as read: ``(snapshot JSON, history_count, history JSON, artifact JSON)``;
#: artifacts ``None``: the snapshot holds them (a row of an older schema).
PageRow = tuple[bytes | str, int | None, Sequence[bytes | str], Sequence[bytes | str] | None]


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


#: Query parameters of a PostgreSQL URL that are ours, not libpq's.
PG_PARAMS = ("schema", "channel", "pool_size", "request_timeout")


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
