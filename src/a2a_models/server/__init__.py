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
* :class:`TaskExecutor` — how the agent runs (:class:`InProcessExecutor`; in
  worker processes: :class:`FrontEndHandler`, :class:`Worker`)
* :class:`Operations` — the eleven operations every binding dispatches to
  (:func:`dispatch`, :func:`error_for`, :func:`refuse`, :func:`stream_items`)
* :mod:`.paging` — the page-token scheme and listing order, for store authors;
  with :data:`ACTIVE_STATES`, :func:`check_active_limit` and
  :func:`push_config_id` what a :class:`TaskStore` implementation needs
* :func:`apply_event` and friends — pure functions that apply events to tasks
"""

from ._agent import Agent, AgentEvent, CallContext, RequestContext
from ._base import A2AServer, AgentServer, Reply, ServerSentEvent, StreamingReply
from ._execution import ExecutorFactory, InProcessExecutor, TaskExecutor
from ._handler import RequestHandler
from ._ids import fast_id
from ._leases import STOPPED_MESSAGE, LeasingExecutor, supports_leases
from ._lifecycle import (
    Event,
    apply_event,
    closes_stream,
    extend_history,
    replace_task,
    track_chunks,
    trim_history,
    without_artifacts,
)
from ._operations import (
    DispatchInterceptor,
    Operations,
    dispatch,
    error_for,
    refuse,
    request_ids,
    resume_point,
    set_dispatch_interceptor,
    set_engine_observer,
    stream_items,
)
from ._push import PushNotificationSender
from ._queue import (
    FrontEndHandler,
    QueuedAgent,
    QueueExecutor,
    Turn,
    TurnQueue,
    Worker,
    WorkerExecutor,
    pending_turn,
)
from ._readiness import READY_TIMEOUT, check_readiness
from ._run import AgentRun, RunAborted, RunFinished
from ._store import (
    ACTIVE_STATES,
    PUSH_DIALECTS,
    ActiveTaskLimitError,
    ConcurrentModificationError,
    DuplicateMessageError,
    InMemoryTaskStore,
    LeaseLostError,
    LoggedEvent,
    PushTarget,
    StoredTask,
    TaskStore,
    TaskStoreFullError,
    TaskStoreUnavailableError,
    check_active_limit,
    push_config_id,
)
from ._streams import (
    SUBSCRIBER_BUFFER,
    BrokerItem,
    BrokerSubscription,
    BufferedSubscription,
    EventBroker,
    EventStream,
    InMemoryEventBroker,
    StreamItem,
    task_event_stream,
)
from ._writer import TaskWriter
from .paging import TaskPage

__all__ = [
    "ACTIVE_STATES",
    "READY_TIMEOUT",
    "SUBSCRIBER_BUFFER",
    "A2AServer",
    "ActiveTaskLimitError",
    "AgentServer",
    "Reply",
    "ServerSentEvent",
    "StreamingReply",
    "Agent",
    "AgentEvent",
    "AgentRun",
    "ExecutorFactory",
    "InProcessExecutor",
    "DispatchInterceptor",
    "Operations",
    "RunAborted",
    "RunFinished",
    "TaskExecutor",
    "TaskWriter",
    "dispatch",
    "error_for",
    "fast_id",
    "resume_point",
    "stream_items",
    "BrokerItem",
    "BrokerSubscription",
    "BufferedSubscription",
    "CallContext",
    "ConcurrentModificationError",
    "DuplicateMessageError",
    "Event",
    "EventBroker",
    "EventStream",
    "InMemoryEventBroker",
    "InMemoryTaskStore",
    "LeaseLostError",
    "LeasingExecutor",
    "STOPPED_MESSAGE",
    "LoggedEvent",
    "PushNotificationSender",
    "RequestContext",
    "RequestHandler",
    "StoredTask",
    "StreamItem",
    "TaskPage",
    "TaskStore",
    "TaskStoreFullError",
    "TaskStoreUnavailableError",
    "apply_event",
    "check_active_limit",
    "check_readiness",
    "PUSH_DIALECTS",
    "PushTarget",
    "push_config_id",
    "closes_stream",
    "extend_history",
    "replace_task",
    "task_event_stream",
    "track_chunks",
    "trim_history",
    "without_artifacts",
    "refuse",
    "request_ids",
    "set_dispatch_interceptor",
    "set_engine_observer",
    "supports_leases",
    "FrontEndHandler",
    "QueueExecutor",
    "QueuedAgent",
    "Turn",
    "TurnQueue",
    "Worker",
    "WorkerExecutor",
    "pending_turn",
]
