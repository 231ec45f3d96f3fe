"""Specs of models, personas and the model gateway: the same conventions as every spec."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
)

from langop_infra.config._fields import (
    DnsLabel,
    HttpUrl,
    Image,
    Int,
    Seconds,
    Spec,
    dns_subdomain,
    duration_between,
    invalid,
    is_secret_value,
    overlay,
    secret_key,
)
from langop_infra.config._network import EgressRule
from langop_infra.config._pod import ResourceAmounts, Resources

Provider = Literal[
    "openai", "anthropic", "azure", "bedrock", "vertex", "openai-compatible", "ollama", "custom"
]
PROVIDERS_NEEDING_ENDPOINT = frozenset({"openai-compatible", "azure", "ollama", "custom"})
# Providers whose base URL langop-infra knows; others need `endpoint` in direct mode.
KNOWN_ENDPOINTS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
ModelRole = Literal["primary", "fallback", "reasoning", "tool-calling", "summarization"]
DEFAULT_API_KEY_KEY = "api-key"
# The gateway's Deployment and Service: a workload of this name would collide with them.
GATEWAY_NAME = "gateway"
# The non-root build of LiteLLM's proxy image. A moving tag: no digest for it could be
# checked here, so it is left unpinned and validate warns wherever it is in use (stacks pin
# it in defaults.modelGateway.image; requireImageDigests refuses it).
DEFAULT_GATEWAY_IMAGE = "ghcr.io/berriai/litellm-non_root:main-stable"
MAX_PERSONA_FIELD = 1024
PLAIN_KEY_ADVICE = (
    "a plain-text key would be copied into state and rendered output; put it under "
    "langop-infra:secrets (`pulumi config set --secret`) and write "
    "{secretKeyRef: {name, key}} here"
)


def no_plain_secret(value: object) -> Any:
    """Refuse a literal secret before pydantic echoes it in an error (never quote it)."""
    if is_secret_value(value) or isinstance(value, (int, float)):
        raise invalid("no_plain_secret", PLAIN_KEY_ADVICE)
    return value


def no_line_breaks(value: str) -> str:
    if any(c in value for c in "\r\n") or any(ord(c) < 32 and c != "\t" for c in value):
        raise invalid("one_line", "write it on one line: it becomes one line of AGENT_PERSONA")
    return value


def model_name_text(value: str) -> str:
    if not value.strip() or any(c.isspace() for c in value):
        raise invalid(
            "model_name_text", "set the provider's model name without spaces, e.g. 'gpt-4o-mini'"
        )
    return value


class ApiKeyRef(Spec):
    """A key of an existing Secret in the namespace; ``key`` defaults to ``api-key``."""

    name: Annotated[str, AfterValidator(dns_subdomain)] = Field(description="Secret name.")
    key: Annotated[str, AfterValidator(secret_key)] = Field(
        default=DEFAULT_API_KEY_KEY, description="Key within the Secret."
    )


class ApiKeySource(Spec):
    """Where a model's API key or the gateway's master key comes from: a Secret's key."""

    secret_key_ref: ApiKeyRef
    """The Secret's name and key (key defaults to api-key)."""


SecretOnly = Annotated[ApiKeySource, BeforeValidator(no_plain_secret)]


class RetryPolicy(Spec):
    """How often a failed model call is retried."""

    max_attempts: Int = Field(
        default=3, ge=0, le=10, description="Retries after a failed call (LiteLLM's max_retries)."
    )


class ModelConfiguration(Spec):
    """Request defaults the gateway applies to every call of the model."""

    max_tokens: Int | None = Field(default=None, ge=1, le=10_000_000)
    """Most tokens a response may hold."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature, 0-2."""
    top_p: float | None = Field(default=None, ge=0, le=1)
    """Nucleus sampling mass, 0-1."""
    stop_sequences: list[Annotated[str, Field(min_length=1)]] = Field(default=[], max_length=16)
    """Sequences that end a response (at most 16)."""


class ModelRateLimits(Spec):
    """Rate limits the gateway applies to the model."""

    requests_per_minute: Int | None = Field(default=None, ge=1, description="LiteLLM's rpm.")
    tokens_per_minute: Int | None = Field(default=None, ge=1, description="LiteLLM's tpm.")


