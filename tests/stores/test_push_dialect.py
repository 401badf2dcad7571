"""Each push config keeps the protocol dialect it was set through (every store), so
its webhook gets that dialect's body; migration 12 adds the column (configs stored
before are 1.0) and an older version refuses the migrated database."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from a2a_models import Task, TaskPushNotificationConfig, TaskState, TaskStatus
from a2a_models.server import PushTarget, TaskStore
from a2a_models.stores import PostgresTaskStore, SchemaVersionError, SQLiteTaskStore, _migrations

from ._support import old_push_config


def _task(task_id: str) -> Task:
    return Task(id=task_id, context_id="ctx", status=TaskStatus(state=TaskState.WORKING))


def _config(config_id: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(id=config_id, url=f"https://hooks.example/{config_id}")


async def test_every_store_keeps_the_dialect_and_a_replacement_takes_the_new_one(
    store: TaskStore,
) -> None:
    await store.create(_task("t"), None)
    one, two = _config("one"), _config("two")
    await store.set_push_config("t", one, dialect="0.3")
    await store.set_push_config("t", two)
    assert await store.list_push_targets("t") == [PushTarget(one, "0.3"), PushTarget(two, "1.0")]
    assert await store.get_push_target("t", "one") == PushTarget(one, "0.3")
    # Replaced through the other dialect: the new one, in the same place.
    await store.set_push_config("t", one)
    await store.set_push_config("t", two, dialect="0.3")
    assert await store.list_push_targets("t") == [PushTarget(one, "1.0"), PushTarget(two, "0.3")]
    assert await store.list_push_configs("t") == [one, two]
    assert await store.get_push_config("t", "two") == two
    assert await store.get_push_target("t", "nope") is None
    assert await store.list_push_targets("nope") == []
    with pytest.raises(ValueError, match=r"dialect '0\.2'"):
        await store.set_push_config("t", one, dialect="0.2")
    assert await store.get_push_target("t", "one") == PushTarget(one, "1.0")
    await store.delete_push_config("t", "two")
    assert await store.list_push_targets("t") == [PushTarget(one, "1.0")]


async def test_a_store_written_before_dialects_has_1_0_configs() -> None:
    configs = [_config("a")]

    async def list_push_configs(task_id: str) -> list[TaskPushNotificationConfig]:
        return configs

    async def get_push_config(task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        return configs[0] if config_id == "a" else None

    # Only the methods a store written before dialects has (the defaults read them).
    old: Any = SimpleNamespace(list_push_configs=list_push_configs, get_push_config=get_push_config)
    assert await TaskStore.list_push_targets(old, "t") == [PushTarget(configs[0], "1.0")]
    assert await TaskStore.get_push_target(old, "t", "a") == PushTarget(configs[0], "1.0")
    assert await TaskStore.get_push_target(old, "t", "b") is None


# --- migration 12 -----------------------------------------------------------------------


#: The latest schema version (12 brought the dialects; later ones keep them).
LATEST = _migrations.latest_version(_migrations.MIGRATIONS)


async def test_sqlite_upgrade_to_12_keeps_configs_1_0_and_version_11_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v11.db"
    eleven = _migrations.MIGRATIONS[:11]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", eleven)
        async with SQLiteTaskStore(path) as store:
            await store.create(_task("t"), None)
    old_push_config(path, "t", "c1", "https://hooks.example/c1")
    async with SQLiteTaskStore(path) as store:
        [target] = await store.list_push_targets("t")
        assert (target.config.id, target.dialect) == ("c1", "1.0")
        await store.set_push_config("t", _config("c2"), dialect="0.3")
        assert [t.dialect for t in await store.list_push_targets("t")] == ["1.0", "0.3"]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT max(version) FROM a2a_schema_migrations").fetchone() == (LATEST,)
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", eleven)
        old = SQLiteTaskStore(path)
        with pytest.raises(SchemaVersionError, match=rf"at version {LATEST}, newer .* \(11\)"):
            await old.get("t", None)
        await old.aclose()


async def test_postgres_upgrade_to_12_keeps_configs_1_0_and_version_11_refuses_it(
    pg_dsn: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    eleven = _migrations.MIGRATIONS[:11]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", eleven)
        async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
            await store.create(_task("t"), None)
    old_push_config((pg_dsn, pg_schema), "t", "c1", "https://hooks.example/c1")
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        [target] = await store.list_push_targets("t")
        assert (target.config.id, target.dialect) == ("c1", "1.0")
        await store.set_push_config("t", _config("c2"), dialect="0.3")
        assert [t.dialect for t in await store.list_push_targets("t")] == ["1.0", "0.3"]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", eleven)
        old = PostgresTaskStore(pg_dsn, schema=pg_schema)
        with pytest.raises(SchemaVersionError, match=rf"at version {LATEST}, newer .* \(11\)"):
            await old.open()
        await old.aclose()
