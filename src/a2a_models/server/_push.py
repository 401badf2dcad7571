"""Push notifications: the :class:`PushNotificationSender` interface and the
engine's dispatcher, which calls it in the background.

Delivery (HTTP POST, ``Authorization`` header, retries) belongs to the
sender; the dispatcher only guarantees that a task never waits for a
webhook, that a failing sender is logged and never breaks the task, and
that the notifications of one task are sent in order.
"""

from __future__ import annotations

import abc
import asyncio
import collections
import logging

from .._outages import log_failure
from ..errors import A2AError, InvalidParamsError
from ..models import StreamResponse, TaskPushNotificationConfig
from ._store import TaskStore

__all__ = ["PushNotificationSender"]

log = logging.getLogger("a2a_models.server")


class PushNotificationSender(abc.ABC):
    """Delivers one notification to one webhook (spec §4.3.3)."""

    @abc.abstractmethod
    async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
        """POST ``item`` (a StreamResponse body) to ``config.url``; raise on failure."""

    #: Most configs one task may have (``None``: no limit); checked when one is created.
    max_configs_per_task: int | None = None

    async def check_config(self, config: TaskPushNotificationConfig) -> None:  # noqa: B027
        """Refuse ``config`` when it is created (raise :class:`ValueError` saying why).

        The default accepts everything; a webhook sender checks the URL here
        with the same rules it applies at delivery.
        """


class PushDispatcher:
    """Sends a task's notifications to all its configs, in a background task per task."""

    #: How long :meth:`aclose` keeps delivering what is queued before dropping it.
    drain_timeout: float = 5.0

    def __init__(self, sender: PushNotificationSender, store: TaskStore) -> None:
        self._sender = sender
        self._store = store
        self._queues: dict[str, collections.deque[StreamResponse]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}

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
                raise InvalidParamsError(
                    f"pushNotificationConfig.url refused: {exc}", {"field": "url"}
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

    def dispatch(self, task_id: str, item: StreamResponse) -> None:
        """Queue ``item`` for every config ``task_id`` has when it is sent."""
        self._queues.setdefault(task_id, collections.deque()).append(item)
        if task_id not in self._workers:
            self._workers[task_id] = asyncio.create_task(
                self._drain(task_id), name=f"a2a-push-{task_id}"
            )

    async def _drain(self, task_id: str) -> None:
        queue = self._queues[task_id]
        try:
            while queue:
                item = queue.popleft()
                # Configs are read at send time: a deleted one gets nothing more.
                try:
                    configs = await self._store.list_push_configs(task_id)
                except Exception as exc:
                    log_failure(log, f"reading push configs of task {task_id} failed", exc)
                    continue
                for config in configs:
                    try:
                        await self._sender.send(config, item)
                    except A2AError as exc:  # refused or undeliverable: one line, no traceback
                        log.warning("push notification for task %s failed: %s", task_id, exc)
                    except Exception:  # a bug in the sender: keep the traceback
                        log.warning("push notification for task %s failed", task_id, exc_info=True)
        finally:
            del self._workers[task_id]
            if not queue:
                del self._queues[task_id]

    async def idle(self) -> None:
        """Wait until every queued notification has been sent (or failed)."""
        while self._workers:
            await asyncio.gather(*self._workers.values(), return_exceptions=True)

    async def aclose(self) -> None:
        """Deliver what is queued for up to :attr:`drain_timeout` seconds, then drop the
        rest and stop the workers.

        A stop fails the tasks it cuts short: that last status is what their
        webhooks most need to hear.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.drain_timeout
        while self._workers and (left := deadline - loop.time()) > 0:
            await asyncio.wait(list(self._workers.values()), timeout=left)
        dropped = sum(len(queue) for queue in self._queues.values()) + len(self._workers)
        if dropped:
            log.warning(
                "stopping: %d push notification(s) not delivered within %g s dropped",
                dropped,
                self.drain_timeout,
            )
        workers = list(self._workers.values())
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        self._queues.clear()