class ModelSpec(Spec):
    """A LanguageModel: a provider's model, reached through the namespace gateway or directly."""

    name: DnsLabel = Field(description="The name agents use (LLM_MODEL, the gateway's alias).")
    provider: Provider
    """The model's provider."""
    model_name: Annotated[str, AfterValidator(model_name_text)] = Field(
        description="The provider's model id; for 'custom', LiteLLM's '<provider>/<model>'."
    )
    endpoint: HttpUrl | None = Field(
        default=None,
        validate_default=True,
        description="Required for openai-compatible, azure, ollama and custom.",
    )
    api_key: SecretOnly | None = Field(default=None, description="{secretKeyRef: {name, key}}.")
    timeout: Annotated[Seconds, duration_between(1, 3600)] = 300.0
    """Per-call timeout."""
    retry_policy: RetryPolicy = RetryPolicy()
    """Retries after a failed call."""
    fallbacks: list[DnsLabel] = Field(
        default=[], description="Models tried in order when this fails."
    )
    configuration: ModelConfiguration = ModelConfiguration()
    """Request defaults: maxTokens, temperature, topP, stopSequences."""
    rate_limits: ModelRateLimits | None = None
    """Requests and tokens per minute (unset: none)."""
    egress_to: list[EgressRule] = Field(
        default=[], description="Where the gateway (or, in direct mode, the agent) may connect."
    )
    gateway: bool = Field(default=True, description="false: agents call the provider directly.")

    @field_validator("model_name")
    @classmethod
    def _custom_model_name(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("provider") == "custom" and "/" not in value:
            raise invalid(
                "custom_model_name",
                "provider 'custom' takes modelName in LiteLLM's '<provider>/<model>' form, "
                "e.g. 'hosted_vllm/llama-3.1-8b'",
            )
        return value

    @field_validator("endpoint")
    @classmethod
    def _endpoint_needed(cls, value: str | None, info: ValidationInfo) -> str | None:
        provider = info.data.get("provider")
        if value is None and provider in PROVIDERS_NEEDING_ENDPOINT:
            raise invalid(
                "endpoint_needed",
                f"provider {provider!r} needs endpoint, the server's base URL (e.g. "
                "http://vllm.models.svc.cluster.local:8000/v1); set it",
            )
        return value

    @field_validator("fallbacks")
    @classmethod
    def _fallbacks_once(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("name") in value:
            raise invalid("fallbacks_once", f"model {info.data['name']!r} lists itself; remove it")
        if len(set(value)) != len(value):
            raise invalid("fallbacks_once", "a fallback is listed twice; list each model once")
        return value


class PersonaSpec(Spec):
    """A LanguagePersona: how an agent speaks (AGENT_PERSONA, config.yaml ``personas``)."""

    name: DnsLabel
    """The name agents use in persona."""
    tone: Annotated[str, AfterValidator(no_line_breaks)] = Field(
        default="", max_length=MAX_PERSONA_FIELD
    )
    """How the agent speaks, on one line."""
    personality: Annotated[str, AfterValidator(no_line_breaks)] = Field(
        default="", max_length=MAX_PERSONA_FIELD
    )
    """Who the agent is, on one line."""
    expertise: Annotated[str, AfterValidator(no_line_breaks)] = Field(
        default="", max_length=MAX_PERSONA_FIELD
    )
    """What the agent knows, on one line."""


class ModelRef(Spec):
    """A reference from an agent to a LanguageModel of its namespace."""

    name: DnsLabel
    """Name of the LanguageModel."""
    role: ModelRole = "primary"
    """What the agent uses the model for."""
    priority: Int | None = Field(default=None, ge=0, le=1000, description="Lower is tried first.")


def _gateway_resources() -> Resources:
    # LiteLLM's proxy idles near 300 MiB; the workload defaults would OOM-kill it.
    return Resources(
        requests=ResourceAmounts(cpu="100m", memory="384Mi"),
        limits=ResourceAmounts(cpu="1", memory="1Gi"),
    )


class AgentKeys(Spec):
    """The Secret holding one gateway key per agent: key = agent name, value = its key."""

    secret_name: Annotated[str, AfterValidator(dns_subdomain)] = Field(
        description="Secret with one key per agent that uses the gateway, named after it."
    )


class ModelGatewayDefaults(Spec):
    """The namespace's LiteLLM proxy (Deployment and Service ``gateway``, port 8000)."""

    enabled: bool = Field(default=True, description="false: every model is reached directly.")
    image: Image = DEFAULT_GATEWAY_IMAGE
    """Image of the LiteLLM proxy."""
    replicas: Int = Field(default=1, ge=1, le=100)
    """Pods of the gateway."""
    master_key: SecretOnly | None = Field(
        default=None,
        description="{secretKeyRef: {name, key}}: the gateway's admin key; never given to agents.",
    )
    agent_keys: AgentKeys | None = Field(
        default=None,
        description="{secretName}: each agent's own gateway key (MODEL_API_KEY), key = agent "
        "name; the gateway admits exactly these and the master key.",
    )
    require_auth: bool = Field(default=False, description="Refuse a gateway without masterKey.")
    resources: Resources = Field(default_factory=_gateway_resources)
    """The gateway's requests and limits over its built-in ones."""

    @field_validator("resources")
    @classmethod
    def _complete_resources(cls, value: Resources) -> Resources:
        # Naming one amount keeps the gateway's built-in value of the others.
        return overlay(_gateway_resources(), value)


class ObservabilityDefaults(Spec):
    """Where agents, tools and the gateway send telemetry."""

    otlp_endpoint: HttpUrl | None = Field(
        default=None, description="OTEL_EXPORTER_OTLP_ENDPOINT of agents, tools and the gateway."
    )
    traces_sampler: (
        Literal[
            "always_on",
            "always_off",
            "traceidratio",
            "parentbased_always_on",
            "parentbased_always_off",
            "parentbased_traceidratio",
        ]
        | None
    ) = Field(default=None, description="OTEL_TRACES_SAMPLER of agents and tools.")
    traces_sampler_arg: Annotated[str, Field(min_length=1, max_length=64)] | None = Field(
        default=None, description="OTEL_TRACES_SAMPLER_ARG, e.g. 0.25 for a ratio sampler."
    )


def via_gateway(model: ModelSpec, gateway: ModelGatewayDefaults) -> bool:
    """Whether agents reach ``model`` through the namespace gateway (else directly)."""
    return gateway.enabled and model.gateway
