"""Retention: finished tasks older than an age are deleted, in the background or on demand.

``a2a-models serve --retain-terminal 7d`` runs a :class:`Retention` next to
the server; ``a2a-models store prune URL --older-than 7d`` runs one pass.
Deletion goes through the store's ``delete_terminal_older_than``, which works
in bounded batches (one transaction each), so serving never waits long.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from .._outages import repeat_forever

__all__ = ["DEFAULT_RETAIN_TERMINAL", "Retention", "format_age", "parse_age"]

log = logging.getLogger("a2a_models.stores")

#: ``serve``'s default: finished tasks are kept 7 days.
DEFAULT_RETAIN_TERMINAL = "7d"

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"(\d+(?:\.\d+)?)([smhdw]?)")


def parse_age(text: str) -> float | None:
    """Seconds in an age such as ``7d``, ``12h``, ``30m``, ``45s``, ``1w`` or ``90``
    (seconds); ``None`` for ``off``/``never``/``none``. Raises :class:`ValueError`."""
    value = text.strip().lower()
    if value in ("off", "never", "none"):
        return None
    total = 0.0
    pos = 0
    for match in _AGE.finditer(value):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2) or "s"]
        pos = match.end()
    if pos != len(value) or not value:
        raise ValueError(f"not an age: {text!r} (examples: 7d, 12h, 30m, 45s, 1w, 1d12h, or off)")
    return total


def format_age(seconds: float) -> str:
    for unit in ("w", "d", "h", "m"):
        if seconds >= _UNITS[unit] and seconds % _UNITS[unit] == 0:
            return f"{int(seconds // _UNITS[unit])}{unit}"
    return f"{seconds:g}s"


class Retention:
    """Deletes ``store``'s tasks that finished at least ``age`` seconds ago, every ``interval``.

    ``store`` is any store with ``delete_terminal_older_than(age)`` (the SQL
    stores). The first pass runs right after :meth:`start`; a failing pass is
    logged and retried at the next interval. ``interval`` defaults to a tenth
    of ``age``, between 10 seconds and 10 minutes.
    """

    def __init__(self, store: Any, age: float, *, interval: float | None = None) -> None:
        if not callable(getattr(store, "delete_terminal_older_than", None)):
            raise TypeError(f"{store!r} cannot delete old tasks (no delete_terminal_older_than)")
        if age < 0:
            raise ValueError("age must not be negative")
        self.store = store
        self.age = age
        self.interval = interval if interval is not None else min(600.0, max(10.0, age / 10))
        self.deleted = 0
        self._task: asyncio.Task[None] | None = None

    async def run_once(self) -> int:
        """One pass; the number of tasks deleted."""
        deleted: int = await self.store.delete_terminal_older_than(self.age)
        self.deleted += deleted
        if deleted:
            log.info(
                "retention: deleted %d tasks finished over %s ago", deleted, format_age(self.age)
            )
        return deleted

    def start(self) -> None:
        """Run passes in the background until :meth:`aclose`."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="a2a-retention")

    async def _loop(self) -> None:
        await repeat_forever(
            self.run_once, self.interval, log, "retention: deleting old finished tasks"
        )

    async def aclose(self) -> None:
        """Stop the background passes (a batch in flight commits or rolls back whole)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
