"""TLS and mutual TLS on the real ``a2a-models serve`` process, with a CA and certificates
generated in the test: the client certificate's subject owns the tasks, the card declares mTLS."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
from _keys import write_pki
from _sec_support import V10, message, rpc

from a2a_models import Message
from a2a_models.adapters.http import HTTPClient, client_tls_context, connect


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    return write_pki(tmp_path)


def _tls(pki: dict[str, Path], who: str | None) -> ssl.SSLContext:
    if who is None:
        return client_tls_context(ca=str(pki["ca"]))
    return client_tls_context(str(pki[who]), str(pki[who + "_key"]), ca=str(pki["ca"]))


def test_https_serves_and_advertises_https(serve: Any, pki: dict[str, Path]) -> None:
    server = serve(
        "--agent",
        "conformance",
        "--tls-cert",
        str(pki["server"]),
        "--tls-key",
        str(pki["server_key"]),
    )
    assert server.url.startswith("https://127.0.0.1:")
    card = httpx.get(
        server.url + "/.well-known/agent-card.json", headers=V10, verify=_tls(pki, None), timeout=10
    ).json()
    assert all(i["url"].startswith("https://") for i in card["supportedInterfaces"])
    with pytest.raises(httpx.ConnectError):  # not trusted without our CA
        httpx.get(server.url + "/.well-known/agent-card.json", timeout=10)


async def test_mutual_tls_subject_owns_the_task(serve: Any, pki: dict[str, Path]) -> None:
    server = serve(
        "--agent",
        "conformance",
        "--tls-cert",
        str(pki["server"]),
        "--tls-key",
        str(pki["server_key"]),
        "--tls-client-ca",
        str(pki["ca"]),
    )
    card = httpx.get(
        server.url + "/.well-known/agent-card.json",
        headers=V10,
        verify=_tls(pki, "client"),
        timeout=10,
    ).json()
    assert card["securitySchemes"]["mtls"] == {
        "mtlsSecurityScheme": {"description": "a client certificate from our CA"}
    }
    required = [
        r["schemes"]["mtls"] for r in card["securityRequirements"] if "mtls" in r["schemes"]
    ]
    assert required and not required[0].get("list")  # required, with no scopes

    client = await connect(server.url, tls=_tls(pki, "client"))
    try:
        assert isinstance(client, HTTPClient)
        reply = await client.send_message(Message.user("input"))
        task_id = reply.id
        same = await client.get_task(task_id)
        assert same.id == task_id
    finally:
        await client.aclose()
    # The owner is the certificate's subject: the raw request below shows it is not anonymous.
    tasks = httpx.post(
        server.url, json=rpc("ListTasks", {}), headers=V10, verify=_tls(pki, "client"), timeout=10
    ).json()
    assert [t["id"] for t in tasks["result"]["tasks"]] == [task_id]


def test_mutual_tls_refuses_missing_and_foreign_certificates(
    serve: Any, pki: dict[str, Path]
) -> None:
    server = serve(
        "--agent",
        "conformance",
        "--tls-cert",
        str(pki["server"]),
        "--tls-key",
        str(pki["server_key"]),
        "--tls-client-ca",
        str(pki["ca"]),
    )
    for who in (None, "mallory"):  # no certificate; one from another CA
        with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
            httpx.post(
                server.url,
                json=rpc("SendMessage", {"message": message("complete")}),
                headers=V10,
                verify=_tls(pki, who),
                timeout=10,
            )


def test_mtls_subjects_do_not_see_each_others_tasks(serve: Any, pki: dict[str, Path]) -> None:
    server = serve(
        "--agent",
        "conformance",
        "--tls-cert",
        str(pki["server"]),
        "--tls-key",
        str(pki["server_key"]),
        "--tls-client-ca",
        str(pki["ca"]),
    )
    alice, bob = _tls(pki, "client"), _tls(pki, "bob")
    created = httpx.post(
        server.url,
        json=rpc("SendMessage", {"message": message("input")}),
        headers=V10,
        verify=alice,
        timeout=10,
    ).json()
    task_id = created["result"]["task"]["id"]
    get = rpc("GetTask", {"id": task_id})
    mine = httpx.post(server.url, json=get, headers=V10, verify=alice, timeout=10).json()
    assert mine["result"]["id"] == task_id
    theirs = httpx.post(server.url, json=get, headers=V10, verify=bob, timeout=10).json()
    assert theirs["error"]["code"] == -32001, theirs  # TaskNotFound for bob


def test_bad_certificate_files_are_a_clear_error(serve: Any, pki: dict[str, Path]) -> None:
    server = serve(
        "--tls-cert", str(pki["server"]), "--tls-key", str(pki["client_key"]), ready=False
    )
    assert server.wait() == 2
    assert "cannot load the TLS certificate" in server.text
    assert "PRIVATE KEY" not in server.text


def test_encrypted_key_password_from_the_environment(
    serve: Any, pki: dict[str, Path], tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pki["server_key"].read_bytes(), password=None)
    password = "k3y-pass-6d2e"
    encrypted = tmp_path / "server-encrypted.key"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(password.encode()),
        )
    )
    args = ("--agent", "conformance", "--tls-cert", str(pki["server"]), "--tls-key", str(encrypted))
    server = serve(*args, env={"A2A_TLS_KEY_PASSWORD": password})
    card = httpx.get(
        server.url + "/.well-known/agent-card.json", verify=_tls(pki, None), timeout=10
    )
    assert card.status_code == 200
    assert password not in server.text
    wrong = serve(*args, env={"A2A_TLS_KEY_PASSWORD": "wrong"}, ready=False)
    assert wrong.wait() == 2 and "cannot load the TLS certificate" in wrong.text
    assert "wrong" not in wrong.text.replace("cannot load", "")


def test_cli_takes_a_client_certificate(serve: Any, pki: dict[str, Path]) -> None:
    import subprocess

    from _procs import a2a_command

    server = serve(
        "--agent",
        "conformance",
        "--tls-cert",
        str(pki["server"]),
        "--tls-key",
        str(pki["server_key"]),
        "--tls-client-ca",
        str(pki["ca"]),
    )
    tls = (
        "--cert",
        str(pki["client"]),
        "--key",
        str(pki["client_key"]),
        "--cacert",
        str(pki["ca"]),
    )

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*a2a_command(), *args],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    sent = cli("send", server.url, "complete", *tls)
    assert sent.returncode == 0, sent.stderr
    card = cli("card", server.url, "--json", *tls)
    assert card.returncode == 0 and '"mtls"' in card.stdout, card.stderr
    refused = cli("send", server.url, "complete", "--cacert", str(pki["ca"]), "--no-card")
    assert refused.returncode != 0
