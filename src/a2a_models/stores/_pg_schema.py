"""The PostgreSQL store's schema: created, or migrated in place, by whichever process opens
it first (replicas starting together wait for each other's migration, then find it done)."""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING, Any

from . import _migrations
from ._pg_pool import atomic, quote

if TYPE_CHECKING:
    import psycopg

__all__ = ["migrate"]

log = logging.getLogger("a2a_models.stores")


async def migrate(conn: psycopg.AsyncConnection[Any], schema: str) -> None:
    """Bring ``schema`` (created if missing) to the latest of :data:`._migrations.MIGRATIONS`.

    Raises :class:`._migrations.SchemaVersionError` for a server older than PostgreSQL 13
    and for a schema a newer a2a-models migrated. A schema already at the latest version
    costs two reads and takes no lock.
    """
    _migrations.check_postgres_version(conn.info.server_version)
    migrations = _migrations.MIGRATIONS
    _migrations.check_order(migrations)
    q = quote(schema)
    table = f"{q}.a2a_schema_migrations"
    if await _version(conn, table) == _migrations.latest_version(migrations):
        return  # the common case: nothing to do, no lock taken
    async with conn.transaction():
        # Serializes replicas migrating the same schema; released at commit.
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(schema),))
        exists = await conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        if await exists.fetchone() is None:
            await conn.execute(f"CREATE SCHEMA {q}")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            " version integer NOT NULL PRIMARY KEY,"
            " name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await conn.execute(f"SELECT version FROM {table}")
        applied = {row[0] for row in await cursor.fetchall()}
        for migration in _migrations.pending(applied, migrations):
            for statement in migration.postgres:
                await conn.execute(statement.replace("{schema}", q))
            await conn.execute(
                f"INSERT INTO {table} (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
            log.info("applied a2a schema migration %d to %s", migration.version, schema)


async def _version(conn: psycopg.AsyncConnection[Any], table: str) -> int | None:
    async with atomic(conn):
        cursor = await conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,))
        row = await cursor.fetchone()
        if row is None or not row[0]:
            return None
        cursor = await conn.execute(f"SELECT max(version) FROM {table}")
        row = await cursor.fetchone()
    return None if row is None else row[0]


def _lock_key(schema: str) -> int:
    digest = hashlib.blake2b(f"a2a_models migrations {schema}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)
