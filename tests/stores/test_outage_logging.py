"""A background loop that retries logs a lasting failure once: the first attempt that
fails (with its traceback, unless a database is down), any different failure, then one
line when it works again."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest

from a2a_models._outages import FailureStreak
from a2a_models.stores import Retention


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == level]


def test_a_streak_of_one_failure_is_one_error_and_one_recovery(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("a2a_models.test_outages")
    streak = FailureStreak(log, "lease upkeep")
    caplog.set_level(logging.DEBUG, logger=log.name)
    down = sqlite3.OperationalError("database is locked")
    for _ in range(5):
        streak.failed(down, 0.5)
    streak.failed(ConnectionRefusedError("connection\n refused"), 0.5)  # a new failure
    streak.succeeded()
    streak.succeeded()  # no streak: nothing to say

    errors = _records(caplog, logging.ERROR)
    assert [r.getMessage() for r in errors] == [
        "lease upkeep failed (database is locked); retrying in 0.5 s",
        "lease upkeep failed (connection refused); retrying in 0.5 s",
    ]
    assert errors[0].exc_info is None  # a database down or locked: no bug to trace
    assert errors[1].exc_info is not None  # anything else: the traceback too
    assert len(_records(caplog, logging.DEBUG)) == 4  # the repeats
    assert [r.getMessage() for r in _records(caplog, logging.WARNING)] == [
        "lease upkeep works again after 6 failed attempts"
    ]

    caplog.clear()
    streak.failed(down, 0.5)  # after a recovery, the same failure is news again
    assert len(_records(caplog, logging.ERROR)) == 1


class _FlakyStore:
    """Fails its first ``failures`` passes the way a locked SQLite store does."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.passes = 0

    async def delete_terminal_older_than(self, age: float) -> int:
        self.passes += 1
        if self.passes <= self.failures:
            raise sqlite3.OperationalError("database is locked")
        return 0


async def test_retention_logs_an_outage_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2a_models.stores")
    store = _FlakyStore(failures=8)
    retention = Retention(store, 60.0, interval=0.01)
    retention.start()
    try:
        async with asyncio.timeout(10):
            while store.passes < 12:
                await asyncio.sleep(0.01)
    finally:
        await retention.aclose()
    messages = [r.getMessage() for r in caplog.records if r.name == "a2a_models.stores"]
    assert messages == [
        "retention: deleting old finished tasks failed (database is locked); retrying in 0.01 s",
        "retention: deleting old finished tasks works again after 8 failed attempts",
    ]
