"""How a failure is told in the log: an exception on one line (:func:`one_line`), and a
background loop that retries (lease upkeep, retention, a worker's pulls) reporting a
failure that lasts once, not on every attempt (:class:`FailureStreak`); an error its
raiser already reported as part of an outage (:class:`ReportedOutage`).

A store that is down fails every attempt the same way; a log line (and a
traceback) per attempt buries everything else in the log while it lasts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import NoReturn

__all__ = [
    "DatabaseTimeout",
    "FailureStreak",
    "ReportedOutage",
    "database_failure",
    "log_failure",
    "one_line",
    "repeat_forever",
    "traceback_of",
]


class ReportedOutage(Exception):
    """Mixed into an error that is one more failure of an outage already logged (a
    webhook that is down): whoever catches it logs it at debug level, not once more."""


class DatabaseTimeout(Exception):
    """A database that did not answer within a store's limit (frozen, or cut off by a
    network that drops packets): one more way a database cannot be used. Not a
    ``TimeoutError``: code timing its own wait must not take it for its own."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        super().__init__(f"the task store did not answer within {limit:g} s")


def one_line(exc: BaseException | None) -> str:
    """An exception's text on one line (its class name when it has none), for a log line."""
    return " ".join(str(exc).split()) or type(exc).__name__


#: SQLSTATEs of a database not set up as the store expects: its table (42P01) or schema
#: (3F000) gone, dropped or migrated away under a running server. The operator's to fix,
#: like a database that is down (sqlite3 already calls "no such table" operational).
_SETUP_GONE = frozenset({"42P01", "3F000"})


def database_failure(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a database driver's error for a database it cannot use
    (PEP 249's ``OperationalError``/``InterfaceError``: sqlite3, psycopg and others
    name them so; or the store's table or schema missing), not a mistake in a statement."""
    if exc is None:
        return False
    if isinstance(exc, DatabaseTimeout):
        return True
    if getattr(exc, "sqlstate", None) in _SETUP_GONE:
        return True
    return any(cls.__name__ in ("OperationalError", "InterfaceError") for cls in type(exc).__mro__)


def traceback_of(exc: BaseException | None) -> BaseException | None:
    """``exc_info`` for logging ``exc``: none for a database that is down or locked
    (no bug to trace: the traceback would say nothing the line does not)."""
    return None if database_failure(exc) else exc


def log_failure(
    log: logging.Logger, what: str, exc: BaseException | None, level: int = logging.ERROR
) -> None:
    """Log that ``what`` failed: one line with the reason, and the traceback unless
    :func:`traceback_of` says none."""
    log.log(level, "%s (%s)", what, one_line(exc), exc_info=traceback_of(exc))


class FailureStreak:
    """The failures of one retrying loop, logged once per outage.

    :meth:`failed` logs the first failure of a streak (an error, with its
    traceback unless :func:`traceback_of` says none) and any failure that
    differs from the one before it; repeats go to debug. :meth:`succeeded`
    ends the streak, saying how long it was.
    """

    __slots__ = ("_failures", "_last", "_log", "_what")

    def __init__(self, log: logging.Logger, what: str) -> None:
        self._log = log
        self._what = what
        self._failures = 0
        self._last: tuple[type[BaseException], str] | None = None

    def failed(self, exc: BaseException, retry_in: float) -> None:
        """Record a failed attempt; the loop tries again in ``retry_in`` seconds (the
        first wait of a streak, when the loop backs off)."""
        key = (type(exc), str(exc))
        if key != self._last:
            self._log.error(
                "%s failed (%s); retrying in %.3g s",
                self._what,
                one_line(exc),
                retry_in,
                exc_info=traceback_of(exc),
            )
        else:
            self._log.debug("%s failed again (%d in a row)", self._what, self._failures + 1)
        self._failures += 1
        self._last = key

    def succeeded(self) -> None:
        """Record a successful attempt (ends a streak of failures)."""
        if self._failures:
            self._log.warning(
                "%s works again after %d failed attempt%s",
                self._what,
                self._failures,
                "" if self._failures == 1 else "s",
            )
            self._failures = 0
            self._last = None


async def repeat_forever(
    step: Callable[[], Awaitable[object]], interval: float, log: logging.Logger, what: str
) -> NoReturn:
    """Await ``step()`` every ``interval`` seconds until cancelled, a failing step
    reported as one :class:`FailureStreak` (``what`` names it in the log)."""
    streak = FailureStreak(log, what)
    while True:
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            streak.failed(exc, interval)
        else:
            streak.succeeded()
        await asyncio.sleep(interval)
