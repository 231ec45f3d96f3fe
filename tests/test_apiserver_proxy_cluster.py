"""Schema sync against what a real API server does that a kind stand-in would not: it forwards
its own Host to the tool, authorizes each proxied request by RBAC verb, locates the Service's
port and endpoints (or dials the pod's IP), and speaks HTTPS with the cluster's CA.

The API server is the stand-in ``tests/support/apiserver.py`` (written from Kubernetes'
source; no real one runs here); the tools behind it are real official-SDK MCP servers.
"""

from __future__ import annotations

import re
import ssl
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml
from mcp.server.transport_security import TransportSecuritySettings

from langop_infra.cli.main import main
from langop_infra.mcp import ClientOptions, MCPError, fetch_tool_listing_sync
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests.faultservers import memory_server
from tests.support.apiserver import (
    IN_CLUSTER_BIND,
    ApiServer,
    Pod,
    kubeconfig,
    proxy_sync_inputs,
    serve_api,
)
from tests.support.cluster_pki import ClusterPKI, make_cluster_pki
from tests.support.kube_authz import Rule, User
from tests.support.loopback import serve
from tests.support.provider_host import EngineHost, Secret

ADMIN = "admin-token-canary-5a1e"
DEPLOYER = "sa-token-canary-91c3"
SA = "system:serviceaccount:ci:deployer"
AGENT = {"app.kubernetes.io/name": "helper"}
PREFIX = "/api/v1/namespaces/apps/services/memory:8080/proxy"
# What docs/SCHEMA_SYNC.md tells users to grant.
SERVICE_RULES = (Rule(("create", "get", "delete"), ("services/proxy",), "apps"),)
SIDECAR_RULES = (
    Rule(("list",), ("pods",), "apps"),
    Rule(("create", "get", "delete"), ("pods/proxy",), "apps"),
)


def inputs(api_url: str, token: str = ADMIN, **extra: Any) -> dict[str, Any]:
    return proxy_sync_inputs(kubeconfig(api_url, token), **extra)


def sidecar(api_url: str, token: str = ADMIN, **extra: Any) -> dict[str, Any]:
    more = {"endpoint": "http://localhost:8080", "access": "auto", "pod_selector": AGENT}
    return inputs(api_url, token, deployment_mode="sidecar", **{**more, **extra})


def sync(props: dict[str, Any]) -> dict[str, Any]:
    return ToolSchemaSyncProvider().create(props).outs


@pytest.fixture
def tool() -> Iterator[str]:
    """An in-cluster tool: the SDK's app bound to every interface (no rebinding protection)."""
    with serve(memory_server().streamable_http_app(host=IN_CLUSTER_BIND)) as url:
        yield url


# -- Host: the tool sees the API server's --------------------------------------------------------


@pytest.mark.parametrize(
    "security",
    [None, TransportSecuritySettings(allowed_hosts=["memory.apps.svc.cluster.local:8080"])],
    ids=["sdk-default-loopback", "allowed-hosts-service-name"],
)
def test_a_tool_that_refuses_the_api_servers_host_says_so(
    security: TransportSecuritySettings | None,
) -> None:
    # The SDK's default (host 127.0.0.1) allows only loopback names; the other, its Service's.
    app = memory_server().streamable_http_app(transport_security=security)
    with serve(app) as upstream:
        api = ApiServer(ADMIN, services={("apps", "memory", 8080): upstream})
        with serve_api(api) as api_url:
            outs = sync(inputs(api_url))
    host = api_url.removeprefix("http://")
    assert outs["phase"] == "Error"
    assert outs["last_error"] == (
        f"tool memory refused the API server's Host header {host} through the proxy (HTTP "
        f"421: Invalid Host header); allow {host} in the tool's allowed hosts (its "
        "DNS-rebinding protection), or sync with schemaSync.access: direct from inside the "
        "cluster"
    )


