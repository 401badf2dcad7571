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

Conventions shared by the wire dialects, following proto3 (the ProtoJSON
dialects treat ``""`` like an unset field): optional strings are ``None`` or
non-empty. Timestamps are timezone-aware datetimes (mostly UTC; other
offsets compare equal to the UTC value the codec gives back), some of them
:class:`~a2a_models.Timestamp` values with nanoseconds below the microsecond.

JSON data (``metadata``, ``DataPart.data``, extension ``params``...) comes from
:func:`json_values` / :func:`json_objects`: integers of any size (including
beyond 64 bits), finite floats, unicode text including non-BMP characters,
nested arrays and objects whose keys come in random order.

Requires ``hypothesis`` (a test dependency, not a runtime one).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, TypeVar

from hypothesis import strategies as st

from .. import codec
from .. import models as m
from .._state import TaskState

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

T = TypeVar("T")

#: The wire dialects the strategies know (the values of ``a2a_models.codec.Dialect``).
DIALECTS: tuple[str, ...] = ("1.0", "0.3", "0.3-http", "python")

_INT32_MAX = 2**31 - 1

# --------------------------------------------------------------------------- dialect rules


@dataclass(frozen=True)
class _Rules:
    """What a dialect can express, beyond what every valid model is."""

    name: str
    #: OAuthFlows: how many flows at least and at most (1.0: exactly one).
    min_flows: int
    max_flows: int
    #: ``DataPart.data`` may be any JSON value (else: an object).
    data_any: bool
    #: Part ``metadata``.
    part_metadata: bool
    #: ``filename``/``media_type`` on text and data parts.
    part_extras: bool
    #: ``FilePart.filename``.
    file_name: bool
    #: ``Task.context_id`` is REQUIRED (0.3 JSON-RPC).
    task_context_required: bool
    #: 0.3 cards: one top-level ``protocolVersion`` shared by every interface.
    v03_card: bool
    #: Plain proto3 scalars: ``False``/``0`` are the same as unset, so
    #: optional bools are None/True and optional counts None/positive.
    proto3_plain: bool
    #: ListTasks request/response exist.
    list_tasks: bool
    #: ids that travel inside resource names (``tasks/{id}/...``) must not contain "/".
    resource_names: bool
    #: Role.UNSPECIFIED and TaskState.UNSPECIFIED are expressible.
    unspecified_role: bool
    unspecified_state: bool
    #: The push config of a SendMessageConfiguration has no task_id (0.3 nests
    #: a bare PushNotificationConfig), and a standalone one needs a task_id.
    v03_push: bool
    #: Optional strings may be ``""`` (the python form keeps it; ProtoJSON and
    #: 0.3 JSON-RPC read it as unset).
    empty_strings: bool = False

    # Which attributes a dialect writes is stated once, in the codec's field
    # tables: these flags ask it (each through one representative attribute).
    def _writes(self, tp: type[Any], attr: str) -> bool:
        return codec.expresses(tp, attr, self.name)

    @property
    def tenant(self) -> bool:
        """``tenant`` fields (1.0 only)."""
        return self._writes(m.SendMessageRequest, "tenant")

    @property
    def read_metadata(self) -> bool:
        """``metadata`` on GetTask/SubscribeToTask/Get/Delete/List push-config requests."""
        return self._writes(m.GetTaskRequest, "metadata")

    @property
    def cancel_metadata(self) -> bool:
        """``metadata`` on CancelTaskRequest."""
        return self._writes(m.CancelTaskRequest, "metadata")

    @property
    def reference_task_ids(self) -> bool:
        """``Message.reference_task_ids``."""
        return self._writes(m.Message, "reference_task_ids")

    @property
    def icon_url(self) -> bool:
        """``AgentCard.icon_url`` (absent from the 0.3 proto)."""
        return self._writes(m.AgentCard, "icon_url")

    @property
    def state_transition_history(self) -> bool:
        """``AgentCapabilities.state_transition_history`` (0.3 JSON-RPC only)."""
        return self._writes(m.AgentCapabilities, "state_transition_history")

    @property
    def send_metadata(self) -> bool:
        """``metadata`` on SendMessageRequest."""
        return self._writes(m.SendMessageRequest, "metadata")

    @property
    def push_paging(self) -> bool:
        """Paging of push-config lists (0.3 JSON-RPC has none)."""
        return self._writes(m.ListTaskPushNotificationConfigsRequest, "page_size")

    @property
    def final(self) -> bool:
        """``TaskStatusUpdateEvent.final`` may be True (0.3 only; 1.0 closes the stream)."""
        return self._writes(m.TaskStatusUpdateEvent, "final")

    @property
    def device_code(self) -> bool:
        """The 1.0-only device-code flow and ``pkce_required``."""
        return self._writes(m.AuthorizationCodeOAuthFlow, "pkce_required")

    @property
    def multi_scheme(self) -> bool:
        """``AuthenticationInfo.other_schemes`` (0.3's list of schemes)."""
        return self._writes(m.AuthenticationInfo, "other_schemes")


