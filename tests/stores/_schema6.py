"""A PostgreSQL schema written as a2a-models wrote it at schema version 6 (before
migration 7), in SQL, for the forward-migration tests."""

from __future__ import annotations

from typing import Any

from a2a_models import StreamResponse, Task
from a2a_models.stores import _migrations
from a2a_models.stores._common import (
    artifact_rows,
    encode_head,
    encode_message,
    message_row,
    scope_key,
    task_columns,
)
from a2a_models.stores._pg_pool import jsonb


def create_schema(conn: Any, schema: str, version: int = 6) -> str:
    """Schema ``schema`` at ``version`` (a sync psycopg connection in autocommit); its quoted name."""
    q = f'"{schema}"'
    conn.execute(f"CREATE SCHEMA {q}")
    conn.execute(
        f"CREATE TABLE {q}.a2a_schema_migrations (version integer NOT NULL PRIMARY KEY,"
        " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for migration in _migrations.MIGRATIONS[:version]:
        for statement in migration.postgres:
            conn.execute(statement.replace("{schema}", q))
        conn.execute(
            f"INSERT INTO {q}.a2a_schema_migrations (version, name) VALUES (%s, %s)",
            (migration.version, migration.name),
        )
    return q


def write_task(
    conn: Any,
    q: str,
    task: Task,
    logged: list[bytes],
    *,
    owner: str | None = None,
    refs: dict[int, int] | None = None,
) -> int:
    """Insert ``task`` as the version 6 store kept it: the snapshot, history and
    artifacts in ``jsonb`` (exact bytes in ``*_raw`` where jsonb alters them),
    its event log ``logged`` (stored forms, one row each); ``refs``: artifact
    position -> the event referring to it. Returns the task's key."""
    context_id, state, key, terminal = task_columns(task)
    head, head_raw = jsonb(encode_head(task))
    row = conn.execute(
        f"INSERT INTO {q}.a2a_tasks (id, scope, context_id, state, status_key, version,"
        " last_seq, terminal_at, task, task_raw, history_count, artifact_count) VALUES"
        " (%s, %s, %s, %s, %s, %s, %s, CASE WHEN %s THEN now() END, %s::jsonb, %s, %s, %s)"
        " RETURNING key",
        (
            task.id,
            scope_key(owner, None),
            context_id,
            state,
            key,
            len(logged) + 1,
            len(logged),
            terminal,
            head,
            head_raw,
            len(task.history),
            len(task.artifacts),
        ),
    ).fetchone()
    task_key = int(row[0])
    for pos, message in enumerate(task.history):
        text, raw = jsonb(message_row(message, encode_message(message), task))
        conn.execute(
            f"INSERT INTO {q}.a2a_task_messages (task_key, pos, message, message_raw)"
            " VALUES (%s, %s, %s::jsonb, %s)",
            (task_key, pos, text, raw),
        )
    for pos, data in artifact_rows(task).items():
        text, raw = jsonb(data)
        conn.execute(
            f"INSERT INTO {q}.a2a_task_artifacts (task_key, pos, ref_seq, artifact, artifact_raw)"
            " VALUES (%s, %s, %s, %s::jsonb, %s)",
            (task_key, pos, (refs or {}).get(pos), text, raw),
        )
    for seq, form in enumerate(logged, start=1):
        conn.execute(
            f"INSERT INTO {q}.a2a_task_events (task_key, seq, event) VALUES (%s, %s, %s)",
            (task_key, seq, form),
        )
    return task_key


def whole(event: StreamResponse) -> bytes:
    from a2a_models.stores._common import encode_event

    return encode_event(event)
