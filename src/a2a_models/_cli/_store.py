"""``a2a-models store prune URL --older-than AGE``, and opening a store at start-up."""

from __future__ import annotations

import asyncio
import os
import sys
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._outages import one_line

__all__ = ["open_at_start", "prune", "shown_url"]


def shown_url(url: str) -> str:
    """``url`` for a message: a password in it (``user:secret@``, ``?password=``)
    shown as ``***``."""
    parts = original = urlsplit(url)
    if parts.password is not None:
        user, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}")
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(name == "password" for name, _ in query):
        hidden = [(name, "***" if name == "password" else value) for name, value in query]
        parts = parts._replace(query=urlencode(hidden, safe="*"))
    # Rebuilt only when changed: urlunsplit would turn sqlite:///a.db into sqlite:/a.db.
    return url if parts == original else urlunsplit(parts)


async def open_at_start(
    store: object, url: str, *, wait: float = 0.0, command: str = "a2a-models"
) -> str | None:
    """Open ``store`` now (connect, create or migrate its schema): ``None``, or why it
    cannot, in one line that names the store (``url``, its password hidden).

    ``serve``, ``worker`` and ``agent run`` call it before they announce
    themselves, so that a store that cannot be opened stops them at once,
    instead of failing each request that comes in. ``wait``: seconds to keep
    trying (every 0.5 s, backing off to every 5 s), saying once on stderr
    (as ``command``) that it waits.
    """
    opener = getattr(store, "open", None)
    if opener is None:  # memory: nothing to open
        return None
    loop = asyncio.get_running_loop()
    deadline, delay, told = loop.time() + wait, 0.5, False
    while True:
        try:
            await opener()
        except Exception as exc:
            problem = f"cannot open the task store {shown_url(url)}: {one_line(exc)}"
            problem += _sqlite_hint(store, url)
            left = deadline - loop.time()
            if left <= 0:
                return problem
            if not told:
                print(f"{command}: waiting up to {wait:g} s: {problem}", file=sys.stderr)
                told = True
            await asyncio.sleep(min(delay, left))  # the last try at the deadline
            delay = min(delay * 2, 5.0)
        else:
            if told:
                print(f"{command}: the task store {shown_url(url)} is open", file=sys.stderr)
            return None


def _sqlite_hint(store: object, url: str) -> str:
    """Why an SQLite file cannot be opened, when its folder is missing."""
    path = getattr(store, "path", None)
    if not isinstance(path, str) or path == ":memory:":
        return ""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(folder):
        return ""
    hint = f" (the folder {folder} does not exist"
    if not os.path.isabs(path) and os.path.isdir(os.path.dirname("/" + path)):
        # sqlite:///tmp/x.db is the relative path tmp/x.db (SQLAlchemy's convention).
        hint += f"; for the absolute path /{path} write sqlite:////{url[len('sqlite:///') :]}"
    return hint + ")"


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
        print(f"a2a-models store prune: {shown_url(url)!r} is not an SQL store", file=sys.stderr)
        return 2

    async def run() -> int | str:
        try:
            problem = await open_at_start(store, url)
            if problem is not None:
                return problem
            deleted: int = await delete(age)
        finally:
            await store.aclose()  # type: ignore[attr-defined]
        return deleted

    try:
        deleted = asyncio.run(run())
    except Exception as exc:
        print(f"a2a-models store prune: error: {exc}", file=sys.stderr)
        return 1
    if isinstance(deleted, str):
        print(f"a2a-models store prune: {deleted}", file=sys.stderr)
        return 1
    print(f"deleted {deleted} finished task{'s' if deleted != 1 else ''} older than {older_than}")
    return 0