_RULES: dict[str, _Rules] = {
    "1.0": _Rules(
        name="1.0",
        min_flows=1,
        max_flows=1,
        data_any=True,
        part_metadata=True,
        part_extras=True,
        file_name=True,
        task_context_required=False,
        v03_card=False,
        proto3_plain=False,
        list_tasks=True,
        resource_names=False,
        unspecified_role=True,
        unspecified_state=True,
        v03_push=False,
    ),
    "0.3": _Rules(
        name="0.3",
        min_flows=0,
        max_flows=4,
        data_any=False,
        part_metadata=True,
        part_extras=False,
        file_name=True,
        task_context_required=True,
        v03_card=True,
        proto3_plain=False,
        list_tasks=False,
        resource_names=False,
        unspecified_role=False,
        unspecified_state=True,
        v03_push=True,
    ),
    "0.3-http": _Rules(
        name="0.3-http",
        min_flows=0,
        max_flows=1,
        data_any=False,
        part_metadata=False,
        part_extras=False,
        file_name=False,
        task_context_required=False,
        v03_card=True,
        proto3_plain=True,
        list_tasks=False,
        resource_names=True,
        unspecified_role=True,
        unspecified_state=True,
        v03_push=True,
    ),
    "python": _Rules(
        name="python",
        min_flows=0,
        max_flows=5,
        data_any=True,
        part_metadata=True,
        part_extras=True,
        file_name=True,
        task_context_required=False,
        v03_card=False,
        proto3_plain=False,
        list_tasks=True,
        resource_names=False,
        unspecified_role=True,
        unspecified_state=True,
        v03_push=False,
        empty_strings=True,
    ),
}


def _rules(dialect: str) -> _Rules:
    try:
        return _RULES[str(getattr(dialect, "value", dialect))]
    except KeyError:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {DIALECTS}") from None


def _dialect_cached(fn: Callable[..., st.SearchStrategy[T]]) -> Callable[..., st.SearchStrategy[T]]:
    """Build each (strategy, dialect) once: strategies are immutable and reusable."""
    cached = functools.cache(fn)

    @functools.wraps(fn)
    def wrapper(dialect: str = "1.0", **kwargs: Any) -> st.SearchStrategy[T]:
        return cached(_rules(dialect).name, **kwargs)

    return wrapper


# --------------------------------------------------------------------------- scalars


def texts(
    *, min_size: int = 0, max_size: int = 12, surrogates: bool = False
) -> st.SearchStrategy[str]:
    """Unicode text, non-BMP characters included; ``surrogates=True`` adds lone surrogates."""
    if surrogates:
        return st.one_of(
            st.text(min_size=min_size, max_size=max_size),
            st.builds(
                lambda a, s, b: a + s + b,
                st.text(max_size=4),
                st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
                st.text(max_size=4),
            ).filter(lambda s: len(s) >= min_size),
        )
    return st.text(min_size=min_size, max_size=max_size)


def _ids(rules: _Rules) -> st.SearchStrategy[str]:
    """A REQUIRED identifier: non-empty; no "/" where it travels in a resource name."""
    if rules.resource_names:
        return st.text(
            st.characters(exclude_characters="/", exclude_categories=["Cs"]),
            min_size=1,
            max_size=12,
        )
    return texts(min_size=1)


_NONEMPTY = texts(min_size=1)


