"""The bad-input matrix.

Every case is one invalid configuration, run twice: through the Python API
(``LanguageCluster("c", doc)`` under the mock engine) and through ``langop-infra render
--config <stack file>``. Each must fail with the exact config path, a message saying what is
wrong, and nothing registered (API) or printed on stdout (CLI). Cases that only exist in a
stack file (malformed YAML, unknown config keys, ``secure:`` outside ``secrets``) run through
the CLI only. ``BASE`` itself is checked to be valid both ways, so a case cannot pass because
the document around its one mistake was broken.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from langop_infra.cli.main import main as cli_main
from langop_infra.components.cluster import LanguageCluster
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import ProgramRun, run_program

REPO = Path(__file__).resolve().parents[1]
PREFIX = "langop-infra:"
DELETE = object()  # an edit value: remove the key
# The base document pins its images, so that the only warnings are those a test provokes.
PIN = "@sha256:" + "5" * 64

BASE: dict[str, Any] = {
    "namespace": "apps",
    # The control plane's range: schema sync through the API server proxy is admitted.
    "defaults": {"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}]},
    "secrets": {
        "search-credentials": {"token": "search-token"},
        "ticketing": {"token": "ticketing-token"},
    },
    "tools": [
        {"name": "memory", "image": "ghcr.io/acme/memory-mcp:1.4.0" + PIN},
        {
            "name": "files",
            "image": "ghcr.io/acme/files-mcp:0.3.1" + PIN,
            "deploymentMode": "sidecar",
            "port": 8181,
        },
    ],
    "agents": [
        {
            "name": "helper",
            "image": "ghcr.io/acme/helper:2.0.0" + PIN,
            "tools": [{"name": "memory"}, {"name": "files"}],
            "mcpServers": [
                {
                    "name": "search",
                    "url": "https://search.example.com/mcp",
                    "headers": [
                        {
                            "name": "Authorization",
                            "valueFrom": {
                                "secretKeyRef": {"name": "search-credentials", "key": "token"}
                            },
                        }
                    ],
                }
            ],
            "webhookTools": [
                {
                    "name": "fetch_ticket",
                    "url": "https://tickets.example.com/api/v1/lookup",
                    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
                    "authentication": {
                        "type": "bearer",
                        "secretRef": {"name": "ticketing", "key": "token"},
                    },
                }
            ],
        }
    ],
}

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _steps(path: str) -> list[str | int]:
    return [int(i) if i else name for name, i in _STEP.findall(path)]


def doc(*edits: tuple[str, Any], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A deep copy of ``BASE`` with each ``(path, value)`` applied.

    ``path`` is a config path such as ``agents[0].tools[1].name``; an index one past the end
    appends, and the value ``DELETE`` removes the key.
    """
    out = copy.deepcopy(BASE if base is None else base)
    for path, value in edits:
        *parents, last = _steps(path)
        node: Any = out
        for step in parents:
            node = node[step]
        if value is DELETE:
            del node[last]
        elif isinstance(last, int) and last == len(node):
            node.append(copy.deepcopy(value))
        else:
            node[last] = copy.deepcopy(value)
    return out


def header(**fields: Any) -> dict[str, Any]:
    return {"name": "X-Extra", **fields}


def webhook(**fields: Any) -> dict[str, Any]:
    return {"name": "lookup", "url": "https://lookup.example.com/", **fields}


SECRET_REF = {"secretKeyRef": {"name": "search-credentials", "key": "token"}}
INT_NOT_BOOL = r"^expected an integer, got true/false; write a number$"
A0 = "agents[0]"
MCP0 = f"{A0}.mcpServers[0]"
HDR0 = f"{MCP0}.headers[0]"
WH0 = f"{A0}.webhookTools[0]"


@dataclass(frozen=True)
class Case:
    """One invalid cluster document, the path of its problem, and the gist of the message."""

    id: str
    document: dict[str, Any]
    path: str
    gist: str


# --- the matrix ------------------------------------------------------------------------------

