"""WebhookPushSender: delivery to a real receiver on 127.0.0.1, retries, and the SSRF guard."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from collections.abc import Iterator

import attrs
import httpx
import pytest
from _client_support import (
    ScriptAgent,
    endless_json,
    jsonrpc_app,
    make_card,
    raw_peer,
    serve_in_thread,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_models import Message, TaskState, codec
from a2a_models import models as m
from a2a_models._outages import ReportedOutage
from a2a_models.adapters.http import (
    HTTPClient,
    UnsafeWebhookURLError,
    WebhookDeliveryError,
    WebhookPushSender,
)
from a2a_models.errors import InvalidParamsError
from a2a_models.server import AgentServer

ITEM = m.TaskStatusUpdateEvent(
    task_id="t1", context_id="c1", status=m.TaskStatus(state=TaskState.WORKING)
)


@attrs.define
class Receiver:
    url: str = ""
    received: list[tuple[dict[str, str], bytes]] = attrs.field(factory=list)
    #: Answer the next requests with these statuses (then 200).
    statuses: list[int] = attrs.field(factory=list)
    delay: float = 0.0

    def reset(self) -> None:
        self.received.clear()
        self.statuses.clear()
        self.delay = 0.0


@pytest.fixture(scope="module")
def shared_receiver() -> Iterator[Receiver]:
    receiver = Receiver()

    async def hook(request: Request) -> Response:
        receiver.received.append((dict(request.headers), await request.body()))
        if receiver.delay:
            await asyncio.sleep(receiver.delay)
        status = receiver.statuses.pop(0) if receiver.statuses else 200
        return Response(status_code=status)

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    with serve_in_thread(app) as url:
        receiver.url = url + "/hook"
        yield receiver


@pytest.fixture
def receiver(shared_receiver: Receiver) -> Receiver:
    shared_receiver.reset()
    return shared_receiver


def config(url: str, **kw: object) -> m.TaskPushNotificationConfig:
    return m.TaskPushNotificationConfig(url=url, task_id="t1", **kw)  # type: ignore[arg-type]


def sender(**kw: object) -> WebhookPushSender:
    kw.setdefault("backoff", 0.01)
    return WebhookPushSender(**kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ delivery


async def test_delivers_the_stream_response_with_credentials(receiver: Receiver) -> None:
    cfg = config(
        receiver.url,
        token="tok-1",
        authentication=m.AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )
    push = sender(allow_private=True)
    await push.send(cfg, ITEM)
    await push.aclose()
    [(headers, body)] = receiver.received
    assert headers["content-type"] == "application/a2a+json"
    assert headers["authorization"] == "Bearer secret"
    assert headers["x-a2a-notification-token"] == "tok-1"
    assert codec.decode(m.StreamResponse, body, "1.0") == ITEM
    assert codec.loads(body) == {"statusUpdate": codec.to_wire(ITEM, "1.0")}


async def test_no_credentials_no_headers(receiver: Receiver) -> None:
    await sender(allow_private=True).send(config(receiver.url), ITEM)
    headers, _ = receiver.received[0]
    assert "authorization" not in headers and "x-a2a-notification-token" not in headers


async def test_retries_server_errors_then_succeeds(receiver: Receiver) -> None:
    receiver.statuses = [500, 503]
    await sender(allow_private=True).send(config(receiver.url), ITEM)
    assert len(receiver.received) == 3


async def test_gives_up_after_max_attempts(receiver: Receiver) -> None:
    receiver.statuses = [500] * 5
    with pytest.raises(WebhookDeliveryError) as info:
        await sender(allow_private=True, max_attempts=3).send(config(receiver.url), ITEM)
    assert info.value.status_code == 500
    assert len(receiver.received) == 3


async def test_a_webhook_that_is_down_gets_one_attempt_per_notification_until_it_is_back(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    # Every notification to a dead webhook was tried max_attempts times with backoff
    # (about 4 s each by default, 43 s for one that never answers), so a chatty task's
    # notifications fell hours behind, and each was one more warning.
    push = sender(allow_private=True)
    receiver.statuses = [503] * 7
    with pytest.raises(WebhookDeliveryError, match="after 4 attempts: HTTP 503; it is down"):
        await push.send(config(receiver.url), ITEM)
    assert len(receiver.received) == 4
    for _ in range(3):  # down: one attempt each, an outage already reported
        with pytest.raises(WebhookDeliveryError, match="is down: HTTP 503") as info:
            await push.send(config(receiver.url), ITEM)
        assert isinstance(info.value, ReportedOutage)
    assert len(receiver.received) == 4 + 3
    with caplog.at_level(logging.WARNING, "a2a_models.push"):
        await push.send(config(receiver.url), ITEM)  # back: a 200 at the first attempt
    assert len(receiver.received) == 4 + 3 + 1
    assert [r.getMessage() for r in caplog.records] == [
        f"webhook {receiver.url} is back: 4 notification(s) failed while it was down"
    ]
    receiver.statuses = [503, 200]  # up again: retried as before
    await push.send(config(receiver.url), ITEM)
    assert len(receiver.received) == 4 + 3 + 1 + 2


async def test_client_errors_are_not_retried(receiver: Receiver) -> None:
    receiver.statuses = [403]
    with pytest.raises(WebhookDeliveryError, match="403"):
        await sender(allow_private=True).send(config(receiver.url), ITEM)
    assert len(receiver.received) == 1


async def test_each_request_has_a_timeout(receiver: Receiver) -> None:
    receiver.delay = 1.0
    with pytest.raises(WebhookDeliveryError, match="Timeout"):
        await sender(allow_private=True, timeout=0.1, max_attempts=2).send(
            config(receiver.url), ITEM
        )
    assert len(receiver.received) == 2


async def test_a_webhook_stalling_its_answer_is_cut_off_at_the_timeout() -> None:
    # The status line, then headers a byte every 0.1 s that never end: every read
    # gets data, so only a deadline on the whole attempt stops it.
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        while True:
            await writer.drain()
            await asyncio.sleep(0.1)
            writer.write(b"x")

    async with raw_peer(stall) as (url, requests):
        push = sender(allow_private=True, timeout=0.5, max_attempts=2)
        with pytest.raises(WebhookDeliveryError, match=r"after 2 attempts: .*within 0\.5 s"):
            await asyncio.wait_for(push.send(config(url + "/hook"), ITEM), 15)
        await push.aclose()
    assert requests == ["POST /hook"] * 2


async def test_a_webhook_that_never_answers_ties_up_its_own_connections_only(
    receiver: Receiver,
) -> None:
    # All webhooks shared httpx's pool of 100 connections, its wait counted in the
    # attempt's timeout: 100 attempts to a host that never answers filled it, and a
    # live webhook's notification timed out waiting (and took it for down).
    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3600)

    push = sender(allow_private=True, timeout=2, max_attempts=1, rate_per_task=None)
    async with raw_peer(never) as (dead, requests):
        stuck = [asyncio.create_task(push.send(config(dead + "/hook"), ITEM)) for _ in range(150)]
        async with asyncio.timeout(1.5):
            while len(requests) < 20:
                await asyncio.sleep(0.01)
        await push.send(config(receiver.url), ITEM)
        assert len(receiver.received) == 1
        assert len(requests) == 20  # the dead host's own 20 at a time; the others wait
        for task in stuck:
            task.cancel()
        await asyncio.gather(*stuck, return_exceptions=True)
    assert len(push._slots) == 0  # nothing kept for hosts no longer called
    await push.aclose()


async def test_the_body_of_a_webhook_answer_is_not_read() -> None:
    # A 200 followed by a body that never ends: the status is the answer; reading
    # the body would hold the delivery and its memory for ever.
    async with raw_peer(endless_json) as (url, requests):
        push = sender(allow_private=True, timeout=5)
        await asyncio.wait_for(push.send(config(url + "/hook"), ITEM), 10)
        await push.aclose()
    assert requests == ["POST /hook"]


async def test_rate_limit_retry_after_is_honoured_up_to_the_cap() -> None:
    answers = [httpx.Response(429, headers={"Retry-After": "120"}), httpx.Response(204)]
    http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: answers.pop(0)))
    push = WebhookPushSender(http_client=http, backoff=0.01, max_backoff=0.05, allow_private=True)
    started = asyncio.get_running_loop().time()
    await push.send(config("http://127.0.0.1:9/hook"), ITEM)
    assert 0.05 <= asyncio.get_running_loop().time() - started < 1
    await http.aclose()


async def test_the_engine_pushes_task_updates(receiver: Receiver) -> None:
    server = AgentServer(
        ScriptAgent(), make_card("http://x/"), push_sender=sender(allow_private=True)
    )
    with serve_in_thread(jsonrpc_app(server)) as url:
        async with HTTPClient(url + "/") as client:
            push = m.TaskPushNotificationConfig(url=receiver.url, token="tk")
            task = await client.send_message(
                Message.user("task"),
                configuration=m.SendMessageConfiguration(task_push_notification_config=push),
            )
            assert isinstance(task, m.Task)
            for _ in range(200):
                items = [codec.decode(m.StreamResponse, b, "1.0") for _, b in receiver.received]
                if items and getattr(items[-1], "status", None) is not None:
                    if items[-1].status.state is TaskState.COMPLETED:
                        break
                await asyncio.sleep(0.02)
    assert items[-1].status.state is TaskState.COMPLETED
    assert all(h["x-a2a-notification-token"] == "tk" for h, _ in receiver.received)
    assert {getattr(i, "task_id", None) or getattr(i, "id", None) for i in items} == {task.id}


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"token": "a" * 5000}, "token", "5000 characters long, more than the 4096"),
        ({"token": "t\r\nX-Injected: 1"}, "token", "control character '\\r'"),
        ({"token": "caf\u00e9"}, "token", "outside ASCII"),
        (
            {"authentication": m.AuthenticationInfo(scheme="Bearer\n", credentials="c")},
            "authentication.scheme",
            "control character",
        ),
        (
            # Sent as "Authorization: Bearer x c": the webhook read "x c" as the credentials.
            {"authentication": m.AuthenticationInfo(scheme="Bearer x", credentials="c")},
            "authentication.scheme",
            "contains ' ': an HTTP authentication scheme is one token",
        ),
        (
            {"authentication": m.AuthenticationInfo(scheme="Bearer", credentials="x\x00")},
            "authentication.credentials",
            "control character '\\x00'",
        ),
    ],
)
async def test_configs_whose_headers_could_never_be_sent_are_refused(
    fields: dict[str, object], field: str, says: str
) -> None:
    # Accepted, such a config failed at every delivery (httpx refuses the header;
    # a non-ASCII one even logged a traceback each time), seen only in the logs.
    server = AgentServer(
        ScriptAgent(), make_card("http://x/"), push_sender=sender(allow_private=True)
    )
    with serve_in_thread(jsonrpc_app(server)) as url:
        async with HTTPClient(url + "/") as client:
            task = await client.send_message(
                Message.user("ask"),
                configuration=m.SendMessageConfiguration(return_immediately=True),
            )
            assert isinstance(task, m.Task)
            bad = m.TaskPushNotificationConfig(url=url + "/hook", task_id=task.id, **fields)  # type: ignore[arg-type]
            with pytest.raises(
                InvalidParamsError, match=f"pushNotificationConfig.{field} .*{re.escape(says)}"
            ):
                await client.create_push_config(bad)
            assert (await client.list_push_configs(task.id)).configs == ()
            with pytest.raises(InvalidParamsError, match=f"pushNotificationConfig.{field}"):
                await client.send_message(
                    Message.user("ask"),
                    configuration=m.SendMessageConfiguration(task_push_notification_config=bad),
                )
    await server.aclose()


# ------------------------------------------------------------------------ the guard


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://127.1.2.3:8080/hook",
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.1.1/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
        "http://[::1]/",
        "http://[::]/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://[2002:7f00:1::]/",
        "https://localhost/hook",
    ],
)
async def test_private_destinations_are_refused(url: str) -> None:
    requests: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200)

    http = httpx.AsyncClient(transport=httpx.MockTransport(record))
    push = WebhookPushSender(http_client=http)
    with pytest.raises(UnsafeWebhookURLError, match="refused"):
        await push.send(config(url), ITEM)
    assert requests == []
    await http.aclose()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "gopher://x/",
        "http:///nohost",
        "http://user:pw@93.184.216.34/",
        "http://[::1/",
    ],
)
async def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(UnsafeWebhookURLError):
        await WebhookPushSender().check_url(url)


async def test_public_literals_pass() -> None:
    push = WebhookPushSender()
    assert await push.check_url("https://93.184.216.34/hook") == ["93.184.216.34"]
    assert await push.check_url("http://[2606:2800:220:1::1]:8443/") == ["2606:2800:220:1::1"]


async def test_every_resolved_address_must_be_public() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"good.test": ["93.184.216.34"], "mixed.test": ["93.184.216.34", "10.1.2.3"]}[host]

    push = WebhookPushSender(resolver=resolver)
    assert await push.check_url("http://good.test/") == ["93.184.216.34"]
    with pytest.raises(UnsafeWebhookURLError, match=r"10\.1\.2\.3"):
        await push.check_url("http://mixed.test/")


async def test_allowlist() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["10.1.2.3"]

    push = WebhookPushSender(resolver=resolver, allowlist=["10.1.0.0/16", "intra.test"])
    assert await push.check_url("http://10.1.9.9/") == ["10.1.9.9"]
    assert await push.check_url("http://other.test/") == ["10.1.2.3"]  # its address is allowed
    assert await push.check_url("http://INTRA.test/") == ["10.1.2.3"]
    with pytest.raises(UnsafeWebhookURLError):
        await push.check_url("http://10.2.0.1/")
    only_host = WebhookPushSender(resolver=resolver, allowlist=["intra.test"])
    assert await only_host.check_url("http://intra.test/") == ["10.1.2.3"]
    with pytest.raises(UnsafeWebhookURLError):
        await only_host.check_url("http://other.test/")


async def test_the_request_goes_to_the_checked_address() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200)

    http = httpx.AsyncClient(transport=httpx.MockTransport(record))
    push = WebhookPushSender(resolver=resolver, http_client=http)
    await push.send(config("https://hooks.test:8443/a?b=1"), ITEM)
    [request] = seen
    assert str(request.url) == "https://93.184.216.34:8443/a?b=1"
    assert request.headers["host"] == "hooks.test:8443"
    assert request.extensions["sni_hostname"] == "hooks.test"
    # That client's pool keeps connections by address: one verified for another name
    # at the same address must not carry this request.
    assert request.headers["connection"] == "close"
    await http.aclose()


async def test_a_refused_connection_tries_the_next_checked_address() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "2606:2800:220:1::1"]

    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        if request.url.host == "93.184.216.34":
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200)

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    push = WebhookPushSender(resolver=resolver, http_client=http, backoff=0.001)
    await push.send(config("http://hooks.test/"), ITEM)
    assert seen == ["93.184.216.34", "2606:2800:220:1::1"]
    await http.aclose()


async def test_a_host_lookup_that_never_answers_is_cut_off() -> None:
    # The lookup had no time limit: a resolver that hung held the delivery (and every
    # notification waiting behind it for that webhook) for ever.
    async def hangs(host: str, port: int) -> list[str]:
        await asyncio.sleep(3600)
        return []

    push = WebhookPushSender(resolver=hangs, resolve_timeout=0.1, max_attempts=2, backoff=0.01)
    message = r"'hooks.test' does not resolve: no answer within 0\.1 s"
    with pytest.raises(UnsafeWebhookURLError, match=message):
        await asyncio.wait_for(push.check_url("https://hooks.test/"), 10)
    # At a delivery, a lookup that did not answer is tried again (a DNS outage passes).
    with pytest.raises(WebhookDeliveryError, match=message) as failed:
        await asyncio.wait_for(push.send(config("https://hooks.test/"), ITEM), 10)
    assert push.retry_later(failed.value)
    await push.aclose()


class _Resolver:
    """Fails its first ``failures`` lookups as a DNS outage does, then answers ``answer``."""

    def __init__(self, failures: int, answer: str = "127.0.0.1") -> None:
        self.failures = failures
        self.answer = answer
        self.lookups = 0

    async def __call__(self, host: str, port: int) -> list[str]:
        self.lookups += 1
        if self.lookups <= self.failures:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return [self.answer]


async def test_a_host_that_does_not_resolve_at_delivery_is_tried_again(
    receiver: Receiver,
) -> None:
    # A lookup that failed was final: the notification was dropped (and not kept owed).
    port = httpx.URL(receiver.url).port
    url = f"http://hooks.test:{port}/hook"
    resolver = _Resolver(failures=2)
    push = sender(resolver=resolver, allowlist=["127.0.0.1"], max_attempts=4)
    await push.send(config(url), ITEM)
    assert (resolver.lookups, len(receiver.received)) == (3, 1)
    assert not push.is_down(url)

    outage = _Resolver(failures=100)
    push = sender(resolver=outage, allowlist=["127.0.0.1"], max_attempts=3)
    with pytest.raises(WebhookDeliveryError, match="does not resolve") as failed:
        await push.send(config(url), ITEM)
    assert outage.lookups == 3  # every attempt, then owed (kept for a later resume)
    assert push.retry_later(failed.value) and push.is_down(url)
    with pytest.raises(WebhookDeliveryError):
        await push.send(config(url), ITEM)
    assert outage.lookups == 4  # down: one attempt per notification, as for a connection
    await push.aclose()


async def test_a_host_resolving_to_a_forbidden_address_stays_refused_at_once() -> None:
    resolver = _Resolver(failures=1, answer="10.0.0.7")
    push = sender(resolver=resolver, max_attempts=4)
    with pytest.raises(UnsafeWebhookURLError, match=r"10\.0\.0\.7, a private address") as refused:
        await push.send(config("http://hooks.test/hook"), ITEM)
    assert resolver.lookups == 2  # the outage, then the answer: no attempt after it
    assert not push.retry_later(refused.value)
    await push.aclose()


async def test_allow_private_checks_only_the_form() -> None:
    push = WebhookPushSender(allow_private=True)
    assert await push.check_url("http://localhost:1/") == []
    with pytest.raises(UnsafeWebhookURLError):
        await push.check_url("file:///etc/passwd")


@pytest.mark.parametrize("rate", [0.0, -1.0, float("nan"), float("inf")])
def test_the_delivery_rate_must_be_a_positive_finite_number(rate: float) -> None:
    with pytest.raises(ValueError, match="rate_per_task must be positive"):
        WebhookPushSender(rate_per_task=rate)


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan"), float("inf")])
def test_connection_limits_must_be_positive_finite_numbers(seconds: float) -> None:
    from a2a_models.adapters.http import ConnectionLimits

    with pytest.raises(ValueError, match="header_timeout must be a positive number, not"):
        ConnectionLimits(header_timeout=seconds)


def test_many_tasks_notified_at_once_do_not_make_every_delivery_go_over_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The per-task buckets forget refilled ones past 4,096 keys; with more tasks than
    that notified within a few seconds, none has refilled, and every delivery went
    over all of them (20,000 tasks: 15,904 passes before; a few now)."""
    from a2a_models.adapters.http import _push

    now = [1000.0]
    monkeypatch.setattr(_push.time, "monotonic", lambda: now[0])
    buckets = _push._Buckets(rate=5.0, burst=20)
    for i in range(20_000):
        assert buckets.delay(f"task-{i}") == 0.0
    assert buckets.prunes <= 5, buckets.prunes
    now[0] += 10.0  # every bucket refilled: the next pass forgets them
    for i in range(40_000, 40_000 + 40_001):
        buckets.delay(f"task-{i}")
        now[0] += 0.001
    assert len(buckets._state) <= 4 * _push._Buckets.KEEP + 1


