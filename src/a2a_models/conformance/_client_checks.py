"""The client checks and their results: :data:`CLIENT_CHECKS`, what the harness
recorded of each request (:class:`Recorded`), :class:`ClientReport` and its rendering."""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from ._registry import Exchange, Level, Status

__all__ = [
    "CLIENT_CHECKS",
    "ClientCheck",
    "ClientCheckResult",
    "ClientReport",
    "Recorded",
    "render_client_report",
]


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
            "Requests go to the URL of the first interface the card declares for the binding",
        ),
        _c(
            "client.version-selection",
            "§8.3.2, §3.6",
            Level.MUST,
            "The client skips an interface of a protocol version it does not speak (the card lists "
            "an A2A 2.0 interface first) and sends nothing there",
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
            "client.content-type",
            "§11.1",
            Level.SHOULD,
            "HTTP+JSON request bodies are sent as application/a2a+json",
        ),
        _c(
            "client.reconnect",
            "§3.1.6, §3.7",
            Level.SHOULD,
            "After a stream drops before the terminal event, the client resubscribes "
            "(SubscribeToTask, ideally with Last-Event-ID) and reaches the terminal state",
        ),
    ]
)


@attrs.define
class Recorded:
    """One request the client sent, how the harness read it, and what it answered."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    op: str = ""
    binding: str = ""
    params: Any = None
    problems: list[str] = attrs.field(factory=list)
    status: int = 0
    answer: str = ""

    def exchange(self, base: str) -> Exchange:
        return Exchange(
            method=self.method,
            url=base + self.path + (f"?{self.query}" if self.query else ""),
            request_headers=tuple(self.headers.items()),
            request_body=self.body.decode("utf-8", "replace")[:2000],
            status=self.status,
            response_body=self.answer[:2000],
        )


@attrs.frozen(slots=True)
class ClientCheckResult:
    check: ClientCheck
    status: Status
    message: str = ""
    evidence: tuple[Exchange, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        from ._coverage import requirements_of

        return {
            "id": self.check.id,
            "title": self.check.title,
            "section": self.check.section,
            "level": self.check.level.value,
            "status": self.status.value,
            "message": self.message,
            "requirements": list(requirements_of(self.check.id)),
            "evidence": [e.to_dict() for e in self.evidence],
        }


@attrs.define
class ClientReport:
    binding: str
    command: str
    results: list[ClientCheckResult]
    outcomes: dict[str, Any]
    exit_code: int | None
    stderr: str = ""

    @property
    def failed_must(self) -> list[ClientCheckResult]:
        return [r for r in self.results if r.status is Status.FAIL and r.check.level is Level.MUST]

    def result(self, check_id: str) -> ClientCheckResult:
        return next(r for r in self.results if r.check.id == check_id)

    def assert_conformant(self, *, level: Level = Level.MUST) -> None:
        """Raise AssertionError (with the report) if a check at ``level`` or stronger failed."""
        levels = (Level.MUST,) if level is Level.MUST else (Level.MUST, Level.SHOULD)
        bad = [r for r in self.results if r.status is Status.FAIL and r.check.level in levels]
        if bad:
            raise AssertionError(render_client_report(self))


def render_client_report(report: ClientReport, fmt: str = "text") -> str:
    """The report as ``text`` or ``json``."""
    if fmt == "json":
        return (
            json.dumps(
                {
                    "binding": report.binding,
                    "command": report.command,
                    "driverExitCode": report.exit_code,
                    "outcomes": report.outcomes,
                    "failedMust": len(report.failed_must),
                    "results": [r.to_dict() for r in report.results],
                },
                indent=2,
            )
            + "\n"
        )
    lines = [
        f"A2A client conformance ({report.binding})",
        f"  driver: {report.command}  (exit {report.exit_code})",
        "",
    ]
    for r in report.results:
        lines.append(
            f"{r.status.value.upper():<5} {r.check.level.value:<6} {r.check.id:<28} "
            f"{r.check.section:<22} {r.message[:140]}"
        )
    lines.append("")
    lines.append(
        "RESULT: "
        + (
            "NOT CONFORMANT (a MUST check failed)"
            if report.failed_must
            else "conformant (no MUST check failed)"
        )
    )
    failures = [r for r in report.results if r.status is Status.FAIL]
    for r in failures:
        lines += ["", f"{r.check.id}: {r.message}"]
        lines += ["    " + ln for ex in r.evidence[:2] for ln in ex.render().splitlines()]
    if report.stderr.strip() and (report.exit_code or failures):
        lines += ["", "driver stderr (tail):", report.stderr[-1500:]]
    return "\n".join(lines) + "\n"
