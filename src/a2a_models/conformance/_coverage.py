"""Which checks test each normative sentence of the specification, or why none can.

``LINKS`` maps a requirement id of the catalogue (``_catalogue_data.py``) to the
ids of the checks that test it (server checks of this suite, ``client.*`` checks
of ``conformance-client``), or to a reason string when no black-box check can
decide it. A ``MAY`` sentence that is not listed grants a freedom: there is
nothing a conformant peer could get wrong, and it is reported as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from ._catalogue import SpecRequirement, requirements

__all__ = [
    "LINKS",
    "MAY_FREEDOM",
    "CoverageRow",
    "Link",
    "coverage",
    "render_coverage",
    "requirements_of",
]

Link = tuple[str, ...] | str

MAY_FREEDOM: Final = (
    "grants a freedom (MAY): either behaviour is conformant, so there is nothing to fail"
)
DOC: Final = (
    "about the specification's own documents, schemas or SDK generation: nothing on the wire"
)
OPS: Final = (
    "an operational practice (logging, monitoring, key rotation, retention, regulation): "
    "not observable through the protocol"
)
TLS: Final = (
    "a deployment's transport security: the suite tests whatever URL it is given "
    "(often plain HTTP on loopback), so TLS is out of its reach"
)
CUSTOM: Final = "applies to custom protocol bindings only; this suite tests the standard bindings"
GRPC: Final = (
    "the gRPC binding: this HTTP suite does not speak gRPC (the project's gRPC binding is "
    "tested in tests/grpc_binding, against the official SDK)"
)
AUTHZ: Final = (
    "about permissions finer than task ownership (scopes, roles): the agent's own "
    "authorization model, which no black-box check can know"
)
WEBHOOK: Final = (
    "push delivery goes to a webhook the agent calls: a remote agent cannot reach a receiver the "
    "suite starts, and a careful agent refuses loopback/private webhook addresses (SSRF, §13.2), "
    "so delivery is tested in the project's own tests, not black-box"
)
CLIENT: Final = (
    "a client's obligation that a scripted server cannot observe (what the client does "
    "with what it received)"
)
RECEIVER: Final = "an obligation of the webhook receiver (a client), not of the agent"
INTERNAL: Final = "about internal processing or timing that leaves no trace in the responses"
UNSCRIPTED: Final = (
    "depends on agent behaviour the conformance contract does not script "
    "(the agent's own policy), so no check can provoke it"
)
SUMMARY: Final = "a heading that introduces sentences listed separately; those carry the checks"
EXTENSIONS: Final = (
    "needs an agent that declares extensions; the conformance contract declares none"
)
SIGNING: Final = (
    "how the signer builds the signed bytes; observable only as a signature that "
    "verifies, which card.signature-verify checks"
)

# The 1.0 checks that run the same tests over every binding the card declares.
_EQUIVALENCE = (
    "card.interfaces-reachable",
    "send.returns-task-or-message",
    "get.task",
    "cancel.running",
    "rest.error-format",
    "jsonrpc.error-data",
    "grpc.service-methods",
    "binding.equivalence",
)

# The checks that judge 0.3 HTTP+JSON error answers by 0.3 §3.2.3 (CheckContext.expect_error).
_REST_ERRORS_03 = (
    "rest.error-status",
    "card.interfaces-reachable",
    "get.unknown-task",
    "send.unknown-task",
    "cancel.terminal",
    "cancel.unknown-task",
    "push.unknown-task",
    "rest.invalid-body",
    "robustness.malformed-bodies",
)

LINKS: Final[Mapping[str, Link]] = {
    # §1.4 normative content
    "v1.0-1.4-2": DOC,
    "v1.0-1.4-3": DOC,
    "v1.0-1.4-4": DOC,
    "v1.0-1.4-5": DOC,
    "v1.0-1.4-6": DOC,
    # §3.1 core operations
    "v1.0-3.1.1-1": ("send.message-reply", "send.returns-task-or-message"),
    "v1.0-3.1.1-2": ("send.blocking", "send.non-blocking", "send.returns-task-or-message"),
    "v1.0-3.1.2-2": ("stream.content-type", "stream.framing", "grpc.streaming"),
    "v1.0-3.1.2-3": ("stream.first-event", "stream.message-only"),
    "v1.0-3.1.2-4": ("stream.message-only",),
    "v1.0-3.1.2-5": ("stream.first-event", "stream.order"),
    "v1.0-3.1.2-6": ("stream.closes-after-terminal", "stream.no-event-after-terminal"),
    "v1.0-3.1.2-8": ("stream.incremental",),
    "v1.0-3.1.4-1": ("list.artifacts",),
    "v1.0-3.1.4-2": ("list.response-shape",),
    "v1.0-3.1.4-3": ("list.pagination",),
    "v1.0-3.1.4-4": ("list.pagination",),
    "v1.0-3.1.4-5": ("list.sorted",),
    "v1.0-3.1.4-6": ("auth.owner-isolation",),
    "v1.0-3.1.4-7": ("list.sorted",),
    "v1.0-3.1.6-1": ("subscribe.first-event-task",),
    "v1.0-3.1.6-2": ("subscribe.first-event-task",),
    "v1.0-3.1.7-1": ("push.crud",),
    "v1.0-3.1.7-2": ("push.crud",),
    "v1.0-3.1.8-1": ("push.crud",),
    "v1.0-3.1.8-2": ("push.get-unknown-config", "auth.owner-isolation"),
    "v1.0-3.1.9-1": ("push.crud",),
    "v1.0-3.1.10-1": ("push.crud",),
    "v1.0-3.1.10-2": ("push.delete-idempotent",),
    "v1.0-3.1.11-1": ("client.auth-header",),
    "v1.0-3.1.11-3": CLIENT,
    # §3.2 parameters
    "v1.0-3.2.2-1": ("send.blocking",),
    "v1.0-3.2.2-2": ("send.blocking",),
    "v1.0-3.2.2-3": ("send.non-blocking",),
    "v1.0-3.2.4-1": ("get.history-zero",),
    "v1.0-3.2.6-1": CUSTOM,
    # §3.3 semantics
    "v1.0-3.3.2-1": ("jsonrpc.error-info", "rest.error-info", "get.unknown-task"),
    "v1.0-3.3.2-2": ("auth.credentials-required",),
    "v1.0-3.3.2-3": ("auth.challenge",),
    "v1.0-3.3.2-4": ("auth.challenge",),
    "v1.0-3.3.2-5": AUTHZ,
    "v1.0-3.3.2-6": AUTHZ,
    "v1.0-3.3.2-7": ("auth.owner-isolation", "auth.not-found-indistinguishable"),
    "v1.0-3.3.2-8": ("jsonrpc.invalid-params", "rest.invalid-body", "list.page-size-bounds"),
    "v1.0-3.3.2-9": ("jsonrpc.invalid-params",),
    "v1.0-3.3.2-10": ("jsonrpc.invalid-params",),
    "v1.0-3.3.2-11": (
        "get.unknown-task",
        "cancel.unknown-task",
        "subscribe.unknown-task",
        "push.unknown-task",
    ),
    "v1.0-3.3.2-12": ("auth.not-found-indistinguishable",),
    "v1.0-3.3.2-13": UNSCRIPTED,
    "v1.0-3.3.2-15": OPS,
    "v1.0-3.3.2-16": ("jsonrpc.error-data", "rest.error-format"),
    "v1.0-3.3.2-17": ("jsonrpc.error-data", "rest.error-format"),
    "v1.0-3.3.2-18": ("jsonrpc.error-info", "rest.error-info"),
    "v1.0-3.3.2-19": ("jsonrpc.error-info", "rest.error-info", "rest.error-format"),
    "v1.0-3.3.3-1": ("send.multi-turn", "send.terminal-task", "lifecycle.terminal-is-final"),
    "v1.0-3.3.4-1": (
        "capability.push-not-claimed",
        "capability.streaming-not-claimed",
        "capability.extended-card-not-claimed",
    ),
    "v1.0-3.3.4-2": ("capability.push-not-claimed",),
    "v1.0-3.3.4-3": ("capability.streaming-not-claimed",),
    "v1.0-3.3.4-4": ("capability.extended-card-not-claimed",),
    "v1.0-3.3.4-5": ("extended-card.get",),
    "v1.0-3.3.4-6": ("capability.required-extension",),
    "v1.0-3.3.4-7": CLIENT,
    # §3.4 multi-turn
    "v1.0-3.4.1-2": ("send.context-id",),
    "v1.0-3.4.1-4": UNSCRIPTED,
    "v1.0-3.4.1-5": CLIENT,
    "v1.0-3.4.1-6": CLIENT,
    "v1.0-3.4.1-7": UNSCRIPTED,
    "v1.0-3.4.1-9": DOC,
    "v1.0-3.4.2-1": ("send.unique-task-ids",),
    "v1.0-3.4.2-2": ("send.returns-task-or-message", "lifecycle.ids-stable"),
    "v1.0-3.4.2-3": ("client.ids",),
    "v1.0-3.4.2-4": ("send.unknown-task", "grpc.subscribe-unknown"),
    "v1.0-3.4.3-4": ("send.multi-turn",),
    "v1.0-3.4.3-5": ("send.context-mismatch",),
    "v1.0-3.4.3-6": CLIENT,
    "v1.0-3.4.3-7": UNSCRIPTED,
    "v1.0-3.4.3-8": UNSCRIPTED,
    # §3.5 delivery
    "v1.0-3.5.2-1": ("stream.order",),
    "v1.0-3.5.2-2": ("stream.order",),
    "v1.0-3.5.2-4": ("subscribe.concurrent",),
    "v1.0-3.5.2-5": ("subscribe.concurrent",),
    "v1.0-3.5.2-6": ("subscribe.close-one",),
    # §3.6 versioning
    "v1.0-3.6-1": (
        "version.patch-ignored",
        "card.protocol-version-format",
        "client.version-selection",
    ),
    "v1.0-3.6.1-1": ("client.version-header",),
    "v1.0-3.6.1-2": ("version.query-parameter",),
    "v1.0-3.6.2-1": ("version.header",),
    "v1.0-3.6.2-2": ("version.unsupported",),
    "v1.0-3.6.2-3": ("version.missing-header",),
    "v1.0-3.6.3-1": DOC,
    # §3.7 messages and artifacts
    "v1.0-3.7-1": ("lifecycle.artifacts-assembled",),
    "v1.0-3.7-2": ("lifecycle.artifacts-assembled", "send.blocking"),
    "v1.0-3.7-4": CLIENT,
    "v1.0-3.7-5": ("lifecycle.history",),
    "v1.0-3.7-6": CLIENT,
    # §4 data model
    "v1.0-4-1": _EQUIVALENCE,
    "v1.0-4.3.3-1": WEBHOOK,
    "v1.0-4.3.3-2": RECEIVER,
    "v1.0-4.3.3-3": RECEIVER,
    "v1.0-4.3.3-4": RECEIVER,
    "v1.0-4.3.3-5": RECEIVER,
    "v1.0-4.3.3-6": WEBHOOK,
    "v1.0-4.3.3-8": WEBHOOK,
    "v1.0-4.6.3-1": EXTENSIONS,
    "v1.0-4.6.3-2": EXTENSIONS,
    "v1.0-4.6.3-3": EXTENSIONS,
    "v1.0-4.6.3-4": EXTENSIONS,
    # §5 bindings
    "v1.0-5.1-1": _EQUIVALENCE,
    "v1.0-5.2-1": ("card.interfaces", "card.interfaces-reachable"),
    "v1.0-5.2-3": CLIENT,
    "v1.0-5.4-1": (
        "jsonrpc.error-info",
        "rest.error-info",
        "rest.error-format",
        "grpc.error-status",
        "grpc.invalid-argument",
    ),
    "v1.0-5.4-2": CUSTOM,
    "v1.0-5.4-3": CUSTOM,
    "v1.0-5.5-1": ("wire.json-names",),
    "v1.0-5.5-2": ("wire.json-names",),
    "v1.0-5.6.1-1": ("wire.timestamps",),
    "v1.0-5.6.1-2": ("wire.timestamps",),
    "v1.0-5.6.1-3": ("wire.timestamps", "client.request-shape"),
    "v1.0-5.6.1-5": ("wire.timestamps",),
    "v1.0-5.7-1": ("card.valid", "stream.events-decode", "send.returns-task-or-message"),
    "v1.0-5.7-2": ("jsonrpc.invalid-params", "rest.invalid-body"),
    "v1.0-5.7-3": ("card.valid",),
    "v1.0-5.7-4": ("robustness.unknown-fields",),
    "v1.0-5.8-1": CUSTOM,
    "v1.0-5.8-2": CUSTOM,
    "v1.0-5.8-3": CUSTOM,
    # §7 authentication
    "v1.0-7.1-1": TLS,
    "v1.0-7.1-2": TLS,
    "v1.0-7.2-1": CLIENT,
    "v1.0-7.4-1": ("auth.credentials-required",),
    "v1.0-7.4-2": ("auth.challenge",),
    "v1.0-7.4-3": ("auth.challenge",),
    "v1.0-7.6.1-1": UNSCRIPTED,
    "v1.0-7.6.1-2": UNSCRIPTED,
    "v1.0-7.6.1-3": ("send.auth-required-message",),
    "v1.0-7.6.1-4": UNSCRIPTED,
    "v1.0-7.6.1-5": UNSCRIPTED,
    "v1.0-7.6.1-7": UNSCRIPTED,
    "v1.0-7.6.2-1": CLIENT,
    "v1.0-7.6.2-2": CLIENT,
    "v1.0-7.6.3-1": OPS,
    "v1.0-7.6.3-2": OPS,
    "v1.0-7.6.3-3": OPS,
    # §8 agent card
    "v1.0-8.1-1": ("card.well-known",),
    "v1.0-8.3-1": ("card.interfaces",),
    "v1.0-8.3.1-1": ("card.interfaces",),
    "v1.0-8.3.1-2": ("card.interfaces", "card.interfaces-reachable"),
    "v1.0-8.3.2-1": ("client.interface-selection", "client.version-selection"),
    "v1.0-8.4.1-1": ("card.signature-verify",),
    "v1.0-8.4.1-2": SIGNING,
    "v1.0-8.4.1-3": SIGNING,
    "v1.0-8.4.1-4": SIGNING,
    "v1.0-8.4.1-5": SIGNING,
    "v1.0-8.4.1-6": SIGNING,
    "v1.0-8.4.1-7": SIGNING,
    "v1.0-8.4.1-8": ("card.signature-verify",),
    "v1.0-8.4.1-9": SIGNING,
    "v1.0-8.4.1-10": SIGNING,
    "v1.0-8.4.1-11": SIGNING,
    "v1.0-8.4.1-12": SIGNING,
    "v1.0-8.4.1-13": SIGNING,
    "v1.0-8.4.2-1": ("card.signatures",),
    "v1.0-8.4.2-2": ("card.signatures",),
    "v1.0-8.4.3-1": CLIENT,
    "v1.0-8.4.3-2": CLIENT,
    "v1.0-8.4.3-3": CLIENT,
    "v1.0-8.4.3-5": CLIENT,
    "v1.0-8.6-1": ("card.caching",),
    "v1.0-8.6.1-1": ("card.caching",),
    "v1.0-8.6.1-2": ("card.caching",),
    "v1.0-8.6.2-1": CLIENT,
    "v1.0-8.6.2-2": CLIENT,
    # §9 JSON-RPC
    "v1.0-9.2-1": ("version.header", "client.version-header"),
    "v1.0-9.2-2": ("version.header", "client.version-header"),
    "v1.0-9.2-3": EXTENSIONS,
    "v1.0-9.3-1": ("jsonrpc.invalid-request", "jsonrpc.id-echo", "client.envelope"),
    "v1.0-9.5-1": ("jsonrpc.error-data",),
    "v1.0-9.5-2": ("jsonrpc.error-info",),
    # §10 gRPC
    "v1.0-10.2-1": ("grpc.metadata-version", "grpc.metadata-extensions"),
    "v1.0-10.2-2": ("grpc.metadata-version",),
    "v1.0-10.2-3": ("grpc.metadata-extensions",),
    "v1.0-10.2-4": ("grpc.metadata-version", "grpc.metadata-extensions"),
    "v1.0-10.2-5": ("grpc.metadata-version",),
    "v1.0-10.6-1": ("grpc.error-info",),
    # §11 HTTP+JSON
    "v1.0-11.1-1": ("rest.content-type", "client.content-type"),
    "v1.0-11.2-1": ("version.header",),
    "v1.0-11.2-2": ("version.header",),
    "v1.0-11.2-3": EXTENSIONS,
    "v1.0-11.5-1": ("get.history-length", "list.filters"),
    "v1.0-11.5-2": ("get.history-length", "list.filters"),
    "v1.0-11.5-4": ("send.returns-task-or-message",),
    "v1.0-11.5-5": ("list.pagination",),
    "v1.0-11.6-1": ("rest.error-format",),
    "v1.0-11.6-2": ("rest.invalid-body",),
    "v1.0-11.6-4": ("rest.error-info",),
    "v1.0-11.7-1": ("stream.order", "stream.no-event-after-terminal"),
    # §12 custom bindings
    "v1.0-12-2": CUSTOM,
    "v1.0-12.1-1": CUSTOM,
    "v1.0-12.2-1": CUSTOM,
    "v1.0-12.3-1": CUSTOM,
    "v1.0-12.3-2": CUSTOM,
    "v1.0-12.4-1": CUSTOM,
    "v1.0-12.5-1": CUSTOM,
    "v1.0-12.6-1": CUSTOM,
    "v1.0-12.7-1": CUSTOM,
    "v1.0-12.8-1": CUSTOM,
    # §13 security considerations
    "v1.0-13.1-1": ("auth.owner-isolation",),
    "v1.0-13.1-2": ("auth.owner-isolation",),
    "v1.0-13.1-3": ("auth.owner-isolation",),
    "v1.0-13.1-4": ("auth.owner-isolation",),
    "v1.0-13.1-6": ("auth.owner-isolation",),
    "v1.0-13.1-7": ("auth.owner-isolation",),
    "v1.0-13.1-8": ("auth.owner-isolation",),
    "v1.0-13.1-9": ("auth.not-found-indistinguishable",),
    "v1.0-13.1-10": DOC,
    "v1.0-13.2-1": WEBHOOK,
    "v1.0-13.2-2": WEBHOOK,
    "v1.0-13.2-3": WEBHOOK,
    "v1.0-13.2-5": ("push.rejects-unsafe-url",),
    "v1.0-13.2-6": RECEIVER,
    "v1.0-13.2-7": RECEIVER,
    "v1.0-13.2-8": RECEIVER,
    "v1.0-13.2-9": RECEIVER,
    "v1.0-13.2-10": RECEIVER,
    "v1.0-13.2-11": RECEIVER,
    "v1.0-13.2-12": TLS,
    "v1.0-13.2-13": OPS,
    "v1.0-13.2-14": OPS,
    "v1.0-13.2-15": RECEIVER,
    "v1.0-13.3-1": ("auth.credentials-required", "extended-card.get"),
    "v1.0-13.3-2": ("auth.credentials-required",),
    "v1.0-13.3-4": UNSCRIPTED,
    "v1.0-13.3-8": DOC,
    "v1.0-13.3-9": UNSCRIPTED,
    "v1.0-13.3-10": AUTHZ,
    "v1.0-13.3-11": CLIENT,
    "v1.0-13.3-12": UNSCRIPTED,
    "v1.0-13.3-13": ("capability.extended-card-not-claimed",),
    "v1.0-13.3-14": ("extended-card.get",),
    "v1.0-13.4-1": TLS,
    "v1.0-13.4-2": TLS,
    "v1.0-13.4-3": TLS,
    "v1.0-13.4-4": TLS,
    "v1.0-13.4-5": ("jsonrpc.invalid-params", "rest.invalid-body", "robustness.malformed-bodies"),
    "v1.0-13.4-6": ("robustness.oversized-body",),
    "v1.0-13.4-7": UNSCRIPTED,
    "v1.0-13.4-8": OPS,
    "v1.0-13.4-9": OPS,
    "v1.0-13.4-10": TLS,
    "v1.0-13.4-11": OPS,
    "v1.0-13.4-12": OPS,
    "v1.0-13.4-13": OPS,
    "v1.0-13.4-14": OPS,
    "v1.0-13.4-15": OPS,
    "v1.0-13.4-16": OPS,
    "v1.0-13.4-17": UNSCRIPTED,
    "v1.0-13.4-18": UNSCRIPTED,
    "v1.0-13.4-20": OPS,
    "v1.0-13.4-21": OPS,
    "v1.0-13.4-22": OPS,
    "v1.0-13.4-23": OPS,
    "v1.0-13.4-24": CUSTOM,
    "v1.0-13.4-25": CUSTOM,
    "v1.0-13.4-26": CUSTOM,
    # §14 IANA / appendices
    "v1.0-14.1.1-1": ("robustness.malformed-bodies", "stream.events-decode"),
    "v1.0-14.1.1-2": ("jsonrpc.invalid-params", "rest.invalid-body"),
    "v1.0-14.1.1-3": INTERNAL,
    "v1.0-14.1.1-4": ("push.rejects-unsafe-url",),
    "v1.0-14.1.1-5": ("auth.credentials-required",),
    "v1.0-14.1.1-6": OPS,
    "v1.0-14.2.1-1": ("card.protocol-version-format", "client.version-header"),
    "v1.0-14.3-1": ("card.well-known", "card.valid"),
    "v1.0-14.3-2": UNSCRIPTED,
    "v1.0-14.3-3": TLS,
    "v1.0-14.3-5": CLIENT,
    "v1.0-14.3-6": ("auth.credentials-required",),
    "v1.0-14.3-7": DOC,
    "v1.0-14.3-8": DOC,
    "v1.0-14.3-9": CLIENT,
    "v1.0-14.3-11": DOC,
    # ---------------------------------------------------------------- 0.3.0
    "v0.3-3.1-1": ("card.interfaces",),
    "v0.3-3.1-2": ("card.interfaces-reachable",),
    "v0.3-3.2-1": ("card.interfaces-reachable",),
    "v0.3-3.2.1-2": ("jsonrpc.invalid-request", "jsonrpc.id-echo"),
    "v0.3-3.2.1-3": (
        "jsonrpc.invalid-request",
        "jsonrpc.id-echo",
        "jsonrpc.notification",
        "client.envelope",
    ),
    "v0.3-3.2.1-4": ("jsonrpc.content-type", "client.envelope"),
    "v0.3-3.2.2-2": GRPC,
    "v0.3-3.2.2-3": GRPC,
    "v0.3-3.2.2-4": GRPC,
    "v0.3-3.2.2-5": GRPC,
    "v0.3-3.2.2-6": GRPC,
    "v0.3-3.2.2-7": GRPC,
    "v0.3-3.2.2-8": GRPC,
    "v0.3-3.2.2-9": GRPC,
    "v0.3-3.2.3-2": ("rest.error-status", "rest.content-type-json"),
    "v0.3-3.2.3-3": ("send.returns-task-or-message", "get.task", "push.crud"),
    "v0.3-3.2.3-4": ("send.returns-task-or-message", "get.task", "cancel.running"),
    "v0.3-3.2.3-5": ("rest.content-type-json",),
    # The only rules 0.3 states on HTTP+JSON errors (no status per error type, no body
    # shape): an error status of the error's class, a JSON body, from a route that exists.
    "v0.3-3.2.3-6": _REST_ERRORS_03,
    "v0.3-3.2.3-7": ("wire.json-names", "stream.events-decode"),
    "v0.3-3.2.3-8": _EQUIVALENCE,
    "v0.3-3.2.3-9": _REST_ERRORS_03,
    "v0.3-3.2.4-2": CUSTOM,
    "v0.3-3.2.4-3": CUSTOM,
    "v0.3-3.2.4-4": CUSTOM,
    "v0.3-3.2.4-5": CUSTOM,
    "v0.3-3.3.3-1": ("stream.content-type", "stream.framing"),
    "v0.3-3.4.1-1": _EQUIVALENCE,
    "v0.3-3.4.2-1": ("card.interfaces",),
    "v0.3-3.4.2-3": CLIENT,
    "v0.3-3.4.3-2": CUSTOM,
    "v0.3-3.5.1-1": ("jsonrpc.method-not-found", "send.returns-task-or-message"),
    "v0.3-3.5.2-1": GRPC,
    "v0.3-3.5.3-1": ("send.returns-task-or-message", "get.task", "push.crud"),
    "v0.3-3.5.4-1": _EQUIVALENCE,
    "v0.3-3.5.4-2": _EQUIVALENCE,
    "v0.3-3.5.5-1": CUSTOM,
    "v0.3-4.1-1": TLS,
    "v0.3-4.1-2": TLS,
    "v0.3-4.2-1": CLIENT,
    "v0.3-4.4-1": ("auth.credentials-required",),
    "v0.3-4.4-2": ("auth.credentials-required",),
    "v0.3-4.4-3": ("auth.challenge",),
    "v0.3-4.5-1": UNSCRIPTED,
    "v0.3-4.5-2": ("send.auth-required-message",),
    "v0.3-5.1-1": ("card.well-known",),
    "v0.3-5.4-1": UNSCRIPTED,
    "v0.3-5.4-2": UNSCRIPTED,
    "v0.3-5.5.5-1": ("card.interfaces",),
    "v0.3-5.5.5-2": CUSTOM,
    "v0.3-5.6-1": ("card.interfaces",),
    "v0.3-5.6.1-1": ("card.interfaces",),
    "v0.3-5.6.1-2": ("card.interfaces-reachable",),
    "v0.3-5.6.1-3": ("card.valid",),
    "v0.3-5.6.1-4": ("card.interfaces-reachable",),
    "v0.3-5.6.2-1": ("card.interfaces",),
    "v0.3-5.6.2-2": ("card.interfaces-reachable",),
    "v0.3-5.6.2-3": ("card.interfaces",),
    "v0.3-5.6.3-1": ("client.interface-selection",),
    "v0.3-5.6.3-2": ("client.interface-selection",),
    "v0.3-5.6.3-4": CLIENT,
    "v0.3-5.6.3-5": ("client.interface-selection",),
    "v0.3-5.6.4-1": ("card.valid", "card.interfaces"),
    "v0.3-5.6.4-2": ("card.valid", "card.interfaces-reachable"),
    "v0.3-5.6.4-3": ("card.interfaces",),
    "v0.3-5.6.4-4": ("card.interfaces",),
    "v0.3-5.6.4-5": ("card.interfaces",),
    "v0.3-6.1-1": ("lifecycle.artifacts-assembled",),
    "v0.3-6.5-1": ("stream.events-decode", "send.returns-task-or-message"),
    "v0.3-6.11.1-1": ("jsonrpc.invalid-request", "client.envelope"),
    "v0.3-6.11.1-3": ("jsonrpc.id-echo", "client.envelope"),
    "v0.3-6.11.1-4": ("client.envelope",),
    "v0.3-6.11.1-5": ("jsonrpc.id-echo",),
    "v0.3-6.11.2-1": ("jsonrpc.id-echo", "jsonrpc.invalid-request"),
    "v0.3-6.11.2-2": ("jsonrpc.id-echo",),
    "v0.3-6.11.2-3": ("jsonrpc.id-echo",),
    "v0.3-6.11.2-4": ("jsonrpc.parse-error", "jsonrpc.invalid-request"),
    "v0.3-6.11.2-5": ("jsonrpc.id-echo",),
    "v0.3-6.11.2-6": ("jsonrpc.method-not-found",),
    "v0.3-6.11.2-7": ("jsonrpc.method-not-found",),
    "v0.3-6.11.2-8": ("jsonrpc.id-echo",),
    "v0.3-6.11.2-9": ("jsonrpc.method-not-found", "jsonrpc.parse-error"),
    "v0.3-6.11.2-10": ("jsonrpc.id-echo", "jsonrpc.method-not-found"),
    "v0.3-7-1": ("client.envelope",),
    "v0.3-7-2": ("jsonrpc.content-type", "stream.framing"),
    "v0.3-7.10-1": ("client.auth-header",),
    "v0.3-7.10-2": ("auth.challenge",),
    "v0.3-7.10-3": CLIENT,
    "v0.3-8.2-1": ("get.unknown-task", "cancel.terminal", "capability.push-not-claimed"),
    "v0.3-8.2-2": DOC,
    "v0.3-10.2-1": CLIENT,
    "v0.3-10.2-2": ("auth.credentials-required",),
    "v0.3-10.2-3": ("jsonrpc.invalid-params", "rest.invalid-body", "robustness.malformed-bodies"),
    "v0.3-11.1-1": SUMMARY,
    "v0.3-11.1.1-1": ("card.interfaces-reachable",),
    "v0.3-11.1.1-2": ("card.valid",),
    "v0.3-11.1.1-3": ("card.interfaces", "card.interfaces-reachable"),
    "v0.3-11.1.2-1": ("send.returns-task-or-message", "get.task", "cancel.running"),
    "v0.3-11.1.4-1": _EQUIVALENCE,
    "v0.3-11.1.5-1": ("jsonrpc.invalid-request", "jsonrpc.id-echo"),
    "v0.3-11.1.5-2": ("stream.events-decode", "wire.json-names"),
    "v0.3-11.1.5-3": ("get.unknown-task", "cancel.terminal", "cancel.unknown-task"),
    "v0.3-11.2-1": SUMMARY,
    "v0.3-11.2.1-1": ("client.envelope",),
    "v0.3-11.2.1-2": ("client.interface-selection",),
    "v0.3-11.2.1-3": ("client.interface-selection",),
    "v0.3-11.2.2-1": ("client.envelope", "client.request-shape"),
    "v0.3-11.2.2-2": ("client.error-handling",),
    "v0.3-11.2.2-3": ("client.auth-header",),
    "v0.3-11.3-1": DOC,
}


@attrs.frozen(slots=True)
class CoverageRow:
    """A requirement and what covers it: check ids, or the reason none can."""

    requirement: SpecRequirement
    checks: tuple[str, ...]
    reason: str

    @property
    def status(self) -> str:
        """``covered``, ``untestable`` (with a reason) or ``open`` (neither)."""
        return "covered" if self.checks else "untestable" if self.reason else "open"


def coverage(version: str | None = None) -> list[CoverageRow]:
    """Every catalogue entry (of ``version`` if given) with its link."""
    rows = []
    for req in requirements():
        if version is not None and req.version != version:
            continue
        link = LINKS.get(req.id)
        if link is None and req.level == "MAY":
            link = MAY_FREEDOM
        if isinstance(link, tuple):
            rows.append(CoverageRow(req, link, ""))
        else:
            rows.append(CoverageRow(req, (), link or ""))
    return rows


_REVERSE: dict[str, tuple[str, ...]] = {}


def requirements_of(check_id: str) -> tuple[str, ...]:
    """The ids of the catalogue entries ``check_id`` tests."""
    if not _REVERSE:
        acc: dict[str, list[str]] = {}
        for req_id, link in LINKS.items():
            if isinstance(link, tuple):
                for cid in link:
                    acc.setdefault(cid, []).append(req_id)
        _REVERSE.update({k: tuple(v) for k, v in acc.items()})
    return _REVERSE.get(check_id, ())


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def render_coverage(rows: Iterable[CoverageRow], *, table: bool = True) -> str:
    """The coverage table and, per version and level, the share of entries covered."""
    rows = list(rows)
    out: list[str] = []
    if table:
        for r in rows:
            req = r.requirement
            what = (
                ", ".join(r.checks) if r.checks else f"({r.reason or 'OPEN: no check, no reason'})"
            )
            out.append(
                f"{req.id:<16} {req.keyword:<11} §{req.section:<8} {'/'.join(req.bindings):<18}"
                f" {what}"
            )
            out.append(f"{'':<16} {req.title}: {req.sentence[:150]}")
        out.append("")
    out.append(
        f"{'version':<8} {'level':<7} {'entries':>7} {'covered':>8} {'untestable':>10} "
        f"{'open':>5} {'covered/all':>11} {'covered/testable':>16}"
    )
    for version in dict.fromkeys(r.requirement.version for r in rows):
        for level in ("MUST", "SHOULD", "MAY"):
            sel = [
                r for r in rows if r.requirement.version == version and r.requirement.level == level
            ]
            cov = sum(r.status == "covered" for r in sel)
            unt = sum(r.status == "untestable" for r in sel)
            opn = len(sel) - cov - unt
            out.append(
                f"{version:<8} {level:<7} {len(sel):>7} {cov:>8} {unt:>10} {opn:>5} "
                f"{_pct(cov, len(sel)):>11} {_pct(cov, len(sel) - unt):>16}"
            )
    return "\n".join(out) + "\n"
