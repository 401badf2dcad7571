"""Signed agent cards: ``serve --sign-card-key`` signs, ``card --verify-with``, the discovery
client and the conformance suite verify; interop with the official a2a-sdk both ways."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from _keys import ec_key, pem, private_jwk, public_jwk, rsa_key
from _procs import a2a_command

from a2a_models.adapters.http import resolve_card
from a2a_models.signing import CardSignatureError, CardVerifier

CARD = "/.well-known/agent-card.json"
JWKS = "/.well-known/jwks.json"


def _cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*a2a_command(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


class _Static:
    """Serves fixed JSON documents on 127.0.0.1 (a tampered card, a JWKS...)."""

    def __init__(self, documents: dict[str, Any]) -> None:
        self.documents = documents
        static = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                doc = static.documents.get(self.path)
                body = json.dumps(doc).encode() if doc is not None else b"{}"
                self.send_response(200 if doc is not None else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def static() -> Iterator[Any]:
    made: list[_Static] = []

    def start(documents: dict[str, Any]) -> _Static:
        made.append(_Static(documents))
        return made[-1]

    yield start
    for s in made:
        s.close()


@pytest.fixture
def signed(serve: Any, tmp_path: Path) -> Any:
    key = ec_key()
    path = tmp_path / "card-key.pem"
    path.write_text(pem(key))
    server = serve("--agent", "conformance", "--sign-card-key", str(path))
    server.key = key
    return server


def test_served_card_is_signed_and_verifies(signed: Any) -> None:
    jwks = httpx.get(signed.url + JWKS, timeout=10).json()
    [jwk] = jwks["keys"]
    assert "d" not in jwk  # only the public key is published
    verifier = CardVerifier(jwks, mode="require")
    for headers in ({"A2A-Version": "1.0"}, {}):  # 1.0 card and the combined 1.0+0.3 card
        card = httpx.get(signed.url + CARD, headers=headers, timeout=10).json()
        [signature] = card["signatures"]
        header = json.loads(__import__("base64").urlsafe_b64decode(signature["protected"] + "=="))
        assert header["kid"] == jwk["kid"] and header["alg"] == "ES256"
        assert header["jku"] == signed.url.rstrip("/") + JWKS
        assert verifier.verify(card) == jwk["kid"]


def test_card_cli_verifies_with_a_jwks_url_and_file(signed: Any, tmp_path: Path) -> None:
    ok = _cli("card", signed.url, "--json", "--verify-with", signed.url + JWKS)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["signatures"]
    other = tmp_path / "other.jwks"
    other.write_text(json.dumps({"keys": [public_jwk(ec_key(), "someone-else")]}))
    refused = _cli("card", signed.url, "--verify-with", str(other))
    assert refused.returncode == 1
    assert "(unknown key)" in refused.stderr and "no trusted key has kid" in refused.stderr


def test_changed_card_and_bad_signature_are_named(signed: Any, static: Any) -> None:
    card = httpx.get(signed.url + CARD, headers={"A2A-Version": "1.0"}, timeout=10).json()
    jwks = httpx.get(signed.url + JWKS, timeout=10).json()
    changed = {**card, "description": "now does something else"}
    forged = {
        **card,
        "signatures": [
            {**card["signatures"][0], "signature": card["signatures"][0]["signature"][:-4]}
        ],
    }
    site = static({CARD: changed, "/forged" + CARD: forged, JWKS: jwks})
    result = _cli("card", site.url, "--verify-with", site.url + JWKS)
    assert result.returncode == 1 and "(card changed)" in result.stderr, result.stderr
    result = _cli("card", site.url + "/forged", "--verify-with", site.url + JWKS)
    assert result.returncode == 1 and "(bad signature)" in result.stderr, result.stderr


async def test_discovery_client_modes(signed: Any, static: Any) -> None:
    jwks = httpx.get(signed.url + JWKS, timeout=10).json()
    unsigned = httpx.get(signed.url + CARD, timeout=10).json()
    unsigned.pop("signatures")
    site = static({CARD: unsigned})
    card = await resolve_card(signed.url, verifier=CardVerifier(jwks, mode="require"))
    assert card.signatures
    with pytest.raises(CardSignatureError) as caught:
        await resolve_card(site.url, verifier=CardVerifier(jwks, mode="require"))
    assert caught.value.reason == "unsigned"
    assert await resolve_card(site.url, verifier=CardVerifier(jwks))  # verify-if-present
    wrong = CardVerifier({"keys": [public_jwk(ec_key(), "x")]}, mode="ignore")
    assert await resolve_card(signed.url, verifier=wrong)


def test_jwk_key_from_the_environment(serve: Any) -> None:
    key = rsa_key()
    server = serve(
        "--agent", "conformance", env={"A2A_SIGN_CARD_KEY": private_jwk(key, "rsa-1", "RS256")}
    )
    card = httpx.get(server.url + CARD, timeout=10).json()
    verifier = CardVerifier([public_jwk(key, "rsa-1")], mode="require")
    assert verifier.verify(card) == "rsa-1"
    assert "PRIVATE" not in server.text and '"d"' not in server.text


def test_conformance_suite_verifies_the_signature(signed: Any) -> None:
    result = _cli(
        "conformance", signed.url, "--check", "card.signature*", "--report", "json", timeout=120
    )
    report = json.loads(result.stdout)
    outcomes = {r["id"]: r for r in _results(report)}
    verify = outcomes["card.signature-verify"]
    assert verify["status"] == "pass", verify


def _results(report: Any) -> list[dict[str, Any]]:
    if isinstance(report, dict):
        for key in ("results", "checks"):
            if isinstance(report.get(key), list):
                return [r for r in report[key] if isinstance(r, dict)]
    return []


def test_sdk_verifies_our_signature(signed: Any) -> None:
    from a2a.types import AgentCard
    from a2a.utils.signing import create_signature_verifier
    from google.protobuf.json_format import ParseDict
    from jwt import PyJWK

    jwks = httpx.get(signed.url + JWKS, timeout=10).json()
    card = httpx.get(signed.url + CARD, headers={"A2A-Version": "1.0"}, timeout=10).json()
    seen: list[tuple[str | None, str | None]] = []

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        seen.append((kid, jku))
        return PyJWK(next(k for k in jwks["keys"] if k["kid"] == kid))

    proto = ParseDict(card, AgentCard(), ignore_unknown_fields=True)
    create_signature_verifier(key_provider, ["ES256"])(proto)  # raises if invalid
    assert seen and seen[0][1] == signed.url.rstrip("/") + JWKS
    proto.description = "changed"
    from a2a.utils.signing import InvalidSignaturesError

    with pytest.raises(InvalidSignaturesError):
        create_signature_verifier(key_provider, ["ES256"])(proto)


def test_we_verify_the_sdks_signature(serve: Any, static: Any, tmp_path: Path) -> None:
    from a2a.types import AgentCard
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict, ParseDict

    server = serve("--agent", "conformance")
    card = httpx.get(server.url + CARD, headers={"A2A-Version": "1.0"}, timeout=10).json()
    key = ec_key()
    proto = ParseDict(card, AgentCard(), ignore_unknown_fields=True)
    signer = create_agent_card_signer(
        key, {"kid": "sdk-key", "alg": "ES256", "jku": None, "typ": "JOSE"}
    )
    sdk_card = MessageToDict(signer(proto))
    site = static({CARD: sdk_card})
    jwks_file = tmp_path / "sdk.jwks"
    jwks_file.write_text(json.dumps({"keys": [public_jwk(key, "sdk-key")]}))
    result = _cli("card", site.url, "--verify-with", str(jwks_file))
    assert result.returncode == 0, result.stderr
    tampered = {**sdk_card, "name": "evil"}
    site.documents[CARD] = tampered
    result = _cli("card", site.url, "--verify-with", str(jwks_file))
    assert result.returncode == 1 and "(card changed)" in result.stderr
