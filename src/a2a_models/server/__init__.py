"""The transport-agnostic A2A server engine: no web framework, no JSON.

Implement an :class:`Agent`, wrap it in a :class:`RequestHandler` with the
agent's card, and let a transport call the handler's ``on_*`` methods with
decoded request objects and a :class:`CallContext`::

    handler = RequestHandler(MyAgent(), card)
    task = await handler.on_send_message(SendMessageRequest(message=Message.user("hi")))

The pieces are separate so each can be replaced on its own:

* :class:`TaskStore` — tasks, event logs, push configs (:class:`InMemoryTaskStore`)
* :class:`EventBroker` — live per-task fan-out (:class:`InMemoryEventBroker`)
* :class:`PushNotificationSender` — webhook delivery
* :mod:`._lifecycle` — pure functions that apply events to tasks
"""

from ._agent import Agent, AgentEvent, CallContext, RequestContext
from ._base import A2AServer, AgentServer, Reply, ServerSentEvent, StreamingReply
from ._handler import RequestHandler
from ._lifecycle import (
    Event,
    apply_event,
    closes_stream,
    track_chunks,
    trim_history,
    without_artifacts,
)
from ._push import PushNotificationSender
from ._store import (
    ActiveTaskLimitError,
    ConcurrentModificationError,
    InMemoryTaskStore,
    LoggedEvent,
    StoredTask,
    TaskPage,
    TaskStore,
    TaskStoreFullError,
)
from ._streams import (
    BrokerSubscription,
    EventBroker,
    EventStream,
    InMemoryEventBroker,
    Notification,
    StreamItem,
    task_event_stream,
)

__all__ = [
    "A2AServer",
    "ActiveTaskLimitError",
    "AgentServer",
    "Reply",
    "ServerSentEvent",
    "StreamingReply",
    "Agent",
    "AgentEvent",
    "BrokerSubscription",
    "CallContext",
    "ConcurrentModificationError",
    "Event",
    "EventBroker",
    "EventStream",
    "InMemoryEventBroker",
    "InMemoryTaskStore",
    "LoggedEvent",
    "Notification",
    "PushNotificationSender",
    "RequestContext",
    "RequestHandler",
    "StoredTask",
    "StreamItem",
    "TaskPage",
    "TaskStore",
    "TaskStoreFullError",
    "apply_event",
    "closes_stream",
    "task_event_stream",
    "track_chunks",
    "trim_history",
    "without_artifacts",
]
