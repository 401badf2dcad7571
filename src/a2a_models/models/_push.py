"""Push-notification configuration (spec §4.3)."""

from __future__ import annotations

import attrs

from ._base import to_tuple
from .rules import optional_instance_of, optional_str, required_str, str_tuple

__all__ = ["AuthenticationInfo", "TaskPushNotificationConfig"]


@attrs.frozen(slots=True, kw_only=True)
class AuthenticationInfo:
    """Credentials the agent sends to the webhook: ``Authorization: {scheme} {credentials}``.

    0.3 had a list ``schemes``: its first entry is ``scheme`` and the rest are
    kept in ``other_schemes`` (0.3 only; the 1.0 encoder reports them).
    """

    scheme: str = attrs.field(validator=required_str)
    credentials: str | None = attrs.field(default=None, validator=optional_str)
    other_schemes: tuple[str, ...] = attrs.field(
        default=(), converter=to_tuple, validator=str_tuple
    )


@attrs.frozen(slots=True, kw_only=True)
class TaskPushNotificationConfig:
    """Where and how to deliver a task's updates (1.0's flat form).

    0.3 nests ``url``/``id``/``token``/``authentication`` under
    ``pushNotificationConfig`` beside ``taskId``; the codec maps both.
    """

    url: str = attrs.field(validator=required_str)
    id: str | None = attrs.field(default=None, validator=optional_str)
    task_id: str | None = attrs.field(default=None, validator=optional_str)
    token: str | None = attrs.field(default=None, validator=optional_str)
    authentication: AuthenticationInfo | None = attrs.field(
        default=None, validator=optional_instance_of(AuthenticationInfo, "AuthenticationInfo")
    )
    tenant: str | None = attrs.field(default=None, validator=optional_str)