CASES: list[Case] = [
    # --- tools -------------------------------------------------------------------------------
    Case(
        "tool-name-uppercase",
        doc(("tools[0].name", "Memory_DB")),
        "tools[0].name",
        r"'Memory_DB' is not a valid name.*DNS-1123",
    ),
    Case(
        "tool-name-too-long",
        doc(("tools[0].name", "m" * 64)),
        "tools[0].name",
        r"at most 63",
    ),
    Case(
        "tool-name-not-a-string",
        doc(("tools[0].name", ["memory"])),
        "tools[0].name",
        r"expected a string",
    ),
    Case(
        "tool-name-starts-with-digit",
        doc(("tools[0].name", "9memory"), ("agents[0].tools[0].name", "9memory")),
        "tools[0].name",
        r"(?i)letter|DNS-1035",
    ),
    Case(
        "tool-image-missing",
        doc(("tools[0].image", DELETE)),
        "tools[0].image",
        r"required field is missing",
    ),
    Case(
        "tool-image-blank",
        doc(("tools[0].image", "  ")),
        "tools[0].image",
        r"set a container image reference",
    ),
    Case(
        "tool-port-zero",
        doc(("tools[0].port", 0)),
        "tools[0].port",
        r"at least 1",
    ),
    Case(
        "tool-port-too-large",
        doc(("tools[0].port", 70000)),
        "tools[0].port",
        r"at most 65535",
    ),
    Case(
        "tool-port-word",
        doc(("tools[0].port", "http")),
        "tools[0].port",
        r"expected a whole number",
    ),
    Case(
        "tool-replicas-negative",
        doc(("tools[0].replicas", -1)),
        "tools[0].replicas",
        r"at least 0",
    ),
    Case(
        "tool-unknown-field-typo",
        doc(("tools[0].deploymentMod", "service")),
        "tools[0].deploymentMod",
        r"unknown field; did you mean 'deploymentMode'\?",
    ),
    Case(
        "tool-deployment-mode",
        doc(("tools[0].deploymentMode", "daemonset")),
        "tools[0].deploymentMode",
        r"'service', 'sidecar'",
    ),
    Case("tool-type", doc(("tools[0].type", "http")), "tools[0].type", r"'mcp'"),
    Case(
        "tool-mcp-path-relative",
        doc(("tools[0].mcpPath", "mcp")),
        "tools[0].mcpPath",
        r"not an HTTP path",
    ),
    Case(
        "tool-env-name",
        doc(("tools[0].env", {"1BAD": "x"})),
        "tools[0].env.1BAD",
        r"'1BAD' is not a valid environment variable name",
    ),
    Case(
        "tool-env-value-number",
        doc(("tools[0].env", {"WORKERS": 4})),
        "tools[0].env.WORKERS",
        r"expected a string",
    ),
    Case(
        "tool-env-and-secret-env",
        doc(("tools[0].env", {"TOKEN": "a"}), ("tools[0].secretEnv", {"TOKEN": "b"})),
        "tools[0].secretEnv.TOKEN",
        r"TOKEN set in both env and secretEnv",
    ),
    Case(
        "tool-secret-env-number",
        doc(("tools[0].secretEnv", {"TOKEN": 5})),
        "tools[0].secretEnv.TOKEN",
        r"a secret env value is a string",
    ),
    Case(
        "tool-secret-key-ref-without-key",
        doc(("tools[0].secretEnv", {"TOKEN": {"secretKeyRef": {"name": "search-credentials"}}})),
        "tools[0].secretEnv.TOKEN.secretKeyRef.key",
        r"required field is missing",
    ),
    Case(
        "tool-resources-quantity",
        doc(("tools[0].resources", {"limits": {"cpu": "1", "memory": "lots"}})),
        "tools[0].resources.limits.memory",
        r"'lots' is not a Kubernetes quantity",
    ),
    Case(
        "tool-label-key",
        doc(("tools[0].labels", {"bad key": "x"})),
        'tools[0].labels["bad key"]',
        r"'bad key' is not a valid label",
    ),
    Case(
        "tool-label-value",
        doc(("tools[0].labels", {"team": "platform team"})),
        "tools[0].labels.team",
        r"(?i)label value|not a valid",
    ),
    Case(
        "tool-image-pull-policy",
        doc(("tools[0].imagePullPolicy", "Sometimes")),
        "tools[0].imagePullPolicy",
        r"'Always', 'IfNotPresent', 'Never'",
    ),
    Case(
        "tool-persistence-on-sidecar",
        doc(("tools[1].persistence", {"size": "1Gi"})),
        "tools[1]",
        r"persistence applies to service tools",
    ),
    Case(
        "tool-persistence-size",
        doc(("tools[0].persistence", {"size": "big"})),
        "tools[0].persistence.size",
        r"not a Kubernetes quantity",
    ),
    Case(
        "tool-persistence-over-tmp",
        doc(("tools[0].persistence", {"mountPath": "/tmp"})),
        "tools[0].persistence.mountPath",
        r"/tmp",
    ),
    Case(
        "tool-allow-from-on-sidecar",
        doc(("tools[1].allowFrom", [{"ipBlock": {"cidr": "10.0.0.0/8"}}])),
        "tools[1]",
        r"allowFrom applies to service tools",
    ),
    Case(
        "tool-allow-from-two-kinds",
        doc(
            (
                "tools[0].allowFrom",
                [{"podSelector": {"matchLabels": {"a": "b"}}, "ipBlock": {"cidr": "10.0.0.0/8"}}],
            )
        ),
        "tools[0].allowFrom[0]",
        r"podSelector and/or namespaceSelector, or ipBlock alone",
    ),
    Case(
        "tool-allow-from-cidr",
        doc(("tools[0].allowFrom", [{"ipBlock": {"cidr": "10.0.0.0/33"}}])),
        "tools[0].allowFrom[0].ipBlock.cidr",
        r"not a CIDR",
    ),
    Case(
        "tool-namespace-elsewhere-unreferenced",
        doc(("tools[0].namespace", "other")),
        f"{A0}.tools[0].name",
        r"no tool named 'memory' in namespace 'apps' of this cluster \(known: files\)",
    ),
    Case(
        "tool-duplicate-name",
        doc(("tools[2]", {"name": "memory", "image": "ghcr.io/acme/other:1"})),
        "tools[2].name",
        r"duplicate tool name 'memory'",
    ),
    Case(
        "tool-named-like-default-deny",
        doc(
            ("tools[0].name", "default-deny"),
            ("agents[0].tools[0].name", "default-deny"),
            ("defaults", {"defaultDeny": True}),
        ),
        "tools[0].name",
        r"default-deny-ingress",
    ),
    Case(
        "tool-security-run-as-user-negative",
        doc(("tools[0].security", {"runAsUser": -1})),
        "tools[0].security.runAsUser",
        r"at least 0",
    ),
    Case(
        "tool-security-seccomp",
        doc(("tools[0].security", {"seccompProfile": "Localhost"})),
        "tools[0].security.seccompProfile",
        r"'RuntimeDefault', 'Unconfined'",
    ),
    Case(
        "tool-requests-over-limits",
        doc(
            (
                "tools[0].resources",
                {
                    "requests": {"cpu": "2", "memory": "64Mi"},
                    "limits": {"cpu": "1", "memory": "256Mi"},
                },
            )
        ),
        "tools[0].resources.requests.cpu",
        r"(?i)limit",
    ),
    Case(
        "tool-schema-sync-access",
        doc(("tools[0].schemaSync", {"access": "proxy"})),
        "tools[0].schemaSync.access",
        r"'auto', 'direct', 'apiserver-proxy'",
    ),
    Case(
        "tool-schema-sync-timeout",
        doc(("tools[0].schemaSync", {"timeout": "0s"})),
        "tools[0].schemaSync.timeout",
        r"between 0\.1s and 600s, got 0s",
    ),
    Case(
        "tool-schema-sync-url",
        doc(("tools[0].schemaSync", {"syncUrl": "ftp://memory.example.com/mcp"})),
        "tools[0].schemaSync.syncUrl",
        r"not an http\(s\) URL",
    ),
    Case(
        "tool-schema-sync-header-undeclared-secret",
        doc(
            (
                "tools[0].schemaSync",
                {
                    "headers": [
                        {
                            "name": "Authorization",
                            "valueFrom": {"secretKeyRef": {"name": "nowhere", "key": "token"}},
                        }
                    ]
                },
            )
        ),
        "tools[0].schemaSync.headers[0].valueFrom",
        r"'nowhere' key 'token' is not declared under secrets",
    ),
    Case("tools-not-a-list", doc(("tools", {"memory": {}})), "tools", r"expected a list, got dict"),
    Case("tool-not-a-mapping", doc(("tools[0]", "memory")), "tools[0]", r"expected a mapping"),
    # --- agents and references ---------------------------------------------------------------
    Case(
        "agent-name-missing",
        doc((f"{A0}.name", DELETE)),
        f"{A0}.name",
        r"required field is missing",
    ),
    Case(
        "agent-duplicate-name",
        doc(("agents[1]", {"name": "helper", "image": "ghcr.io/acme/helper:2.0.0"})),
        "agents[1].name",
        r"duplicate agent name 'helper'",
    ),
    Case(
        "agent-named-like-a-tool",
        doc((f"{A0}.name", "memory")),
        f"{A0}.name",
        r"(?i)memory.*(tool|deployment)|(tool|deployment).*memory",
    ),
    Case(
        "agent-with-sidecars-named-like-default-deny",
        doc((f"{A0}.name", "default-deny"), ("defaults", {"defaultDeny": True})),
        f"{A0}.name",
        r"default-deny-ingress",
    ),
    Case(
        "agent-unknown-port-field",
        doc((f"{A0}.port", 8080)),
        f"{A0}.port",
        r"^unknown field(?!.*'port')",
    ),
    Case(
        "agent-namespace-elsewhere-dangling",
        doc((f"{A0}.namespace", "other")),
        f"{A0}.tools[0].name",
        r"no tool named 'memory' in namespace 'other' of this cluster \(known: none\)",
    ),
    Case(
        "agent-reserved-env",
        doc((f"{A0}.env", {"MCP_SERVERS": "http://elsewhere"})),
        f"{A0}.env.MCP_SERVERS",
        r"MCP_SERVERS is set by langop-infra",
    ),
    Case(
        "agent-reserved-env-prefix",
        doc((f"{A0}.secretEnv", {"ARK_MCP_SEARCH_HEADER_X": "v"})),
        f"{A0}.secretEnv.ARK_MCP_SEARCH_HEADER_X",
        r"set by langop-infra for every agent",
    ),
    Case(
        "agent-egress-mode",
        doc((f"{A0}.egress", "closed")),
        f"{A0}.egress",
        r"'open', 'restricted'",
    ),
    Case(
        "agent-egress-to-without-restricted",
        doc((f"{A0}.egressTo", [{"cidr": "203.0.113.0/24"}])),
        f"{A0}.egressTo",
        r"egressTo only applies with egress: restricted",
    ),
    Case(
        "agent-egress-to-port",
        doc(
            (f"{A0}.egress", "restricted"),
            (f"{A0}.egressTo", [{"cidr": "203.0.113.0/24", "ports": [{"port": 0}]}]),
        ),
        f"{A0}.egressTo[0].ports[0].port",
        r"at least 1",
    ),
    Case(
        "agent-egress-to-except-outside",
        doc(
            (f"{A0}.egress", "restricted"),
            (f"{A0}.egressTo", [{"cidr": "10.0.0.0/8", "except": ["192.168.0.0/16"]}]),
        ),
        f"{A0}.egressTo[0].except[0]",
        r"(?i)inside|within|subset",
    ),
    Case(
        "agent-egress-to-address-not-cidr",
        doc((f"{A0}.egress", "restricted"), (f"{A0}.egressTo", [{"cidr": "203.0.113.7"}])),
        f"{A0}.egressTo[0].cidr",
        r"CIDR",
    ),
    Case(
        "agent-workspace-path-relative",
        doc((f"{A0}.workspacePath", "workspace")),
        f"{A0}.workspacePath",
        r"not an HTTP path",
    ),
    Case(
        "agent-workspace-over-config",
        doc((f"{A0}.workspacePath", "/etc/agent")),
        f"{A0}.workspacePath",
        r"/etc/agent",
    ),
    Case(
        "agent-secret-key-ref-key",
        doc(
            (
                f"{A0}.secretEnv",
                {"TOKEN": {"secretKeyRef": {"name": "elsewhere", "key": "api key"}}},
            )
        ),
        f"{A0}.secretEnv.TOKEN.secretKeyRef.key",
        r"not a valid Secret key",
    ),
    Case(
        "agents-not-a-list",
        doc(("agents", {"helper": {"image": "ghcr.io/acme/helper:2.0.0"}})),
        "agents",
        r"expected a list, got dict",
    ),
    Case(
        "ref-dangling",
        doc((f"{A0}.tools[0].name", "memry")),
        f"{A0}.tools[0].name",
        r"no tool named 'memry' in this cluster \(known: files, memory\)",
    ),
    Case(
        "ref-duplicate",
        doc((f"{A0}.tools[2]", {"name": "memory"})),
        f"{A0}.tools[2]",
        r"duplicate tool reference 'memory'",
    ),
    Case(
        "ref-name-invalid",
        doc((f"{A0}.tools[0].name", "Memory")),
        f"{A0}.tools[0].name",
        r"'Memory' is not a valid name",
    ),
    Case(
        "ref-enabled-word",
        doc((f"{A0}.tools[0].enabled", "sometimes")),
        f"{A0}.tools[0].enabled",
        r"expected true or false",
    ),
    Case(
        "ref-other-namespace-unknown",
        doc((f"{A0}.tools[0].namespace", "shared")),
        f"{A0}.tools[0].name",
        r"tool 'memory' in namespace 'shared' is not known here",
    ),
    Case(
        "ref-sidecar-port-clash",
        doc(
            (
                "tools[2]",
                {
                    "name": "shell",
                    "image": "ghcr.io/acme/shell-mcp:1",
                    "deploymentMode": "sidecar",
                    "port": 8181,
                },
            ),
            (f"{A0}.tools[2]", {"name": "shell"}),
        ),
        f"{A0}.tools[2]",
        r"sidecar 'shell' uses port 8181, as does sidecar 'files'",
    ),
    Case(
        "ref-sidecar-named-like-agent",
        doc((f"{A0}.name", "files")),
        f"{A0}.tools[1]",
        r"sidecar 'files' has the agent's own name",
    ),
    # --- MCP servers -------------------------------------------------------------------------
    Case(
        "mcp-url-scheme",
        doc((f"{MCP0}.url", "ws://search.example.com/mcp")),
        f"{MCP0}.url",
        r"not an http\(s\) URL",
    ),
    Case(
        "mcp-url-missing",
        doc((f"{MCP0}.url", DELETE)),
        f"{MCP0}.url",
        r"required field is missing",
    ),
    Case(
        "mcp-url-with-credentials",
        doc((f"{MCP0}.url", "https://bot:hunter2@search.example.com/mcp")),
        f"{MCP0}.url",
        r"(?i)credential|password|user",
    ),
    Case(
        "mcp-name-pattern",
        doc((f"{MCP0}.name", "web search")),
        f"{MCP0}.name",
        r"'web search' does not match the allowed pattern",
    ),
    Case(
        "mcp-duplicate-name",
        doc((f"{A0}.mcpServers[1]", {"name": "search", "url": "https://other.example.com/"})),
        f"{A0}.mcpServers[1].name",
        r"duplicate MCP server name 'search'",
    ),
    Case(
        "mcp-timeout-word",
        doc((f"{MCP0}.timeout", "soon")),
        f"{MCP0}.timeout",
        r"'soon' is not a duration",
    ),
    Case(
        "mcp-timeout-range",
        doc((f"{MCP0}.timeout", "20m")),
        f"{MCP0}.timeout",
        r"between 0\.1s and 600s, got 1200s",
    ),
    # --- headers -----------------------------------------------------------------------------
    Case(
        "header-two-sources",
        doc((f"{HDR0}.value", "Bearer x")),
        HDR0,
        r"needs exactly one of value, valueFrom, secret \(found value and valueFrom\)",
    ),
    Case(
        "header-no-source",
        doc((f"{HDR0}.valueFrom", DELETE)),
        HDR0,
        r"\(found none\)",
    ),
    Case(
        "header-name-token",
        doc((f"{HDR0}.name", "X Api Key")),
        f"{HDR0}.name",
        r"not a valid HTTP header name",
    ),
    Case(
        "header-env-clash",
        doc((f"{MCP0}.headers[1]", header(name="AUTHORIZATION", value="x"))),
        f"{MCP0}.headers[1]",
        r"maps to env var ARK_MCP_SEARCH_HEADER_AUTHORIZATION twice",
    ),
    Case(
        "header-secret-name",
        doc((f"{HDR0}.valueFrom", {"secretKeyRef": {"name": "Search_Creds", "key": "token"}})),
        f"{HDR0}.valueFrom.secretKeyRef.name",
        r"'Search_Creds' is not a valid name",
    ),
    Case(
        "header-secret-key-dangling",
        doc((f"{HDR0}.valueFrom.secretKeyRef.key", "tokn")),
        f"{HDR0}.valueFrom.secretKeyRef.key",
        r"tokn",
    ),
    Case(
        "header-value-line-break",
        doc((f"{MCP0}.headers[1]", header(value="a\r\nX-Injected: 1"))),
        f"{MCP0}.headers[1].value",
        r"(?i)line break|newline|control|CR|LF",
    ),
    # --- webhook tools -----------------------------------------------------------------------
    Case(
        "webhook-name-pattern",
        doc((f"{WH0}.name", "fetch ticket")),
        f"{WH0}.name",
        r"'fetch ticket' does not match the allowed pattern",
    ),
    Case(
        "webhook-method",
        doc((f"{WH0}.method", "FETCH")),
        f"{WH0}.method",
        r"'GET', 'POST', 'PUT', 'PATCH', 'DELETE'",
    ),
    Case(
        "webhook-auth-without-secret",
        doc((f"{WH0}.authentication", {"type": "bearer"})),
        f"{WH0}.authentication",
        r"authentication type 'bearer' needs secretRef",
    ),
    Case(
        "webhook-auth-secret-without-type",
        doc((f"{WH0}.authentication.type", "none")),
        f"{WH0}.authentication",
        r"secretRef is set but type is 'none'",
    ),
    Case(
        "webhook-auth-type",
        doc((f"{WH0}.authentication.type", "token")),
        f"{WH0}.authentication.type",
        r"'none', 'bearer', 'basic', 'apiKey', 'oauth2'",
    ),
    Case(
        "webhook-rate-limit-zero",
        doc((f"{WH0}.rateLimit", {"requestsPerMinute": 0, "burst": 1})),
        f"{WH0}.rateLimit.requestsPerMinute",
        r"at least 1",
    ),
    Case(
        "webhook-rate-limit-burst",
        doc((f"{WH0}.rateLimit", {"requestsPerMinute": 60, "burst": 1001})),
        f"{WH0}.rateLimit.burst",
        r"at most 1000",
    ),
    Case(
        "webhook-rate-limit-missing-burst",
        doc((f"{WH0}.rateLimit", {"requestsPerMinute": 60})),
        f"{WH0}.rateLimit.burst",
        r"required field is missing",
    ),
    Case(
        "webhook-schema-unknown-type",
        doc((f"{WH0}.inputSchema", {"type": "strin"})),
        f"{WH0}.inputSchema",
        r"not valid JSON Schema draft-07 at type",
    ),
    Case(
        "webhook-schema-required-not-a-list",
        doc((f"{WH0}.inputSchema", {"type": "object", "required": "id"})),
        f"{WH0}.inputSchema",
        r"draft-07 at required: 'id' is not of type 'array'",
    ),
    Case(
        "webhook-schema-bad-regex",
        doc((f"{WH0}.inputSchema", {"type": "object", "properties": {"id": {"pattern": "("}}})),
        f"{WH0}.inputSchema",
        r"draft-07 at properties/id/pattern",
    ),
    Case(
        "webhook-schema-bad-json-text",
        doc((f"{WH0}.inputSchema", '{"type": "object",')),
        f"{WH0}.inputSchema",
        r"inputSchema is not valid JSON",
    ),
    Case(
        "webhook-schema-not-an-object",
        doc((f"{WH0}.inputSchema", ["id"])),
        f"{WH0}.inputSchema",
        r"must be a JSON Schema object",
    ),
    Case(
        "webhook-timeout-below-one-second",
        doc((f"{WH0}.timeout", "500ms")),
        f"{WH0}.timeout",
        r"between 1s and 600s, got 0\.5s",
    ),
    Case(
        "webhook-timeout-astronomical",
        doc((f"{WH0}.timeout", 10**400)),
        f"{WH0}.timeout",
        r"between 1s and 600s|too long",
    ),
    Case(
        "webhook-description-too-long",
        doc((f"{WH0}.description", "d" * 1025)),
        f"{WH0}.description",
        r"at most 1024 characters",
    ),
    Case(
        "webhook-duplicate-name",
        doc((f"{A0}.webhookTools[1]", webhook(name="fetch_ticket"))),
        f"{A0}.webhookTools[1].name",
        r"duplicate webhook tool name 'fetch_ticket'",
    ),
    Case(
        "webhook-auth-env-clash",
        doc(
            (
                f"{A0}.webhookTools[1]",
                webhook(
                    name="FETCH-TICKET",
                    authentication={"type": "apiKey", "secretRef": {"name": "t2", "key": "k"}},
                ),
            )
        ),
        f"{A0}.webhookTools[1].name",
        r"maps to env var AGENT_WEBHOOK_FETCH_TICKET_AUTH twice",
    ),
    # --- defaults ----------------------------------------------------------------------------
    Case(
        "defaults-egress",
        doc(("defaults", {"egress": "closed"})),
        "defaults.egress",
        r"'open', 'restricted'",
    ),
    Case(
        "defaults-unknown-key",
        doc(("defaults", {"egres": "restricted"})),
        "defaults.egres",
        r"did you mean 'egress'\?",
    ),
    Case(
        "defaults-not-a-mapping",
        doc(("defaults", "strict")),
        "defaults",
        r"valid dictionary|expected a mapping",
    ),
    Case(
        "defaults-cpu-request",
        doc(("defaults", {"resources": {"requests": {"cpu": "fast", "memory": "64Mi"}}})),
        "defaults.resources.requests.cpu",
        r"'fast' is not a Kubernetes quantity",
    ),
    Case(
        "defaults-run-as-non-root-word",
        doc(("defaults", {"security": {"runAsNonRoot": "maybe"}})),
        "defaults.security.runAsNonRoot",
        r"expected true or false",
    ),
    Case(
        "defaults-run-as-root",
        doc(("defaults", {"security": {"runAsUser": 0}})),
        "defaults.security.runAsUser",
        r"(?i)non-?root",
    ),
    Case(
        "defaults-privilege-escalation-in-restricted-namespace",
        doc(("defaults", {"security": {"allowPrivilegeEscalation": True}})),
        "defaults.security.allowPrivilegeEscalation",
        r"(?i)restricted",
    ),
    Case(
        "defaults-schema-sync-access",
        doc(("defaults", {"schemaSyncAccess": "proxy"})),
        "defaults.schemaSyncAccess",
        r"'auto', 'direct', 'apiserver-proxy'",
    ),
    Case(
        "defaults-default-deny-word",
        doc(("defaults", {"defaultDeny": "yes please"})),
        "defaults.defaultDeny",
        r"expected true or false",
    ),
    # --- secrets -----------------------------------------------------------------------------
    Case(
        "secret-name",
        doc(("secrets", {"Search_Creds": {"token": "x"}})),
        "secrets.Search_Creds",
        r"'Search_Creds' is not a valid name",
    ),
    Case(
        "secret-empty",
        doc(("secrets.empty", {})),
        "secrets.empty",
        r"non-empty mapping",
    ),
    Case(
        "secret-value-number",
        doc(("secrets.ticketing.token", 12345)),
        "secrets.ticketing.token",
        r"a secret value must be a string, got int",
    ),
    Case(
        "secret-key",
        doc(("secrets.ticketing", {"api key": "x"})),
        'secrets.ticketing["api key"]',
        r"'api key' is not a valid Secret key",
    ),
    Case(
        "secrets-not-a-mapping",
        doc(("secrets", ["token"])),
        "secrets",
        r"^expected a mapping of names to mappings, got a list$",
    ),
    Case(
        "secret-named-like-agent-secret",
        doc(("secrets.helper-env", {"TOKEN": "x"}), (f"{A0}.secretEnv", {"TOKEN": "literal"})),
        "secrets.helper-env",
        r"helper-env",
    ),
    # --- a bool where a number belongs ---------------------------------------------------------
    Case("tool-port-true", doc(("tools[0].port", True)), "tools[0].port", INT_NOT_BOOL),
    Case("agent-replicas-false", doc((f"{A0}.replicas", False)), f"{A0}.replicas", INT_NOT_BOOL),
    Case(
        "security-run-as-user-true",
        doc(("tools[0].security", {"runAsUser": True})),
        "tools[0].security.runAsUser",
        INT_NOT_BOOL,
    ),
    Case(
        "rate-limit-burst-true",
        doc((f"{WH0}.rateLimit", {"requestsPerMinute": 60, "burst": True})),
        f"{WH0}.rateLimit.burst",
        INT_NOT_BOOL,
    ),
    Case(
        "egress-port-true",
        doc(
            (f"{A0}.egress", "restricted"),
            (f"{A0}.egressTo", [{"cidr": "10.0.0.0/8", "ports": [{"port": True}]}]),
        ),
        f"{A0}.egressTo[0].ports[0].port",
        INT_NOT_BOOL,
    ),
    # --- mount paths, as Kubernetes would resolve them ----------------------------------------
    Case(
        "mount-path-dot-dot",
        doc(("tools[0].persistence", {"mountPath": "/tmp/../etc/agent"})),
        "tools[0].persistence.mountPath",
        r"^'/tmp/\.\./etc/agent' has '\.' or '\.\.' segments",
    ),
    Case(
        "mount-path-double-slash",
        doc(("tools[0].persistence", {"mountPath": "//tmp"})),
        "tools[0].persistence.mountPath",
        r"^'//tmp' is already mounted in every pod",
    ),
    Case(
        "workspace-path-root",
        doc((f"{A0}.workspacePath", "/")),
        f"{A0}.workspacePath",
        r"cannot mount over the container's root '/'",
    ),
    Case(
        "workspace-path-config-spelt-oddly",
        doc((f"{A0}.workspacePath", "//etc//agent/")),
        f"{A0}.workspacePath",
        r"already mounted in every pod",
    ),
    # --- sizes Kubernetes caps ----------------------------------------------------------------
    Case(
        "annotations-over-256k",
        doc(("tools[0].annotations", {"example.com/blob": "x" * 300_000})),
        "tools[0].annotations",
        r"annotations take 300016 bytes .*Kubernetes allows 262144",
    ),
    Case(
        "annotations-over-256k-in-many-keys",
        doc((f"{A0}.annotations", {f"example.com/k{i}": "y" * 1000 for i in range(300)})),
        f"{A0}.annotations",
        r"Kubernetes allows 262144 per object",
    ),
    # --- header values ------------------------------------------------------------------------
    Case(
        "header-secret-crlf",
        doc((HDR0, header(secret="token\r\nX-Injected: 1"))),
        f"{HDR0}.secret",
        r"^a header value cannot hold a line break or other control character \(CR, LF\)$",
    ),
    # --- secretKeyRefs to Secrets declared nowhere --------------------------------------------
    Case(
        "tool-secret-env-undeclared-secret",
        doc(
            ("tools[0].secretEnv", {"DB": {"secretKeyRef": {"name": "db-credentials", "key": "p"}}})
        ),
        "tools[0].secretEnv.DB.secretKeyRef.name",
        r"^no Secret 'db-credentials' under secrets or externalSecrets; declare it under secrets, "
        r"or list it in externalSecrets",
    ),
    Case(
        "agent-secret-env-undeclared-secret",
        doc((f"{A0}.secretEnv", {"TOKEN": {"secretKeyRef": {"name": "ticketin", "key": "token"}}})),
        f"{A0}.secretEnv.TOKEN.secretKeyRef.name",
        r"no Secret 'ticketin' .*; did you mean 'ticketing'\? Otherwise declare it",
    ),
    Case(
        "header-value-from-undeclared-secret",
        doc((f"{HDR0}.valueFrom.secretKeyRef.name", "search-credential")),
        f"{HDR0}.valueFrom.secretKeyRef.name",
        r"no Secret 'search-credential' .*did you mean 'search-credentials'\?",
    ),
    Case(
        "webhook-secret-ref-undeclared-secret",
        doc((f"{WH0}.authentication.secretRef.name", "tiketing")),
        f"{WH0}.authentication.secretRef.name",
        r"no Secret 'tiketing' .*did you mean 'ticketing'\?",
    ),
    Case(
        "external-secret-also-declared",
        doc(("externalSecrets", ["ticketing"])),
        "externalSecrets[0]",
        r"'ticketing' is also under secrets, which creates it",
    ),
    # --- messages with the expected form, suggestions in the document's spelling -------------
    Case(
        "egress-ports-as-numbers",
        doc(
            (f"{A0}.egress", "restricted"),
            (f"{A0}.egressTo", [{"cidr": "10.0.0.0/8", "ports": [443]}]),
        ),
        f"{A0}.egressTo[0].ports[0]",
        r"^expected a list of \{port, protocol\}; this item is a number$",
    ),
    Case(
        "tool-resources-as-text",
        doc(("tools[0].resources", "big")),
        "tools[0].resources",
        r"^expected a mapping \{requests, limits\}, got a string$",
    ),
    Case(
        "tool-env-as-list",
        doc(("tools[0].env", ["WORKERS=4"])),
        "tools[0].env",
        r"^expected a mapping of names to strings, got a list$",
    ),
    Case(
        "tool-command-as-text",
        doc(("tools[0].command", "serve --port 8080")),
        "tools[0].command",
        r"^expected a list of strings, got a string$",
    ),
    Case(
        "agent-tools-as-mapping",
        doc((f"{A0}.mcpServers", {"search": {}})),
        f"{A0}.mcpServers",
        r"^expected a list of \{name, url, …\}, got a mapping$",  # over six fields: required
    ),
    Case(
        "camel-case-suggestion",
        doc(("tools[0].deploymentmode", "service")),
        "tools[0].deploymentmode",
        r"^unknown field; did you mean 'deploymentMode'\?$",
    ),
    Case(
        "snake-case-suggestion",
        doc(
            (
                "tools[0]",
                {
                    "name": "memory",
                    "image": "ghcr.io/acme/memory-mcp:1.4.0",
                    "health_path": "/health",
                    "deploymentmode": "service",
                },
            )
        ),
        "tools[0].deploymentmode",
        r"^unknown field; did you mean 'deployment_mode'\?$",
    ),
    # --- the cluster itself ------------------------------------------------------------------
    Case("namespace-missing", doc(("namespace", DELETE)), "namespace", r"required"),
    Case(
        "namespace-uppercase",
        doc(("namespace", "Apps")),
        "namespace",
        r"'Apps' is not a valid name",
    ),
    Case(
        "part-of-pattern",
        doc(("partOf", "research assistant")),
        "partOf",
        r"does not match the allowed pattern",
    ),
    Case(
        "create-namespace-word",
        doc(("createNamespace", "maybe")),
        "createNamespace",
        r"valid boolean|expected true or false",
    ),
    Case(
        "cluster-key-typo",
        doc(("namespce", "apps")),
        "namespce",
        r"did you mean .*namespace",
    ),
    # --- addresses at in-cluster Services the stack neither creates nor declares -------------
    Case(
        "mcp-server-at-unknown-service",
        doc((f"{MCP0}.url", "http://search.apps.svc.cluster.local:8080/mcp")),
        f"{MCP0}.url",
        r"Service 'search' in namespace 'apps', which this stack does not create.*"
        r"externalServices: \[\{name: search, namespace: apps\}\]",
    ),
    Case(
        "mcp-server-at-short-service-name",
        doc((f"{MCP0}.url", "http://search.apps:8080/mcp")),
        f"{MCP0}.url",
        r"Service 'search' in namespace 'apps'",
    ),
    Case(
        "model-endpoint-at-unknown-service",
        doc(
            (
                "models",
                [
                    {
                        "name": "local",
                        "provider": "openai-compatible",
                        "modelName": "llama",
                        "endpoint": "http://vllm.models.svc:8000/v1",
                    }
                ],
            )
        ),
        "models[0].endpoint",
        r"Service 'vllm' in namespace 'models'",
    ),
    Case(
        "remote-peer-at-unknown-service",
        doc((f"{A0}.agents", [{"name": "reviewer", "url": "http://reviewer.other.svc:9999/"}])),
        f"{A0}.agents[0].url",
        r"Service 'reviewer' in namespace 'other'",
    ),
    Case(
        "memory-address-at-unknown-service",
        doc(
            (
                "memories",
                [
                    {
                        "name": "notes",
                        "type": "external",
                        "address": {"value": "http://notes.apps.svc.cluster.local:8080/mcp"},
                    }
                ],
            )
        ),
        "memories[0].address.value",
        r"Service 'notes' in namespace 'apps'",
    ),
]

