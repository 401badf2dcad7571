"""Fixtures of the conformance-harness tests: loopback servers started and stopped here."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from ._broken import good
from ._servers import sdk_app, serving


@pytest.fixture(autouse=True, scope="module")
def _quiet_servers() -> Iterator[None]:
    # The SDK logs every error answer with a traceback; the broken fixtures too.
    names = ["a2a", "a2a_models", "uvicorn", "uvicorn.error", "sse_starlette"]
    saved = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.CRITICAL)
    yield
    for n, level in saved.items():
        logging.getLogger(n).setLevel(level)


@pytest.fixture(scope="session")
def sdk_url() -> Iterator[str]:
    """The official a2a-sdk server running the conformance contract."""
    with serving(sdk_app) as url:
        yield url


@pytest.fixture(scope="session")
def engine_url() -> Iterator[str]:
    """Our engine behind a minimal JSON-RPC transport (the broken fixtures' base)."""
    with serving(good) as url:
        yield url
