"""The secrets audit.

ONE program sets every kind of secret input to its own canary value:

- the stack program (``stack_program.main``) with the config ``pulumi up`` would hand it for a
  stack file whose ``secrets`` hold a plain-text value and a ``secure:`` one (Pulumi decrypts
  the latter and marks the whole key secret), tools and agents with literal ``secretEnv``,
  header ``secret`` strings, headers and schema-sync headers ``valueFrom`` declared secrets, a
  header ``valueFrom`` an existing Secret the program never sees, webhook auth, and
  ``kubernetes:kubeconfig``;
- plus, in the same program, Python-API components given ``pulumi.Output.secret`` values:
  tool secret env, agent secret env, an MCP header and a schema-sync header.

Then every place a value can surface is searched: each rendered manifest, ConfigMap,
config.yaml and env literal, every non-secret input of every registration (components and the
schema-sync resource included), every output of every component and resource and every stack
export, the engine's logs, and ``langop-infra render`` stdout for the same stack as a file.
No canary may appear in plain text. And each canary must reach the engine as a secret, so the
audit cannot pass because a value was dropped on the way.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from langop_infra._errors import REDACTED
from langop_infra.cli.main import main as cli_main
from langop_infra.components.agent import LanguageAgent
from langop_infra.components.tool import LanguageTool
from langop_infra.core.problems import SpecError
from langop_infra.offline._engine_values import Secret, is_wrapped_secret
from langop_infra.offline._mock_engine import ProgramRun, Registration, run_program
from langop_infra.offline._render import render_stack
from langop_infra.program.stack import main as stack_main
from langop_infra.testing.secrets import secret_leaves

REPO = Path(__file__).resolve().parents[1]
PREFIX = "langop-infra:"
SECRET_TYPE = "kubernetes:core/v1:Secret"
SYNC_TYPE = "pulumi-python:dynamic:Resource"


def canary(kind: str) -> str:
    return f"cnry-{kind}-5b1e0c7d"


# Every kind of secret input, each with its own canary.
TOOL_ENV_LITERAL = canary("tool-env-literal")
SIDECAR_ENV_LITERAL = canary("sidecar-env-literal")
AGENT_ENV_LITERAL = canary("agent-env-literal")
HEADER_SECRET_STRING = canary("header-secret-string")
STACK_PLAIN = canary("stack-secret-plain")  # written in plain text in the stack file
STACK_SECURE = canary("stack-secret-secure")  # a `secure:` value, as pulumi decrypts it
WEBHOOK_AUTH = canary("webhook-auth")
HTTP_TOOL_AUTH = canary("http-tool-auth")
SYNC_VALUE_FROM = canary("sync-header-value-from")
SYNC_SECRET_STRING = canary("sync-header-secret-string")
KUBECONFIG_TOKEN = canary("kubeconfig-token")
TOOL_ENV_PULUMI = canary("tool-env-pulumi")
AGENT_ENV_PULUMI = canary("agent-env-pulumi")
HEADER_PULUMI = canary("header-pulumi")
SYNC_PULUMI = canary("sync-header-pulumi")
TOOL_HEADER_VALUE_FROM = canary("tool-header-value-from")
TOOL_HEADER_SECRET_STRING = canary("tool-header-secret-string")
TOOL_HEADER_PULUMI = canary("tool-header-pulumi")
SECURE_CIPHERTEXT = canary("secure-ciphertext")
KNOWN_CANARIES = {
    TOOL_ENV_LITERAL: "memory-env",
    SIDECAR_ENV_LITERAL: "files-env",
    AGENT_ENV_LITERAL: "researcher-env",
    HEADER_SECRET_STRING: "researcher-env",
    STACK_PLAIN: "search-credentials",
    STACK_SECURE: "ticketing-token",
    WEBHOOK_AUTH: "webhook-credentials",
    HTTP_TOOL_AUTH: "payment-credentials",
    # Read only by schema sync: held by the sync resource, never by a cluster Secret.
    SYNC_VALUE_FROM: "research/memory-schema",
    SYNC_SECRET_STRING: "research/memory-schema",
    KUBECONFIG_TOKEN: "research/memory-schema",
    TOOL_ENV_PULUMI: "vault-env",
    AGENT_ENV_PULUMI: "py-agent-env",
    HEADER_PULUMI: "py-agent-env",
    SYNC_PULUMI: "py/vault-schema",
    TOOL_HEADER_VALUE_FROM: "tool-credentials",
    TOOL_HEADER_SECRET_STRING: "researcher-env",
    TOOL_HEADER_PULUMI: "py-agent-env",
}
# The value of the existing Secret `existing-credentials`: never given to the program.
EXISTING_SECRET = ("existing-credentials", "token")
ALL_CANARIES = [*KNOWN_CANARIES, SECURE_CIPHERTEXT]
# Images pinned by digest, so that `render` has no warning to print.
PIN = "@sha256:" + "6" * 64

KUBECONFIG = yaml.safe_dump(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://203.0.113.10:6443"}}],
        "users": [{"name": "u", "user": {"token": KUBECONFIG_TOKEN}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
)


def stack_config(secrets: dict[str, Any]) -> dict[str, Any]:
    """The stack's ``langop-infra:*`` config, with ``secrets`` as given."""
    return {
        "namespace": "research",
        "defaults": {"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}]},
        "secrets": secrets,
        "externalSecrets": [EXISTING_SECRET[0]],
        "httpTools": [
            {
                "name": "payment-create",
                "displayName": "Create Payment",
                "description": "Create a new payment transaction",
                "endpoint": "https://payments.example.com/v2/payments",
                "authentication": {
                    "type": "oauth2",
                    "secretRef": {"name": "payment-credentials", "key": "client"},
                },
            }
        ],
        "tools": [
            {
                "name": "memory",
                "image": "ghcr.io/acme/memory-mcp:1.4.0" + PIN,
                "secretEnv": {"MEMORY_KEY": TOOL_ENV_LITERAL},
                "schemaSync": {
                    "headers": [
                        {
                            "name": "Authorization",
                            "valueFrom": {
                                "secretKeyRef": {"name": "sync-credentials", "key": "token"}
                            },
                        },
                        {"name": "X-Sync-Key", "secret": SYNC_SECRET_STRING},
                    ]
                },
            },
            {
                "name": "files",
                "image": "ghcr.io/acme/files-mcp:0.3.1" + PIN,
                "deploymentMode": "sidecar",
                "port": 8181,
                "secretEnv": {"FILES_KEY": SIDECAR_ENV_LITERAL},
            },
        ],
        "agents": [
            {
                "name": "researcher",
                "image": "ghcr.io/acme/research-agent:2.0.0" + PIN,
                "tools": [
                    {
                        "name": "memory",
                        "allowedTools": ["recall"],
                        "headers": [
                            {
                                "name": "Authorization",
                                "valueFrom": {
                                    "secretKeyRef": {"name": "tool-credentials", "key": "token"}
                                },
                            },
                            {"name": "X-Tool-Key", "secret": TOOL_HEADER_SECRET_STRING},
                        ],
                    },
                    {"name": "files"},
                ],
                "httpTools": [{"name": "payment-create"}],
                "secretEnv": {"OPENAI_API_KEY": AGENT_ENV_LITERAL},
                "mcpServers": [
                    {
                        "name": "web-search",
                        "url": "https://search.example.com/mcp",
                        "headers": [
                            {
                                "name": "Authorization",
                                "valueFrom": {
                                    "secretKeyRef": {"name": "search-credentials", "key": "token"}
                                },
                            },
                            {"name": "X-Api-Key", "secret": HEADER_SECRET_STRING},
                            {
                                "name": "X-Existing",
                                "valueFrom": {
                                    "secretKeyRef": {
                                        "name": EXISTING_SECRET[0],
                                        "key": EXISTING_SECRET[1],
                                    }
                                },
                            },
                        ],
                    }
                ],
                "webhookTools": [
                    {
                        "name": "fetch_ticket",
                        "url": "https://tickets.example.com/api",
                        "authentication": {
                            "type": "bearer",
                            "secretRef": {"name": "ticketing-token", "key": "token"},
                        },
                    },
                    {
                        "name": "lookup",
                        "url": "https://lookup.example.com/api",
                        "authentication": {
                            "type": "apiKey",
                            "headerName": "X-Api-Key",
                            "secretRef": {"name": "webhook-credentials", "key": "token"},
                        },
                    },
                ],
            }
        ],
    }


STACK_SECRETS = {
    "search-credentials": {"token": STACK_PLAIN},
    "ticketing-token": {"token": STACK_SECURE},
    "webhook-credentials": {"token": WEBHOOK_AUTH},
    "payment-credentials": {"client": HTTP_TOOL_AUTH},
    "sync-credentials": {"token": SYNC_VALUE_FROM},
    "tool-credentials": {"token": TOOL_HEADER_VALUE_FROM},
}


def cli_config(config: dict[str, Any]) -> dict[str, str]:
    """Config as the Pulumi CLI passes it to a program: full keys, structured values as JSON."""
    return {PREFIX + k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def resources_of(root: Any, seen: dict[int, Any]) -> None:
    """Every pulumi Resource reachable from ``root`` through attributes, dicts and lists."""
    if isinstance(root, pulumi.Resource):
        if id(root) in seen:
            return
        seen[id(root)] = root
        for value in vars(root).values():
            resources_of(value, seen)
    elif isinstance(root, dict):
        for value in root.values():
            resources_of(value, seen)
    elif isinstance(root, (list, tuple)):
        for value in root:
            resources_of(value, seen)


def export_every_output(roots: list[Any]) -> None:
    """Export every Output attribute of every component and resource under ``roots``."""
    seen: dict[int, Any] = {}
    for root in roots:
        resources_of(root, seen)
    for resource in seen.values():
        name = f"{type(resource).__name__}:{resource._name}"
        for attr, value in sorted(vars(resource).items()):
            if isinstance(value, pulumi.Output) and not attr.startswith("_"):
                pulumi.export(f"{name}.{attr}", value)


def the_program() -> None:
    """The stack program, plus Python-API components given pulumi secrets."""
    cluster = stack_main()
    vault = LanguageTool(
        "vault",
        image="ghcr.io/acme/vault-mcp:1.0.0",
        namespace="py",
        secret_env={"VAULT_TOKEN": pulumi.Output.secret(TOOL_ENV_PULUMI)},
        schema_sync={"headers": [{"name": "X-Vault", "secret": pulumi.Output.secret(SYNC_PULUMI)}]},
    )
    agent = LanguageAgent(
        "py-agent",
        image="ghcr.io/acme/py-agent:1.0.0",
        namespace="py",
        tools=[
            {
                "name": "vault",
                "headers": [
                    {"name": "X-Vault-Token", "secret": pulumi.Output.secret(TOOL_HEADER_PULUMI)}
                ],
            }
        ],
        secret_env={"AGENT_TOKEN": pulumi.Output.secret(AGENT_ENV_PULUMI)},
        mcp_servers=[
            {
                "name": "github",
                "url": "https://mcp.github.example.com/mcp",
                "headers": [
                    {"name": "Authorization", "secret": pulumi.Output.secret(HEADER_PULUMI)}
                ],
            }
        ],
    )
    export_every_output([cluster, vault, agent])


@cache
def audited_run() -> ProgramRun:
    """The one program, run once, with the config ``pulumi up`` would pass it."""
    config = cli_config(stack_config(STACK_SECRETS))
    config["kubernetes:kubeconfig"] = KUBECONFIG
    return run_program(the_program, stack="prod", config=config, secret_keys=[PREFIX + "secrets"])


def write_stack(tmp_path: Path, secrets: dict[str, Any]) -> Path:
    path = tmp_path / "Pulumi.audit.yaml"
    config = {PREFIX + k: v for k, v in stack_config(secrets).items()}
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def render_stdout(config_file: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["render", "--config", str(config_file), "--project-dir", str(REPO)])
    assert (code, err.getvalue()) == (0, "")
    return out.getvalue()


# --- where plain text can surface ------------------------------------------------------------


def plain_strings(value: Any, path: str = "", *, keys: bool = True) -> Iterator[tuple[str, str]]:
    """``(path, text)`` of every scalar (and key) outside a secret, wrapped or resolved."""
    if is_wrapped_secret(value) or isinstance(value, Secret):
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            if keys:
                yield f"{path}.{key}", str(key)
            yield from plain_strings(inner, f"{path}.{key}", keys=keys)
    elif isinstance(value, (list, tuple)):
        for i, inner in enumerate(value):
            yield from plain_strings(inner, f"{path}[{i}]", keys=keys)
    elif value is not None:
        yield path, str(value)


def leaks(places: dict[str, str], canaries: list[str]) -> list[str]:
    return [f"{c} in {where}" for where, text in places.items() for c in canaries if c in text]


def containers(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    if manifest["kind"] != "Deployment":
        return []
    pod = manifest["spec"]["template"]["spec"]
    return [*pod.get("initContainers", []), *pod["containers"]]


def env_by_name(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {
        f"{m['metadata']['namespace']}/{c['name']}/{e['name']}": e
        for m in run.manifests()
        for c in containers(m)
        for e in c.get("env", [])
    }


def places_in(run: ProgramRun) -> dict[str, str]:
    """Every place of a run where plain text can surface, by name."""
    places: dict[str, str] = {"manifests": yaml.safe_dump(run.manifests())}
    for m in run.manifests():
        if m["kind"] == "ConfigMap":
            for key, text in m.get("data", {}).items():
                places[f"ConfigMap {m['metadata']['name']} {key}"] = text
    for where, env in env_by_name(run).items():
        places[f"env literal {where}"] = str(env.get("value", ""))
    for reg in run.registrations:
        for where, text in plain_strings(reg.inputs):
            places[f"input {reg.type} {reg.name}{where}"] = text
    for where, text in plain_strings(run.outputs):
        places[f"output {where}"] = text
    places["logs"] = "\n".join(run.logs)
    return places


def secret_holders(run: ProgramRun) -> dict[str, set[tuple[str, str]]]:
    """Each secret value the engine received, with the (type, name) of what holds it."""
    held: dict[str, set[tuple[str, str]]] = {}
    for reg in run.registrations:
        for _, value in secret_leaves(reg.inputs):
            held.setdefault(str(value), set()).add((reg.type, reg.name))
    return held


def registration(run: ProgramRun, type_: str, name_suffix: str) -> Registration:
    found = [r for r in run.registrations if r.type == type_ and r.name.endswith(name_suffix)]
    assert len(found) == 1, [r.name for r in run.registrations if r.type == type_]
    return found[0]


# --- the audit -------------------------------------------------------------------------------


def test_no_canary_in_plain_text_anywhere() -> None:
    run = audited_run()
    places = places_in(run)
    assert len(places) > 100, "the audit looked at too little"
    assert leaks(places, ALL_CANARIES) == []


def test_every_canary_reaches_the_engine_as_a_secret() -> None:
    held = secret_holders(audited_run())
    for value, holder in KNOWN_CANARIES.items():
        holders = {h for text, hs in held.items() if value in text for h in hs}
        assert holders, f"{value} never reached the engine as a secret"
        assert {t for t, _ in holders} <= {SECRET_TYPE, SYNC_TYPE}, holders
        assert any(name.endswith(holder) for _, name in holders), (value, holders)


def test_kubernetes_secrets_hold_exactly_the_secret_values() -> None:
    run = audited_run()
    secrets = {r.name: r for r in run.registrations if r.type == SECRET_TYPE}
    stringdata = {}
    for name, reg in secrets.items():
        string_data = reg.inputs["stringData"]
        assert [p for p, _ in plain_strings(string_data, keys=False)] == [], name
        leaves = secret_leaves(string_data)
        stringdata[name.rpartition("/")[2]] = {p.lstrip("."): v for p, v in leaves}
    assert stringdata["memory-env"] == {"MEMORY_KEY": TOOL_ENV_LITERAL}
    assert stringdata["researcher-env"] == {
        "OPENAI_API_KEY": AGENT_ENV_LITERAL,
        "ARK_MCP_WEB_SEARCH_HEADER_X_API_KEY": HEADER_SECRET_STRING,
        "LANGOP_TOOL_MEMORY_HEADER_X_TOOL_KEY": TOOL_HEADER_SECRET_STRING,
    }
    assert stringdata["search-credentials"] == {"token": STACK_PLAIN}
    assert stringdata["py-agent-env"] == {
        "AGENT_TOKEN": AGENT_ENV_PULUMI,
        "ARK_MCP_GITHUB_HEADER_AUTHORIZATION": HEADER_PULUMI,
        "LANGOP_TOOL_VAULT_HEADER_X_VAULT_TOKEN": TOOL_HEADER_PULUMI,
    }
    assert stringdata["tool-credentials"] == {"token": TOOL_HEADER_VALUE_FROM}
    # The program never creates, and so never knows, the existing Secret.
    assert EXISTING_SECRET[0] not in stringdata
    # Only schema sync reads `sync-credentials`: it stays in Pulumi state, out of the cluster.
    assert "sync-credentials" not in stringdata
    held = {v for values in stringdata.values() for v in values.values()}
    assert SYNC_VALUE_FROM not in held


def test_schema_sync_headers_and_kubeconfig_are_secret_inputs() -> None:
    run = audited_run()
    memory = registration(run, SYNC_TYPE, "research/memory-schema").inputs
    assert is_wrapped_secret(memory["headers"])
    assert memory["headers"]["value"] == {
        "Authorization": SYNC_VALUE_FROM,
        "X-Sync-Key": SYNC_SECRET_STRING,
    }
    assert is_wrapped_secret(memory["kubeconfig"])
    assert KUBECONFIG_TOKEN in memory["kubeconfig"]["value"]
    vault = registration(run, SYNC_TYPE, "py/vault-schema").inputs
    assert vault["headers"]["value"] == {"X-Vault": SYNC_PULUMI}


def test_secret_env_reaches_pods_only_through_secret_key_refs() -> None:
    env = env_by_name(audited_run())
    expected = {
        "research/memory/MEMORY_KEY": ("memory-env", "MEMORY_KEY"),
        "research/files/FILES_KEY": ("files-env", "FILES_KEY"),  # the sidecar, in the agent pod
        "research/researcher/OPENAI_API_KEY": ("researcher-env", "OPENAI_API_KEY"),
        "research/researcher/ARK_MCP_WEB_SEARCH_HEADER_AUTHORIZATION": (
            "search-credentials",
            "token",
        ),
        "research/researcher/ARK_MCP_WEB_SEARCH_HEADER_X_API_KEY": (
            "researcher-env",
            "ARK_MCP_WEB_SEARCH_HEADER_X_API_KEY",
        ),
        "research/researcher/ARK_MCP_WEB_SEARCH_HEADER_X_EXISTING": EXISTING_SECRET,
        "research/researcher/AGENT_WEBHOOK_FETCH_TICKET_AUTH": ("ticketing-token", "token"),
        "research/researcher/AGENT_WEBHOOK_LOOKUP_AUTH": ("webhook-credentials", "token"),
        "py/vault/VAULT_TOKEN": ("vault-env", "VAULT_TOKEN"),
        "py/py-agent/AGENT_TOKEN": ("py-agent-env", "AGENT_TOKEN"),
        "py/py-agent/ARK_MCP_GITHUB_HEADER_AUTHORIZATION": (
            "py-agent-env",
            "ARK_MCP_GITHUB_HEADER_AUTHORIZATION",
        ),
        # A LanguageTool reference's headers, by the same mechanism.
        "research/researcher/LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION": (
            "tool-credentials",
            "token",
        ),
        "research/researcher/LANGOP_TOOL_MEMORY_HEADER_X_TOOL_KEY": (
            "researcher-env",
            "LANGOP_TOOL_MEMORY_HEADER_X_TOOL_KEY",
        ),
        "py/py-agent/LANGOP_TOOL_VAULT_HEADER_X_VAULT_TOKEN": (
            "py-agent-env",
            "LANGOP_TOOL_VAULT_HEADER_X_VAULT_TOKEN",
        ),
    }
    for where, (name, key) in expected.items():
        assert env[where] == {
            "name": where.rpartition("/")[2],
            "valueFrom": {"secretKeyRef": {"name": name, "key": key}},
        }, where


def test_outputs_derived_from_secrets_are_secret() -> None:
    outputs = audited_run().outputs
    secretish = {
        k: v
        for k, v in outputs.items()
        if (k.startswith(("Secret:", "DigestedSecret:")) and k.endswith(".string_data"))
        or (k.startswith("ToolSchemaSync:") and k.endswith((".headers", ".kubeconfig")))
    }
    # 9 Secrets' stringData (tool-credentials for tool references' headers and
    # payment-credentials for the HttpTool among them; none for the sync-only
    # `sync-credentials`); the headers and kubeconfig of the 2 tools' schema syncs and of the
    # sync of the sidecar `files` through the researcher's pods
    assert len(secretish) == 16, sorted(secretish)
    assert "DigestedSecret:research/payment-credentials.string_data" in secretish
    assert "DigestedSecret:research/tool-credentials.string_data" in secretish
    assert "DigestedSecret:research/sync-credentials.string_data" not in secretish
    for key, value in secretish.items():
        # An empty header map (a sync that sends none) carries nothing to hide.
        assert isinstance(value, Secret) or value == {}, key
    assert sum(isinstance(v, Secret) for v in secretish.values()) == 15
    revealed = json.dumps(
        [v.value for v in secretish.values() if isinstance(v, Secret)], default=str
    )
    assert all(c in revealed for c in KNOWN_CANARIES)
    # What operators read is exported in plain text, and holds no secret.
    assert not isinstance(outputs["agents"], Secret)
    assert "configYaml" in outputs["agents"]["researcher"]


def test_pod_templates_stay_readable() -> None:
    """No Deployment input is a secret: previews show the pod template (README: why secret
    checksums are not hashes)."""
    deployments = [r for r in audited_run().registrations if r.type.endswith("Deployment")]
    assert len(deployments) == 4
    for reg in deployments:
        assert secret_leaves(reg.inputs) == [], reg.name


def test_config_yaml_names_env_vars_not_values() -> None:
    run = audited_run()
    config_map = next(
        m
        for m in run.manifests()
        if m["kind"] == "ConfigMap" and m["metadata"]["name"] == "researcher-config"
    )
    document = yaml.safe_load(config_map["data"]["config.yaml"])
    headers = {h["name"]: h for h in document["mcpServers"][0]["headers"]}
    assert headers["X-Api-Key"] == {
        "name": "X-Api-Key",
        "valueFromEnv": "ARK_MCP_WEB_SEARCH_HEADER_X_API_KEY",
    }
    assert headers["X-Existing"]["valueFromEnv"] == "ARK_MCP_WEB_SEARCH_HEADER_X_EXISTING"
    auth = {t["name"]: t["authentication"] for t in document["webhookTools"]}
    assert auth["lookup"]["valueFromEnv"] == "AGENT_WEBHOOK_LOOKUP_AUTH"
    # A LanguageTool reference's headers and allowedTools, by name only.
    assert document["tools"]["memory"]["allowedTools"] == ["recall"]
    assert document["tools"]["memory"]["headers"] == [
        {"name": "Authorization", "valueFromEnv": "LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION"},
        {"name": "X-Tool-Key", "valueFromEnv": "LANGOP_TOOL_MEMORY_HEADER_X_TOOL_KEY"},
    ]


# --- the same stack as a file, through `langop-infra render` ---------------------------------


def test_render_of_plain_text_secrets(tmp_path: Path) -> None:
    """A dev-style stack file: every secret in plain text, the config key not secret."""
    path = write_stack(tmp_path, STACK_SECRETS)
    stdout = render_stdout(path)
    assert leaks({"render stdout": stdout}, ALL_CANARIES) == []
    # The four Secrets with a `token` agents read (tool-credentials among them);
    # `sync-credentials` (schema sync only) is not rendered.
    assert stdout.count(f"token: '{REDACTED}'") == 4
    assert "name: tool-credentials" in stdout
    assert "name: sync-credentials" not in stdout
    run = render_stack(REPO, config_file=path)
    assert leaks(places_in(run), ALL_CANARIES) == []
    held = secret_holders(run)
    for value in (STACK_PLAIN, STACK_SECURE, WEBHOOK_AUTH, SYNC_VALUE_FROM, TOOL_ENV_LITERAL):
        assert value in held, value


def test_render_of_secure_secrets(tmp_path: Path) -> None:
    """A stack file with ``secure:`` ciphertext next to a plain value: neither is shown."""
    secrets = {
        **STACK_SECRETS,
        "ticketing-token": {"token": {"secure": f"v1:{SECURE_CIPHERTEXT}"}},
    }
    path = write_stack(tmp_path, secrets)
    stdout = render_stdout(path)
    assert leaks({"render stdout": stdout}, ALL_CANARIES) == []
    run = render_stack(REPO, config_file=path)
    assert leaks(places_in(run), ALL_CANARIES) == []
    ticketing = registration(run, SECRET_TYPE, "ticketing-token")
    assert secret_leaves(ticketing.inputs) == [(".stringData.token", REDACTED)]
    assert STACK_PLAIN in secret_holders(run)


# --- defects this audit found (fixed in c6d9903) -----------------------------------------------


def test_a_malformed_secure_value_is_not_echoed() -> None:
    """Was: a `secrets` value that is not a mapping was reported with Pulumi's own error text,
    which quotes the (decrypted) value."""
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(
            stack_main,
            config={PREFIX + "namespace": "apps", PREFIX + "secrets": STACK_SECURE},
            secret_keys=[PREFIX + "secrets"],
            into=run,
        )
    assert [p.path for p in caught.value.problems] == [PREFIX + "secrets"]
    assert STACK_SECURE not in str(caught.value)
    assert run.registrations == []


def test_resource_outputs_can_be_exported() -> None:
    """Was: mock_engine._resolve called value.items() on pulumi output types, whose `items`
    field (a configMap volume's) shadows the method."""

    def program() -> None:
        agent = LanguageAgent("a", image="ghcr.io/acme/a:1", namespace="apps")
        pulumi.export("spec", agent.deployment.spec)

    run = run_program(program)
    volumes = run.outputs["spec"]["template"]["spec"]["volumes"]
    assert {"key": "config.yaml", "path": "config.yaml"} in volumes[1]["config_map"]["items"]
