"""``a2a-models serve`` with counters inside the real process, for ``bench/serve_growth.py``.

Run: ``python bench/counted_serve.py COUNTER_PORT serve ARGS...`` -- everything
after the port is the ``a2a-models`` command line, run as the CLI runs it. Before
it starts, this installs:

* a statement counter on every SQLite connection (``set_trace_callback``: the
  statements the store runs, ``BEGIN``/``COMMIT`` included, not the statements
  inside triggers, which Python reports as repeats of the statement firing them) and on every psycopg cursor (``execute``/``executemany``/
  ``copy``);
* SQLite page reads: ``sqlite3_db_status`` (``SQLITE_DBSTATUS_CACHE_HIT`` +
  ``CACHE_MISS``: every page the connection's pager looked up) and pages
  written (``CACHE_WRITE``), summed over the connections the store opened.

A connection to ``127.0.0.1:COUNTER_PORT`` sends one command line and gets one JSON
line back: ``snap``: ``{"cpu": seconds of CPU this process used (all threads),
"statements": n, "kinds": {first word: n}, "pages": n, "written": n}`` (the counters
only grow; the benchmark takes differences); ``record``: from now on keep every
psycopg statement with its parameters; ``take``: stop, and answer the kept
``[[sql, params], ...]`` (bytes as ``{"b64": ...}``), which the benchmark replays
under ``EXPLAIN (ANALYZE, BUFFERS)`` for PostgreSQL's buffers.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, its folder comes first on sys.path and its http.py would shadow the
# standard library's: put it last (the agent, bench_echo_agent, is imported from it).
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.append(sys.path.pop(0))

import base64
import ctypes
import json
import socket
import sqlite3
import threading
import time
from collections import Counter
from typing import Any

_lock = threading.Lock()
_kinds: Counter[str] = Counter()
_connections: list[sqlite3.Connection] = []  # the store opens one or a few

_recorded: list[tuple[str, Any]] | None = None

_CACHE_HIT, _CACHE_MISS, _CACHE_WRITE = 7, 8, 9  # SQLITE_DBSTATUS_*


_last_sqlite: list[str] = [""]


def _count_sqlite(sql: str) -> None:
    # Python's trace callback reports a statement again for every statement of every
    # trigger it fires (the text of the statement itself, not the trigger's): count
    # consecutive repeats once.
    if sql == _last_sqlite[0]:
        return
    _last_sqlite[0] = sql
    _count(sql)


def _count(sql: str) -> None:
    text = sql.lstrip()
    word = text.split(None, 1)[0].upper() if text else "?"
    with _lock:
        _kinds[word] += 1


def _library() -> Any:
    import _sqlite3

    lib = ctypes.CDLL(_sqlite3.__file__)  # dlsym also searches the libsqlite3 it links
    lib.sqlite3_db_status.argtypes = [
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
    ]
    lib.sqlite3_db_status.restype = ctypes.c_int
    return lib


_lib = _library()


def _handle(conn: sqlite3.Connection) -> int | None:
    # CPython's pysqlite_Connection: PyObject_HEAD, then ``sqlite3 *db``.
    return ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value


def _status(conn: sqlite3.Connection, op: int) -> int:
    handle = _handle(conn)
    if not handle:
        return 0
    current, high = ctypes.c_int(0), ctypes.c_int(0)
    if _lib.sqlite3_db_status(handle, op, ctypes.byref(current), ctypes.byref(high), 0) != 0:
        return 0
    return current.value


_connect = sqlite3.connect


def _counted_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    conn = _connect(*args, **kwargs)
    conn.set_trace_callback(_count_sqlite)
    with _lock:
        _connections.append(conn)
    return conn


sqlite3.connect = _counted_connect  # type: ignore[assignment]


def _patch_psycopg() -> None:
    try:
        import psycopg
    except ImportError:
        return
    cursor = psycopg.AsyncCursor
    execute, executemany, copy = cursor.execute, cursor.executemany, cursor.copy

    async def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        text = query if isinstance(query, str) else _as_text(query, self.connection)
        _count(text)
        if _recorded is not None:
            with _lock:
                _recorded.append((text, _jsonable(args[0] if args else kwargs.get("params"))))
        return await execute(self, query, *args, **kwargs)

    async def counted_executemany(self: Any, query: Any, params: Any, **kwargs: Any) -> Any:
        params = list(params)
        for _ in params:
            _count(query if isinstance(query, str) else "EXECUTEMANY")
        return await executemany(self, query, params, **kwargs)

    def counted_copy(self: Any, statement: Any, *args: Any, **kwargs: Any) -> Any:
        _count("COPY")
        return copy(self, statement, *args, **kwargs)

    cursor.execute = counted_execute  # type: ignore[method-assign]
    cursor.executemany = counted_executemany  # type: ignore[method-assign]
    cursor.copy = counted_copy  # type: ignore[method-assign]


def _as_text(query: Any, connection: Any) -> str:
    if isinstance(query, bytes):
        return query.decode()
    try:
        return str(query.as_string(connection))
    except Exception:  # only for the count and the replay
        return str(query)


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def snapshot() -> dict[str, Any]:
    with _lock:
        kinds = dict(_kinds)
        conns = list(_connections)
    pages = sum(_status(c, _CACHE_HIT) + _status(c, _CACHE_MISS) for c in conns)
    written = sum(_status(c, _CACHE_WRITE) for c in conns)
    return {
        "cpu": time.process_time(),
        "statements": sum(kinds.values()),
        "kinds": kinds,
        "pages": pages,
        "written": written,
    }


def _serve_counters(port: int) -> None:
    server = socket.create_server(("127.0.0.1", port))
    while True:
        client, _ = server.accept()
        with client:
            command = client.makefile("rb").readline().strip()
            client.sendall(json.dumps(_command(command)).encode() + b"\n")


def _command(command: bytes) -> Any:
    global _recorded
    if command == b"record":
        with _lock:
            _recorded = []
        return True
    if command == b"take":
        with _lock:
            taken, _recorded = _recorded or [], None
        return taken
    return snapshot()


def main() -> int:
    if len(sys.argv) < 3:  # run alone (``nox -s bench`` runs every script): nothing to do
        print("counted_serve.py: a helper of serve_growth.py (COUNTER_PORT serve ARGS...)")
        return 0
    port = int(sys.argv[1])
    _patch_psycopg()
    threading.Thread(target=_serve_counters, args=(port,), daemon=True).start()
    from a2a_models._cli import main as cli

    return int(cli(sys.argv[2:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
