"""The requirement catalogue: generated from the spec text, current, and fully linked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from a2a_models.conformance import CHECKS
from a2a_models.conformance._catalogue import extract, render_module, requirements
from a2a_models.conformance._cli import main
from a2a_models.conformance._client import CLIENT_CHECKS
from a2a_models.conformance._coverage import LINKS, coverage, render_coverage, requirements_of

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "a2a-spec"


@pytest.mark.skipif(not SPEC.is_dir(), reason="the spec text is not checked out at ../shared")
def test_catalogue_is_current_with_the_spec_text() -> None:
    texts = {
        v: (SPEC / v / "specification.md").read_text(encoding="utf-8") for v in ("1.0.1", "0.3.0")
    }
    fresh = render_module({v: extract(t, v) for v, t in texts.items()})
    shipped = (ROOT / "src/a2a_models/conformance/_catalogue_data.py").read_text(encoding="utf-8")
    assert fresh == shipped, "stale: run scripts/gen_requirements.py"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts/gen_requirements.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_extract_finds_every_keyword_sentence_with_its_section() -> None:
    text = (
        "## 2. Terminology\n### 2.1. Requirements Language\nThe keywords MUST and MAY.\n"
        "## 3. Ops\n#### 3.1.4. List Tasks\nIntro. Tasks MUST be sorted. Clients should "
        "check.\n\n- Servers SHOULD NOT leak\n\nThe agent MUST:\n- do one thing\n- do another\n"
        '```json\n{"x": "MUST"}\n```\n| a | The field is REQUIRED |\n'
    )
    reqs = extract(text, "1.0.1")
    assert [(r.id, r.keyword) for r in reqs] == [
        ("v1.0-3.1.4-1", "MUST"),
        ("v1.0-3.1.4-2", "SHOULD NOT"),
        ("v1.0-3.1.4-3", "MUST"),
        ("v1.0-3.1.4-4", "REQUIRED"),
    ]
    assert reqs[0].sentence == "Tasks MUST be sorted."
    assert reqs[2].sentence == "The agent MUST: do one thing; do another"
    assert reqs[1].level == "SHOULD" and reqs[3].level == "MUST"


def test_catalogue_holds_both_versions_with_unique_ids() -> None:
    reqs = requirements()
    ids = [r.id for r in reqs]
    assert len(ids) == len(set(ids))
    assert {r.version for r in reqs} == {"1.0", "0.3"}
    assert sum(r.level == "MUST" and r.version == "1.0" for r in reqs) > 150
    jsonrpc = [r for r in reqs if r.version == "1.0" and r.section.startswith("9")]
    assert jsonrpc and all(r.bindings == ("JSONRPC",) for r in jsonrpc)


def test_every_must_has_a_check_or_a_reason() -> None:
    open_must = [
        r.requirement.id for r in coverage() if r.requirement.level == "MUST" and r.status == "open"
    ]
    assert open_must == []


def test_links_name_catalogue_entries_and_existing_checks() -> None:
    ids = {r.id for r in requirements()}
    assert set(LINKS) - ids == set()
    known = set(CHECKS) | set(CLIENT_CHECKS)
    linked = {c for link in LINKS.values() if isinstance(link, tuple) for c in link}
    assert linked - known == set()
    for link in LINKS.values():
        assert link, "an empty link is neither a check nor a reason"


def test_every_server_check_is_linked_to_a_requirement() -> None:
    unlinked = [c for c in CHECKS if not requirements_of(c)]
    # rules that live in tables, the proto or JSON-RPC 2.0 rather than in a keyword sentence
    assert set(unlinked) == {
        "card.content-type",
        "card.security-coherent",
        "jsonrpc.batch",
        "jsonrpc.empty-batch",
        "subscribe.terminal-task",
        "stream.artifact-chunks",
        "stream.final-flag",
    }


def test_every_black_box_must_and_should_of_1_0_is_covered() -> None:
    rows = [r for r in coverage("1.0") if r.requirement.level in ("MUST", "SHOULD")]
    assert all(r.status != "open" for r in rows)
    assert sum(r.status == "covered" for r in rows) >= 120


def test_coverage_cli_prints_table_and_percentages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--coverage"]) == 0
    out = capsys.readouterr().out
    assert "v1.0-3.1.4-5" in out and "list.sorted" in out
    summary = out.splitlines()[-6:]
    assert summary[0].startswith("1.0      MUST")
    assert all(line.split()[-1] in ("100.0%", "-") for line in summary), summary
    assert render_coverage(coverage("0.3"), table=False).count("\n") == 4
