"""What every importer shares: the result it fills, the note it leaves for each field it
cannot carry, and the small conversions (env lists, Secret references, egress rules) that
several systems' CRDs spell alike."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from langop_infra.config.checks._advice import is_credential_env

Json = dict[str, Any]
_REFERENCE = re.compile(r"^\$\{[^}]+\}$|^\$\(\w+\)$")  # ${VAR}, or Kubernetes' $(VAR)

# The stack-config lists an import fills, in the order a stack file writes them.
SECTIONS = ("models", "personas", "tools", "httpTools", "agents")


@dataclass(frozen=True)
class Note:
    """A field of a manifest that did not become stack config: where, why, and what to do."""

    source: str
    """``<file>: <Kind>/<name>``."""
    field: str
    """The field's path in the manifest, e.g. ``spec.egress[0].to.dns``."""
    why: str
    todo: str

    def __str__(self) -> str:
        return f"{self.source}: {self.field}: {self.why}; {self.todo}"

    def as_dict(self) -> dict[str, str]:
        return {"source": self.source, "field": self.field, "why": self.why, "todo": self.todo}


@dataclass
class Imported:
    """Stack-config entries, each with the namespace its manifest named (``namespace`` key,
    ``None`` when the manifest named none), plus the notes and the Secrets referenced."""

    entries: dict[str, list[Json]] = field(default_factory=lambda: {s: [] for s in SECTIONS})
    part_of: str | None = None
    cluster_namespace: str | None = None
    external_secrets: list[str] = field(default_factory=list[str])
    notes: list[Note] = field(default_factory=list[Note])
    # kagent's RemoteMCPServers by (namespace, name): agents that reference one get its URL.
    remote_servers: dict[tuple[str | None, str], Json] = field(
        default_factory=dict[tuple[str | None, str], Json]
    )
    agent_image: str | None = None
    # What the user gave for tools whose manifest leaves it open, by tool name.
    tool_images: dict[str, str] = field(default_factory=dict[str, str])
    tool_commands: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    # What stops the import: a stack from it could not validate (``refuse``).
    refusals: list[Note] = field(default_factory=list[Note])
    # What one kind leaves for another to read, by importer key, then (namespace, name).
    extras: dict[str, dict[tuple[str | None, str], Json]] = field(
        default_factory=dict[str, dict[tuple[str | None, str], Json]]
    )
    # Run once every manifest is read: checks that need the whole import (references).
    finishers: list[Callable[[Imported], None]] = field(
        default_factory=list[Callable[["Imported"], None]]
    )

    def add(self, section: str, entry: Json) -> None:
        self.entries[section].append(entry)

    def secret(self, name: str) -> None:
        """A Secret the stack references and does not create: listed, never read."""
        if name not in self.external_secrets:
            self.external_secrets.append(name)


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes object read from a file, with what the importers ask of it."""

    document: Json
    file: str

    @property
    def kind(self) -> str:
        return str(self.document.get("kind", ""))

    @property
    def group(self) -> str:
        return str(self.document.get("apiVersion", "")).partition("/")[0]

    @property
    def metadata(self) -> Json:
        return mapping(self.document.get("metadata"))

    @property
    def name(self) -> str:
        return str(self.metadata.get("name", ""))

    @property
    def namespace(self) -> str | None:
        value = self.metadata.get("namespace")
        return str(value) if value else None

    @property
    def spec(self) -> Json:
        return mapping(self.document.get("spec"))

    @property
    def source(self) -> str:
        return f"{self.file}: {self.kind}/{self.name or '<unnamed>'}"


Converter = Callable[[Manifest, Imported], None]


def mapping(value: object) -> Json:
    return cast("Json", value) if isinstance(value, dict) else {}


def items(value: object) -> list[Any]:
    return cast("list[Any]", value) if isinstance(value, list) else []


def note(out: Imported, manifest: Manifest, path: str, why: str, todo: str) -> None:
    out.notes.append(Note(manifest.source, path, why, todo))


def refuse(out: Imported, manifest: Manifest, path: str, why: str, todo: str) -> None:
    """A field the stack cannot be made from: the import fails with it, one line each."""
    out.refusals.append(Note(manifest.source, path, why, todo))


def leftovers(
    out: Imported,
    manifest: Manifest,
    spec: Mapping[str, object],
    handled: set[str],
    reasons: Mapping[str, tuple[str, str]],
    prefix: str = "spec",
) -> None:
    """A note for every key of ``spec`` no converter carried: its own reason when
    ``reasons`` has one, else a generic one naming the field."""
    for key in spec:
        if key in handled:
            continue
        why, todo = reasons.get(
            key,
            (
                "langop-infra has no equivalent field",
                "set what it does by hand, or leave it out",
            ),
        )
        note(out, manifest, f"{prefix}.{key}", why, todo)


def entry_base(manifest: Manifest) -> Json:
    """``{name, namespace}`` of the entry a manifest becomes; status is noted as dropped."""
    return {"name": manifest.name, "namespace": manifest.namespace}


def drop_status(out: Imported, manifest: Manifest) -> None:
    if manifest.document.get("status"):
        note(
            out,
            manifest,
            "status",
            "status is what a controller observed, not configuration",
            "dropped; langop-infra reports its own (stack outputs, `langop-infra outputs`)",
        )


def env_map(
    out: Imported, manifest: Manifest, env: object, path: str
) -> tuple[dict[str, str], dict[str, Json]]:
    """A Kubernetes ``env`` list as ``env`` (literals) and ``secretEnv`` (Secret references:
    the value stays in the Secret). A literal named like a credential is not copied: it
    becomes a reference to ``<name>-credentials`` (a Secret the user makes), with a note."""
    literal: dict[str, str] = {}
    secret: dict[str, Json] = {}
    for i, item in enumerate(items(env)):
        entry = mapping(item)
        name = str(entry.get("name", ""))
        ref = mapping(mapping(entry.get("valueFrom")).get("secretKeyRef"))
        if "value" in entry and credential_literal(name, entry["value"]):
            secret[name] = _credential_reference(out, manifest, f"{path}[{i}].value", name)
        elif "value" in entry:
            literal[name] = str(entry["value"])
        elif ref:
            secret[name] = {"secretKeyRef": {"name": ref.get("name"), "key": ref.get("key")}}
            out.secret(str(ref.get("name")))
        elif "valueFrom" in entry:
            note(
                out,
                manifest,
                f"{path}[{i}].valueFrom",
                "only literal values and secretKeyRef carry over (fieldRef, configMapKeyRef "
                "and resourceFieldRef do not)",
                f"set {name} with envFrom or a literal in env",
            )
    return literal, secret


def credential_literal(name: str, value: object) -> bool:
    """An env literal that holds a credential: named like one, with a value that is not a
    reference (``${VAR}``) or empty."""
    text = str(value or "").strip()
    return is_credential_env(name) and bool(text) and not _REFERENCE.match(text)


def _credential_reference(out: Imported, manifest: Manifest, path: str, name: str) -> Json:
    """``secretKeyRef`` to ``<manifest name>-credentials``, key ``name``, and the note that
    says to make that Secret; the literal is never copied."""
    holder = f"{manifest.name or 'imported'}-credentials"
    out.secret(holder)
    note(
        out,
        manifest,
        path,
        f"{name} is a credential written as a literal; it is not copied into the stack file",
        f"it is read from Secret {holder} (key {name}) instead: create it, e.g. kubectl "
        f"create secret generic {holder} --from-literal={name}=..., or declare it under "
        "langop-infra:secrets with pulumi config set --secret",
    )
    return {"secretKeyRef": {"name": holder, "key": name}}


def egress_rules(out: Imported, manifest: Manifest, rules: object, path: str) -> list[Json]:
    """language-operator's ``NetworkRule`` list as ``egressTo``: CIDR destinations carry
    over; DNS names cannot (a NetworkPolicy matches addresses), so they are noted."""
    carried: list[Json] = []
    for i, rule in enumerate(items(rules)):
        rule_map = mapping(rule)
        to = mapping(rule_map.get("to"))
        ports = [
            {"port": p.get("port"), "protocol": p.get("protocol", "TCP")}
            for p in map(mapping, items(rule_map.get("ports")))
            if p.get("port")
        ]
        if to.get("cidr"):
            carried.append({"cidr": to["cidr"], **({"ports": ports} if ports else {})})
        if to.get("dns"):
            note(
                out,
                manifest,
                f"{path}[{i}].to.dns",
                "a NetworkPolicy matches addresses, not host names",
                "egress stays open for this workload; to restrict it, list the hosts' "
                "address ranges in egressTo ({cidr, host}) and set egress: restricted",
            )
    return carried


def resources(value: object) -> Json | None:
    """``{requests, limits}`` with only cpu and memory (what langop-infra sets)."""
    found = mapping(value)
    shaped = {
        part: {k: str(v) for k, v in mapping(found.get(part)).items() if k in ("cpu", "memory")}
        for part in ("requests", "limits")
    }
    shaped = {k: v for k, v in shaped.items() if v}
    return shaped or None


def stack_label(name: str) -> str:
    """A Kubernetes object name (a DNS-1123 subdomain, dots allowed) as the DNS-1123 label
    stack names are: ``gpt-3.5-turbo`` becomes ``gpt-3-5-turbo``."""
    label = re.sub(r"[^a-z0-9-]+", "-", name.lower())[:63]
    return label.strip("-")


def compact(entry: Json) -> Json:
    """``entry`` without keys whose value is ``None``, an empty dict or an empty list."""
    return {k: v for k, v in entry.items() if v is not None and v != {} and v != []}
