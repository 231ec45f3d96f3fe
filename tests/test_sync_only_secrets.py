"""Secrets only schema sync reads stay in Pulumi state, out of the cluster.

Schema sync runs where ``pulumi up`` runs and takes its header values and OAuth client secret
from the program. A Kubernetes Secret holding them would be read by no workload, only by
whoever may read Secrets in that namespace: none is made. Canaries are searched in the
rendered manifests, every registration's plain inputs, the outputs, the logs and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.checks._collisions import secret_namespaces
from langop_infra.config.checks._secret_refs import sync_only_secrets
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.offline._engine_values import is_wrapped_secret
from langop_infra.offline._mock_engine import DYNAMIC_TYPE, run_program
from langop_infra.testing.secrets import secret_leaves
from tests.test_secrets_audit import plain_strings

HEADER = "cnry-sync-only-header-81d0"
CLIENT = "cnry-sync-only-client-81d0"
SHARED = "cnry-shared-with-a-pod-81d0"
SECRET_TYPE = "kubernetes:core/v1:Secret"


def cluster_document() -> dict[str, Any]:
    return {
        "namespace": "apps",
        "secrets": {
            "sync-header": {"token": HEADER},
            "sync-oauth": {"secret": CLIENT},
            "shared": {"token": SHARED},
        },
        "tools": [
            {
                "name": "memory",
                "image": "ghcr.io/acme/memory:1",
                "namespace": "tools",
                "secretEnv": {"SHARED": {"secretKeyRef": {"name": "shared", "key": "token"}}},
                "schemaSync": {
                    "headers": [
                        {
                            "name": "X-Api-Key",
                            "valueFrom": {"secretKeyRef": {"name": "sync-header", "key": "token"}},
                        },
                        {
                            "name": "X-Shared",
                            "valueFrom": {"secretKeyRef": {"name": "shared", "key": "token"}},
                        },
                    ],
                    "access": "direct",  # auth never passes the API server proxy
                    "auth": {
                        "clientId": "deployer",
                        "issuer": "https://auth.example.com",
                        "clientSecret": {"secretKeyRef": {"name": "sync-oauth", "key": "secret"}},
                    },
                },
            }
        ],
    }


def test_only_secrets_a_workload_reads_become_cluster_secrets() -> None:
    cluster = parse_cluster(cluster_document())
    assert sync_only_secrets(cluster) == {"sync-header", "sync-oauth"}
    # `shared` is read by the tool's pod too: in the cluster's namespace and the tool's.
    assert secret_namespaces(cluster) == {"shared": ["apps", "tools"]}


def test_sync_only_values_reach_the_sync_as_secrets_and_nowhere_else() -> None:
    run = run_program(lambda: LanguageCluster("apps", cluster_document()))
    secrets = {r.name: r for r in run.registrations if r.type == SECRET_TYPE}
    assert sorted(secrets) == ["apps/shared", "tools/shared"]
    in_secrets = json.dumps([secret_leaves(r.inputs) for r in secrets.values()], default=str)
    assert SHARED in in_secrets and HEADER not in in_secrets and CLIENT not in in_secrets

    [sync] = [r for r in run.registrations if r.type == DYNAMIC_TYPE]
    assert is_wrapped_secret(sync.inputs["headers"]) and is_wrapped_secret(sync.inputs["oauth"])
    assert sync.inputs["headers"]["value"] == {"X-Api-Key": HEADER, "X-Shared": SHARED}
    assert sync.inputs["oauth"]["value"]["client_secret"] == CLIENT

    plain = [text for reg in run.registrations for _, text in plain_strings(reg.inputs)]
    plain += [yaml.safe_dump(run.manifests()), "\n".join(run.logs + run.warnings)]
    plain += [text for _, text in plain_strings(run.outputs)]
    assert [t for t in plain if HEADER in t or CLIENT in t or SHARED in t] == []


def test_a_name_used_anywhere_else_keeps_its_secret() -> None:
    """Conservative: an image pull secret of the same name is a reader too."""
    document = cluster_document()
    document["tools"][0]["imagePullSecrets"] = ["sync-header"]
    cluster = parse_cluster(document)
    assert sync_only_secrets(cluster) == {"sync-oauth"}
    assert secret_namespaces(cluster)["sync-header"] == ["apps"]


def test_an_external_secret_for_sync_says_how_to_read_it() -> None:
    document = cluster_document()
    document["secrets"].pop("sync-header")
    document["externalSecrets"] = ["sync-header"]
    with pytest.raises(SpecError) as caught:
        parse_cluster(document)
    [problem] = caught.value.problems
    assert problem.path == "tools[0].schemaSync.headers[0].valueFrom"
    assert problem.message.startswith(
        "secret 'sync-header' is under externalSecrets, which this program never reads"
    )
    assert "secrets.sync-header.token" in problem.message
    assert HEADER not in str(caught.value) and CLIENT not in str(caught.value)


def test_render_shows_no_sync_only_secret(tmp_path: Any, capsys: pytest.CaptureFixture) -> None:
    from pathlib import Path

    from langop_infra.cli.main import main

    root = Path(__file__).resolve().parents[1]
    path = tmp_path / "Pulumi.qa.yaml"
    config = {f"langop-infra:{k}": v for k, v in cluster_document().items()}
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    assert main(["render", "--config", str(path), "--project-dir", str(root)]) == 0
    out, err = capsys.readouterr()
    documents = [d for d in yaml.safe_load_all(out) if d]
    secrets = [
        (d["metadata"]["namespace"], d["metadata"]["name"])
        for d in documents
        if d["kind"] == "Secret"
    ]
    assert secrets == [("apps", "shared"), ("tools", "shared")]
    assert [c for c in (HEADER, CLIENT, SHARED) if c in out + err] == []
