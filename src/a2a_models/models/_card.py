"""The agent card and its sub-objects (spec §4.4)."""

from __future__ import annotations

from typing import Any

import attrs

from ._base import JSONObject, to_tuple
from ._security import SecurityRequirement, SecurityScheme
from .rules import (
    boolean,
    fail,
    instance_of,
    non_empty_str_tuple,
    optional_bool,
    optional_instance_of,
    optional_json_object,
    optional_str,
    required_str,
    str_tuple,
    tuple_of,
)

__all__ = [
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "ProtocolBinding",
]


class ProtocolBinding:
    """The standard ``protocol_binding`` values (custom bindings use a URI)."""

    JSONRPC = "JSONRPC"
    GRPC = "GRPC"
    HTTP_JSON = "HTTP+JSON"


@attrs.frozen(slots=True, kw_only=True)
class AgentInterface:
    """One endpoint of the agent: URL, binding and protocol version.

    0.3 has no per-interface version: decoding a 0.3 card gives every
    interface the card's ``protocolVersion``.
    """

    url: str = attrs.field(validator=required_str)
    protocol_binding: str = attrs.field(validator=required_str)
    protocol_version: str = attrs.field(default="1.0", validator=required_str)
    tenant: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class AgentProvider:
    """The organisation behind the agent."""

    organization: str = attrs.field(validator=required_str)
    url: str = attrs.field(validator=required_str)


@attrs.frozen(slots=True, kw_only=True)
class AgentExtension:
    """A protocol extension the agent supports."""

    uri: str | None = attrs.field(default=None, validator=optional_str)
    description: str | None = attrs.field(default=None, validator=optional_str)
    required: bool = attrs.field(default=False, validator=boolean)
    params: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, hash=False
    )


@attrs.frozen(slots=True, kw_only=True)
class AgentCapabilities:
    """Optional features the agent supports.

    ``state_transition_history`` exists only in 0.3 (removed in 1.0).
    """

    streaming: bool | None = attrs.field(default=None, validator=optional_bool)
    push_notifications: bool | None = attrs.field(default=None, validator=optional_bool)
    extensions: tuple[AgentExtension, ...] = attrs.field(
        default=(), converter=to_tuple, validator=tuple_of(AgentExtension, "AgentExtension")
    )
    extended_agent_card: bool | None = attrs.field(default=None, validator=optional_bool)
    state_transition_history: bool | None = attrs.field(default=None, validator=optional_bool)


@attrs.frozen(slots=True, kw_only=True)
class AgentSkill:
    """A capability the agent offers."""

    id: str = attrs.field(validator=required_str)
    name: str = attrs.field(validator=required_str)
    description: str = attrs.field(validator=required_str)
    tags: tuple[str, ...] = attrs.field(converter=to_tuple, validator=non_empty_str_tuple)
    examples: tuple[str, ...] = attrs.field(default=(), converter=to_tuple, validator=str_tuple)
    input_modes: tuple[str, ...] = attrs.field(default=(), converter=to_tuple, validator=str_tuple)
    output_modes: tuple[str, ...] = attrs.field(default=(), converter=to_tuple, validator=str_tuple)
    security_requirements: tuple[SecurityRequirement, ...] = attrs.field(
        default=(),
        converter=to_tuple,
        validator=tuple_of(SecurityRequirement, "SecurityRequirement"),
    )


@attrs.frozen(slots=True, kw_only=True)
class AgentCardSignature:
    """A JWS signature of the card (RFC 7515, over the JCS-canonical card)."""

    protected: str = attrs.field(validator=required_str)
    signature: str = attrs.field(validator=required_str)
    header: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, hash=False
    )


def _check_schemes(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not dict:
        fail(inst, attribute, "expected a dict of scheme name to SecurityScheme")
    for name, scheme in value.items():
        if type(name) is not str:
            fail(inst, attribute, f"scheme names must be strings, got {name!r}")
        if not isinstance(scheme, SecurityScheme):
            fail(inst, attribute, f"{name!r}: expected a SecurityScheme, got {scheme!r}")


@attrs.frozen(slots=True, kw_only=True)
class AgentCard:
    """Self-describing manifest of an agent (spec §4.4.1).

    The 0.3 card's ``url``/``preferredTransport``/``additionalInterfaces`` map
    to ``supported_interfaces`` (first = preferred) and its
    ``supportsAuthenticatedExtendedCard`` to ``capabilities.extended_agent_card``.
    """

    name: str = attrs.field(validator=required_str)
    description: str = attrs.field(validator=required_str)
    version: str = attrs.field(validator=required_str)
    supported_interfaces: tuple[AgentInterface, ...] = attrs.field(
        converter=to_tuple,
        validator=tuple_of(AgentInterface, "AgentInterface", non_empty=True),
    )
    capabilities: AgentCapabilities = attrs.field(
        factory=AgentCapabilities, validator=instance_of(AgentCapabilities, "AgentCapabilities")
    )
    default_input_modes: tuple[str, ...] = attrs.field(
        default=("text/plain",), converter=to_tuple, validator=non_empty_str_tuple
    )
    default_output_modes: tuple[str, ...] = attrs.field(
        default=("text/plain",), converter=to_tuple, validator=non_empty_str_tuple
    )
    skills: tuple[AgentSkill, ...] = attrs.field(
        converter=to_tuple, validator=tuple_of(AgentSkill, "AgentSkill", non_empty=True)
    )
    provider: AgentProvider | None = attrs.field(
        default=None, validator=optional_instance_of(AgentProvider, "AgentProvider")
    )
    documentation_url: str | None = attrs.field(default=None, validator=optional_str)
    icon_url: str | None = attrs.field(default=None, validator=optional_str)
    security_schemes: dict[str, SecurityScheme] = attrs.field(
        factory=dict, validator=_check_schemes, hash=False
    )
    security_requirements: tuple[SecurityRequirement, ...] = attrs.field(
        default=(),
        converter=to_tuple,
        validator=tuple_of(SecurityRequirement, "SecurityRequirement"),
    )
    signatures: tuple[AgentCardSignature, ...] = attrs.field(
        default=(), converter=to_tuple, validator=tuple_of(AgentCardSignature, "signature")
    )

    @property
    def preferred_interface(self) -> AgentInterface:
        """The first (preferred) interface."""
        return self.supported_interfaces[0]

    def skill(self, skill_id: str) -> AgentSkill | None:
        """The skill with ``skill_id``, if declared."""
        for s in self.skills:
            if s.id == skill_id:
                return s
        return None
