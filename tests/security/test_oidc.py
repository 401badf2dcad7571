"""OAuth 2 / OpenID Connect access tokens against the real ``a2a-models serve`` process, with
keys generated here and the issuer (discovery document and JWKS) served on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from _keys import public_jwk, rsa_key
from _sec_support import V10, Server, message, rpc
from cryptography.hazmat.primitives import serialization


class _Issuer:
    """An OpenID provider's discovery document and JWKS on 127.0.0.1."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {"rsa-1": rsa_key()}
        self.fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    doc: Any = {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks"}
                elif self.path == "/jwks":
                    issuer.fetches += 1
                    doc = issuer.jwks()
                else:
                    doc = None
                body = json.dumps(doc).encode()
                self.send_response(200 if doc else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def jwks(self) -> dict[str, Any]:
        return {
            "keys": [
                {**public_jwk(k, kid), "use": "sig", "alg": "RS256"} for kid, k in self.keys.items()
            ]
        }

    def token(self, audience: str, *, kid: str = "rsa-1", **claims: Any) -> str:
        now = int(time.time())
        payload = {
            "iss": self.url,
            "aud": audience,
            "sub": "alice",
            "iat": now,
            "exp": now + 300,
            "scope": "a2a.read a2a.write",
            **claims,
        }
        payload = {k: v for k, v in payload.items() if v is not None}
        return jwt.encode(payload, self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def issuer() -> Iterator[_Issuer]:
    made = _Issuer()
    yield made
    made.close()


_AGENT_ARGS = ("--agent", "conformance", "--oidc-scope", "a2a.write")


@pytest.fixture
def agent(serve: Any, issuer: _Issuer) -> Any:
    return serve(*_AGENT_ARGS, "--oidc-issuer", issuer.url)


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, _Issuer]]:
    """One issuer and agent for all the refused tokens (each only reads; none changes the
    keys), so one process's log must keep every one of those tokens out."""
    made = _Issuer()
    server = Server([*_AGENT_ARGS, "--oidc-issuer", made.url], cwd=tmp_path_factory.mktemp("oidc"))
    try:
        yield server.wait_ready(), made
    finally:
        server.stop()
        made.close()


def _call(agent: Any, token: str | None, text: str = "complete") -> httpx.Response:
    headers = dict(V10)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(
        agent.url, json=rpc("SendMessage", {"message": message(text)}), headers=headers, timeout=10
    )


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_card_declares_what_is_enforced(agent: Any, issuer: _Issuer) -> None:
    card = httpx.get(agent.url + "/.well-known/agent-card.json", headers=V10, timeout=10).json()
    assert card["securitySchemes"]["oidc"] == {
        "openIdConnectSecurityScheme": {
            "openIdConnectUrl": issuer.url + "/.well-known/openid-configuration",
            "description": f"access tokens (JWT) from {issuer.url}",
        }
    }
    assert {"schemes": {"oidc": {"list": ["a2a.write"]}}} in card["securityRequirements"]


def test_valid_token_and_owner_is_the_subject(agent: Any, issuer: _Issuer) -> None:
    reply = _call(agent, issuer.token(agent.url))
    assert reply.status_code == 200, reply.text
    task_id = reply.json()["result"]["task"]["id"]
    get = rpc("GetTask", {"id": task_id})
    mine = httpx.post(
        agent.url,
        json=get,
        timeout=10,
        headers={**V10, "Authorization": f"Bearer {issuer.token(agent.url)}"},
    ).json()
    assert mine["result"]["id"] == task_id
    other = httpx.post(
        agent.url,
        json=get,
        timeout=10,
        headers={**V10, "Authorization": f"Bearer {issuer.token(agent.url, sub='bob')}"},
    ).json()
    assert other["error"]["code"] == -32001  # TaskNotFound: bob never sees alice's task


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda i, aud: None, "Authentication required"),
        (lambda i, aud: i.token(aud, exp=int(time.time()) - 120), "expired"),
        (lambda i, aud: i.token("https://other.example"), "another audience"),
        (lambda i, aud: i.token(aud, iss="https://evil.example"), "another issuer"),
        (lambda i, aud: i.token(aud, nbf=int(time.time()) + 600), "not valid yet"),
        (
            lambda i, aud: jwt.encode(
                {"iss": i.url, "aud": aud, "sub": "alice"},
                rsa_key(),
                algorithm="RS256",
                headers={"kid": "nope"},
            ),
            "unknown signing key 'nope'",
        ),
        (
            lambda i, aud: (
                _b64({"alg": "none", "kid": "rsa-1"})
                + "."
                + _b64({"iss": i.url, "aud": aud, "sub": "alice", "exp": int(time.time()) + 60})
                + "."
            ),
            "algorithm 'none' is not accepted",
        ),
        (lambda i, aud: _hs_confusion(i, aud), "algorithm 'HS256' is not accepted"),
        (lambda i, aud: i.token(aud)[:-6] + "AAAAAA", "signature does not verify"),
        (lambda i, aud: i.token(aud, sub=None), "no 'sub' claim"),
    ],
    ids=[
        "missing",
        "expired",
        "wrong-aud",
        "wrong-iss",
        "nbf",
        "unknown-kid",
        "alg-none",
        "hs-rs-confusion",
        "bad-signature",
        "no-subject",
    ],
)
def test_bad_tokens_are_refused(refusing: tuple[Server, _Issuer], make: Any, expected: str) -> None:
    agent, issuer = refusing
    token = make(issuer, agent.url)
    reply = _call(agent, token)
    assert reply.status_code == 401, reply.text
    assert expected in reply.json()["error"]["message"], reply.text
    assert reply.headers["www-authenticate"].startswith("Bearer")
    if token:
        assert token not in agent.text and token not in reply.text  # never echoed or logged


