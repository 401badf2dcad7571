"""The suite against the project's own HTTP server (``a2a_models.adapters.http``)
serving ``AgentServer(ConformanceAgent(), conformance_card(url))``: every MUST
check passes in both versions and both transports, except the failures listed
in PROJECT_MUST_FAILURES (known server bugs, reported; strict xfail so a fix
shows up)."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Iterator

import pytest

from a2a_models.conformance import (
    ConformanceAgent,
    Status,
    SuiteReport,
    conformance_card,
    run_suite,
)
from a2a_models.server import AgentServer

from ._servers import STREAM_GRACE, serving


def _adapter() -> object | None:
    try:
        module = importlib.import_module("a2a_models.adapters.http")
    except ImportError:
        return None
    if not (hasattr(module, "create_app") and hasattr(module, "HTTPServer")):
        return None
    return module


#: (version, transport) → MUST checks the project server fails today, and why.
#: (Fixed: jsonrpc.error-data[1.0-jsonrpc], TaskNotFoundError's data {"taskId": ...}
#: without "@type", by JSONRPCError.details().)
PROJECT_MUST_FAILURES: dict[tuple[str, str], dict[str, str]] = {}


@pytest.fixture(scope="module")
def project_report() -> Iterator[SuiteReport]:
    module = _adapter()
    if module is None:
        pytest.skip("a2a_models.adapters.http (create_app, HTTPServer) is not available yet")

    def factory(url: str) -> object:
        server = AgentServer(ConformanceAgent(), conformance_card(url))
        return module.create_app(server)  # type: ignore[attr-defined]

    with serving(factory) as url:
        yield asyncio.run(run_suite(url, stream_grace=STREAM_GRACE))


def test_project_server_declares_all_four_endpoints(project_report: SuiteReport) -> None:
    assert {(e.version, e.transport) for e in project_report.target.endpoints} == {
        ("1.0", "jsonrpc"),
        ("1.0", "rest"),
        ("0.3", "jsonrpc"),
        ("0.3", "rest"),
    }
    assert project_report.by_status(Status.SKIP) == []


def _params() -> list[object]:
    out = []
    for combo in [("1.0", "jsonrpc"), ("1.0", "rest"), ("0.3", "jsonrpc"), ("0.3", "rest")]:
        known = PROJECT_MUST_FAILURES.get(combo)
        marks = (
            [
                pytest.mark.xfail(
                    strict=True, reason="; ".join(f"{k}: {v}" for k, v in known.items())
                )
            ]
            if known
            else []
        )
        out.append(pytest.param(*combo, marks=marks, id="-".join(combo)))
    return out


@pytest.mark.parametrize(("version", "transport"), _params())
def test_project_server_passes_every_must_check(
    project_report: SuiteReport, version: str, transport: str
) -> None:
    failed = {
        r.key: r.message
        for r in project_report.failed_must
        if r.version == version and r.transport in (transport, "card")
    }
    assert failed == {}


def test_project_server_known_failures_are_the_listed_ones(project_report: SuiteReport) -> None:
    failed = {(r.version, r.transport, r.id) for r in project_report.failed_must}
    listed = {(v, t, cid) for (v, t), ids in PROJECT_MUST_FAILURES.items() for cid in ids}
    assert failed == listed


def test_a_03_result_is_judged_and_cited_by_03_text(project_report: SuiteReport) -> None:
    # The server stores a webhook at the cloud metadata address (delivery refuses it).
    # 1.0 §13.2 says SHOULD validate; 0.3 has no such rule: an advisory, citing 0.3 §10.2.
    v10 = project_report.result("push.rejects-unsafe-url[1.0-jsonrpc]")
    v03 = project_report.result("push.rejects-unsafe-url[0.3-jsonrpc]")
    assert v10 is not None and v03 is not None
    assert v10.status is Status.FAIL
    assert v10.requirements == ("v1.0-13.2-5", "v1.0-14.1.1-4")
    assert v03.status is Status.PASS
    assert v03.message.startswith("advisory: a webhook at the link-local metadata address")
    assert "0.3 states no rule, only that 'Webhook URL validation" in v03.message
    assert v03.requirements == ()
    caching = project_report.result("card.caching[0.3]")
    assert caching is not None and caching.status is Status.PASS
    assert caching.message == ""  # the card has its headers: nothing to advise
    # No 0.3 result cites a 1.0 sentence, nor a 1.0 result a 0.3 one.
    cited = {
        (r.version, req[: len("v1.0")]) for r in project_report.results for req in r.requirements
    }
    assert cited == {("1.0", "v1.0"), ("0.3", "v0.3")}
