"""JSON log lines carrying the trace and task ids (stdlib only)."""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["JSONLogFormatter"]


class JSONLogFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message and the trace/task ids."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("trace_id", "span_id", "task_id", "context_id"):
            value = getattr(record, key, "")
            if value:
                entry[key] = value
        if record.exc_info and record.levelno >= logging.ERROR:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)
