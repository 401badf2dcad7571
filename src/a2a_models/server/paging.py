"""Paging for listings: one page-token scheme, page sizes and the ``ListTasks`` order.

Store authors use this module to implement :meth:`TaskStore.list
<a2a_models.server.TaskStore.list>` exactly like the bundled stores: tasks
sort newest status first, then by id (:func:`status_key`); a page is the
next ``page_size`` matches after the cursor (:func:`list_cursor`), and
:func:`task_page` builds the :class:`TaskPage` from ``page_size + 1`` rows.

Every page token the server issues (tasks, push configs) is a cursor
``(key, id)`` in one opaque form: URL-safe base64 of ``v1|<key>|<id>``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, TypeVar

from ..errors import InvalidParamsError
from ..models import Task

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "NO_TIMESTAMP",
    "TaskPage",
    "decode_cursor",
    "decode_page_token",
    "encode_cursor",
    "encode_page_token",
    "invalid_page_token",
    "list_cursor",
    "status_key",
    "task_page",
    "timestamp_key",
]

#: ``ListTasks`` page size when the request names none.
DEFAULT_PAGE_SIZE = 50
#: The largest ``ListTasks`` page size a request may ask for.
MAX_PAGE_SIZE = 100

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
#: Sort key of a task without a status timestamp: after every stamped one.
NO_TIMESTAMP = -(2**62)
_TOKEN_PREFIX = "v1|"
#: Every cursor key (a status timestamp, a position) fits a signed 64-bit integer, the
#: stores' key columns: a token with a key outside it was not issued by a server.
_KEY_RANGE = range(-(2**63), 2**63)
_Row = TypeVar("_Row")


class TaskPage(NamedTuple):
    """One page of :meth:`TaskStore.list <a2a_models.server.TaskStore.list>`."""

    tasks: list[Task]
    #: Opaque cursor of the next page; ``""`` on the last page.
    next_page_token: str
    #: Number of tasks matching the filters, over all pages.
    total_size: int


def encode_cursor(key: int, item_id: str) -> str:
    """The opaque page token for the cursor ``(key, item_id)``."""
    raw = f"{_TOKEN_PREFIX}{key}|{item_id}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(token: str, *, issued_by: str = "ListTasks") -> tuple[int, str]:
    """``(key, item_id)`` of a page token; ``InvalidParamsError`` if it is not one of ours.

    ``issued_by`` names the operation whose ``nextPageToken`` the caller
    should have sent (it goes into the error message).
    """
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        if not raw.startswith(_TOKEN_PREFIX):
            raise ValueError(raw)
        key, item_id = raw[len(_TOKEN_PREFIX) :].split("|", 1)
        if not item_id or int(key) not in _KEY_RANGE:
            raise ValueError(raw)
        return int(key), item_id
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise invalid_page_token(issued_by) from None


def invalid_page_token(issued_by: str) -> InvalidParamsError:
    """The error for a ``pageToken`` that no ``issued_by`` response gave out."""
    return InvalidParamsError.of_field(
        "pageToken", f"invalid pageToken: use the nextPageToken of a previous {issued_by} response"
    )


def timestamp_key(ts: datetime) -> int:
    """``ts`` in whole microseconds since the epoch (how status timestamps sort)."""
    return (ts - _EPOCH) // _MICRO


def status_key(task: Task) -> int:
    """A task's status timestamp as :func:`timestamp_key` (the sort key of a listing)."""
    ts = task.status.timestamp
    if ts is None:
        return NO_TIMESTAMP
    return timestamp_key(ts)


def encode_page_token(task: Task) -> str:
    """The opaque cursor that continues a listing after ``task``."""
    return encode_cursor(status_key(task), task.id)


def decode_page_token(token: str) -> tuple[int, str]:
    """``(status_key, task_id)`` of a cursor; raises ``InvalidParamsError`` if malformed."""
    return decode_cursor(token)


def list_cursor(page_size: int, page_token: str | None) -> tuple[int, str] | None:
    """Check a listing's ``page_size``; the decoded ``page_token`` (``None``: first page)."""
    if page_size < 1:
        raise InvalidParamsError.of_field("pageSize", "pageSize must be at least 1")
    return decode_page_token(page_token) if page_token else None


def task_page(
    rows: Sequence[_Row], page_size: int, total: int, decode: Callable[[_Row], Task]
) -> TaskPage:
    """The page of a listing from its next ``page_size + 1`` matches, in order.

    Only the first ``page_size`` are decoded; one more only means another
    page follows, whose token continues after the last task of this one.
    """
    tasks = [decode(row) for row in rows[:page_size]]
    more = len(rows) > page_size
    return TaskPage(tasks, encode_page_token(tasks[-1]) if more else "", total)