T0 = "tools[0]"
WS = {"size": "1Gi"}
# --- pods and networks: every new field ----------------------------------------------------
CASES += [
    Case(
        "image-pull-secret-name",
        doc((f"{T0}.imagePullSecrets", ["Bad_Name"])),
        f"{T0}.imagePullSecrets[0].name",
        r"not a valid name",
    ),
    Case(
        "env-from-both-refs",
        doc((f"{A0}.envFrom", [{"secretRef": {"name": "a"}, "configMapRef": {"name": "b"}}])),
        f"{A0}.envFrom[0]",
        r"exactly one of secretRef \{name\} or configMapRef",
    ),
    Case(
        "env-from-no-ref",
        doc((f"{A0}.envFrom", [{"prefix": "X_"}])),
        f"{A0}.envFrom[0]",
        r"exactly one of secretRef",
    ),
    Case(
        "env-from-bad-prefix",
        doc((f"{A0}.envFrom", [{"secretRef": {"name": "a"}, "prefix": "1X"}])),
        f"{A0}.envFrom[0].prefix",
        r"not a valid environment variable name",
    ),
    Case(
        "probe-two-handlers",
        doc(
            (
                f"{A0}.probes",
                {"liveness": {"httpGet": {"path": "/h", "port": 80}, "tcpSocket": {"port": 80}}},
            )
        ),
        f"{A0}.probes.liveness",
        r"one of httpGet, tcpSocket or exec, not several",
    ),
    Case(
        "probe-bad-path",
        doc((f"{A0}.probes", {"readiness": {"httpGet": {"path": "h", "port": 80}}})),
        f"{A0}.probes.readiness.httpGet.path",
        r"not an HTTP path",
    ),
    Case(
        "probe-period-zero",
        doc((f"{T0}.probes", {"liveness": {"periodSeconds": 0}})),
        f"{T0}.probes.liveness.periodSeconds",
        r"at least 1",
    ),
    Case(
        "agent-probe-without-handler",
        doc((f"{A0}.probes", {"liveness": {"periodSeconds": 5}})),
        A0,
        r"the agent's liveness probe needs a handler",
    ),
    Case(
        "node-selector-reserved-key",
        doc((f"{T0}.nodeSelector", {"bad key": "x"})),
        f'{T0}.nodeSelector["bad key"]',
        r"not a valid label",
    ),
    Case(
        "toleration-exists-with-value",
        doc((f"{T0}.tolerations", [{"key": "k", "operator": "Exists", "value": "v"}])),
        f"{T0}.tolerations[0]",
        r"operator Exists takes no value",
    ),
    Case(
        "toleration-seconds-without-no-execute",
        doc((f"{T0}.tolerations", [{"key": "k", "tolerationSeconds": 5}])),
        f"{T0}.tolerations[0]",
        r"tolerationSeconds applies to effect NoExecute",
    ),
    Case(
        "affinity-unknown-field",
        doc((f"{A0}.affinity", {"nodeAfinity": {}})),
        f"{A0}.affinity.nodeAfinity",
        r"unknown field",
    ),
    Case(
        "affinity-weight",
        doc(
            (
                f"{A0}.affinity",
                {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 0,
                                "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"},
                            }
                        ]
                    }
                },
            )
        ),
        f"{A0}.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        r"at least 1",
    ),
    Case(
        "affinity-in-without-values",
        doc(
            (
                f"{A0}.affinity",
                {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "zone", "operator": "In"}]}
                            ]
                        }
                    }
                },
            )
        ),
        f"{A0}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0]",
        r"operator In needs values",
    ),
    Case(
        "topology-spread-when",
        doc(
            (
                f"{T0}.topologySpreadConstraints",
                [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Never"}],
            )
        ),
        f"{T0}.topologySpreadConstraints[0].whenUnsatisfiable",
        r"DoNotSchedule",
    ),
    Case(
        "topology-spread-min-domains",
        doc(
            (
                f"{T0}.topologySpreadConstraints",
                [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "minDomains": 2,
                    }
                ],
            )
        ),
        f"{T0}.topologySpreadConstraints[0]",
        r"minDomains needs whenUnsatisfiable",
    ),
    Case(
        "priority-class-name",
        doc((f"{A0}.priorityClassName", "High")),
        f"{A0}.priorityClassName",
        r"not a valid name",
    ),
    Case(
        "pod-labels-reserved",
        doc((f"{A0}.podLabels", {"langop.io/agent": "x"})),
        f"{A0}.podLabels.langop.io/agent",
        r"reserved",
    ),
    Case(
        "pod-annotations-key",
        doc((f"{A0}.podAnnotations", {"no spaces": "x"})),
        f'{A0}.podAnnotations["no spaces"]',
        r"not a valid label or annotation key",
    ),
    Case(
        "termination-grace-negative",
        doc((f"{T0}.terminationGracePeriodSeconds", -1)),
        f"{T0}.terminationGracePeriodSeconds",
        r"at least 0",
    ),
    Case(
        "sidecar-pod-level-field",
        doc(("tools[1].nodeSelector", {"zone": "a"})),
        "tools[1]",
        r"nodeSelector set the pod, and a sidecar joins the agent's pod",
    ),
    Case(
        "disruption-budget-both",
        doc((f"{T0}.disruptionBudget", {"maxUnavailable": 1, "minAvailable": 1})),
        f"{T0}.disruptionBudget",
        r"exactly one of maxUnavailable or minAvailable",
    ),
    Case(
        "disruption-budget-percent",
        doc((f"{T0}.disruptionBudget", {"maxUnavailable": "half"})),
        f"{T0}.disruptionBudget.maxUnavailable",
        r"'half' is neither a pod count such as 1 nor a percentage such as '50%'",
    ),
    Case(
        "autoscaling-min-above-max",
        doc((f"{T0}.autoscaling", {"minReplicas": 5, "maxReplicas": 2})),
        f"{T0}.autoscaling",
        r"minReplicas 5 is above maxReplicas 2",
    ),
    Case(
        "autoscaling-cpu-zero",
        doc((f"{T0}.autoscaling", {"maxReplicas": 2, "targetCPUUtilizationPercentage": 0})),
        f"{T0}.autoscaling.targetCPUUtilizationPercentage",
        r"at least 1",
    ),
    Case(
        "autoscaling-with-persistence",
        doc((f"{T0}.autoscaling", {"maxReplicas": 2}), (f"{T0}.persistence", {"size": "1Gi"})),
        T0,
        r"remove autoscaling",
    ),
    Case(
        "workspace-size",
        doc((f"{A0}.workspace", {"size": "lots"})),
        f"{A0}.workspace.size",
        r"not a Kubernetes quantity",
    ),
    Case(
        "workspace-both-file-sources",
        doc((f"{A0}.workspace", {"initialFiles": {"a": "b"}, "initialFilesConfigMap": "starter"})),
        f"{A0}.workspace",
        r"initialFiles or initialFilesConfigMap, not both",
    ),
    Case(
        "workspace-file-name",
        doc((f"{A0}.workspace", {"initialFiles": {"dir/a.md": "x"}})),
        f"{A0}.workspace.initialFiles.dir/a.md",
        r"no '/'",
    ),
    Case(
        "workspace-read-only",
        doc((f"{A0}.workspace", {"accessModes": ["ReadOnlyMany"]})),
        f"{A0}.workspace",
        r"ReadOnlyMany cannot hold an agent's edits",
    ),
    Case(
        "workspace-mount-reserved",
        doc((f"{A0}.workspace", {"mountPath": "/tmp"})),
        f"{A0}.workspace.mountPath",
        r"already mounted",
    ),
    Case(
        "workspace-init-image",
        doc((f"{A0}.workspace", {"initImage": " "})),
        f"{A0}.workspace.initImage",
        r"set a container image",
    ),
    Case(
        "workspace-shared-by-replicas",
        doc((f"{A0}.workspace", WS), (f"{A0}.replicas", 2)),
        A0,
        r"accessModes to \[ReadWriteMany\]",
    ),
    Case(
        "agent-port-name",
        doc((f"{A0}.ports", [{"name": "HTTP", "port": 80}])),
        f"{A0}.ports[0].name",
        r"pattern",
    ),
    Case(
        "agent-port-twice",
        doc((f"{A0}.ports", [{"name": "a", "port": 80}, {"name": "b", "port": 80}])),
        A0,
        r"port port 80 is given twice",
    ),
    Case(
        "agent-allow-from-without-ports",
        doc((f"{A0}.allowFrom", [{"namespaceSelector": {"matchLabels": {"a": "b"}}}])),
        A0,
        r"add ports",
    ),
    Case(
        "egress-peer-both-forms",
        doc(
            (f"{T0}.egress", "restricted"),
            (f"{T0}.egressTo", [{"cidr": "10.0.0.0/8", "namespace": "x"}]),
        ),
        f"{T0}.egressTo[0]",
        r"give cidr .* or namespace and/or podLabels, not both",
    ),
    Case(
        "egress-peer-host-on-namespace",
        doc(
            (f"{T0}.egress", "restricted"),
            (f"{T0}.egressTo", [{"namespace": "x", "host": "a.example.com"}]),
        ),
        f"{T0}.egressTo[0]",
        r"except and host apply to a cidr peer only",
    ),
    Case(
        "tool-egress-to-except-outside",
        doc(
            (f"{T0}.egress", "restricted"),
            (f"{T0}.egressTo", [{"cidr": "10.0.0.0/8", "except": ["192.168.0.0/16"]}]),
        ),
        f"{T0}.egressTo[0].except[0]",
        r"not inside 10.0.0.0/8",
    ),
    Case(
        "tool-egress-to-except-equal-to-cidr",
        doc(
            (f"{T0}.egress", "restricted"),
            (f"{T0}.egressTo", [{"cidr": "10.0.0.0/8", "except": ["10.0.0.0/8"]}]),
        ),
        f"{T0}.egressTo[0].except[0]",
        r"10.0.0.0/8 is all of 10.0.0.0/8, which would leave nothing",
    ),
    Case(
        "agent-allow-from-except-equal-to-cidr",
        doc(
            (f"{A0}.ports", [{"name": "http", "port": 80}]),
            (f"{A0}.allowFrom", [{"ipBlock": {"cidr": "10.1.0.0/16", "except": ["10.1.0.0/16"]}}]),
        ),
        f"{A0}.allowFrom[0].ipBlock.except[0]",
        r"must be smaller than the cidr",
    ),
    Case(
        "agent-allow-from-except-outside",
        doc(
            (f"{A0}.ports", [{"name": "http", "port": 80}]),
            (f"{A0}.allowFrom", [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/8"]}}]),
        ),
        f"{A0}.allowFrom[0].ipBlock.except[0]",
        r"not inside 10.0.0.0/8",
    ),
    Case(
        "tool-egress-to-with-open-egress",
        doc((f"{T0}.egressTo", [{"namespace": "x"}])),
        f"{T0}.egressTo",
        r"egressTo only applies with egress: restricted",
    ),
    Case(
        "schema-sync-from-no-peer",
        doc(("defaults", {"schemaSyncFrom": [{}]})),
        "defaults.schemaSyncFrom[0]",
        r"^a peer needs cidr \(with optional except\), or namespace and/or podLabels; "
        r"give one of them$",
    ),
    Case(
        "schema-sync-from-cidr",
        doc(("defaults", {"schemaSyncFrom": [{"cidr": "10.0.0.1"}]})),
        "defaults.schemaSyncFrom[0].cidr",
        r"an address, not a CIDR",
    ),
    Case(
        "sidecar-style",
        doc(("defaults", {"sidecarStyle": "sidecar"})),
        "defaults.sidecarStyle",
        r"'native', 'container'",
    ),
    Case(
        "endpoint-style",
        doc(("defaults", {"endpointStyle": "full"})),
        "defaults.endpointStyle",
        r"'base', 'path'",
    ),
    Case(
        "strict-egress-not-admitted",
        doc(("defaults", {"egress": "restricted", "strictEgress": True})),
        f"{MCP0}.url",
        r"cannot verify that restricted egress admits search.example.com",
    ),
    Case(
        "namespace-of-tool",
        doc((f"{T0}.namespace", "Other")),
        f"{T0}.namespace",
        r"not a valid name",
    ),
]


@dataclass(frozen=True)
class StackCase:
    """A stack file that is wrong as a file; ``{file}`` in ``path`` stands for its path."""

    id: str
    text: str | None  # None: the file does not exist
    path: str
    gist: str


SECURE = {"secure": "v1:AAAAcanaryciphertext"}


def stack_text(config: dict[str, Any]) -> str:
    return yaml.safe_dump({"config": config}, sort_keys=False)


def with_base(**changes: Any) -> dict[str, Any]:
    """BASE as stack config keys, with some keys replaced."""
    config = {f"{PREFIX}{k}": v for k, v in BASE.items()}
    config.update({f"{PREFIX}{k}": v for k, v in changes.items()})
    return config


STACK_CASES: list[StackCase] = [
    StackCase(
        "yaml-unclosed-flow",
        "config:\n  langop-infra:namespace: apps\n  langop-infra:tools: [{name: memory\n",
        "{file}",
        r"not valid YAML: while parsing a flow mapping \(from line 3\); did not find expected",
    ),
    StackCase(
        "yaml-bad-indent",
        "config:\n  langop-infra:namespace: apps\n   langop-infra:partOf: x\n",
        "{file}",
        r"not valid YAML: mapping values are not allowed in this context$",
    ),
    StackCase("yaml-top-level-list", "- config\n- tools\n", "{file}", r"expected a mapping"),
    StackCase("config-not-a-mapping", "config: [namespace]\n", "{file}:config", r"mapping"),
    StackCase("stack-file-missing", None, "{file}", r"no config for stack 'bad'"),
    StackCase(
        "unknown-config-key",
        stack_text(with_base(toolz=[])),
        f"{PREFIX}toolz",
        rf"unknown config key; did you mean {PREFIX}tools\?",
    ),
    StackCase(
        "secure-in-tool-secret-env",
        stack_text(
            with_base(
                tools=doc(("tools[0].secretEnv", {"TOKEN": SECURE}))["tools"],
            )
        ),
        f"{PREFIX}tools[0].secretEnv.TOKEN",
        rf"holds a secure value; keep secrets under {PREFIX}secrets",
    ),
    StackCase(
        "secure-in-header-value",
        stack_text(with_base(agents=doc((f"{HDR0}", header(value=SECURE)))["agents"])),
        f"{PREFIX}{HDR0}.value",
        r"holds a secure value",
    ),
    StackCase(
        "secure-namespace",
        stack_text(with_base(namespace=SECURE)),
        f"{PREFIX}namespace",
        r"holds a secure value",
    ),
    StackCase(
        "tools-as-text",
        stack_text(with_base(tools="memory, files")),
        f"{PREFIX}tools",
        r"expected a list of tools",
    ),
    StackCase("no-config-at-all", "config: {}\n", f"{PREFIX}namespace", r"required"),
]


# --- running a case --------------------------------------------------------------------------


def api_problems(document: dict[str, Any]) -> tuple[dict[str, list[str]], ProgramRun]:
    """Build ``LanguageCluster`` from ``document``; expect SpecError; problems by path."""
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster("c", document), into=run)
    found: dict[str, list[str]] = {}
    for problem in caught.value.problems:
        found.setdefault(problem.path, []).append(problem.message)
    return found, run


