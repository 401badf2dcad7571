"""Secrets stay off the command line and out of logs and error messages (real ``serve``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from _sec_support import V10, message, rpc

TOKEN = "tok-9c1e55d0b7a4-secret"
OTHER = "tok-2b8f-other-secret"


def _send(server: Any, token: str | None) -> httpx.Response:
    headers = dict(V10)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = rpc("SendMessage", {"message": message("complete")})
    return httpx.post(server.url, json=body, headers=headers, timeout=10)


def _cmdline(server: Any) -> str:
    return Path(f"/proc/{server.proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def test_token_file_keeps_the_secret_off_the_command_line(serve: Any, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}\n\n{OTHER}\n")
    server = serve("--agent", "conformance", "--auth-token-file", str(tokens), log_level="debug")
    assert TOKEN not in _cmdline(server)
    assert _send(server, TOKEN).status_code == 200
    assert _send(server, OTHER).status_code == 200
    refused = _send(server, "wrong-" + TOKEN)
    assert refused.status_code == 401 and TOKEN not in refused.text
    assert _send(server, None).status_code == 401
    assert TOKEN not in server.text and OTHER not in server.text, server.text
    assert "--auth-token puts" not in server.text  # no deprecation warning for the file


def test_tokens_from_the_environment(serve: Any, tmp_path: Path) -> None:
    file = tmp_path / "more-tokens"
    file.write_text(OTHER)
    server = serve(
        "--agent",
        "conformance",
        env={"A2A_AUTH_TOKENS": f"{TOKEN}, another-one", "A2A_AUTH_TOKEN_FILE": str(file)},
    )
    assert _send(server, TOKEN).status_code == 200
    assert _send(server, "another-one").status_code == 200
    assert _send(server, OTHER).status_code == 200
    assert _send(server, "nope").status_code == 401


def test_old_flag_still_works_with_a_warning(serve: Any) -> None:
    server = serve("--agent", "conformance", "--auth-token", TOKEN)
    assert _send(server, TOKEN).status_code == 200
    assert "warning: --auth-token puts the secret on the command line" in server.text
    assert TOKEN not in server.text


def test_unreadable_token_file_names_the_file_not_a_secret(serve: Any, tmp_path: Path) -> None:
    server = serve("--auth-token-file", str(tmp_path / "missing"), ready=False)
    assert server.wait() == 2
    assert "cannot read the token file" in server.text and "missing" in server.text
    empty = tmp_path / "empty"
    empty.write_text("\n")
    server = serve("--auth-token-file", str(empty), ready=False)
    assert server.wait() == 2 and "holds no token" in server.text


def test_store_url_from_the_environment(serve: Any, tmp_path: Path) -> None:
    db = tmp_path / "from-env.db"
    server = serve("--agent", "conformance", store=None, env={"A2A_STORE": f"sqlite:///{db}"})
    assert _send(server, None).status_code == 200
    assert db.exists()
    assert str(db) not in _cmdline(server)


def test_push_credentials_and_query_stay_out_of_logs(serve: Any) -> None:
    server = serve("--agent", "conformance", "--push-allow", "127.0.0.1", log_level="debug")
    send = rpc(
        "SendMessage",
        {
            "message": message("complete"),
            "configuration": {
                "taskPushNotificationConfig": {
                    "url": "http://127.0.0.1:9/hook?key=q-secret-123",
                    "token": "notif-token-456",
                    "authentication": {"scheme": "Bearer", "credentials": "push-cred-789"},
                }
            },
        },
    )
    reply = httpx.post(server.url, json=send, headers=V10, timeout=10).json()
    assert "result" in reply, reply
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and "push notification" not in server.text:
        time.sleep(0.1)
    assert "push notification" in server.text
    for secret in ("q-secret-123", "notif-token-456", "push-cred-789"):
        assert secret not in server.text, server.text
