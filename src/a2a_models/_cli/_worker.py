"""``a2a-models worker``: run an agent on the turns ``serve --front-end`` queues.

Loads the agent as ``serve`` does, connects to the PostgreSQL store and its
broker, and pulls turns (see :class:`~a2a_models.server.Worker`) until
SIGINT or SIGTERM; then it stops pulling, lets running turns finish for
``--grace`` seconds and hands back the rest.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

import attrs

__all__ = ["WorkerOptions", "run_worker"]


@attrs.frozen(slots=True, kw_only=True)
class WorkerOptions:
    """What ``a2a-models worker`` was asked for (see ``a2a-models worker --help``)."""

    store: str = ""
    agent: str = "demo"
    concurrency: int = 16
    lease_ttl: float = 15.0
    grace: float = 30.0
    store_wait: float = 0.0
    log_level: str = "info"
    otel: bool = False
    #: Private webhook hosts or networks the notifications may reach (``--push-allow``).
    push_allowlist: tuple[str, ...] = ()
    push_rate: float = 5.0


def run_worker(options: WorkerOptions) -> int:
    """Run a worker until SIGINT/SIGTERM; the exit status."""
    store = options.store or os.environ.get("A2A_STORE", "")
    if not store.startswith(("postgresql:", "postgres:")):
        print(
            "a2a-models worker: --store must be the front ends' postgresql://... store "
            f"(got {store!r})",
            file=sys.stderr,
        )
        return 2
    if options.otel:
        from ._otel import start_otel

        if not start_otel("worker", options.log_level):
            return 2
    else:
        logging.basicConfig(
            level=getattr(logging, options.log_level.upper(), logging.INFO),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    return asyncio.run(_serve(attrs.evolve(options, store=store)))


async def _serve(options: WorkerOptions) -> int:
    from .._closing import aclose_if_closable
    from ..server import Worker
    from ..stores import PostgresTaskStore, PostgresTurnQueue, broker_from_url, store_from_url
    from ._run import _agent_and_card, push_sender_for
    from ._security import SecurityOptions
    from ._serve import handling_stop_signals
    from ._store import open_at_start

    try:
        agent, card = _agent_and_card(options.agent, "http://worker.invalid")
    except ValueError as exc:
        print(f"a2a-models worker: {exc}", file=sys.stderr)
        return 2
    store = store_from_url(options.store)
    assert isinstance(store, PostgresTaskStore)
    broker = broker_from_url(options.store)
    queue = PostgresTurnQueue(store, options.store)
    push_sender = push_sender_for(
        card, SecurityOptions(push_allowlist=options.push_allowlist, push_rate=options.push_rate)
    )
    worker = Worker(
        agent,
        store,
        broker,
        queue,
        concurrency=options.concurrency,
        ttl=options.lease_ttl,
        push_sender=push_sender,
    )
    stop = asyncio.Event()
    try:
        problem = await open_at_start(
            store, options.store, wait=options.store_wait, command="a2a-models worker"
        )
        if problem is not None:
            print(f"a2a-models worker: {problem}", file=sys.stderr)
            return 1
        with handling_stop_signals(stop.set):
            print(f"a2a-models: worker {worker.worker_id} running {card.name}", flush=True)
            await worker.run(stop, grace=options.grace)
    finally:
        await queue.aclose()
        await aclose_if_closable(broker)
        await store.aclose()
    print(f"a2a-models: worker stopped after {worker.started} turns", flush=True)
    return 0
