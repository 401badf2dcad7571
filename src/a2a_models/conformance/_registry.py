"""The check registry: what a check is, what it can conclude, and every registered check.

A check is an ``async def`` taking a :class:`~._context.CheckContext`,
registered with :func:`check`. It passes by returning (optionally a note),
and concludes otherwise by raising :class:`CheckFailed`, :class:`CheckSkipped`
or :class:`NotApplicable` (the context has helpers that do this). Anything
else it raises is a failure of that check, never of the run.
"""

from __future__ import annotations

import enum
import fnmatch
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import A2AError

if TYPE_CHECKING:
    from ._context import CheckContext

__all__ = [
    "ALL_TRANSPORTS",
    "CARD",
    "CHECKS",
    "GRPC",
    "JSONRPC",
    "REST",
    "Check",
    "CheckFailed",
    "CheckFunc",
    "CheckResult",
    "CheckSkipped",
    "Citation",
    "Exchange",
    "Level",
    "NotApplicable",
    "Requirement",
    "Status",
    "check",
    "select_checks",
]

#: Transport of checks that look at the agent card only (run once per version).
CARD = "card"
JSONRPC = "jsonrpc"
REST = "rest"
#: The gRPC binding (1.0 only); its checks are in ``_checks/grpc_binding.py``.
GRPC = "grpc"
ALL_TRANSPORTS = (JSONRPC, REST)


class Level(enum.Enum):
    """RFC 2119 strength of the rule a check tests."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class Status(enum.Enum):
    """A check's verdict."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    NOT_APPLICABLE = "not-applicable"


class Requirement(enum.Enum):
    """What the agent must claim for a check to apply."""

    STREAMING = "streaming"
    PUSH = "push-notifications"
    EXTENDED_CARD = "extended-agent-card"
    CONTRACT = "conformance-contract"
    NO_STREAMING = "no-streaming"
    NO_PUSH = "no-push-notifications"
    NO_EXTENDED_CARD = "no-extended-agent-card"
    #: the card requires authentication (non-empty security requirements)
    SECURED = "security-requirements"
    #: the card marks an extension ``required`` (every request must name it)
    REQUIRED_EXTENSION = "required-extension"


#: The requirements of the checks of the streaming and the push-notification
#: contract (what the conformance agent does when asked).
STREAM_CONTRACT = (Requirement.STREAMING, Requirement.CONTRACT)
PUSH_CONTRACT = (Requirement.PUSH, Requirement.CONTRACT)


class CheckFailed(A2AError):
    """The server broke the rule."""


class CheckSkipped(A2AError):
    """The check could not decide (a prerequisite failed, a key was unreachable, ...)."""


class NotApplicable(A2AError):
    """The rule does not apply to this agent (it does not claim the capability)."""


@attrs.frozen(slots=True)
class Exchange:
    """Evidence: one HTTP request and (an excerpt of) what came back."""

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...] = ()
    request_body: str = ""
    status: int | None = None
    response_headers: tuple[tuple[str, str], ...] = ()
    response_body: str = ""
    error: str | None = None
    elapsed: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "request": {
                "method": self.method,
                "url": self.url,
                "headers": dict(self.request_headers),
                "body": self.request_body,
            },
            "response": {
                "status": self.status,
                "headers": dict(self.response_headers),
                "body": self.response_body,
                "error": self.error,
            },
            "elapsed": round(self.elapsed, 4),
        }

    def render(self) -> str:
        lines = [f"> {self.method} {self.url}"]
        lines += [f"> {k}: {v}" for k, v in self.request_headers]
        if self.request_body:
            lines.append(f"> {self.request_body}")
        if self.error is not None:
            lines.append(f"< (no response: {self.error})")
        else:
            lines.append(f"< HTTP {self.status}")
            lines += [f"< {k}: {v}" for k, v in self.response_headers]
            if self.response_body:
                lines.append(f"< {self.response_body}")
        return "\n".join(lines)


CheckFunc = Callable[["CheckContext"], Awaitable[str | None]]


@attrs.frozen(slots=True)
class Citation:
    """Where one version of the spec states the rule a check tests, and how strongly.

    ``section``: that version's section numbers (``§7.1, §8.2``; it may also name
    JSON-RPC 2.0 sections). ``quote``: the rule's words as that version has them
    (``source``: ``spec``, its specification text; ``schema``, the 0.3 JSON Schema's
    descriptions; ``proto``, the comments of its ``a2a.proto``). ``level``: the rule's
    strength in that version; ``None`` when that version states no rule a server could
    break (it is silent, or looser than 1.0): the check's failures are then advisories.
    """

    section: str
    quote: str = ""
    level: Level | None = Level.MUST
    source: str = "spec"

    @property
    def advisory(self) -> bool:
        return self.level is None

    def numbers(self) -> tuple[str, ...]:
        """The A2A section numbers cited (not those of JSON-RPC 2.0 or RFCs)."""
        text = re.sub(r"(JSON-RPC 2\.0|RFC \d+)\s+(§[\d.]+(,\s*)?)+", "", self.section)
        return tuple(re.findall(r"§(\d+(?:\.\d+)*)", text))

    def render(self) -> str:
        """``§7.4: "The server will attempt ..." (schema)``: the sections and the words."""
        where = "" if self.source == "spec" else f" ({self.source})"
        return self.section + (f': "{self.quote}"{where}' if self.quote else "")


