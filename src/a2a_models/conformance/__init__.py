"""The A2A conformance harness: a black-box suite to point at any A2A server over HTTP.

* :func:`run_suite` runs it and returns a :class:`SuiteReport`; the CLI is
  ``a2a-models conformance URL`` (``python -m a2a_models.conformance URL``),
  the pytest plugin ``pytest --a2a-url URL``.
* :data:`CHECKS` is the registry (id, spec section, level, versions,
  transports, required capability); :func:`check` registers more.
* :class:`ConformanceAgent` and :func:`conformance_card` are the reference
  implementation of the conformance contract (see ``docs/conformance.md``):
  an agent whose card advertises the skill :data:`CONTRACT_SKILL_ID` gets
  the behaviour checks too.
* :func:`coverage` links every normative sentence of the spec (the shipped
  requirement catalogue) to its checks (``a2a-models conformance --coverage``).
* :class:`ClientHarness` is client conformance: a scripted reference server that
  judges a client's requests (``a2a-models conformance-client -- COMMAND``).
* :func:`main` and :func:`client_main` are those two commands (argv in, exit
  code out).
"""

from typing import TYPE_CHECKING, Any

from ._agent import (
    ARTIFACT_TEXT,
    CONTRACT_SKILL_ID,
    REPLY_TEXT,
    ConformanceAgent,
    conformance_card,
    parse_command,
)

# Everything else needs httpx (the ``http`` extra): imported on first use, so that
# ``from a2a_models.conformance import ConformanceAgent`` works without it.
if TYPE_CHECKING:
    from ._catalogue import SpecRequirement, requirements
    from ._cli import main
    from ._client import ClientHarness
    from ._client_checks import CLIENT_CHECKS, ClientReport
    from ._client_cli import client_main
    from ._context import CheckContext
    from ._coverage import coverage, render_coverage
    from ._registry import (
        CHECKS,
        Check,
        CheckFailed,
        CheckResult,
        CheckSkipped,
        Exchange,
        Level,
        NotApplicable,
        Requirement,
        Status,
        check,
    )
    from ._replies import CallResult, RemoteError, StreamEvent
    from ._report import progress_line, render_html, render_json, render_junit, render_text
    from ._runner import PlannedRun, SuiteReport, plan, run_suite
    from ._stream import StreamSession
    from ._target import Endpoint, Target, discover

_LAZY = {
    "CallResult": "._replies",
    "CheckContext": "._context",
    "RemoteError": "._replies",
    "StreamEvent": "._replies",
    "StreamSession": "._stream",
    "CHECKS": "._registry",
    "Check": "._registry",
    "CheckFailed": "._registry",
    "CheckResult": "._registry",
    "CheckSkipped": "._registry",
    "Exchange": "._registry",
    "Level": "._registry",
    "NotApplicable": "._registry",
    "Requirement": "._registry",
    "Status": "._registry",
    "check": "._registry",
    "progress_line": "._report",
    "render_json": "._report",
    "render_junit": "._report",
    "render_text": "._report",
    "render_html": "._report",
    "SpecRequirement": "._catalogue",
    "requirements": "._catalogue",
    "CLIENT_CHECKS": "._client_checks",
    "ClientHarness": "._client",
    "ClientReport": "._client_checks",
    "client_main": "._client_cli",
    "main": "._cli",
    "coverage": "._coverage",
    "render_coverage": "._coverage",
    "PlannedRun": "._runner",
    "SuiteReport": "._runner",
    "plan": "._runner",
    "run_suite": "._runner",
    "Endpoint": "._target",
    "Target": "._target",
    "discover": "._target",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    if name == "CHECKS":
        importlib.import_module("._checks", __name__)  # registers the built-in checks
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ARTIFACT_TEXT",
    "CHECKS",
    "CLIENT_CHECKS",
    "CONTRACT_SKILL_ID",
    "REPLY_TEXT",
    "CallResult",
    "Check",
    "CheckContext",
    "CheckFailed",
    "CheckResult",
    "CheckSkipped",
    "ClientHarness",
    "ClientReport",
    "ConformanceAgent",
    "Endpoint",
    "Exchange",
    "Level",
    "NotApplicable",
    "PlannedRun",
    "RemoteError",
    "Requirement",
    "Status",
    "StreamEvent",
    "StreamSession",
    "SpecRequirement",
    "SuiteReport",
    "Target",
    "check",
    "client_main",
    "conformance_card",
    "coverage",
    "discover",
    "main",
    "parse_command",
    "plan",
    "progress_line",
    "render_coverage",
    "render_html",
    "render_json",
    "render_junit",
    "render_text",
    "requirements",
    "run_suite",
]
