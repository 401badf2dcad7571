"""The runner's guarantees: crashing or hanging checks fail alone; applicability; the agent."""

from __future__ import annotations

import asyncio

from a2a_models.conformance import (
    CHECKS,
    Check,
    CheckContext,
    Level,
    Requirement,
    Status,
    parse_command,
    run_suite,
)
from a2a_models.conformance._jws import canonicalize


def _check(id: str, func, **kw) -> Check:  # type: ignore[no-untyped-def]
    return Check(id=id, section="§0", level=Level.MUST, title=id, func=func, **kw)


def test_a_crash_or_a_hang_fails_only_that_check(engine_url: str) -> None:
    async def boom(ctx: CheckContext) -> str | None:
        raise ZeroDivisionError("kaboom")

    async def hang(ctx: CheckContext) -> str | None:
        await asyncio.sleep(60)
        return None

    async def ok(ctx: CheckContext) -> str | None:
        res = await ctx.call("GetTask", None, raw_params={"id": "x"})
        ctx.expect(res.error is not None, "expected an error")
        return "fine"

    async def needs_push_absent(ctx: CheckContext) -> str | None:
        return None

    checks = {
        "t.boom": _check("t.boom", boom),
        "t.hang": _check("t.hang", hang, timeout=0.2),
        "t.ok": _check("t.ok", ok),
        "t.na": _check("t.na", needs_push_absent, requires=frozenset({Requirement.NO_PUSH})),
    }
    report = asyncio.run(run_suite(engine_url, version="1.0", transport="jsonrpc", checks=checks))
    by_id = {r.id: r for r in report.results}
    assert by_id["t.boom"].status is Status.FAIL
    assert "ZeroDivisionError: kaboom" in by_id["t.boom"].message
    assert by_id["t.hang"].status is Status.FAIL and "timed out" in by_id["t.hang"].message
    assert by_id["t.ok"].status is Status.PASS and by_id["t.ok"].message == "fine"
    assert by_id["t.ok"].evidence and by_id["t.ok"].evidence[0].method == "POST"
    assert by_id["t.na"].status is Status.NOT_APPLICABLE
    assert report.exit_code == 1


def test_registry_entries_are_complete() -> None:
    assert len(CHECKS) >= 80
    for c in CHECKS.values():
        assert c.id.count(".") == 1 and c.section.startswith(("§", "0.3 §")), c.id
        assert c.versions <= {"1.0", "0.3"} and c.transports


def test_unreachable_target_reports_instead_of_crashing() -> None:
    report = asyncio.run(
        run_suite(
            "http://127.0.0.1:9",
            version="1.0",
            transport="jsonrpc",
            include=["card.*", "get.unknown-task"],
            request_timeout=2,
        )
    )
    by_key = {r.key: r for r in report.results}
    assert by_key["card.well-known[1.0]"].status is Status.FAIL
    assert by_key["get.unknown-task[1.0-jsonrpc]"].status is Status.FAIL
    assert report.target.guessed


def test_contract_parsing() -> None:
    assert parse_command(" Stream 5 ") == ("stream", 5)
    assert parse_command("stream") == ("stream", 3)
    assert parse_command("stream 999") == ("stream", 20)
    assert parse_command("complete") == ("complete", 0)
    assert parse_command("complete this please") == ("echo", 0)


def test_jcs() -> None:
    assert (
        canonicalize({"b": [1, 2.0, "é"], "a": None, "c": True})
        == '{"a":null,"b":[1,2,"é"],"c":true}'
    )