@attrs.frozen(slots=True)
class Check:
    """One rule of the spec and the function that tests it."""

    id: str
    section: str
    level: Level
    title: str
    func: CheckFunc = attrs.field(eq=False, repr=False)
    versions: frozenset[str] = frozenset({"1.0", "0.3"})
    transports: frozenset[str] = frozenset(ALL_TRANSPORTS)
    requires: frozenset[Requirement] = frozenset()
    timeout: float = 15.0
    #: the 0.3 citation; ``None``: the table in ``_citations.py`` (or, for a check
    #: registered elsewhere, ``section`` and ``level``)
    cite03: Citation | None = attrs.field(default=None, eq=False)

    @property
    def category(self) -> str:
        return self.id.split(".", 1)[0]

    def citation(self, version: str) -> Citation:
        """What ``version`` of the spec says of this check's rule (1.0: ``section``)."""
        if version == "0.3":
            if self.cite03 is not None:
                return self.cite03
            from ._citations import CITATIONS_03

            found = CITATIONS_03.get(self.id)
            if found is not None:
                return found
        return Citation(section=self.section, level=self.level)

    def level_for(self, version: str) -> Level:
        """The check's strength on ``version``: MAY where that version states no rule
        (its failures are advisories there)."""
        return self.citation(version).level or Level.MAY

    def applies_to(self, version: str, transport: str) -> bool:
        return version in self.versions and transport in self.transports


@attrs.frozen(slots=True)
class CheckResult:
    """The verdict of one check on one (version, transport), with its evidence."""

    check: Check
    version: str
    transport: str
    status: Status
    message: str = ""
    evidence: tuple[Exchange, ...] = ()
    duration: float = 0.0

    @property
    def id(self) -> str:
        return self.check.id

    @property
    def key(self) -> str:
        """``card.valid[1.0]`` / ``get.unknown-task[1.0-jsonrpc]``: unique within a run."""
        where = self.version if self.transport == CARD else f"{self.version}-{self.transport}"
        return f"{self.check.id}[{where}]"

    @property
    def level(self) -> Level:
        """The check's strength in this result's version (see :meth:`Check.level_for`)."""
        return self.check.level_for(self.version)

    @property
    def section(self) -> str:
        """The sections of this result's version that state the rule."""
        return self.check.citation(self.version).section

    @property
    def failed_must(self) -> bool:
        return self.status is Status.FAIL and self.level is Level.MUST

    @property
    def requirements(self) -> tuple[str, ...]:
        """Ids of the catalogue sentences of this result's version that the check tests
        (``v1.0-3.1.4-5``, ...): a 0.3 target is never judged by a 1.0 sentence."""
        from ._coverage import requirements_of

        prefix = f"v{self.version}-"
        return tuple(r for r in requirements_of(self.check.id) if r.startswith(prefix))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.check.id,
            "key": self.key,
            "title": self.check.title,
            "section": self.section,
            "quote": self.check.citation(self.version).quote,
            "requirements": list(self.requirements),
            "level": self.level.value,
            "version": self.version,
            "transport": self.transport,
            "status": self.status.value,
            "message": self.message,
            "duration": round(self.duration, 4),
            "evidence": [e.to_dict() for e in self.evidence],
        }


#: Every registered check by id, in registration order.
CHECKS: dict[str, Check] = {}


def check(
    id: str,
    section: str,
    level: Level | str,
    title: str,
    *,
    versions: Iterable[str] = ("1.0", "0.3"),
    transports: Iterable[str] = ALL_TRANSPORTS,
    requires: Iterable[Requirement] = (),
    timeout: float = 15.0,
    cite03: Citation | None = None,
) -> Callable[[CheckFunc], CheckFunc]:
    """Register the decorated coroutine function as a check."""

    def register(func: CheckFunc) -> CheckFunc:
        if id in CHECKS:
            raise ValueError(f"duplicate check id {id!r}")
        CHECKS[id] = Check(
            id=id,
            section=section,
            level=Level(level),
            title=title,
            func=func,
            versions=frozenset(versions),
            transports=frozenset(transports),
            requires=frozenset(requires),
            timeout=timeout,
            cite03=cite03,
        )
        return func

    return register


def select_checks(
    checks: Mapping[str, Check],
    *,
    levels: Iterable[Level] = tuple(Level),
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> list[Check]:
    """The checks at ``levels`` whose id matches an ``include`` glob (all if none)
    and no ``exclude`` glob."""
    wanted = set(levels)
    inc, exc = list(include), list(exclude)
    out = []
    for c in checks.values():
        if c.level not in wanted:
            continue
        if inc and not any(fnmatch.fnmatchcase(c.id, p) for p in inc):
            continue
        if any(fnmatch.fnmatchcase(c.id, p) for p in exc):
            continue
        out.append(c)
    return out