def _opt(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    return st.none() | strategy


def _opt_str(rules: _Rules, allowed: bool = True) -> st.SearchStrategy[str | None]:
    """An optional string: None or non-empty (proto3: "" is unset); the python form adds ""."""
    if not allowed:
        return st.none()
    if rules.empty_strings:
        return st.none() | st.just("") | _NONEMPTY
    return _opt(_NONEMPTY)


def _opt_bool(rules: _Rules, allowed: bool = True) -> st.SearchStrategy[bool | None]:
    """A presence-tracked bool: None, True, False (plain proto3 bools: no False)."""
    if not allowed:
        return st.none()
    if rules.proto3_plain:
        return st.sampled_from([None, True])
    return st.sampled_from([None, True, False])


def _opt_count(rules: _Rules, *, zero: bool = True) -> st.SearchStrategy[int | None]:
    """An optional non-negative int32 (``zero=False``: 0 would read as unset)."""
    low = 0 if (zero and not rules.proto3_plain) else 1
    return _opt(st.integers(low, _INT32_MAX))


def _tuples(
    strategy: st.SearchStrategy[T], *, min_size: int = 0, max_size: int = 3, **kw: Any
) -> st.SearchStrategy[tuple[T, ...]]:
    return st.lists(strategy, min_size=min_size, max_size=max_size, **kw).map(tuple)


def _str_tuples(*, min_size: int = 0, max_size: int = 3) -> st.SearchStrategy[tuple[str, ...]]:
    return _tuples(texts(), min_size=min_size, max_size=max_size)


def _with_offset(value: datetime, minutes: int, nanos: int) -> datetime:
    local = value.astimezone(timezone(timedelta(minutes=minutes)))
    return m.Timestamp.with_nanoseconds(local, nanos) if nanos else local


def timestamps() -> st.SearchStrategy[datetime]:
    """Timezone-aware datetimes (years 1-9999): UTC with microsecond precision,
    whole seconds and milliseconds, :class:`~a2a_models.Timestamp` values with
    nanoseconds below the microsecond (ProtoJSON carries up to 9 digits), and
    other UTC offsets (equal to their UTC value, which the codec writes)."""
    micros = st.datetimes(
        min_value=datetime(1, 1, 1),
        max_value=datetime(9999, 12, 31, 23, 59, 59, 999999),
        timezones=st.just(UTC),
    )
    return (
        micros
        | st.builds(m.Timestamp.with_nanoseconds, micros, st.integers(1, 999))
        | st.builds(
            _with_offset,
            # A day inside the range: the local time must exist too (a valid
            # model may hold 0001-01-01T00:00+02:00, whose UTC value does not).
            st.datetimes(
                min_value=datetime(1, 1, 2),
                max_value=datetime(9999, 12, 30, 23, 59, 59, 999999),
                timezones=st.just(UTC),
            ),
            st.integers(-(24 * 60 - 1), 24 * 60 - 1),
            st.sampled_from([0, 0, 1, 999]),
        )
        | st.builds(
            # Millisecond and whole-second values: the common wire precisions.
            lambda d, ms: d.replace(microsecond=ms),
            st.datetimes(
                min_value=datetime(1970, 1, 1),
                max_value=datetime(2100, 1, 1),
                timezones=st.just(UTC),
            ),
            st.sampled_from([0, 1000, 123000, 999000]),
        )
    )


# --------------------------------------------------------------------------- JSON

_EDGE_INTS = (
    0,
    -1,
    18,
    2**31 - 1,
    -(2**31),
    2**53 + 1,
    2**63 - 1,
    -(2**63),
    2**63,
    -(2**63) - 1,
    2**64 - 1,
    2**64,
    -(2**64),
    10**19,
    -(10**19) + 1,
    2**100,
    -(2**100),
    10**40,
)


def json_scalars(*, surrogates: bool = False) -> st.SearchStrategy[Any]:
    """JSON scalars: null, booleans, integers of any size, finite floats, text."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**31), 2**31),
        st.sampled_from(_EDGE_INTS),
        st.integers(-(2**130), 2**130),
        st.floats(allow_nan=False, allow_infinity=False),
        texts(surrogates=surrogates),
    )


def _json_keys(surrogates: bool) -> st.SearchStrategy[str]:
    return texts(max_size=8, surrogates=surrogates) | st.sampled_from(
        ["a", "b", "z", "id", "kind", "text", "data", "metadata", "0", "10", "2"]
    )


@functools.cache
def json_values(*, max_leaves: int = 10, surrogates: bool = False) -> st.SearchStrategy[Any]:
    """Any JSON value, nested up to ``max_leaves`` scalars.

    Objects are ``dict`` (keys in random, preserved order), arrays ``list``.
    """
    keys = _json_keys(surrogates)
    return st.recursive(
        json_scalars(surrogates=surrogates),
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4)
        ),
        max_leaves=max_leaves,
    )


@functools.cache
def json_objects(
    *, max_leaves: int = 10, surrogates: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object (``dict[str, Any]``) whose values are :func:`json_values`."""
    return st.dictionaries(
        _json_keys(surrogates),
        json_values(max_leaves=max_leaves, surrogates=surrogates),
        max_size=4,
    )


_METADATA = json_objects(max_leaves=6)


def _metadata(allowed: bool = True) -> st.SearchStrategy[dict[str, Any] | None]:
    return _opt(_METADATA) if allowed else st.none()


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
        context_id=_NONEMPTY if r.task_context_required else _opt_str(r),
        artifacts=_tuples(artifacts(dialect), max_size=2),
        history=_tuples(messages(dialect), max_size=2),
        metadata=_metadata(),
    )


