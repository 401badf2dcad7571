"""Agent card checks (spec §4.4, §5.7, §8; 0.3 §5)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urljoin, urlsplit

import attrs

from ... import codec
from ... import models as m
from ...errors import DecodeError
from ...signing import ASYMMETRIC_ALGORITHMS, CardSignatureError
from .._catalogue import requirement
from .._context import ROUTE_MISSING, CheckContext
from .._jws import b64url_decode, signing_available, verify_card
from .._registry import ALL_TRANSPORTS, CARD, JSONRPC, Level, check
from .._target import WELL_KNOWN, normalize_version

MUST, SHOULD = Level.MUST, Level.SHOULD
_CARD = (CARD,)
#: 0.3's sentence on transport extras (caching headers among them): a MAY.
TRANSPORT_EXTRAS_03 = "v0.3-3.4.3-1"


def _evidence(ctx: CheckContext) -> None:
    if ctx.target.card_exchange is not None:
        ctx.evidence.append(ctx.target.card_exchange)


def _served_card(ctx: CheckContext) -> dict[str, Any]:
    """The card, with the exchange that fetched it as evidence (skips without a card)."""
    _evidence(ctx)
    return ctx.card


@check(
    "card.well-known",
    "§8.2",
    MUST,
    "The agent card is served at /.well-known/agent-card.json",
    transports=_CARD,
)
async def card_well_known(ctx: CheckContext) -> str | None:
    _evidence(ctx)
    t = ctx.target
    if not t.card_url.endswith(WELL_KNOWN):
        parts = urlsplit(t.card_url)
        reply = await ctx.request(
            "GET",
            f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}",
            headers={"Accept": "application/json"},
        )
        ctx.expect(
            reply.status == 200,
            f"GET {WELL_KNOWN} answered "
            f"{reply.status if reply.status is not None else reply.error}",
        )
        return None
    if t.card is None:
        ctx.fail(t.card_problem or "no agent card")
    return None


@check(
    "card.content-type", "§8.2", SHOULD, "The card is served as application/json", transports=_CARD
)
async def card_content_type(ctx: CheckContext) -> str | None:
    _served_card(ctx)
    media = ctx.target.card_headers.get("content-type", "").split(";")[0].strip().lower()
    json_media = media == "application/json" or media.endswith("+json")
    if ctx.version == "0.3" and not json_media:
        # 0.3 §5.3 names the card's location only; its application/json rules are for
        # the JSON-RPC and HTTP+JSON payloads (§3.2.1, §3.2.3).
        ctx.advise(
            f"advisory: the card's Content-Type is {media or '(none)'!r}, where 1.0 §8.2 "
            "serves it as application/json; 0.3 states no media type for the card"
        )
        return None
    ctx.expect(
        json_media, f"the card's Content-Type is {media or '(none)'!r}, expected application/json"
    )
    return None


@check(
    "card.caching",
    "§8.6.1",
    SHOULD,
    "The card response carries Cache-Control or ETag",
    transports=_CARD,
)
async def card_caching(ctx: CheckContext) -> str | None:
    _served_card(ctx)
    h = ctx.target.card_headers
    if ctx.version == "0.3" and "cache-control" not in h and "etag" not in h:
        # 0.3 asks for no caching headers; its one word on them is a freedom (§3.4.3).
        ctx.advise(
            "advisory: the card response has neither a Cache-Control nor an ETag header, "
            "which 1.0 §8.6.1 asks for (SHOULD); 0.3 states no rule, only that "
            f"{requirement(TRANSPORT_EXTRAS_03).sentence!r} (0.3 §3.4.3)"
        )
        return None
    ctx.expect(
        "cache-control" in h or "etag" in h,
        "the card response has neither a Cache-Control nor an ETag header",
    )
    return None


def _missing(card: dict[str, Any], version: str) -> list[str]:
    problems: list[str] = []

    def need_str(obj: dict[str, Any], key: str, where: str) -> None:
        if not isinstance(obj.get(key), str) or (key != "description" and not obj.get(key)):
            problems.append(f"{where}.{key}: required string missing")

    def need_list(obj: dict[str, Any], key: str, where: str, non_empty: bool = True) -> list[Any]:
        value = obj.get(key)
        if not isinstance(value, list):
            problems.append(f"{where}.{key}: required list missing")
            return []
        if non_empty and not value:
            problems.append(f"{where}.{key}: required list is empty (§5.7: at least one element)")
        return value

    for key in ("name", "description", "version"):
        need_str(card, key, "$")
    if not isinstance(card.get("capabilities"), dict):
        problems.append("$.capabilities: required object missing")
    need_list(card, "defaultInputModes", "$")
    need_list(card, "defaultOutputModes", "$")
    skills = need_list(card, "skills", "$", non_empty=version == "1.0")
    for i, skill in enumerate(skills):
        where = f"$.skills[{i}]"
        if not isinstance(skill, dict):
            problems.append(f"{where}: not an object")
            continue
        for key in ("id", "name", "description"):
            need_str(skill, key, where)
        need_list(skill, "tags", where)
    provider = card.get("provider")
    if isinstance(provider, dict):
        need_str(provider, "organization", "$.provider")
        need_str(provider, "url", "$.provider")
    if version == "1.0":
        for i, iface in enumerate(need_list(card, "supportedInterfaces", "$")):
            where = f"$.supportedInterfaces[{i}]"
            if not isinstance(iface, dict):
                problems.append(f"{where}: not an object")
                continue
            for key in ("url", "protocolBinding", "protocolVersion"):
                need_str(iface, key, where)
    else:
        for key in ("url", "protocolVersion", "preferredTransport"):
            need_str(card, key, "$")
    return problems


@check(
    "card.valid",
    "§5.7, §4.4.1",
    MUST,
    "The card has every required field and decodes in its version's shape",
    transports=_CARD,
)
async def card_valid(ctx: CheckContext) -> str | None:
    card = _served_card(ctx)
    problems = _missing(card, ctx.version)
    try:
        codec.from_wire(m.AgentCard, card, ctx.version)
    except DecodeError as exc:
        problems.append(f"not a valid {ctx.version} AgentCard: {exc}")
    if problems:
        ctx.fail("; ".join(problems))
    return None


@check(
    "card.interfaces",
    "§8.3.1, §5.2",
    MUST,
    "Declared interfaces have absolute http(s) URLs, a binding and a Major.Minor version",
    transports=_CARD,
)
async def card_interfaces(ctx: CheckContext) -> str | None:
    card = _served_card(ctx)
    problems: list[str] = []
    entries: list[tuple[str, Any, Any, Any]] = []
    if ctx.version == "1.0":
        for i, iface in enumerate(card.get("supportedInterfaces") or []):
            if isinstance(iface, dict):
                entries.append(
                    (
                        f"supportedInterfaces[{i}]",
                        iface.get("url"),
                        iface.get("protocolBinding"),
                        iface.get("protocolVersion"),
                    )
                )
    else:
        entries.append(
            (
                "url/preferredTransport",
                card.get("url"),
                card.get("preferredTransport"),
                card.get("protocolVersion"),
            )
        )
        for i, iface in enumerate(card.get("additionalInterfaces") or []):
            if isinstance(iface, dict):
                entries.append(
                    (
                        f"additionalInterfaces[{i}]",
                        iface.get("url"),
                        iface.get("transport"),
                        card.get("protocolVersion"),
                    )
                )
    if not entries:
        ctx.fail("the card declares no interface")
    for where, url, binding, version in entries:
        if not isinstance(binding, str) or not binding:
            problems.append(f"{where}: no protocol binding")
        if binding in ("JSONRPC", "HTTP+JSON"):
            parts = urlsplit(url) if isinstance(url, str) else None
            if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
                problems.append(f"{where}: url {url!r} is not an absolute http(s) URL")
        if normalize_version(version) is None:
            problems.append(f"{where}: protocol version {version!r} is not Major.Minor")
    if problems:
        ctx.fail("; ".join(problems))
    return None


@check(
    "card.protocol-version-format",
    "§3.6",
    SHOULD,
    "Interface protocol versions carry no patch number",
    versions=("1.0",),
    transports=_CARD,
)
async def card_protocol_version_format(ctx: CheckContext) -> str | None:
    bad = [
        f"supportedInterfaces[{i}].protocolVersion={iface.get('protocolVersion')!r}"
        for i, iface in enumerate(_served_card(ctx).get("supportedInterfaces") or [])
        if isinstance(iface, dict)
        and isinstance(iface.get("protocolVersion"), str)
        and iface["protocolVersion"].count(".") > 1
    ]
    ctx.expect(not bad, "patch numbers in protocol versions: " + ", ".join(bad))
    return None


@check(
    "card.interfaces-reachable",
    "§8.3.1",
    MUST,
    "Every declared JSON-RPC and HTTP+JSON interface of the version answers",
    transports=_CARD,
)
async def card_interfaces_reachable(ctx: CheckContext) -> str | None:
    ctx.card  # noqa: B018
    endpoints = [
        e
        for e in ctx.target.endpoints
        if e.version == ctx.version and e.transport in ALL_TRANSPORTS
    ]
    if not endpoints:
        ctx.not_applicable(f"the card declares no {ctx.version} JSON-RPC or HTTP+JSON interface")
    dead: list[str] = []
    for ep in endpoints:
        if ep.declared_url is not None:  # tested elsewhere (--endpoint): the card's URL is judged
            ep = attrs.evolve(ep, url=ep.declared_url, declared_url=None)
        sub = ctx.on_endpoint(ep)
        res = await sub.call("GetTask", m.GetTaskRequest(id="a2a-conformance-probe"))
        ctx.evidence.extend(sub.evidence)
        status = res.http.status
        if status is None:
            dead.append(f"{ep.transport} {ep.url}: {res.http.error}")
        elif ep.transport == JSONRPC and res.error is None and not res.has_result:
            dead.append(f"{ep.transport} {ep.url}: {res.problem}")
        elif status >= 500:
            dead.append(f"{ep.transport} {ep.url}: HTTP {status} (server error)")
        elif res.error is not None and res.error.route_missing:
            dead.append(f"{ep.transport} {ep.url}: HTTP {status}: {ROUTE_MISSING}")
        elif (
            ep.version == "1.0"
            and ep.transport != JSONRPC
            and status in (404, 405)
            and (res.error is None or not res.error.body_shape_ok)
        ):
            # 1.0 errors are google.rpc.Status bodies (§11.6): this answer is not one.
            dead.append(
                f"{ep.transport} {ep.url}: HTTP {status} without a google.rpc.Status body "
                "(§11.6): not an A2A answer"
            )
    ctx.expect(not dead, "; ".join(dead))
    return f"{len(endpoints)} interface(s) answered"


def _requirement_names(reqs: Any, version: str) -> list[str]:
    names: list[str] = []
    if not isinstance(reqs, list):
        return names
    for req in reqs:
        if not isinstance(req, dict):
            continue
        schemes = req.get("schemes") if version == "1.0" else req
        if isinstance(schemes, dict):
            names += [str(k) for k in schemes]
    return names


@check(
    "card.security-coherent",
    "§4.4.1, §4.5",
    MUST,
    "Security requirements only name declared security schemes",
    transports=_CARD,
)
async def card_security(ctx: CheckContext) -> str | None:
    card = _served_card(ctx)
    key = "securityRequirements" if ctx.version == "1.0" else "security"
    declared = card.get("securitySchemes")
    declared_names = set(declared) if isinstance(declared, dict) else set()
    used: list[tuple[str, str]] = [
        (f"$.{key}", n) for n in _requirement_names(card.get(key), ctx.version)
    ]
    for i, skill in enumerate(card.get("skills") or []):
        if isinstance(skill, dict):
            used += [
                (f"$.skills[{i}].{key}", n) for n in _requirement_names(skill.get(key), ctx.version)
            ]
    if not used and not declared_names:
        ctx.not_applicable("the card declares no security")
    undeclared = [f"{where} names {name!r}" for where, name in used if name not in declared_names]
    ctx.expect(
        not undeclared,
        "undeclared security schemes: "
        + "; ".join(undeclared)
        + f" (declared: {sorted(declared_names)})",
    )
    return None


def _signatures(ctx: CheckContext) -> list[Any]:
    sigs = ctx.card.get("signatures")
    if not sigs:
        ctx.not_applicable("the card is not signed")
    if not isinstance(sigs, list):
        ctx.fail("$.signatures is not a list")
    return sigs


def _protected_header(sig: Any, where: str) -> dict[str, Any]:
    if not isinstance(sig, dict):
        raise ValueError(f"{where}: not an object")
    protected = sig.get("protected")
    if not isinstance(protected, str) or not protected:
        raise ValueError(f"{where}.protected: missing")
    try:
        header = json.loads(b64url_decode(protected))
    except ValueError as exc:
        raise ValueError(f"{where}.protected: not base64url-encoded JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{where}.protected: the header is not a JSON object")
    return header


#: What 0.3 says of a card signature (the AgentCardSignature schema's description): no
#: signed payload, canonicalization or key lookup (1.0 §8.4.1-§8.4.3 define them).
_JWS_03 = (
    "AgentCardSignature represents a JWS signature of an AgentCard. This follows the JSON "
    "format of an RFC 7515 JSON Web Signature (JWS)."
)


def _signature_problem(ctx: CheckContext, problem: str) -> None:
    """Fail by 1.0's signing rules; on 0.3, which defines none of them, advise."""
    if ctx.version != "0.3":
        ctx.fail(problem)
    ctx.advise(
        f"advisory: {problem}, by 1.0 §8.4.1/§8.4.3; 0.3 defines neither the signed bytes "
        f"nor the key lookup, only that {_JWS_03!r}"
    )