def test_the_tool_receives_the_api_servers_host_not_its_own(tool: str) -> None:
    allowed = TransportSecuritySettings(allowed_hosts=["127.0.0.2:*"])
    app = memory_server().streamable_http_app(transport_security=allowed)
    with serve(app) as upstream:
        api = ApiServer(ADMIN, services={("apps", "memory", 8080): upstream})
        with serve_api(api) as api_url:
            outs = sync(inputs(api_url))
    assert (outs["phase"], outs["last_error"]) == ("Registered", "")


def test_a_direct_421_names_the_host_header_it_refused() -> None:
    only = TransportSecuritySettings(allowed_hosts=["memory.apps.svc.cluster.local:8080"])
    app = memory_server().streamable_http_app(transport_security=only)
    with serve(app) as url, pytest.raises(MCPError) as caught:
        fetch_tool_listing_sync(f"{url}/mcp", ClientOptions(timeout=3, connect_retries=0))
    host = url.removeprefix("http://")
    assert "HTTP 421 Misdirected Request (Invalid Host header)" in str(caught.value)
    assert f"does not accept the Host header '{host}' (DNS-rebinding protection)" in str(
        caught.value
    )


# -- RBAC: the verbs of MCP over the proxy -------------------------------------------------------


def test_with_only_get_on_services_proxy_the_sync_names_the_missing_permission(
    tool: str,
) -> None:
    only_get = User(SA, (Rule(("get",), ("services/proxy",), "apps"),))
    api = ApiServer(ADMIN, services={("apps", "memory", 8080): tool}, users={DEPLOYER: only_get})
    with serve_api(api) as api_url:
        outs = sync(inputs(api_url, DEPLOYER))
    assert outs["phase"] == "Error"
    assert outs["last_error"] == (
        f'the API server refused the sync: services "memory:8080" is forbidden: User "{SA}" '
        'cannot create resource "services/proxy" in API group "" in the namespace "apps"; the '
        "kubeconfig's user needs create, get and delete on services/proxy in namespace apps "
        "(docs/SCHEMA_SYNC.md)"
    )
    assert DEPLOYER not in outs["last_error"]


def test_with_the_documented_rules_the_sync_passes_and_closes_its_session(tool: str) -> None:
    api = ApiServer(
        ADMIN, services={("apps", "memory", 8080): tool}, users={DEPLOYER: User(SA, SERVICE_RULES)}
    )
    # A stateful session (2025-06-18): its POSTs and the closing DELETE.
    stateful = {"limits": {"protocol": "2025-06-18"}}
    with serve_api(api) as api_url:
        outs = sync(inputs(api_url, DEPLOYER))
        session = sync(inputs(api_url, DEPLOYER, **stateful))
        elsewhere = sync(inputs(api_url, DEPLOYER, namespace="other"))
    assert (outs["phase"], outs["tool_names"]) == ("Registered", ["remember"])
    assert (session["phase"], session["last_error"]) == ("Registered", "")
    assert f"POST {PREFIX}/mcp" in api.calls and f"DELETE {PREFIX}/mcp" in api.calls
    # A RoleBinding in apps grants nothing in another namespace.
    assert 'cannot create resource "services/proxy"' in elsewhere["last_error"]
    assert 'in the namespace "other"' in elsewhere["last_error"]


def test_without_delete_the_session_is_left_open_but_the_sync_passes(tool: str) -> None:
    create_get = User(SA, (Rule(("create", "get"), ("services/proxy",), "apps"),))
    api = ApiServer(ADMIN, services={("apps", "memory", 8080): tool}, users={DEPLOYER: create_get})
    with serve_api(api) as api_url:
        outs = sync(inputs(api_url, DEPLOYER, limits={"protocol": "2025-06-18"}))
    assert (outs["phase"], outs["last_error"]) == ("Registered", "")
    assert api.refused == ["delete services/proxy"]