# --------------------------------------------------------------------------- events, unions


@_dialect_cached
def task_status_update_events(dialect: str = "1.0") -> st.SearchStrategy[m.TaskStatusUpdateEvent]:
    """:class:`TaskStatusUpdateEvent` values (1.0: ``final`` is False)."""
    r = _rules(dialect)
    return st.builds(
        m.TaskStatusUpdateEvent,
        task_id=_ids(r),
        context_id=_ids(r),
        status=task_statuses(dialect),
        metadata=_metadata(),
        final=st.booleans() if r.final else st.just(False),
    )


@_dialect_cached
def task_artifact_update_events(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.TaskArtifactUpdateEvent]:
    """:class:`TaskArtifactUpdateEvent` values."""
    r = _rules(dialect)
    return st.builds(
        m.TaskArtifactUpdateEvent,
        task_id=_ids(r),
        context_id=_ids(r),
        artifact=artifacts(dialect),
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=_metadata(),
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
    if r.v03_push:
        # 0.3 nests a bare PushNotificationConfig: inside a send configuration
        # there is no task id; standalone, JSON-RPC requires one beside it.
        if nested:
            task_id = st.none()
        elif not r.resource_names:
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


# --------------------------------------------------------------------------- security


def _scopes() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(texts(max_size=8), texts(), max_size=3)


@_dialect_cached
def authorization_code_oauth_flows(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.AuthorizationCodeOAuthFlow]:
    """:class:`AuthorizationCodeOAuthFlow` values (0.3: no ``pkce_required``)."""
    r = _rules(dialect)
    return st.builds(
        m.AuthorizationCodeOAuthFlow,
        authorization_url=_NONEMPTY,
        token_url=_NONEMPTY,
        scopes=_scopes(),
        refresh_url=_opt_str(r),
        pkce_required=st.booleans() if r.device_code else st.just(False),
    )


@_dialect_cached
def client_credentials_oauth_flows(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.ClientCredentialsOAuthFlow]:
    """:class:`ClientCredentialsOAuthFlow` values."""
    r = _rules(dialect)
    return st.builds(
        m.ClientCredentialsOAuthFlow,
        token_url=_NONEMPTY,
        scopes=_scopes(),
        refresh_url=_opt_str(r),
    )


@_dialect_cached
def implicit_oauth_flows(dialect: str = "1.0") -> st.SearchStrategy[m.ImplicitOAuthFlow]:
    """:class:`ImplicitOAuthFlow` values (0.3: ``authorization_url`` is required)."""
    r = _rules(dialect)
    return st.builds(
        m.ImplicitOAuthFlow,
        authorization_url=_NONEMPTY if r.v03_card else _opt_str(r),
        scopes=_scopes(),
        refresh_url=_opt_str(r),
    )


@_dialect_cached
def password_oauth_flows(dialect: str = "1.0") -> st.SearchStrategy[m.PasswordOAuthFlow]:
    """:class:`PasswordOAuthFlow` values (0.3: ``token_url`` is required)."""
    r = _rules(dialect)
    return st.builds(
        m.PasswordOAuthFlow,
        token_url=_NONEMPTY if r.v03_card else _opt_str(r),
        scopes=_scopes(),
        refresh_url=_opt_str(r),
    )


@_dialect_cached
def device_code_oauth_flows(dialect: str = "1.0") -> st.SearchStrategy[m.DeviceCodeOAuthFlow]:
    """:class:`DeviceCodeOAuthFlow` values (new in 1.0; as a standalone object in any dialect)."""
    r = _rules(dialect)
    return st.builds(
        m.DeviceCodeOAuthFlow,
        device_authorization_url=_NONEMPTY,
        token_url=_NONEMPTY,
        scopes=_scopes(),
        refresh_url=_opt_str(r),
    )


_FLOW_FIELDS = ("authorization_code", "client_credentials", "implicit", "password", "device_code")


@_dialect_cached
def oauth_flows(dialect: str = "1.0") -> st.SearchStrategy[m.OAuthFlows]:
    """:class:`OAuthFlows`: exactly one flow (1.0), at most one (0.3-http), or any number (0.3, python)."""
    r = _rules(dialect)
    makers: dict[str, st.SearchStrategy[Any]] = {
        "authorization_code": authorization_code_oauth_flows(dialect),
        "client_credentials": client_credentials_oauth_flows(dialect),
        "implicit": implicit_oauth_flows(dialect),
        "password": password_oauth_flows(dialect),
        "device_code": device_code_oauth_flows(dialect),
    }
    names = [n for n in _FLOW_FIELDS if r.device_code or n != "device_code"]
    chosen = st.lists(
        st.sampled_from(names),
        min_size=r.min_flows,
        max_size=min(r.max_flows, len(names)),
        unique=True,
    )

    @st.composite
    def build(draw: st.DrawFn) -> m.OAuthFlows:
        return m.OAuthFlows(**{n: draw(makers[n]) for n in draw(chosen)})

    return build()


@_dialect_cached
def api_key_security_schemes(dialect: str = "1.0") -> st.SearchStrategy[m.APIKeySecurityScheme]:
    """:class:`APIKeySecurityScheme` values."""
    r = _rules(dialect)
    return st.builds(
        m.APIKeySecurityScheme,
        location=st.sampled_from(["header", "query", "cookie"]),
        name=_NONEMPTY,
        description=_opt_str(r),
    )


@_dialect_cached
def http_auth_security_schemes(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.HTTPAuthSecurityScheme]:
    """:class:`HTTPAuthSecurityScheme` values."""
    r = _rules(dialect)
    return st.builds(
        m.HTTPAuthSecurityScheme,
        scheme=_NONEMPTY | st.sampled_from(["Bearer", "Basic"]),
        bearer_format=_opt_str(r),
        description=_opt_str(r),
    )


@_dialect_cached
def oauth2_security_schemes(dialect: str = "1.0") -> st.SearchStrategy[m.OAuth2SecurityScheme]:
    """:class:`OAuth2SecurityScheme` values."""
    r = _rules(dialect)
    return st.builds(
        m.OAuth2SecurityScheme,
        flows=oauth_flows(dialect),
        oauth2_metadata_url=_opt_str(r),
        description=_opt_str(r),
    )


@_dialect_cached
def open_id_connect_security_schemes(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.OpenIdConnectSecurityScheme]:
    """:class:`OpenIdConnectSecurityScheme` values."""
    r = _rules(dialect)
    return st.builds(
        m.OpenIdConnectSecurityScheme, open_id_connect_url=_NONEMPTY, description=_opt_str(r)
    )


@_dialect_cached
def mutual_tls_security_schemes(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.MutualTlsSecurityScheme]:
    """:class:`MutualTlsSecurityScheme` values."""
    r = _rules(dialect)
    return st.builds(m.MutualTlsSecurityScheme, description=_opt_str(r))


@_dialect_cached
def security_schemes(dialect: str = "1.0") -> st.SearchStrategy[m.SecurityScheme]:
    """Any of the five :class:`SecurityScheme` kinds."""
    return st.one_of(
        api_key_security_schemes(dialect),
        http_auth_security_schemes(dialect),
        oauth2_security_schemes(dialect),
        open_id_connect_security_schemes(dialect),
        mutual_tls_security_schemes(dialect),
    )


@_dialect_cached
def security_requirements(dialect: str = "1.0") -> st.SearchStrategy[m.SecurityRequirement]:
    """:class:`SecurityRequirement` values: scheme name -> tuple of scopes."""
    return st.builds(
        m.SecurityRequirement,
        schemes=st.dictionaries(texts(max_size=8), _str_tuples(), max_size=3),
    )


# --------------------------------------------------------------------------- agent card

_V03_VERSIONS = st.sampled_from(["0.3.0", "0.3", "0.2.6"]) | texts(max_size=6).map(
    lambda s: "0." + s
)


@_dialect_cached
def agent_interfaces(dialect: str = "1.0") -> st.SearchStrategy[m.AgentInterface]:
    """:class:`AgentInterface` values (0.3: version ``"0.…"``, no tenant)."""
    r = _rules(dialect)
    return st.builds(
        m.AgentInterface,
        url=_NONEMPTY,
        protocol_binding=st.sampled_from(["JSONRPC", "GRPC", "HTTP+JSON"]) | _NONEMPTY,
        protocol_version=_V03_VERSIONS
        if r.v03_card
        else (st.sampled_from(["1.0", "0.3"]) | _NONEMPTY),
        tenant=_opt_str(r, r.tenant),
    )


@_dialect_cached
def agent_providers(dialect: str = "1.0") -> st.SearchStrategy[m.AgentProvider]:
    """:class:`AgentProvider` values."""
    return st.builds(m.AgentProvider, organization=_NONEMPTY, url=_NONEMPTY)


@_dialect_cached
def agent_extensions(dialect: str = "1.0") -> st.SearchStrategy[m.AgentExtension]:
    """:class:`AgentExtension` values (0.3: ``uri`` is required)."""
    r = _rules(dialect)
    return st.builds(
        m.AgentExtension,
        uri=_NONEMPTY if r.v03_card else _opt_str(r),
        description=_opt_str(r),
        required=st.booleans(),
        params=_metadata(),
    )


def _capabilities(dialect: str, *, in_card: bool) -> st.SearchStrategy[m.AgentCapabilities]:
    r = _rules(dialect)
    # 0.3 keeps the extended-card flag on the card itself
    # (``supportsAuthenticatedExtendedCard``), not in the capabilities.
    extended = _opt_bool(r, allowed=in_card or not r.v03_card)
    return st.builds(
        m.AgentCapabilities,
        streaming=_opt_bool(r),
        push_notifications=_opt_bool(r),
        extensions=_tuples(agent_extensions(dialect), max_size=2),
        extended_agent_card=extended,
        state_transition_history=_opt_bool(r, allowed=r.state_transition_history),
    )


@_dialect_cached
def agent_capabilities(dialect: str = "1.0") -> st.SearchStrategy[m.AgentCapabilities]:
    """:class:`AgentCapabilities` values (1.0: no ``state_transition_history``)."""
    return _capabilities(dialect, in_card=False)


@_dialect_cached
def agent_skills(dialect: str = "1.0") -> st.SearchStrategy[m.AgentSkill]:
    """:class:`AgentSkill` values (at least one tag)."""
    return st.builds(
        m.AgentSkill,
        id=_NONEMPTY,
        name=_NONEMPTY,
        description=_NONEMPTY,
        tags=_str_tuples(min_size=1),
        examples=_str_tuples(),
        input_modes=_str_tuples(),
        output_modes=_str_tuples(),
        security_requirements=_tuples(security_requirements(dialect), max_size=2),
    )


@_dialect_cached
def agent_card_signatures(dialect: str = "1.0") -> st.SearchStrategy[m.AgentCardSignature]:
    """:class:`AgentCardSignature` values (JWS parts; not real signatures)."""
    return st.builds(
        m.AgentCardSignature, protected=_NONEMPTY, signature=_NONEMPTY, header=_metadata()
    )


@_dialect_cached
def agent_cards(dialect: str = "1.0") -> st.SearchStrategy[m.AgentCard]:
    """:class:`AgentCard` values (0.3: the interfaces share a ``"0.…"`` version)."""
    r = _rules(dialect)
    if r.v03_card:

        @st.composite
        def interfaces(draw: st.DrawFn) -> tuple[m.AgentInterface, ...]:
            version = draw(_V03_VERSIONS)
            items = draw(
                st.lists(
                    agent_interfaces(dialect),
                    min_size=1,
                    max_size=3,
                    unique_by=lambda i: (i.url, i.protocol_binding),
                )
            )
            return tuple(
                m.AgentInterface(
                    url=i.url, protocol_binding=i.protocol_binding, protocol_version=version
                )
                for i in items
            )

        supported: st.SearchStrategy[tuple[m.AgentInterface, ...]] = interfaces()
    else:
        supported = _tuples(agent_interfaces(dialect), min_size=1)
    return st.builds(
        m.AgentCard,
        name=_NONEMPTY,
        description=_NONEMPTY,
        version=_NONEMPTY,
        supported_interfaces=supported,
        capabilities=_capabilities(dialect, in_card=True),
        default_input_modes=_str_tuples(min_size=1),
        default_output_modes=_str_tuples(min_size=1),
        skills=_tuples(agent_skills(dialect), min_size=1, max_size=2),
        provider=_opt(agent_providers(dialect)),
        documentation_url=_opt_str(r),
        icon_url=_opt_str(r, r.icon_url),
        security_schemes=st.dictionaries(texts(max_size=8), security_schemes(dialect), max_size=2),
        security_requirements=_tuples(security_requirements(dialect), max_size=2),
        signatures=_tuples(agent_card_signatures(dialect), max_size=2),
    )


# --------------------------------------------------------------------------- requests


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
    return st.builds(
        m.GetTaskRequest,
        id=_ids(r),
        history_length=_opt_count(r),
        tenant=_opt_str(r, r.tenant),
        metadata=_metadata(r.read_metadata),
    )


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
        page_size=st.integers(0, _INT32_MAX),
        total_size=st.integers(0, _INT32_MAX),
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
    return st.builds(
        m.SubscribeToTaskRequest,
        id=_ids(r),
        tenant=_opt_str(r, r.tenant),
        metadata=_metadata(r.read_metadata),
    )


@_dialect_cached
def get_task_push_notification_config_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.GetTaskPushNotificationConfigRequest]:
    """:class:`GetTaskPushNotificationConfigRequest` values (1.0: no metadata, an id; 0.3: id optional)."""
    r = _rules(dialect)
    config_id: st.SearchStrategy[str | None]
    if r.name == "1.0":
        config_id = _ids(r)  # REQUIRED in 1.0
    elif r.resource_names:
        # 0.3 REST: "tasks/{id}/pushNotificationConfigs/" (no config id) is allowed.
        config_id = _opt(_ids(r))
    else:
        # 0.3 JSON-RPC may omit it (the task's first config); python: any value.
        config_id = _opt_str(r)
    return st.builds(
        m.GetTaskPushNotificationConfigRequest,
        task_id=_ids(r),
        id=config_id,
        tenant=_opt_str(r, r.tenant),
        metadata=_metadata(r.read_metadata),
    )


