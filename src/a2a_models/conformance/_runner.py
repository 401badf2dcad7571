"""Run the suite: discover the agent, plan (check, version, transport) runs, execute them.

Each check runs under its own timeout; whatever it raises becomes its
verdict, so one broken check never stops the run.
"""

from __future__ import annotations

import asyncio
import re
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs
import httpx

from . import _checks  # noqa: F401 - registers the built-in checks
from ._context import WEBHOOK, CheckContext
from ._registry import (
    ALL_TRANSPORTS,
    CARD,
    CHECKS,
    GRPC,
    Check,
    CheckFailed,
    CheckResult,
    CheckSkipped,
    Citation,
    Level,
    NotApplicable,
    Status,
    select_checks,
)
from ._target import Endpoint, Target, discover, override_endpoints

__all__ = [
    "PlannedRun",
    "SuitePlan",
    "SuiteReport",
    "levels_for",
    "plan",
    "plan_suite",
    "run_suite",
]

CATEGORY_ORDER = [
    "card",
    "auth",
    "version",
    "jsonrpc",
    "rest",
    "send",
    "get",
    "list",
    "cancel",
    "subscribe",
    "stream",
    "lifecycle",
    "push",
    "capability",
    "extended-card",
    "wire",
    "robustness",
]


def levels_for(level: str) -> tuple[Level, ...]:
    """``must`` → MUST; ``should`` → MUST+SHOULD; ``all`` → every level."""
    return {"must": (Level.MUST,), "should": (Level.MUST, Level.SHOULD), "all": tuple(Level)}[
        level.lower()
    ]


@attrs.frozen(slots=True)
class PlannedRun:
    check: Check
    version: str
    transport: str
    endpoint: Endpoint | None

    @property
    def key(self) -> str:
        where = self.version if self.transport == CARD else f"{self.version}-{self.transport}"
        return f"{self.check.id}[{where}]"


@attrs.define
class SuiteReport:
    """Everything a run found."""

    target: Target
    results: list[CheckResult]
    versions: list[str]
    transports: list[str]
    started_at: str
    duration: float
    notes: list[str] = attrs.field(factory=list)

    @property
    def failed_must(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed_must]

    @property
    def exit_code(self) -> int:
        """1 iff a MUST check failed."""
        return 1 if self.failed_must else 0

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.results:
            out[r.status.value] += 1
        return out

    def result(self, key: str) -> CheckResult | None:
        for r in self.results:
            if r.key == key:
                return r
        return None

    def by_status(self, status: Status) -> list[str]:
        return [r.key for r in self.results if r.status is status]


def _order(checks: Iterable[Check]) -> list[Check]:
    def rank(c: Check) -> int:
        try:
            return CATEGORY_ORDER.index(c.category)
        except ValueError:
            return len(CATEGORY_ORDER)

    return sorted(checks, key=rank)  # stable: registration order within a category


def plan(
    target: Target,
    checks: Sequence[Check],
    versions: Sequence[str],
    transports: Sequence[str],
) -> list[PlannedRun]:
    """The (check, version, transport) runs, grouped by version, then transport."""
    runs: list[PlannedRun] = []
    ordered = _order(checks)
    for version in versions:
        runs += [PlannedRun(c, version, CARD, None) for c in ordered if c.applies_to(version, CARD)]
        for transport in transports:
            ep = target.endpoint(version, transport)
            if ep is None:
                continue
            runs += [
                PlannedRun(c, version, transport, ep)
                for c in ordered
                if c.applies_to(version, transport)
            ]
    return runs


def _at_card_url(run: PlannedRun) -> bool:
    """Whether ``run`` talks to the card's URL (not the card check, not an ``--endpoint``)."""
    return run.endpoint is not None and run.endpoint.declared_url is None


