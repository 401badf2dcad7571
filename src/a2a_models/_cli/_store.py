"""``a2a-models store prune URL --older-than AGE``."""

from __future__ import annotations

import asyncio
import sys

__all__ = ["prune"]


def prune(url: str, older_than: str) -> int:
    """Delete the finished tasks of the store at ``url`` older than ``older_than``; exit status."""
    from ..stores import parse_age, store_from_url

    try:
        age = parse_age(older_than)
        if age is None:
            raise ValueError("--older-than needs an age (e.g. 7d), not 'off'")
        store = store_from_url(url)
    except ValueError as exc:
        print(f"a2a-models store prune: {exc}", file=sys.stderr)
        return 2
    delete = getattr(store, "delete_terminal_older_than", None)
    if delete is None:
        print(f"a2a-models store prune: {url!r} is not an SQL store", file=sys.stderr)
        return 2

    async def run() -> int:
        try:
            deleted: int = await delete(age)
        finally:
            await store.aclose()  # type: ignore[attr-defined]
        return deleted

    try:
        deleted = asyncio.run(run())
    except Exception as exc:
        print(f"a2a-models store prune: error: {exc}", file=sys.stderr)
        return 1
    print(f"deleted {deleted} finished task{'s' if deleted != 1 else ''} older than {older_than}")
    return 0
