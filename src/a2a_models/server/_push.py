"""Push notifications: the :class:`PushNotificationSender` interface and the
engine's dispatcher, which calls it in the background.

Delivery (HTTP POST, ``Authorization`` header, retries) belongs to the
sender; the dispatcher only guarantees that a task never waits for a
webhook, that a failing sender is logged and never breaks the task, that
each webhook gets the notifications of its task in order, that a slow
or dead webhook holds up no other (each has a queue of its own), that such
a queue is bounded (the oldest notifications beyond the sender's
``max_queued_per_webhook`` are dropped, never the newest: a task's final
status always stays), that a webhook the sender reports down
(:meth:`PushNotificationSender.is_down`) gets only the newest of the
notifications waiting for it (a dead webhook costs one try per burst, not one
per status update), and that a config deleted while its notifications wait
(in its queue, or for the sender's rate limit: :meth:`PushNotificationSender.turn`)
gets none of them. A webhook that is behind gets chunks of one artifact waiting
for it as one artifact update, and once the rate limit made it wait, no status
update that a newer one waiting says again (see ``_catch_up``); each such
notification is counted (``push_unsent`` of the engine observer).

Across crashes (a store with ``claim_owed_pushes`` and ``push_delivered``, the
SQL ones): the store marks a task's configs owed its latest status event in the
transaction that logs it; a delivery that ends (delivered, or refused for good:
:meth:`PushNotificationSender.retry_later` says no) marks it delivered. What is
still owed once its claim lapses (its process died, or every attempt failed) is
taken up by :meth:`PushDispatcher.resume`, from any process on the store: only
the latest status each config is owed is sent (older ones are coalesced into
it). So a task's latest status reaches its webhook at least once; after a crash
it may arrive twice.

What a webhook gets follows the protocol its config was set through (the
store's :class:`PushTarget` dialect): a 1.0 config each status change and
artifact update as it happened (a StreamResponse, what a stream carries,
§4.3.3), a 0.3 config the Task itself (0.3 §9.5) as that change left it, without its history (so a notification costs the same however
long the conversation) and with its artifacts. A 0.3 config taken up by
:meth:`PushDispatcher.resume` after a crash gets the task built from the owed
status event alone (id, context, status): a process that did not write the
change holds no snapshot of it, and reading one would need the task's owner.
"""

from __future__ import annotations

import abc
import asyncio
import collections
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

from .._outages import ReportedOutage, log_failure
from ..errors import A2AError, InvalidParamsError
from ..models import (
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
    state_of,
)
from ._lifecycle import join_artifact_updates, replace_task
from ._operations import engine_observer
from ._store import PushTarget, TaskStore

__all__ = ["PushNotificationSender"]

log = logging.getLogger("a2a_models.server")


class PushNotificationSender(abc.ABC):
    """Delivers one notification to one webhook (spec §4.3.3)."""

    @abc.abstractmethod
    async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
        """POST ``item`` (a StreamResponse body) to ``config.url``; raise on failure."""

    async def send_as(
        self, config: TaskPushNotificationConfig, item: StreamResponse, dialect: str
    ) -> None:
        """Deliver ``item`` to a config set through protocol ``dialect``: for ``"0.3"``
        ``item`` is the :class:`~a2a_models.Task` a 0.3 webhook gets as its body. The
        default calls :meth:`send` (a sender that knows one body shape)."""
        await self.send(config, item)

    #: Most configs one task may have (``None``: no limit); checked when one is created.
    max_configs_per_task: int | None = None

    #: Most notifications waiting for one config of one task (``None``: no limit); a
    #: newer one pushes the oldest out.
    max_queued_per_webhook: int | None = 100

    def retry_later(self, error: Exception) -> bool:
        """Whether a notification whose :meth:`send` raised ``error`` is still owed (tried
        again later, from the store, see :meth:`PushDispatcher.resume`). The default: yes."""
        return True

    def is_down(self, url: str) -> bool:
        """Whether the webhook at ``url`` failed its last notification; while it is, the
        dispatcher tries only the newest of the notifications waiting for it. The
        default: never down."""
        return False

    @contextlib.asynccontextmanager
    async def turn(self, task_id: str) -> AsyncIterator[bool]:
        """Wait until a notification of task ``task_id`` may go (a rate limit's turn);
        yields whether that took a pause. The dispatcher sends inside it, choosing
        what to send and reading its config again after the pause (so a config
        deleted meanwhile gets nothing); the first attempt of a :meth:`send` inside
        it does not wait again. The default: no limit, no pause."""
        yield False

    async def check_config(self, config: TaskPushNotificationConfig) -> None:  # noqa: B027
        """Refuse ``config`` when it is created (raise :class:`ValueError` saying why).

        The default accepts everything; a webhook sender checks the URL here
        with the same rules it applies at delivery.
        """


