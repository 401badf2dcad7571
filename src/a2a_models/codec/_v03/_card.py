"""The 0.3 agent card: ``url``/``preferredTransport``/``additionalInterfaces``/``protocolVersion``."""

from __future__ import annotations

from typing import Any

import attrs

from ... import models as m
from .._gen import (
    Fail,
    Namespace,
    lose,
    type_name,
    unalias,
)
from .._v10 import proto_names, slot_setters

__all__ = ["install_card"]


def install_card(ns: Namespace, *, http: bool) -> None:
    s_base, u_base = ns["_s_AgentCardBase"], ns["_u_AgentCardBase"]
    set_card = slot_setters(m.AgentCard)
    set_caps = slot_setters(m.AgentCapabilities)
    new = object.__new__
    k_ext = "supportsAuthenticatedExtendedCard"

    def interface(d: Any, i: int, version: str) -> m.AgentInterface:
        if d.__class__ is not dict:
            raise Fail(
                f"expected an object (AgentInterface), got {type_name(d)}",
                i,
                "additionalInterfaces",
            )
        url, transport = d.get("url"), d.get("transport")
        if url.__class__ is not str or not url:
            raise Fail("expected a non-empty string", "url", i, "additionalInterfaces")
        if transport.__class__ is not str or not transport:
            raise Fail("expected a non-empty string", "transport", i, "additionalInterfaces")
        return m.AgentInterface(url=url, protocol_binding=transport, protocol_version=version)

    # The members read here by hand; ProtoJSON parsers accept their proto names too.
    card_aliases = (
        proto_names(("preferredTransport", "protocolVersion", "additionalInterfaces", k_ext))
        if http
        else {}
    )
    card_alias_keys = frozenset(card_aliases)

    def s_card(d: Any) -> m.AgentCard:
        if card_alias_keys and d.__class__ is dict and not card_alias_keys.isdisjoint(d):
            d = unalias(d, card_aliases)
        card = s_base(d)
        url, transport, version = (
            d.get("url"),
            d.get("preferredTransport"),
            d.get("protocolVersion"),
        )
        if url.__class__ is not str or not url:
            raise Fail(
                "required field missing" if url is None else "expected a non-empty string", "url"
            )
        if transport is None or transport == "":
            transport = "JSONRPC"  # the 0.3 schema's default
        elif transport.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(transport)}", "preferredTransport")
        if version is None or version == "":
            if not http:
                raise Fail("required field missing", "protocolVersion")
            version = "0.3.0"
        elif version.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(version)}", "protocolVersion")
        extra = d.get("additionalInterfaces") or []
        if extra.__class__ is not list:
            raise Fail(f"expected an array, got {type_name(extra)}", "additionalInterfaces")
        main = m.AgentInterface(url=url, protocol_binding=transport, protocol_version=version)
        others = [interface(x, i, version) for i, x in enumerate(extra)]
        set_card["supported_interfaces"](card, (main, *(x for x in others if x != main)))
        ext = d.get(k_ext)
        if ext is not None and not (http and ext is False):  # ProtoJSON: false is unset
            if ext is not True and ext is not False:
                raise Fail(f"expected a boolean, got {type_name(ext)}", k_ext)
            caps: Any = new(m.AgentCapabilities)
            for a in attrs.fields(m.AgentCapabilities):
                set_caps[a.name](caps, getattr(card.capabilities, a.name))
            set_caps["extended_agent_card"](caps, ext)
            set_card["capabilities"](card, caps)
        return card  # type: ignore[no-any-return]

    def u_card(c: m.AgentCard) -> dict[str, Any]:
        # The extended-card flag travels on the card in 0.3, not in capabilities.
        caps = c.capabilities
        if caps.extended_agent_card is not None:
            c = attrs.evolve(c, capabilities=attrs.evolve(caps, extended_agent_card=None))
        r: dict[str, Any] = u_base(c)
        ifaces = [i for i in c.supported_interfaces if i.protocol_version.startswith("0.")]
        if not ifaces:
            lose("the card has no 0.3 interface (protocol_version 0.x)", "supportedInterfaces")
            ifaces = list(c.supported_interfaces)
        elif len(ifaces) != len(c.supported_interfaces):
            lose("a 0.3 card cannot list 1.0 interfaces", "supportedInterfaces")
        main = ifaces[0]
        for i, iface in enumerate(ifaces):
            if iface.protocol_version != main.protocol_version:
                lose("0.3 has one protocolVersion per card", "supportedInterfaces", i)
            if iface.tenant:
                lose("A2A 0.3 has no tenants", "supportedInterfaces", i)
        r["url"] = main.url
        r["preferredTransport"] = main.protocol_binding
        r["protocolVersion"] = main.protocol_version
        if len(ifaces) > 1:
            # 0.3 lists the main interface there too (0.3 §5.6); one alone needs no list.
            r["additionalInterfaces"] = [
                {"url": i.url, "transport": i.protocol_binding} for i in ifaces
            ]
        if caps.extended_agent_card is not None:
            if http and not caps.extended_agent_card:
                pass  # ProtoJSON omits false
            else:
                r[k_ext] = caps.extended_agent_card
        return r

    ns["_s_AgentCard"], ns["_u_AgentCard"] = s_card, u_card
