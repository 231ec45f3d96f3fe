"""Rotating a credential a pod reads rolls that pod, whichever way the API took it (issue 51,
"Done when"): one case per way, each rendered with the credential, again with the same one
(no roll), and with another (a roll), the digest compared on the pod that reads it.

An HttpTool's credential counts twice: given as a secret Output (kept in the tool's own
Secret) and as the user's own ``k8s.core.v1.Secret`` object, whose data the digest covers as
it covers a Secret langop-infra makes.

The ways of tests/test_secret_roll.py's cluster document (a cluster Secret read through
``secretEnv``, a model's ``apiKey`` by the gateway, a header's ``valueFrom``, a sidecar's)
are covered there; here the rest of the Python API and of a stack file.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from langop_infra import HttpTool, LanguageAgent, LanguageCluster, LanguageTool
from langop_infra.manifests._contract import SECRET_DIGEST_ANNOTATION
from langop_infra.offline._mock_engine import run_program
from langop_infra.sync.rollout_key import OFFLINE_KEY

TOKEN = "cnry-ways-token-7c2d"
OTHER = "cnry-ways-other-7c2d"
IMAGE = "ghcr.io/acme/memory:1"
AGENT_IMAGE = "ghcr.io/acme/agent:1"
Way = Callable[[str], None]


def tool_secret_env(token: str) -> None:
    LanguageTool("memory", image=IMAGE, namespace="apps", secret_env={"TOKEN": token})


def tool_secret_env_output(token: str) -> None:
    secret = pulumi.Output.secret(token)
    LanguageTool("memory", image=IMAGE, namespace="apps", secret_env={"TOKEN": secret})


def tool_env_secret_output(token: str) -> None:
    secret = pulumi.Output.secret(token)
    LanguageTool("memory", image=IMAGE, namespace="apps", env={"TOKEN": secret})


def agent_secret_env(token: str) -> None:
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", secret_env={"TOKEN": token})


def agent_env_secret_output(token: str) -> None:
    secret = pulumi.Output.secret(token)
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", env={"TOKEN": secret})


def agent_header_output(token: str) -> None:
    header = {"name": "Authorization", "value": pulumi.Output.secret(token)}
    server = {"name": "web", "url": "https://search.example.com/mcp", "headers": [header]}
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", mcp_servers=[server])


def agent_header_secret(token: str) -> None:
    header = {"name": "Authorization", "secret": token}
    server = {"name": "web", "url": "https://search.example.com/mcp", "headers": [header]}
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", mcp_servers=[server])


def sidecar_secret_env(token: str) -> None:
    files = LanguageTool(
        "files",
        image=IMAGE,
        namespace="apps",
        deployment_mode="sidecar",
        secret_env={"TOKEN": pulumi.Output.secret(token)},
    )
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", tools=[files])


def scheduled_agent_secret_env(token: str) -> None:
    LanguageAgent(
        "helper",
        image=AGENT_IMAGE,
        namespace="apps",
        secret_env={"TOKEN": token},
        schedule={"cron": "0 7 * * 1-5", "input": "Summarise."},
    )


def cluster(document: dict[str, Any]) -> None:
    LanguageCluster("apps", {"namespace": "apps", **document})


SHARED = {"name": "shared", "key": "token"}
WEBHOOK = {
    "name": "create-ticket",
    "description": "Open a support ticket",
    "url": "https://hooks.example.com/tickets",
    "authentication": {"type": "bearer", "secretRef": SHARED},
}
HTTP_TOOL = {
    "name": "lookup",
    "description": "Look a ticket up.",
    "endpoint": "https://tickets.example.com/x",
    "displayName": "Ticket lookup",
    "version": "1",
    "authentication": {"type": "bearer", "secretRef": SHARED},
}


HTTP_TOOL_FIELDS = {
    "display_name": "Ticket lookup",
    "description": "Look a ticket up.",
    "endpoint": "https://tickets.example.com/x",
}


def cluster_webhook_auth(token: str) -> None:
    agent = {"name": "helper", "image": AGENT_IMAGE, "webhookTools": [WEBHOOK]}
    cluster({"secrets": {"shared": {"token": token}}, "agents": [agent]})


def cluster_http_tool_auth(token: str) -> None:
    agent = {"name": "helper", "image": AGENT_IMAGE, "httpTools": [{"name": "lookup"}]}
    cluster({"secrets": {"shared": {"token": token}}, "httpTools": [HTTP_TOOL], "agents": [agent]})


def cluster_direct_model_key(token: str) -> None:
    model = {
        "name": "gpt",
        "provider": "openai",
        "modelName": "gpt-4o-mini",
        "gateway": False,
        "apiKey": {"secretKeyRef": SHARED},
    }
    agent = {"name": "helper", "image": AGENT_IMAGE, "model": "gpt"}
    cluster({"secrets": {"shared": {"token": token}}, "models": [model], "agents": [agent]})


def http_tool_secret_output(token: str) -> None:
    credential = {"type": "bearer", "value": pulumi.Output.secret(token)}
    tool = HttpTool("lookup", namespace="apps", **HTTP_TOOL_FIELDS, authentication=credential)
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", http_tools=[tool])


def users_secret_tool(**values: Any) -> None:
    """The user's own Secret, as the object, given ``values`` (``string_data=`` or ``data=``):
    its data is in the digest of the pods reading it."""
    secret = k8s.core.v1.Secret(
        "shared", metadata={"name": "shared", "namespace": "apps"}, **values
    )
    credential = {"type": "bearer", "secretRef": {"name": secret, "key": "token"}}
    tool = HttpTool("lookup", namespace="apps", **HTTP_TOOL_FIELDS, authentication=credential)
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", http_tools=[tool])


def http_tool_users_secret(token: str) -> None:
    users_secret_tool(string_data={"token": token})


def http_tool_users_secret_data(token: str) -> None:
    users_secret_tool(data={"token": base64.b64encode(token.encode()).decode()})


# (way, the kind and name of the workload whose pods read the credential)
WAYS: list[tuple[Way, str, str]] = [
    (tool_secret_env, "Deployment", "memory"),
    (tool_secret_env_output, "Deployment", "memory"),
    (tool_env_secret_output, "Deployment", "memory"),
    (agent_secret_env, "Deployment", "helper"),
    (agent_env_secret_output, "Deployment", "helper"),
    (agent_header_output, "Deployment", "helper"),
    (agent_header_secret, "Deployment", "helper"),
    (sidecar_secret_env, "Deployment", "helper"),
    (scheduled_agent_secret_env, "CronJob", "helper"),
    (cluster_webhook_auth, "Deployment", "helper"),
    (cluster_http_tool_auth, "Deployment", "helper"),
    (cluster_direct_model_key, "Deployment", "helper"),
    (http_tool_secret_output, "Deployment", "helper"),
    (http_tool_users_secret, "Deployment", "helper"),
    (http_tool_users_secret_data, "Deployment", "helper"),
]


def pod_digest(way: Way, token: str, kind: str, name: str, *, preview: bool = False) -> str:
    run = run_program(lambda: way(token), rollout_key=OFFLINE_KEY, preview=preview)
    [manifest] = [m for m in run.manifests() if m["kind"] == kind and m["metadata"]["name"] == name]
    spec = manifest["spec"]
    if kind == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    annotations = spec["template"]["metadata"].get("annotations", {})
    assert SECRET_DIGEST_ANNOTATION in annotations, f"{kind} {name} carries no digest"
    found = annotations[SECRET_DIGEST_ANNOTATION]
    assert found.startswith("hmac-sha256:"), f"{kind} {name}: digest {found}"
    return found


@pytest.mark.parametrize(("way", "kind", "name"), WAYS, ids=[w.__name__ for w, _, _ in WAYS])
def test_rotating_the_credential_rolls_the_pod_that_reads_it(
    way: Way, kind: str, name: str
) -> None:
    first = pod_digest(way, TOKEN, kind, name)
    assert pod_digest(way, TOKEN, kind, name) == first
    assert pod_digest(way, OTHER, kind, name) != first


@pytest.mark.parametrize("way", [http_tool_users_secret, http_tool_users_secret_data])
def test_a_users_secret_digest_is_known_at_preview(way: Way) -> None:
    """The provider reports the user's Secret's ``data`` at preview whichever way it was given
    (``stringData`` folded in), so a preview with the stack's key shows the digest of the up."""
    up = pod_digest(way, TOKEN, "Deployment", "helper")
    assert pod_digest(way, TOKEN, "Deployment", "helper", preview=True) == up
