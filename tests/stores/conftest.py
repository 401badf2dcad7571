"""Fixtures of the store tests: one contract suite over every TaskStore.

PostgreSQL tests use ``A2A_TEST_POSTGRES_DSN`` (default: the local test
database) and run in a schema of their own, dropped afterwards; they are
skipped when the database is unreachable, unless ``A2A_REQUIRE_POSTGRES=1``.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from _procs import PG_DSN

from a2a_models.server import InMemoryTaskStore, TaskStore
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore


@functools.cache
def postgres_problem() -> str | None:
    """Why PostgreSQL tests cannot run (``None``: they can)."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (the postgres extra)"
    try:
        with psycopg.connect(PG_DSN, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"PostgreSQL at {PG_DSN} is unreachable: {exc}"
    return None


def require_postgres() -> None:
    problem = postgres_problem()
    if problem is not None:
        if os.environ.get("A2A_REQUIRE_POSTGRES") == "1":
            pytest.fail(problem)
        pytest.skip(problem)


def drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh schema name (the store creates it); dropped after the test."""
    require_postgres()
    schema = f"a2a_test_{uuid.uuid4().hex[:16]}"
    try:
        yield schema
    finally:
        drop_schema(schema)


@pytest.fixture
def pg_dsn() -> str:
    require_postgres()
    return PG_DSN


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return tmp_path / "tasks.db"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    """Every TaskStore implementation, each fresh and empty."""
    kind: str = request.param
    if kind == "memory":
        yield InMemoryTaskStore()
        return
    if kind == "sqlite":
        lite = SQLiteTaskStore(tmp_path / "contract.db")
        try:
            yield await lite.open()
        finally:
            await lite.aclose()
        return
    schema: str = request.getfixturevalue("pg_schema")
    pg = PostgresTaskStore(PG_DSN, schema=schema)
    try:
        yield await pg.open()
    finally:
        await pg.aclose()
