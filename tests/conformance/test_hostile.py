"""The harness against hostile peers: every misbehaviour is a failure with a message that
says what came back, read within bounded time and bytes; never a hang, a crash or a pass.

The byte limits are lowered (monkeypatch) so that each test reads at most a few MiB; the
servers count what they sent, which is what these tests assert on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest

from a2a_models.conformance import (
    ConformanceAgent,
    Status,
    SuiteReport,
    _stream,
    _target,
    conformance_card,
    run_suite,
)
from a2a_models.server import AgentServer

from ._hostile import hostile
from ._servers import serving

LIMIT = 1 << 20


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_target, "MAX_BODY", LIMIT)
    monkeypatch.setattr(_stream, "MAX_EVENTS", 200)


def _run(url: str, checks: Iterable[str], **kw: object) -> SuiteReport:
    # A harness that hangs fails here (after 60 s) instead of blocking the test run.
    return asyncio.run(
        asyncio.wait_for(
            run_suite(url, version="1.0", transport="jsonrpc", include=list(checks), **kw),  # type: ignore[arg-type]
            60,
        )
    )


def _result(report: SuiteReport, key: str) -> tuple[Status, str]:
    r = report.result(key)
    assert r is not None, [x.key for x in report.results]
    return r.status, r.message


def test_a_card_that_trickles_forever_fails_within_the_request_timeout() -> None:
    with hostile("card-trickle") as h:
        report = _run(h.url, ["card.well-known"], request_timeout=1.0)
    status, message = _result(report, "card.well-known[1.0]")
    assert status is Status.FAIL
    assert "did not end within 1 s" in message, message


@pytest.mark.usefixtures("small_limits")
def test_an_endless_card_is_cut_at_the_byte_limit() -> None:
    with hostile("card-endless") as h:
        report = _run(h.url, ["card.well-known"], request_timeout=20.0)
        sent = h.bytes_sent
    status, message = _result(report, "card.well-known[1.0]")
    assert status is Status.FAIL
    assert f"exceeded {LIMIT} bytes" in message, message
    # the harness stopped reading: the server could not push much more than the limit
    # (plus what the socket buffers hold)
    assert sent < 16 * LIMIT, sent


@pytest.mark.usefixtures("small_limits")
def test_an_endless_response_body_fails_the_check_naming_the_limit() -> None:
    with hostile("body-endless") as h:
        report = _run(h.url, ["get.unknown-task"], request_timeout=20.0)
        sent = h.bytes_sent
    status, message = _result(report, "get.unknown-task[1.0-jsonrpc]")
    assert status is Status.FAIL
    assert "incomplete HTTP response: HTTP 200" in message, message
    assert f"exceeded {LIMIT} bytes" in message, message
    assert sent < 16 * LIMIT, sent


@pytest.mark.usefixtures("small_limits")
@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("stream-endless", "with the stream still going"),
        ("stream-endless-line", "the harness stopped reading"),
        ("stream-cut", "connection dropped"),
        # one event every 0.5 s, forever (before: every stream check timed out, 15 s each)
        ("stream-slow", "stopped reading after 2 s"),
    ],
)
def test_a_stream_cut_or_endless_fails_closes_after_terminal(mode: str, expected: str) -> None:
    with hostile(mode) as h:
        report = _run(h.url, ["stream.closes-after-terminal"], request_timeout=2.0)
        sent = h.bytes_sent
    status, message = _result(report, "stream.closes-after-terminal[1.0-jsonrpc]")
    assert status is Status.FAIL, message
    assert "no terminal state before the stream was cut off" in message, message
    assert expected in message, message
    evidence = report.result("stream.closes-after-terminal[1.0-jsonrpc]").evidence  # type: ignore[union-attr]
    assert any(expected in (e.error or "") for e in evidence), [e.error for e in evidence]
    assert sent < 16 * LIMIT, sent


@pytest.mark.parametrize("mode", ["silent", "garbage"])
def test_a_server_that_does_not_speak_http_costs_one_request(mode: str) -> None:
    """Before: every endpoint check sent its own requests and waited out the request
    timeout on each (a silent server: ~9 minutes for the default run)."""
    checks = ["card.well-known", "get.unknown-task", "jsonrpc.*", "send.*"]
    with hostile(mode) as h:
        report = _run(h.url, checks, request_timeout=0.5)
        requests = h.requests
    assert _result(report, "card.well-known[1.0]")[0] is Status.FAIL
    status, message = _result(report, "get.unknown-task[1.0-jsonrpc]")
    assert status is Status.FAIL, message
    assert message.startswith("not run: the agent gave no HTTP answer (GET "), message
    assert requests == 1  # the card request only
    assert report.exit_code == 1


def test_an_agent_refusing_loopback_webhooks_gets_push_checks_skipped_not_failed() -> None:
    """§13.2: refusing a private webhook URL is what an agent SHOULD do; the CRUD checks
    cannot decide then, and say how to give a URL the agent accepts."""
    from a2a_models.adapters.http import WebhookPushSender, create_app

    def factory(url: str) -> object:
        server = AgentServer(
            ConformanceAgent(), conformance_card(url), push_sender=WebhookPushSender()
        )
        return create_app(server)

    with serving(factory) as url:
        report = _run(url, ["push.crud", "push.delete-idempotent"])
    for key in ("push.crud[1.0-jsonrpc]", "push.delete-idempotent[1.0-jsonrpc]"):
        status, message = _result(report, key)
        assert status is Status.SKIP, (key, message)
        assert "refused the webhook URL 'http://127.0.0.1:9/" in message, message
        assert "--webhook-url" in message
    assert report.exit_code == 0


def test_owner_isolation_says_when_the_push_part_was_refused_for_its_url() -> None:
    """A refusal of the peer's push config that names the URL (not the owner) proves
    nothing about isolation: the verdict's note says so instead of a silent pass."""
    from ._broken import AUTH_HEADERS, PEER_HEADERS, Mutant, _error, _json_fix, _rpc

    url_refused = Mutant(
        fault="every push config create is refused for its URL",
        expect=frozenset(),
        base="secured",
        response=_json_fix(
            _rpc("CreateTaskPushNotificationConfig"),
            _error(lambda e: {**e, "code": -32602, "message": "url refused: loopback address"}),
        ),
    )
    with serving(url_refused.app) as url:
        report = asyncio.run(
            run_suite(
                url,
                version="1.0",
                transport="jsonrpc",
                include=["auth.owner-isolation"],
                auth_headers=AUTH_HEADERS,
                peer_auth_headers=PEER_HEADERS,
            )
        )
    status, message = _result(report, "auth.owner-isolation[1.0-jsonrpc]")
    assert status is Status.PASS
    assert message.startswith("push configs not decided: the webhook URL was refused"), message
