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
from ._context import WEBHOOK
from ._registry import CARD, CheckResult, Status
from ._runner import PlannedRun, SuiteReport, plan_suite, run_suite
from ._target import parse_endpoint_override

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
        choices=["jsonrpc", "rest", "grpc", "all"],
        help="transport(s) to test (default: all the card declares)",
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
        "--a2a-peer-auth-header",
        action="append",
        default=[],
        help="'Name: value' credentials of a SECOND identity (repeatable): enables the "
        "owner-isolation checks",
    )
    group.addoption(
        "--a2a-check",
        action="append",
        default=[],
        help="only checks whose id matches this glob (repeatable)",
    )
    group.addoption(
        "--a2a-skip",
        action="append",
        default=[],
        help="no check whose id matches this glob (repeatable)",
    )
    group.addoption(
        "--a2a-endpoint",
        action="append",
        default=[],
        metavar="[VERSION/]TRANSPORT=URL",
        help="test the card's TRANSPORT interface at URL instead of the card's (repeatable)",
    )
    group.addoption(
        "--a2a-webhook-url",
        default=WEBHOOK,
        help="the webhook URL the push config checks register (nothing is delivered to it)",
    )
    group.addoption(
        "--a2a-timeout-scale",
        type=float,
        default=1.0,
        help="multiply every check's time limit (slow agents)",
    )
    group.addoption(
        "--a2a-request-timeout",
        type=float,
        default=10.0,
        help="seconds per HTTP request",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "a2a(section, level): an A2A conformance check")
    for level in ("must", "should", "may"):
        config.addinivalue_line(
            "markers", f"a2a_{level}: an A2A conformance check at level {level.upper()}"
        )


def _parsed(option: str, values: list[str], parse: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        try:
            key, parsed = parse(value)
        except ValueError as exc:  # argparse.ArgumentTypeError is one
            raise pytest.UsageError(f"{option}: {exc}") from None
        out[key] = parsed
    return out


class A2ACheckItem(pytest.Item):
    """One check on one (version, transport)."""

    def __init__(self, *, run: PlannedRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        c = run.check
        section, level = c.citation(run.version).section, c.level_for(run.version)
        self.user_properties += [
            ("a2a_check", c.id),
            ("spec_section", section),
            ("level", level.value),
            ("version", run.version),
            ("transport", run.transport),
        ]
        self.add_marker(pytest.mark.a2a(section=section, level=level.value))
        self.add_marker(getattr(pytest.mark, f"a2a_{level.value.lower()}"))

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
                f"{r.key} [{r.level.value} {r.section}] {r.check.title}",
                r.message,
                "",
            ]
            lines += [ex.render() + "\n" for ex in r.evidence[-4:]]
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return (
            "a2a-conformance",
            None,
            f"{self.run.key} {self.run.check.citation(self.run.version).section}",
        )


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
    from ._cli import parse_header

    option = config.getoption
    kwargs: dict[str, Any] = dict(
        version=option("--a2a-version"),
        transport=option("--a2a-transport"),
        level=option("--a2a-level"),
        auth_headers=_parsed("--a2a-auth-header", option("--a2a-auth-header"), parse_header),
        include=option("--a2a-check"),
        exclude=option("--a2a-skip"),
        endpoints=_parsed("--a2a-endpoint", option("--a2a-endpoint"), parse_endpoint_override),
        request_timeout=option("--a2a-request-timeout"),
    )
    peers = _parsed("--a2a-peer-auth-header", option("--a2a-peer-auth-header"), parse_header)
    config.stash[_REPORT_KEY] = {
        "kwargs": dict(
            kwargs,
            url=url,
            peer_auth_headers=peers or None,
            webhook_url=option("--a2a-webhook-url"),
            timeout_scale=option("--a2a-timeout-scale"),
        )
    }

    async def planned() -> list[PlannedRun]:
        import httpx

        timeout = kwargs["request_timeout"]
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
            return (await plan_suite(client, url, **kwargs)).runs

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
