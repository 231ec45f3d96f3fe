"""language-operator (``langop.io/v1alpha1``): LanguageTool, LanguageAgent, LanguageModel,
LanguagePersona and LanguageCluster, as their Go types define them
(``src/api/v1alpha1/*_types.go``; docs/migration.md names the commits). Both spellings of an
agent's references are read: ``tools``/``models``/``persona`` (current) and
``toolRefs``/``modelRefs``/``personaRefs`` (older releases)."""

from __future__ import annotations

from langop_infra.offline.importers._common import (
    Converter,
    Imported,
    Json,
    Manifest,
    compact,
    drop_status,
    egress_rules,
    entry_base,
    env_map,
    items,
    leftovers,
    mapping,
    note,
    resources,
)
from langop_infra.offline.importers._model_refs import fallbacks, model_name

GROUP = "langop.io"
_DEPLOYMENT_KEYS = {"env", "resources"}
# Kept as written: the stack entry spells them as the Kubernetes container and pod do.
_CARRIED_DEPLOYMENT_KEYS = ("replicas", "command", "args", "imagePullPolicy", "nodeSelector")


def _deployment(out: Imported, m: Manifest, entry: Json) -> None:
    """``spec.deployment`` (current) or ``spec.env``/``spec.resources`` (older)."""
    spec = m.spec
    deployment = mapping(spec.get("deployment"))
    env_source, path = (
        (deployment.get("env"), "spec.deployment.env")
        if "env" in deployment
        else (spec.get("env"), "spec.env")
    )
    entry["env"], entry["secretEnv"] = env_map(out, m, env_source, path)
    entry["resources"] = resources(deployment.get("resources") or spec.get("resources"))
    for key in _CARRIED_DEPLOYMENT_KEYS:
        if key in deployment:
            entry[key] = deployment[key]
    leftovers(
        out,
        m,
        deployment,
        _DEPLOYMENT_KEYS | set(_CARRIED_DEPLOYMENT_KEYS),
        {},
        prefix="spec.deployment",
    )


def _egress(out: Imported, m: Manifest, entry: Json) -> None:
    rules = m.spec.get("egress")
    if not rules:
        return
    carried = egress_rules(out, m, rules, "spec.egress")
    dns_only = any(mapping(mapping(r).get("to")).get("dns") for r in items(rules))
    if carried and not dns_only:
        # Upstream denies external egress except what the rules name; so does restricted.
        entry["egress"] = "restricted"
        entry["egressTo"] = carried
        note(
            out,
            m,
            "spec.egress",
            "upstream also admits every in-cluster destination; restricted admits DNS, the "
            "workload's tools and egressTo only",
            "add other in-cluster destinations to egressTo ({namespace, podLabels})",
        )


_TOOL_TYPE = ("only MCP tools exist here", "an openapi tool has no equivalent; wrap it in MCP")


def language_tool(m: Manifest, out: Imported) -> None:
    spec = m.spec
    entry = entry_base(m)
    entry["image"] = spec.get("image")
    if spec.get("type", "mcp") != "mcp":
        note(out, m, "spec.type", *_TOOL_TYPE)
    entry["deploymentMode"] = spec.get("deploymentMode")
    entry["port"] = spec.get("port")
    entry["replicas"] = spec.get("replicas")
    _deployment(out, m, entry)
    _egress(out, m, entry)
    handled = {"image", "type", "deploymentMode", "port", "replicas", "deployment", "env"}
    leftovers(out, m, spec, handled | {"resources", "egress"}, {})
    drop_status(out, m)
    out.add("tools", compact(entry))


def _refs(spec: Json, current: str, older: str) -> tuple[list[Json], str]:
    if current in spec and isinstance(spec[current], list):
        return [mapping(r) for r in items(spec[current])], current
    return [mapping(r) for r in items(spec.get(older))], older


