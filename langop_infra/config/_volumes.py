"""Escape hatches of a workload's pod: extra volumes and mounts, init containers, a Kubernetes
identity (ServiceAccount), and a tool's Service settings.

Everything here keeps the restricted Pod Security Standard the created namespace enforces:
only the volume types it admits (hostPath is refused), and init containers run with the main
container's security context, which the user cannot loosen here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, Field, field_validator, model_validator
from typing_extensions import Self

from langop_infra.config._fields import (
    AnnotationMap,
    DnsLabel,
    EnvMap,
    HttpPath,
    Image,
    Int,
    LabelMap,
    Quantity,
    Spec,
    dns_subdomain,
    invalid,
    not_reserved_mount,
    secret_key,
)
from langop_infra.config._pod import Resources, WorkloadSpec

HOST_PATH_REASON = (
    "hostPath volumes are refused: the restricted Pod Security Standard, which langop-infra's "
    "namespaces enforce, forbids them (they expose the node's files); use a configMap, "
    "secret, persistentVolumeClaim, emptyDir or projected volume"
)


def relative_path(value: str) -> str:
    """A path inside a volume (``items[].path``, ``subPath``): relative, no ``..``."""
    if not value or value.startswith("/") or any(s in ("", ".", "..") for s in value.split("/")):
        raise invalid(
            "relative_path",
            f"{value!r} must be a relative path without '.', '..' or empty segments, "
            "e.g. ca.crt or certs/ca.crt",
        )
    return value


RelativePath = Annotated[str, AfterValidator(relative_path)]
Mode = Annotated[Int, Field(ge=0, le=0o777, description="File mode bits, e.g. 0o440 (288).")]


class KeyToPath(Spec):
    """One key of a ConfigMap or Secret as a file: ``{key, path, mode}``."""

    key: Annotated[str, AfterValidator(secret_key)] = Field(description="A key of the source.")
    path: RelativePath = Field(description="The file it becomes, relative to the mount.")
    mode: Mode | None = Field(default=None, description="The file's mode; unset: defaultMode.")


class ConfigMapVolume(Spec):
    """A ConfigMap's keys as files."""

    name: Annotated[str, AfterValidator(dns_subdomain)] = Field(description="The ConfigMap.")
    items: list[KeyToPath] = Field(default=[], description="Keys to project; unset: every key.")
    default_mode: Mode | None = Field(default=None, description="Mode of the files; unset: 0644.")
    optional: bool | None = Field(default=None, description="Start the pod without the ConfigMap.")


class SecretVolume(Spec):
    """A Secret's keys as files."""

    secret_name: Annotated[str, AfterValidator(dns_subdomain)] = Field(description="The Secret.")
    items: list[KeyToPath] = Field(default=[], description="Keys to project; unset: every key.")
    default_mode: Mode | None = Field(default=None, description="Mode of the files; unset: 0644.")
    optional: bool | None = Field(default=None, description="Start the pod without the Secret.")


class ClaimVolume(Spec):
    """An existing PersistentVolumeClaim."""

    claim_name: Annotated[str, AfterValidator(dns_subdomain)] = Field(
        description="An existing PersistentVolumeClaim in the workload's namespace."
    )
    read_only: bool | None = Field(default=None, description="Mount the claim read-only.")


class EmptyDirVolume(Spec):
    """Scratch space that lives as long as the pod."""

    medium: Literal["", "Memory"] | None = Field(
        default=None,
        description="Memory: a tmpfs (counted in the container's memory); unset: disk.",
    )
    size_limit: Quantity | None = Field(
        default=None, description="The most it may hold, e.g. 64Mi."
    )


class ServiceAccountTokenProjection(Spec):
    """A bound ServiceAccount token as a file (workload identity)."""

    path: RelativePath = Field(description="The token's file, relative to the mount.")
    audience: Annotated[str, Field(min_length=1, max_length=253)] | None = Field(
        default=None,
        description="Who the token is for (e.g. sts.amazonaws.com); unset: the API server.",
    )
    expiration_seconds: Int | None = Field(
        default=None,
        ge=600,
        le=2**32,
        description="Token lifetime (at least 600); unset: one hour.",
    )


class ProjectedConfigMap(Spec):
    """A ConfigMap or Secret inside a projected volume."""

    name: Annotated[str, AfterValidator(dns_subdomain)] = Field(
        description="The ConfigMap or Secret."
    )
    items: list[KeyToPath] = Field(default=[], description="Keys to project; unset: every key.")
    optional: bool | None = Field(default=None, description="Start the pod without it.")


class ProjectedSource(Spec):
    """One source of a projected volume: exactly one of configMap, secret, serviceAccountToken."""

    config_map: ProjectedConfigMap | None = Field(
        default=None, description="{name, items, optional}"
    )
    secret: ProjectedConfigMap | None = Field(default=None, description="{name, items, optional}")
    service_account_token: ServiceAccountTokenProjection | None = Field(
        default=None,
        description="{path, audience, expirationSeconds}: a bound token (workload identity).",
    )

    @model_validator(mode="after")
    def _one(self) -> Self:
        given = [s for s in (self.config_map, self.secret, self.service_account_token) if s]
        if len(given) != 1:
            raise invalid(
                "projected_source", "give exactly one of configMap, secret or serviceAccountToken"
            )
        return self


class ProjectedVolume(Spec):
    """ConfigMaps, Secrets and ServiceAccount tokens in one folder."""

    sources: Annotated[list[ProjectedSource], Field(min_length=1)] = Field(
        description="What the volume combines, in order."
    )
    default_mode: Mode | None = Field(default=None, description="Mode of the files; unset: 0644.")


VOLUME_SOURCES = ("config_map", "secret", "persistent_volume_claim", "empty_dir", "projected")


