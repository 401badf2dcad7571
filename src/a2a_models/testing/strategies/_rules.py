"""What each dialect lets the strategies generate, read from :mod:`a2a_models.codec.facts`.

Nothing here states a dialect fact: each flag is the codec's field table
(:func:`~a2a_models.codec.facts.field`, :func:`~a2a_models.codec.facts.expresses`)
or a fact measured on the codec (:func:`~a2a_models.codec.facts.dialect_facts`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st

from ... import models as m
from ...codec import facts

T = TypeVar("T")

#: The wire dialects the strategies know (the values of ``a2a_models.codec.Dialect``).
DIALECTS: tuple[str, ...] = facts.DIALECTS


@dataclass(frozen=True)
class _Rules:
    """What a dialect can express, beyond what every valid model is."""

    name: str
    #: The oneof and enum facts (flows, parts, cards, roles, resource names...).
    measured: facts.DialectFacts

    def _writes(self, tp: type[Any], attr: str) -> bool:
        return facts.expresses(tp, attr, self.name)

    def _field(self, tp: type[Any], attr: str) -> facts.Field | None:
        return facts.field(tp, attr, self.name)

    # The oneof facts, by the names the strategies use.
    @property
    def min_flows(self) -> int:
        """OAuthFlows: how many flows at least (1.0: exactly one)."""
        return self.measured.min_flows

    @property
    def max_flows(self) -> int:
        """OAuthFlows: how many flows at most."""
        return self.measured.max_flows

    @property
    def device_code(self) -> bool:
        """The 1.0-only device-code flow (and ``pkce_required``, from the table)."""
        return self.measured.device_code and self._writes(
            m.AuthorizationCodeOAuthFlow, "pkce_required"
        )

    @property
    def data_any(self) -> bool:
        """``DataPart.data`` may be any JSON value (else: an object)."""
        return self.measured.data_any

    @property
    def part_metadata(self) -> bool:
        """Part ``metadata``."""
        return self.measured.part_metadata

    @property
    def part_extras(self) -> bool:
        """``filename``/``media_type`` on text and data parts."""
        return self.measured.part_extras

    @property
    def file_name(self) -> bool:
        """``FilePart.filename``."""
        return self.measured.file_name

    @property
    def shared_protocol_version(self) -> bool:
        """A card's interfaces share one ``"0.…"`` protocol version (0.3 cards)."""
        return self.measured.shared_protocol_version

    @property
    def required_urls(self) -> bool:
        """``AgentExtension.uri`` and the implicit/password flow URLs must be set."""
        return self.measured.v03_required_urls

    @property
    def proto3_plain(self) -> bool:
        """Plain proto3 scalars: optional bools None/True, optional counts None/positive."""
        return self.measured.proto3_plain

    @property
    def resource_names(self) -> bool:
        """Ids travelling in resource names (``tasks/{id}/...``) contain no "/"."""
        return self.measured.resource_names

    @property
    def unspecified_role(self) -> bool:
        """``Role.UNSPECIFIED`` is written."""
        return self.measured.unspecified_role

    @property
    def unspecified_state(self) -> bool:
        """``TaskState.UNSPECIFIED`` is written."""
        return self.measured.unspecified_state

    @property
    def nested_push_without_task(self) -> bool:
        """The push config of a SendMessageConfiguration has no ``task_id``."""
        return self.measured.nested_push_without_task

    @property
    def push_needs_task(self) -> bool:
        """A standalone push config needs a ``task_id``."""
        return self.measured.push_needs_task

    @property
    def empty_strings(self) -> bool:
        """Optional strings may be ``""`` (read back as ``""``, not as unset)."""
        return self.measured.empty_strings

    # Which attributes a dialect writes, and which it requires, is stated in
    # the codec's field tables: these flags ask them.
    def required(self, tp: type[Any], attr: str) -> bool:
        """The table requires ``tp.attr`` on input (``Task.context_id`` in 0.3)."""
        f = self._field(tp, attr)
        return f is not None and f.required

    def always_written(self, tp: type[Any], attr: str) -> bool:
        """The table writes ``tp.attr`` even at its default (a REQUIRED wire field)."""
        f = self._field(tp, attr)
        return f is not None and f.always

    def zero_is_unset(self, tp: type[Any], attr: str) -> bool:
        """``0``/``""``/``false`` of ``tp.attr`` read back as unset (ProtoJSON)."""
        f = self._field(tp, attr)
        return f is not None and f.empty_is_unset

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
    def capabilities_extended_card(self) -> bool:
        """``AgentCapabilities.extended_agent_card`` (0.3 keeps it on the card)."""
        return self._writes(m.AgentCapabilities, "extended_agent_card")

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
    def multi_scheme(self) -> bool:
        """``AuthenticationInfo.other_schemes`` (0.3's list of schemes)."""
        return self._writes(m.AuthenticationInfo, "other_schemes")


@functools.cache
def _rules_of(name: str) -> _Rules:
    return _Rules(name=name, measured=facts.dialect_facts(name))


def _rules(dialect: str) -> _Rules:
    name = str(getattr(dialect, "value", dialect))
    if name not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {DIALECTS}")
    return _rules_of(name)


def _dialect_cached(fn: Callable[..., st.SearchStrategy[T]]) -> Callable[..., st.SearchStrategy[T]]:
    """Build each (strategy, dialect) once: strategies are immutable and reusable."""
    cached = functools.cache(fn)

    @functools.wraps(fn)
    def wrapper(dialect: str = "1.0", **kwargs: Any) -> st.SearchStrategy[T]:
        return cached(_rules(dialect).name, **kwargs)

    return wrapper
