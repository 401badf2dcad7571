"""How a background loop that retries (lease upkeep, retention, a worker's pulls)
reports a failure that lasts: once, not on every attempt.

A store that is down fails every attempt the same way; a log line (and a
traceback) per attempt buries everything else in the log while it lasts.
"""

from __future__ import annotations

import logging

__all__ = ["FailureStreak"]


class FailureStreak:
    """The failures of one retrying loop, logged once per outage.

    :meth:`failed` logs the first failure of a streak (an error, with its
    traceback) and any failure that differs from the one before it; repeats go
    to debug. :meth:`succeeded` ends the streak, saying how long it was.
    """

    __slots__ = ("_failures", "_last", "_log", "_what")

    def __init__(self, log: logging.Logger, what: str) -> None:
        self._log = log
        self._what = what
        self._failures = 0
        self._last: tuple[type[BaseException], str] | None = None

    def failed(self, exc: BaseException, retry_in: float) -> None:
        """Record a failed attempt; the loop tries again in ``retry_in`` seconds."""
        key = (type(exc), str(exc))
        if key != self._last:
            self._log.error(
                "%s failed (%s); retrying every %.3g s",
                self._what,
                " ".join(str(exc).split()) or type(exc).__name__,
                retry_in,
                exc_info=exc,
            )
        else:
            self._log.debug("%s failed again (%d in a row)", self._what, self._failures + 1)
        self._failures += 1
        self._last = key

    def succeeded(self) -> None:
        """Record a successful attempt (ends a streak of failures)."""
        if self._failures:
            self._log.warning("%s works again after %d failed attempts", self._what, self._failures)
            self._failures = 0
            self._last = None