@_dialect_cached
def delete_task_push_notification_config_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.DeleteTaskPushNotificationConfigRequest]:
    """:class:`DeleteTaskPushNotificationConfigRequest` values (1.0: no metadata)."""
    r = _rules(dialect)
    return st.builds(
        m.DeleteTaskPushNotificationConfigRequest,
        task_id=_ids(r),
        id=_ids(r),
        tenant=_opt_str(r, r.tenant),
        metadata=_metadata(r.read_metadata),
    )


@_dialect_cached
def list_task_push_notification_configs_requests(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.ListTaskPushNotificationConfigsRequest]:
    """:class:`ListTaskPushNotificationConfigsRequest` values (1.0: no metadata)."""
    r = _rules(dialect)
    return st.builds(
        m.ListTaskPushNotificationConfigsRequest,
        task_id=_ids(r),
        # A plain int32 in every proto: 0 means unset.
        page_size=_opt_count(r, zero=r.name == "python") if r.push_paging else st.none(),
        page_token=_opt_str(r, r.push_paging),
        tenant=_opt_str(r, r.tenant),
        metadata=_metadata(r.read_metadata),
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

#: Types a dialect has no form for.
_ABSENT: dict[str, frozenset[Any]] = {
    "1.0": frozenset(),
    "python": frozenset(),
    # 0.3 has no ListTasks, no device-code flow, and interfaces only inside a
    # card (the card's protocolVersion applies to them).
    "0.3": frozenset(
        {m.ListTasksRequest, m.ListTasksResponse, m.DeviceCodeOAuthFlow, m.AgentInterface}
    ),
    "0.3-http": frozenset(
        {m.ListTasksRequest, m.ListTasksResponse, m.DeviceCodeOAuthFlow, m.AgentInterface}
    ),
}


def expressible(tp: Any, dialect: str = "1.0") -> bool:
    """Whether ``dialect`` has a wire form for ``tp`` at all (ListTasks is 1.0-only)."""
    return tp not in _ABSENT[_rules(dialect).name]


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
