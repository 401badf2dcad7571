"""The two A2A 0.3 dialects.

* **0.3 JSON-RPC** - the shapes of the 0.3 JSON Schema: ``kind``
  discriminators, lowercase hyphenated states, ``file.bytes``/``file.uri``,
  ``type``-tagged security schemes, the card's ``url``/``preferredTransport``/
  ``additionalInterfaces``/``protocolVersion``, nested push configs.
* **0.3 HTTP+JSON** - ProtoJSON of the 0.3 proto (``a2a.v1``): ``TASK_STATE_*``
  with ``CANCELLED``, ``ROLE_*``, ``Message.content``, ``{"file":
  {"fileWithUri": ...}}``, ``{"data": {"data": {...}}}``, resource names such
  as ``tasks/{id}/pushNotificationConfigs/{cfg}``.

Both map onto the 1.0-shaped models; what they cannot express is reported
through ``_gen.lose`` (an :class:`~a2a_models.errors.EncodeError` unless lossy).
"""

from __future__ import annotations

from typing import Any

from ... import models as m
from ...errors import quote_input
from .._gen import Fail, Loss, Namespace, compile_dialect, type_name
from .._v10 import inline_part_encoder, install_wrapper_union
from ._card import install_card
from ._parts import install_parts
from ._push import install_config_names, install_push, install_send_configuration
from ._security import install_security
from ._tables import V03_STATES, parse_resource, resource_name, specs

__all__ = ["V03_STATES", "install", "specs"]


def install(ns: Namespace, *, http: bool, strict: bool) -> None:
    """Compile a 0.3 dialect (JSON-RPC, or HTTP+JSON when ``http``) into ``ns``."""
    ns["_res"] = parse_resource
    ns["_res_name"] = resource_name
    # 0.3 data parts hold objects only (anything else goes to _u_Part: a
    # loss); the 0.3 proto's parts have no metadata.
    dict_data = " and {p}.data.__class__ is dict"
    if http:
        ns.update(
            inline_part_encoder(
                "{{'text': {p}.text}}", "{{'data': {{'data': {p}.data}}}}", data_guard=dict_data
            )
        )
    else:
        ns.update(
            inline_part_encoder(
                "{{'kind': 'text', 'text': {p}.text}}",
                "{{'kind': 'data', 'data': {p}.data}}",
                text_meta="{{'kind': 'text', 'text': {p}.text, 'metadata': {p}.metadata}}",
                data_guard=dict_data,
            )
        )
    compile_dialect(specs(http), ns, strict=strict)
    install_parts(ns, http=http, strict=strict)
    install_security(ns, http=http, strict=strict)
    install_card(ns, http=http)
    install_push(ns, http=http, strict=strict)
    install_send_configuration(ns, http=http)
    if http:
        install_config_names(ns, strict=strict)
    if http:
        keys = {
            m.Task: "task",
            m.Message: "message",
            m.TaskStatusUpdateEvent: "statusUpdate",
            m.TaskArtifactUpdateEvent: "artifactUpdate",
        }
        # The 0.3 proto names the message member ``msg`` (json_name "message").
        renamed = {"msg": "message"}
        install_wrapper_union(
            ns, "StreamResponse", keys, strict=strict, protojson=True, renamed=renamed
        )
        install_wrapper_union(
            ns,
            "SendMessageResponse",
            {m.Task: "task", m.Message: "message"},
            strict=strict,
            protojson=True,
            renamed=renamed,
        )
    else:
        _install_kind_union(
            ns,
            "StreamResponse",
            {
                "task": m.Task,
                "message": m.Message,
                "status-update": m.TaskStatusUpdateEvent,
                "artifact-update": m.TaskArtifactUpdateEvent,
            },
        )
        _install_kind_union(ns, "SendMessageResponse", {"task": m.Task, "message": m.Message})


def _install_kind_union(ns: Namespace, name: str, kinds: dict[str, type[Any]]) -> None:
    choices = ", ".join(kinds)
    by_class = {cls: cls.__name__ for cls in kinds.values()}

    def structure(d: Any) -> Any:
        if d.__class__ is not dict:
            raise Fail(f"expected an object ({name}), got {type_name(d)}")
        k = d.get("kind")
        cls = kinds.get(k) if k.__class__ is str else None
        if cls is None:
            raise Fail(f"expected kind to be one of {choices}, got {quote_input(k)}", "kind")
        return ns[f"_s_{cls.__name__}"](d)

    def unstructure(o: Any) -> Any:
        cls_name = by_class.get(type(o))
        if cls_name is None:
            raise Loss(f"{name} cannot hold a {type(o).__name__}")
        return ns[f"_u_{cls_name}"](o)

    ns[f"_s_{name}"], ns[f"_u_{name}"] = structure, unstructure
