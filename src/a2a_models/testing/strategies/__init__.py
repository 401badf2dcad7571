"""Hypothesis strategies for every a2a-models type, for property tests.

Every strategy generates *valid* models (they pass the models' validators)
that are *expressible* in the chosen wire ``dialect``: encoding them with
:func:`a2a_models.codec.encode` in that dialect never raises
:class:`~a2a_models.errors.EncodeError`, and decoding the result gives back an
equal value. Use them in your own tests::

    from hypothesis import given
    from a2a_models import codec
    from a2a_models.testing import strategies as a2a_st

    @given(a2a_st.tasks(dialect="0.3"))
    def test_my_store_round_trips(task):
        assert my_store.load(my_store.save(task)) == task

    @given(a2a_st.strategy_for(codec_type))   # any model class or union alias
    def test_anything(value): ...

Dialects (the ``dialect=`` parameter of every model strategy):

* ``"1.0"`` (default) - A2A 1.0 ProtoJSON. OAuthFlows hold exactly one flow,
  ``AgentCapabilities.state_transition_history`` is ``None``,
  ``TaskStatusUpdateEvent.final`` is ``False``, ``AuthenticationInfo`` has no
  ``other_schemes``, the read requests (GetTask, SubscribeToTask,
  Get/Delete/List push configs) have no ``metadata``, and
  ``GetTaskPushNotificationConfigRequest.id`` is set (REQUIRED).
* ``"0.3"`` - A2A 0.3 JSON-RPC (the TypeScript/JSON-Schema shapes):
  ``DataPart.data`` is an object, text and data parts carry no
  ``filename``/``media_type``, ``tenant`` is ``None`` everywhere, OAuthFlows may
  hold any number of flows (none too) but no device-code flow (and no PKCE
  flag), ``AuthenticationInfo`` may carry ``other_schemes``, the wire-required
  ``AgentExtension.uri``, ``ImplicitOAuthFlow.authorization_url`` and
  ``PasswordOAuthFlow.token_url`` are set, a standalone ``AgentCapabilities``
  has no ``extended_agent_card`` (0.3 keeps it on the card), every
  interface of a card shares one ``protocol_version`` starting with ``"0."``,
  ``Task.context_id`` is set, roles are user or agent, a standalone push
  config has a ``task_id`` while one inside a send configuration has none, and
  the types 0.3 lacks (``ListTasksRequest``, ``ListTasksResponse``,
  ``DeviceCodeOAuthFlow``, a standalone ``AgentInterface``) are not generated
  (see :func:`expressible`).
* ``"0.3-http"`` - A2A 0.3 HTTP+JSON (ProtoJSON of the 0.3 proto): as ``"0.3"``
  and additionally parts carry no ``metadata`` (files keep only
  ``media_type``), OAuthFlows hold at most one flow (a proto oneof), messages
  have no ``reference_task_ids``, cards no ``icon_url``, requests no
  ``metadata`` except SendMessage, plain proto3 scalars are never at their
  default (optional bools are ``None`` or ``True``, optional counts ``None``
  or positive), and ids used in resource names (``tasks/{id}/...``) contain
  no ``/``.
* ``"python"`` - the snake_case Python-dict form (:func:`a2a_models.codec.to_dict`):
  every valid model (optional strings may also be ``""``, which this form keeps).

Optional strings are ``None`` or non-empty in the ProtoJSON dialects (which
read ``""`` as unset, following proto3); 0.3 JSON-RPC keeps ``""``, so its
strategies generate it too. Which of these (and every rule above) holds is not
stated here: the strategies read it from :mod:`a2a_models.codec.facts`, the
codec's own tables and facts measured on it. Timestamps are timezone-aware datetimes (mostly UTC; other
offsets compare equal to the UTC value the codec gives back), some of them
:class:`~a2a_models.Timestamp` values with nanoseconds below the microsecond.

JSON data (``metadata``, ``DataPart.data``, extension ``params``...) comes from
:func:`json_values` / :func:`json_objects`: integers of any size (including
beyond 64 bits), finite floats, unicode text including non-BMP characters,
nested arrays and objects whose keys come in random order.

Requires ``hypothesis`` (a test dependency, not a runtime one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from ... import models as m
from ..._state import TaskState
from ...codec import facts
from ._card import (
    agent_capabilities,
    agent_card_signatures,
    agent_cards,
    agent_extensions,
    agent_interfaces,
    agent_providers,
    agent_skills,
    api_key_security_schemes,
    authorization_code_oauth_flows,
    client_credentials_oauth_flows,
    device_code_oauth_flows,
    http_auth_security_schemes,
    implicit_oauth_flows,
    mutual_tls_security_schemes,
    oauth2_security_schemes,
    oauth_flows,
    open_id_connect_security_schemes,
    password_oauth_flows,
    security_requirements,
    security_schemes,
)
from ._common import (
    json_objects,
    json_scalars,
    json_values,
    texts,
    timestamps,
)
from ._requests import (
    cancel_task_requests,
    delete_task_push_notification_config_requests,
    get_extended_agent_card_requests,
    get_task_push_notification_config_requests,
    get_task_requests,
    list_task_push_notification_configs_requests,
    list_task_push_notification_configs_responses,
    list_tasks_requests,
    list_tasks_responses,
    send_message_configurations,
    send_message_requests,
    subscribe_to_task_requests,
)
from ._rules import DIALECTS
from ._rules import _rules as _rules
from ._tasks import (
    artifacts,
    authentication_infos,
    data_parts,
    file_parts,
    messages,
    parts,
    roles,
    send_message_responses,
    stream_responses,
    task_artifact_update_events,
    task_push_notification_configs,
    task_states,
    task_status_update_events,
    task_statuses,
    tasks,
    text_parts,
)

__all__ = [
    "DIALECTS",
    "MODEL_TYPES",
    "UNION_TYPES",
    "agent_capabilities",
    "agent_card_signatures",
    "agent_cards",
    "agent_extensions",
    "agent_interfaces",
    "agent_providers",
    "agent_skills",
    "api_key_security_schemes",
    "artifacts",
    "authentication_infos",
    "authorization_code_oauth_flows",
    "cancel_task_requests",
    "client_credentials_oauth_flows",
    "data_parts",
    "delete_task_push_notification_config_requests",
    "device_code_oauth_flows",
    "expressible",
    "file_parts",
    "from_model",
    "get_extended_agent_card_requests",
    "get_task_push_notification_config_requests",
    "get_task_requests",
    "http_auth_security_schemes",
    "implicit_oauth_flows",
    "json_objects",
    "json_scalars",
    "json_values",
    "list_task_push_notification_configs_requests",
    "list_task_push_notification_configs_responses",
    "list_tasks_requests",
    "list_tasks_responses",
    "messages",
    "mutual_tls_security_schemes",
    "oauth2_security_schemes",
    "oauth_flows",
    "open_id_connect_security_schemes",
    "parts",
    "password_oauth_flows",
    "roles",
    "security_requirements",
    "security_schemes",
    "send_message_configurations",
    "send_message_requests",
    "send_message_responses",
    "strategy_for",
    "stream_responses",
    "subscribe_to_task_requests",
    "task_artifact_update_events",
    "task_push_notification_configs",
    "task_states",
    "task_status_update_events",
    "task_statuses",
    "tasks",
    "text_parts",
    "texts",
    "timestamps",
]


# --------------------------------------------------------------------------- lookup

_BY_TYPE: dict[Any, Callable[..., st.SearchStrategy[Any]]] = {
    m.TextPart: text_parts,
    m.FilePart: file_parts,
    m.DataPart: data_parts,
    m.Part: parts,
    m.Message: messages,
    m.Artifact: artifacts,
    m.TaskStatus: task_statuses,
    m.Task: tasks,
    m.TaskStatusUpdateEvent: task_status_update_events,
    m.TaskArtifactUpdateEvent: task_artifact_update_events,
    m.AuthenticationInfo: authentication_infos,
    m.TaskPushNotificationConfig: task_push_notification_configs,
    m.AuthorizationCodeOAuthFlow: authorization_code_oauth_flows,
    m.ClientCredentialsOAuthFlow: client_credentials_oauth_flows,
    m.ImplicitOAuthFlow: implicit_oauth_flows,
    m.PasswordOAuthFlow: password_oauth_flows,
    m.DeviceCodeOAuthFlow: device_code_oauth_flows,
    m.OAuthFlows: oauth_flows,
    m.APIKeySecurityScheme: api_key_security_schemes,
    m.HTTPAuthSecurityScheme: http_auth_security_schemes,
    m.OAuth2SecurityScheme: oauth2_security_schemes,
    m.OpenIdConnectSecurityScheme: open_id_connect_security_schemes,
    m.MutualTlsSecurityScheme: mutual_tls_security_schemes,
    m.SecurityScheme: security_schemes,
    m.SecurityRequirement: security_requirements,
    m.AgentInterface: agent_interfaces,
    m.AgentProvider: agent_providers,
    m.AgentExtension: agent_extensions,
    m.AgentCapabilities: agent_capabilities,
    m.AgentSkill: agent_skills,
    m.AgentCardSignature: agent_card_signatures,
    m.AgentCard: agent_cards,
    m.SendMessageConfiguration: send_message_configurations,
    m.SendMessageRequest: send_message_requests,
    m.GetTaskRequest: get_task_requests,
    m.ListTasksRequest: list_tasks_requests,
    m.ListTasksResponse: list_tasks_responses,
    m.CancelTaskRequest: cancel_task_requests,
    m.SubscribeToTaskRequest: subscribe_to_task_requests,
    m.GetTaskPushNotificationConfigRequest: get_task_push_notification_config_requests,
    m.DeleteTaskPushNotificationConfigRequest: delete_task_push_notification_config_requests,
    m.ListTaskPushNotificationConfigsRequest: list_task_push_notification_configs_requests,
    m.ListTaskPushNotificationConfigsResponse: list_task_push_notification_configs_responses,
    m.GetExtendedAgentCardRequest: get_extended_agent_card_requests,
    m.StreamResponse: stream_responses,
    m.SendMessageResponse: send_message_responses,
    TaskState: task_states,
    m.Role: roles,
}

#: Every model class with a strategy (abstract bases ``Part`` and
#: ``SecurityScheme`` included: their strategies give the subclasses).
MODEL_TYPES: tuple[type[Any], ...] = tuple(
    t for t in _BY_TYPE if isinstance(t, type) and t not in (TaskState, m.Role)
)
#: The union aliases: ``StreamResponse`` and ``SendMessageResponse``.
UNION_TYPES: tuple[Any, ...] = (m.StreamResponse, m.SendMessageResponse)


def expressible(tp: Any, dialect: str = "1.0") -> bool:
    """Whether ``dialect`` has a wire form for ``tp`` at all (ListTasks is 1.0-only)."""
    return facts.has_form(tp, _rules(dialect).name)


def strategy_for(tp: Any, dialect: str = "1.0") -> st.SearchStrategy[Any]:
    """The strategy of a model class, union alias or enum, e.g. ``strategy_for(Task, "0.3")``.

    Raises :class:`TypeError` for other types and :class:`ValueError` when
    ``dialect`` has no form for ``tp`` (see :func:`expressible`).
    """
    try:
        fn = _BY_TYPE[tp]
    except (KeyError, TypeError):
        raise TypeError(f"no a2a-models strategy for {tp!r}") from None
    if not expressible(tp, dialect):
        raise ValueError(f"{getattr(tp, '__name__', tp)} has no {dialect} form")
    return fn(dialect)


#: Alias of :func:`strategy_for`.
from_model = strategy_for


def _check_complete() -> list[str]:
    """Names of exported attrs model classes without a strategy (should be empty)."""
    import attrs

    return [
        name
        for name in m.__all__
        if isinstance(getattr(m, name), type)
        and attrs.has(getattr(m, name))
        and getattr(m, name) not in _BY_TYPE
    ]
