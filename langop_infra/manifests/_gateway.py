"""The namespace's model gateway, as plain data: LiteLLM's ``config.yaml`` and the gateway's
ConfigMap, Deployment and Service manifests.

One LiteLLM proxy per namespace, Deployment and ClusterIP Service ``gateway`` on port 8000
(the upstream language-operator's shape). API keys reach it only as env vars from
``secretKeyRef`` and appear in its config as ``os.environ/<VAR>`` references.

With ``agentKeys``, each agent calls it with a key of its own: the agents' Secret is mounted
(one file per agent) and :mod:`._gateway_auth`, shipped in the ConfigMap, admits exactly those
keys and the master key (for admins), naming the agent as LiteLLM's ``user_id``.

Writable paths under the read-only root filesystem (each an ``emptyDir``):

- ``/tmp``: Python's and LiteLLM's scratch files (tempfile, the MCP npm cache);
- ``/var/lib/litellm``: the non-root image (``LITELLM_NON_ROOT=true``) copies its admin UI and
  assets there at start (``LITELLM_UI_PATH``, ``LITELLM_ASSETS_PATH``); the UI itself is off.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from langop_infra.config._model import (
    GATEWAY_NAME,
    ModelGatewayDefaults,
    ModelSpec,
    ObservabilityDefaults,
)
from langop_infra.config._names import env_token
from langop_infra.config._pod import Security
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.manifests import _gateway_auth as gateway_auth
from langop_infra.manifests._contract import EnvVar, checksum, otel_env, recommended_labels
from langop_infra.manifests._k8s_types import (
    ConfigMapDict,
    ContainerDict,
    DeploymentDict,
    ObjectMetaDict,
    PodSpecDict,
    ProbeDict,
    ServiceDict,
    VolumeDict,
    VolumeMountDict,
)
from langop_infra.manifests._pods import (
    TMP_VOLUME,
    container_security_context,
    pod_security_context,
    resources_manifest,
)

GATEWAY_PORT = 8000
GATEWAY_LABEL = "langop.io/model-gateway"
CONFIG_DIR = "/etc/litellm"
CONFIG_FILE = "config.yaml"
DATA_DIR = "/var/lib/litellm"
DATA_VOLUME = "litellm-data"
MASTER_KEY_ENV = gateway_auth.MASTER_KEY_ENV
AUTH_MODULE = "langop_gateway_callers"
AUTH_FILE = f"{AUTH_MODULE}.py"
AGENT_KEYS_DIR = "/etc/litellm-agent-keys"
AGENT_KEYS_VOLUME = "agent-keys"
LIVENESS_PATH = "/health/liveliness"
READINESS_PATH = "/health/readiness"
CONFIG_CHECKSUM_ANNOTATION = "langop.io/config-checksum"
# LiteLLM's provider prefix per provider; 'custom' passes modelName through as written.
LITELLM_PREFIX = {
    "openai": "openai",
    "anthropic": "anthropic",
    "azure": "azure",
    "bedrock": "bedrock",
    "vertex": "vertex_ai",
    "openai-compatible": "openai",
    "ollama": "ollama_chat",
}
# Where LiteLLM takes each provider's credential from.
KEY_PARAM = {"vertex": "vertex_credentials"}
# An OpenAI-compatible server without auth still needs some key for the OpenAI client.
NO_KEY_PLACEHOLDER = "no-key"


def gateway_selector() -> dict[str, str]:
    return {GATEWAY_LABEL: GATEWAY_NAME}


def gateway_labels(part_of: str, image: str | None = None) -> dict[str, str]:
    return {**recommended_labels(GATEWAY_NAME, "gateway", part_of, image), **gateway_selector()}


def gateway_endpoint(namespace: str) -> str:
    """``http://gateway.<namespace>.svc.cluster.local:8000``: OpenAI-compatible, no path."""
    return f"http://{GATEWAY_NAME}.{namespace}.svc.cluster.local:{GATEWAY_PORT}"


def api_key_env_name(model: str) -> str:
    """``MODEL_<NAME>_API_KEY``: the env var that carries a model's API key."""
    return f"MODEL_{env_token(model)}_API_KEY"


