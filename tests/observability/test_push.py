"""Push notifications under OpenTelemetry: the webhook gets the trace context; deliveries counted."""

from __future__ import annotations

from _otel_support import Telemetry
from opentelemetry.trace import SpanKind
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_models import models as m
from a2a_models.adapters.http import HTTPServer, WebhookPushSender


async def test_webhook_requests_carry_traceparent_and_deliveries_are_counted(
    telemetry: Telemetry,
) -> None:
    received: list[dict[str, str]] = []
    statuses = [200, 400]

    async def hook(request: Request) -> Response:
        received.append(dict(request.headers))
        return Response(status_code=statuses.pop(0))

    event = m.TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=m.TaskStatus(state=m.TaskState.WORKING)
    )
    async with HTTPServer(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as http:
        config = m.TaskPushNotificationConfig(url=f"{http.url}/hook", task_id="t1")
        push = WebhookPushSender(allow_private=True, backoff=0.01)
        try:
            await push.send(config, event)
            try:
                await push.send(config, event)
            except Exception as exc:
                refused = exc
            else:
                raise AssertionError("a 400 answer was taken as delivered")
        finally:
            await push.aclose()
    spans = telemetry.named("a2a.push_notification")
    assert [s.kind for s in spans] == [SpanKind.CLIENT, SpanKind.CLIENT]
    for headers, span in zip(received, spans, strict=True):
        trace_id = format(span.context.trace_id, "032x")
        span_id = format(span.context.span_id, "016x")
        assert headers["traceparent"].startswith(f"00-{trace_id}-{span_id}-")
        assert (span.attributes or {})["a2a.task.id"] == "t1"
    counts = {
        (p.attributes["outcome"], p.attributes.get("error.type")): p.value
        for p in telemetry.points("a2a.server.push.deliveries")
    }
    assert counts == {("ok", None): 1, ("error", type(refused).__name__): 1}