def _agent_refs(out: Imported, m: Manifest, entry: Json) -> None:
    spec = m.spec
    tools, _ = _refs(spec, "tools", "toolRefs")
    entry["tools"] = [
        compact(
            {"name": t.get("name"), "namespace": t.get("namespace"), "enabled": t.get("enabled")}
        )
        for t in tools
    ]
    models, key = _refs(spec, "models", "modelRefs")
    entry["models"] = [
        compact(
            {
                "name": model_name(out, m, f"spec.{key}[{i}].name", r.get("name")),
                "role": r.get("role"),
                "priority": r.get("priority"),
            }
        )
        for i, r in enumerate(models)
    ]
    persona = spec.get("persona")
    personas = [mapping(p) for p in items(spec.get("personaRefs"))]
    if not persona and personas:
        persona = personas[0].get("name")
        if len(personas) > 1:
            note(
                out,
                m,
                "spec.personaRefs[1:]",
                "an agent has one persona here",
                f"only {persona!r} was kept; merge the others into it",
            )
    entry["persona"] = persona


def _workspace(out: Imported, m: Manifest, entry: Json) -> None:
    workspace = mapping(m.spec.get("workspace"))
    if not workspace or workspace.get("enabled") is False:
        return
    access = workspace.get("accessMode")
    entry["workspace"] = compact(
        {
            "size": workspace.get("size"),
            "storageClassName": workspace.get("storageClassName"),
            "accessModes": [access] if access else None,
            "initialFiles": workspace.get("initialFiles"),
            # language-operator's field, spelled as its CRD spells it (the one place
            # tests/test_shared_text.py lets that word through).
            "initialFilesConfigMap": mapping(workspace.get("seedConfigMapRef")).get("name"),
        }
    )
    if workspace.get("mountPath"):
        entry["workspacePath"] = workspace["mountPath"]
    if workspace.get("retain"):
        note(
            out,
            m,
            "spec.workspace.retain",
            "Pulumi deletes what it created",
            "protect the claim with a Pulumi `protect` or `retainOnDelete` option",
        )


_AGENT_REASONS: dict[str, tuple[str, str]] = {
    "executionMode": (
        "every agent here is a long-running Deployment",
        "run scheduled work inside the agent, or as your own CronJob",
    ),
    "runtime": (
        "LanguageAgentRuntime presets have no equivalent",
        "copy the runtime's image, env and ports into the agent",
    ),
    "credentials": (
        "generated credentials have no equivalent; a secret value is never copied",
        "put each in a Secret and give it with secretEnv",
    ),
    "networkPolicies": (
        "agent-level policy rules differ",
        "use allowFrom for ingress and egress/egressTo for egress",
    ),
}


def language_agent(m: Manifest, out: Imported) -> None:
    spec = m.spec
    entry = entry_base(m)
    entry["image"] = spec.get("image") or out.agent_image
    if not entry["image"]:
        note(
            out,
            m,
            "spec.image",
            "the agent has no image (a runtime preset gives it upstream)",
            "set image, or pass --agent-image",
        )
    _agent_refs(out, m, entry)
    entry["instructions"] = spec.get("instructions")
    _workspace(out, m, entry)
    entry["ports"] = [
        compact({"name": p.get("name"), "port": p.get("port"), "protocol": p.get("protocol")})
        for p in map(mapping, items(spec.get("ports")))
    ]
    _deployment(out, m, entry)
    handled = {
        "image",
        "tools",
        "toolRefs",
        "models",
        "modelRefs",
        "persona",
        "personaRefs",
        "instructions",
        "workspace",
        "ports",
        "deployment",
        "env",
        "resources",
    }
    leftovers(out, m, spec, handled, _AGENT_REASONS)
    drop_status(out, m)
    out.add("agents", compact(entry))


def _model_secret(out: Imported, m: Manifest, entry: Json) -> None:
    ref = mapping(m.spec.get("apiKeySecretRef"))
    if not ref:
        return
    key = ref.get("key") or "api-key"  # the CRD's default
    entry["apiKey"] = {"secretKeyRef": {"name": ref.get("name"), "key": key}}
    out.secret(str(ref.get("name")))
    if ref.get("namespace") and ref.get("namespace") != m.namespace:
        note(
            out,
            m,
            "spec.apiKeySecretRef.namespace",
            "a Secret is read in its own namespace",
            "copy the Secret into the stack's namespace",
        )


