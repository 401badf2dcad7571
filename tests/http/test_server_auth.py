"""Authentication: bearer tokens, API keys, card-declared security, owner isolation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from _server_support import (
    V10,
    asgi_client,
    make_card,
    make_server,
    message_v03,
    message_v10,
    read_sse,
    rpc,
    running,
)

from a2a_models import (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTlsSecurityScheme,
    SecurityRequirement,
)
from a2a_models.adapters.http import (
    APIKeyAuthenticator,
    Authenticator,
    BearerTokenAuthenticator,
    Principal,
    authenticator_for_card,
    create_app,
)
from a2a_models.server import A2AServer

CARD = "/.well-known/agent-card.json"
ALICE = {"Authorization": "Bearer alice-token", **V10}
BOB = {"Authorization": "Bearer bob-token", **V10}


def _bearer_app(**kwargs: Any) -> Any:
    server, _ = make_server(**kwargs)
    tokens = {"alice-token": "alice", "bob-token": "bob"}
    return create_app(server, authenticator=BearerTokenAuthenticator(tokens, realm="agents"))


async def test_bearer_token() -> None:
    body = rpc("SendMessage", {"message": message_v10("echo hi")})
    async with asgi_client(_bearer_app()) as client:
        missing = await client.post("/", json=body, headers=V10)
        wrong = await client.post("/", json=body, headers={**V10, "Authorization": "Bearer nope"})
        basic = await client.post("/", json=body, headers={**V10, "Authorization": "Basic eDp5"})
        ok = await client.post("/", json=body, headers=ALICE)
        rest_missing = await client.get("/tasks", headers=V10)
        card = await client.get(CARD)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == 'Bearer realm="agents"'
    assert missing.json()["error"]["code"] == -32000
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert basic.status_code == 401
    assert ok.status_code == 200 and "message" in ok.json()["result"]
    assert rest_missing.status_code == 401
    assert rest_missing.json()["error"]["status"] == "UNAUTHENTICATED"
    assert rest_missing.headers["www-authenticate"].startswith("Bearer")
    assert card.status_code == 200  # the well-known card is public


@pytest.mark.parametrize("location", ["header", "query", "cookie"])
async def test_api_key(location: str) -> None:
    server, _ = make_server()
    auth = APIKeyAuthenticator({"k-123": "carol"}, location=location, name="api_key")
    app = create_app(server, authenticator=auth)
    async with asgi_client(app, headers=V10) as client:
        refused = await client.get("/tasks")
        if location == "header":
            accepted = await client.get("/tasks", headers={"api_key": "k-123"})
        elif location == "query":
            accepted = await client.get("/tasks", params={"api_key": "k-123"})
        else:
            client.cookies.set("api_key", "k-123")
            accepted = await client.get("/tasks")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("APIKey")
    assert f'in="{location}"' in refused.headers["www-authenticate"]
    assert accepted.status_code == 200


async def test_owner_isolation_over_rest_and_jsonrpc() -> None:
    async with running(_bearer_app()) as (_, client):
        sent = await client.post(
            "/message:send",
            json={"message": message_v10("wait"), "configuration": {"returnImmediately": True}},
            headers=ALICE,
        )
        task_id = sent.json()["task"]["id"]
        # Bob sees nothing of Alice's task: every way of reaching it is a 404.
        assert (await client.get(f"/tasks/{task_id}", headers=BOB)).status_code == 404
        assert (await client.get("/tasks", headers=BOB)).json()["tasks"] == []
        assert (await client.post(f"/tasks/{task_id}:cancel", headers=BOB)).status_code == 404
        assert (await client.get(f"/tasks/{task_id}:subscribe", headers=BOB)).status_code == 404
        push = f"/tasks/{task_id}/pushNotificationConfigs"
        created = await client.post(push, json={"url": "https://h.example"}, headers=BOB)
        assert created.status_code == 404
        rpc_get = await client.post("/", json=rpc("GetTask", {"id": task_id}), headers=BOB)
        assert rpc_get.json()["error"]["code"] == -32001
        rpc_sub = await client.post("/", json=rpc("SubscribeToTask", {"id": task_id}), headers=BOB)
        assert rpc_sub.json()["error"]["code"] == -32001
        legacy = await client.post(
            "/",
            json=rpc("tasks/get", {"id": task_id}),
            headers={"Authorization": "Bearer bob-token"},
        )
        assert legacy.json()["error"]["code"] == -32001
        # Alice does.
        assert (await client.get(f"/tasks/{task_id}", headers=ALICE)).status_code == 200
        assert len((await client.get("/tasks", headers=ALICE)).json()["tasks"]) == 1
        async with client.stream("GET", f"/tasks/{task_id}:subscribe", headers=ALICE) as sub:
            assert sub.status_code == 200
        canceled = await client.post(f"/tasks/{task_id}:cancel", headers=ALICE)
        assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"


async def test_jsonrpc_streams_carry_the_owner() -> None:
    async with running(_bearer_app()) as (_, client):
        body = rpc("SendStreamingMessage", {"message": message_v10("mine")})
        async with client.stream("POST", "/", json=body, headers=ALICE) as response:
            events = await read_sse(response)
        task_id = events[0]["data"]["result"]["task"]["id"]
        assert (await client.get(f"/tasks/{task_id}", headers=ALICE)).status_code == 200
        assert (await client.get(f"/tasks/{task_id}", headers=BOB)).status_code == 404


def _card(requirements: list[SecurityRequirement]) -> Any:
    return make_card(
        security_schemes={
            "bearer": HTTPAuthSecurityScheme(scheme="Bearer"),
            "key": APIKeySecurityScheme(location="header", name="X-API-Key"),
        },
        security_requirements=requirements,
    )


async def test_authenticator_for_card_or_and_scopes() -> None:
    tokens: Mapping[str, str | Principal] = {
        "reader": Principal("dave", scopes={"read"}),
        "nobody": Principal("erin", scopes=set()),
        "plain": "frank",
    }
    keys = {"k1": "gina"}
    either = _card(
        [
            SecurityRequirement(schemes={"bearer": ["read"]}),
            SecurityRequirement(schemes={"key": []}),
        ]
    )
    auth = authenticator_for_card(either, bearer_tokens=tokens, api_keys=keys)
    assert auth is not None
    server, _ = make_server(either)
    async with asgi_client(create_app(server, authenticator=auth), headers=V10) as client:
        none = await client.get("/tasks")
        by_token = await client.get("/tasks", headers={"Authorization": "Bearer reader"})
        unscoped = await client.get("/tasks", headers={"Authorization": "Bearer plain"})
        by_key = await client.get("/tasks", headers={"X-API-Key": "k1"})
        no_scope = await client.get("/tasks", headers={"Authorization": "Bearer nobody"})
    assert none.status_code == 401
    assert none.headers.get_list("www-authenticate") == [
        'Bearer realm="a2a"',
        'APIKey realm="a2a", in="header", name="X-API-Key"',
    ]
    assert by_token.status_code == unscoped.status_code == by_key.status_code == 200
    assert no_scope.status_code == 403
    assert no_scope.json()["error"]["status"] == "PERMISSION_DENIED"

    both = _card([SecurityRequirement(schemes={"bearer": [], "key": []})])
    auth_both = authenticator_for_card(both, bearer_tokens=tokens, api_keys=keys)
    server, _ = make_server(both)
    async with asgi_client(create_app(server, authenticator=auth_both), headers=V10) as client:
        one = await client.get("/tasks", headers={"Authorization": "Bearer plain"})
        two = await client.get(
            "/tasks", headers={"Authorization": "Bearer plain", "X-API-Key": "k1"}
        )
    assert one.status_code == 401 and two.status_code == 200


async def test_optional_requirement_and_verifier() -> None:
    async def verify(token: str) -> Principal | None:
        return Principal(token.removeprefix("jwt-")) if token.startswith("jwt-") else None

    card = _card([SecurityRequirement(schemes={"bearer": []}), SecurityRequirement(schemes={})])
    auth = authenticator_for_card(card, bearer_tokens=verify, api_keys={})
    server, _ = make_server(card)
    async with asgi_client(create_app(server, authenticator=auth), headers=V10) as client:
        anonymous = await client.get("/tasks")
        verified = await client.get("/tasks", headers={"Authorization": "Bearer jwt-hank"})
        forged = await client.get("/tasks", headers={"Authorization": "Bearer forged"})
    assert anonymous.status_code == verified.status_code == 200
    assert forged.status_code == 401


def test_authenticator_for_card_configuration_errors() -> None:
    assert authenticator_for_card(make_card()) is None
    with pytest.raises(ValueError, match="bearer_tokens"):
        authenticator_for_card(_card([SecurityRequirement(schemes={"bearer": []})]))
    undeclared = _card([SecurityRequirement(schemes={"ghost": []})])
    with pytest.raises(ValueError, match="undeclared"):
        authenticator_for_card(undeclared, bearer_tokens={}, api_keys={})
    mtls = make_card(
        security_schemes={"mtls": MutualTlsSecurityScheme()},
        security_requirements=[SecurityRequirement(schemes={"mtls": []})],
    )
    with pytest.raises(ValueError, match="authenticators="):
        authenticator_for_card(mtls)

    class ClientCert:
        async def authenticate(self, request: Any) -> Principal | None:
            return Principal("cert-user")

    custom = authenticator_for_card(mtls, authenticators={"mtls": ClientCert()})
    assert isinstance(custom, Authenticator)
    with pytest.raises(ValueError, match="location"):
        APIKeyAuthenticator({}, location="body")


async def test_server_side_authenticate_without_an_app_authenticator() -> None:
    class HeaderAuth(A2AServer):
        """Owner from a header set by a trusted proxy; delegates to an AgentServer."""

        def __init__(self) -> None:
            self.inner, _ = make_server()
            super().__init__(self.inner.card)

        async def authenticate(self, headers: Mapping[str, str]) -> str | None:
            return headers.get("x-user")

        async def on_send_message(self, request: Any, call: Any) -> Any:
            return await self.inner.on_send_message(request, call)

        async def on_get_task(self, request: Any, call: Any) -> Any:
            return await self.inner.on_get_task(request, call)

    async with asgi_client(create_app(HeaderAuth())) as client:
        sent = await client.post(
            "/", json=rpc("message/send", {"message": message_v03("x")}), headers={"x-user": "ivy"}
        )
        task_id = sent.json()["result"]["id"]
        mine = await client.get(f"/tasks/{task_id}", headers={**V10, "x-user": "ivy"})
        theirs = await client.get(f"/tasks/{task_id}", headers={**V10, "x-user": "jon"})
    assert mine.status_code == 200 and theirs.status_code == 404


async def test_cors_preflight_needs_no_credentials() -> None:
    async with asgi_client(_bearer_app()) as client:
        response = await client.options(
            "/message:send",
            headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
        )
    assert response.status_code == 200


async def test_unexpected_authenticator_failure_is_500() -> None:
    class Broken:
        async def authenticate(self, request: Any) -> Principal | None:
            raise RuntimeError("database down")

    server, _ = make_server()
    async with asgi_client(create_app(server, authenticator=Broken()), headers=V10) as client:
        response = await client.get("/tasks")
        rpc_response = await client.post("/", json=rpc("ListTasks", {}))
    assert response.status_code == rpc_response.status_code == 500
    assert rpc_response.json()["error"]["code"] == -32603
    assert "database" not in response.text + rpc_response.text
