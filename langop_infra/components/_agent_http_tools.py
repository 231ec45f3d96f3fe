"""A standalone LanguageAgent's HttpTools: the HttpTool objects it was handed, as references
to their specs, or, when one of them holds an Output, as the webhook tools they are (see
components/_http_credentials.py); and the refusal of a credential its pods cannot read."""

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from langop_infra.components import (
    _agent_namespace as agent_namespace,
    _http_credentials as credentials,
)
from langop_infra.config._http_tool import HttpToolSpec, with_http_tools
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._http_tool_checks import http_tool_problems
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract


def http_tool_document(
    data: dict[str, Any],
) -> tuple[list[HttpToolSpec], list[agent_namespace.Follower], list[Any]]:
    """Replace HttpTool objects in ``http_tools`` by references; return their specs,
    ``(field, HttpTool)`` of those whose namespace is an Output (taken to be the agent's,
    checked as both resolve: see components/_agent_namespace.py), and the objects. When one
    holds an Output, each is handed over as the webhook tool it is, Outputs in place (the
    same entries, in the same order, as references would give)."""
    given: list[HttpToolSpec] = []
    following: list[agent_namespace.Follower] = []
    refs: list[Any] = []
    objects: list[Any] = []
    entries: list[dict[str, Any]] = []
    items: list[Any] = data.get("http_tools") or []
    inline = any(getattr(i, "webhook_entry", None) is not None for i in items)
    for i, item in enumerate(items):
        spec = getattr(item, "spec", None)
        if not isinstance(spec, HttpToolSpec):
            refs.append(item)
            continue
        objects.append(item)
        late = isinstance(item.namespace_name, pulumi.Output)
        namespace = None if late else item.namespace_name
        if late:
            following.append((f"http_tools[{i}]", item))
        if inline and spec.enabled and spec.endpoint is not None:
            entries.append(item.webhook_entry or credentials.plain_entry(spec))
        elif not inline:
            given.append(spec.model_copy(update={"namespace": namespace}))
            refs.append({"name": spec.name, "namespace": namespace})
    if "http_tools" in data:
        data["http_tools"] = refs
    if entries:
        key = "webhookTools" if "webhookTools" in data else "webhook_tools"
        data[key] = [*(data.get(key) or []), *entries]
    _refuse_foreign_credentials(data, objects)
    return given, following, objects


def _refuse_foreign_credentials(data: Mapping[str, Any], tools: Sequence[Any]) -> None:
    """An HttpTool keeping its credential in its own Secret, handed to an agent of another
    namespace: a pod reads Secrets of its own namespace only."""
    own = data.get("namespace") or contract.DEFAULT_NAMESPACE
    problems = [
        Problem(
            f"http_tools[{i}]",
            f"HttpTool {tool.spec.name!r} keeps its credential in a Secret of namespace "
            f"{tool.namespace_name!r}, and a pod reads Secrets of its own namespace ({own!r}) "
            "only: put the agent and the tool in one namespace, or give the tool a secretRef "
            "to a Secret in the agent's namespace",
        )
        for i, tool in enumerate(tools)
        if tool.credential_owned
        and isinstance(tool.namespace_name, str)
        and isinstance(own, str)
        and tool.namespace_name != own
    ]
    if problems:
        raise SpecError(problems, subject=f"LanguageAgent {data.get('name')!r}")


def resolve_http_tools(agent: AgentSpec, given: list[HttpToolSpec]) -> AgentSpec:
    """A standalone agent's HttpTools are the HttpTool objects it was given."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    problems = http_tool_problems(given, [agent], namespace)
    if problems:
        # Paths are relative to this agent, not to a cluster's agents list.
        raise SpecError([Problem(p.path.removeprefix("agents[0]."), p.message) for p in problems])
    return with_http_tools(given, agent, namespace)