_MODEL_REASONS: dict[str, tuple[str, str]] = {
    "loadBalancing": (
        "one endpoint per model here",
        "declare one model per endpoint and list the others in fallbacks",
    ),
    "caching": ("the gateway caches nothing by default", "configure LiteLLM's cache yourself"),
    "costTracking": ("no cost tracking here", "use LiteLLM's spend tracking"),
    "regions": ("no regions here", "declare one model per region"),
    "observability": ("telemetry is cluster-wide here", "set defaults.observability"),
    "clusterRef": ("the stack is the cluster", "nothing to do"),
}


def _model_fields(spec: Json) -> Json:
    configuration = {
        k: v
        for k, v in mapping(spec.get("configuration")).items()
        if k in ("maxTokens", "temperature", "topP", "stopSequences")
    }
    retry = mapping(spec.get("retryPolicy"))
    limits = mapping(spec.get("rateLimits"))
    return {
        "provider": spec.get("provider"),
        "modelName": spec.get("modelName"),
        "endpoint": spec.get("endpoint"),
        "timeout": spec.get("timeout"),
        "retryPolicy": {"maxAttempts": retry["maxAttempts"]} if "maxAttempts" in retry else None,
        "configuration": configuration,
        "rateLimits": {
            k: v for k, v in limits.items() if k in ("requestsPerMinute", "tokensPerMinute")
        },
    }


def language_model(m: Manifest, out: Imported) -> None:
    spec = m.spec
    entry = {**entry_base(m), **_model_fields(spec)}
    entry["name"] = model_name(out, m, "metadata.name", m.name)
    entry["fallbacks"] = fallbacks(out, m)
    _model_secret(out, m, entry)
    _egress(out, m, entry)
    entry.pop("egress", None)  # a model's egress is the gateway's: egressTo alone says it
    for key in ("retryPolicy", "configuration", "rateLimits"):
        extra = set(mapping(spec.get(key))) - {
            "maxAttempts",
            "maxTokens",
            "temperature",
            "topP",
            "stopSequences",
            "requestsPerMinute",
            "tokensPerMinute",
        }
        for name in sorted(extra):
            note(
                out,
                m,
                f"spec.{key}.{name}",
                "the gateway takes no such setting here",
                "leave it out, or configure LiteLLM directly",
            )
    handled = {
        "provider",
        "modelName",
        "endpoint",
        "timeout",
        "retryPolicy",
        "configuration",
        "rateLimits",
        "fallbacks",
        "apiKeySecretRef",
        "egress",
    }
    leftovers(out, m, spec, handled, _MODEL_REASONS)
    drop_status(out, m)
    out.add("models", compact(entry))


def language_persona(m: Manifest, out: Imported) -> None:
    spec = m.spec
    entry: Json = {"name": m.name}
    for key in ("tone", "personality", "expertise"):
        entry[key] = spec.get(key)
    prompt = spec.get("systemPrompt")
    if prompt:
        note(
            out,
            m,
            "spec.systemPrompt",
            "a persona here is tone, personality and expertise",
            "add the prompt to the instructions of each agent that uses this persona",
        )
    handled = {
        "tone",
        "personality",
        "expertise",
        "systemPrompt",
        "displayName",
        "description",
        "language",
    }
    for key in ("displayName", "description", "language"):
        if key in spec:
            note(
                out,
                m,
                f"spec.{key}",
                "not part of a persona here",
                "fold it into personality or expertise if the agent should see it",
            )
    leftovers(out, m, spec, handled, {})
    drop_status(out, m)
    out.add("personas", compact(entry))


def language_cluster(m: Manifest, out: Imported) -> None:
    # Current upstream's LanguageCluster is cluster-scoped and named after the namespace it
    # manages (agents read the one named after theirs); older ones were namespaced.
    out.part_of = m.name
    out.cluster_namespace = m.namespace or m.name
    leftovers(
        out,
        m,
        m.spec,
        set(),
        {
            "domain": ("no ingress is made here", "expose agents with your own Ingress"),
            "gateway": ("the model gateway is set cluster-wide", "set defaults.modelGateway"),
        },
    )
    drop_status(out, m)


CONVERTERS: dict[tuple[str, str], Converter] = {
    (GROUP, "LanguageTool"): language_tool,
    (GROUP, "LanguageAgent"): language_agent,
    (GROUP, "LanguageModel"): language_model,
    (GROUP, "LanguagePersona"): language_persona,
    (GROUP, "LanguageCluster"): language_cluster,
}