class _Lanes:
    """Items handled in order per key, each key by a background task of its own that
    lives while its queue has items (a key's item never waits for another key's).

    With a ``limit``, a key holds at most that many waiting items: a new one pushes
    the oldest out, and ``dropped(key, count)`` is called once when the key's task ends.
    """

    def __init__(
        self,
        handle: Callable[[Any, Any], Awaitable[None]],
        name: str,
        *,
        limit: int | None = None,
        dropped: Callable[[Any, int], None] | None = None,
    ) -> None:
        self._handle = handle
        self._name = name
        self._limit = limit
        self._on_dropped = dropped
        self.queues: dict[Any, collections.deque[Any]] = {}
        self.workers: dict[Any, asyncio.Task[None]] = {}
        self.dropped: dict[Any, int] = {}

    def put(self, key: Any, item: Any) -> None:
        queue = self.queues.get(key)
        if queue is None:
            queue = self.queues[key] = collections.deque(maxlen=self._limit)
        if len(queue) == queue.maxlen:  # the append pushes the oldest out
            self.dropped[key] = self.dropped.get(key, 0) + 1
        queue.append(item)
        if key not in self.workers:
            self.workers[key] = asyncio.create_task(self._run(key), name=f"{self._name}-{key}")

    async def _run(self, key: Any) -> None:
        queue = self.queues[key]
        try:
            while queue:
                await self._handle(key, queue.popleft())
        finally:
            del self.workers[key]
            if not queue:
                del self.queues[key]
            dropped = self.dropped.pop(key, 0)
            if dropped and self._on_dropped is not None:
                self._on_dropped(key, dropped)

    def pending(self) -> int:
        """Items not handled yet (one being handled counts)."""
        return sum(len(queue) for queue in self.queues.values()) + len(self.workers)

    async def cancel(self) -> None:
        workers = list(self.workers.values())
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self.queues.clear()


#: A notification waiting for its configs: (its seq in the log if known, the item, the
#: task as the item left it if known).
_Item = tuple[int | None, StreamResponse, Task | None]
#: A notification waiting for one webhook: (its config as read, the notification, whether
#: the config must be read again before it is sent).
_Entry = tuple[PushTarget, _Item, bool]


def _supersedes(later: _Entry, earlier: _Entry) -> bool:
    """Whether ``later`` says everything ``earlier`` would, so that ``earlier`` need not
    be sent once both wait: a newer status says the task's status (a status update is
    the whole status), a 0.3 Task built from the task as it is now says it all. An
    artifact update is said by nothing else (1.0 sends artifacts as deltas)."""
    (target, (_, item, task), _), (_, (_, old, _), _) = later, earlier
    if target.dialect == "0.3" and task is not None:
        return True
    return isinstance(old, TaskStatusUpdateEvent) and state_of(item) is not None


def _joined(earlier: _Entry, later: _Entry) -> _Entry | None:
    """``earlier`` and ``later`` as one notification to a 1.0 webhook, when ``later``
    appends a chunk to ``earlier``'s artifact (``None`` otherwise)."""
    (_, (_, old, _), reread), (target, (seq, item, task), again) = earlier, later
    if target.dialect != "1.0" or not isinstance(old, TaskArtifactUpdateEvent):
        return None
    if not isinstance(item, TaskArtifactUpdateEvent):
        return None
    joined = join_artifact_updates(old, item)
    return None if joined is None else (target, (seq, joined, task), reread or again)


def _says_status(dialect: str, item: StreamResponse) -> bool:
    """Whether a notification of ``item`` tells a webhook of ``dialect`` the task's
    status (the 0.3 Task always does): what the store's owed rows are about."""
    return dialect == "0.3" or state_of(item) is not None


def _count_unsent(outcome: str, count: int) -> None:
    """``count`` notifications ended as ``outcome`` without a request of their own."""
    observer = engine_observer()
    if observer is not None and count:
        observer.push_unsent(outcome, count)


