"""conformance-client: the reference server judges real clients (this project's, the
official Python SDK's, the official JS SDK's) and catches deliberately broken ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from a2a_models.conformance import CLIENT_CHECKS, ClientHarness, ClientReport, Level, Status
from a2a_models.conformance import client_main as main

CLIENTS = Path(__file__).parent / "clients"
JS_SDK_VERSION = "1.3.0"
BINDINGS = ["JSONRPC", "HTTP+JSON"]


def _run(binding: str, command: list[str], **env: str) -> ClientReport:
    with ClientHarness(binding=binding) as harness:
        return harness.run(command, timeout=90, extra_env=env)


def _statuses(report: ClientReport) -> dict[str, Status]:
    return {r.check.id: r.status for r in report.results}


def _python(driver: str) -> list[str]:
    return [sys.executable, str(CLIENTS / driver)]


@pytest.mark.parametrize("binding", BINDINGS)
def test_project_client_passes_every_check(binding: str) -> None:
    report = _run(binding, _python("project_driver.py"))
    assert report.exit_code == 0, report.stderr
    expected = {cid: Status.PASS for cid in CLIENT_CHECKS}
    if binding == "JSONRPC":
        expected["client.content-type"] = Status.NOT_APPLICABLE
    assert _statuses(report) == expected
    assert "Last-Event-ID" in report.result("client.reconnect").message


#: What the official SDK clients get wrong (docs/sdk-deviations.md, "Clients").
SDK_DEVIATIONS = {
    "python": {"client.reconnect": Status.FAIL, "client.content-type": Status.FAIL},
    "js": {"client.reconnect": Status.FAIL, "client.content-type": Status.FAIL},
}


def _expect(sdk: str, binding: str) -> dict[str, Status]:
    expected = {cid: Status.PASS for cid in CLIENT_CHECKS}
    expected.update(SDK_DEVIATIONS[sdk])
    if binding == "JSONRPC":
        expected["client.content-type"] = Status.NOT_APPLICABLE
    return expected


@pytest.mark.parametrize("binding", BINDINGS)
def test_python_sdk_client(binding: str) -> None:
    pytest.importorskip("a2a.client")
    report = _run(binding, _python("sdk_driver.py"))
    assert report.exit_code == 0, report.stderr
    assert _statuses(report) == _expect("python", binding)
    assert not report.failed_must


@pytest.fixture(scope="module")
def js_sdk() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm are not installed (apt-get install nodejs npm)")
    root = Path(
        os.environ.get(
            "A2A_JS_SDK_DIR", Path.home() / ".cache" / "a2a-models" / f"a2a-js-sdk-{JS_SDK_VERSION}"
        )
    )
    modules = root / "node_modules"
    if not (modules / "@a2a-js" / "sdk" / "package.json").is_file():
        root.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(root),
                f"@a2a-js/sdk@{JS_SDK_VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if proc.returncode != 0:
            pytest.skip(f"npm could not install @a2a-js/sdk: {proc.stderr[-300:]}")
    return modules


@pytest.mark.parametrize("binding", BINDINGS)
def test_js_sdk_client(binding: str, js_sdk: Path) -> None:
    report = _run(binding, ["node", str(CLIENTS / "js_driver.cjs")], NODE_PATH=str(js_sdk))
    assert report.exit_code == 0, report.stderr
    assert _statuses(report) == _expect("js", binding)
    assert "TypeError: terminated" in str(report.outcomes["reconnect"])


#: fault of raw_driver.py → the check(s) that must fail (and no other)
FAULTS = {
    "no-version-header": {"client.version-header"},
    "jsonrpc-1.0": {"client.envelope"},
    "float-id": {"client.envelope"},
    "reused-message-id": {"client.ids"},
    "follow-up-without-task": {"client.ids"},
    "bad-role": {"client.request-shape", "client.stream"},
    "error-swallowed": {"client.error-handling"},
    "stream-cut-short": {"client.stream"},
    "no-resubscribe": {"client.reconnect"},
    "no-auth": {"client.auth-header"},
    "wrong-path": {"client.interface-selection"},
    "first-interface-once": {"client.version-selection"},
}


def test_raw_driver_without_fault_passes() -> None:
    report = _run("JSONRPC", _python("raw_driver.py"))
    failed = {cid for cid, st in _statuses(report).items() if st is Status.FAIL}
    assert failed == set(), report.results


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_broken_client_fails_exactly_its_check(fault: str) -> None:
    report = _run("JSONRPC", _python("raw_driver.py"), A2A_DRIVER_FAULT=fault)
    failed = {cid for cid, st in _statuses(report).items() if st is Status.FAIL}
    assert failed == FAULTS[fault]
    for r in report.results:
        if r.status is Status.FAIL and r.check.id != "client.error-handling":
            assert r.evidence, r.check.id


def test_cli_exit_code_and_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    env_fault = os.environ.get("A2A_DRIVER_FAULT")
    os.environ["A2A_DRIVER_FAULT"] = "no-version-header"
    try:
        code = main(["--report", "json", "-o", str(out), "--", *_python("raw_driver.py")])
    finally:
        if env_fault is None:
            del os.environ["A2A_DRIVER_FAULT"]
        else:
            os.environ["A2A_DRIVER_FAULT"] = env_fault
    assert code == 1
    import json

    doc = json.loads(out.read_text())
    failed = [r for r in doc["results"] if r["status"] == "fail"]
    assert [r["id"] for r in failed] == ["client.version-header"]
    assert failed[0]["requirements"] and failed[0]["evidence"]


@pytest.mark.parametrize("a2a_client_harness", ["HTTP+JSON"], indirect=True)
def test_pytest_fixture_judges_an_in_process_client(a2a_client_harness: ClientHarness) -> None:
    import asyncio

    from a2a_models import models as m
    from a2a_models.adapters.http import connect

    harness = a2a_client_harness
    assert harness.binding == "HTTP+JSON"

    async def drive(headers: dict[str, str]) -> dict[str, object]:
        async with await connect(harness.url, headers=headers) as client:
            task = await client.send_message(m.Message.user("complete"))
            events = [e async for e in client.send_streaming_message(m.Message.user("stream"))]
        return {
            "send": {"state": task.status.state.name},
            "stream": {"events": len(events), "state": events[-1].status.state.name},
        }

    outcomes = asyncio.run(drive({"Authorization": f"Bearer {harness.token}"}))
    report = harness.report(outcomes)
    report.assert_conformant(level=Level.SHOULD)
    statuses = _statuses(report)
    assert statuses["client.stream"] is Status.PASS
    assert statuses["client.content-type"] is Status.PASS
    assert statuses["client.reconnect"] is Status.SKIP  # the driver never streamed 'drop'
    assert statuses["client.error-handling"] is Status.SKIP  # no 'error' outcome reported
    # the same client without its credentials: the card fetch is public, the calls are not
    with pytest.raises(Exception):  # noqa: B017 - the project client raises on HTTP 401
        asyncio.run(drive({}))
    with pytest.raises(AssertionError, match=r"client\.auth-header"):
        harness.report(outcomes).assert_conformant()


def test_a2a_models_cli_has_the_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    from a2a_models._cli import main as cli

    code = cli(["conformance-client", "--", *_python("project_driver.py")])
    out = capsys.readouterr().out
    assert code == 0
    assert "RESULT: conformant" in out and "client.reconnect" in out
