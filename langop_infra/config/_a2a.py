"""A2A (agent-to-agent) specs: what an agent serves (``a2a``) and the peers it calls
(``agents``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from typing_extensions import Self

from langop_infra.config._fields import (
    DnsLabel,
    HeaderSpec,
    HttpPath,
    HttpUrl,
    Port,
    SecretSource,
    Spec,
    invalid,
)

MediaType = Annotated[str, Field(pattern=r"^[A-Za-z0-9.+-]+/[A-Za-z0-9.+*-]+$", max_length=127)]
Text = Annotated[str, Field(min_length=1, max_length=1024)]


class A2ASkill(Spec):
    """One skill of the agent card (A2A ``AgentSkill``)."""

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
    """Unique id of the skill within the card."""
    name: Text
    """Human-readable name."""
    description: Annotated[str, Field(min_length=1, max_length=4096)]
    """What the skill does, for callers and their LLMs."""
    tags: Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(min_length=1)]
    """Keywords, at least one (A2A v1.0 requires them)."""
    examples: list[Annotated[str, Field(min_length=1, max_length=1024)]] = []
    """Example prompts."""
    input_modes: list[MediaType] = []
    """Media types the skill accepts (unset: the card's defaultInputModes)."""
    output_modes: list[MediaType] = []
    """Media types the skill returns (unset: the card's defaultOutputModes)."""


class A2ASecurityScheme(Spec):
    """A security scheme the agent accepts (the card's ``securitySchemes``)."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")]
    """The scheme's name in the card."""
    type: Literal["bearer", "apiKey"] = Field(
        description="bearer: HTTP Authorization: Bearer; apiKey: a key in a header."
    )
    header_name: Annotated[str, Field(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")] = "Authorization"
    """The header an apiKey travels in."""
    bearer_format: Annotated[str, Field(max_length=64)] | None = None
    """A hint such as JWT."""
    description: Annotated[str, Field(max_length=1024)] | None = None
    """Shown to callers."""


Identity = Annotated[str, Field(min_length=1, max_length=512, pattern=r"^\S+$")]


class A2ACaller(Spec):
    """A caller that may send the agent messages: by a bearer token of its own, or by the
    identity a verified token names (``a2a.tokenVerification``)."""

    name: DnsLabel
    """The caller: an agent of the stack in this namespace (it is then given the token to
    send), or the name of a caller from elsewhere."""
    token_from: SecretSource | None = None
    """{secretKeyRef: {name, key}}: the caller's token (16+ characters), reaching the agent
    as env A2A_CALLER_<NAME>_TOKEN."""
    identity: Identity | None = None
    """The subject a verified token must name (env A2A_CALLER_<NAME>_IDENTITY): a
    Kubernetes service account as system:serviceaccount:<namespace>:<name>, or an OIDC
    token's sub."""

    @model_validator(mode="after")
    def _one_credential(self) -> Self:
        if (self.token_from is None) == (self.identity is None):
            raise invalid(
                "a2a_caller",
                f"caller {self.name!r}: give tokenFrom (a bearer token from a Secret) or "
                "identity (the subject of a verified token), one of them",
            )
        return self


class A2ATokenVerification(Spec):
    """How the runtime checks the signed tokens callers with an ``identity`` present."""

    method: Literal["tokenReview", "oidc"] = Field(
        description="tokenReview: Kubernetes service-account tokens, checked by the API "
        "server (the agent's ServiceAccount needs system:auth-delegator and its token "
        "mounted); oidc: an issuer's JWTs, checked against its published keys (JWKS)."
    )
    audience: Annotated[str, Field(min_length=1, max_length=512)] | None = None
    """The audience a token must name (unset: the agent's A2A endpoint URL); a caller's
    projected serviceAccountToken volume asks for it."""
    issuer: HttpUrl | None = None
    """oidc: the issuer (its iss claim and discovery document)."""
    jwks_url: HttpUrl | None = None
    """oidc: the issuer's keys (unset: the jwks_uri of its discovery document)."""

    @model_validator(mode="after")
    def _method_fields(self) -> Self:
        if self.method == "oidc" and self.issuer is None:
            raise invalid("a2a_token_verification", "oidc needs issuer: the issuer's URL")
        if self.method == "tokenReview" and (self.issuer or self.jwks_url):
            raise invalid(
                "a2a_token_verification",
                "issuer and jwksUrl are for method: oidc; tokenReview asks the API server",
            )
        return self


class A2ASpec(Spec):
    """The agent serves A2A: a Service port named ``a2a`` and an agent card."""

    port: Port = 8080
    """Port of the A2A endpoint (env A2A_PORT)."""
    path: HttpPath = "/"
    """HTTP path of the JSON-RPC endpoint (env A2A_PATH)."""
    description: Annotated[str, Field(min_length=1, max_length=4096)] | None = Field(
        default=None, description="The card's description (unset: from instructions or name)."
    )
    version: Annotated[str, Field(min_length=1, max_length=64)] = "1.0.0"
    """The agent's version in its card."""
    skills: Annotated[list[A2ASkill], Field(min_length=1)]
    """The skills the card advertises, at least one (A2A v1.0 requires one)."""
    default_input_modes: list[MediaType] = ["text/plain"]
    """Media types the agent accepts."""
    default_output_modes: list[MediaType] = ["text/plain"]
    """Media types the agent returns."""
    streaming: bool = False
    """The agent streams (message/stream)."""
    push_notifications: bool = False
    """The agent sends push notifications."""
    security_schemes: list[A2ASecurityScheme] = []
    """Schemes the agent accepts; each is required (the card's securityRequirements)."""
    access: Literal["authenticated", "open"] = "authenticated"
    """Who may call (enforced by runtime: builtin): callers with a token (authenticated), or
    anyone who reaches the port (open, asked for by name)."""
    callers: list[A2ACaller] = []
    """The callers allowed in: each with a bearer token (env A2A_CALLER_<NAME>_TOKEN) or
    the identity of a verified token (env A2A_CALLER_<NAME>_IDENTITY): the allow-list."""
    token_verification: A2ATokenVerification | None = None
    """How tokens of callers given by identity are verified (required when one is)."""

    @model_validator(mode="after")
    def _identities_verified(self) -> Self:
        if any(c.identity for c in self.callers) and self.token_verification is None:
            raise invalid(
                "a2a_token_verification",
                "callers given by identity need tokenVerification: {method: tokenReview} "
                "(Kubernetes service accounts) or {method: oidc, issuer: <url>}",
            )
        return self

    @field_validator("callers")
    @classmethod
    def _unique_callers(cls, value: list[A2ACaller]) -> list[A2ACaller]:
        names = [c.name for c in value]
        for name in names:
            if names.count(name) > 1:
                raise invalid("a2a_caller", f"caller {name!r} is given twice; names are unique")
        return value

    @field_validator("skills")
    @classmethod
    def _unique_skills(cls, value: list[A2ASkill]) -> list[A2ASkill]:
        ids = [s.id for s in value]
        for skill_id in ids:
            if ids.count(skill_id) > 1:
                raise invalid("a2a_skill", f"skill id {skill_id!r} is given twice; ids are unique")
        return value

    @field_validator("security_schemes")
    @classmethod
    def _unique_schemes(cls, value: list[A2ASecurityScheme]) -> list[A2ASecurityScheme]:
        names = [s.name for s in value]
        for name in names:
            if names.count(name) > 1:
                raise invalid("a2a_scheme", f"security scheme {name!r} is given twice")
        return value


class AgentPeerRef(Spec):
    """A peer agent this agent calls over A2A: an agent of the stack by ``name`` (and
    ``namespace``), or a remote one by ``url``."""

    name: DnsLabel
    """The agent's name (in-cluster), or the name this agent knows a remote peer by."""
    namespace: DnsLabel | None = None
    """Namespace of an in-cluster peer (unset: the caller's)."""
    url: HttpUrl | None = None
    """A remote peer's A2A endpoint (unset: an agent of the stack)."""
    card_url: HttpUrl | None = None
    """A remote peer's agent card (unset: <origin of url>/.well-known/agent-card.json)."""
    headers: list[HeaderSpec] = Field(
        default=[],
        description="Headers sent to a remote peer: a value, or valueFrom.secretKeyRef, "
        "reaching the agent only as env A2A_PEER_<PEER>_HEADER_<HEADER>.",
    )

    @model_validator(mode="after")
    def _remote_or_local(self) -> Self:
        if self.url is None and (self.headers or self.card_url is not None):
            raise invalid(
                "a2a_peer",
                f"peer {self.name!r}: headers and cardUrl are for a remote peer; add its url, "
                "or remove them for an agent of the stack",
            )
        if self.url is not None and self.namespace is not None:
            raise invalid(
                "a2a_peer",
                f"peer {self.name!r}: give url (a remote peer) or namespace (an agent of the "
                "stack), not both",
            )
        return self

    @property
    def remote(self) -> bool:
        return self.url is not None
