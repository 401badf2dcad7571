"""Reports carry requirement ids and spec sections; the HTML report shows failures' evidence."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from a2a_models.conformance import (
    Status,
    SuiteReport,
    main,
    render_html,
    render_json,
    render_junit,
    run_suite,
)

from ._broken import MUTANTS
from ._servers import serving


@pytest.fixture(scope="module")
def broken_report() -> SuiteReport:
    with serving(MUTANTS["cancel-unknown-internal-error"].app) as url:
        return asyncio.run(
            run_suite(
                url,
                version="1.0",
                transport="jsonrpc",
                include=["cancel.*", "get.*"],
                stream_grace=0.5,
            )
        )


def test_json_results_carry_requirements_and_sections(broken_report: SuiteReport) -> None:
    doc = json.loads(render_json(broken_report))
    by_id = {r["id"]: r for r in doc["results"]}
    failed = by_id["cancel.unknown-task"]
    assert failed["status"] == "fail"
    assert failed["section"] == "§3.1.5"
    assert "v1.0-3.3.2-11" in failed["requirements"]
    assert failed["evidence"][0]["response"]["body"]
    assert by_id["get.task"]["requirements"]


def test_junit_testcases_carry_requirement_properties(broken_report: SuiteReport) -> None:
    root = ET.fromstring(render_junit(broken_report).split("\n", 1)[1])
    case = next(c for c in root.iter("testcase") if c.get("name") == "cancel.unknown-task")
    props = {(p.get("name"), p.get("value")) for p in case.iter("property")}
    assert ("section", "§3.1.5") in props
    assert ("requirement", "v1.0-3.3.2-11") in props
    failure = case.find("failure")
    assert failure is not None and "POST" in (failure.text or "")


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_report_is_self_contained_with_sections_and_evidence(
    broken_report: SuiteReport,
) -> None:
    page = render_html(broken_report)
    parser = _Collect()
    parser.feed(page)
    text = "".join(parser.text)
    assert "script" not in parser.tags and "link" not in parser.tags  # nothing to fetch
    assert "§3.1.5" in text and "§3.1.3" in text
    assert "cancel.unknown-task[1.0-jsonrpc]" in text
    assert "v1.0-3.3.2-11" in text  # the requirement sentence the failure breaks
    assert "> POST " in text and "< HTTP 200" in text  # request/response evidence
    assert text.count("NOT CONFORMANT") == 1
    passed = [r for r in broken_report.results if r.status is Status.PASS]
    assert passed and all(r.id in text for r in passed)


def test_cli_writes_html(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    with serving(MUTANTS["cancel-unknown-internal-error"].app) as url:
        code = main(
            [
                url,
                "--version",
                "1.0",
                "--transport",
                "jsonrpc",
                "--check",
                "cancel.*",
                "--report",
                "html",
                "-o",
                str(out),
                "-q",
            ]
        )
    assert code == 1
    assert out.read_text().startswith("<!doctype html>")
