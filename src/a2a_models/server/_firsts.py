"""Retries of a first message: a client's message that starts a task (no ``taskId``),
sent again with the same ``messageId`` (its connection dropped before the answer).

The message's key, :func:`started_key`, is a digest of the caller's scope
(owner and tenant) and the ``messageId``. The engine passes it to the store's
``create`` as ``started_by``: a store that keeps it refuses a second task with
that key in the transaction that checks the id (``DuplicateMessageError``
naming the first task), on every process that shares the database. In this
process, :class:`FirstMessages` remembers the runs it started by key, so a
retry that arrives while the first run is still going joins it (one run, two
waiting callers) and one that arrives after it is answered from the store
without starting the agent at all.
"""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict

import attrs

from ..errors import InvalidParamsError, quote_input
from ..models import Message
from ._run import AgentRun

__all__ = ["FirstMessages", "check_same", "started_key"]

#: How many first messages a handler remembers (by key; the runs only while referenced).
_REMEMBERED = 4096


def started_key(owner: str | None, tenant: str | None, message_id: str) -> bytes:
    """The 16-byte BLAKE2b digest of a caller's scope and a message id (each part
    length-prefixed, so no two different triples share their bytes)."""
    digest = hashlib.blake2b(digest_size=16, person=b"a2a-first-msg")
    for part in (owner, tenant, message_id):
        if part is None:
            digest.update(b"\xff")
            continue
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


class FirstMessages:
    """The first messages this handler started runs for, by :func:`started_key`: the
    id of their task and the run while it is alive (a weak reference: a finished run
    is not kept for this), the :data:`_REMEMBERED` most recent."""

    def __init__(self, size: int = _REMEMBERED) -> None:
        self._size = size
        self._entries: OrderedDict[bytes, tuple[str, weakref.ref[AgentRun] | None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, key: bytes) -> tuple[str, AgentRun | None] | None:
        """``(task id, the run if still referenced)`` of the first message with ``key``."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        task_id, ref = entry
        return task_id, None if ref is None else ref()

    def remember(self, key: bytes, run: AgentRun | None, task_id: str) -> None:
        """``key`` started ``run`` (``None``: a run not of this process) of ``task_id``."""
        self._entries[key] = (task_id, None if run is None else weakref.ref(run))
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def forget(self, key: bytes) -> None:
        self._entries.pop(key, None)


def _comparable(message: Message) -> Message:
    """``message`` without what the server fills in (its task and context ids)."""
    return attrs.evolve(message, task_id=None, context_id=None)


def check_same(known: Message, message: Message) -> None:
    """Refuse (``InvalidParams``, field ``message.messageId``) a retry whose content is
    not the first send's: a new message needs an id of its own."""
    if message.context_id and known.context_id and message.context_id != known.context_id:
        same = False
    else:
        same = _comparable(known) == _comparable(message)
    if not same:
        raise InvalidParamsError(
            f"message.messageId {quote_input(message.message_id)} is the id of a message "
            "that already started a task, with other content; a retry must send the same "
            "message, a new message needs an id of its own",
            {"field": "message.messageId"},
        )
