"""What every endpoint of the app shares: the server, authentication, limits.

The JSON-RPC endpoint hands bytes to :meth:`A2AServer.handle`, which calls
the server's own :meth:`~A2AServer.authenticate` (headers only). When the app
has an :class:`~._auth.Authenticator`, the server is wrapped in an
:class:`AuthenticatedView`: an :class:`A2AServer` that delegates every
operation to the wrapped server but whose ``authenticate`` returns the user
the HTTP layer has just authenticated (passed through a context variable,
so concurrent requests never see each other's caller).
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.requests import HTTPConnection

from ... import models as m
from ...server import A2AServer, CallContext, EventStream
from ._auth import Authenticator, Principal
from ._card import CardRenderer
from ._streaming import StreamRegistry

__all__ = ["AuthenticatedView", "Gateway"]

#: The user authenticated by the HTTP layer for the request being handled.
_CALLER: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("a2a_http_caller")


class AuthenticatedView(A2AServer):
    """``inner`` with the caller decided by the HTTP layer's authenticator.

    Every ``on_*`` operation, :meth:`call_context` and
    :meth:`response_headers` are the inner server's; only
    :meth:`authenticate` differs. (An
    override of :meth:`A2AServer.handle` on the inner server is not used.)
    """

    def __init__(self, inner: A2AServer) -> None:
        # No super().__init__(): the attributes are the inner server's.
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        # Anything else the base class (or a subclass) keeps on the instance.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def card(self) -> m.AgentCard | None:
        return self.inner.card

    @card.setter
    def card(self, value: m.AgentCard | None) -> None:
        self.inner.card = value

    @property
    def supported_versions(self) -> tuple[str, ...]:
        return self.inner.supported_versions

    @supported_versions.setter
    def supported_versions(self, value: tuple[str, ...]) -> None:
        self.inner.supported_versions = value

    @property
    def max_batch_size(self) -> int | None:
        return self.inner.max_batch_size

    @max_batch_size.setter
    def max_batch_size(self, value: int | None) -> None:
        self.inner.max_batch_size = value

    async def authenticate(self, headers: Mapping[str, str]) -> str | None:
        principal = _CALLER.get(None)
        return principal.user if principal is not None else None

    def call_context(
        self, headers: Mapping[str, str], version: str, owner: str | None
    ) -> CallContext:
        return self.inner.call_context(headers, version, owner)

    def response_headers(self, headers: Mapping[str, str], version: str) -> dict[str, str]:
        return self.inner.response_headers(headers, version)

    async def on_send_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> m.Task | m.Message:
        return await self.inner.on_send_message(request, call)

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream:
        return await self.inner.on_send_streaming_message(request, call)

    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        return await self.inner.on_get_task(request, call)

    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse:
        return await self.inner.on_list_tasks(request, call)

    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task:
        return await self.inner.on_cancel_task(request, call)

    async def on_subscribe_to_task(
        self, request: m.SubscribeToTaskRequest, call: CallContext, *, after_seq: int | None = None
    ) -> EventStream:
        return await self.inner.on_subscribe_to_task(request, call, after_seq=after_seq)

    async def on_create_task_push_notification_config(
        self, config: m.TaskPushNotificationConfig, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        return await self.inner.on_create_task_push_notification_config(config, call)

    async def on_get_task_push_notification_config(
        self, request: m.GetTaskPushNotificationConfigRequest, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        return await self.inner.on_get_task_push_notification_config(request, call)

    async def on_list_task_push_notification_configs(
        self, request: m.ListTaskPushNotificationConfigsRequest, call: CallContext
    ) -> m.ListTaskPushNotificationConfigsResponse:
        return await self.inner.on_list_task_push_notification_configs(request, call)

    async def on_delete_task_push_notification_config(
        self, request: m.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> None:
        await self.inner.on_delete_task_push_notification_config(request, call)

    async def on_get_extended_agent_card(
        self, request: m.GetExtendedAgentCardRequest, call: CallContext
    ) -> m.AgentCard:
        return await self.inner.on_get_extended_agent_card(request, call)


class Gateway:
    """The state one app's endpoints share."""

    def __init__(
        self,
        server: A2AServer,
        *,
        authenticator: Authenticator | None,
        max_body_bytes: int,
        sse_keepalive: float | None,
        card_max_age: int,
    ) -> None:
        #: The server as given to :func:`create_app`.
        self.server = server
        self.authenticator = authenticator
        #: What the endpoints call: ``server`` itself, or its authenticated view.
        self.target: A2AServer = AuthenticatedView(server) if authenticator is not None else server
        self.max_body_bytes = max_body_bytes
        self.sse_keepalive = sse_keepalive
        self.streams = StreamRegistry()
        self.cards = CardRenderer(
            include_v03="0.3" in server.supported_versions, max_age=card_max_age
        )

    async def principal(self, request: HTTPConnection) -> Principal | None:
        """The caller per the app's authenticator (``None``: anonymous or no authenticator)."""
        if self.authenticator is None:
            return None
        return await self.authenticator.authenticate(request)

    async def owner(self, request: HTTPConnection, headers: Mapping[str, str]) -> str | None:
        """The task owner of a REST request (the JSON-RPC path lets the server decide)."""
        if self.authenticator is None:
            return await self.server.authenticate(headers)
        principal = await self.authenticator.authenticate(request)
        return principal.user if principal is not None else None

    @staticmethod
    def bind(principal: Principal | None) -> contextvars.Token[Principal | None]:
        """Make ``principal`` the caller :class:`AuthenticatedView` reports."""
        return _CALLER.set(principal)

    @staticmethod
    def unbind(token: contextvars.Token[Principal | None]) -> None:
        _CALLER.reset(token)


def challenges_of(error: Any) -> Sequence[str]:
    """The ``WWW-Authenticate`` values an auth error carries."""
    value = getattr(error, "challenges", ())
    return tuple(value) if isinstance(value, tuple | list) else ()
