"""What the database stores share: JSON of models, scope keys, listing SQL, URLs."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote, unquote_plus

from .. import codec
from .._state import TaskState
from ..errors import InvalidParamsError
from ..models import StreamResponse, Task, TaskPushNotificationConfig
from ..server._store import decode_page_token, encode_page_token, status_key

__all__ = [
    "NO_TIMESTAMP",
    "ListSQL",
    "as_seconds",
    "check_identifier",
    "column_text",
    "decode_config",
    "decode_event",
    "decode_task",
    "encode_config",
    "encode_event",
    "encode_task",
    "make_page_token",
    "scope_key",
    "split_url",
    "status_key",
    "storable",
    "task_columns",
]

_DIALECT = "1.0"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
#: ``status_key`` of a task without a status timestamp (sorts after every stamped one).
NO_TIMESTAMP = -(2**62)

make_page_token = encode_page_token


# --- model JSON ---------------------------------------------------------------------------


def encode_task(task: Task) -> bytes:
    return codec.encode(task, _DIALECT)


def decode_task(data: bytes | str) -> Task:
    return codec.decode(Task, data, _DIALECT)


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


def task_columns(task: Task) -> tuple[str | None, str, int, bool]:
    """``(context_id column, state, status_key, is_terminal)`` of a snapshot."""
    state = task.status.state
    return column_text(task.context_id), state.value, status_key(task), state.is_terminal


# --- listing ------------------------------------------------------------------------------


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
    ) -> None:
        if page_size < 1:
            raise InvalidParamsError("pageSize must be at least 1", {"field": "pageSize"})
        cursor = decode_page_token(page_token) if page_token else None
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
            params.append((status_timestamp_after - _EPOCH) // _MICRO)
        self.where = " AND ".join(clauses)
        self.params = params
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
