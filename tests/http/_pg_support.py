"""A fresh PostgreSQL schema per multi-process test (replicas, workers, stalls).

Each schema is also the store's NOTIFY channel, so parallel runs never hear
each other; it is dropped afterwards. PostgreSQL is never skipped: CI has it.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest
from _procs import PG_DSN


def store_url(schema: str) -> str:
    """The ``--store`` URL of the PostgreSQL store in ``schema`` (its NOTIFY channel too)."""
    sep = "&" if "?" in PG_DSN else "?"
    return f"{PG_DSN}{sep}schema={schema}&channel={schema}"


def drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@contextlib.contextmanager
def fresh_schema(prefix: str, needed_by: str) -> Iterator[str]:
    """A new schema name ``<prefix>_<random>``, dropped on the way out; the test
    fails (naming ``needed_by``) when PostgreSQL cannot be reached."""
    import psycopg

    try:
        with psycopg.connect(PG_DSN, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:  # no skip: CI has PostgreSQL
        pytest.fail(f"PostgreSQL at {PG_DSN} is needed by the {needed_by} tests: {exc}")
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        drop_schema(name)
