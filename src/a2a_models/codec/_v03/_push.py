"""0.3 push configs (nested under ``pushNotificationConfig``, resource names in HTTP+JSON) and send configuration."""

from __future__ import annotations

from typing import Any

from ... import models as m
from ...models.rules import non_negative_problem
from .._gen import (
    Fail,
    Namespace,
    lose,
    type_name,
)
from .._v10 import slot_setters
from ._tables import check_str

__all__ = ["install_config_names", "install_push", "install_send_configuration"]


def install_config_names(ns: Namespace, *, strict: bool) -> None:
    """0.3 REST names a push config ``tasks/{task}/pushNotificationConfigs/{config}``."""
    new = object.__new__

    def install(cls: type[Any], id_required: bool) -> None:
        setters = slot_setters(cls)

        def structure(d: Any) -> Any:
            if d.__class__ is not dict:
                raise Fail(f"expected an object ({cls.__name__}), got {type_name(d)}")
            if strict and set(d) - {"name"}:
                raise Fail("unknown field (strict mode)", sorted(set(d) - {"name"})[0])
            name = d.get("name")
            if name.__class__ is not str:
                raise Fail(
                    "required field missing" if name is None else "expected a string", "name"
                )
            parts = name.split("/")
            if (
                len(parts) != 4
                or parts[0] != "tasks"
                or parts[2] != "pushNotificationConfigs"
                or not parts[1]
                or (id_required and not parts[3])
            ):
                raise Fail("expected tasks/{id}/pushNotificationConfigs/{config_id}", "name")
            o: Any = new(cls)
            setters["task_id"](o, parts[1])
            setters["id"](o, parts[3] or None)
            setters["tenant"](o, None)
            setters["metadata"](o, None)
            return o

        def unstructure(o: Any) -> dict[str, Any]:
            for value in (o.task_id, o.id or ""):
                if "/" in value:
                    lose(f"an id containing '/' cannot be written in a resource name: {value!r}")
            if o.tenant:
                lose("A2A 0.3 has no tenants", "tenant")
            if o.metadata is not None:
                lose("no metadata in 0.3 REST", "metadata")
            return {"name": f"tasks/{o.task_id}/pushNotificationConfigs/{o.id or ''}"}

        ns[f"_s_{cls.__name__}"], ns[f"_u_{cls.__name__}"] = structure, unstructure

    install(m.GetTaskPushNotificationConfigRequest, id_required=False)
    install(m.DeleteTaskPushNotificationConfigRequest, id_required=True)