def render_cli(config_file: Path) -> tuple[int, str, str]:
    """``langop-infra render --config FILE`` in-process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["render", "--config", str(config_file), "--project-dir", str(REPO)])
    return code, out.getvalue(), err.getvalue()


# A problem from a stack file opens with where its key is: ``stacks/Pulumi.dev.yaml:6:7: ``.
LOCATION = re.compile(r"^\S+\.ya?ml:\d+:\d+: ")


def assert_cli_problem(code: int, out: str, err: str, path: str, gist: str) -> None:
    assert code == 2, f"exit {code}; stderr:\n{err}"
    assert out == "", "nothing may reach stdout when the config is invalid"
    lines = [line.strip().removeprefix("- ") for line in err.splitlines()]
    # A file's own problem (bad YAML) is the file, its line and column; others a config path.
    in_file = re.compile(rf"^{re.escape(path)}:\d+:\d+: (.*)$")
    mine = [m.group(1) for m in map(in_file.match, lines) if m]
    lines = [LOCATION.sub("", line) for line in lines]
    mine += [line[len(path) + 2 :] for line in lines if line.startswith(f"{path}: ")]
    assert mine, f"no problem at {path!r} in:\n{err}"
    assert any(re.search(gist, m) for m in mine), f"{gist!r} not in {mine}"


def write_stack(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(text)
    return path


def params(cases: list[Case]) -> list[Any]:
    return [pytest.param(case, id=case.id) for case in cases]


# --- tests -----------------------------------------------------------------------------------


def test_matrix_is_large_and_distinct() -> None:
    ids = [c.id for c in CASES] + [c.id for c in STACK_CASES]
    assert len(ids) == len(set(ids))
    documents = [yaml.safe_dump(c.document, sort_keys=True) for c in CASES]
    assert len(documents) == len(set(documents)), "two cases test the same document"
    assert len(CASES) + len(STACK_CASES) >= 40


def test_base_document_is_valid_through_the_api() -> None:
    run = run_program(lambda: LanguageCluster("c", copy.deepcopy(BASE)))
    kinds = sorted({r.type for r in run.kubernetes()})
    assert "kubernetes:apps/v1:Deployment" in kinds


def test_base_document_is_valid_through_render(tmp_path: Path) -> None:
    code, out, err = render_cli(write_stack(tmp_path, stack_text(with_base())))
    assert (code, err) == (0, "")
    assert "kind: Deployment" in out


# The Python API names Python values where a stack file says YAML's words (issue 35): a gist
# is written in the stack file's; this is the same gist for a Python program.
PYTHON_WORDS = [
    ("true/false", "(True|False)"),
    ("true or false", "True or False"),
    ("mappings", "dicts"),
    ("a mapping", "a dict"),
    ("autoConnect", "auto_connect"),
]


def python_gist(gist: str) -> str:
    for yaml_words, python_words in PYTHON_WORDS:
        gist = gist.replace(yaml_words, python_words)
    return gist


@pytest.mark.parametrize("case", params(CASES))
def test_python_api_refuses(case: Case) -> None:
    found, run = api_problems(case.document)
    assert case.path in found, f"no problem at {case.path!r}: {found}"
    gist = python_gist(case.gist)
    assert any(re.search(gist, m) for m in found[case.path]), found[case.path]
    assert all(m.strip() for ms in found.values() for m in ms)
    assert run.registrations == [], [r.name for r in run.registrations]


@pytest.mark.parametrize("case", params(CASES))
def test_render_refuses(case: Case, tmp_path: Path) -> None:
    config = {f"{PREFIX}{k}": v for k, v in case.document.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert_cli_problem(code, out, err, PREFIX + case.path, case.gist)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in STACK_CASES])
def test_render_refuses_stack_file(case: StackCase, tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    if case.text is not None:
        path.write_text(case.text)
    code, out, err = render_cli(path)
    assert_cli_problem(code, out, err, case.path.replace("{file}", str(path)), case.gist)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    """Three independent mistakes give three problems in one run, both ways."""
    document = doc(
        ("tools[0].port", 0),
        (f"{MCP0}.url", "ws://x"),
        ("defaults", {"egress": "closed"}),
    )
    found, run = api_problems(document)
    assert {"tools[0].port", f"{MCP0}.url", "defaults.egress"} <= set(found)
    assert run.registrations == []
    config = {f"{PREFIX}{k}": v for k, v in document.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert (code, out) == (2, "")
    for path in ("tools[0].port", f"{MCP0}.url", "defaults.egress"):
        assert f"{PREFIX}{path}: " in err


# --- whole-file behaviour through the CLI ----------------------------------------------------


def problem_lines(err: str) -> list[str]:
    return [
        LOCATION.sub("", line.strip()[2:]) for line in err.splitlines() if line.startswith("  - ")
    ]


def test_a_misspelt_config_namespace_is_named_with_a_did_you_mean(tmp_path: Path) -> None:
    config = with_base()
    config["langop-infa:namespace"] = config.pop(f"{PREFIX}namespace")
    config["kubernetes:context"] = "kind-dev"  # another provider's key stays allowed
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert (code, out) == (2, "")
    assert problem_lines(err) == [
        "langop-infa:namespace: unknown config namespace 'langop-infa'; did you mean "
        "langop-infra:namespace? (this project's keys are under langop-infra:)"
    ]


def test_a_secure_value_in_tools_is_one_error_without_knock_on_errors(tmp_path: Path) -> None:
    """Without ``tools``, the agent's references would each say "no tool named ..."."""
    tools = doc(("tools[0].secretEnv", {"TOKEN": SECURE}))["tools"]
    code, out, err = render_cli(write_stack(tmp_path, stack_text(with_base(tools=tools))))
    assert (code, out) == (2, "")
    assert problem_lines(err) == [
        f"{PREFIX}tools[0].secretEnv.TOKEN: holds a secure value; keep secrets under "
        f"{PREFIX}secrets and reference them with secretKeyRef"
    ]


