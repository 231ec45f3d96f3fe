"""Canaries for the secret-carrying fields issue 38 adds: an A2A peer's header (a Pulumi
secret, or a Secret's key) and an external memory's address and header (Secrets' keys) never
surface in plain text (manifests, ConfigMaps, config.yaml, env literals, registration inputs,
outputs, logs); each reaches the pod only through ``secretKeyRef``."""

from __future__ import annotations

import pulumi

from langop_infra.components.cluster import LanguageCluster
from langop_infra.offline._mock_engine import run_program
from tests.test_secrets_audit import env_by_name, leaks, places_in, secret_holders

PIN = "@sha256:" + "a" * 64
PEER_SECRET = "cnry-a2a-peer-header-9f3e"
PEER_FROM_SECRET = "cnry-a2a-peer-valuefrom-41aa"
MEMORY_ADDRESS = "https://cnry-memory-address-77c2.example.com/mcp"
MEMORY_HEADER = "cnry-memory-header-0b5d"


def program() -> None:
    LanguageCluster(
        "c",
        {
            "namespace": "apps",
            "secrets": {
                "partner": {"token": pulumi.Output.secret(PEER_FROM_SECRET)},
                "memory": {"url": MEMORY_ADDRESS, "token": MEMORY_HEADER},
            },
            "memories": [
                {
                    "name": "shared",
                    "type": "external",
                    "address": {"valueFrom": {"secretKeyRef": {"name": "memory", "key": "url"}}},
                    "headers": [
                        {
                            "name": "Authorization",
                            "valueFrom": {"secretKeyRef": {"name": "memory", "key": "token"}},
                        }
                    ],
                }
            ],
            "agents": [
                {
                    "name": "caller",
                    "image": "ghcr.io/acme/caller:1" + PIN,
                    "memory": {"name": "shared"},
                    "agents": [
                        {
                            "name": "partner",
                            "url": "https://agents.partner.example.com/a2a",
                            "headers": [
                                {"name": "X-Key", "secret": pulumi.Output.secret(PEER_SECRET)},
                                {
                                    "name": "Authorization",
                                    "valueFrom": {
                                        "secretKeyRef": {"name": "partner", "key": "token"}
                                    },
                                },
                            ],
                        }
                    ],
                }
            ],
        },
    )


CANARIES = [PEER_SECRET, PEER_FROM_SECRET, MEMORY_ADDRESS, MEMORY_HEADER]


def test_no_canary_in_plain_text_and_each_reaches_the_engine_as_a_secret() -> None:
    run = run_program(program)
    assert leaks(places_in(run), CANARIES) == []
    held = secret_holders(run)
    for value in CANARIES:
        assert value in held, value  # not dropped on the way: each is a Secret's input


def test_each_reaches_the_pod_through_a_secret_key_ref() -> None:
    env = env_by_name(run_program(program))

    def ref(name: str) -> dict[str, str]:
        entry = env[f"apps/caller/{name}"]
        assert "value" not in entry, name
        return entry["valueFrom"]["secretKeyRef"]

    assert ref("A2A_PEER_PARTNER_HEADER_X_KEY") == {
        "name": "caller-env",
        "key": "A2A_PEER_PARTNER_HEADER_X_KEY",
    }
    assert ref("A2A_PEER_PARTNER_HEADER_AUTHORIZATION") == {"name": "partner", "key": "token"}
    assert ref("AGENT_MEMORY_ENDPOINT") == {"name": "memory", "key": "url"}
    assert ref("AGENT_MEMORY_HEADER_AUTHORIZATION") == {"name": "memory", "key": "token"}
    assert env["apps/caller/AGENT_MEMORY_TYPE"]["value"] == "external"
