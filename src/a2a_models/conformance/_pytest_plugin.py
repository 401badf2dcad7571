"""pytest plugin: ``pytest --a2a-url URL`` turns every applicable check into a test item.

Enabled through the ``pytest11`` entry point ``a2a_conformance`` (or
``-p a2a_models.conformance._pytest_plugin``). Without ``--a2a-url`` it does
nothing. Items are named ``<check id>[<version>-<transport>]``; each carries
the spec section and level as user properties (shown in ``--junitxml``) and an
``a2a`` marker (``-m`` can't filter on marker kwargs, so levels also get
``a2a_must``/``a2a_should``/``a2a_may`` markers). The suite runs once, when
the first item runs; each item then reports its own verdict, failing with
the evidence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ..errors import A2AError
from ._registry import CARD, CHECKS, CheckResult, Status, select_checks
from ._runner import PlannedRun, SuiteReport, levels_for, plan, run_suite
from ._target import discover

__all__ = ["A2ACheckItem", "a2a_client_harness"]

_REPORT_KEY = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("a2a-conformance", "A2A conformance suite")
    group.addoption("--a2a-url", default=None, help="run the A2A conformance suite against URL")
    group.addoption(
        "--a2a-version",
        default="auto",
        choices=["1.0", "0.3", "auto"],
        help="protocol version(s) to test (default: all the card declares)",
    )
    group.addoption(
        "--a2a-transport",
        default="all",
        choices=["jsonrpc", "rest", "all"],
        help="transport(s) to test",
    )
    group.addoption(
        "--a2a-level",
        default="all",
        choices=["must", "should", "all"],
        help="which checks: MUST only, MUST+SHOULD, or all",
    )
    group.addoption(
        "--a2a-auth-header",
        action="append",
        default=[],
        help="'Name: value' header sent with every request (repeatable)",
    )
    group.addoption(
        "--a2a-check",
        action="append",
        default=[],
        help="only checks whose id matches this glob (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "a2a(section, level): an A2A conformance check")
    for level in ("must", "should", "may"):
        config.addinivalue_line(
            "markers", f"a2a_{level}: an A2A conformance check at level {level.upper()}"
        )


def _headers(values: list[str]) -> dict[str, str]:
    out = {}
    for v in values:
        name, _, value = v.partition(":")
        out[name.strip()] = value.strip()
    return out


class A2ACheckItem(pytest.Item):
    """One check on one (version, transport)."""

    def __init__(self, *, run: PlannedRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        c = run.check
        self.user_properties += [
            ("a2a_check", c.id),
            ("spec_section", c.section),
            ("level", c.level.value),
            ("version", run.version),
            ("transport", run.transport),
        ]
        self.add_marker(pytest.mark.a2a(section=c.section, level=c.level.value))
        self.add_marker(getattr(pytest.mark, f"a2a_{c.level.value.lower()}"))

    def runtest(self) -> None:
        state = self.config.stash[_REPORT_KEY]
        if "report" not in state:
            state["report"] = asyncio.run(run_suite(**state["kwargs"]))
        report: SuiteReport = state["report"]
        result = report.result(self.run.key)
        if result is None:
            pytest.skip("not run")
        assert result is not None
        if result.status is Status.FAIL:
            raise A2ACheckFailed(result)
        if result.status in (Status.SKIP, Status.NOT_APPLICABLE):
            pytest.skip(f"{result.status.value}: {result.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, A2ACheckFailed):
            r = excinfo.value.result
            lines = [
                f"{r.key} [{r.check.level.value} {r.check.section}] {r.check.title}",
                r.message,
                "",
            ]
            lines += [ex.render() + "\n" for ex in r.evidence[-4:]]
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "a2a-conformance", None, f"{self.run.key} {self.run.check.section}"


class A2ASuite(pytest.Collector):
    """The parent of the check items (node id ``a2a-conformance``)."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return []


class A2ACheckFailed(A2AError, AssertionError):
    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    url = config.getoption("--a2a-url")
    if not url:
        return
    kwargs = dict(
        url=url,
        version=config.getoption("--a2a-version"),
        transport=config.getoption("--a2a-transport"),
        level=config.getoption("--a2a-level"),
        auth_headers=_headers(config.getoption("--a2a-auth-header")),
        include=config.getoption("--a2a-check"),
    )
    config.stash[_REPORT_KEY] = {"kwargs": kwargs}

    async def planned() -> list[PlannedRun]:
        import httpx

        async with httpx.AsyncClient(timeout=10.0, follow_redirects=True) as client:
            target = await discover(client, url, kwargs["auth_headers"])
        versions = target.versions if kwargs["version"] == "auto" else [str(kwargs["version"])]
        transports = (
            ["jsonrpc", "rest"] if kwargs["transport"] == "all" else [str(kwargs["transport"])]
        )
        checks = select_checks(
            CHECKS, levels=levels_for(str(kwargs["level"])), include=kwargs["include"]
        )
        return plan(target, checks, versions, transports)

    suite = A2ASuite.from_parent(session, name="a2a-conformance", nodeid="a2a-conformance")
    for run in asyncio.run(planned()):
        items.append(A2ACheckItem.from_parent(suite, name=run.key, run=run))


@pytest.fixture
def a2a_client_harness(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A started :class:`~a2a_models.conformance.ClientHarness` (client conformance).

    Drive the client under test against ``harness.url`` (bearer ``harness.token``)
    through the scenarios, then ``harness.report(outcomes).assert_conformant()``.
    Parametrize indirectly with ``"JSONRPC"`` or ``"HTTP+JSON"`` to pick the binding.
    """
    from ._client import ClientHarness

    with ClientHarness(binding=getattr(request, "param", "JSONRPC")) as harness:
        yield harness


__all__ += ["A2ACheckFailed", "CARD"]
