"""Client conformance: the checks a scripted reference server applies to a client's requests."""

from __future__ import annotations

from typing import Final

import attrs

from ._registry import Level

__all__ = ["CLIENT_CHECKS", "ClientCheck"]


@attrs.frozen(slots=True)
class ClientCheck:
    """One rule for clients, judged from the requests the client sent."""

    id: str
    section: str
    level: Level
    title: str


def _c(id: str, section: str, level: Level, title: str) -> tuple[str, ClientCheck]:
    return id, ClientCheck(id, section, level, title)


CLIENT_CHECKS: Final[dict[str, ClientCheck]] = dict(
    [
        _c(
            "client.interface-selection",
            "§8.3.2 (0.3: §5.6.3)",
            Level.MUST,
            "Requests go to the URL of an interface the card declares for the version spoken",
        ),
        _c(
            "client.envelope",
            "§9.3 (0.3: §6.11.1)",
            Level.MUST,
            "JSON-RPC requests are JSON-RPC 2.0 Request objects with a string or integer id, "
            "sent as application/json",
        ),
        _c(
            "client.version-header",
            "§3.6.1, §9.2, §11.2",
            Level.MUST,
            "Every 1.0 request carries A2A-Version: 1.0 (Major.Minor)",
        ),
        _c(
            "client.request-shape",
            "§5.5, §5.7, §3.2",
            Level.MUST,
            "Request params decode strictly as the method's request type of the version",
        ),
        _c(
            "client.ids",
            "§3.4.2, §3.4.3",
            Level.MUST,
            "Message ids are unique; a follow-up names the existing task and its context",
        ),
        _c(
            "client.auth-header",
            "§3.1.11, §7.3",
            Level.MUST,
            "Requests carry the credentials of the scheme the card declares",
        ),
        _c(
            "client.error-handling",
            "§3.3.2 (0.3: §11.2.2)",
            Level.MUST,
            "An A2A error answer reaches the caller as that error (code / type)",
        ),
        _c(
            "client.stream",
            "§3.1.2",
            Level.MUST,
            "A stream is read to its terminal event, in order",
        ),
        _c(
            "client.reconnect",
            "§3.1.6, §3.7",
            Level.SHOULD,
            "After a stream drops before the terminal event, the client resubscribes or reconnects "
            "with Last-Event-ID and reaches the terminal state",
        ),
    ]
)
