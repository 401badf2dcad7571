"""Canonical ProtoJSON inside maps: empty repeated fields are omitted like everywhere else.

A ``SecurityRequirement`` is ``map<string, StringList>``; a scheme that needs no
scopes is ``{"mtls": {}}`` on the wire (ProtoJSON never writes an empty repeated
field), and must re-encode as exactly that, in every ProtoJSON dialect and
wherever a requirement sits (card, skill, scheme map).
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_models import codec
from a2a_models import models as m

# Every test here runs on the pure codec and on the compiled accelerator.
pytestmark = pytest.mark.usefixtures("codec_path")

PROTOJSON = ("1.0", "0.3-http")


@pytest.mark.parametrize("dialect", PROTOJSON)
@pytest.mark.parametrize("empty", [{}, {"list": []}])
def test_empty_scope_list_reencodes_without_the_list(dialect: str, empty: dict[str, Any]) -> None:
    wire = {"schemes": {"mtls": empty, "oauth": {"list": ["read", "write"]}}}
    req = codec.from_wire(m.SecurityRequirement, wire, dialect)
    assert req.schemes == {"mtls": (), "oauth": ("read", "write")}
    assert codec.to_wire(req, dialect) == {
        "schemes": {"mtls": {}, "oauth": {"list": ["read", "write"]}}
    }
    assert (
        codec.encode(req, dialect) == b'{"schemes":{"mtls":{},"oauth":{"list":["read","write"]}}}'
    )


def _card(version: str) -> m.AgentCard:
    bare = m.SecurityRequirement(schemes={"mtls": ()})
    skill = m.AgentSkill(
        id="s", name="s", description="d", tags=["t"], security_requirements=[bare]
    )
    return m.AgentCard(
        name="a",
        description="d",
        version="1",
        supported_interfaces=[
            m.AgentInterface(
                url="https://a", protocol_binding="HTTP+JSON", protocol_version=version
            )
        ],
        skills=[skill],
        security_schemes={"mtls": m.MutualTlsSecurityScheme()},
        security_requirements=[bare, m.SecurityRequirement(schemes={"k": (), "o": ("r",)})],
    )


@pytest.mark.parametrize("dialect", PROTOJSON)
def test_no_empty_list_anywhere_in_a_card(dialect: str) -> None:
    card = _card("1.0" if dialect == "1.0" else "0.3.0")
    encoded = codec.encode(card, dialect)
    assert b'"list":[]' not in encoded
    assert b'{"mtls":{}}' in encoded
    assert codec.decode(m.AgentCard, encoded, dialect) == card


def test_python_form_keeps_the_explicit_list() -> None:
    """The Python-dict form is not ProtoJSON: it keeps every value as the model holds it."""
    req = m.SecurityRequirement(schemes={"mtls": ()})
    assert codec.to_dict(req) == {"schemes": {"mtls": {"list": []}}}
    assert codec.from_dict(m.SecurityRequirement, codec.to_dict(req)) == req


def test_json_rpc_03_writes_plain_arrays() -> None:
    """0.3 JSON-RPC's requirement is ``{name: [scopes]}``: an empty list is the value."""
    req = m.SecurityRequirement(schemes={"mtls": ()})
    assert codec.to_wire(req, "0.3") == {"mtls": []}
