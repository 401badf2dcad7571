"""The versioned schema of the database stores.

Each :class:`Migration` has a version (1, 2, ...), a name and the statements
that take a database from the previous version to it, once for SQLite and
once for PostgreSQL. A store applies, in one transaction per migration, the
ones its database has not recorded yet in ``a2a_schema_migrations(version,
name, applied_at)``, so a fresh database gets the whole schema and an
existing one only what is new. Migrations are append-only: never edit one
that has shipped, add the next version instead.

PostgreSQL statements contain ``{schema}``, replaced by the quoted schema
name. Text columns compared or ordered by the stores use ``COLLATE "C"`` so
ordering is by code point, exactly as Python orders ``str``.

Tables (both databases):

* ``a2a_tasks``: one row per task: ``id``, ``scope`` (the owner and tenant
  as the JSON text ``[owner, tenant]``), ``context_id``, ``state``,
  ``status_key`` (the status timestamp in microseconds since the epoch, the
  listing order), ``version``, ``last_seq``, ``terminal_at`` (when the task
  first reached a terminal state), ``created_at``, ``updated_at`` and the
  snapshot ``task`` (the A2A 1.0 JSON of the Task).
* ``a2a_task_events``: the event log, primary key ``(task_id, seq)``, each
  ``event`` the 1.0 JSON of a StreamResponse.
* ``a2a_push_configs``: push-notification configs, primary key
  ``(task_id, config_id)``, ``position`` keeping creation order.

Events and push configs are deleted with their task (``ON DELETE CASCADE``).
In PostgreSQL the JSON columns are ``jsonb``; the few values ``jsonb``
cannot keep exactly (``\\u0000``, lone surrogates, floats written with a
positive exponent, ``-0.0``) are kept in a ``*_raw bytea`` column beside it,
which the store reads instead.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from ..errors import A2AError

__all__ = ["MIGRATIONS", "Migration", "SchemaVersionError", "latest_version"]


class SchemaVersionError(A2AError, RuntimeError):
    """The database was migrated by a newer a2a-models than this one."""


@attrs.frozen
class Migration:
    version: int
    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


_SQLITE_V1 = (
    """
    CREATE TABLE a2a_tasks (
        id          TEXT    NOT NULL PRIMARY KEY,
        scope       TEXT    NOT NULL,
        context_id  TEXT,
        state       TEXT    NOT NULL,
        status_key  INTEGER NOT NULL,
        version     INTEGER NOT NULL,
        last_seq    INTEGER NOT NULL,
        terminal_at REAL,
        created_at  REAL    NOT NULL,
        updated_at  REAL    NOT NULL,
        task        TEXT    NOT NULL
    )
    """,
    "CREATE INDEX a2a_tasks_list ON a2a_tasks (scope, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_context ON a2a_tasks (scope, context_id, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_state ON a2a_tasks (scope, state, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_terminal ON a2a_tasks (terminal_at) WHERE terminal_at IS NOT NULL",
    """
    CREATE TABLE a2a_task_events (
        task_id    TEXT    NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        event      TEXT    NOT NULL,
        created_at REAL    NOT NULL,
        PRIMARY KEY (task_id, seq)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE a2a_push_configs (
        task_id   TEXT    NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
        config_id TEXT    NOT NULL,
        position  INTEGER NOT NULL,
        config    TEXT    NOT NULL,
        PRIMARY KEY (task_id, config_id)
    )
    """,
)

_POSTGRES_V1 = (
    """
    CREATE TABLE {schema}.a2a_tasks (
        id          text COLLATE "C" NOT NULL PRIMARY KEY,
        scope       text COLLATE "C" NOT NULL,
        context_id  text COLLATE "C",
        state       text   NOT NULL,
        status_key  bigint NOT NULL,
        version     bigint NOT NULL,
        last_seq    bigint NOT NULL,
        terminal_at timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now(),
        task        jsonb  NOT NULL,
        task_raw    bytea
    )
    """,
    "CREATE INDEX a2a_tasks_list ON {schema}.a2a_tasks (scope, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_context ON {schema}.a2a_tasks (scope, context_id, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_state ON {schema}.a2a_tasks (scope, state, status_key DESC, id)",
    "CREATE INDEX a2a_tasks_terminal"
    " ON {schema}.a2a_tasks (terminal_at) WHERE terminal_at IS NOT NULL",
    """
    CREATE TABLE {schema}.a2a_task_events (
        task_id    text COLLATE "C" NOT NULL
                   REFERENCES {schema}.a2a_tasks (id) ON DELETE CASCADE,
        seq        bigint NOT NULL,
        event      jsonb  NOT NULL,
        event_raw  bytea,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, seq)
    )
    """,
    """
    CREATE TABLE {schema}.a2a_push_configs (
        task_id    text COLLATE "C" NOT NULL
                   REFERENCES {schema}.a2a_tasks (id) ON DELETE CASCADE,
        config_id  text COLLATE "C" NOT NULL,
        position   bigint GENERATED ALWAYS AS IDENTITY,
        config     jsonb NOT NULL,
        config_raw bytea,
        PRIMARY KEY (task_id, config_id)
    )
    """,
)

#: Every migration, in version order (append-only).
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tasks, event log and push configs", _SQLITE_V1, _POSTGRES_V1),
)


def latest_version(migrations: tuple[Migration, ...]) -> int:
    return migrations[-1].version if migrations else 0


def check_order(migrations: tuple[Migration, ...]) -> None:
    """Migrations must be numbered 1, 2, 3, ... (a programming error otherwise)."""
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise ValueError(
                f"migration {migration.name!r} has version {migration.version}, expected {expected}"
            )


def pending(applied: Collection[int], migrations: tuple[Migration, ...]) -> list[Migration]:
    """The ``migrations`` a database that recorded ``applied`` still needs, in order.

    Raises :class:`SchemaVersionError` if it has one newer than all of them.
    """
    if max(applied, default=0) > latest_version(migrations):
        raise too_new(max(applied), migrations)
    return [migration for migration in migrations if migration.version not in applied]


def too_new(found: int, migrations: tuple[Migration, ...]) -> SchemaVersionError:
    return SchemaVersionError(
        f"the database schema is at version {found}, newer than this a2a-models "
        f"knows ({latest_version(migrations)}): upgrade a2a-models"
    )