def litellm_model(model: ModelSpec) -> str:
    """``<LiteLLM provider>/<modelName>``, e.g. ``vertex_ai/gemini-1.5-pro``."""
    if model.provider == "custom":
        return model.model_name
    return f"{LITELLM_PREFIX[model.provider]}/{model.model_name}"


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def litellm_params(model: ModelSpec) -> dict[str, object]:
    """One ``model_list`` entry's ``litellm_params``; a key only as ``os.environ/<VAR>``."""
    params: dict[str, object] = {"model": litellm_model(model)}
    if model.endpoint is not None:
        params["api_base"] = model.endpoint
    if model.api_key is not None:
        params[KEY_PARAM.get(model.provider, "api_key")] = (
            f"os.environ/{api_key_env_name(model.name)}"
        )
    elif model.provider in ("openai-compatible", "custom"):
        params["api_key"] = NO_KEY_PLACEHOLDER
    params["timeout"] = _number(model.timeout)
    # The router's retries work for every provider; the OpenAI SDK's own (max_retries) stay
    # off, as LiteLLM's router sets them, so that attempts do not multiply.
    params["num_retries"] = model.retry_policy.max_attempts
    params["max_retries"] = 0
    if model.rate_limits is not None:
        if model.rate_limits.requests_per_minute is not None:
            params["rpm"] = model.rate_limits.requests_per_minute
        if model.rate_limits.tokens_per_minute is not None:
            params["tpm"] = model.rate_limits.tokens_per_minute
    settings = model.configuration
    for key, value in (
        ("max_tokens", settings.max_tokens),
        ("temperature", settings.temperature),
        ("top_p", settings.top_p),
    ):
        if value is not None:
            params[key] = value
    if settings.stop_sequences:
        params["stop"] = list(settings.stop_sequences)
    return params


def auth_module_source() -> str:
    """The ``custom_auth`` module the gateway loads from its ConfigMap."""
    return Path(gateway_auth.__file__).read_text(encoding="utf-8")


def gateway_config(
    models: Sequence[ModelSpec], *, master_key: bool, agent_keys: bool = False
) -> dict[str, object]:
    """LiteLLM's proxy ``config.yaml`` for the gateway's models, in declaration order."""
    doc: dict[str, object] = {
        "model_list": [{"model_name": m.name, "litellm_params": litellm_params(m)} for m in models]
    }
    fallbacks = [{m.name: list(m.fallbacks)} for m in models if m.fallbacks]
    if fallbacks:
        doc["router_settings"] = {"fallbacks": fallbacks}
    settings: dict[str, object] = {}
    if master_key:
        settings["master_key"] = f"os.environ/{MASTER_KEY_ENV}"
    if agent_keys:
        settings["custom_auth"] = f"{AUTH_MODULE}.user_api_key_auth"
    if settings:
        doc["general_settings"] = settings
    return doc


def gateway_config_yaml(
    models: Sequence[ModelSpec], *, master_key: bool, agent_keys: bool = False
) -> str:
    doc = gateway_config(models, master_key=master_key, agent_keys=agent_keys)
    return yaml_io.dump(doc, sort_keys=False)


def gateway_env(
    models: Iterable[ModelSpec],
    gateway: ModelGatewayDefaults,
    namespace: str,
    observability: ObservabilityDefaults | None = None,
) -> list[EnvVar]:
    """The gateway container's env: keys from their Secrets, the UI off, OTEL when set."""
    env = [
        EnvVar("DISABLE_ADMIN_UI", value="True"),
        EnvVar("LITELLM_UI_PATH", value=f"{DATA_DIR}/ui"),
        EnvVar("LITELLM_ASSETS_PATH", value=f"{DATA_DIR}/assets"),
        # Never phone home for the model cost map: the bundled copy is used.
        EnvVar("LITELLM_LOCAL_MODEL_COST_MAP", value="True"),
    ]
    if gateway.master_key is not None:
        ref = gateway.master_key.secret_key_ref
        env.append(EnvVar(MASTER_KEY_ENV, secret_name=ref.name, secret_key=ref.key))
    if gateway.agent_keys is not None:
        env.append(EnvVar(gateway_auth.KEYS_DIR_ENV, value=AGENT_KEYS_DIR))
    for model in models:
        if model.api_key is not None:
            ref = model.api_key.secret_key_ref
            env.append(
                EnvVar(api_key_env_name(model.name), secret_name=ref.name, secret_key=ref.key)
            )
    otlp = observability.otlp_endpoint if observability is not None else None
    env += otel_env(otlp, GATEWAY_NAME, namespace, GATEWAY_NAME)
    return env


