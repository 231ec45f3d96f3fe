"""Secret Outputs go where a secret can go: into the component's own Secret, read through
``secretKeyRef``; anywhere else they are a field error.

Whether an Output is a secret is known only once it resolves (``Output.secret(...)`` and
``config.require_secret`` are not marked synchronously), so the routing is itself an Output:

- an env value given as an Output becomes an env entry whose ``value`` is the resolved value
  when it is not a secret, and whose ``valueFrom`` names the workload's Secret when it is;
  the Secret (``<workload>-env``) then holds it. A workload with such an env value always
  has that Secret (empty when none of them turns out secret).
- a header ``value`` given as an Output is moved to the header's ``secret`` (the workload's
  Secret, read through env), before validation: headers are credentials more often than not.
- an Output in any other field (labels, annotations, image, ...) fails as a field error when
  it resolves as a secret: such fields are plain text in the cluster.
- an MCP server or webhook tool URL given as an Output fails as a field error when it
  resolves with a query credential: routing it (:mod:`langop_infra.manifests._query_secrets`)
  adds an env var and a Secret key, and which objects and keys exist must not wait for an
  Output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pulumi

from langop_infra.core.problems import Problem, SpecError, loc_path
from langop_infra.manifests._query_secrets import routed_query_env, server_url, webhook_url

Path = tuple[int | str, ...]
# Fields whose Outputs are routed into a Secret, or kept there as given.
SECRET_CAPABLE = frozenset({"env", "secret_env", "secretEnv", "secret", "secrets"})


def secretness(out: pulumi.Output[object]) -> pulumi.Output[bool]:
    """Whether ``out`` is a secret, as a known, non-secret Output (known even when the value
    is not, as at preview)."""

    async def flag() -> bool:
        return await out.is_secret()

    return pulumi.Output.from_input(flag())


def secret_capable(path: Path) -> bool:
    """Whether a value at ``path`` of a component's arguments may be a secret."""
    return any(isinstance(p, str) and p in SECRET_CAPABLE for p in path)


def guarded(
    out: pulumi.Output[object], path: Path, subject: str, where: str | None
) -> pulumi.Output[Any]:
    """``out``, failing as a field error at ``path`` when it resolves as a secret."""

    def check(secret: bool) -> bool:
        if secret:
            problem = Problem(
                loc_path(path),
                "is a secret Output, but this field is plain text in the cluster (in labels, "
                "annotations, images and the like, anyone who can read the object reads it); "
                "pass a secret only as an env value, secret_env or a header",
            )
            raise SpecError([problem], subject=subject, where=where)
        return secret

    return pulumi.Output.all(secretness(out).apply(check), out).apply(lambda pair: pair[1])


def route_header_values(data: object) -> Any:
    """``data`` with each header whose ``value`` is an Output given as its ``secret``."""
    if isinstance(data, Mapping):
        mapping = cast("Mapping[str, object]", data)
        routed = {k: route_header_values(v) for k, v in mapping.items()}
        headers = routed.get("headers")
        if isinstance(headers, list):
            routed["headers"] = [_as_secret(h) for h in cast("list[object]", headers)]
        return routed
    if isinstance(data, list):
        return [route_header_values(v) for v in cast("list[object]", data)]
    return data


def _as_secret(header: object) -> Any:
    fields = _mapping(header)
    if fields is not None and isinstance(fields.get("value"), pulumi.Output):
        entry = dict(fields)
        entry["secret"] = entry.pop("value")
        return entry
    return header


def _mapping(value: object) -> dict[str, object] | None:
    """``value`` as a typed mapping, or None when it is not one."""
    if isinstance(value, Mapping):
        return dict(cast("Mapping[str, object]", value))
    return None


def route_env(spec: Any, secret_name: str) -> tuple[Any, list[pulumi.Output[Any]]]:
    """A Deployment spec whose env values given as Outputs read ``secret_name`` when they
    are secrets; and what that Secret must hold of them (an Output each of ``(name,
    value)``, the value None when not a secret)."""
    pod = _pod_spec(spec)
    if pod is None:
        return spec, []
    routed: list[pulumi.Output[Any]] = []
    containers: list[object] = []
    for container in cast("list[object]", pod["containers"]):
        fields = _mapping(container)
        env = fields.get("env") if fields is not None else None
        if not isinstance(env, list):
            containers.append(container)
            continue
        entries: list[object] = []
        for entry in cast("list[object]", env):
            item = _mapping(entry)
            if item is not None and isinstance(item.get("value"), pulumi.Output):
                name = item["name"]
                value = cast("pulumi.Output[object]", item["value"])
                flag = secretness(value)
                routed.append(
                    pulumi.Output.all(name, flag.apply(lambda s, v=value: v if s else None))
                )
                entries.append(_routed_entry(name, value, flag, secret_name))
            else:
                entries.append(entry)
        containers.append({**cast("dict[str, object]", container), "env": entries})
    template = spec["template"]
    pod_spec = {**pod, "containers": containers}
    return {**spec, "template": {**template, "spec": pod_spec}}, routed


