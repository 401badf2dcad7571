"""Security schemes, OAuth flows and security requirements of agent cards.

1.0 encodes a scheme as a oneof wrapper (``{"apiKeySecurityScheme": {...}}``);
0.3 tags it with ``type``. Python uses one class per scheme kind, all
subclasses of :class:`SecurityScheme`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .rules import (
    api_key_location,
    boolean,
    fail,
    instance_of,
    optional_instance_of,
    optional_str,
    required_str,
    str_to_str_mapping,
)

__all__ = [
    "APIKeySecurityScheme",
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "DeviceCodeOAuthFlow",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "PasswordOAuthFlow",
    "SecurityRequirement",
    "SecurityScheme",
]


def _scopes() -> Any:
    return attrs.field(factory=dict, validator=str_to_str_mapping, hash=False)


@attrs.frozen(slots=True, kw_only=True)
class AuthorizationCodeOAuthFlow:
    """OAuth 2.0 authorization code flow."""

    authorization_url: str = attrs.field(validator=required_str)
    token_url: str = attrs.field(validator=required_str)
    scopes: dict[str, str] = _scopes()
    refresh_url: str | None = attrs.field(default=None, validator=optional_str)
    pkce_required: bool = attrs.field(default=False, validator=boolean)


@attrs.frozen(slots=True, kw_only=True)
class ClientCredentialsOAuthFlow:
    """OAuth 2.0 client credentials flow."""

    token_url: str = attrs.field(validator=required_str)
    scopes: dict[str, str] = _scopes()
    refresh_url: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class ImplicitOAuthFlow:
    """OAuth 2.0 implicit flow (deprecated in 1.0)."""

    authorization_url: str | None = attrs.field(default=None, validator=optional_str)
    scopes: dict[str, str] = _scopes()
    refresh_url: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class PasswordOAuthFlow:
    """OAuth 2.0 resource owner password flow (deprecated in 1.0)."""

    token_url: str | None = attrs.field(default=None, validator=optional_str)
    scopes: dict[str, str] = _scopes()
    refresh_url: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class DeviceCodeOAuthFlow:
    """OAuth 2.0 device authorization flow (RFC 8628; new in 1.0)."""

    device_authorization_url: str = attrs.field(validator=required_str)
    token_url: str = attrs.field(validator=required_str)
    scopes: dict[str, str] = _scopes()
    refresh_url: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class OAuthFlows:
    """The OAuth flows a scheme supports.

    1.0 allows exactly one flow (a oneof); 0.3 allows any number, none
    included. The model accepts any combination, and the 1.0 encoder reports
    a scheme without exactly one flow as not expressible.
    """

    authorization_code: AuthorizationCodeOAuthFlow | None = attrs.field(
        default=None, validator=optional_instance_of(AuthorizationCodeOAuthFlow, "a flow")
    )
    client_credentials: ClientCredentialsOAuthFlow | None = attrs.field(
        default=None, validator=optional_instance_of(ClientCredentialsOAuthFlow, "a flow")
    )
    implicit: ImplicitOAuthFlow | None = attrs.field(
        default=None, validator=optional_instance_of(ImplicitOAuthFlow, "a flow")
    )
    password: PasswordOAuthFlow | None = attrs.field(
        default=None, validator=optional_instance_of(PasswordOAuthFlow, "a flow")
    )
    device_code: DeviceCodeOAuthFlow | None = attrs.field(
        default=None,
        validator=optional_instance_of(DeviceCodeOAuthFlow, "a flow"),
    )

    @property
    def flow_count(self) -> int:
        """How many flows are set."""
        return sum(
            f is not None
            for f in (
                self.authorization_code,
                self.client_credentials,
                self.implicit,
                self.password,
                self.device_code,
            )
        )


@attrs.frozen(slots=True, kw_only=True)
class SecurityScheme:
    """Base of the security scheme kinds; every kind has a ``description``."""

    description: str | None = attrs.field(default=None, validator=optional_str)

    def __attrs_pre_init__(self) -> None:
        if type(self) is SecurityScheme:
            raise TypeError("SecurityScheme is abstract: use one of its subclasses")


@attrs.frozen(slots=True, kw_only=True)
class APIKeySecurityScheme(SecurityScheme):
    """An API key sent in a header, query parameter or cookie.

    ``location`` is ``in`` on the 0.3 wire.
    """

    location: str = attrs.field(validator=api_key_location)
    name: str = attrs.field(validator=required_str)


@attrs.frozen(slots=True, kw_only=True)
class HTTPAuthSecurityScheme(SecurityScheme):
    """HTTP authentication (``Bearer``, ``Basic``, ...; RFC 7235)."""

    scheme: str = attrs.field(validator=required_str)
    bearer_format: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class OAuth2SecurityScheme(SecurityScheme):
    """OAuth 2.0."""

    flows: OAuthFlows = attrs.field(validator=instance_of(OAuthFlows, "OAuthFlows"))
    oauth2_metadata_url: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class OpenIdConnectSecurityScheme(SecurityScheme):
    """OpenID Connect discovery."""

    open_id_connect_url: str = attrs.field(validator=required_str)


@attrs.frozen(slots=True, kw_only=True)
class MutualTlsSecurityScheme(SecurityScheme):
    """Mutual TLS."""


def _scheme_scopes(value: Any) -> Any:
    """``{name: [scopes]}`` (or pairs) -> ``{name: (scopes,)}``; odd input is left for the validator."""
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, list | tuple) and all(
        isinstance(x, tuple | list) and len(x) == 2 for x in value
    ):
        items = value
    else:
        return value
    out: dict[Any, Any] = {}
    for name, scopes in items:
        if isinstance(scopes, str | bytes) or not isinstance(scopes, Iterable):
            out[name] = scopes  # the validator names the field
        else:
            out[name] = tuple(scopes)
    return out


def _check_schemes(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not dict:
        fail(inst, attribute, f"expected a dict of scheme name to scopes, got {value!r:.60}")
    for name, scopes in value.items():
        if type(name) is not str:
            fail(inst, attribute, f"scheme names must be strings, got {name!r}")
        if type(scopes) is not tuple:
            fail(inst, attribute, f"scopes of {name!r} must be a list of strings")
        for scope in scopes:
            if type(scope) is not str:
                fail(inst, attribute, f"scopes of {name!r} must be strings, got {scope!r}")


@attrs.frozen(slots=True, kw_only=True)
class SecurityRequirement:
    """Schemes that must all be satisfied together, each with its required scopes.

    1.0 wire: ``{"schemes": {"oauth": {"list": ["read"]}}}``; 0.3: ``{"oauth": ["read"]}``.
    """

    schemes: dict[str, tuple[str, ...]] = attrs.field(
        factory=dict, converter=_scheme_scopes, validator=_check_schemes, hash=False
    )