def gateway_container(
    gateway: ModelGatewayDefaults,
    env: Sequence[EnvVar],
    security: Security,
    image_pull_policy: str | None = None,
) -> ContainerDict:
    """LiteLLM's proxy on port 8000, probed on its own health endpoints."""
    mounts: list[VolumeMountDict] = [
        {"name": TMP_VOLUME, "mountPath": "/tmp"},
        {"name": DATA_VOLUME, "mountPath": DATA_DIR},
        {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
    ]
    if gateway.agent_keys is not None:
        mounts.append({"name": AGENT_KEYS_VOLUME, "mountPath": AGENT_KEYS_DIR, "readOnly": True})
    out: ContainerDict = {
        "name": GATEWAY_NAME,
        "image": gateway.image,
        "args": ["--config", f"{CONFIG_DIR}/{CONFIG_FILE}", "--port", str(GATEWAY_PORT)],
        "ports": [{"name": "http", "containerPort": GATEWAY_PORT, "protocol": "TCP"}],
        "env": [var.manifest() for var in env],
        "resources": resources_manifest(gateway.resources),
        "securityContext": container_security_context(security),
        "volumeMounts": mounts,
        # LiteLLM imports for a while before it listens: give it a minute to start.
        "startupProbe": _probe(LIVENESS_PATH, period=5, failures=24),
        "livenessProbe": _probe(LIVENESS_PATH, period=20, failures=3),
        "readinessProbe": _probe(READINESS_PATH, period=10, failures=3),
    }
    if image_pull_policy is not None:
        out["imagePullPolicy"] = image_pull_policy
    return out


def _probe(path: str, *, period: int, failures: int) -> ProbeDict:
    return {
        "httpGet": {"path": path, "port": GATEWAY_PORT},
        "periodSeconds": period,
        "timeoutSeconds": 5,
        "failureThreshold": failures,
    }


def _meta(name: str, namespace: str, labels: Mapping[str, str]) -> ObjectMetaDict:
    return {"name": name, "namespace": namespace, "labels": dict(labels)}


def config_map_name() -> str:
    return f"{GATEWAY_NAME}-config"


def gateway_volumes(gateway: ModelGatewayDefaults) -> list[VolumeDict]:
    """Scratch space, the config (with the auth module under ``agentKeys``) and the agents'
    keys: every key of the Secret is one agent's file, and a Secret not there yet is an
    empty folder (``optional``), which admits no agent."""
    files = [CONFIG_FILE] + ([AUTH_FILE] if gateway.agent_keys is not None else [])
    volumes: list[VolumeDict] = [
        {"name": TMP_VOLUME, "emptyDir": {}},
        {"name": DATA_VOLUME, "emptyDir": {}},
        {
            "name": "config",
            "configMap": {
                "name": config_map_name(),
                "items": [{"key": f, "path": f} for f in files],
            },
        },
    ]
    if gateway.agent_keys is not None:
        volumes.append(
            {
                "name": AGENT_KEYS_VOLUME,
                "secret": {"secretName": gateway.agent_keys.secret_name, "optional": True},
            }
        )
    return volumes


def gateway_objects(
    models: Sequence[ModelSpec],
    gateway: ModelGatewayDefaults,
    *,
    namespace: str,
    part_of: str,
    security: Security,
    image_pull_policy: str | None = None,
    observability: ObservabilityDefaults | None = None,
) -> tuple[ConfigMapDict, DeploymentDict, ServiceDict]:
    """ConfigMap ``gateway-config``, Deployment and Service ``gateway``, as manifests.

    The pod template carries a checksum of the config, the auth module and the key
    references, so a change to any rolls the gateway (not a key's value: the auth module
    reads the mounted keys again when they change).
    """
    labels = gateway_labels(part_of, gateway.image)
    data = {
        CONFIG_FILE: gateway_config_yaml(
            models,
            master_key=gateway.master_key is not None,
            agent_keys=gateway.agent_keys is not None,
        )
    }
    if gateway.agent_keys is not None:
        data[AUTH_FILE] = auth_module_source()
    env = gateway_env(models, gateway, namespace, observability)
    volumes = gateway_volumes(gateway)
    # The volumes are in the pod template already: a change there rolls the pods by itself.
    rollout = checksum(*data.values(), *(repr(v.manifest()) for v in env))
    container = gateway_container(gateway, env, security, image_pull_policy)
    pod: PodSpecDict = {
        "automountServiceAccountToken": False,
        "securityContext": pod_security_context(security),
        "containers": [container],
        "volumes": volumes,
    }
    return (
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(config_map_name(), namespace, labels),
            "data": data,
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": _meta(GATEWAY_NAME, namespace, labels),
            "spec": {
                "replicas": gateway.replicas,
                "selector": {"matchLabels": gateway_selector()},
                "template": {
                    "metadata": {
                        "labels": labels,
                        "annotations": {CONFIG_CHECKSUM_ANNOTATION: rollout},
                    },
                    "spec": pod,
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(GATEWAY_NAME, namespace, labels),
            "spec": {
                "type": "ClusterIP",
                "selector": gateway_selector(),
                "ports": [
                    {"name": "http", "port": GATEWAY_PORT, "targetPort": "http", "protocol": "TCP"}
                ],
            },
        },
    )
