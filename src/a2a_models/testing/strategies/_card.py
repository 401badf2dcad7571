"""Strategies for security schemes, OAuth flows and agent cards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from ... import models as m
from ._common import (
    _NONEMPTY,
    T,
    _metadata,
    _opt,
    _opt_bool,
    _opt_str,
    _str_tuples,
    _tuples,
    texts,
)
from ._rules import _dialect_cached, _Rules, _rules

# --------------------------------------------------------------------------- security


def _scopes() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(texts(max_size=8), texts(), max_size=3)


def _oauth_flow(
    flow: Callable[..., T], r: _Rules, /, **fields: st.SearchStrategy[Any]
) -> st.SearchStrategy[T]:
    """``flow`` values: its own ``fields`` (its URLs) and what every OAuth flow has beside
    them, ``scopes`` and an optional ``refresh_url``."""
    return st.builds(flow, **fields, scopes=_scopes(), refresh_url=_opt_str(r))


@_dialect_cached
def authorization_code_oauth_flows(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.AuthorizationCodeOAuthFlow]:
    """:class:`AuthorizationCodeOAuthFlow` values (0.3: no ``pkce_required``)."""
    r = _rules(dialect)
    return _oauth_flow(
        m.AuthorizationCodeOAuthFlow,
        r,
        authorization_url=_NONEMPTY,
        token_url=_NONEMPTY,
        pkce_required=st.booleans() if r.device_code else st.just(False),
    )


@_dialect_cached
def client_credentials_oauth_flows(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.ClientCredentialsOAuthFlow]:
    """:class:`ClientCredentialsOAuthFlow` values."""
    r = _rules(dialect)
    return _oauth_flow(m.ClientCredentialsOAuthFlow, r, token_url=_NONEMPTY)


@_dialect_cached
def implicit_oauth_flows(dialect: str = "1.0") -> st.SearchStrategy[m.ImplicitOAuthFlow]:
    """:class:`ImplicitOAuthFlow` values (0.3: ``authorization_url`` is required)."""
    r = _rules(dialect)
    return _oauth_flow(
        m.ImplicitOAuthFlow, r, authorization_url=_NONEMPTY if r.required_urls else _opt_str(r)
    )


@_dialect_cached
def password_oauth_flows(dialect: str = "1.0") -> st.SearchStrategy[m.PasswordOAuthFlow]:
    """:class:`PasswordOAuthFlow` values (0.3: ``token_url`` is required)."""
    r = _rules(dialect)
    return _oauth_flow(
        m.PasswordOAuthFlow, r, token_url=_NONEMPTY if r.required_urls else _opt_str(r)
    )


@_dialect_cached
def device_code_oauth_flows(dialect: str = "1.0") -> st.SearchStrategy[m.DeviceCodeOAuthFlow]:
    """:class:`DeviceCodeOAuthFlow` values (new in 1.0; as a standalone object in any dialect)."""
    r = _rules(dialect)
    return _oauth_flow(
        m.DeviceCodeOAuthFlow, r, device_authorization_url=_NONEMPTY, token_url=_NONEMPTY
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


def _security_scheme(
    kind: Callable[..., T], r: _Rules, /, **fields: st.SearchStrategy[Any]
) -> st.SearchStrategy[T]:
    """``kind`` values: its own ``fields`` and what every security scheme has beside
    them, an optional ``description``."""
    return st.builds(kind, **fields, description=_opt_str(r))


@_dialect_cached
def api_key_security_schemes(dialect: str = "1.0") -> st.SearchStrategy[m.APIKeySecurityScheme]:
    """:class:`APIKeySecurityScheme` values."""
    r = _rules(dialect)
    return _security_scheme(
        m.APIKeySecurityScheme,
        r,
        location=st.sampled_from(["header", "query", "cookie"]),
        name=_NONEMPTY,
    )


@_dialect_cached
def http_auth_security_schemes(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.HTTPAuthSecurityScheme]:
    """:class:`HTTPAuthSecurityScheme` values."""
    r = _rules(dialect)
    return _security_scheme(
        m.HTTPAuthSecurityScheme,
        r,
        scheme=_NONEMPTY | st.sampled_from(["Bearer", "Basic"]),
        bearer_format=_opt_str(r),
    )


@_dialect_cached
def oauth2_security_schemes(dialect: str = "1.0") -> st.SearchStrategy[m.OAuth2SecurityScheme]:
    """:class:`OAuth2SecurityScheme` values."""
    r = _rules(dialect)
    return _security_scheme(
        m.OAuth2SecurityScheme, r, flows=oauth_flows(dialect), oauth2_metadata_url=_opt_str(r)
    )


@_dialect_cached
def open_id_connect_security_schemes(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.OpenIdConnectSecurityScheme]:
    """:class:`OpenIdConnectSecurityScheme` values."""
    r = _rules(dialect)
    return _security_scheme(m.OpenIdConnectSecurityScheme, r, open_id_connect_url=_NONEMPTY)


@_dialect_cached
def mutual_tls_security_schemes(
    dialect: str = "1.0",
) -> st.SearchStrategy[m.MutualTlsSecurityScheme]:
    """:class:`MutualTlsSecurityScheme` values."""
    r = _rules(dialect)
    return _security_scheme(m.MutualTlsSecurityScheme, r)


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
        if r.shared_protocol_version
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
        uri=_NONEMPTY if r.required_urls else _opt_str(r),
        description=_opt_str(r),
        required=st.booleans(),
        params=_metadata(),
    )


def _capabilities(dialect: str, *, in_card: bool) -> st.SearchStrategy[m.AgentCapabilities]:
    r = _rules(dialect)
    # 0.3 keeps the extended-card flag on the card itself
    # (``supportsAuthenticatedExtendedCard``), not in the capabilities.
    extended = _opt_bool(r, allowed=in_card or r.capabilities_extended_card)
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
    if r.shared_protocol_version:

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