class VolumeSpec(Spec):
    """An extra pod volume: exactly one of configMap, secret, persistentVolumeClaim, emptyDir
    or projected (the types the restricted Pod Security Standard admits)."""

    name: DnsLabel = Field(description="The volume's name, for volumeMounts.")
    config_map: ConfigMapVolume | None = Field(
        default=None,
        description="{name, items, defaultMode, optional}: a ConfigMap's keys as files.",
    )
    secret: SecretVolume | None = Field(
        default=None,
        description="{secretName, items, defaultMode, optional}: a Secret's keys as files.",
    )
    persistent_volume_claim: ClaimVolume | None = Field(
        default=None, description="{claimName, readOnly}: a claim made outside this workload."
    )
    empty_dir: EmptyDirVolume | None = Field(
        default=None,
        description="{medium, sizeLimit}: scratch space that lives as long as the pod.",
    )
    projected: ProjectedVolume | None = Field(
        default=None,
        description="{sources, defaultMode}: configMaps, secrets and tokens in one folder.",
    )
    host_path: Any = Field(default=None, description="Refused: the restricted standard forbids it.")

    @field_validator("host_path")
    @classmethod
    def _no_host_path(cls, value: object) -> Any:
        raise invalid("host_path", HOST_PATH_REASON)

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if self.host_path is not None:
            return self  # refused above
        given = [s for s in VOLUME_SOURCES if getattr(self, s) is not None]
        if len(given) != 1:
            raise invalid(
                "volume_source",
                "give exactly one of configMap, secret, persistentVolumeClaim, emptyDir or "
                "projected",
            )
        return self

    def manifest(self) -> dict[str, Any]:
        """The volume as Kubernetes takes it (unset fields and empty ``items`` left out)."""
        return _without_empty_lists(self.model_dump(by_alias=True, exclude_none=True))


class VolumeMountSpec(Spec):
    """Mounts one of ``volumes`` into the main container (or an init container)."""

    name: DnsLabel = Field(description="A volume under volumes.")
    mount_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] = Field(
        description="An absolute path; not /tmp, /etc/agent or another generated mount."
    )
    sub_path: RelativePath | None = Field(
        default=None, description="A file or folder of the volume."
    )
    read_only: bool | None = Field(default=None, description="Mount it read-only.")

    def manifest(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


class InitContainerSpec(Spec):
    """A container run to completion before the workload's own, with the same security
    context as the main container (the restricted standard), and its resources."""

    name: DnsLabel = Field(description="Unique in the pod.")
    image: Image = Field(description="Container image.")
    command: list[str] | None = Field(default=None, description="Replaces the image's entrypoint.")
    args: list[str] | None = Field(default=None, description="Arguments of the command.")
    env: EnvMap = Field(
        default={}, description="Plain environment variables (no secrets: use a volume)."
    )
    volume_mounts: list[VolumeMountSpec] = Field(
        default=[], description="Mounts of the workload's volumes."
    )
    resources: Resources | None = Field(default=None, description="Unset: the workload's.")


class ServiceAccountSpec(Spec):
    """The pod's Kubernetes identity: ``{create: true, annotations}`` makes ServiceAccount
    ``<workload>`` (annotations for cloud workload identity), ``{name}`` uses an existing one."""

    create: bool = Field(
        default=False, description="Make a ServiceAccount named after the workload."
    )
    name: Annotated[str, AfterValidator(dns_subdomain)] | None = Field(
        default=None, description="An existing ServiceAccount (without create)."
    )
    annotations: AnnotationMap = Field(
        default={},
        description="Annotations of the created ServiceAccount (e.g. workload identity).",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if self.create == (self.name is not None):
            raise invalid(
                "service_account",
                "give {create: true} (with optional annotations) or {name} of an existing "
                "ServiceAccount, not both",
            )
        if self.annotations and not self.create:
            raise invalid(
                "service_account",
                "annotations apply to a ServiceAccount langop-infra creates: set create: true",
            )
        return self


class ServiceSettings(Spec):
    """A service tool's Service: its type and extra metadata."""

    type: Literal["ClusterIP", "NodePort", "LoadBalancer"] = Field(
        default="ClusterIP", description="NodePort or LoadBalancer also expose the tool outside."
    )
    annotations: AnnotationMap = Field(
        default={}, description="E.g. a cloud load balancer's settings."
    )
    labels: LabelMap = Field(default={}, description="Extra labels on the Service.")


class PodExtensionsSpec(WorkloadSpec):
    """A workload with the escape hatches: tools and agents."""

    volumes: list[VolumeSpec] = Field(
        default=[],
        description="Extra pod volumes: configMap, secret, persistentVolumeClaim, emptyDir, "
        "projected (hostPath is refused).",
    )
    volume_mounts: list[VolumeMountSpec] = Field(
        default=[], description="Mounts of those volumes into the main container."
    )
    init_containers: list[InitContainerSpec] = Field(
        default=[], description="Run before the workload's containers, with its security context."
    )
    service_account: ServiceAccountSpec | None = Field(
        default=None,
        description="{create: true, annotations} for a ServiceAccount of its own, or {name} of "
        "an existing one; unset: the namespace's default (no token mounted either way, unless "
        "automountServiceAccountToken).",
    )

    def service_account_ref(self) -> str | None:
        """The ServiceAccount the pod runs as, or None for the namespace's default."""
        if self.service_account is not None:
            return self.name if self.service_account.create else self.service_account.name
        return self.service_account_name


def _without_empty_lists(value: object) -> Any:
    if isinstance(value, dict):
        mapping = cast("dict[str, Any]", value)
        return {k: _without_empty_lists(v) for k, v in mapping.items() if v != []}
    if isinstance(value, list):
        return [_without_empty_lists(v) for v in cast("list[Any]", value)]
    return value