def _v03_task(item: StreamResponse, task: Task | None) -> StreamResponse:
    """What a 0.3 webhook gets for ``item``: the Task (0.3 §9.5), ``task`` as the item
    left it, or built from the item alone; without history either way."""
    if isinstance(item, Task):
        task = item
    elif task is None and isinstance(item, TaskStatusUpdateEvent):
        return Task(id=item.task_id, context_id=item.context_id, status=item.status)
    if task is None:  # not a status change: the dispatcher is handed none
        return item
    return replace_task(task, history=()) if task.history else task


#: Seconds before a refused read of a task's push configs is tried again, doubling up
#: to the most; and for how long it is tried.
_READ_RETRY_FIRST = 0.25
_READ_RETRY_MAX = 10.0
_READ_RETRY_FOR = 300.0

#: Tasks whose configs, as last read, are kept for their artifact updates.
_TARGETS_KEPT = 4096


class PushDispatcher:
    """Sends a task's notifications to all its configs in the background: in order for
    each webhook, and a webhook that is slow or down holds up no other."""

    #: How long :meth:`aclose` keeps delivering what is queued before dropping it.
    drain_timeout: float = 5.0

    def __init__(self, sender: PushNotificationSender, store: TaskStore) -> None:
        self._sender = sender
        self._store = store
        # Looked up once, not on every delivery (the store does not change).
        self._durable = callable(getattr(store, "claim_owed_pushes", None)) and callable(
            getattr(store, "push_delivered", None)
        )
        #: A task's notifications, waiting for its configs to be read.
        self._tasks = _Lanes(self._route, "a2a-push")
        #: Set by :meth:`aclose`: a read of the configs the store refuses is not tried again.
        self._stopping = asyncio.Event()
        #: Each webhook's notifications, by (task id, config id).
        self._hooks = _Lanes(
            self._deliver,
            "a2a-push-hook",
            limit=sender.max_queued_per_webhook,
            dropped=self._dropped,
        )
        #: Notifications not tried, their webhook down and newer ones waiting.
        self._skipped: dict[tuple[str, str], int] = {}
        #: Each task's configs as its latest status read them (oldest task first): its
        #: artifact updates go to them without a read each (a streamed artifact is
        #: hundreds of chunks, and most tasks have no config at all).
        self._targets: dict[str, list[PushTarget]] = {}

    @property
    def sender(self) -> PushNotificationSender:
        """The sender notifications go through."""
        return self._sender

    async def check(
        self,
        config: TaskPushNotificationConfig,
        task_id: str,
        *,
        url: bool = True,
        limit: bool = True,
    ) -> None:
        """Refuse a new config as ``InvalidParams``: the sender's URL check (``url``) and its
        limit of configs per task (``limit``; replacing a config by its id is not a new one)."""
        if url:
            try:
                await self._sender.check_config(config)
            except ValueError as exc:
                raise InvalidParamsError.of_field(
                    "url", f"pushNotificationConfig.url refused: {exc}"
                ) from None
        most = self._sender.max_configs_per_task
        if most is not None and limit:
            existing = await self._store.list_push_configs(task_id)
            if len(existing) >= most and all(c.id != config.id for c in existing):
                raise InvalidParamsError(
                    f"task {task_id} already has {len(existing)} push notification configs, "
                    "the most allowed; delete one first",
                    {"field": "taskId", "limit": most},
                )

    def dispatch(
        self, task_id: str, item: StreamResponse, seq: int | None = None, task: Task | None = None
    ) -> None:
        """Queue ``item`` (logged as event ``seq``, if known; ``task``: the task as it
        left it, for 0.3 configs) for every config ``task_id`` has when it is sent."""
        self._tasks.put(task_id, (seq, item, task))

    def forget(self, task_id: str) -> None:
        """The task's configs changed (one was created or deleted here): its next
        notification reads them."""
        self._targets.pop(task_id, None)

    @property
    def durable(self) -> bool:
        """Whether the store keeps what is owed across crashes (see the module doc)."""
        return self._durable

    async def resume(self, ttl: float, limit: int = 100) -> int:
        """Send what the store says is owed and no process is delivering (a claim that
        lapsed): the owed event (a task's latest status) to each of up to ``limit`` configs,
        which this process then has ``ttl`` seconds to deliver. Returns how many."""
        if not self.durable:
            return 0
        store: Any = self._store
        owed: list[tuple[str, str, int]] = await store.claim_owed_pushes(ttl, limit)
        for task_id, config_id, seq in owed:
            key = (task_id, config_id)
            if key in self._hooks.workers:  # being delivered here: it marks it when done
                continue
            item = await self._store_method("event_at")(task_id, seq)
            target = await self._store_method("get_push_target")(task_id, config_id)
            if item is None or target is None:  # its task or config is gone
                continue
            self._hooks.put(key, (target, (seq, item, None), False))
        return len(owed)

    def _store_method(self, name: str) -> Callable[..., Awaitable[Any]]:
        """The store's method ``name``; a store that is no TaskStore (a wrapper, say) may
        lack one added since: TaskStore's default serves it then, as it did before the
        method existed (``event_at`` reads the log; configs are 1.0)."""
        method = getattr(self._store, name, None)
        if method is None:
            return functools.partial(getattr(TaskStore, name), self._store)
        return cast("Callable[..., Awaitable[Any]]", method)

    async def _route(self, task_id: str, item: _Item) -> None:
        cached = self._targets.get(task_id)
        if cached is not None and state_of(item[1]) is None:
            # An artifact update goes to the configs the task's latest status read, each
            # read again before it is sent (one deleted since gets nothing; one created
            # here since is read, see forget; one created by another process gets the
            # next status, and the artifact updates after it).
            configs, items, reread = cached, [item], True
        else:
            waiting = self._tasks.queues[task_id]
            if self._pushless(task_id, [item, *waiting]):
                # The store logged each of them where the task had no config: nothing to read.
                read: list[PushTarget] | None = []
            else:
                # Configs are read as the item comes up: one deleted before gets nothing more.
                read = await self._read_configs(task_id)
            if read is None:
                return
            # The task's items that came while they were read go with them: one read for
            # a burst of status updates, not one each (most tasks have no config at all).
            configs, items, reread = read, [item, *waiting], False
            waiting.clear()
            self._targets.pop(task_id, None)
            state = state_of(items[-1][1])
            if state is None or not state.is_terminal:  # nothing follows a terminal state
                self._targets[task_id] = configs
                if len(self._targets) > _TARGETS_KEPT:
                    del self._targets[next(iter(self._targets))]
        for target in configs:
            key = (task_id, target.config.id or target.config.url)
            for seq, event, task in items:
                # Only a 0.3 body is built from the task: a 1.0 config holds none of it.
                entry = (seq, event, task if target.dialect == "0.3" else None)
                # Queued behind others, it is read again at its turn (it may be gone by then).
                self._enqueue(key, (target, entry, reread or key in self._hooks.workers))

    def _enqueue(self, key: tuple[str, str], entry: _Entry) -> None:
        """Queue ``entry`` for its webhook; a chunk appended to the artifact of the last
        notification waiting there joins it: a streamed artifact goes in as many
        requests as its webhook has turns (its answers, the rate limit), not one per
        chunk, and takes one place in the queue."""
        queue = self._hooks.queues.get(key)
        joined = _joined(queue[-1], entry) if queue else None
        if queue and joined is not None:
            queue[-1] = joined
            _count_unsent("coalesced", 1)
            return
        self._hooks.put(key, entry)

    def _catch_up(self, key: tuple[str, str], entry: _Entry, paused: bool) -> _Entry:
        """What to send at ``entry``'s turn: chunks of its artifact that came meanwhile join
        it; and when the rate limit made it wait (``paused``), a status update that a
        newer one waiting says again gives its turn to the next notification: a task's
        latest status then goes out at the next turn after a backlog of updates, not a
        turn per update after it (ordering stays: nothing newer is sent first)."""
        queue = self._hooks.queues.get(key)
        coalesced = 0
        while queue:
            joined = _joined(entry, queue[0])
            superseded = paused and any(_supersedes(later, entry) for later in queue)
            if joined is None and not superseded:
                break
            entry = joined or queue[0]
            queue.popleft()
            coalesced += 1
        _count_unsent("coalesced", coalesced)
        return entry

    def _pushless(self, task_id: str, items: list[_Item]) -> bool:
        """Whether the store says the task had no config when it logged each of ``items``
        (:meth:`TaskStore.no_push_configs_at`; a store that is no TaskStore: not known)."""
        known = getattr(self._store, "no_push_configs_at", None)
        return known is not None and all(
            seq is not None and known(task_id, seq) for seq, _, _ in items
        )

    async def _read_configs(self, task_id: str) -> list[PushTarget] | None:
        """The task's configs; ``None`` when the store would not give them.

        A read the store refuses (a connection refused at max_connections, a restart) is
        tried again rather than dropping the notification (the task's items that come
        meanwhile wait and go with it), backing off to every 10 s for 5 minutes at
        most, and not once the dispatcher is stopping (a stop does not wait on an outage).
        """
        delay, waited = _READ_RETRY_FIRST, 0.0
        while True:
            try:
                return list(await self._store_method("list_push_targets")(task_id))
            except Exception as exc:
                if self._stopping.is_set() or waited + delay > _READ_RETRY_FOR:
                    log_failure(log, f"reading push configs of task {task_id} failed", exc)
                    return None
                if not waited:
                    log_failure(
                        log,
                        f"reading push configs of task {task_id} failed; trying again",
                        exc,
                        logging.WARNING,
                    )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
            waited += delay
            delay = min(delay * 2, _READ_RETRY_MAX)

    async def _deliver(self, key: tuple[str, str], entry: _Entry) -> None:
        if self._hooks.queues.get(key) and self._sender.is_down(entry[0].config.url):
            # Each try at a webhook that is down can cost a whole timeout; what this one
            # says, a newer status waiting behind it says again, so only that is tried.
            self._skipped[key] = self._skipped.get(key, 0) + 1
            _count_unsent("skipped", 1)
            return
        skipped = self._skipped.pop(key, 0)
        if skipped:
            log.warning(
                "%d push notification(s) of task %s for config %s skipped: its webhook "
                "is down, the newest is tried",
                skipped,
                key[0],
                key[1],
            )
        async with self._sender.turn(key[0]) as paused:
            (config, dialect), (seq, item, task), reread = self._catch_up(key, entry, paused)
            if (reread or paused) and config.id:
                # Read after the pause, right before the request: a config deleted by then
                # gets nothing, nor does anything still waiting for it.
                try:
                    current = await self._store_method("get_push_target")(key[0], config.id)
                except Exception as exc:
                    log_failure(
                        log, f"reading push config {config.id} of task {key[0]} failed", exc
                    )
                    return
                if current is None:
                    self._hooks.queues[key].clear()
                    return
                config, dialect = current  # replaced meanwhile, maybe through the other dialect
            ended = await self._send(key[0], config, dialect, item, task)
        if ended and seq is not None and config.id and self.durable and _says_status(dialect, item):
            store: Any = self._store
            try:
                await store.push_delivered(key[0], config.id, seq)
            except Exception as exc:  # still owed: sent again once its claim lapses
                log_failure(log, f"recording the push notification of task {key[0]} failed", exc)

    async def _send(
        self,
        task_id: str,
        config: TaskPushNotificationConfig,
        dialect: str,
        item: StreamResponse,
        task: Task | None,
    ) -> bool:
        """Send one notification; whether its delivery ended (see ``retry_later``)."""
        body = _v03_task(item, task) if dialect == "0.3" else item
        try:
            await self._sender.send_as(config, body, dialect)
        except ReportedOutage as exc:  # the sender logged the outage: not once per notification
            log.debug("push notification for task %s failed: %s", task_id, exc)
            return not self._sender.retry_later(exc)
        except A2AError as exc:  # refused or undeliverable: one line, no traceback
            log.warning("push notification for task %s failed: %s", task_id, exc)
            return not self._sender.retry_later(exc)
        except Exception as exc:  # a bug in the sender: keep the traceback
            log.warning("push notification for task %s failed", task_id, exc_info=True)
            return not self._sender.retry_later(exc)
        return True

    def _dropped(self, key: tuple[str, str], count: int) -> None:
        _count_unsent("dropped", count)
        log.warning(
            "%d push notification(s) of task %s for config %s dropped: more than %s were "
            "waiting for it, the oldest went first",
            count,
            key[0],
            key[1],
            self._sender.max_queued_per_webhook,
        )

    def _workers(self) -> list[asyncio.Task[None]]:
        return [*self._tasks.workers.values(), *self._hooks.workers.values()]

    async def idle(self) -> None:
        """Wait until every queued notification has been sent (or failed)."""
        while workers := self._workers():
            await asyncio.gather(*workers, return_exceptions=True)

    async def aclose(self) -> None:
        """Deliver what is queued for up to :attr:`drain_timeout` seconds, then drop the
        rest and stop the workers.

        A stop fails the tasks it cuts short: that last status is what their
        webhooks most need to hear.
        """
        self._stopping.set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.drain_timeout
        while (workers := self._workers()) and (left := deadline - loop.time()) > 0:
            await asyncio.wait(workers, timeout=left)
        dropped = self._tasks.pending() + self._hooks.pending()
        if dropped:
            log.warning(
                "stopping: %d push notification(s) not delivered within %g s dropped",
                dropped,
                self.drain_timeout,
            )
        await self._tasks.cancel()
        await self._hooks.cancel()
