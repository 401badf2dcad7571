"""Strategies for enums, parts, messages, tasks, events and push configs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from ... import models as m
from ..._state import TaskState
from ._common import (
    _NONEMPTY,
    T,
    _ids,
    _metadata,
    _opt,
    _opt_str,
    _str_tuples,
    _tuples,
    json_objects,
    json_values,
    texts,
    timestamps,
)
from ._rules import _dialect_cached, _Rules, _rules

# --------------------------------------------------------------------------- enums


@_dialect_cached
def task_states(dialect: str = "1.0") -> st.SearchStrategy[TaskState]:
    """Every :class:`TaskState` the dialect can carry."""
    rules = _rules(dialect)
    states = [s for s in TaskState if rules.unspecified_state or s is not TaskState.UNSPECIFIED]
    return st.sampled_from(states)


@_dialect_cached
def roles(dialect: str = "1.0") -> st.SearchStrategy[m.Role]:
    """Every :class:`Role` the dialect can carry (0.3: user and agent)."""
    rules = _rules(dialect)
    return st.sampled_from(
        [r for r in m.Role if rules.unspecified_role or r is not m.Role.UNSPECIFIED]
    )


# --------------------------------------------------------------------------- parts


@_dialect_cached
def text_parts(dialect: str = "1.0") -> st.SearchStrategy[m.TextPart]:
    """:class:`TextPart` values (0.3: no filename/media_type)."""
    r = _rules(dialect)
    return st.builds(
        m.TextPart,
        texts(),
        metadata=_metadata(r.part_metadata),
        filename=_opt_str(r, r.part_extras),
        media_type=_opt_str(r, r.part_extras),
    )


@_dialect_cached
def file_parts(dialect: str = "1.0") -> st.SearchStrategy[m.FilePart]:
    """:class:`FilePart` values, inline (``raw``) or by ``url``."""
    r = _rules(dialect)
    common = {
        "metadata": _metadata(r.part_metadata),
        "filename": _opt_str(r, r.file_name),
        "media_type": _opt_str(r),
    }
    return st.builds(m.FilePart, raw=st.binary(max_size=24), **common) | st.builds(
        m.FilePart, url=texts(), **common
    )


@_dialect_cached
def data_parts(dialect: str = "1.0") -> st.SearchStrategy[m.DataPart]:
    """:class:`DataPart` values (1.0: any JSON value; 0.3: an object)."""
    r = _rules(dialect)
    data = json_values(max_leaves=8) if r.data_any else json_objects(max_leaves=8)
    return st.builds(
        m.DataPart,
        data,
        metadata=_metadata(r.part_metadata),
        filename=_opt_str(r, r.part_extras),
        media_type=_opt_str(r, r.part_extras),
    )


@_dialect_cached
def parts(dialect: str = "1.0") -> st.SearchStrategy[m.Part]:
    """Any part: text, file or data."""
    return st.one_of(text_parts(dialect), file_parts(dialect), data_parts(dialect))


# --------------------------------------------------------------------------- messages, tasks


@_dialect_cached
def messages(dialect: str = "1.0") -> st.SearchStrategy[m.Message]:
    """:class:`Message` values with 1-3 parts."""
    r = _rules(dialect)
    return st.builds(
        m.Message,
        role=roles(dialect),
        parts=_tuples(parts(dialect), min_size=1),
        message_id=_ids(r),
        context_id=_opt_str(r),
        task_id=_opt_str(r),
        metadata=_metadata(),
        extensions=_str_tuples(),
        reference_task_ids=_str_tuples() if r.reference_task_ids else st.just(()),
    )


@_dialect_cached
def artifacts(dialect: str = "1.0") -> st.SearchStrategy[m.Artifact]:
    """:class:`Artifact` values with 1-3 parts."""
    r = _rules(dialect)
    return st.builds(
        m.Artifact,
        parts=_tuples(parts(dialect), min_size=1),
        artifact_id=_ids(r),
        name=_opt_str(r),
        description=_opt_str(r),
        metadata=_metadata(),
        extensions=_str_tuples(),
    )


@_dialect_cached
def task_statuses(dialect: str = "1.0") -> st.SearchStrategy[m.TaskStatus]:
    """:class:`TaskStatus` values, with or without a message and timestamp."""
    return st.builds(
        m.TaskStatus,
        state=task_states(dialect),
        message=_opt(messages(dialect)),
        timestamp=_opt(timestamps()),
    )


@_dialect_cached
def tasks(dialect: str = "1.0") -> st.SearchStrategy[m.Task]:
    """:class:`Task` values (0.3 JSON-RPC: ``context_id`` always set)."""
    r = _rules(dialect)
    return st.builds(
        m.Task,
        id=_ids(r),
        status=task_statuses(dialect),
        context_id=_NONEMPTY if r.required(m.Task, "context_id") else _opt_str(r),
        artifacts=_tuples(artifacts(dialect), max_size=2),
        history=_tuples(messages(dialect), max_size=2),
        metadata=_metadata(),
    )


# --------------------------------------------------------------------------- events, unions


def _task_event(
    event: Callable[..., T], r: _Rules, /, **fields: st.SearchStrategy[Any]
) -> st.SearchStrategy[T]:
    """``event`` values: its own ``fields`` and what every task event has beside them,
    the (required) ids of its task and context and optional metadata."""
    return st.builds(event, task_id=_ids(r), context_id=_ids(r), **fields, metadata=_metadata())


@_dialect_cached
def task_status_update_events(dialect: str = "1.0") -> st.SearchStrategy[m.TaskStatusUpdateEvent]:
    """:class:`TaskStatusUpdateEvent` values (1.0: ``final`` is False)."""
    r = _rules(dialect)
    return _task_event(
        m.TaskStatusUpdateEvent,
        r,
        status=task_statuses(dialect),
        final=st.booleans() if r.final else st.just(False),
    )


@_dialect_cached
def task_artifact_update_events(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.TaskArtifactUpdateEvent]:
    """:class:`TaskArtifactUpdateEvent` values."""
    r = _rules(dialect)
    return _task_event(
        m.TaskArtifactUpdateEvent,
        r,
        artifact=artifacts(dialect),
        append=st.booleans(),
        last_chunk=st.booleans(),
    )


@_dialect_cached
def stream_responses(dialect: str = "1.0") -> st.SearchStrategy[m.StreamResponse]:
    """Members of the ``StreamResponse`` union: task, message or either event."""
    return st.one_of(
        tasks(dialect),
        messages(dialect),
        task_status_update_events(dialect),
        task_artifact_update_events(dialect),
    )


@_dialect_cached
def send_message_responses(dialect: str = "1.0") -> st.SearchStrategy[m.SendMessageResponse]:
    """Members of the ``SendMessageResponse`` union: a task or a message."""
    return st.one_of(tasks(dialect), messages(dialect))


# --------------------------------------------------------------------------- push config


@_dialect_cached
def authentication_infos(dialect: str = "1.0") -> st.SearchStrategy[m.AuthenticationInfo]:
    """:class:`AuthenticationInfo` values (1.0: one scheme; 0.3: ``other_schemes`` too)."""
    scheme = _NONEMPTY | st.sampled_from(["Bearer", "Basic", "Digest"])
    r = _rules(dialect)
    return st.builds(
        m.AuthenticationInfo,
        scheme=scheme,
        credentials=_opt_str(r),
        other_schemes=_tuples(scheme, max_size=2) if r.multi_scheme else st.just(()),
    )


def _push_configs(dialect: str, *, nested: bool) -> st.SearchStrategy[m.TaskPushNotificationConfig]:
    r = _rules(dialect)
    task_id: st.SearchStrategy[str | None] = _opt(_ids(r))
    config_id: st.SearchStrategy[str | None] = _opt(_ids(r))
    # 0.3 nests a bare PushNotificationConfig: inside a send configuration
    # there is no task id; standalone, JSON-RPC requires one beside it.
    if nested and r.nested_push_without_task:
        task_id = st.none()
    elif not nested and r.push_needs_task:
        task_id = _ids(r)
    return st.builds(
        m.TaskPushNotificationConfig,
        url=_NONEMPTY,
        id=config_id,
        task_id=task_id,
        token=_opt_str(r),
        authentication=_opt(authentication_infos(dialect)),
        tenant=_opt_str(r, r.tenant),
    )


@_dialect_cached
def task_push_notification_configs(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.TaskPushNotificationConfig]:
    """:class:`TaskPushNotificationConfig` values (0.3: ``task_id`` set, no tenant)."""
    return _push_configs(dialect, nested=False)
