"""Strategies for requests and responses, and the lookup by type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from ... import models as m
from ...models.rules import INT32_RANGE
from ._common import (
    _NONEMPTY,
    T,
    _ids,
    _metadata,
    _opt,
    _opt_bool,
    _opt_count,
    _opt_str,
    _str_tuples,
    _tuples,
    timestamps,
)
from ._rules import _dialect_cached, _Rules, _rules
from ._tasks import _push_configs, messages, task_push_notification_configs, task_states, tasks

# --------------------------------------------------------------------------- requests


def _task_reads(
    request: Callable[..., T], r: _Rules, /, **fields: st.SearchStrategy[Any]
) -> st.SearchStrategy[T]:
    """``request`` values: ``fields``, and the tenant and metadata of every request that
    reads one task or its push configs (the requests :attr:`_Rules.read_metadata` is
    about; a cancel's metadata has a rule of its own)."""
    return st.builds(
        request, **fields, tenant=_opt_str(r, r.tenant), metadata=_metadata(r.read_metadata)
    )


@_dialect_cached
def send_message_configurations(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.SendMessageConfiguration]:
    """:class:`SendMessageConfiguration` values (0.3: the push config has no task id)."""
    r = _rules(dialect)
    return st.builds(
        m.SendMessageConfiguration,
        accepted_output_modes=_str_tuples(),
        task_push_notification_config=_opt(_push_configs(dialect, nested=True)),
        history_length=_opt_count(r),
        return_immediately=st.booleans(),
    )


@_dialect_cached
def send_message_requests(dialect: str = "1.0") -> st.SearchStrategy[m.SendMessageRequest]:
    """:class:`SendMessageRequest` values (``MessageSendParams`` in 0.3)."""
    r = _rules(dialect)
    return st.builds(
        m.SendMessageRequest,
        message=messages(dialect),
        configuration=_opt(send_message_configurations(dialect)),
        metadata=_metadata(r.send_metadata),
        tenant=_opt_str(r, r.tenant),
    )


@_dialect_cached
def get_task_requests(dialect: str = "1.0") -> st.SearchStrategy[m.GetTaskRequest]:
    """:class:`GetTaskRequest` values (1.0: no metadata)."""
    r = _rules(dialect)
    return _task_reads(m.GetTaskRequest, r, id=_ids(r), history_length=_opt_count(r))


@_dialect_cached
def list_tasks_requests(dialect: str = "1.0") -> st.SearchStrategy[m.ListTasksRequest]:
    """:class:`ListTasksRequest` values (1.0 and python only)."""
    r = _rules(dialect)
    return st.builds(
        m.ListTasksRequest,
        context_id=_opt_str(r),
        status=_opt(task_states(dialect)),
        page_size=_opt_count(r),
        page_token=_opt_str(r),
        history_length=_opt_count(r),
        status_timestamp_after=_opt(timestamps()),
        include_artifacts=_opt_bool(r),
        tenant=_opt_str(r, r.tenant),
    )


@_dialect_cached
def list_tasks_responses(dialect: str = "1.0") -> st.SearchStrategy[m.ListTasksResponse]:
    """:class:`ListTasksResponse` values (1.0 and python only; empty pages included)."""
    return st.builds(
        m.ListTasksResponse,
        tasks=_tuples(tasks(dialect), max_size=2),
        next_page_token=st.just("") | _NONEMPTY,
        page_size=st.integers(0, INT32_RANGE[1]),
        total_size=st.integers(0, INT32_RANGE[1]),
    )


@_dialect_cached
def cancel_task_requests(dialect: str = "1.0") -> st.SearchStrategy[m.CancelTaskRequest]:
    """:class:`CancelTaskRequest` values."""
    r = _rules(dialect)
    return st.builds(
        m.CancelTaskRequest,
        id=_ids(r),
        metadata=_metadata(r.cancel_metadata),
        tenant=_opt_str(r, r.tenant),
    )


@_dialect_cached
def subscribe_to_task_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.SubscribeToTaskRequest]:
    """:class:`SubscribeToTaskRequest` values (1.0: no metadata)."""
    r = _rules(dialect)
    return _task_reads(m.SubscribeToTaskRequest, r, id=_ids(r))


@_dialect_cached
def get_task_push_notification_config_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.GetTaskPushNotificationConfigRequest]:
    """:class:`GetTaskPushNotificationConfigRequest` values (1.0: no metadata, an id; 0.3: id optional)."""
    r = _rules(dialect)
    config_id: st.SearchStrategy[str | None]
    if r.always_written(m.GetTaskPushNotificationConfigRequest, "id"):
        config_id = _ids(r)  # REQUIRED in 1.0
    elif r.resource_names:
        # 0.3 REST: "tasks/{id}/pushNotificationConfigs/" (no config id) is allowed.
        config_id = _opt(_ids(r))
    else:
        # 0.3 JSON-RPC may omit it (the task's first config); python: any value.
        config_id = _opt_str(r)
    return _task_reads(m.GetTaskPushNotificationConfigRequest, r, task_id=_ids(r), id=config_id)


@_dialect_cached
def delete_task_push_notification_config_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.DeleteTaskPushNotificationConfigRequest]:
    """:class:`DeleteTaskPushNotificationConfigRequest` values (1.0: no metadata)."""
    r = _rules(dialect)
    return _task_reads(m.DeleteTaskPushNotificationConfigRequest, r, task_id=_ids(r), id=_ids(r))


@_dialect_cached
def list_task_push_notification_configs_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.ListTaskPushNotificationConfigsRequest]:
    """:class:`ListTaskPushNotificationConfigsRequest` values (1.0: no metadata)."""
    r = _rules(dialect)
    return _task_reads(
        m.ListTaskPushNotificationConfigsRequest,
        r,
        task_id=_ids(r),
        # A plain int32 in every proto: 0 means unset.
        page_size=_opt_count(
            r, zero=not r.zero_is_unset(m.ListTaskPushNotificationConfigsRequest, "page_size")
        )
        if r.push_paging
        else st.none(),
        page_token=_opt_str(r, r.push_paging),
    )


@_dialect_cached
def list_task_push_notification_configs_responses(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.ListTaskPushNotificationConfigsResponse]:
    """:class:`ListTaskPushNotificationConfigsResponse` values (0.3: a bare list, no token)."""
    r = _rules(dialect)
    return st.builds(
        m.ListTaskPushNotificationConfigsResponse,
        configs=_tuples(task_push_notification_configs(dialect), max_size=3),
        next_page_token=_opt_str(r, r.push_paging),
    )


@_dialect_cached
def get_extended_agent_card_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.GetExtendedAgentCardRequest]:
    """:class:`GetExtendedAgentCardRequest` values (only a tenant, 1.0)."""
    r = _rules(dialect)
    return st.builds(m.GetExtendedAgentCardRequest, tenant=_opt_str(r, r.tenant))
