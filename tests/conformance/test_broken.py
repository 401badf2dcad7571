"""Deliberately broken servers: each fails exactly the check written for its rule."""

from __future__ import annotations

import asyncio

import pytest

from a2a_models.conformance import Status, SuiteReport, run_suite

from ._broken import BROKEN
from ._servers import serving


def _failed_ids(report: SuiteReport) -> set[str]:
    return {r.id for r in report.results if r.status is Status.FAIL}


@pytest.fixture(scope="module")
def baseline(engine_url: str) -> set[str]:
    report = asyncio.run(run_suite(engine_url, stream_grace=0.5))
    assert report.target.card is not None
    return _failed_ids(report)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_server_fails_exactly_its_check(name: str, baseline: set[str]) -> None:
    factory, expected = BROKEN[name]
    with serving(factory) as url:
        report = asyncio.run(run_suite(url, stream_grace=0.5))
    failed = _failed_ids(report)
    assert failed - baseline == expected
    # the failure is reported where the rule is broken, with evidence
    for r in report.results:
        if r.id in expected and r.status is Status.FAIL:
            assert r.message
            assert r.evidence, r.key
