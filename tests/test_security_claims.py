"""Two statements of SECURITY.md, held against the code: overrides weaker than the
*restricted* Pod Security Standard are refused at config time in a namespace langop-infra
creates (and accepted in an adopted one, whose level it does not know); ``egress:
restricted`` applies to service tools as it does to agents."""

from __future__ import annotations

from typing import Any

import pytest

from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.netpol import IPAddress, Network, Pod

PIN = "@sha256:" + "8" * 64
WEAKER = [
    ("seccompProfile", "Unconfined"),
    ("allowPrivilegeEscalation", True),
    ("runAsNonRoot", False),
    ("addCapabilities", ["SYS_ADMIN"]),
]


def with_security(field: str, value: Any, create: bool) -> dict[str, Any]:
    return {
        "namespace": "apps",
        "createNamespace": create,
        "tools": [{"name": "memory", "image": "ghcr.io/acme/m" + PIN, "security": {field: value}}],
    }


@pytest.mark.parametrize(("field", "value"), WEAKER)
def test_overrides_the_restricted_standard_refuses_fail_at_config_time(
    field: str, value: Any
) -> None:
    with pytest.raises(SpecError) as caught:
        parse_cluster(with_security(field, value, create=True))
    [problem] = caught.value.problems
    assert problem.path == f"tools[0].security.{field}"
    assert "restricted Pod Security Standard" in problem.message
    # An adopted namespace keeps whatever level it has: nothing to check against.
    assert parse_cluster(with_security(field, value, create=False)).tools[0].security


def test_restricted_egress_applies_to_service_tools(render: Any) -> None:
    document = {
        "namespace": "apps",
        "defaults": {"egress": "restricted"},
        "tools": [
            {
                "name": "search",
                "image": "ghcr.io/acme/search" + PIN,
                "egressTo": [{"cidr": "198.51.100.0/24", "ports": [{"port": 443}]}],
            },
            {"name": "memory", "image": "ghcr.io/acme/memory" + PIN},
        ],
    }
    rendered = render(lambda: LanguageCluster("apps", document))
    policies = [m for m in rendered.manifests if m["kind"] == "NetworkPolicy"]
    assert {"search-egress", "memory-egress"} <= {p["metadata"]["name"] for p in policies}
    network = Network(policies)
    search = Pod("apps", {"langop.io/tool": "search"}, "search")
    memory = Pod("apps", {"langop.io/tool": "memory"}, "memory")
    dns = Pod("kube-system", {"k8s-app": "kube-dns"}, "dns")
    assert network.allows(search, IPAddress("198.51.100.7"), 443)
    assert not network.allows(search, IPAddress("198.51.100.7"), 80)
    assert not network.allows(search, IPAddress("203.0.113.9"), 443)
    assert not network.allows(memory, IPAddress("198.51.100.7"), 443)
    assert network.allows(memory, dns, 53, "UDP")
