"""How every ``a2a-models`` command reports a failure: one line on stderr, a documented status.

``--debug`` (anywhere before ``--`` on the command line) adds the traceback.
Subcommand modules (``_agent.py``, the conformance CLI) use
:func:`report_error` or :func:`guarded` so that every command fails the same way.

Exit statuses (see ``docs/cli.md``):

====  ==========================================================
0     ok (``send``/``follow``: the task completed, or a message came back)
1     error: the agent, the network or the input failed (one line on stderr)
2     usage error, or a missing extra
3     the task failed
4     the task was rejected
5     the task was canceled
6     the task needs input (input-required)
7     the task needs authentication (auth-required)
130   interrupted (Ctrl-C)
141   stdout was closed by its reader (``| head``); nothing is said
====  ==========================================================
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs start-up time; mypy reads this name as typing's
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final, TextIO

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "describe_error",
    "guarded",
    "report_error",
]

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130
#: The reader of stdout went away (``| head``): 128 + SIGPIPE, as the shell's tools end.
EXIT_BROKEN_PIPE: Final = 141

#: Set by ``a2a-models --debug``: failures also print their traceback.
debug = False


class UsageError(Exception):
    """The command line asks for something impossible (exit status 2)."""


def _leaf(exc: BaseException) -> BaseException:
    # anyio/asyncio task groups wrap the one real failure in an ExceptionGroup.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _connect_failure(exc: BaseException) -> str | None:
    """``cannot connect to URL: reason`` if ``exc`` comes from a refused or failed connection."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ in ("ConnectError", "ConnectTimeout"):
            try:
                where = f" {current.request.url}"  # type: ignore[attr-defined]
            except (AttributeError, RuntimeError):  # httpx: no request attached
                where = ""
            reason = str(current) or type(current).__name__
            if reason == "All connection attempts failed":
                reason = "connection refused (is the server running?)"
            elif type(current).__name__ == "ConnectTimeout":
                reason = f"connection timed out ({reason})" if str(current) else "timed out"
            return f"cannot connect to{where}: {reason}"
        current = current.__cause__ or current.__context__
    return None


#: Which extra brings which top-level module.
_EXTRAS: Final = {
    "httpx": "http",
    "starlette": "http",
    "uvicorn": "http",
    "rich": "http",
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "mcp": "mcp",
    "openai": "llm",
    "anthropic": "llm",
    "yaml": "llm",
}


def extra_for(exc: ImportError) -> str:
    """The extra that provides the module ``exc`` could not import (``http`` if unknown)."""
    top = (exc.name or "").partition(".")[0]
    return _EXTRAS.get(top, "http")


def describe_error(exc: BaseException) -> str:
    """One line saying what went wrong, without the Python noise."""
    exc = _leaf(exc)
    connect = _connect_failure(exc)
    if connect is not None:
        return connect
    if isinstance(exc, ImportError):
        return f"{exc}. Install the extra with: pip install 'a2a-models[{extra_for(exc)}]'"
    from ..errors import A2AError, JSONRPCError

    text = " ".join(str(exc).split())
    if isinstance(exc, JSONRPCError):
        said = " ".join(exc.message.split())
        kind = "" if type(exc) is JSONRPCError else f"{type(exc).__name__}, "
        said = f"{said} [{kind}code {exc.code}]"
        return f"the agent answered: {said}" if exc.remote else said
    if isinstance(exc, A2AError | OSError | ValueError | TimeoutError):
        return text or type(exc).__name__
    if type(exc).__module__ != "builtins" and text:
        return text  # a library's own error class says what happened
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def report_error(
    prog: str, exc: BaseException, *, file: TextIO | None = None, show_traceback: bool | None = None
) -> None:
    """Print ``prog: error: <one line>`` to stderr; the traceback too under ``--debug``."""
    out = sys.stderr if file is None else file
    if debug if show_traceback is None else show_traceback:
        import traceback

        traceback.print_exception(exc, file=out)
    print(f"{prog}: error: {describe_error(exc)}", file=out, flush=True)


def guarded(prog: str, run: Callable[[], int], *, file: TextIO | None = None) -> int:
    """``run()``'s status; a failure becomes one line on stderr and status 1 (2 for usage)."""
    out = sys.stderr if file is None else file
    try:
        return run()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=out, flush=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Nothing to report (the reader chose to stop). Point stdout at /dev/null so
        # that the flush at exit does not fail on the closed pipe again.
        import os

        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # stdout is not a file (embedded, tests)
            pass
        return EXIT_BROKEN_PIPE
    except UsageError as exc:
        print(f"{prog}: {exc}", file=out, flush=True)
        return EXIT_USAGE
    except ImportError as exc:
        if debug:
            import traceback

            traceback.print_exception(exc, file=out)
        print(f"{prog}: {describe_error(exc)}", file=out, flush=True)
        return EXIT_USAGE
    except Exception as exc:
        report_error(prog, exc, file=out)
        return EXIT_ERROR