def install_push(ns: Namespace, *, http: bool, strict: bool) -> None:
    new = object.__new__
    set_auth = slot_setters(m.AuthenticationInfo)
    set_cfg = slot_setters(m.TaskPushNotificationConfig)
    str_list = ns["_str_list"]

    def s_auth(d: Any) -> m.AuthenticationInfo:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (authentication), got {type_name(d)}")
        raw = d.get("schemes")
        try:
            schemes = str_list(raw) if raw is not None else ()
        except Fail as exc:
            exc.path.append("schemes")
            raise
        if not schemes:
            raise Fail("expected at least one scheme", "schemes")
        for i, scheme in enumerate(schemes):
            if not scheme:
                raise Fail("must not be empty", i, "schemes")
        creds = d.get("credentials")
        check_str(creds, "credentials")
        o: Any = new(m.AuthenticationInfo)
        set_auth["scheme"](o, schemes[0])
        set_auth["other_schemes"](o, schemes[1:])
        set_auth["credentials"](o, creds or None if http else creds)
        return o  # type: ignore[no-any-return]

    def u_auth(o: m.AuthenticationInfo) -> dict[str, Any]:
        r: dict[str, Any] = {"schemes": [o.scheme, *o.other_schemes]}
        if o.credentials is not None and (o.credentials or not http):
            r["credentials"] = o.credentials
        return r

    def s_inner(d: Any, task_id: str | None) -> m.TaskPushNotificationConfig:
        """The 0.3 ``PushNotificationConfig`` object."""
        if d.__class__ is not dict:
            raise Fail(f"expected an object (PushNotificationConfig), got {type_name(d)}")
        url, cid, token, auth = d.get("url"), d.get("id"), d.get("token"), d.get("authentication")
        if url.__class__ is not str or not url:
            raise Fail(
                "required field missing" if url is None else "expected a non-empty string", "url"
            )
        check_str(cid, "id")
        check_str(token, "token")
        if auth is not None:
            try:
                auth = s_auth(auth)
            except Fail as exc:
                exc.path.append("authentication")
                raise
        o: Any = new(m.TaskPushNotificationConfig)
        set_cfg["url"](o, url)
        set_cfg["id"](o, cid or None if http else cid)
        set_cfg["task_id"](o, task_id)
        set_cfg["token"](o, token or None if http else token)
        set_cfg["authentication"](o, auth)
        set_cfg["tenant"](o, None)
        return o  # type: ignore[no-any-return]

    def u_inner(o: m.TaskPushNotificationConfig) -> dict[str, Any]:
        r: dict[str, Any] = {"url": o.url}
        if o.id is not None:
            r["id"] = o.id
        if o.token is not None:
            r["token"] = o.token
        if o.authentication is not None:
            r["authentication"] = u_auth(o.authentication)
        if o.tenant:
            lose("A2A 0.3 has no tenants", "tenant")
        return r

    ns["_s_PushNotificationConfig"] = lambda d: s_inner(d, None)
    config_aliases = {"push_notification_config": "pushNotificationConfig"}

    def u_inner_only(o: m.TaskPushNotificationConfig) -> dict[str, Any]:
        # Inside a send configuration the task does not exist yet.
        return u_inner(o)

    ns["_u_PushNotificationConfig"] = u_inner_only

    def s_config(d: Any) -> m.TaskPushNotificationConfig:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (TaskPushNotificationConfig), got {type_name(d)}")
        if http and "push_notification_config" in d:
            # The proto field name, which ProtoJSON parsers also accept (and the
            # a2a-sdk's 0.3 REST client sends: it writes proto field names).
            d = ns["_unalias"](d, config_aliases)
        inner = d.get("pushNotificationConfig")
        if inner is None:
            raise Fail("required field missing", "pushNotificationConfig")
        if http:
            name = d.get("name")
            task_id = cfg_id = None
            if name is not None and name != "":
                if name.__class__ is not str:
                    raise Fail(f"expected a string, got {type_name(name)}", "name")
                parts = name.split("/")
                if len(parts) != 4 or parts[0] != "tasks" or parts[2] != "pushNotificationConfigs":
                    raise Fail("expected tasks/{id}/pushNotificationConfigs/{config_id}", "name")
                task_id, cfg_id = parts[1], parts[3]
        else:
            task_id = d.get("taskId")
            if task_id.__class__ is not str or not task_id:
                raise Fail(
                    "required field missing" if task_id is None else "expected a non-empty string",
                    "taskId",
                )
            cfg_id = None
        try:
            o = s_inner(inner, task_id)
        except Fail as exc:
            exc.path.append("pushNotificationConfig")
            raise
        if cfg_id and o.id is None:
            set_cfg["id"](o, cfg_id)
        return o

    def u_config(o: m.TaskPushNotificationConfig) -> dict[str, Any]:
        inner = u_inner(o)
        if http:
            r: dict[str, Any] = {}
            if o.task_id:
                r["name"] = f"tasks/{o.task_id}/pushNotificationConfigs/{o.id or ''}"
            r["pushNotificationConfig"] = inner
            return r
        if not o.task_id:
            lose("required by this dialect (taskId)", "taskId")
        return {"taskId": o.task_id, "pushNotificationConfig": inner}

    ns["_s_TaskPushNotificationConfig"], ns["_u_TaskPushNotificationConfig"] = s_config, u_config
    ns["_s_AuthenticationInfo"], ns["_u_AuthenticationInfo"] = s_auth, u_auth

    if not http:
        set_list = slot_setters(m.ListTaskPushNotificationConfigsResponse)

        def s_list(d: Any) -> m.ListTaskPushNotificationConfigsResponse:
            configs = ns["_list"](s_config, d)
            o: Any = new(m.ListTaskPushNotificationConfigsResponse)
            set_list["configs"](o, configs)
            set_list["next_page_token"](o, None)
            return o  # type: ignore[no-any-return]

        def u_list(o: m.ListTaskPushNotificationConfigsResponse) -> list[Any]:
            if o.next_page_token:
                lose("0.3 push-config lists have no pagination", "nextPageToken")
            return [u_config(c) for c in o.configs]

        ns["_s_ListTaskPushNotificationConfigsResponse"] = s_list
        ns["_u_ListTaskPushNotificationConfigsResponse"] = u_list