async def run_check(
    run: PlannedRun,
    *,
    client: httpx.AsyncClient,
    target: Target,
    auth_headers: Mapping[str, str],
    shared: dict[str, Any],
    peer_headers: Mapping[str, str] | None = None,
    timeout_scale: float = 1.0,
    request_timeout: float = 10.0,
    stream_grace: float = 1.0,
    webhook_url: str = WEBHOOK,
    unreachable: str | None = None,
) -> CheckResult:
    """One check on one (version, transport): its verdict, never an exception.
    ``unreachable`` (why the agent gave no HTTP answer) fails an applicable check unrun."""
    ctx = CheckContext(
        client=client,
        target=target,
        version=run.version,
        transport=run.transport,
        endpoint=run.endpoint,
        auth_headers=auth_headers,
        shared=shared,
        peer_headers=peer_headers,
        request_timeout=request_timeout,
        stream_grace=stream_grace,
        webhook_url=webhook_url,
    )
    started = time.monotonic()

    def done(status: Status, message: str = "", *, labelled: bool = False) -> CheckResult:
        return CheckResult(
            check=run.check,
            version=run.version,
            transport=run.transport,
            status=status,
            message=_label_10(message) if run.version == "0.3" and not labelled else message,
            evidence=tuple(ctx.evidence[-8:]),
            duration=time.monotonic() - started,
        )

    for req in run.check.requires:
        if not target.claims(req, run.version):
            return done(
                Status.NOT_APPLICABLE,
                f"the card does not claim {req.value}"
                if not req.name.startswith("NO_")
                else f"the card claims {req.value[3:]}",
            )
    if unreachable is not None:
        if target.card_exchange is not None:
            ctx.evidence.append(target.card_exchange)
        return done(Status.FAIL, f"not run: the agent gave no HTTP answer ({unreachable})")
    limit = run.check.timeout * timeout_scale
    try:
        note = await asyncio.wait_for(run.check.func(ctx), limit)
    except CheckFailed as exc:
        cited = run.check.citation(run.version)
        if cited.advisory:
            # This version states no rule a server could break here (it is silent, or
            # looser than 1.0): what 1.0 would fail is said, and passes.
            return done(Status.PASS, _advisory(run, _label_10(str(exc)), cited), labelled=True)
        return done(Status.FAIL, str(exc))
    except CheckSkipped as exc:
        return done(Status.SKIP, str(exc))
    except NotApplicable as exc:
        return done(Status.NOT_APPLICABLE, str(exc))
    except TimeoutError:
        return done(Status.FAIL, f"timed out after {limit:.1f}s")
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return done(
            Status.FAIL,
            f"the check crashed: {type(exc).__name__}: {exc} "
            f"({where.filename.rsplit('/', 1)[-1]}:{where.lineno})",
        )
    return done(Status.PASS, "; ".join(n for n in (note, *ctx.advisories) if n))


#: A bare section sign (not after "1.0 ", "0.3 ", "JSON-RPC 2.0 ", "RFC 9110 " or "1.0 (").
_BARE_SECTION = re.compile(
    r"(?:(?<=\s)|(?<=\()|(?<=\[)|^)(?<!\d\.\d )(?<!\d\.\d \()(?<!RFC \d{4} )§"
)


def _label_10(message: str) -> str:
    """A 0.3 result's message with each bare ``§n`` (the checks' messages cite 1.0's
    sections) labelled ``1.0 §n``, so no 1.0 number reads as a 0.3 one."""
    return _BARE_SECTION.sub("1.0 §", message)


def _advisory(run: PlannedRun, problem: str, cited: Citation) -> str:
    """The note of a failure on a version that states no rule: what went wrong, what 1.0
    says, and what the run's version says instead."""
    one = run.check.citation("1.0")
    says = f": {cited.quote!r}" if cited.quote else ""
    return (
        f"advisory: {problem} (1.0 {one.section} makes it a {run.check.level.value}; "
        f"{run.version} {cited.section} states no rule a server could break{says})"
    )


@attrs.frozen
class SuitePlan:
    """What a run will do: the agent as discovered, the runs, and notes on what is left out."""

    target: Target
    runs: list[PlannedRun]
    versions: list[str]
    transports: list[str]
    notes: list[str]


