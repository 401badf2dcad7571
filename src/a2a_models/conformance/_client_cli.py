"""``a2a-models conformance-client``: run a driver against the harness, print the report."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .._argtypes import port_number, positive_number
from ._client import ClientHarness
from ._client_checks import render_client_report

__all__ = ["client_main"]


def client_main(
    argv: Sequence[str] | None = None, *, prog: str = "a2a-models conformance-client"
) -> int:
    """Run ``a2a-models conformance-client [--binding B] [--report text|json] -- COMMAND...``;
    returns the exit code (1 iff a MUST check failed)."""
    import argparse

    p = argparse.ArgumentParser(
        prog=prog,
        description="Start a scripted reference A2A server on 127.0.0.1, run a "
        "client driver COMMAND against it (it gets A2A_CONFORMANCE_URL and "
        "A2A_CONFORMANCE_TOKEN) and judge every request the client sent. Exits 1 if a MUST "
        "check failed.",
    )
    p.add_argument(
        "--binding",
        choices=["jsonrpc", "rest"],
        default="jsonrpc",
        help="the interface the card lists first (default jsonrpc)",
    )
    p.add_argument(
        "--port", type=port_number, default=0, help="port of the reference server (default: any)"
    )
    p.add_argument(
        "--timeout", type=positive_number, default=120.0, help="seconds the driver may run"
    )
    p.add_argument("--report", choices=["text", "json"], default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the driver command (after --)")
    args = p.parse_args(list(argv) if argv is not None else None)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("a driver COMMAND is required (after --)")
    binding = "JSONRPC" if args.binding == "jsonrpc" else "HTTP+JSON"
    with ClientHarness(binding=binding, port=args.port) as harness:
        report = harness.run(command, timeout=args.timeout)
    text = render_client_report(report, args.report)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 1 if report.failed_must else 0