def _hs_confusion(issuer: _Issuer, audience: str) -> str:
    """HS256 "signed" with the issuer's public RSA key as the HMAC secret."""
    public = (
        issuer.keys["rsa-1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    now = int(time.time())
    header = _b64({"alg": "HS256", "kid": "rsa-1", "typ": "JWT"})
    body = _b64({"iss": issuer.url, "aud": audience, "sub": "alice", "exp": now + 60})
    import hashlib
    import hmac

    mac = hmac.new(public, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def test_missing_scope_is_403(agent: Any, issuer: _Issuer) -> None:
    reply = _call(agent, issuer.token(agent.url, scope="a2a.read"))
    assert reply.status_code == 403, reply.text
    assert "a2a.write" in reply.json()["error"]["message"]
    assert 'error="insufficient_scope"' in reply.headers["www-authenticate"]


def test_rotated_key_is_fetched_on_unknown_kid(agent: Any, issuer: _Issuer) -> None:
    assert _call(agent, issuer.token(agent.url)).status_code == 200
    issuer.keys["rsa-2"] = rsa_key()
    time.sleep(2.2)  # the refresh cooldown
    before = issuer.fetches
    assert _call(agent, issuer.token(agent.url, kid="rsa-2")).status_code == 200
    assert issuer.fetches == before + 1
    # Known keys are served from the cache.
    assert _call(agent, issuer.token(agent.url, kid="rsa-1")).status_code == 200
    assert issuer.fetches == before + 1


def test_jwks_file_and_owner_claim(serve: Any, issuer: _Issuer, tmp_path: Path) -> None:
    jwks = tmp_path / "issuer.jwks"
    jwks.write_text(json.dumps(issuer.jwks()))
    agent = serve(
        "--agent",
        "conformance",
        "--oidc-issuer",
        issuer.url,
        "--oidc-jwks",
        str(jwks),
        "--oidc-owner-claim",
        "email",
        "--oidc-audience",
        "agent-api",
    )
    token = issuer.token("agent-api", email="alice@example.com")
    reply = _call(agent, token)
    assert reply.status_code == 200, reply.text
    assert issuer.fetches == 0  # the file, not the issuer
    no_email = _call(agent, issuer.token("agent-api"))
    assert no_email.status_code == 401 and "no 'email' claim" in no_email.text


SKILL_AGENT = '''
"""An agent whose skills declare their own OIDC scopes."""

import attrs

from a2a_models import models as m
from a2a_models.adapters.http import current_principal, skill_allowed
from a2a_models.conformance import conformance_card
from a2a_models.server import Agent


def _skill(skill_id, scope):
    return m.AgentSkill(
        id=skill_id, name=skill_id, description=f"needs {scope}", tags=("t",),
        security_requirements=(m.SecurityRequirement(schemes={"oidc": (scope,)}),),
    )


class SkillAgent(Agent):
    def card(self, url):
        base = conformance_card(url)
        return attrs.evolve(base, skills=(_skill("chat", "chat"), _skill("admin", "admin")))

    async def execute(self, context):
        skill = context.message.text.strip()
        if not skill_allowed(self._card, skill, current_principal()):
            yield context.reject(f"skill {skill!r} needs more scopes")
            return
        yield context.reply(f"used {skill}")

    def __init__(self):
        self._card = self.card("http://x")
'''


def test_per_skill_scopes(serve: Any, issuer: _Issuer, tmp_path: Path) -> None:
    (tmp_path / "skill_agent.py").write_text(SKILL_AGENT)
    agent = serve(
        "--agent",
        "skill_agent:SkillAgent",
        "--oidc-issuer",
        issuer.url,
        env={"PYTHONPATH": f"{tmp_path}:{__import__('os').environ.get('PYTHONPATH', '')}"},
    )
    card = httpx.get(agent.url + "/.well-known/agent-card.json", headers=V10, timeout=10).json()
    assert [s["id"] for s in card["skills"]] == ["chat", "admin"]
    none = _call(agent, issuer.token(agent.url, scope="a2a.read"), "chat")
    assert none.status_code == 403, none.text
    assert "allow none of the agent's skills" in none.json()["error"]["message"]
    chat = _call(agent, issuer.token(agent.url, scope="chat"), "chat")
    assert chat.status_code == 200, chat.text
    assert "used chat" in chat.text
    admin = _call(agent, issuer.token(agent.url, scope="chat"), "admin")
    assert "used admin" not in admin.text
    assert "skill 'admin' needs more scopes" in admin.text, admin.text
    assert "TASK_STATE_REJECTED" in admin.text
    ok = _call(agent, issuer.token(agent.url, scope="chat admin"), "admin")
    assert "used admin" in ok.text, ok.text
