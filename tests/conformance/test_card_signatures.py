"""Card signature checks against a card signed here (ES256 over the JCS-canonical card)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from a2a_models.conformance import ConformanceAgent, Status, conformance_card, run_suite
from a2a_models.conformance._jws import canonicalize
from a2a_models.models import ProtocolBinding
from a2a_models.server import AgentServer

from ._servers import dual_card_json, engine_app, serving

ec = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")
from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import utils  # noqa: E402


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signed_factory(mutate: str | None) -> Any:
    key = ec.generate_private_key(ec.SECP256R1())
    nums = key.public_key().public_numbers()
    jwk = {
        "kty": "EC",
        "crv": "P-256",
        "kid": "k1",
        "x": _b64(nums.x.to_bytes(32, "big")),
        "y": _b64(nums.y.to_bytes(32, "big")),
    }

    def factory(url: str) -> Any:
        card = conformance_card(url, bindings=(ProtocolBinding.JSONRPC,))
        wire = dual_card_json(card)
        header = {"alg": "ES256", "typ": "JOSE", "kid": "k1", "jku": f"{url}/jwks.json"}
        if mutate == "no-kid":
            del header["kid"]
        if mutate == "no-alg":
            del header["alg"]
        protected = _b64(json.dumps(header).encode())
        signing_input = f"{protected}.{_b64(canonicalize(wire).encode())}".encode()
        r, s = utils.decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        wire["signatures"] = [
            {
                "protected": protected,
                "signature": _b64(r.to_bytes(32, "big") + s.to_bytes(32, "big")),
            }
        ]
        if mutate == "tampered":
            wire["name"] = "someone else"

        async def jwks(request: Request) -> Response:
            return JSONResponse({"keys": [jwk]})

        return engine_app(
            AgentServer(ConformanceAgent(), card), wire, extra_routes=[Route("/jwks.json", jwks)]
        )

    return factory


@pytest.mark.parametrize(
    ("mutate", "signatures", "verify"),
    [
        (None, Status.PASS, Status.PASS),
        ("tampered", Status.PASS, Status.FAIL),
        ("no-kid", Status.FAIL, Status.FAIL),
    ],
)
def test_card_signature_checks(mutate: str | None, signatures: Status, verify: Status) -> None:
    with serving(_signed_factory(mutate)) as url:
        report = asyncio.run(run_suite(url, version="1.0", transport="jsonrpc", include=["card.*"]))
    by_key = {r.key: r for r in report.results}
    assert by_key["card.signatures[1.0]"].status is signatures, by_key[
        "card.signatures[1.0]"
    ].message
    assert by_key["card.signature-verify[1.0]"].status is verify, by_key[
        "card.signature-verify[1.0]"
    ].message


@pytest.mark.parametrize(
    ("mutate", "signatures", "verify"),
    [
        (None, "", "verified"),
        ("tampered", "", "advisory: $.signatures[0]: does not verify over the JCS-canonical"),
        ("no-kid", "advisory: $.signatures[0]: the protected header has no 'kid'", "advisory: "),
        ("no-alg", "FAIL", "SKIP"),
    ],
)
def test_card_signature_checks_on_03_judge_by_rfc_7515_only(
    mutate: str | None, signatures: str, verify: str
) -> None:
    # 0.3 asks for an RFC 7515 JWS and defines no signed bytes, key lookup or kid.
    with serving(_signed_factory(mutate)) as url:
        report = asyncio.run(run_suite(url, version="0.3", transport="jsonrpc", include=["card.*"]))
    by_key = {r.key: r for r in report.results}
    for key, want in (("card.signatures[0.3]", signatures), ("card.signature-verify[0.3]", verify)):
        result = by_key[key]
        if want in ("FAIL", "SKIP"):
            assert result.status is Status(want.lower()), (key, result.message)
        else:
            assert result.status is Status.PASS, (key, result.message)
            assert result.message.startswith(want), (key, result.message)
    if mutate == "no-alg":
        assert by_key["card.signatures[0.3]"].message == (
            "$.signatures[0]: the protected header has no 'alg' (RFC 7515 §4.1.1: alg MUST be present)"
        )