@check(
    "card.signatures",
    "§8.4.2",
    MUST,
    "Signature protected headers decode to JSON with alg and kid",
    transports=_CARD,
)
async def card_signatures(ctx: CheckContext) -> str | None:
    _evidence(ctx)
    problems: list[str] = []
    notes: list[str] = []
    for i, sig in enumerate(_signatures(ctx)):
        where = f"$.signatures[{i}]"
        try:
            header = _protected_header(sig, where)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        for key in ("alg", "kid"):
            if isinstance(header.get(key), str) and header[key]:
                continue
            if key == "kid" and ctx.version == "0.3":
                # 0.3's AgentCardSignature is an RFC 7515 JWS, which needs alg (§4.1.1), not kid.
                ctx.advise(
                    f"advisory: {where}: the protected header has no 'kid', which 1.0 §8.4.2 "
                    f"requires; 0.3 asks for an RFC 7515 JWS only ({_JWS_03!r})"
                )
                continue
            rule = " (RFC 7515 §4.1.1: alg MUST be present)" if key == "alg" else ""
            problems.append(f"{where}: the protected header has no {key!r}{rule}")
        if header.get("typ") not in (None, "JOSE"):
            notes.append(f"{where}: typ is {header.get('typ')!r} (SHOULD be 'JOSE')")
        try:
            if not b64url_decode(str(sig.get("signature", ""))):
                problems.append(f"{where}.signature: empty")
        except ValueError:
            problems.append(f"{where}.signature: not base64url")
    ctx.expect(not problems, "; ".join(problems))
    return "; ".join(notes) or None


