"""The queue of turns for ``a2a-models worker`` processes, in PostgreSQL.

A front end (:class:`~a2a_models.server.FrontEndHandler`) writes a turn in
the transaction that creates or continues its task (the store calls
:func:`enqueue_pending` there); workers take turns with ``SELECT ... FOR
UPDATE SKIP LOCKED``, so each turn goes to exactly one worker and workers
never wait on each other. While queued, the task's lease belongs to the
queue (it never lapses: a long queue is not a dead worker). Taking a turn
deletes its row and takes the task's lease in one statement: from then on the
task is the worker's, and if the worker dies the lease lapses and the task is
taken over (see :class:`~a2a_models.server.LeasingExecutor`).

Why PostgreSQL and not a second system (Redis Streams, say): the store is
already PostgreSQL, the turn and the task commit together (no task without
its turn, no turn without its task), and there is nothing else to run,
back up or monitor. Enqueueing also sends a ``NOTIFY`` so idle workers wake
up at once; they poll as a fallback.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import attrs

from .._outages import one_line
from ..server import Turn, pending_turn
from ._common import PG_PARAMS, split_url
from ._pg_pool import XID, Xact, connect_params, next_notifies

if TYPE_CHECKING:
    import psycopg

    from ._postgres import PostgresTaskStore

__all__ = ["PostgresTurnQueue", "enqueue_pending"]

log = logging.getLogger("a2a_models.stores")


def _channel(schema: str) -> str:
    # A NOTIFY channel name is at most 63 bytes (NAMEDATALEN - 1).
    return f"a2a_turns_{schema}"[:63]


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


#: The lease owner of a task whose turn waits in the queue.
QUEUED = "queue"


def _insert_sql(q: str) -> str:
    # The task's lease is the queue's until a worker takes the turn: a task that
    # waits longer than the lease time is queued, not orphaned (never taken over).
    return (
        f"WITH i AS (INSERT INTO {q}.a2a_turns (task_id, turn) VALUES (%s, %s)"
        f" RETURNING task_id), l AS (UPDATE {q}.a2a_tasks AS k SET lease_owner = '{QUEUED}',"
        " lease_expires = 'infinity', lease_epoch = k.lease_epoch + 1"
        " FROM i WHERE k.id = i.task_id RETURNING k.id)"
        f" SELECT pg_notify(%s, ''), {XID} FROM i"
    )


async def enqueue_pending(
    conn: psycopg.AsyncConnection[Any], q: str, schema: str, task_id: str
) -> None:
    """Inside a task write's transaction: queue the turn pending for ``task_id``, if any."""
    turn = pending_turn(task_id)
    if turn is not None:
        await conn.execute(_insert_sql(q), (task_id, turn.to_json(), _channel(schema)))


class PostgresTurnQueue:
    """The :class:`~a2a_models.server.TurnQueue` of a :class:`PostgresTaskStore`'s database.

    ``url`` is the store's URL (or a libpq connection string), for the
    connection that listens for new turns (the store's pool serves everything else).
    ``poll``: how often :meth:`wait` lets the worker look at the queue while it
    cannot listen.
    """

    def __init__(self, store: PostgresTaskStore, url: str, *, poll: float = 1.0) -> None:
        self.store = store
        self.poll = poll
        self._conninfo, _ = split_url(url, PG_PARAMS)
        q = store._q
        self._turns = f"{q}.a2a_turns"
        self._tasks = f"{q}.a2a_tasks"
        self._insert = _insert_sql(q)
        self._channel = _channel(store.schema)
        self._listener: psycopg.AsyncConnection[Any] | None = None

    async def pull(self, worker: str, ttl: float) -> Turn | None:
        """Take the oldest turn no other worker is taking, with its task's lease
        (``Turn.lease``: the epoch of that acquisition)."""

        # A transaction, not an autocommit statement: a pull that committed but whose
        # answer was lost deleted the turn and leased the task to this worker, which
        # renewed that lease as long as it lived: the task neither ran nor was taken over.
        # Now the answer comes before the COMMIT, and a lost COMMIT is looked up.
        async def take(conn: psycopg.AsyncConnection[Any], xact: Xact) -> tuple[Any, ...] | None:
            cursor = await conn.execute(
                f"WITH t AS (DELETE FROM {self._turns} WHERE id = (SELECT id FROM {self._turns}"
                " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING task_id, turn),"
                f" l AS (UPDATE {self._tasks} AS k SET lease_owner = %s,"
                " lease_expires = now() + make_interval(secs => %s),"
                " lease_epoch = k.lease_epoch + 1 FROM t"
                " WHERE k.id = t.task_id AND (k.lease_owner IN (%s, %s) OR k.lease_expires"
                " IS NULL OR k.lease_expires < now()) RETURNING k.id, k.lease_epoch)"
                f" SELECT t.task_id, t.turn, l.lease_epoch, {XID} FROM t"
                " LEFT JOIN l ON l.id = t.task_id",
                (worker, ttl, worker, QUEUED),
            )
            row = await cursor.fetchone()
            if row is not None:
                xact.xid = row[3]
            return row

        while True:
            row = await self.store._write(take)
            if row is None:
                return None
            task_id, data, epoch, _ = row
            if epoch is not None:
                return attrs.evolve(Turn.from_json(task_id, bytes(data)), lease=int(epoch))
            # Deleted meanwhile, or its turn runs on a live worker: nothing to run here.
            log.warning("dropped a queued turn of task %s: its task is gone or busy", task_id)

    async def push(self, turn: Turn) -> None:
        """Queue ``turn`` (again), at the end of the queue."""

        # A transaction, as a pull: a lost answer is looked up, not queued twice.
        async def insert(conn: psycopg.AsyncConnection[Any], xact: Xact) -> None:
            cursor = await conn.execute(self._insert, (turn.task_id, turn.to_json(), self._channel))
            row = await cursor.fetchone()
            if row is not None:
                xact.xid = row[1]

        await self.store._write(insert)

    async def length(self) -> int:
        """How many turns wait in the queue."""

        async def count(conn: psycopg.AsyncConnection[Any]) -> int:
            cursor = await conn.execute(f"SELECT count(*) FROM {self._turns}")
            row = await cursor.fetchone()
            return 0 if row is None else int(row[0])

        return await self.store._run(count, idempotent=True)

    async def wait(self, timeout: float) -> None:
        """Return on the next ``NOTIFY`` of a queued turn, or after ``timeout`` seconds.

        Returns at once when it starts listening (a turn queued before the
        ``LISTEN`` woke nobody: look again), and after at most ``poll`` seconds
        while it cannot listen.
        """
        import psycopg

        try:
            if self._listener is None:
                kwargs = {"application_name": "a2a-models worker"}
                conn = await psycopg.AsyncConnection.connect(
                    self._conninfo, autocommit=True, **connect_params(self._conninfo, kwargs)
                )
                await conn.execute(f"LISTEN {_quote(self._channel)}")
                self._listener = conn
                return
            await next_notifies(self._listener, timeout)
        except psycopg.OperationalError as exc:
            log.warning("listening for turns failed (%s); polling", one_line(exc))
            await self._drop_listener()
            await asyncio.sleep(min(timeout, self.poll))

    async def _drop_listener(self) -> None:
        conn, self._listener = self._listener, None
        if conn is not None:
            try:
                await conn.close()
            except Exception:
                log.debug("closing the turn listener failed", exc_info=True)

    async def aclose(self) -> None:
        """Close the listening connection (the store is closed by its owner)."""
        await self._drop_listener()