async def plan_suite(
    client: httpx.AsyncClient,
    url: str,
    *,
    version: str = "auto",
    transport: str = "all",
    level: str = "all",
    auth_headers: Mapping[str, str] | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    checks: Mapping[str, Check] | None = None,
    endpoints: Mapping[str, str] | None = None,
    request_timeout: float = 10.0,
) -> SuitePlan:
    """Discover the agent at ``url`` and plan the runs :func:`run_suite` makes (the
    arguments are :func:`run_suite`'s)."""
    target = await discover(client, url, dict(auth_headers or {}), timeout=request_timeout)
    notes: list[str] = []
    if endpoints:
        notes += override_endpoints(target, dict(endpoints))
    if version == "auto":
        versions = target.versions
    else:
        versions = [version]
        if version not in target.versions:
            notes.append(f"the card declares no A2A {version} interface")
    transports = [*ALL_TRANSPORTS, GRPC] if transport == "all" else [transport]
    for v in versions:
        for t in transports:
            if target.endpoint(v, t) is None and (version != "auto" or transport != "all"):
                notes.append(f"no {v} {t} interface declared: its checks were not run")
    if target.guessed:
        notes.append(
            f"no usable agent card ({target.card_problem}); "
            "assumed JSON-RPC 1.0 and 0.3 at the given URL"
        )
    selected = select_checks(
        checks if checks is not None else CHECKS,
        levels=levels_for(level),
        include=include,
        exclude=exclude,
    )
    return SuitePlan(
        target, plan(target, selected, versions, transports), versions, transports, notes
    )


async def run_suite(
    url: str,
    *,
    version: str = "auto",
    transport: str = "all",
    level: str = "all",
    auth_headers: Mapping[str, str] | None = None,
    peer_auth_headers: Mapping[str, str] | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    on_plan: Callable[[Target, list[PlannedRun]], None] | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    client: httpx.AsyncClient | None = None,
    timeout_scale: float = 1.0,
    request_timeout: float = 10.0,
    stream_grace: float = 1.0,
    checks: Mapping[str, Check] | None = None,
    webhook_url: str = WEBHOOK,
    endpoints: Mapping[str, str] | None = None,
) -> SuiteReport:
    """Run the conformance suite against the agent at ``url``.

    ``version``: ``"1.0"``, ``"0.3"`` or ``"auto"`` (every version the card
    declares). ``transport``: ``"jsonrpc"``, ``"rest"`` or ``"all"``.
    ``level``: ``"must"``, ``"should"`` (MUST and SHOULD) or ``"all"``.
    ``include``/``exclude`` are globs over check ids. ``peer_auth_headers``
    are the credentials of a second identity: with them the owner-isolation
    checks run (a task of one identity must stay invisible to the other).
    ``webhook_url`` is the URL the push config checks register (nothing is
    delivered to it; an agent may refuse private addresses, §13.2).
    ``endpoints`` tests interfaces at other URLs than the card's
    (``{"jsonrpc": URL, "0.3/rest": URL}``: a transport, optionally after a
    version and a slash), for a card that advertises an address the tester cannot
    reach; ``card.interfaces-reachable`` still probes the card's own.
    """
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    headers = dict(auth_headers or {})
    own = client is None
    http = client or httpx.AsyncClient(timeout=request_timeout, follow_redirects=True)
    try:
        planned = await plan_suite(
            http,
            url,
            version=version,
            transport=transport,
            level=level,
            auth_headers=headers,
            include=include,
            exclude=exclude,
            checks=checks,
            endpoints=endpoints,
            request_timeout=request_timeout,
        )
        target, runs, notes = planned.target, planned.runs, list(planned.notes)
        if on_plan is not None:
            on_plan(target, runs)
        shared: dict[tuple[str, str], dict[str, Any]] = {}
        results: list[CheckResult] = []
        # No HTTP answer at all to the card request (refused, timed out, not HTTP): every
        # endpoint check would wait the same request timeout for the same nothing.
        dead = target.guessed and target.card_status is None
        if dead:
            notes.append(
                "the agent gave no HTTP answer to the card request: "
                "the endpoint checks were failed without being run"
            )
        for run in runs:
            result = await run_check(
                run,
                client=http,
                target=target,
                auth_headers=headers,
                peer_headers=peer_auth_headers,
                shared=shared.setdefault((run.version, run.transport), {}),
                timeout_scale=timeout_scale,
                request_timeout=request_timeout,
                stream_grace=stream_grace,
                webhook_url=webhook_url,
                unreachable=target.card_problem if dead and _at_card_url(run) else None,
            )
            results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        if own:
            await http.aclose()
    return SuiteReport(
        target=target,
        results=results,
        versions=list(planned.versions),
        transports=planned.transports,
        started_at=started_at,
        duration=time.monotonic() - t0,
        notes=notes,
    )
