"""``a2a-models conformance URL ...`` / ``python -m a2a_models.conformance URL ...``."""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import sys
from collections.abc import Sequence

from .._argtypes import header as parse_header
from .._argtypes import positive_number
from ._context import WEBHOOK
from ._registry import Check, CheckResult
from ._report import progress_line, render
from ._runner import PlannedRun, run_suite
from ._target import Target, parse_endpoint_override

__all__ = ["build_parser", "main", "parse_header"]


def _endpoint_override(value: str) -> tuple[str, str]:
    try:
        return parse_endpoint_override(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser(prog: str = "a2a-models conformance") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Run the A2A conformance suite against an agent over HTTP. Exits 1 if a "
        "MUST check failed, 0 otherwise (2 for usage errors).",
    )
    p.add_argument(
        "url",
        nargs="?",
        help="the agent's base URL (its card is read from "
        "/.well-known/agent-card.json) or the card's URL",
    )
    p.add_argument(
        "--version",
        dest="a2a_version",
        choices=["1.0", "0.3", "auto"],
        default="auto",
        help="protocol version(s) to test (default: every version the card declares)",
    )
    p.add_argument(
        "--transport",
        choices=["jsonrpc", "rest", "grpc", "all"],
        default="all",
        help="transport(s) to test (default: all the card declares)",
    )
    p.add_argument(
        "--level",
        choices=["must", "should", "all"],
        default="all",
        help="must: MUST checks only; should: MUST and SHOULD; all (default)",
    )
    p.add_argument(
        "--auth-header",
        action="append",
        type=parse_header,
        default=[],
        metavar="'NAME: VALUE'",
        help="a header sent with every request (repeatable)",
    )
    p.add_argument(
        "--peer-auth-header",
        action="append",
        type=parse_header,
        default=[],
        metavar="'NAME: VALUE'",
        help="credentials of a SECOND identity (repeatable): enables the owner-isolation checks",
    )
    p.add_argument(
        "--report",
        choices=["text", "json", "junit", "html"],
        default="text",
        help="the summary's format (default: text; html is one self-contained page)",
    )
    p.add_argument(
        "--output", "-o", metavar="FILE", help="write the report to FILE (default: stdout)"
    )
    p.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only checks whose id matches GLOB (repeatable), e.g. 'stream.*'",
    )
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="GLOB",
        help="do not run checks whose id matches GLOB (repeatable)",
    )
    p.add_argument(
        "--timeout-scale",
        type=positive_number,
        default=1.0,
        help="multiply every check's time limit (slow agents)",
    )
    p.add_argument(
        "--request-timeout",
        type=positive_number,
        default=10.0,
        help="seconds per HTTP request (default 10)",
    )
    p.add_argument(
        "--webhook-url",
        default=WEBHOOK,
        metavar="URL",
        help="the webhook URL the push config checks register; nothing is delivered to it "
        f"(default {WEBHOOK}; give one the agent accepts if it refuses private addresses)",
    )
    p.add_argument(
        "--endpoint",
        action="append",
        default=[],
        type=_endpoint_override,
        metavar="[VERSION/]TRANSPORT=URL",
        help="test the card's TRANSPORT interface (jsonrpc, rest, grpc; of VERSION only, "
        "e.g. 0.3/rest) at URL instead of the card's URL, for a card that advertises an "
        "address you cannot reach; card.interfaces-reachable still judges the card's "
        "(repeatable)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    p.add_argument(
        "--coverage",
        action="store_true",
        help="print every normative sentence of the spec with the checks that test it "
        "(or why none can), and the share covered per level; then exit",
    )
    p.add_argument(
        "--coverage-version",
        choices=["1.0", "0.3"],
        default=None,
        help="with --coverage: only this version's sentences",
    )
    return p


def _list_checks() -> str:
    from ._registry import CHECKS
    from ._runner import _order

    lines = []
    for c in _order(CHECKS.values()):
        extra = []
        if c.versions != frozenset({"1.0", "0.3"}):
            extra.append("only " + "/".join(sorted(c.versions)))
        if c.requires:
            extra.append("needs " + ", ".join(sorted(r.value for r in c.requires)))
        transports = "card" if "card" in c.transports else "+".join(sorted(c.transports))
        lines.append(
            f"{c.id:<40} {c.level.value:<6} {c.section:<28} {transports:<12} {c.title}"
            + (f" [{'; '.join(extra)}]" if extra else "")
        )
        for version in ("1.0", "0.3"):
            if version in c.versions:
                lines.append("    " + _citation_line(c, version))
    return "\n".join(lines) + "\n"


def _citation_line(c: Check, version: str) -> str:
    """``0.3 MAY  §7.4 tasks/cancel: "..." (advisory: 0.3 states no rule)``."""
    from ._catalogue import titled

    cited = c.citation(version)
    level = "advisory" if cited.advisory else c.level_for(version).value
    quote = f': "{cited.quote}"' if cited.quote else ""
    where = "" if cited.source == "spec" else f" ({version} {cited.source})"
    return f"{version} {level:<8} {titled(version, cited.section)}{quote}{where}"


def main(argv: Sequence[str] | None = None, *, prog: str = "a2a-models conformance") -> int:
    """Run ``a2a-models conformance URL [options]``; returns the exit code (1 iff a MUST
    check failed)."""
    parser = build_parser(prog)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.list:
        sys.stdout.write(_list_checks())
        return 0
    if args.coverage:
        from ._coverage import coverage, render_coverage

        sys.stdout.write(render_coverage(coverage(args.coverage_version)))
        return 0
    if not args.url:
        parser.error("the following arguments are required: url")
    from ._registry import CHECKS

    for option, globs in (("--check", args.check), ("--skip", args.skip)):
        for glob in globs:
            # a mistyped glob would run nothing and report "conformant"
            if not any(fnmatch.fnmatchcase(c, glob) for c in CHECKS):
                parser.error(f"{option} {glob!r} matches no check (see --list)")
    err = sys.stderr

    def on_plan(target: Target, runs: list[PlannedRun]) -> None:
        if args.quiet:
            return
        state = "ok" if target.card is not None else target.card_problem
        err.write(f"A2A conformance: {target.url}\n  card {target.card_url}: {state}\n")
        for e in target.endpoints:
            err.write(f"  endpoint {e.describe()}\n")
        err.write(f"  {len(runs)} checks to run\n")
        err.flush()

    def on_result(result: CheckResult) -> None:
        if not args.quiet:
            err.write(progress_line(result) + "\n")
            err.flush()

    try:
        report = asyncio.run(
            run_suite(
                args.url,
                version=args.a2a_version,
                transport=args.transport,
                level=args.level,
                auth_headers=dict(args.auth_header),
                include=args.check,
                exclude=args.skip,
                peer_auth_headers=dict(args.peer_auth_header) or None,
                on_plan=on_plan,
                on_result=on_result,
                timeout_scale=args.timeout_scale,
                request_timeout=args.request_timeout,
                webhook_url=args.webhook_url,
                endpoints=dict(args.endpoint),
            )
        )
    except KeyboardInterrupt:
        err.write("interrupted\n")
        return 130
    text = render(report, args.report)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not args.quiet and args.report != "text":
            err.write(f"report written to {args.output}\n")
        if args.report == "text" and not args.quiet:  # the people's format: show it too
            sys.stdout.write(text)
    else:
        sys.stdout.write(text)
    return report.exit_code
