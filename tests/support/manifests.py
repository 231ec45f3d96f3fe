"""What a program registered, and the official Kubernetes schemas' verdict on it."""

from __future__ import annotations

from typing import Any

import kubernetes_validate

from langop_infra.offline._mock_engine import ProgramRun

KUBERNETES_VERSION = "1.30.0"


def validate_manifests(manifests: list[dict[str, Any]]) -> None:
    """Check every object against the official Kubernetes 1.30 schemas (strict: no unknown
    fields)."""
    for manifest in manifests:
        try:
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            name = manifest.get("metadata", {}).get("name")
            raise AssertionError(f"{manifest.get('kind')} {name} is invalid: {exc}") from exc


class Rendered:
    """What a program registered: manifests (secrets redacted), raw registrations, outputs."""

    def __init__(self, run: ProgramRun) -> None:
        self.run = run
        self.manifests = run.manifests()
        self.outputs = run.outputs

    def find(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        found = [
            m
            for m in self.manifests
            if m["kind"] == kind
            and m["metadata"]["name"] == name
            and (namespace is None or m["metadata"].get("namespace") == namespace)
        ]
        assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
        return found[0]

    def kinds(self) -> list[tuple[str, str, str]]:
        return sorted(
            (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"])
            for m in self.manifests
        )