@check(
    "card.signature-verify",
    "§8.4.1, §8.4.3",
    MUST,
    "Card signatures verify against the key named by kid at jku",
    transports=_CARD,
)
async def card_signature_verify(ctx: CheckContext) -> str | None:
    sigs = _signatures(ctx)
    _evidence(ctx)
    if not signing_available():
        ctx.skip(
            "install the security extra (pip install 'a2a-models[security]') to verify "
            "card signatures"
        )
    verified: list[str] = []
    skipped: list[str] = []
    for i, sig in enumerate(sigs):
        where = f"$.signatures[{i}]"
        try:
            header = _protected_header(sig, where)
        except ValueError as exc:
            skipped.append(str(exc))
            continue
        jku, kid, alg = header.get("jku"), header.get("kid"), header.get("alg")
        if not isinstance(jku, str) or not jku:
            skipped.append(f"{where}: no jku, so no key to verify with")
            continue
        reply = await ctx.request(
            "GET", urljoin(ctx.target.card_url, jku), headers={"Accept": "application/json"}
        )
        try:
            jwks = reply.json() if reply.status == 200 else None
        except ValueError:
            jwks = None
        keys = jwks.get("keys") if isinstance(jwks, dict) else None
        if not isinstance(keys, list):
            skipped.append(f"{where}: the JWKS at {jku} is not reachable or not a key set")
            continue
        jwk = next((k for k in keys if isinstance(k, dict) and k.get("kid") == kid), None)
        if jwk is None:
            _signature_problem(ctx, f"{where}: the JWKS at {jku} has no key with kid {kid!r}")
            return None
        if str(alg) not in ASYMMETRIC_ALGORITHMS:
            skipped.append(f"{where}: algorithm {alg!r} is not a public-key algorithm")
            continue
        try:  # the package's one verifier, on this signature alone
            verify_card({**ctx.card, "signatures": [sig]}, [jwk])
        except CardSignatureError as exc:
            _signature_problem(
                ctx,
                f"{where}: does not verify over the JCS-canonical card (without "
                f"'signatures') with key {kid!r} from {jku}: {exc.reason}: {exc.detail}",
            )
            return None
        verified.append(where)
    if not verified:
        ctx.skip("; ".join(skipped))
    return f"verified {', '.join(verified)}" + (
        f"; not verified: {'; '.join(skipped)}" if skipped else ""
    )
