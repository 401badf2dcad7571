"""Who is calling: pluggable HTTP authentication for the A2A app.

An :class:`Authenticator` looks at a request and returns the caller's
:class:`Principal` (``principal.user`` becomes the task owner), ``None`` for
an anonymous caller it accepts, or raises :class:`AuthenticationError`
(HTTP 401 with a ``WWW-Authenticate`` challenge) to refuse the call.

* :class:`BearerTokenAuthenticator` - ``Authorization: Bearer <token>``.
* :class:`APIKeyAuthenticator` - a key in a header, query parameter or cookie.
* :func:`authenticator_for_card` - enforces the security the agent card
  declares (``securitySchemes`` + ``securityRequirements``).

Credentials are given as a mapping (secret → user name or :class:`Principal`)
or as an async verifier ``(secret) -> Principal | None`` (for JWTs, token
introspection, a database...).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import ClassVar, Literal, Protocol, TypeAlias, runtime_checkable

import attrs
from starlette.requests import HTTPConnection

from ... import models as m
from ...errors import AuthenticationError, JSONRPCError, PermissionDeniedError

__all__ = [
    "APIKeyAuthenticator",
    "AuthenticationError",
    "Authenticator",
    "BearerTokenAuthenticator",
    "CardAuthenticator",
    "Credentials",
    "PermissionDeniedError",
    "Principal",
    "SecretVerifier",
    "authenticator_for_card",
    "current_principal",
    "skill_allowed",
]


def _scopes(value: Iterable[str] | None) -> frozenset[str] | None:
    return None if value is None else frozenset(value)


@attrs.frozen(slots=True)
class Principal:
    """An authenticated caller.

    ``user`` becomes :attr:`CallContext.owner`: tasks are visible only to the
    user who created them. ``scopes`` (``None``: not scoped) are checked
    against the scopes a card's security requirement lists. ``scheme`` names
    the card security scheme that authenticated the caller, if any.
    """

    user: str = attrs.field(validator=attrs.validators.min_len(1))
    scopes: frozenset[str] | None = attrs.field(default=None, converter=_scopes)
    scheme: str | None = None


@runtime_checkable
class Authenticator(Protocol):
    """Decides who makes a request.

    Return the caller's :class:`Principal`, ``None`` to let the request
    through anonymously, or raise :class:`AuthenticationError` (401) or
    :class:`PermissionDeniedError` (403).
    """

    async def authenticate(self, request: HTTPConnection) -> Principal | None: ...


#: ``(secret) -> Principal | None``: ``None`` means "not a valid secret".
SecretVerifier: TypeAlias = Callable[[str], Awaitable[Principal | None]]
#: A fixed table (secret → user name or Principal) or a verifier.
Credentials: TypeAlias = Mapping[str, str | Principal] | SecretVerifier


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _SecretTable:
    """Secrets looked up by their SHA-256, so lookups take no secret-dependent time."""

    def __init__(self, credentials: Credentials) -> None:
        if callable(credentials):
            self._verify: SecretVerifier | None = credentials
            self._table: dict[bytes, Principal] = {}
            return
        self._verify = None
        self._table = {}
        for secret, who in credentials.items():
            if not secret:
                raise ValueError("an empty string is not a usable secret")
            principal = who if isinstance(who, Principal) else Principal(who)
            self._table[hashlib.sha256(secret.encode()).digest()] = principal

    async def lookup(self, secret: str) -> Principal | None:
        if self._verify is not None:
            return await self._verify(secret)
        digest = hashlib.sha256(secret.encode()).digest()
        return self._table.get(digest)


class BearerTokenAuthenticator:
    """``Authorization: Bearer <token>``, checked against ``tokens``.

    >>> auth = BearerTokenAuthenticator({"s3cret": "alice"})
    """

    def __init__(self, tokens: Credentials, *, realm: str = "a2a") -> None:
        self._tokens = _SecretTable(tokens)
        self.realm = realm

    def challenge(self, error: str | None = None) -> str:
        """The ``WWW-Authenticate`` value (RFC 6750 §3)."""
        value = f"Bearer realm={_quote(self.realm)}"
        if error:
            value += f", error={_quote(error)}"
        return value

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        header = request.headers.get("authorization")
        if not header:
            raise AuthenticationError(
                "Authentication required: send an 'Authorization: Bearer <token>' header",
                challenges=[self.challenge()],
                missing=True,
            )
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise AuthenticationError(
                "Authentication required: the Authorization header is not a Bearer token",
                challenges=[self.challenge("invalid_request")],
            )
        principal = await self._tokens.lookup(token)
        if principal is None:
            raise AuthenticationError(
                "Invalid bearer token", challenges=[self.challenge("invalid_token")]
            )
        return principal


class APIKeyAuthenticator:
    """An API key in a header, query parameter or cookie (OpenAPI ``apiKey``)."""

    LOCATIONS: ClassVar[frozenset[str]] = frozenset({"header", "query", "cookie"})

    def __init__(
        self,
        keys: Credentials,
        *,
        location: Literal["header", "query", "cookie"] | str = "header",
        name: str = "X-API-Key",
        realm: str = "a2a",
    ) -> None:
        if location not in self.LOCATIONS:
            raise ValueError(f"location must be header, query or cookie, not {location!r}")
        if not name:
            raise ValueError("the API key needs a name")
        self._keys = _SecretTable(keys)
        self.location = location
        self.name = name
        self.realm = realm

    def challenge(self, error: str | None = None) -> str:
        """The ``WWW-Authenticate`` value (there is no registered scheme; this names the key)."""
        value = f"APIKey realm={_quote(self.realm)}, in={_quote(self.location)}, name={_quote(self.name)}"
        if error:
            value += f", error={_quote(error)}"
        return value

    def _find(self, request: HTTPConnection) -> str | None:
        if self.location == "header":
            return request.headers.get(self.name)
        if self.location == "query":
            return request.query_params.get(self.name)
        return request.cookies.get(self.name)

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        key = self._find(request)
        if not key:
            raise AuthenticationError(
                f"Authentication required: send the API key in the {self.location} {self.name!r}",
                challenges=[self.challenge()],
                missing=True,
            )
        principal = await self._keys.lookup(key)
        if principal is None:
            raise AuthenticationError("Invalid API key", challenges=[self.challenge("invalid_key")])
        return principal


@attrs.frozen(slots=True)
class _Requirement:
    """One entry of ``securityRequirements``: every listed scheme must pass (AND)."""

    schemes: tuple[tuple[str, Authenticator, frozenset[str]], ...]


class CardAuthenticator:
    """Enforces a card's security requirements: any one of them (OR) must be met.

    Built by :func:`authenticator_for_card`. The principal of the first
    scheme of the met requirement is the caller.
    """

    def __init__(
        self, requirements: Sequence[_Requirement], *, skills: Sequence[m.AgentSkill] = ()
    ) -> None:
        if not requirements:
            raise ValueError("at least one security requirement is needed")
        self.requirements = tuple(requirements)
        #: Skills with their own security requirements: a caller must be able to use one.
        self.skills = tuple(s for s in skills if s.security_requirements)

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        failures: list[JSONRPCError] = []
        cache: dict[int, Principal | JSONRPCError | None] = {}
        for requirement in self.requirements:
            principal = await self._meet(requirement, request, cache, failures)
            if principal is not None:
                if self.skills and not any(_skill_ok(s, principal) for s in self.skills):
                    needs = "; ".join(f"{s.id}: {_skill_needs(s)}" for s in self.skills)
                    raise PermissionDeniedError(
                        f"Permission denied: the caller's scopes allow none of the agent's "
                        f"skills ({needs})",
                        challenges=['Bearer error="insufficient_scope"'],
                    )
                return principal
        denied = [f for f in failures if isinstance(f, PermissionDeniedError)]
        if denied:
            raise denied[0]
        challenges: list[str] = []
        messages: list[str] = []
        for failure in failures:
            for challenge in getattr(failure, "challenges", ()):
                if challenge not in challenges:
                    challenges.append(challenge)
            if failure.message not in messages:
                messages.append(failure.message)
        missing = all(getattr(f, "missing", False) for f in failures)
        raise AuthenticationError(
            "; or ".join(messages) or None, challenges=challenges, missing=missing
        )

    async def _meet(
        self,
        requirement: _Requirement,
        request: HTTPConnection,
        cache: dict[int, Principal | JSONRPCError | None],
        failures: list[JSONRPCError],
    ) -> Principal | None:
        first: Principal | None = None
        for name, authenticator, needed in requirement.schemes:
            key = id(authenticator)
            if key not in cache:
                try:
                    cache[key] = await authenticator.authenticate(request)
                except (AuthenticationError, PermissionDeniedError) as exc:
                    cache[key] = exc
            outcome = cache[key]
            if isinstance(outcome, JSONRPCError):
                failures.append(outcome)
                return None
            if outcome is None:
                failures.append(
                    AuthenticationError(f"Authentication required ({name})", missing=True)
                )
                return None
            if needed and outcome.scopes is not None and not needed <= outcome.scopes:
                missing = ", ".join(sorted(needed - outcome.scopes))
                failures.append(
                    PermissionDeniedError(
                        f"Permission denied: security scheme {name!r} needs the scope(s) {missing}",
                        challenges=[
                            f'Bearer error="insufficient_scope", scope={_quote(" ".join(sorted(needed)))}'
                        ],
                    )
                )
                return None
            if first is None:
                first = attrs.evolve(outcome, scheme=outcome.scheme or name)
        return first


def _default_authenticator(
    name: str,
    scheme: m.SecurityScheme,
    *,
    bearer_tokens: Credentials | None,
    api_keys: Credentials | None,
    realm: str,
) -> Authenticator:
    kind = type(scheme).__name__
    if isinstance(scheme, m.APIKeySecurityScheme):
        if api_keys is None:
            raise ValueError(f"security scheme {name!r} is an API key: pass api_keys=")
        return APIKeyAuthenticator(
            api_keys, location=scheme.location, name=scheme.name, realm=realm
        )
    bearer = (
        isinstance(scheme, m.HTTPAuthSecurityScheme) and scheme.scheme.lower() == "bearer"
    ) or isinstance(scheme, m.OAuth2SecurityScheme | m.OpenIdConnectSecurityScheme)
    if bearer:
        if bearer_tokens is None:
            raise ValueError(
                f"security scheme {name!r} ({kind}) takes bearer tokens: pass bearer_tokens="
            )
        return BearerTokenAuthenticator(bearer_tokens, realm=realm)
    raise ValueError(
        f"no built-in authenticator for security scheme {name!r} ({kind}); "
        f"pass authenticators={{{name!r}: ...}}"
    )


def authenticator_for_card(
    card: m.AgentCard,
    *,
    bearer_tokens: Credentials | None = None,
    api_keys: Credentials | None = None,
    authenticators: Mapping[str, Authenticator] | None = None,
    realm: str = "a2a",
) -> CardAuthenticator | None:
    """An authenticator enforcing what ``card`` declares, or ``None`` if it declares nothing.

    Each scheme named by ``card.security_requirements`` is checked by
    ``authenticators[name]`` if given, else by a built-in one: HTTP
    ``bearer``, OAuth 2 and OpenID Connect schemes accept ``bearer_tokens``;
    API-key schemes accept ``api_keys`` at the declared location and name.
    A requirement is met when all its schemes accept the request (and the
    principal has the listed scopes, when it carries scopes); the request is
    accepted when any requirement is met. A card that declares schemes but
    no requirements accepts any one of its schemes. When skills declare
    their own requirements, a caller whose scopes meet none of them is
    refused (403); a request does not name its skill, so an agent checks the
    skill it picks with :func:`skill_allowed` (and :func:`current_principal`).

    Raises :class:`ValueError` for a requirement naming an undeclared scheme
    or a scheme nothing can check (e.g. mutual TLS without an authenticator).
    """
    schemes = dict(card.security_schemes or {})
    requirements = list(card.security_requirements or ())
    if not requirements:
        if not schemes:
            return None
        requirements = [m.SecurityRequirement(schemes={name: ()}) for name in schemes]
    given = dict(authenticators or {})
    built: dict[str, Authenticator] = {}

    def get(name: str) -> Authenticator:
        if name not in built:
            if name in given:
                built[name] = given[name]
            elif name not in schemes:
                raise ValueError(f"a security requirement names the undeclared scheme {name!r}")
            else:
                built[name] = _default_authenticator(
                    name, schemes[name], bearer_tokens=bearer_tokens, api_keys=api_keys, realm=realm
                )
        return built[name]

    compiled = [
        _Requirement(
            tuple((name, get(name), frozenset(scopes)) for name, scopes in req.schemes.items())
        )
        for req in requirements
        if req.schemes
    ]
    if not compiled:  # only empty requirements: "no authentication" is one of the options
        return None
    if len(compiled) < len(requirements):
        # An empty requirement ({}) makes authentication optional (OpenAPI semantics).
        return _Optional(compiled, skills=card.skills)
    return CardAuthenticator(compiled, skills=card.skills)


def _skill_ok(skill: m.AgentSkill, principal: Principal) -> bool:
    """Whether ``principal`` meets one of ``skill``'s security requirements.

    A requirement is met when each scheme it lists is the one that
    authenticated the caller (or any, when that is unknown) with the listed
    scopes among the caller's (an unscoped caller, e.g. a static token, has all).
    """
    if not skill.security_requirements:
        return True
    for requirement in skill.security_requirements:
        if not requirement.schemes:
            return True
        for name, scopes in requirement.schemes.items():
            if principal.scheme is not None and name != principal.scheme:
                continue
            if principal.scopes is None or set(scopes) <= principal.scopes:
                return True
    return False


def _skill_needs(skill: m.AgentSkill) -> str:
    options = [
        " + ".join(f"{name} [{' '.join(scopes)}]" for name, scopes in r.schemes.items())
        for r in skill.security_requirements
    ]
    return " or ".join(options)


def skill_allowed(card: m.AgentCard, skill_id: str, principal: Principal | None) -> bool:
    """Whether ``principal`` may use the skill ``skill_id`` of ``card`` (per its requirements).

    An unknown skill is not allowed; an anonymous caller only uses skills
    without requirements.
    """
    skill = next((s for s in card.skills if s.id == skill_id), None)
    if skill is None:
        return False
    if not skill.security_requirements:
        return True
    return principal is not None and _skill_ok(skill, principal)


def current_principal() -> Principal | None:
    """The caller the HTTP layer authenticated for the request being handled (or the agent
    run it started); ``None`` when anonymous."""
    from ._gateway import _CALLER

    return _CALLER.get(None)


class _Optional(CardAuthenticator):
    """A card whose requirements include ``{}``: anonymous callers are accepted,
    but credentials that are sent must be valid."""

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        try:
            return await super().authenticate(request)
        except AuthenticationError as exc:
            if exc.missing:
                return None
            raise
