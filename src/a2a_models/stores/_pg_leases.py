"""The leases of :class:`~a2a_models.stores.PostgresTaskStore` (see
:class:`~a2a_models.server.LeasingExecutor`): taking, renewing, giving up and taking
over the lease on a task's turn, each one statement."""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import _migrations
from ._pg_pool import XID, Xact

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgLeases"]

T = TypeVar("T")


class PgLeases:
    """The lease methods of the PostgreSQL store (a mixin: the store brings its
    ``_tasks`` table name and its ``_run`` and ``_write``)."""

    _tasks: str

    if TYPE_CHECKING:

        async def _run(
            self,
            fn: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]],
            *,
            idempotent: bool = False,
            limit: bool = True,
        ) -> T: ...

        async def _write(
            self, fn: Callable[[psycopg.AsyncConnection[Any], Xact], Awaitable[T]]
        ) -> T: ...

    async def acquire_lease(self, task_id: str, worker: str, ttl: float) -> int | None:
        """Take (or keep) the lease on a task's turn: the new lease epoch (the fencing
        token of this acquisition), ``None`` if another live worker holds it."""

        async def acquire(conn: psycopg.AsyncConnection[Any]) -> int | None:
            cursor = await conn.execute(
                f"UPDATE {self._tasks} SET lease_owner = %s,"
                " lease_expires = now() + make_interval(secs => %s),"
                " lease_epoch = lease_epoch + 1 WHERE id = %s"
                " AND (lease_expires IS NULL OR lease_owner = %s OR lease_expires < now())"
                " RETURNING lease_epoch",
                (worker, ttl, task_id, worker),
            )
            row = await cursor.fetchone()
            return None if row is None else int(row[0])

        # Again after a lost connection: a lease this worker took meanwhile is its own
        # to take again (a new epoch, which no run has used).
        return await self._run(acquire, idempotent=True)

    async def renew_leases(self, worker: str, ttl: float) -> builtins.set[str]:
        """Extend every lease ``worker`` holds; the ids of those tasks."""

        async def renew(conn: psycopg.AsyncConnection[Any]) -> builtins.set[str]:
            cursor = await conn.execute(
                f"UPDATE {self._tasks} SET lease_expires = now() + make_interval(secs => %s)"
                " WHERE lease_owner = %s AND lease_expires IS NOT NULL RETURNING id",
                (ttl, worker),
            )
            return {row[0] for row in await cursor.fetchall()}

        return await self._run(renew, idempotent=True)

    async def release_lease(self, task_id: str, worker: str, epoch: int | None = None) -> None:
        """Give up ``worker``'s lease on a task (nothing if it holds none; with
        ``epoch``, nothing if the lease was taken again since that acquisition)."""
        where = " WHERE id = %s AND lease_owner = %s" + (
            "" if epoch is None else " AND lease_epoch = %s"
        )
        params = (task_id, worker) if epoch is None else (task_id, worker, epoch)

        async def release(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(
                f"UPDATE {self._tasks} SET lease_owner = NULL, lease_expires = NULL" + where,
                params,
            )

        await self._run(release, idempotent=True)

    async def claim_expired_leases(
        self, worker: str, ttl: float, limit: int = 100
    ) -> builtins.list[tuple[str, str]]:
        """Take over up to ``limit`` running tasks whose worker is gone: ``(task_id, scope)``.

        A task is taken over when its lease lapsed, or when it is submitted or
        working with no lease and unchanged for ``ttl`` seconds (a crash right
        after it was created, or a database from before leases). Rows another
        worker is claiming at the same moment are skipped.
        """

        # A transaction, as a pull: claims whose answer was lost would be leases this
        # worker holds (and renews) without knowing of them.
        async def claim(
            conn: psycopg.AsyncConnection[Any], xact: Xact
        ) -> builtins.list[tuple[str, str]]:
            cursor = await conn.execute(
                f"UPDATE {self._tasks} SET lease_owner = %s,"
                " lease_expires = now() + make_interval(secs => %s),"
                " lease_epoch = lease_epoch + 1"
                f" WHERE id IN (SELECT id FROM (SELECT id FROM {self._tasks}"
                " WHERE lease_expires < now() LIMIT %s) AS lapsed"
                f" UNION SELECT id FROM (SELECT id FROM {self._tasks} WHERE lease_expires IS NULL"
                f" AND state IN {_migrations._RUNNING}"
                " AND updated_at < now() - make_interval(secs => %s) LIMIT %s) AS orphans)"
                " AND (lease_expires < now() OR lease_expires IS NULL)"
                f" RETURNING id, scope, {XID}",
                (worker, ttl, limit, ttl, limit),
            )
            rows = await cursor.fetchall()
            if rows:
                xact.xid = rows[0][2]
            return [(row[0], row[1]) for row in rows]

        return await self._write(claim)