def test_a_notification_is_owed_again_after_a_failure_that_may_pass_not_a_refusal() -> None:
    """What the store keeps owed (sent again from it later, see ``PushDispatcher.resume``)."""
    sender = WebhookPushSender()
    assert sender.retry_later(WebhookDeliveryError("down", None))  # no connection, a timeout
    assert sender.retry_later(WebhookDeliveryError("503", 503))
    assert sender.retry_later(WebhookDeliveryError("429", 429))
    assert not sender.retry_later(WebhookDeliveryError("refused", 404))
    assert not sender.retry_later(UnsafeWebhookURLError("a private address"))
    assert not sender.retry_later(RuntimeError("a bug"))


async def test_a_send_inside_its_turn_takes_one_rate_token_for_its_first_attempt(
    receiver: Receiver,
) -> None:
    # The dispatcher waits for the rate limit's turn before it reads the config again
    # and sends: the send's first attempt uses that token, retries and later sends take
    # their own.
    receiver.statuses = [503]
    push = sender(allow_private=True, rate_per_task=1.0, burst_per_task=10)
    buckets = push._buckets
    assert buckets is not None
    taken: list[str] = []
    delay = buckets.delay
    monkey = lambda key: taken.append(key) or delay(key)  # noqa: E731
    buckets.delay = monkey  # type: ignore[method-assign]
    async with push.turn("t1") as paused:
        assert not paused  # a full bucket: no pause
        await push.send(config(receiver.url), ITEM)  # 503, then 200: two attempts
        await push.send(config(receiver.url), ITEM)
    await push.send(config(receiver.url), ITEM)
    await push.aclose()
    assert len(receiver.received) == 4
    assert taken == ["t1"] * 4  # the turn's, the retry's, and one per later send
