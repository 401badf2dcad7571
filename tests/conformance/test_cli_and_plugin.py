"""The CLI (exit codes, report formats) and the pytest plugin, against loopback servers."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2a_models import codec
from a2a_models import models as m
from a2a_models.conformance import ConformanceAgent, main
from a2a_models.server import AgentServer

from ._broken import BROKEN, _card, good
from ._servers import engine_app, serving

ROOT = Path(__file__).resolve().parents[2]
# Load the plugin by module; block the entry-point registration (pytest11 "a2a_conformance")
# so an installed entry point does not register the same module twice.
PLUGIN = ["-p", "no:a2a_conformance", "-p", "a2a_models.conformance._pytest_plugin"]


def test_cli_exit_0_without_must_failures_and_json_report(
    engine_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    code = main([engine_url, "--version", "1.0", "--report", "json", "--output", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["summary"]["exitCode"] == 0 and doc["summary"]["failedMust"] == 0
    assert {r["version"] for r in doc["results"]} == {"1.0"}
    first = doc["results"][0]
    assert {"id", "section", "level", "status", "evidence"} <= set(first)
    progress = capsys.readouterr().err
    assert "PASS  MUST    card.well-known[1.0]" in progress  # one live line per check


def test_cli_exit_1_on_a_must_failure_with_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    factory, _ = BROKEN["wrong-task-not-found-code"]
    out = tmp_path / "junit.xml"
    with serving(factory) as url:
        code = main(
            [
                url,
                "--transport",
                "jsonrpc",
                "--level",
                "must",
                "--report",
                "junit",
                "--output",
                str(out),
                "--quiet",
            ]
        )
    assert code == 1
    root = ET.parse(out).getroot()
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    failing = cases[("a2a_conformance.1_0-jsonrpc", "cancel.unknown-task")]
    failure = failing.find("failure")
    assert failure is not None and "TaskNotFoundError" in (failure.get("message") or "")
    assert "POST" in (failure.text or "")  # the evidence
    props = [(p.get("name"), p.get("value")) for p in failing.iter("property")]
    assert props[:2] == [("section", "§3.1.5"), ("level", "MUST")]
    reqs = {v for k, v in props if k == "requirement"}
    assert "v1.0-3.3.2-11" in reqs  # the catalogue sentences it tests, of its version only
    assert all(r.startswith("v1.0-") for r in reqs), reqs
    assert capsys.readouterr().err == ""


def test_cli_text_report_and_filters(engine_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([engine_url, "--version", "0.3", "--check", "stream.*", "--quiet"])
    text = capsys.readouterr().out
    assert code == 0
    assert "stream.order[0.3-jsonrpc]" in text and "card.valid" not in text
    assert "RESULT: conformant" in text


def test_cli_a_check_glob_that_matches_nothing_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Before: the run selected no check and reported "RESULT: conformant" with exit 0.
    for option in ("--check", "--skip"):
        with pytest.raises(SystemExit) as exc:
            main(["http://127.0.0.1:9", option, "stream.ordr", "--quiet"])
        assert exc.value.code == 2
        assert f"{option} 'stream.ordr' matches no check" in capsys.readouterr().err


def test_python_dash_m_lists_checks() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "a2a_models.conformance", "--list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert "get.unknown-task" in proc.stdout and "§3.1.3" in proc.stdout


def test_pytest_plugin_one_item_per_check(tmp_path: Path) -> None:
    factory, _ = BROKEN["wrong-task-not-found-code"]
    junit = tmp_path / "plugin.xml"
    with serving(factory) as url:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *PLUGIN,
                "-p",
                "no:cacheprovider",
                "--a2a-url",
                url,
                "--a2a-version",
                "1.0",
                "--a2a-check",
                "get.*",
                "--a2a-check",
                "cancel.*",
                "-rA",
                f"--junitxml={junit}",
                "-q",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # cancel.unknown-task fails
    assert "PASSED a2a-conformance::get.unknown-task[1.0-jsonrpc]" in proc.stdout
    assert "FAILED a2a-conformance::cancel.unknown-task[1.0-jsonrpc]" in proc.stdout
    assert "expected TaskNotFoundError (-32001)" in proc.stdout  # the failure with its evidence
    assert "> POST" in proc.stdout
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    props = {
        p.get("name"): p.get("value")
        for p in cases["get.unknown-task[1.0-jsonrpc]"].iter("property")
    }
    assert props["spec_section"] == "§3.1.3" and props["level"] == "MUST"


def test_pytest_plugin_is_inert_without_url(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *PLUGIN, "-p", "no:cacheprovider", "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0 and "1 passed" in proc.stdout


def _misadvertised(url: str) -> Any:
    """Our engine, its card naming an address nobody listens on (a proxy's, say)."""
    return good("http://127.0.0.1:9")


def test_cli_endpoint_tests_the_interfaces_where_the_tester_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    with serving(_misadvertised) as url:
        # Before --endpoint: every check of both JSON-RPC interfaces failed at the card's URL.
        assert main([url, "--level", "must", "--quiet", "--output", str(out), "--report", "json"])
        before = json.loads(out.read_text())
        code = main(
            [
                url,
                "--level",
                "must",
                "--endpoint",
                f"jsonrpc={url}/",
                "--endpoint",
                f"rest={url}/v1",
                "--report",
                "json",
                "--output",
                str(out),
            ]
        )
        after = json.loads(out.read_text())
    progress = capsys.readouterr().err
    assert sum(r["status"] == "fail" for r in before["results"]) > 20
    # The card is still wrong (the one MUST it breaks), and nothing else fails.
    assert code == 1
    failed = sorted((r["id"], r["version"]) for r in after["results"] if r["status"] == "fail")
    assert failed == [("card.interfaces-reachable", "0.3"), ("card.interfaces-reachable", "1.0")]
    passed = {(r["id"], r["version"]) for r in after["results"] if r["status"] == "pass"}
    assert {("get.unknown-task", "1.0"), ("get.unknown-task", "0.3")} <= passed
    reachable = next(r for r in after["results"] if r["id"] == "card.interfaces-reachable")
    assert "http://127.0.0.1:9" in reachable["message"]
    endpoints = {(e["version"], e["url"], e["declaredUrl"]) for e in after["target"]["endpoints"]}
    assert endpoints == {
        ("1.0", f"{url}/", "http://127.0.0.1:9"),
        ("0.3", f"{url}/", "http://127.0.0.1:9"),
    }
    assert after["notes"] == ["--endpoint rest: the card declares no such interface; not used"]
    assert f"endpoint 1.0 jsonrpc {url}/ (the card says http://127.0.0.1:9)" in progress


def test_cli_endpoint_of_one_version_and_bad_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    with serving(_misadvertised) as url:
        main(
            [
                url,
                "--level",
                "must",
                "--quiet",
                "--endpoint",
                f"0.3/jsonrpc={url}/",
                "--endpoint",
                "jsonrpc=http://127.0.0.1:9/nowhere",
                "--report",
                "json",
                "--output",
                str(out),
            ]
        )
    doc = json.loads(out.read_text())
    urls = {e["version"]: e["url"] for e in doc["target"]["endpoints"]}
    assert urls == {"0.3": f"{url}/", "1.0": "http://127.0.0.1:9/nowhere"}  # versioned key wins
    failing = {
        r["version"]
        for r in doc["results"]
        if r["status"] == "fail" and r["id"] == "get.unknown-task"
    }
    assert failing == {"1.0"}
    capsys.readouterr()
    for bad, why in (
        ("jsonrpc", "expected TRANSPORT=URL"),
        ("soap=http://x", "unknown transport 'soap'"),
        ("2.0/rest=http://x", "unknown protocol version '2.0'"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["http://127.0.0.1:9", "--endpoint", bad])
        assert exc.value.code == 2
        assert why in capsys.readouterr().err


def _with_grpc(url: str) -> Any:
    """A card that also declares a gRPC interface (nothing serves it: collection only)."""
    card = _card(url)
    card = attrs.evolve(
        card,
        supported_interfaces=(
            *card.supported_interfaces,
            m.AgentInterface(url="127.0.0.1:9", protocol_binding="GRPC", protocol_version="1.0"),
        ),
    )
    return engine_app(AgentServer(ConformanceAgent(), card), codec.to_wire(card, "1.0"))


def test_pytest_plugin_plans_what_the_cli_runs(tmp_path: Path) -> None:
    # Before: the plugin planned JSON-RPC and HTTP+JSON only, so the gRPC checks the suite
    # ran had no test item, and --a2a-transport refused grpc; it had no --a2a-endpoint.
    with serving(_with_grpc) as url:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *PLUGIN,
                "-p",
                "no:cacheprovider",
                "--a2a-url",
                url,
                "--a2a-version",
                "1.0",
                "--collect-only",
                "-q",
                "--a2a-endpoint",
                f"grpc=127.0.0.1:{url.rsplit(':', 1)[1]}",
                "--a2a-skip",
                "card.*",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    items = [line for line in proc.stdout.splitlines() if line.startswith("a2a-conformance::")]
    assert any(i.endswith("[1.0-grpc]") for i in items)
    assert any(i.endswith("[1.0-jsonrpc]") for i in items)
    assert not any("::card." in i for i in items)  # --a2a-skip
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *PLUGIN,
            "-p",
            "no:cacheprovider",
            "--a2a-url",
            "http://127.0.0.1:9",
            "--a2a-endpoint",
            "soap=x",
            "--collect-only",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert bad.returncode == 4 and "--a2a-endpoint: unknown transport 'soap'" in bad.stderr
