"""Argument types the command lines share: ``a2a-models`` and the conformance harness's
(argparse only: parsing stays fast)."""

from __future__ import annotations

import argparse
import math

from ._http_syntax import TOKEN, field_value_problem

TYPE_CHECKING = False  # typing costs start-up time; mypy reads this name as typing's
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["header", "non_negative_number", "port_number", "positive_number", "whole_number"]


def header(value: str) -> tuple[str, str]:
    """``NAME:VALUE`` as ``(name, value)``, refused here (naming it) when HTTP or gRPC
    could not send it: the transport's own error would not say which header."""
    name, sep, content = value.partition(":")
    name, content = name.strip(), content.strip()
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME:VALUE, got {value!r}")
    if not TOKEN.fullmatch(name):
        raise argparse.ArgumentTypeError(
            f"header name {name!r}: letters, digits and !#$%&'*+-.^_`|~ only (no spaces)"
        )
    if field_value_problem(content) is not None:
        raise argparse.ArgumentTypeError(
            f"header {name!r}: the value must be printable ASCII (got {content!r})"
        )
    return name, content


def whole_number(least: int, most: int | None = None) -> Callable[[str], int]:
    """A whole number from ``least`` to ``most`` (no upper bound: ``None``)."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
        if number < least:
            raise argparse.ArgumentTypeError(f"expected at least {least}, got {number}")
        if most is not None and number > most:
            raise argparse.ArgumentTypeError(f"expected at most {most}, got {number}")
        return number

    return parse


#: A TCP port, 0 meaning any free one.
port_number = whole_number(0, 65535)


def _number(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {value!r}")
    return number


def positive_number(value: str) -> float:
    """A finite number above 0 (seconds, a rate)."""
    number = _number(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {value!r}")
    return number


def non_negative_number(value: str) -> float:
    """A finite number from 0 (seconds)."""
    number = _number(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value!r}")
    return number
