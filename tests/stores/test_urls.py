"""store_from_url / broker_from_url, and the package's light import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from a2a_models import Task, TaskState, TaskStatus
from a2a_models.server import InMemoryEventBroker, InMemoryTaskStore
from a2a_models.stores import (
    PostgresEventBroker,
    PostgresTaskStore,
    SQLiteTaskStore,
    broker_from_url,
    store_from_url,
)


def test_importing_the_stores_loads_no_database_driver() -> None:
    code = (
        "import sys, a2a_models, a2a_models.stores\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool',"
        " 'sqlite3', '_sqlite3')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_memory_urls() -> None:
    assert isinstance(store_from_url("memory:"), InMemoryTaskStore)
    store = store_from_url("memory://", max_tasks=5)
    assert isinstance(store, InMemoryTaskStore) and store.max_tasks == 5
    assert isinstance(broker_from_url("memory:"), InMemoryEventBroker)


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///a2a.db", "a2a.db"),
        ("sqlite:///data/a2a.db", "data/a2a.db"),
        ("sqlite:////var/lib/a2a.db", "/var/lib/a2a.db"),
        ("sqlite:///:memory:", ":memory:"),
    ],
)
def test_sqlite_urls(url: str, path: str) -> None:
    store = store_from_url(url)
    assert isinstance(store, SQLiteTaskStore) and store.path == path
    assert isinstance(broker_from_url(url), InMemoryEventBroker)


def test_sqlite_url_options() -> None:
    store = store_from_url("sqlite:///a.db?synchronous=normal&busy_timeout=2.5")
    assert isinstance(store, SQLiteTaskStore)
    assert (store.path, store.synchronous, store.busy_timeout) == ("a.db", "NORMAL", 2.5)


async def test_a_sqlite_url_store_works(tmp_path: Path) -> None:
    store = store_from_url(f"sqlite:///{tmp_path}/via-url.db")
    assert isinstance(store, SQLiteTaskStore) and store.path == f"{tmp_path}/via-url.db"
    try:
        await store.create(Task(id="t1", status=TaskStatus(state=TaskState.WORKING)), None)
        assert await store.get("t1", None) is not None
    finally:
        await store.aclose()
    assert (tmp_path / "via-url.db").exists()


def test_postgres_urls() -> None:
    url = "postgresql://app@db.example:5432/agents?schema=a2a&channel=events&sslmode=require"
    store = store_from_url(url)
    assert isinstance(store, PostgresTaskStore) and store.schema == "a2a"
    assert store._own_pool is not None
    assert store._own_pool._conninfo == "postgresql://app@db.example:5432/agents?sslmode=require"
    broker = broker_from_url(url)
    assert isinstance(broker, PostgresEventBroker) and broker.channel == "events"
    assert broker._conninfo == "postgresql://app@db.example:5432/agents?sslmode=require"
    socket = store_from_url("postgresql:///test?host=/var/run/postgresql&schema=s")
    assert isinstance(socket, PostgresTaskStore) and socket.schema == "s"
    assert socket._own_pool is not None
    assert socket._own_pool._conninfo == "postgresql:///test?host=/var/run/postgresql"
    plain = store_from_url("postgres://localhost/test")
    assert isinstance(plain, PostgresTaskStore) and plain.schema == "public"
    assert isinstance(broker_from_url("postgres://localhost/test"), PostgresEventBroker)


@pytest.mark.parametrize("url", ["mysql://x/y", "sqlite://a.db", "sqlite:///", "redis://x", ""])
def test_unsupported_urls(url: str) -> None:
    with pytest.raises(ValueError):
        store_from_url(url)


def test_unsupported_broker_urls() -> None:
    with pytest.raises(ValueError):
        broker_from_url("redis://x")


async def test_postgres_url_store_works(pg_dsn: str, pg_schema: str) -> None:
    store = store_from_url(f"{pg_dsn}?schema={pg_schema}")
    assert isinstance(store, PostgresTaskStore)
    try:
        await store.create(Task(id="t1", status=TaskStatus(state=TaskState.WORKING)), None)
        assert await store.get("t1", None) is not None
    finally:
        await store.aclose()
