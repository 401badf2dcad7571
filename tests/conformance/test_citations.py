"""Every check cites the spec of the version it judges, and judges by it.

* Static: each check that runs on 0.3 has a 0.3 citation whose section numbers exist in
  the 0.3 specification text and whose quote is the 0.3 text's own words (or its JSON
  Schema's or proto's, as the citation says); each check that runs on 1.0 cites 1.0
  section numbers that exist in the 1.0 text.
* Mutants: for each rule whose 0.3 grade differs from 1.0's, a server that breaks it is
  judged on 0.3 as 0.3 says (an advisory, or a SHOULD failure) and its 1.0 twin still
  fails; a 0.3 mutant that breaks a rule 0.3 does state still fails on 0.3.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2a_models import models as m
from a2a_models.conformance import CHECKS, Status, SuiteReport, run_suite
from a2a_models.conformance._catalogue import _clean, headings_of
from a2a_models.conformance._catalogue_data import HEADINGS
from a2a_models.conformance._citations import CITATIONS_03
from a2a_models.conformance._cli import _list_checks
from a2a_models.conformance._registry import CheckResult, Level
from a2a_models.server import AgentServer, CallContext, EventStream

from ._broken import (
    Req,
    _AfterTerminal,
    _CancelKeepsWorking,
    _CancelTerminalSucceeds,
    _NeverCloses,
    _Stream,
    project,
    wire,
)
from ._servers import serving

SPEC = Path(__file__).resolve().parents[3] / "shared" / "a2a-spec"
if not SPEC.is_dir():
    SPEC = Path("/work/shared/a2a-spec")
needs_spec = pytest.mark.skipif(not SPEC.is_dir(), reason="the A2A spec files are not here")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", _clean(text).replace("`", "")).strip()


def _descriptions(value: Any) -> list[str]:
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out += [v] if k == "description" and isinstance(v, str) else _descriptions(v)
        return out
    if isinstance(value, list):
        return [d for v in value for d in _descriptions(v)]
    return []


@pytest.fixture(scope="module")
def sources_03() -> dict[str, str]:
    """The 0.3 texts a quote may come from: spec prose, JSON Schema descriptions, proto
    comments (each with markdown and whitespace normalised)."""
    base = SPEC / "0.3.0"
    schema = json.loads((base / "a2a.json").read_text(encoding="utf-8"))
    proto = (base / "a2a.proto").read_text(encoding="utf-8").splitlines()
    return {
        "spec": _norm((base / "specification.md").read_text(encoding="utf-8")),
        "schema": _norm(" ".join(_descriptions(schema))),
        "proto": _norm(" ".join(line.split("//", 1)[1] for line in proto if "//" in line)),
    }


def _sections(version: str) -> dict[str, str]:
    name = {"1.0": "1.0.1", "0.3": "0.3.0"}[version]
    return headings_of((SPEC / name / "specification.md").read_text(encoding="utf-8"))


@needs_spec
def test_the_shipped_headings_are_the_spec_texts() -> None:
    assert HEADINGS == {"1.0": _sections("1.0"), "0.3": _sections("0.3")}
    assert HEADINGS["0.3"]["7.4"] == "tasks/cancel"
    assert HEADINGS["1.0"]["3.1.5"] == "Cancel Task"


@needs_spec
def test_every_03_check_cites_03_sections_and_words(sources_03: dict[str, str]) -> None:
    sections = _sections("0.3")
    runs_03 = {cid for cid, c in CHECKS.items() if "0.3" in c.versions}
    assert runs_03 - set(CITATIONS_03) == set(), "a 0.3 check without a 0.3 citation"
    assert set(CITATIONS_03) - set(CHECKS) == set(), "a citation of no check"
    for cid in sorted(runs_03):
        cited = CHECKS[cid].citation("0.3")
        assert cited is CITATIONS_03[cid]
        assert cited.numbers(), cid
        missing = [n for n in cited.numbers() if n not in sections]
        assert not missing, (cid, missing)
        assert len(cited.quote) >= 30, cid
        assert _norm(cited.quote) in sources_03[cited.source], (cid, cited.quote)


@needs_spec
def test_every_10_check_cites_10_sections() -> None:
    sections = _sections("1.0")
    for cid, c in CHECKS.items():
        if "1.0" not in c.versions:
            continue
        cited = c.citation("1.0")
        assert cited.numbers(), cid
        assert "(0.3" not in cited.section, (cid, cited.section)  # 0.3 is cited apart
        missing = [n for n in cited.numbers() if n not in sections]
        assert not missing, (cid, missing)


def test_an_advisory_quotes_no_rule_and_grades_follow_the_text() -> None:
    for cid, cited in CITATIONS_03.items():
        words = set(re.findall(r"\b(MUST|SHALL|REQUIRED|SHOULD|RECOMMENDED)\b", cited.quote))
        if cited.advisory:
            # 0.3 states no rule here: quoting a MUST or SHOULD would contradict it
            assert not words, (cid, words)
        if cited.level is Level.SHOULD and cited.source == "spec" and "SHOULD" in words:
            assert "MUST" not in words, cid
    grades = {cid: c.level for cid, c in CITATIONS_03.items()}
    # the cases 0.3 grades below 1.0, each checked against the 0.3 text
    assert {cid for cid, level in grades.items() if level is None} >= {
        "auth.owner-isolation",  # §4.6: "MAY be enforced"
        "get.history-zero",  # 0.3 proto: "if 0, the history will be unlimited"
        "cancel.running",  # §7.4: "success is not guaranteed"
        "lifecycle.history",  # §7.3: "optionally history"
        "stream.first-event",
        "robustness.oversized-body",
        "card.well-known",  # §5.3: "the recommended location"
    }
    assert grades["send.auth-required-message"] is Level.SHOULD  # §4.5
    # SHOULD on both versions stays a SHOULD failure
    assert grades["jsonrpc.batch"] is grades["auth.challenge"] is Level.SHOULD
    assert CHECKS["jsonrpc.batch"].level is CHECKS["auth.challenge"].level is Level.SHOULD


def test_a_result_carries_its_versions_level_and_section() -> None:
    c = CHECKS["cancel.running"]
    one = CheckResult(c, "1.0", "jsonrpc", Status.FAIL, "x")
    old = CheckResult(c, "0.3", "jsonrpc", Status.FAIL, "x")
    assert (one.level, one.section, one.failed_must) == (Level.MUST, "§3.1.5", True)
    assert (old.level, old.section, old.failed_must) == (Level.MAY, "§7.4", False)
    assert old.to_dict()["quote"].startswith("The server will attempt to cancel the task")
    auth = CheckResult(CHECKS["send.auth-required-message"], "0.3", "rest", Status.FAIL)
    assert auth.level is Level.SHOULD and not auth.failed_must


def test_list_shows_each_versions_citation_with_its_heading() -> None:
    text = _list_checks()
    assert (
        '    0.3 advisory §7.4 tasks/cancel: "The server will attempt to cancel the task, '
        'but success is not guaranteed"' in text
    )
    assert "    1.0 MUST     §3.1.5 Cancel Task" in text
    assert "    0.3 SHOULD   §4.5 In-Task Authentication (Secondary Credentials)" in text
    # a 1.0-only check has no 0.3 line; JSON-RPC 2.0 numbers get no A2A heading
    block = text.split("list.sorted", 1)[1].split("\n", 2)[1:2]
    assert block and block[0].startswith("    1.0 ")
    assert "(JSON-RPC 2.0 §6)" in text and "§6 Protocol Data Objects (JSON" not in text


# ------------------------------------------------------------------ mutants


def _server(cls: type[AgentServer]) -> Callable[[str], Any]:
    return lambda url: project(url, cls)


class _AuthRequiredNoMessage(AgentServer):
    """An AUTH_REQUIRED task carries no status message (0.3 §4.5: SHOULD)."""

    async def on_send_message(self, request: m.SendMessageRequest, call: CallContext) -> Any:
        out = await super().on_send_message(request, call)
        if isinstance(out, m.Task) and out.status.state is m.TaskState.AUTH_REQUIRED:
            return attrs.evolve(out, status=attrs.evolve(out.status, message=None))
        return out


class _ReplyWithoutContext(AgentServer):
    """'hello' gets a direct Message reply without a contextId (0.3: optional there)."""

    async def on_send_message(self, request: m.SendMessageRequest, call: CallContext) -> Any:
        if request.message.text == "hello" and request.message.task_id is None:
            return m.Message.agent("hi")
        return await super().on_send_message(request, call)


class _StreamEdited(AgentServer):
    """SendStreamingMessage with its events edited by ``edit`` (a list in, a list out)."""

    edit: Callable[[list[Any]], list[Any]] = staticmethod(lambda items: items)

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream:
        inner = await super().on_send_streaming_message(request, call)
        edit = type(self).edit

        async def events() -> AsyncIterator[Any]:
            got = [pair async for pair in inner]
            items = edit([item for _, item in got])
            for n, item in enumerate(items):
                yield (got[0][0] + n if got else n), item

        return _Stream(events(), inner)


def _without_first_task(items: list[Any]) -> list[Any]:
    return items[1:] if items and isinstance(items[0], m.Task) and len(items) > 1 else items


def _steps_swapped(items: list[Any]) -> list[Any]:
    steps = [
        i
        for i, e in enumerate(items)
        if isinstance(e, m.TaskStatusUpdateEvent)
        and e.status.message is not None
        and e.status.message.text.startswith("step ")
    ]
    if len(steps) >= 2:
        a, b = steps[:2]
        items[a], items[b] = items[b], items[a]
    return items


def _without_terminal(items: list[Any]) -> list[Any]:
    return [
        e
        for e in items
        if not (isinstance(e, m.TaskStatusUpdateEvent) and e.status.state.is_terminal)
    ]


class _StreamWithoutTerminal(_StreamEdited):
    edit = staticmethod(_without_terminal)


class _StreamWithoutTask(_StreamEdited):
    edit = staticmethod(_without_first_task)


class _StreamReordered(_StreamEdited):
    edit = staticmethod(_steps_swapped)


class _HistoryZeroIgnored(AgentServer):
    """GetTask historyLength=0 returns the whole history (what 0.3's proto says 0 means)."""

    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        if request.history_length == 0:
            request = attrs.evolve(request, history_length=None)
        return await super().on_get_task(request, call)


class _NoHistory(AgentServer):
    """GetTask never returns a history (0.3 §7.3: "optionally history")."""

    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        return attrs.evolve(await super().on_get_task(request, call), history=())


class _PushIdDropped(AgentServer):
    """The created push config comes back without its id."""

    async def on_create_task_push_notification_config(
        self, request: m.TaskPushNotificationConfig, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        created = await super().on_create_task_push_notification_config(request, call)
        return attrs.evolve(created, id=None)


def _oversized_500(url: str) -> Any:
    """A body over 4 MiB gets HTTP 500 (the 8 MiB request of robustness.oversized-body)."""

    def response(
        req: Req, status: int, hdrs: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if len(req.body) > 4 * 1024 * 1024:
            return 500, {**hdrs, "content-type": "text/plain"}, b"body too large"
        return status, hdrs, body

    return wire(project(url), response=response)


CARD_PATH = "/agents/conformance/card.json"


def _card_elsewhere(url: str) -> Any:
    """The card is served at CARD_PATH only: /.well-known/agent-card.json is a 404."""
    app = project(url)

    async def moved(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/.well-known/agent-card.json":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if scope["type"] == "http" and scope["path"] == CARD_PATH:
            scope = {**scope, "path": "/.well-known/agent-card.json", "raw_path": None}
        await app(scope, receive, send)

    return moved


@attrs.frozen
class Twin:
    """A server that breaks one rule, the check that judges it, and what 0.3 makes of it:
    ``advisory`` (passes with a note: the check's whole rule is 1.0's), ``advisory-part``
    (passes with a note: that part of the check's rule is 1.0's, the rest 0.3 states too),
    ``pass``, ``SHOULD`` or ``MUST`` (fails at that level)."""

    factory: Callable[[str], Any]
    check: str
    on_03: str
    card_path: str = ""


TWINS: dict[str, Twin] = {
    # 0.3 is silent or looser: an advisory on 0.3, a failure on 1.0
    "cancel-keeps-working": Twin(_server(_CancelKeepsWorking), "cancel.running", "advisory"),
    "history-zero-ignored": Twin(_server(_HistoryZeroIgnored), "get.history-zero", "advisory"),
    "no-history": Twin(_server(_NoHistory), "lifecycle.history", "advisory"),
    "stream-without-task-first": Twin(
        _server(_StreamWithoutTask), "stream.first-event", "advisory"
    ),
    "stream-reordered": Twin(_server(_StreamReordered), "stream.order", "advisory-part"),
    "stream-never-closes": Twin(
        _server(_NeverCloses), "stream.closes-after-terminal", "advisory-part"
    ),
    "oversized-body-500": Twin(_oversized_500, "robustness.oversized-body", "advisory"),
    "card-not-at-well-known": Twin(_card_elsewhere, "card.well-known", "advisory", CARD_PATH),
    # 0.3 says SHOULD where 1.0 says MUST
    "auth-required-without-message": Twin(
        _server(_AuthRequiredNoMessage), "send.auth-required-message", "SHOULD"
    ),
    # 0.3's Message.contextId is optional (its Task's is required)
    "message-reply-without-context": Twin(
        _server(_ReplyWithoutContext), "send.context-id", "advisory-part"
    ),
    # 0.3's client sets the push config id (§6.8): an agent that echoes none is fine
    "push-id-dropped": Twin(_server(_PushIdDropped), "push.crud", "pass"),
    # rules 0.3 states too: the 0.3 mutant fails as on 1.0
    "event-after-terminal": Twin(_server(_AfterTerminal), "stream.no-event-after-terminal", "MUST"),
    "cancel-terminal-succeeds": Twin(_server(_CancelTerminalSucceeds), "cancel.terminal", "MUST"),
    # the order is 1.0's, but the stream must still carry the task's end (0.3 §7.2.2)
    "stream-without-terminal": Twin(_server(_StreamWithoutTerminal), "stream.order", "MUST"),
}


def _judge(twin: Twin, version: str) -> tuple[CheckResult, SuiteReport]:
    with serving(twin.factory) as url:
        report = asyncio.run(
            run_suite(
                url + twin.card_path,
                version=version,
                transport="jsonrpc",
                include=[twin.check],
                stream_grace=0.5,
            )
        )
    where = version if twin.check.startswith("card.") else f"{version}-jsonrpc"
    result = report.result(f"{twin.check}[{where}]")
    assert result is not None, [r.key for r in report.results]
    return result, report


@pytest.mark.parametrize("name", sorted(TWINS))
def test_a_mutant_is_judged_by_its_versions_text(name: str) -> None:
    twin = TWINS[name]
    on_10, _ = _judge(twin, "1.0")
    assert on_10.status is Status.FAIL, on_10.message
    assert on_10.level is CHECKS[twin.check].level
    on_03, report = _judge(twin, "0.3")
    cited = CITATIONS_03[twin.check]
    if twin.on_03 == "advisory":
        assert on_03.status is Status.PASS, on_03.message
        assert on_03.message.startswith("advisory: "), on_03.message
        assert f"0.3 {cited.section}" in on_03.message and cited.quote in on_03.message
        assert on_03.level is Level.MAY and not report.failed_must
    elif twin.on_03 == "advisory-part":
        assert on_03.status is Status.PASS, on_03.message
        assert on_03.message.startswith("advisory: "), on_03.message
        assert "where 1.0 §" in on_03.message and "0.3 " in on_03.message
        assert on_03.level is Level.MUST and not report.failed_must
    elif twin.on_03 == "pass":
        assert on_03.status is Status.PASS and not on_03.message, on_03.message
    else:
        assert on_03.status is Status.FAIL, on_03.message
        assert on_03.level is Level(twin.on_03)
        assert on_03.failed_must is (twin.on_03 == "MUST")


def test_the_docs_table_has_each_versions_citation() -> None:
    """docs/conformance.md: one row per HTTP check, a 1.0 and a 0.3 column as the registry
    says (level, sections; 0.3 with its words)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text("utf-8")
    head = "| id | 1.0: level, sections | 0.3: level, sections, its words | what |"
    rows = text.split(head, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    cells = {r.split(" | ")[0].lstrip("| "): r.split(" | ")[1:3] for r in rows}
    http = {cid for cid in CHECKS if not cid.startswith(("grpc.", "binding."))}
    assert set(cells) == http
    for cid, (one, old) in cells.items():
        c = CHECKS[cid]
        for version, cell in (("1.0", one), ("0.3", old)):
            if version not in c.versions:
                assert cell == "—", cid
                continue
            cited = c.citation(version)
            level = "advisory" if cited.advisory else c.level_for(version).value
            assert cell.startswith(f"{level} §"), (cid, version, cell)
            assert all(f"§{n}" in cell for n in cited.numbers()), (cid, version, cell)
            if version == "0.3":
                assert f'"{cited.quote}"' in cell.replace("\\|", "|"), cid


def test_a_03_message_labels_the_10_sections_it_names() -> None:
    from a2a_models.conformance._runner import _label_10

    assert _label_10("returned 3 (§3.2.4: 0 asks for none)") == (
        "returned 3 (1.0 §3.2.4: 0 asks for none)"
    )
    for kept in ("where 1.0 (§5.4) maps", "JSON-RPC 2.0 §5", "0.3 §7.1 says", "RFC 9110 §15.5.6"):
        assert _label_10(kept) == kept


def test_the_text_report_quotes_the_versions_words() -> None:
    from a2a_models.conformance._report import render_text
    from a2a_models.conformance._runner import SuiteReport as Report
    from a2a_models.conformance._target import Target

    failed = CheckResult(CHECKS["send.terminal-task"], "0.3", "jsonrpc", Status.FAIL, "no error")
    target = Target(url="http://x", card_url="http://x/c")
    report = Report(target, [failed], ["0.3"], ["jsonrpc"], "2026-01-01T00:00:00Z", 0.1)
    text = render_text(report)
    assert "send.terminal-task[0.3-jsonrpc]  MUST  §7.1" in text
    assert '  0.3 §7.1: "A task which has reached a terminal state' in text
