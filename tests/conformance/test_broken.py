"""Mutation proof: every deliberately broken server is flagged by exactly the check(s)
written for its fault, and nothing else (compared with the unbroken server).

All mutants are served at once and their suites run concurrently in one event
loop (the runs mostly wait on the network), so the whole table costs a few
single runs. ``python -m tests.conformance.test_broken`` prints the detection table.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from a2a_models.conformance import Status, SuiteReport, run_suite

from ._broken import AUTH_HEADERS, BASES, BROKEN, MUTANTS, PEER_HEADERS
from ._servers import serving

Combo = tuple[str, str, str]


def _failed_ids(report: SuiteReport) -> set[str]:
    return {r.id for r in report.results if r.status is Status.FAIL}


async def _run_all(jobs: dict[str, tuple[str, Combo]], width: int = 12) -> dict[str, SuiteReport]:
    gate = asyncio.Semaphore(width)

    async def one(url: str, combo: Combo) -> SuiteReport:
        async with gate:
            return await run_suite(
                url,
                version=combo[0],
                transport=combo[1],
                stream_grace=0.5,
                auth_headers=AUTH_HEADERS if combo[2] == "secured" else None,
                peer_auth_headers=PEER_HEADERS if combo[2] == "secured" else None,
            )

    names = list(jobs)
    reports = await asyncio.gather(*(one(*jobs[n]) for n in names))
    return dict(zip(names, reports, strict=True))


def run_mutants() -> tuple[dict[Combo, SuiteReport], dict[str, SuiteReport]]:
    """The unbroken server's report per (version, transport) and every mutant's report."""
    combos = sorted({mu.combo for mu in MUTANTS.values()})
    with contextlib.ExitStack() as stack:
        good = {name: stack.enter_context(serving(factory)) for name, factory in BASES.items()}
        jobs = {f"baseline {c}": (good[c[2]], c) for c in combos}
        for name, mu in MUTANTS.items():
            jobs[name] = (stack.enter_context(serving(mu.app)), mu.combo)
        reports = asyncio.run(_run_all(jobs))
    return ({c: reports[f"baseline {c}"] for c in combos}, {n: reports[n] for n in MUTANTS})


def detection_table(baselines: dict[Combo, SuiteReport], reports: dict[str, SuiteReport]) -> str:
    lines = [f"{'mutant':<34} {'run':<12} {'detected by':<60} verdict"]
    hits = 0
    for name, mu in sorted(MUTANTS.items()):
        base = _failed_ids(baselines[mu.combo])
        got = _failed_ids(reports[name]) - base
        ok = got == mu.expect
        hits += bool(got & mu.expect)
        lines.append(
            f"{name:<34} {mu.version + '-' + mu.transport:<12} "
            f"{', '.join(sorted(got)) or '(nothing)':<60} "
            f"{'exact' if ok else 'WANT ' + ', '.join(sorted(mu.expect))}"
        )
    lines.append(f"detected {hits}/{len(MUTANTS)} mutants")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def mutant_runs() -> tuple[dict[Combo, SuiteReport], dict[str, SuiteReport]]:
    return run_mutants()


def test_there_are_at_least_forty_mutants() -> None:
    assert len(MUTANTS) >= 40


def test_unbroken_server_fails_no_must_check(
    mutant_runs: tuple[dict[Combo, SuiteReport], dict[str, SuiteReport]],
) -> None:
    baselines, _ = mutant_runs
    for combo, report in baselines.items():
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
    name: str, mutant_runs: tuple[dict[Combo, SuiteReport], dict[str, SuiteReport]]
) -> None:
    baselines, reports = mutant_runs
    mu, report = MUTANTS[name], reports[name]
    failed = _failed_ids(report) - _failed_ids(baselines[mu.combo])
    assert failed == mu.expect, mu.fault
    for r in report.results:
        if r.id in mu.expect and r.status is Status.FAIL:
            assert r.message
            assert r.evidence, r.key


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
