"""Durable task stores and a cross-replica event broker for the server engine.

* :class:`SQLiteTaskStore` - an embedded database file (stdlib ``sqlite3``):
  the default for one server process.
* :class:`PostgresTaskStore` and :class:`PostgresEventBroker` - PostgreSQL
  (psycopg 3, the ``postgres`` extra) for several replicas acting as one
  agent: they share the store, and each has a broker that relays events
  between replicas with ``LISTEN/NOTIFY``.
* :class:`PostgresTurnQueue` - the queue of turns between ``serve --front-end``
  and ``a2a-models worker`` processes (see :class:`~a2a_models.server.Worker`).
* :func:`store_from_url` / :func:`broker_from_url` build either from a URL::

      store = store_from_url("sqlite:///a2a.db")          # relative path
      store = store_from_url("sqlite:////var/lib/a2a.db")  # absolute path
      store = store_from_url("postgresql://app@db/agents?schema=a2a")
      broker = broker_from_url("postgresql://app@db/agents")
      handler = RequestHandler(agent, card, store=store, broker=broker)

The stores create and migrate their schema themselves (versions recorded in
``a2a_schema_migrations``); no SQL needs to be run by hand. Database drivers
are imported only when a store is used, never by importing this package.
"""

from __future__ import annotations

from typing import Any

from ..server import EventBroker, InMemoryEventBroker, InMemoryTaskStore, TaskStore
from ._migrations import MIGRATIONS, Migration, SchemaVersionError
from ._pg_broker import RESYNC, PostgresEventBroker
from ._pg_pool import ConnectionPool
from ._postgres import PostgresTaskStore
from ._queue import PostgresTurnQueue
from ._retention import DEFAULT_RETAIN_TERMINAL, Retention, parse_age
from ._sqlite import SQLiteTaskStore

__all__ = [
    "DEFAULT_RETAIN_TERMINAL",
    "MIGRATIONS",
    "RESYNC",
    "Retention",
    "ConnectionPool",
    "Migration",
    "PostgresEventBroker",
    "PostgresTaskStore",
    "PostgresTurnQueue",
    "SQLiteTaskStore",
    "SchemaVersionError",
    "broker_from_url",
    "parse_age",
    "store_from_url",
]

_POSTGRES = ("postgresql:", "postgres:")


def _sqlite_path(url: str) -> tuple[str, dict[str, str]]:
    from urllib.parse import parse_qsl, unquote

    rest, _, query = url.partition("?")
    params = dict(parse_qsl(query))
    unknown = set(params) - {"synchronous", "busy_timeout"}
    if unknown:
        raise ValueError(f"unknown SQLite URL parameter(s): {', '.join(sorted(unknown))}")
    # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute.db
    if not rest.startswith("sqlite:///"):
        raise ValueError(
            f"not an SQLite URL: {url!r} (use sqlite:///relative/path.db, "
            "sqlite:////absolute/path.db or sqlite:///:memory:)"
        )
    path = unquote(rest[len("sqlite:///") :])
    if not path:
        raise ValueError(f"the SQLite URL {url!r} names no file")
    return path, params


def _pool_size(text: str) -> int:
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size < 1:
        raise ValueError(
            f"pool_size must be a whole number of connections, at least 1 (got {text!r})"
        )
    return size


def _request_timeout(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"request_timeout must be a number of seconds above 0 (got {text!r})")
    return seconds


def store_from_url(url: str, **options: Any) -> TaskStore:
    """A task store for ``url``; ``options`` go to the store's constructor.

    * ``memory:`` - :class:`~a2a_models.server.InMemoryTaskStore`
    * ``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``sqlite:///:memory:``
      - :class:`SQLiteTaskStore` (query parameters ``synchronous``, ``busy_timeout``)
    * ``postgresql://...`` (or ``postgres://``) - :class:`PostgresTaskStore`
      (query parameters ``schema``, ``pool_size`` (the store's ``max_connections``) and
      ``request_timeout`` (seconds); the others are passed to libpq)
    """
    from ._common import PG_PARAMS, split_url

    if url.startswith("memory:"):
        return InMemoryTaskStore(**options)
    if url.startswith("sqlite:"):
        path, params = _sqlite_path(url)
        if "synchronous" in params:
            options.setdefault("synchronous", params["synchronous"].upper())
        if "busy_timeout" in params:
            options.setdefault("busy_timeout", float(params["busy_timeout"]))
        return SQLiteTaskStore(path, **options)
    if url.startswith(_POSTGRES):
        conninfo, params = split_url(url, PG_PARAMS)
        if "schema" in params:
            options.setdefault("schema", params["schema"])
        if "pool_size" in params:
            options.setdefault("max_connections", _pool_size(params["pool_size"]))
        if "request_timeout" in params:
            options.setdefault("request_timeout", _request_timeout(params["request_timeout"]))
        return PostgresTaskStore(conninfo, **options)
    raise ValueError(
        f"unsupported task store URL {url!r}: use memory:, sqlite:///path or postgresql://..."
    )


def broker_from_url(url: str, **options: Any) -> EventBroker:
    """The event broker that goes with the store of ``url``.

    ``memory:`` and ``sqlite:`` URLs give an
    :class:`~a2a_models.server.InMemoryEventBroker` (one process);
    ``postgresql://`` ones a :class:`PostgresEventBroker` on that database
    (query parameter ``channel``; the store's own parameters are ignored, so the
    store's URL can be used as is).
    """
    from ._common import PG_PARAMS, split_url

    if url.startswith(("memory:", "sqlite:")):
        return InMemoryEventBroker(**options)
    if url.startswith(_POSTGRES):
        conninfo, params = split_url(url, PG_PARAMS)
        if "channel" in params:
            options.setdefault("channel", params["channel"])
        return PostgresEventBroker(conninfo, **options)
    raise ValueError(
        f"unsupported event broker URL {url!r}: use memory:, sqlite:///path or postgresql://..."
    )
