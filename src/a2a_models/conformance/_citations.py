"""What the A2A 0.3 specification says of each check's rule: its sections, its words, and
how strongly it says it.

A 0.3 server is judged by the 0.3 text, not 1.0's. ``CITATIONS_03`` maps the id of every
check that runs on 0.3 to a :class:`~._registry.Citation`: the 0.3 sections, a quote of
the 0.3 words (from the specification text, or, where the 0.3 prose only includes the
TypeScript types, the descriptions of its JSON Schema ``a2a.json`` or the comments of its
``a2a.proto``: the 0.3 data model, which §11.1.5 makes binding), and the strength.

``level=None`` (``ADVISORY``) marks a rule 0.3 does not state, or states more loosely
than 1.0 (no RFC 2119 keyword, a MAY, a "success is not guaranteed"): there the check's
failures are advisories, a pass with an ``advisory:`` note. A rule that is a SHOULD in
0.3 fails as a SHOULD. ``tests/conformance/test_citations.py`` checks every section
number and quote against the 0.3 files in ``../shared/a2a-spec/0.3.0``.
"""

from __future__ import annotations

from typing import Final

from ._registry import Citation, Level

__all__ = ["ADVISORY", "CITATIONS_03"]

MUST, SHOULD = Level.MUST, Level.SHOULD
#: The level of a rule 0.3 does not state (or states more loosely than 1.0).
ADVISORY: Final = None

# Sentences several checks cite.
_JSONRPC = "Client requests and server responses MUST adhere to the JSON-RPC 2.0 specification."
_ERROR_CODES = "Error handling: MUST use the error codes defined in Section 8."
_DATA = (
    "A2A data objects: MUST use the data structures defined in Section 6 for all protocol entities."
)
_STATUS = (
    "HTTP Status Codes: MUST use appropriate HTTP status codes (200, 400, 401, 403, 404, 500, "
    "etc.) that correspond to A2A error types."
)
_RESTART = (
    "A task which has reached a terminal state (completed, canceled, rejected, or failed) "
    "can't be restarted. Sending a message to such a task will result in an error."
)
_FINAL = "If true, this is the final event in the stream for this interaction."
_STREAM = (
    "Sends a message to an agent to initiate/continue a task AND subscribes the client to "
    "real-time updates for that task via Server-Sent Events (SSE)."
)
_SSE = "Each SSE data field contains a complete JSON-RPC 2.0 Response object"
_APPEND = (
    "If true, the content of this artifact should be appended to a previously sent artifact "
    "with the same ID."
)
_PUSH = "Requires the server to have AgentCard.capabilities.pushNotifications: true."
_NOT_FOUND = (
    "The specified task id does not correspond to an existing or active task. It might be "
    "invalid, expired, or already completed and purged."
)


def _c(section: str, quote: str, level: Level | None = MUST, source: str = "spec") -> Citation:
    return Citation(section=section, quote=quote, level=level, source=source)


