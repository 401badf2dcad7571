"""Mutation proof: every deliberately broken server is flagged by exactly the check(s)
written for its fault, and nothing else (compared with the unbroken server).

Each mutant is one test: it serves the mutant and runs the suite against it. A suite
run is CPU-bound (about a second of this process's CPU, the servers being threads of
it), so runs in one event loop gain nothing: they share one core (and contend for the
GIL). One test per mutant lets pytest-xdist spread them over the workers. The unbroken
servers' reports (one per version, transport and base) are made once per module, as
the first test needs them. ``python -m tests.conformance.test_broken`` prints the
detection table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from a2a_models.conformance import Status, SuiteReport, run_suite

from ._broken import AUTH_HEADERS, BASES, BROKEN, MUTANTS, PEER_HEADERS
from ._servers import AppFactory, serving

Combo = tuple[str, str, str]
COMBOS: list[Combo] = sorted({mu.combo for mu in MUTANTS.values()})


def _failed_ids(report: SuiteReport) -> set[str]:
    return {r.id for r in report.results if r.status is Status.FAIL}


def run_one(factory: AppFactory, combo: Combo) -> SuiteReport:
    """Serve ``factory`` and run the suite on it, as ``combo`` says."""
    with serving(factory) as url:
        return asyncio.run(
            run_suite(
                url,
                version=combo[0],
                transport=combo[1],
                stream_grace=0.5,
                auth_headers=AUTH_HEADERS if combo[2] == "secured" else None,
                peer_auth_headers=PEER_HEADERS if combo[2] == "secured" else None,
            )
        )


def run_mutants() -> tuple[dict[Combo, SuiteReport], dict[str, SuiteReport]]:
    """The unbroken server's report per (version, transport, base) and every mutant's report."""
    baselines = {c: run_one(BASES[c[2]], c) for c in COMBOS}
    return baselines, {name: run_one(mu.app, mu.combo) for name, mu in MUTANTS.items()}


def detection_table(baselines: dict[Combo, SuiteReport], reports: dict[str, SuiteReport]) -> str:
    lines = [f"{'mutant':<34} {'run':<12} {'detected by':<60} verdict"]
    hits = 0
    for name, mu in sorted(MUTANTS.items()):
        base = _failed_ids(baselines[mu.combo])
        got = _failed_ids(reports[name]) - base
        ok = got == mu.expect
        hits += bool(got & mu.expect) or (not mu.expect and not got)  # tolerated: no fault
        lines.append(
            f"{name:<34} {mu.version + '-' + mu.transport:<12} "
            f"{', '.join(sorted(got)) or '(nothing)':<60} "
            f"{'exact' if ok else 'WANT ' + ', '.join(sorted(mu.expect))}"
        )
    lines.append(f"detected {hits}/{len(MUTANTS)} mutants")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def baseline() -> Callable[[Combo], SuiteReport]:
    """The unbroken server's report for a combo, run when first asked for."""
    reports: dict[Combo, SuiteReport] = {}

    def get(combo: Combo) -> SuiteReport:
        if combo not in reports:
            reports[combo] = run_one(BASES[combo[2]], combo)
        return reports[combo]

    return get


def test_there_are_at_least_forty_mutants() -> None:
    assert len(MUTANTS) >= 40


@pytest.mark.parametrize("combo", COMBOS, ids="-".join)
def test_unbroken_server_fails_no_must_check(
    combo: Combo, baseline: Callable[[Combo], SuiteReport]
) -> None:
    report = baseline(combo)
    assert report.target.card is not None
    assert not report.failed_must, [r.key for r in report.failed_must]
    auth = {r.id: r.status for r in report.results if r.id.startswith("auth.")}
    if combo[2] == "extension":
        ext = [r.status for r in report.results if r.id == "capability.required-extension"]
        assert ext == [Status.PASS]
    if combo[2] == "secured":  # the secured server passes the authentication checks
        assert auth == {
            "auth.credentials-required": Status.PASS,
            "auth.challenge": Status.PASS,
            "auth.owner-isolation": Status.PASS,
            "auth.not-found-indistinguishable": Status.PASS,
        }


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_fails_exactly_its_checks(
    name: str, baseline: Callable[[Combo], SuiteReport]
) -> None:
    mu = MUTANTS[name]
    report = run_one(mu.app, mu.combo)
    failed = _failed_ids(report) - _failed_ids(baseline(mu.combo))
    assert failed == mu.expect, mu.fault
    for r in report.results:
        if r.id in mu.expect and r.status is Status.FAIL:
            assert r.message
            assert r.evidence, r.key