def _routed_entry(
    name: object, value: pulumi.Output[object], flag: pulumi.Output[bool], secret_name: str
) -> dict[str, Any]:
    def ref(key: object) -> dict[str, Any]:
        return {"secretKeyRef": {"name": secret_name, "key": key}}

    return {
        "name": name,
        # Not the secret: the value only when it is not one (then unsecret is a no-op).
        "value": flag.apply(lambda secret: None if secret else pulumi.Output.unsecret(value)),
        "valueFrom": flag.apply(
            lambda secret: pulumi.Output.from_input(name).apply(ref) if secret else None
        ),
    }


def _pod_spec(spec: object) -> dict[str, object] | None:
    if not isinstance(spec, dict):
        return None
    template = _mapping(cast("dict[str, object]", spec).get("template"))
    pod = _mapping(template.get("spec")) if template is not None else None
    if pod is None or not isinstance(pod.get("containers"), list):
        return None
    return pod


def secret_data(
    owned: Mapping[str, Any], routed: Sequence[pulumi.Output[Any]]
) -> pulumi.Input[Mapping[str, Any]]:
    """A Secret's ``stringData``: every owned value and each routed one that is a secret,
    all of it a Pulumi secret."""
    if not routed:
        return {key: pulumi.Output.secret(value) for key, value in owned.items()}

    def merge(values: Sequence[Any]) -> dict[str, Any]:
        extra = {name: v for name, v in values[1:] if v is not None}
        return {**extra, **values[0]}

    given = pulumi.Output.from_input(dict(owned))
    return pulumi.Output.secret(pulumi.Output.all(given, *routed).apply(merge))


def unroutable_query_guard(
    value: Any, known: Any, resolved: Any, subject: str, where: str | None
) -> Any:
    """``value``, failing as a field error once the resolved agent spec has a query
    credential the spec known now (``known``, built from stand-ins) did not: a URL given as
    an Output. ``resolved`` is :func:`query_urls` of the spec, an Output where a URL is one:
    ``value`` waits for those alone, not for every value of the spec (an unknown label
    leaves config.yaml known)."""
    expected = routed_query_env(known)
    found = pulumi.Output.from_input(resolved)

    def check(urls: Any) -> bool:
        paths = _unrouted(urls, expected)
        if paths:
            problems = [
                Problem(
                    loc_path(path),
                    "is an Output whose query carries a credential (?apikey=, &token=, ...); "
                    "such a value is moved into the agent's Secret, which needs it now: give "
                    "the URL as a plain string, or send the credential in a header from a "
                    "Secret",
                )
                for path in paths
            ]
            raise SpecError(problems, subject=subject, where=where)
        return True

    if not _holds_output(resolved):
        return value
    # Only a flag: not secret, even when the URLs are.
    guard = pulumi.Output.unsecret(found.apply(check))
    return pulumi.Output.all(value, guard).apply(lambda pair: pair[0])


def query_urls(spec: Any) -> dict[str, list[list[str]]]:
    """The ``[name, url]`` of each URL whose query may carry a credential, by field."""
    return {
        "mcp_servers": [[s.name, str(s.url)] for s in spec.mcp_servers],
        "webhook_tools": [[t.name, str(t.url)] for t in spec.webhook_tools],
    }


def _holds_output(value: object) -> bool:
    if isinstance(value, pulumi.Output):
        return True
    if isinstance(value, dict):
        return any(_holds_output(v) for v in cast("dict[Any, Any]", value).values())
    if isinstance(value, list):
        return any(_holds_output(v) for v in cast("list[Any]", value))
    return False


def _unrouted(urls: Mapping[str, Any], expected: Mapping[str, str]) -> list[Path]:
    """Where the resolved :func:`query_urls` have query credentials ``expected`` lacks."""
    parse = {"mcp_servers": server_url, "webhook_tools": webhook_url}
    return [
        (field, i, "url")
        for field, credentials in parse.items()
        for i, (name, url) in enumerate(urls[field])
        if any(expected.get(k) != v for k, v in credentials(name, url).secrets.items())
    ]