def install_send_configuration(ns: Namespace, *, http: bool) -> None:
    new = object.__new__
    set_conf = slot_setters(m.SendMessageConfiguration)
    str_list, int32 = ns["_str_list"], ns["_int32"]
    k_push = "pushNotification" if http else "pushNotificationConfig"

    aliases = {
        "accepted_output_modes": "acceptedOutputModes",
        "history_length": "historyLength",
        "push_notification": "pushNotification",
    }
    alias_keys = frozenset(aliases)

    def s_conf(d: Any) -> m.SendMessageConfiguration:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (configuration), got {type_name(d)}")
        if http and not alias_keys.isdisjoint(d):
            d = ns["_unalias"](d, aliases)
        modes = d.get("acceptedOutputModes")
        try:
            modes = str_list(modes) if modes is not None else ()
        except Fail as exc:
            exc.path.append("acceptedOutputModes")
            raise
        blocking = d.get("blocking")
        if blocking is not None and blocking is not True and blocking is not False:
            raise Fail(f"expected a boolean, got {type_name(blocking)}", "blocking")
        history = d.get("historyLength")
        if history is not None:
            try:
                history = int32(history)
            except Fail as exc:
                exc.path.append("historyLength")
                raise
            problem = non_negative_problem(history)
            if problem is not None:
                raise Fail(problem, "historyLength")
            if http and history == 0:
                history = None
        push = d.get(k_push)
        if push is not None:
            try:
                push = ns["_s_PushNotificationConfig"](push)
            except Fail as exc:
                exc.path.append(k_push)
                raise
        o: Any = new(m.SendMessageConfiguration)
        set_conf["accepted_output_modes"](o, modes)
        set_conf["task_push_notification_config"](o, push)
        set_conf["history_length"](o, history)
        # 0.3 JSON-RPC: an absent ``blocking`` means "server default", which
        # 1.0 defines as blocking. 0.3 HTTP+JSON is ProtoJSON of a proto3
        # ``bool`` without presence: writers omit ``false`` (the SDK's 0.3 REST
        # client sends ``"configuration": {}`` to ask for non-blocking), so there
        # absent is false. A missing configuration still blocks (the message has
        # presence, and a send without one asked for nothing).
        set_conf["return_immediately"](o, blocking is not True if http else blocking is False)
        return o  # type: ignore[no-any-return]

    def u_conf(o: m.SendMessageConfiguration) -> dict[str, Any]:
        r: dict[str, Any] = {}
        if o.accepted_output_modes:
            r["acceptedOutputModes"] = list(o.accepted_output_modes)
        if o.task_push_notification_config is not None:
            if o.task_push_notification_config.task_id:
                lose("a send configuration's push config has no taskId in 0.3", k_push, "taskId")
            r[k_push] = ns["_u_PushNotificationConfig"](o.task_push_notification_config)
        if o.history_length is not None:
            r["historyLength"] = o.history_length
        r["blocking"] = not o.return_immediately
        return r

    ns["_s_SendMessageConfiguration"], ns["_u_SendMessageConfiguration"] = s_conf, u_conf