def test_a_legacy_sse_tool_needs_get_on_services_proxy() -> None:
    """The SDK's legacy SSE server: the POST is a 405, the fallback GETs the event stream,
    which the API server authorizes as get."""
    legacy = memory_server().sse_app(sse_path="/mcp", host=IN_CLUSTER_BIND)
    create_delete = User(SA, (Rule(("create", "delete"), ("services/proxy",), "apps"),))
    users = {DEPLOYER: create_delete, "full-token-canary": User(SA, SERVICE_RULES)}
    with serve(legacy) as upstream:
        api = ApiServer(ADMIN, services={("apps", "memory", 8080): upstream}, users=users)
        with serve_api(api) as api_url:
            refused = sync(inputs(api_url, DEPLOYER))
            allowed = sync(inputs(api_url, "full-token-canary"))
    assert refused["phase"] == "Error"
    assert 'cannot get resource "services/proxy"' in refused["last_error"]
    # With get, the stream opens; the SDK then names an absolute message endpoint, which
    # the confined client refuses (docs/schema-sync.md): past the authorizer, that is.
    assert "announced a message endpoint" in allowed["last_error"]
    assert f"GET {PREFIX}/mcp" in api.calls


@pytest.mark.parametrize(
    ("rules", "says"),
    [
        (
            (
                Rule(("list",), ("pods",), "apps"),
                Rule(("get",), ("pods/proxy",), "apps"),  # what the package used to advise
            ),
            'cannot create resource "pods/proxy"',
        ),
        ((Rule(("create", "get", "delete"), ("pods/proxy",), "apps"),), "cannot list resource"),
        (SIDECAR_RULES, ""),
    ],
    ids=["old-advice", "no-list", "documented"],
)
def test_sidecar_sync_needs_list_pods_and_create_get_delete_on_pods_proxy(
    tool: str, rules: tuple[Rule, ...], says: str
) -> None:
    api = ApiServer(
        ADMIN,
        pods={"apps": [Pod("helper-0", AGENT)]},
        pod_backends={("apps", "helper-0", 8080): tool},
        users={DEPLOYER: User(SA, rules)},
    )
    with serve_api(api) as api_url:
        outs = sync(sidecar(api_url, DEPLOYER))
    if not says:
        assert (outs["phase"], outs["last_error"]) == ("Registered", "")
        return
    assert outs["phase"] == "Error"
    assert says in outs["last_error"]
    assert (
        "the kubeconfig's user needs list on pods and create, get and delete on pods/proxy "
        "in namespace apps" in outs["last_error"]
    )


# -- ports and endpoints -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("services", "says", "hint"),
    [
        (
            {("apps", "memory", 9090): "tool"},
            'no service port 8080 found for service \\"memory\\"',
            "the Service has no such port",
        ),
        (
            {("apps", "memory", 8080): None},
            'no endpoints available for service \\"memory\\"',
            "no pod behind the Service is Ready",
        ),
        ({("apps", "other", 8080): "tool"}, 'services \\"memory\\" not found', ""),
        (
            {("apps", "memory", 8080): "http://127.0.0.1:9"},
            "error trying to reach service",
            "do not answer the API server on the Service's targetPort",
        ),
    ],
    ids=["wrong-port", "no-endpoints", "no-service", "backend-down"],
)
def test_the_api_servers_own_answers_reach_the_message(
    tool: str, services: dict[Any, Any], says: str, hint: str
) -> None:
    resolved = {key: tool if url == "tool" else url for key, url in services.items()}
    api = ApiServer(ADMIN, services=resolved)
    with serve_api(api) as api_url:
        outs = sync(inputs(api_url))
    assert outs["phase"] == "Error"
    assert says.replace("\\", "") in outs["last_error"]
    assert hint in outs["last_error"]
    assert "{" not in outs["last_error"]  # the Status message, not its JSON
    assert "broken or overloaded" not in outs["last_error"]  # the API server said what it was


def test_a_sidecar_bound_to_loopback_only_cannot_be_reached_through_the_pod_proxy(
    tool: str,
) -> None:
    # The pod proxy dials the pod's IP: what listens on 127.0.0.1 alone is not there.
    api = ApiServer(ADMIN, pods={"apps": [Pod("helper-0", AGENT, ip="10.244.1.9")]})
    with serve_api(api) as api_url:
        outs = sync(sidecar(api_url))
    assert outs["phase"] == "Error"
    assert "error trying to reach service: dial tcp 10.244.1.9:8080" in outs["last_error"]


