"""``--otel`` of every command that has it (``serve``, ``worker``, the client commands)."""

from __future__ import annotations

import logging
import sys

__all__ = ["start_otel"]


def start_otel(command: str, log_level: str | None = None) -> bool:
    """Configure the OpenTelemetry SDK from the ``OTEL_*`` variables and instrument
    (:func:`~a2a_models.observability.configure_sdk_from_env`); False, said on stderr,
    when it cannot (the SDK or an exporter missing, a bad ``A2A_OTEL_DETAIL``).

    ``log_level`` (the servers'): also send the ``a2a_models`` records at that level
    to stderr as JSON lines carrying the trace and task ids. The client commands pass
    none: their output is for people, their log stays as it was.
    """
    from ..observability import configure_sdk_from_env, log_json_lines

    try:
        configure_sdk_from_env()
    except (ImportError, ValueError) as exc:
        print(f"a2a-models {command}: --otel: {exc}", file=sys.stderr)
        return False
    if log_level is not None:
        log_json_lines(getattr(logging, log_level.upper(), logging.INFO))
    return True