CITATIONS_03: Final[dict[str, Citation]] = {
    # ---------------------------------------------------------------- the agent card (§5)
    "card.well-known": _c(
        "§5.3",
        "If using the well-known URI strategy, the recommended location for an agent's Agent "
        "Card is: https://{server_domain}/.well-known/agent-card.json",
        ADVISORY,
    ),
    "card.content-type": _c(
        "§5.1",
        "The Agent Card is a JSON document that describes the server's identity",
        ADVISORY,
    ),
    "card.caching": _c(
        "§3.4.3",
        "REST: May provide additional HTTP caching headers or support HTTP conditional requests.",
        ADVISORY,
    ),
    "card.valid": _c(
        "§11.1.1, §5.5",
        "Expose Agent Card: MUST provide a valid AgentCard document as defined in Section 5.",
    ),
    "card.interfaces": _c(
        "§5.6.2, §5.5.5",
        "Transport declaration: Each AgentInterface MUST accurately declare the transport "
        "protocol available at its specified URL.",
    ),
    "card.interfaces-reachable": _c(
        "§5.6.4",
        "Transport consistency: The preferredTransport value MUST be present and MUST be "
        "available at the main url.",
    ),
    "card.security-coherent": _c(
        "§5.5, §4.3",
        "Each object in the list describes one possible set of security requirements that must "
        "be present on a request.",
        source="schema",
    ),
    "card.signatures": _c(
        "§5.5.6",
        "This follows the JSON format of an RFC 7515 JSON Web Signature (JWS).",
        source="schema",
    ),
    "card.signature-verify": _c(
        "§5.5.6",
        "Represents a JSON Web Signature (JWS) used to verify the integrity of the AgentCard.",
    ),
    # ---------------------------------------------------------------- authentication (§4)
    "auth.credentials-required": _c(
        "§4.4",
        "MUST authenticate every incoming request based on the provided HTTP credentials and "
        "its declared authentication requirements from its Agent Card.",
    ),
    "auth.challenge": _c(
        "§4.4",
        "SHOULD include relevant HTTP headers (e.g., WWW-Authenticate) with 401 Unauthorized "
        "responses to indicate the required authentication scheme(s), guiding the client.",
        SHOULD,
    ),
    "auth.owner-isolation": _c(
        "§4.6",
        "Authorization logic is implementation-specific and MAY be enforced based on:",
        ADVISORY,
    ),
    "auth.not-found-indistinguishable": _c(
        "§4.6",
        "the A2A Server is responsible for authorizing the request based on the authenticated "
        "client/user identity and its own policies.",
        ADVISORY,
    ),
    # ---------------------------------------------------------------- versions
    "version.missing-header": _c(
        "§11.1.2",
        "MUST implement all of the following core methods via at least one supported transport:",
    ),
    # ---------------------------------------------------------------- JSON-RPC (§3.2.1, §6.11, §8.1)
    "jsonrpc.parse-error": _c(
        "§6.11.2, §8.1 (JSON-RPC 2.0 §5.1)",
        "If there was an error in detecting the id in the Request object (e.g. Parse "
        "error/Invalid Request), it MUST be null.",
    ),
    "jsonrpc.invalid-request": _c(
        "§8.1, §3.2.1 (JSON-RPC 2.0 §4, §5.1)",
        "The JSON payload was valid JSON, but not a valid JSON-RPC Request object.",
    ),
    "jsonrpc.method-not-found": _c(
        "§8.1, §3.2.1 (JSON-RPC 2.0 §5.1)",
        'The requested A2A RPC method (e.g., "tasks/foo") does not exist or is not supported.',
    ),
    "jsonrpc.id-echo": _c(
        "§6.11.1",
        "The Server MUST reply with the same value in the Response object if included.",
    ),
    "jsonrpc.notification": _c(
        "§6.11.1, §3.2.1 (JSON-RPC 2.0 §4.1)",
        "If it is not included it is assumed to be a notification.",
    ),
    "jsonrpc.batch": _c("§3.2.1 (JSON-RPC 2.0 §6)", _JSONRPC, SHOULD),
    "jsonrpc.empty-batch": _c("§3.2.1 (JSON-RPC 2.0 §6)", _JSONRPC, SHOULD),
    "jsonrpc.content-type": _c(
        "§3.2.1",
        "The Content-Type header for HTTP requests and responses containing JSON-RPC payloads "
        "MUST be application/json.",
    ),
    "jsonrpc.invalid-params": _c(
        "§8.1, §11.1.5",
        "The params provided for the method are invalid (e.g., wrong type, missing required "
        "field).",
    ),
    # ---------------------------------------------------------------- HTTP+JSON (§3.2.3)
    "rest.error-status": _c("§3.2.3", _STATUS),
    "rest.content-type-json": _c(
        "§3.2.3", "Content-Type: MUST use application/json for request and response bodies."
    ),
    "rest.invalid-body": _c("§3.2.3, §8.1", _STATUS),
    # ---------------------------------------------------------------- message/send (§7.1)
    "send.returns-task-or-message": _c(
        "§7.1",
        "Response: Task | Message (A message object or the current or final state of the task "
        "after processing the message).",
    ),
    # A Task's contextId is required (the Message's is not: checked in the check).
    "send.context-id": _c(
        "§6.1",
        "A server-generated identifier for maintaining context across multiple related tasks "
        "or interactions.",
        source="schema",
    ),
    "send.blocking": _c(
        "§7.1.1",
        "If true, the client will wait for the task to complete.",
        source="schema",
    ),
    "send.non-blocking": _c(
        "§7.1.1",
        "If false, the message will be non-blocking and the task will be returned immediately.",
        source="proto",
    ),
    "send.message-reply": _c(
        "§7.1",
        "Response: Task | Message (A message object or the current or final state of the task "
        "after processing the message).",
    ),
    "send.unique-task-ids": _c(
        "§6.1",
        "A unique identifier for the task, generated by the server for a new task.",
        source="schema",
    ),
    "send.unknown-task": _c("§8.2, §11.1.5", _NOT_FOUND),
    "send.terminal-task": _c("§7.1", _RESTART),
    "send.multi-turn": _c(
        "§6.4",
        "The identifier of the task this message is part of.",
        source="schema",
    ),
    "send.context-mismatch": _c(
        "§6.4",
        "The context identifier for this message, used to group related interactions.",
        ADVISORY,
        source="schema",
    ),
    "send.auth-required-message": _c(
        "§4.5",
        "The accompanying TaskStatus.message (often a DataPart) SHOULD provide details about "
        "the required secondary authentication",
        SHOULD,
    ),
    # ---------------------------------------------------------------- tasks/get (§7.3)
    "get.task": _c(
        "§7.3",
        "Retrieves the current state (including status, artifacts, and optionally history) of "
        "a previously initiated task.",
    ),
    "get.history-length": _c(
        "§7.3.1",
        "The number of most recent messages from the task's history to retrieve.",
        source="schema",
    ),
    "get.history-zero": _c(
        "§7.3.1, §7.1.1",
        "The maximum number of messages to include in the history. if 0, the history will be "
        "unlimited.",
        ADVISORY,
        source="proto",
    ),
    "get.unknown-task": _c("§8.2, §11.1.5", _NOT_FOUND),
    # ---------------------------------------------------------------- tasks/cancel (§7.4)
    "cancel.running": _c(
        "§7.4",
        "The server will attempt to cancel the task, but success is not guaranteed",
        ADVISORY,
    ),
    "cancel.terminal": _c(
        "§8.2, §11.1.5",
        "An attempt was made to cancel a task that is not in a cancelable state (e.g., it has "
        "already reached a terminal state like completed, failed, or canceled).",
    ),
    "cancel.unknown-task": _c("§8.2, §11.1.5", _NOT_FOUND),
    # ---------------------------------------------------------------- tasks/resubscribe (§7.9)
    "subscribe.unknown-task": _c("§7.9, §8.2", _NOT_FOUND),
    # ---------------------------------------------------------------- message/stream (§7.2, §3.3)
    "stream.incremental": _c("§7.2", _STREAM),
    "stream.event-ids": _c(
        "§7.9",
        "The server's behavior regarding events missed during the disconnection period (e.g., "
        "whether it attempts to backfill some missed events or only sends new ones from the "
        "point of resubscription) is implementation-dependent and not strictly defined by "
        "this specification.",
        ADVISORY,
    ),
    "stream.content-type": _c(
        "§3.3.1, §3.3.3",
        "The server responds with an HTTP 200 OK status and a Content-Type header of "
        "text/event-stream.",
    ),
    "stream.framing": _c("§3.3.1, §3.3.3", _SSE),
    "stream.events-decode": _c(
        "§7.2.1",
        "The result, which can be a Message, Task, or a streaming update event.",
        source="schema",
    ),
    "stream.first-event": _c(
        "§7.2.1",
        "The server may send multiple response objects for a single request.",
        ADVISORY,
        source="schema",
    ),
    "stream.no-event-after-terminal": _c("§7.2.2", _FINAL, source="schema"),
    # A stream cut off before its final event fails; one left open after it is an
    # advisory (0.3 says nothing of closing): decided in the check.
    "stream.closes-after-terminal": _c("§7.2.2", _FINAL, source="schema"),
    # The task's end must arrive (the final event); the order of the events before it is
    # 1.0's rule (§3.5.2), an advisory on 0.3: decided in the check.
    "stream.order": _c("§7.2, §7.2.2", _STREAM),
    "stream.artifact-chunks": _c(
        "§7.2.3", "If true, this is the final chunk of the artifact.", source="schema"
    ),
    "stream.final-flag": _c("§7.2.2", _FINAL, source="schema"),
    "stream.message-only": _c(
        "§7.2.1",
        "The server may send multiple response objects for a single request.",
        ADVISORY,
        source="schema",
    ),
    # ---------------------------------------------------------------- the task's life (§6)
    "lifecycle.ids-stable": _c("§7.2.2", "The ID of the task that was updated.", source="schema"),
    "lifecycle.artifacts-assembled": _c("§7.2.3", _APPEND, source="schema"),
    "lifecycle.terminal-is-final": _c("§6.1, §7.1", _RESTART),
    "lifecycle.history": _c(
        "§7.3",
        "Retrieves the current state (including status, artifacts, and optionally history) of "
        "a previously initiated task.",
        ADVISORY,
    ),
    # ---------------------------------------------------------------- push configs (§7.5-§7.8)
    "push.crud": _c("§7.5, §7.6, §7.7, §7.8", _PUSH),
    "push.delete-idempotent": _c(
        "§7.8",
        "Deletes an associated push notification configuration for a task.",
    ),
    "push.unknown-task": _c("§7.5, §8.2", _NOT_FOUND),
    "push.get-unknown-config": _c(
        "§7.6",
        "Retrieves the current push notification configuration for a specified task.",
    ),
    "push.rejects-unsafe-url": _c(
        "§10.2",
        "Webhook URL validation (by the A2A Server sending notifications) is crucial to "
        "prevent SSRF.",
        ADVISORY,
    ),
    # ---------------------------------------------------------------- capabilities
    "capability.push-not-claimed": _c(
        "§8.2",
        "Client attempted to use push notification features (e.g., "
        "tasks/pushNotificationConfig/set) but the server agent does not support them",
    ),
    "capability.streaming-not-claimed": _c(
        "§7.2, §8.2",
        "This method requires the server to have AgentCard.capabilities.streaming: true.",
    ),
    "capability.extended-card-not-claimed": _c(
        "§7.10",
        "This endpoint is available only if AgentCard.supportsAuthenticatedExtendedCard is true.",
    ),
    "capability.required-extension": _c(
        "§5.5.2.1",
        "If true, the client must understand and comply with the extension's requirements to "
        "interact with the agent.",
        ADVISORY,
        source="schema",
    ),
    "extended-card.get": _c(
        "§7.10",
        "Response result type (on success): AgentCard (A complete Agent Card object, which may "
        "contain additional details or skills not present in the public card).",
    ),
    # ---------------------------------------------------------------- the wire
    "wire.json-names": _c("§11.1.5, §6", _DATA),
    "robustness.malformed-bodies": _c("§8.1, §3.2.3", _ERROR_CODES),
    "robustness.oversized-body": _c(
        "§10.2",
        "Resource Management: Implement rate limiting, concurrency controls, and resource "
        "limits to protect agents from abuse or overload.",
        ADVISORY,
    ),
    # 0.3 states no rule on unknown members (a refusal is conformant), but a refusal must
    # be the client's error: a 5xx fails, as a SHOULD, the check's 1.0 strength.
    "robustness.unknown-fields": _c("§3.2.3", _STATUS, SHOULD),
}
