"""0.3 security schemes: ``type``-tagged (JSON-RPC) or wrapped (HTTP+JSON), and OAuth flows."""

from __future__ import annotations

from typing import Any

from ... import models as m
from ...errors import quote_input
from .._gen import (
    Fail,
    Loss,
    Namespace,
    lose,
    type_name,
    unalias,
)
from .._v10 import install_wrapper_union, proto_names, slot_setters

__all__ = ["install_security"]

_SCHEME_TAGS = {
    "apiKey": m.APIKeySecurityScheme,
    "http": m.HTTPAuthSecurityScheme,
    "oauth2": m.OAuth2SecurityScheme,
    "openIdConnect": m.OpenIdConnectSecurityScheme,
    "mutualTLS": m.MutualTlsSecurityScheme,
}
_SCHEME_WRAPPERS = {
    "apiKeySecurityScheme": m.APIKeySecurityScheme,
    "httpAuthSecurityScheme": m.HTTPAuthSecurityScheme,
    "oauth2SecurityScheme": m.OAuth2SecurityScheme,
    "openIdConnectSecurityScheme": m.OpenIdConnectSecurityScheme,
    "mtlsSecurityScheme": m.MutualTlsSecurityScheme,
}
_FLOWS = {
    "authorization_code": ("authorizationCode", "AuthorizationCodeOAuthFlow"),
    "client_credentials": ("clientCredentials", "ClientCredentialsOAuthFlow"),
    "implicit": ("implicit", "ImplicitOAuthFlow"),
    "password": ("password", "PasswordOAuthFlow"),
}


def install_security(ns: Namespace, *, http: bool, strict: bool) -> None:
    if http:
        install_wrapper_union(
            ns,
            "SecurityScheme",
            {c: k for k, c in _SCHEME_WRAPPERS.items()},
            strict=strict,
            protojson=True,
        )
    else:
        tags = ", ".join(_SCHEME_TAGS)
        class_tag = {cls: tag for tag, cls in _SCHEME_TAGS.items()}

        def s_scheme(d: Any) -> m.SecurityScheme:
            if d.__class__ is not dict:
                raise Fail(f"expected an object (SecurityScheme), got {type_name(d)}")
            tag = d.get("type")
            cls = _SCHEME_TAGS.get(tag) if tag.__class__ is str else None
            if cls is None:
                raise Fail(f"expected type to be one of {tags}, got {quote_input(tag)}", "type")
            return ns[f"_s_{cls.__name__}"](d)  # type: ignore[no-any-return]

        def u_scheme(s: m.SecurityScheme) -> dict[str, Any]:
            if type(s) not in class_tag:
                raise Loss(f"unknown SecurityScheme subclass {type(s).__name__}")
            return ns[f"_u_{type(s).__name__}"](s)  # type: ignore[no-any-return]

        ns["_s_SecurityScheme"], ns["_u_SecurityScheme"] = s_scheme, u_scheme

    new = object.__new__
    set_flows = slot_setters(m.OAuthFlows)
    flow_keys = ", ".join(k for k, _ in _FLOWS.values())
    flow_aliases = proto_names(k for k, _ in _FLOWS.values()) if http else {}
    flow_alias_keys = frozenset(flow_aliases)

    def s_flows(d: Any) -> m.OAuthFlows:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (OAuthFlows), got {type_name(d)}")
        if flow_alias_keys and not flow_alias_keys.isdisjoint(d):
            d = unalias(d, flow_aliases)
        o: Any = new(m.OAuthFlows)
        count = 0
        for attr, (key, cls_name) in _FLOWS.items():
            value = d.get(key)
            if value is not None:
                count += 1
                try:
                    value = ns[f"_s_{cls_name}"](value)
                except Fail as exc:
                    exc.path.append(key)
                    raise
            set_flows[attr](o, value)
        set_flows["device_code"](o, None)
        if http and count > 1:
            raise Fail(f"expected at most one of {flow_keys}")
        if strict:
            known = {k for k, _ in _FLOWS.values()}
            for key in d:
                if key not in known:
                    raise Fail("unknown field (strict mode)", key)
        return o  # type: ignore[no-any-return]

    def u_flows(o: m.OAuthFlows) -> dict[str, Any]:
        r: dict[str, Any] = {}
        for attr, (key, cls_name) in _FLOWS.items():
            value = getattr(o, attr)
            if value is not None:
                if http and r:
                    lose("the 0.3 proto allows one OAuth flow per scheme", key)
                    continue
                r[key] = ns[f"_u_{cls_name}"](value)
        if o.device_code is not None:
            lose("A2A 0.3 has no device code flow", "deviceCode")
        return r

    ns["_s_OAuthFlows"], ns["_u_OAuthFlows"] = s_flows, u_flows

    set_req = slot_setters(m.SecurityRequirement)
    str_list = ns["_str_list"]

    def s_requirement(d: Any) -> m.SecurityRequirement:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (security requirement), got {type_name(d)}")
        schemes = d
        if http:
            schemes = d.get("schemes") or {}
            if schemes.__class__ is not dict:
                raise Fail(f"expected an object, got {type_name(schemes)}", "schemes")
        out: dict[str, tuple[str, ...]] = {}
        for name, scopes in schemes.items():
            try:
                if http:
                    if scopes.__class__ is not dict:
                        raise Fail(f"expected a StringList object, got {type_name(scopes)}")
                    out[name] = str_list(scopes.get("list") or [])
                else:
                    out[name] = str_list(scopes)
            except Fail as exc:
                exc.path.append(name)
                if http:
                    exc.path.append("schemes")
                raise
        o: Any = new(m.SecurityRequirement)
        set_req["schemes"](o, out)
        return o  # type: ignore[no-any-return]

    def u_requirement(o: m.SecurityRequirement) -> dict[str, Any]:
        if http:
            # ProtoJSON omits an empty repeated field inside the StringList too.
            lists = {n: {"list": list(s)} if s else {} for n, s in o.schemes.items()}
            return {"schemes": lists} if lists else {}
        return {n: list(s) for n, s in o.schemes.items()}

    ns["_s_SecurityRequirement"], ns["_u_SecurityRequirement"] = s_requirement, u_requirement