def test_a_secure_value_in_defaults_sets_off_no_egress_error(tmp_path: Path) -> None:
    """``egressTo`` relies on ``defaults.egress: restricted``; the refused defaults must not
    make it an error of its own. A real error elsewhere is still reported."""
    agents = doc((f"{A0}.egressTo", [{"cidr": "10.0.0.0/8"}]), ("agents[0].replicas", -1))["agents"]
    defaults = {"egress": "restricted", "resources": {"limits": {"memory": SECURE}}}
    config = with_base(agents=agents, defaults=defaults)
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert (code, out) == (2, "")
    assert [line.split(":")[1] for line in problem_lines(err)] == [
        "defaults.resources.limits.memory",
        "agents[0].replicas",
    ]


def test_a_problem_in_defaults_is_printed_once(tmp_path: Path) -> None:
    """Every workload inherits the defaults, and each used to report their problem again."""
    four = doc(
        ("tools[2]", {"name": "search", "image": "ghcr.io/acme/search:1"}),
        ("defaults", {"resources": {"requests": {"cpu": "2"}}}),
    )
    config = {f"{PREFIX}{k}": v for k, v in four.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert (code, out) == (2, "")
    assert problem_lines(err) == [
        f"{PREFIX}defaults.resources.requests.cpu: request 2 is above the limit 500m; lower it "
        "or raise the limit"
    ]


CREDENTIAL_CANARY = "Bearer canary-literal-9d1c"


def literal_credential_stack(tmp_path: Path) -> Path:
    document = doc(
        (HDR0, {"name": "authorization", "value": CREDENTIAL_CANARY}),
        (f"{MCP0}.headers[1]", {"name": "X-Api-Version", "value": "2"}),
    )
    return write_stack(tmp_path, stack_text({f"{PREFIX}{k}": v for k, v in document.items()}))


def test_a_literal_credential_header_warns_on_render(tmp_path: Path) -> None:
    code, out, err = render_cli(literal_credential_stack(tmp_path))
    assert code == 0, err
    assert "kind: Deployment" in out
    assert err.splitlines() == [
        f"langop-infra render: warning: {PREFIX}{HDR0}.value: authorization is a "
        "credential given as a literal value, which lands in plain text in a ConfigMap and env; "
        "use valueFrom: {secretKeyRef: {name, key}} (a Secret under secrets) or, in Python, "
        "secret=pulumi.Output.secret(...)"
    ]
    assert CREDENTIAL_CANARY not in err


def test_a_literal_credential_header_warns_on_validate(tmp_path: Path) -> None:
    path = literal_credential_stack(tmp_path)
    argv = ["validate", "--config", str(path), "--project-dir", str(REPO)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(argv)
    assert (code, out.getvalue()) == (0, "")
    assert err.getvalue().startswith(
        f"langop-infra validate: warning: {PREFIX}{HDR0}.value: authorization is a credential"
    )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main([*argv, "-o", "json"])
    report = json.loads(out.getvalue())
    assert (code, report["valid"], report["problems"], err.getvalue()) == (0, True, [], "")
    assert [w.split(": ")[0] for w in report["warnings"]] == [f"{PREFIX}{HDR0}.value"]


# --- the Python API: errors name the component, duplicates, references -----------------------


def test_api_errors_name_each_component() -> None:
    from langop_infra import LanguageAgent, LanguageTool

    cases = [
        (lambda: LanguageTool("memory", image="x/memory:1", port=0), "LanguageTool 'memory'"),
        (
            lambda: LanguageAgent("helper", image="x/helper:1", replicas=True),
            "LanguageAgent 'helper'",
        ),
        (lambda: LanguageCluster("apps", doc(("tools[0].port", 0))), "LanguageCluster 'apps'"),
    ]
    for build, subject in cases:
        with pytest.raises(SpecError) as caught:
            run_program(build)
        # The user's line that built it: here, this test's own lambda.
        built_at = f"invalid {subject}: 1 problem (built at {__file__}:"
        assert str(caught.value).startswith(built_at), caught.value


def test_a_second_component_with_the_same_kind_name_and_namespace_is_refused() -> None:
    from langop_infra import LanguageTool

    run = ProgramRun()

    def program() -> None:
        LanguageTool("memory", image="x/memory:1", namespace="apps")
        LanguageTool("memory", image="x/memory:2", namespace="apps")

    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    assert [str(p) for p in caught.value.problems] == [
        "name: a LanguageTool named 'memory' already exists in namespace 'apps'; give this one "
        "another name or namespace"
    ]
    deployments = [r for r in run.registrations if r.type == "kubernetes:apps/v1:Deployment"]
    assert len(deployments) == 1
    # Another namespace is another tool.
    run_program(lambda: [LanguageTool("memory", image="x/m:1", namespace=ns) for ns in ("a", "b")])


def test_a_name_ref_reaches_a_tool_built_earlier_in_the_program() -> None:
    from langop_infra import LanguageAgent, LanguageTool

    def program() -> None:
        LanguageTool("memory", image="x/memory:1", namespace="apps")
        agent = LanguageAgent(
            "helper", image="x/helper:1", namespace="apps", tools=[{"name": "memory"}]
        )
        pulumi.export("config", agent.config_yaml)

    run = run_program(program)
    assert "endpoint: http://memory.apps.svc.cluster.local:8080\n" in run.outputs["config"]
    with pytest.raises(SpecError, match="no LanguageTool 'memory' in namespace 'other'"):
        run_program(
            lambda: LanguageAgent(
                "helper", image="x/helper:1", namespace="other", tools=[{"name": "memory"}]
            )
        )
