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


Give = Callable[[str], object]  # the token as a program gives it


def plain(token: str) -> str:
    return token


def secret(token: str) -> pulumi.Output[str]:
    return pulumi.Output.secret(token)


def base64_of(token: str) -> str:
    return base64.b64encode(token.encode()).decode()


def tool(field: str, give: Give) -> Way:
    """The token in a LanguageTool's ``field`` (``secret_env``, ``env``)."""
    return lambda token: LanguageTool(
        "memory", image=IMAGE, namespace="apps", **{field: {"TOKEN": give(token)}}
    )


def agent(field: str, give: Give, **more: Any) -> Way:
    """The token in a LanguageAgent's ``field``; ``more``, its other arguments."""
    return lambda token: LanguageAgent(
        "helper", image=AGENT_IMAGE, namespace="apps", **{field: {"TOKEN": give(token)}}, **more
    )


def header(key: str, give: Give) -> Way:
    """The token as an external MCP server's header ``key`` (``value``, ``secret``)."""

    def way(token: str) -> None:
        headers = [{"name": "Authorization", key: give(token)}]
        server = {"name": "web", "url": "https://search.example.com/mcp", "headers": headers}
        LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", mcp_servers=[server])

    return way


def sidecar_secret_env(token: str) -> None:
    files = LanguageTool(
        "files",
        image=IMAGE,
        namespace="apps",
        deployment_mode="sidecar",
        secret_env={"TOKEN": pulumi.Output.secret(token)},
    )
    LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", tools=[files])


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
DIRECT_MODEL = {
    "name": "gpt",
    "provider": "openai",
    "modelName": "gpt-4o-mini",
    "gateway": False,
    "apiKey": {"secretKeyRef": SHARED},
}
HELPER = {"name": "helper", "image": AGENT_IMAGE}


def cluster(**document: Any) -> Way:
    """A LanguageCluster's ``document``, the token in its Secret ``shared``."""
    return lambda token: LanguageCluster(
        "apps", {"namespace": "apps", "secrets": {"shared": {"token": token}}, **document}
    )


HTTP_TOOL_FIELDS = {
    "display_name": "Ticket lookup",
    "description": "Look a ticket up.",
    "endpoint": "https://tickets.example.com/x",
}


def http_tool(credential: Callable[[str], dict[str, object]]) -> Way:
    """An HttpTool whose ``authentication`` is ``credential(token)``, handed to an agent."""

    def way(token: str) -> None:
        auth = credential(token)
        tool = HttpTool("lookup", namespace="apps", **HTTP_TOOL_FIELDS, authentication=auth)
        LanguageAgent("helper", image=AGENT_IMAGE, namespace="apps", http_tools=[tool])

    return way


def users_secret(field: str, give: Give) -> Callable[[str], dict[str, object]]:
    """A credential naming the user's own Secret, as the object, the token in its ``field``
    (``string_data``, ``data``): its data is in the digest of the pods reading it."""

    def credential(token: str) -> dict[str, object]:
        metadata = {"name": "shared", "namespace": "apps"}
        shared = k8s.core.v1.Secret("shared", metadata=metadata, **{field: {"token": give(token)}})
        return {"type": "bearer", "secretRef": {"name": shared, "key": "token"}}

    return credential


DEPLOYMENT = "Deployment"
# id -> (way, the kind and name of the workload whose pods read the credential)
WAYS: dict[str, tuple[Way, str, str]] = {
    "tool_secret_env": (tool("secret_env", plain), DEPLOYMENT, "memory"),
    "tool_secret_env_output": (tool("secret_env", secret), DEPLOYMENT, "memory"),
    "tool_env_secret_output": (tool("env", secret), DEPLOYMENT, "memory"),
    "agent_secret_env": (agent("secret_env", plain), DEPLOYMENT, "helper"),
    "agent_env_secret_output": (agent("env", secret), DEPLOYMENT, "helper"),
    "agent_header_output": (header("value", secret), DEPLOYMENT, "helper"),
    "agent_header_secret": (header("secret", plain), DEPLOYMENT, "helper"),
    "sidecar_secret_env": (sidecar_secret_env, DEPLOYMENT, "helper"),
    "scheduled_agent_secret_env": (
        agent("secret_env", plain, schedule={"cron": "0 7 * * 1-5", "input": "Summarise."}),
        "CronJob",
        "helper",
    ),
    "cluster_webhook_auth": (
        cluster(agents=[{**HELPER, "webhookTools": [WEBHOOK]}]),
        DEPLOYMENT,
        "helper",
    ),
    "cluster_http_tool_auth": (
        cluster(httpTools=[HTTP_TOOL], agents=[{**HELPER, "httpTools": [{"name": "lookup"}]}]),
        DEPLOYMENT,
        "helper",
    ),
    "cluster_direct_model_key": (
        cluster(models=[DIRECT_MODEL], agents=[{**HELPER, "model": "gpt"}]),
        DEPLOYMENT,
        "helper",
    ),
    "http_tool_secret_output": (
        http_tool(lambda token: {"type": "bearer", "value": secret(token)}),
        DEPLOYMENT,
        "helper",
    ),
    "http_tool_users_secret": (
        http_tool(users_secret("string_data", plain)),
        DEPLOYMENT,
        "helper",
    ),
    "http_tool_users_secret_data": (
        http_tool(users_secret("data", base64_of)),
        DEPLOYMENT,
        "helper",
    ),
}


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


@pytest.mark.parametrize(("way", "kind", "name"), WAYS.values(), ids=list(WAYS))
def test_rotating_the_credential_rolls_the_pod_that_reads_it(
    way: Way, kind: str, name: str
) -> None:
    first = pod_digest(way, TOKEN, kind, name)
    assert pod_digest(way, TOKEN, kind, name) == first
    assert pod_digest(way, OTHER, kind, name) != first


@pytest.mark.parametrize("way_id", ["http_tool_users_secret", "http_tool_users_secret_data"])
def test_a_users_secret_digest_is_known_at_preview(way_id: str) -> None:
    """The provider reports the user's Secret's ``data`` at preview whichever way it was given
    (``stringData`` folded in), so a preview with the stack's key shows the digest of the up."""
    way = WAYS[way_id][0]
    up = pod_digest(way, TOKEN, "Deployment", "helper")
    assert pod_digest(way, TOKEN, "Deployment", "helper", preview=True) == up