#: 0.3 mutants that break a 1.0-only rule: the check passes with an advisory (key, start).
ADVISED_03 = {
    "v03-card-no-cache-headers": (
        "card.caching[0.3]",
        "advisory: the card response has neither a Cache-Control nor an ETag header, "
        "which 1.0 §8.6.1 asks for (SHOULD); 0.3 states no rule, only that 'Transports MAY",
    ),
    "v03-card-wrong-content-type": (
        "card.content-type[0.3]",
        "advisory: the card's Content-Type is 'text/html', where 1.0 §8.2 serves it as "
        "application/json; 0.3 states no media type for the card",
    ),
    "v03-sse-event-ids-not-increasing": (
        "stream.event-ids[0.3-jsonrpc]",
        "advisory: the event ids do not increase: ['1', '1'",
    ),
    "v03-owner-isolation-broken": (
        "auth.not-found-indistinguishable[0.3-jsonrpc]",
        "advisory: GetTask of another identity's task answered ",
    ),
    # (also auth.owner-isolation: 0.3 §4.6, "MAY be enforced", see ALSO_ADVISED_03)
    "v03-context-mismatch-served": (
        "send.context-mismatch[0.3-jsonrpc]",
        "advisory: SendMessage with a contextId that is not the task's was served: ",
    ),
    "v03-push-delete-not-idempotent": (
        "push.delete-idempotent[0.3-jsonrpc]",
        "advisory: the second delete failed: JSON-RPC error -32001",
    ),
    "v03-required-extension-not-enforced": (
        "capability.required-extension[0.3-jsonrpc]",
        "advisory: SendMessage without the required extension(s) ",
    ),
}


#: Further advisories a mutant of ADVISED_03 raises (key → start of the note).
ALSO_ADVISED_03 = {
    "v03-owner-isolation-broken": {
        "auth.owner-isolation[0.3-jsonrpc]": "advisory: another identity could read the task",
    },
}


@pytest.mark.parametrize("name", sorted(ADVISED_03))
def test_a_03_mutant_of_a_10_only_rule_is_an_advisory(
    name: str, baseline: Callable[[Combo], SuiteReport]
) -> None:
    mu = MUTANTS[name]
    key, start = ADVISED_03[name]
    report = run_one(mu.app, mu.combo)
    result = report.result(key)
    assert result is not None and result.status is Status.PASS, key
    assert result.message.startswith(start), result.message
    assert not any(r.startswith("v1.0-") for r in result.requirements)

    def advised(report: SuiteReport) -> set[str]:
        return {r.key for r in report.results if r.message.startswith("advisory: ")}

    also = ALSO_ADVISED_03.get(name, {})
    for other, other_start in also.items():
        found = report.result(other)
        assert found is not None and found.status is Status.PASS, other
        assert found.message.startswith(other_start), found.message
    assert advised(report) - advised(baseline(mu.combo)) == {key, *also}


@pytest.fixture(scope="module")
def engine_baseline(engine_url: str) -> set[str]:
    report = asyncio.run(run_suite(engine_url, stream_grace=0.5))
    assert report.target.card is not None
    return _failed_ids(report)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_engine_transport_mutant(name: str, engine_baseline: set[str]) -> None:
    factory, expected = BROKEN[name]
    with serving(factory) as url:
        report = asyncio.run(run_suite(url, stream_grace=0.5))
    assert _failed_ids(report) - engine_baseline == expected


if __name__ == "__main__":
    print(detection_table(*run_mutants()))