STACK = """
config:
  kubernetes:kubeconfig: {kubeconfig}
  langop-infra:namespace: apps
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory-mcp:1.0.0
      port: 9090
      schemaSync: {{access: apiserver-proxy, timeout: 5s}}
"""


def test_the_stack_syncs_the_tools_own_port(
    tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tool on port 9090 has a Service with port 9090 only: the sync must ask for it."""
    api = ApiServer(ADMIN, services={("apps", "memory", 9090): tool})
    config = tmp_path / "kubeconfig"
    stack = tmp_path / "Pulumi.ci.yaml"
    lock = tmp_path / "schemas.lock.yaml"
    project = Path(__file__).resolve().parents[1]
    with serve_api(api) as api_url:
        config.write_text(kubeconfig(api_url, ADMIN))
        stack.write_text(STACK.format(kubeconfig=config))
        capsys.readouterr()
        argv = ["schemas", "--config", str(stack), "--project-dir", str(project)]
        code = main([*argv, "--lock", str(lock), "--update"])
    _out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert "POST /api/v1/namespaces/apps/services/memory:9090/proxy/mcp" in api.calls


# -- HTTPS with the cluster's CA -----------------------------------------------------------------


@pytest.fixture
def pki(tmp_path: Path) -> ClusterPKI:
    return make_cluster_pki(tmp_path, names=("kubernetes.default.svc",), ips=("127.0.0.2",))


def tls_cluster(pki: ClusterPKI, tool: str, **extra: Any) -> ApiServer:
    return ApiServer(
        ADMIN,
        services={("apps", "memory", 8080): tool},
        pods={"apps": [Pod("helper-0", AGENT)]},
        pod_backends={("apps", "helper-0", 8080): tool},
        **extra,
    )


def test_preview_and_up_through_https_with_the_kubeconfigs_ca(pki: ClusterPKI, tool: str) -> None:
    api = tls_cluster(pki, tool)
    ca = {"certificate-authority-data": pki.data(pki.ca)}
    with serve_api(api, **pki.uvicorn()) as api_url:
        assert api_url.startswith("https://127.0.0.2:")
        for props in (inputs(api_url), sidecar(api_url)):
            props["kubeconfig"] = Secret(kubeconfig(api_url, ADMIN, cluster=ca))
            host = EngineHost(ToolSchemaSyncProvider())
            assert host.preview(props).failures == []
            host.up(props)
            assert host.plain_outputs()["phase"] == "Registered"
        # Without the cluster's CA the same server is not trusted.
        untrusted = sync(inputs(api_url))
    assert "GET /api/v1/namespaces/apps/pods?labelSelector=app.kubernetes.io%2Fname%3Dhelper" in (
        api.calls
    )
    assert untrusted["phase"] == "Error"
    assert untrusted["last_error"] == (
        f"TLS certificate of {api_url}{PREFIX}/mcp not trusted (unable to get local issuer "
        "certificate): give the cluster's CA in the kubeconfig (certificate-authority-data), "
        "and tls-server-name if its certificate names another host"
    )


def test_tls_server_name_is_the_name_the_certificate_is_checked_against(tmp_path: Path) -> None:
    named = make_cluster_pki(tmp_path, names=("kubernetes.default.svc",))  # no IP in it
    with serve(memory_server().streamable_http_app(host=IN_CLUSTER_BIND)) as tool:
        api = tls_cluster(named, tool)
        with serve_api(api, **named.uvicorn()) as api_url:
            ca = {"certificate-authority-data": named.data(named.ca)}
            plain = sync(inputs(api_url, kubeconfig=kubeconfig(api_url, ADMIN, cluster=ca)))
            server_name = {**ca, "tls-server-name": "kubernetes.default.svc"}
            config = kubeconfig(api_url, ADMIN, cluster=server_name)
            service = sync(inputs(api_url, kubeconfig=config))
            pod = sync(sidecar(api_url, kubeconfig=config))
    assert plain["phase"] == "Error" and "certificate" in plain["last_error"].lower()
    assert (service["phase"], pod["phase"]) == ("Registered", "Registered"), pod["last_error"]


def test_a_client_certificate_from_the_kubeconfig_authenticates(pki: ClusterPKI, tool: str) -> None:
    api = tls_cluster(pki, tool, client_cert_user=User(pki.client_user, SERVICE_RULES))
    listener = {**pki.uvicorn(), "ssl_ca_certs": str(pki.ca), "ssl_cert_reqs": ssl.CERT_REQUIRED}
    cluster = {"certificate-authority-data": pki.data(pki.ca)}
    user = {
        "client-certificate-data": pki.data(pki.client_cert),
        "client-key-data": pki.data(pki.client_key),
    }
    with serve_api(api, **listener) as api_url:
        outs = sync(inputs(api_url, kubeconfig=kubeconfig(api_url, None, cluster, user)))
        listing = sync(sidecar(api_url, kubeconfig=kubeconfig(api_url, None, cluster, user)))
    assert (outs["phase"], outs["last_error"]) == ("Registered", "")
    # The certificate's user has no rule on pods: the listing is refused by name.
    assert 'User "deployer" cannot list resource "pods"' in listing["last_error"]


# -- the documented Role -------------------------------------------------------------------------


def documented_role() -> dict[str, Any]:
    """The Role docs/SCHEMA_SYNC.md tells users to grant, as written there."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "SCHEMA_SYNC.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    [role] = [yaml.safe_load(textwrap.dedent(b)) for b in blocks if "kind: Role" in b]
    return role


def test_the_documented_role_is_valid_and_lets_both_syncs_through(tool: str) -> None:
    role = documented_role()
    for version in ("1.29.0", "1.31.0"):
        kubernetes_validate.validate(role, version, strict=True)
    namespace = role["metadata"]["namespace"]
    rules = tuple(
        Rule(tuple(r["verbs"]), tuple(r["resources"]), namespace, tuple(r["apiGroups"]))
        for r in role["rules"]
    )
    api = ApiServer(
        ADMIN,
        services={("apps", "memory", 8080): tool},
        pods={"apps": [Pod("helper-0", AGENT)]},
        pod_backends={("apps", "helper-0", 8080): tool},
        users={DEPLOYER: User(SA, rules)},
    )
    with serve_api(api) as api_url:
        service = sync(inputs(api_url, DEPLOYER, limits={"protocol": "2025-06-18"}))
        pod = sync(sidecar(api_url, DEPLOYER, limits={"protocol": "2025-06-18"}))
    assert (service["phase"], service["last_error"]) == ("Registered", "")
    assert (pod["phase"], pod["last_error"]) == ("Registered", "")
    assert api.refused == []
    assert f"DELETE {PREFIX}/mcp" in api.calls


# -- the stand-in answers as the API server does -------------------------------------------------


async def echo_host(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A backend that answers with the Host header it received."""
    if scope["type"] != "http":
        return
    host = dict(scope["headers"]).get(b"host", b"")
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": host})


def test_the_stand_in_forwards_host_redirects_with_the_query_and_answers_status() -> None:
    with serve(echo_host) as upstream:
        api = ApiServer(
            ADMIN,
            services={
                ("apps", "memory", 8080): upstream,
                ("apps", "down", 8080): "http://127.0.0.1:9",
            },
        )
        with (
            serve_api(api) as api_url,
            httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {ADMIN}"}) as client,
        ):
            echoed = client.get(f"{PREFIX}/")
            moved = client.get(f"{PREFIX}?a=1&b=2")
            down = client.get("/api/v1/namespaces/apps/services/down:8080/proxy/")
            anonymous = httpx.get(f"{api_url}{PREFIX}/")
    assert echoed.text == api_url.removeprefix("http://")  # the API server's Host, not the tool's
    assert (moved.status_code, moved.headers["location"]) == (301, f"{PREFIX}/?a=1&b=2")
    assert down.status_code == 503
    assert down.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": (
            "error trying to reach service: dial tcp 127.0.0.1:9: connect: connection refused"
        ),
        "reason": "ServiceUnavailable",
        "code": 503,
    }
    assert (anonymous.status_code, anonymous.json()["reason"]) == (401, "Unauthorized")
