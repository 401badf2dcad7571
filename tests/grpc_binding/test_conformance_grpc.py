"""The gRPC conformance checks (``conformance/_checks/grpc_binding.py``).

The project's engine behind HTTP (card, JSON-RPC, REST) and gRPC passes every
``grpc.*`` and ``binding.*`` check; deliberately broken gRPC servicers each
fail exactly the check of what they break.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import grpc
import pytest
from _procs import free_port

from a2a_models import models as m
from a2a_models.adapters.grpc import A2AServicer, GrpcServer
from a2a_models.adapters.grpc import _server as grpc_server_module
from a2a_models.adapters.http import HTTPServer
from a2a_models.conformance import (
    ConformanceAgent,
    Status,
    SuiteReport,
    conformance_card,
    run_suite,
)
from a2a_models.errors import InvalidParamsError, JSONRPCError, TaskNotFoundError
from a2a_models.server import AgentServer

pytestmark = pytest.mark.asyncio

EXT = "https://example.com/ext/conformance-probe/v1"
GRPC_CHECKS = {
    "grpc.service-methods",
    "grpc.metadata-version",
    "grpc.metadata-extensions",
    "grpc.error-status",
    "grpc.error-info",
    "grpc.invalid-argument",
    "grpc.streaming",
    "grpc.subscribe-unknown",
    "binding.equivalence",
}


@contextlib.asynccontextmanager
async def agent(servicer: Callable[[AgentServer], A2AServicer] = A2AServicer) -> AsyncIterator[str]:
    http_port, grpc_port = free_port(), free_port()
    url = f"http://127.0.0.1:{http_port}"
    card = conformance_card(url)
    card = attrs.evolve(
        card,
        supported_interfaces=(
            *card.supported_interfaces,
            m.AgentInterface(url=f"grpc://127.0.0.1:{grpc_port}", protocol_binding="GRPC"),
        ),
        capabilities=attrs.evolve(card.capabilities, extensions=(m.AgentExtension(uri=EXT),)),
    )
    server = AgentServer(ConformanceAgent(), card)
    http = HTTPServer(server, port=http_port)
    await http.start()
    grpc_side = GrpcServer(server, port=grpc_port)
    grpc_side.servicer = servicer(server)
    await grpc_side.start()
    try:
        yield url
    finally:
        await grpc_side.stop()
        await http.stop()
        await server.aclose()


async def _report(url: str) -> SuiteReport:
    return await run_suite(url, version="1.0", include=["grpc.*", "binding.*"], stream_grace=0.5)


def _verdicts(report: SuiteReport) -> dict[str, Status]:
    return {r.id: r.status for r in report.results if r.transport == "grpc"}


async def test_the_project_server_passes_every_grpc_check() -> None:
    async with agent() as url:
        report = await _report(url)
    assert {(e.version, e.transport) for e in report.target.endpoints} >= {("1.0", "grpc")}
    verdicts = _verdicts(report)
    assert set(verdicts) == GRPC_CHECKS
    failed = {r.key: r.message for r in report.results if r.status is not Status.PASS}
    assert failed == {}
    equivalence = next(r for r in report.results if r.id == "binding.equivalence")
    assert equivalence.message == "gRPC = jsonrpc = rest"


# --------------------------------------------------------------------------- broken servicers


class NoListTasks(A2AServicer):
    def handler(self, version: str = "1.0") -> grpc.GenericRpcHandler:
        service = grpc_server_module._SERVICES[version]
        handlers = {
            name: (
                grpc.unary_stream_rpc_method_handler(self._stream_handler(service, name, rpc))
                if rpc.spec.streaming
                else grpc.unary_unary_rpc_method_handler(self._unary_handler(service, name, rpc))
            )
            for name, rpc in service.rpcs.items()
            if name != "ListTasks"
        }
        return grpc.method_handlers_generic_handler(service.name, handlers)


class IgnoresVersion(A2AServicer):
    async def _prepare(self, service: Any, rpc: Any, raw: bytes, context: Any) -> Any:
        md = [(k, v) for k, v in context.invocation_metadata() if k != "a2a-version"]

        class Context:
            def __getattr__(self, name: str) -> Any:
                return getattr(context, name)

            def invocation_metadata(self) -> Any:
                return md

        return await super()._prepare(service, rpc, raw, Context())


class _AbortHook(A2AServicer):
    """Rewrites the status an error is sent with."""

    def rewrite(self, error: JSONRPCError, code: Any, trailers: Any) -> tuple[Any, Any]:
        return code, trailers

    async def _abort(  # type: ignore[override]
        self, service: Any, context: Any, error: JSONRPCError
    ) -> None:
        code, message, trailers = grpc_server_module.status_of(error)
        code, trailers = self.rewrite(error, code, trailers)
        context.set_trailing_metadata(trailers)
        await context.abort(code, message)


_UNARY: contextvars.ContextVar[bool] = contextvars.ContextVar("unary", default=False)


class NotFoundIsInternal(_AbortHook):
    """Unary TaskNotFound answered INTERNAL (streams keep NOT_FOUND)."""

    def _unary_handler(self, service: Any, name: str, rpc: Any) -> Any:
        inner = super()._unary_handler(service, name, rpc)

        async def handle(raw: bytes, context: Any) -> bytes:
            token = _UNARY.set(True)
            try:
                return await inner(raw, context)  # type: ignore[no-any-return]
            finally:
                _UNARY.reset(token)

        return handle

    def rewrite(self, error: JSONRPCError, code: Any, trailers: Any) -> tuple[Any, Any]:
        if isinstance(error, TaskNotFoundError) and _UNARY.get():
            return grpc.StatusCode.INTERNAL, trailers
        return code, trailers


class NotFoundWithoutErrorInfo(_AbortHook):
    def rewrite(self, error: JSONRPCError, code: Any, trailers: Any) -> tuple[Any, Any]:
        return code, (() if isinstance(error, TaskNotFoundError) else trailers)


class InvalidIsUnknown(_AbortHook):
    def rewrite(self, error: JSONRPCError, code: Any, trailers: Any) -> tuple[Any, Any]:
        return (
            grpc.StatusCode.UNKNOWN if isinstance(error, InvalidParamsError) else code
        ), trailers


class EmptyFirstStreamItem(A2AServicer):
    def _stream_handler(self, service: Any, name: str, rpc: Any) -> Any:
        inner = super()._stream_handler(service, name, rpc)
        spec = rpc.spec

        async def handle(raw: bytes, context: Any) -> Any:
            first = True
            async for item in inner(raw, context):
                if first and spec.name == "SendStreamingMessage":
                    yield b""  # a StreamResponse with no payload
                first = False
                yield item

        return handle


class NoExtensionEcho(A2AServicer):
    def __init__(self, server: AgentServer) -> None:
        super().__init__(server)

        class Quiet:
            def __getattr__(self, name: str) -> Any:
                return getattr(server, name)

            def response_headers(self, headers: Any, version: str) -> dict[str, str]:
                return {}

        self.server = Quiet()  # type: ignore[assignment]


class GrpcDropsArtifacts(A2AServicer):
    def _unary_handler(self, service: Any, name: str, rpc: Any) -> Any:
        inner = super()._unary_handler(service, name, rpc)
        spec = rpc.spec
        if spec.name != "GetTask":
            return inner
        from a2a_models.adapters.grpc import from_proto, to_proto
        from a2a_models.adapters.grpc._pb import a2a_pb2 as pb

        async def handle(raw: bytes, context: Any) -> bytes:
            data = await inner(raw, context)
            task = from_proto(m.Task, pb.Task.FromString(data))
            return to_proto(attrs.evolve(task, artifacts=())).SerializeToString()

        return handle


@pytest.mark.parametrize(
    ("servicer", "broken"),
    [
        (NoListTasks, "grpc.service-methods"),
        (IgnoresVersion, "grpc.metadata-version"),
        (NoExtensionEcho, "grpc.metadata-extensions"),
        (NotFoundIsInternal, "grpc.error-status"),
        (NotFoundWithoutErrorInfo, "grpc.error-info"),
        (InvalidIsUnknown, "grpc.invalid-argument"),
        (EmptyFirstStreamItem, "grpc.streaming"),
        (GrpcDropsArtifacts, "binding.equivalence"),
    ],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
async def test_a_broken_server_fails_exactly_its_check(servicer: Any, broken: str) -> None:
    async with agent(servicer) as url:
        report = await _report(url)
    verdicts = _verdicts(report)
    failed = {k for k, v in verdicts.items() if v is Status.FAIL}
    assert failed == {broken}, {r.key: r.message for r in report.results if r.status is Status.FAIL}
