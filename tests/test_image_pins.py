"""Images given by tag without a digest: a warning from validate and render, an error under
``defaults.requireImageDigests`` (on in the prod stack), built-in defaults included."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.cli.main import main
from langop_infra.config._model import DEFAULT_GATEWAY_IMAGE
from langop_infra.config.agent import DEFAULT_INIT_IMAGE
from langop_infra.config.checks._advice import cluster_warnings
from langop_infra.config.checks._image_pins import is_pinned
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError

ROOT = Path(__file__).resolve().parents[1]
DIGEST = "@sha256:" + "ab" * 32
KEY = {"secretKeyRef": {"name": "keys", "key": "openai"}}


def document(**defaults: Any) -> dict[str, Any]:
    return {
        "namespace": "apps",
        "defaults": defaults,
        "secrets": {"keys": {"openai": "k"}},
        "tools": [
            {"name": "memory", "image": "ghcr.io/acme/memory:1.4.0"},
            {"name": "files", "image": "ghcr.io/acme/files:1" + DIGEST},
        ],
        "models": [{"name": "gpt", "provider": "openai", "modelName": "gpt-4o", "apiKey": KEY}],
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper" + DIGEST,
                "model": "gpt",
                "workspace": {"size": "1Gi", "initImage": "docker.io/library/alpine:3.20"},
            }
        ],
    }


UNPINNED = [
    "tools[0].image",
    "agents[0].workspace.initImage",
    "defaults.modelGateway.image",  # the built-in gateway image is a tag
]


def test_is_pinned_wants_a_whole_digest() -> None:
    assert is_pinned("ghcr.io/a/b@sha256:" + "0" * 64)
    assert is_pinned("ghcr.io/a/b:1.2@sha256:" + "0" * 64)
    assert not is_pinned("ghcr.io/a/b:1.2")
    assert not is_pinned("ghcr.io/a/b@sha256:abc")
    assert not is_pinned("ghcr.io/a/b:sha256")


def test_tags_without_digest_warn_once_each() -> None:
    warnings = cluster_warnings(parse_cluster(document()))
    unpinned = [w for w in warnings if w.kind == "langop_unpinned_image"]
    assert [w.path for w in unpinned] == UNPINNED
    assert unpinned[0].message == (
        "image 'ghcr.io/acme/memory:1.4.0' has no digest, so what runs can change without a "
        "change here; pin it as <image>@sha256:<digest> (docker buildx imagetools inspect "
        "<image> shows it), or set defaults.requireImageDigests: true to refuse unpinned images"
    )
    assert DEFAULT_GATEWAY_IMAGE in unpinned[2].message


def test_require_image_digests_makes_them_errors() -> None:
    with pytest.raises(SpecError) as caught:
        parse_cluster(document(requireImageDigests=True))
    problems = caught.value.problems
    assert [p.path for p in problems] == UNPINNED
    assert all("requireImageDigests" not in p.message for p in problems)
    pinned = document(
        requireImageDigests=True, modelGateway={"image": "ghcr.io/berriai/litellm" + DIGEST}
    )
    pinned["tools"][0]["image"] += DIGEST
    del pinned["agents"][0]["workspace"]["initImage"]  # the built-in init image is pinned
    cluster = parse_cluster(pinned)
    assert cluster.defaults.require_image_digests is True
    assert cluster_warnings(cluster) == []


def test_the_built_in_init_image_is_pinned() -> None:
    assert is_pinned(DEFAULT_INIT_IMAGE)
    assert DEFAULT_INIT_IMAGE.startswith("docker.io/library/busybox:1.36.1@sha256:")


def stack_file(tmp_path: Path, **defaults: Any) -> Path:
    # The control plane admitted, so that the only warnings are the images'.
    defaults = {"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}], **defaults}
    config = {f"langop-infra:{k}": v for k, v in document(**defaults).items()}
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def test_validate_warns_then_refuses(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = ["validate", "--project-dir", str(ROOT), "--config"]
    assert main([*argv, str(stack_file(tmp_path))]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": image ")[0] for line in err] == [
        f"langop-infra validate: warning: langop-infra:{path}" for path in UNPINNED
    ]
    assert main([*argv, str(stack_file(tmp_path, requireImageDigests=True))]) == 2
    err = capsys.readouterr().err
    assert "error: invalid configuration: 3 problems" in err
    assert "langop-infra:tools[0].image: image 'ghcr.io/acme/memory:1.4.0' has no digest" in err


def test_the_prod_stack_requires_digests_and_still_validates() -> None:
    prod = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    assert prod["config"]["langop-infra:defaults"]["requireImageDigests"] is True
    assert main(["validate", "--stack", "prod", "--project-dir", str(ROOT)]) == 0


def test_the_shipped_stacks_vouch_for_no_digest_of_a_real_image() -> None:
    """Every image the shipped stacks name is the example organisation's: a digest beside a
    real publisher's image would claim a check nobody made here."""
    text = "\n".join(p.read_text() for p in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")))
    images = re.findall(r"^\s*image:\s*(\S+)", text, re.MULTILINE)
    assert len(images) >= 15, images
    assert [i for i in images if not i.startswith("ghcr.io/acme/")] == []
    assert all(is_pinned(i) for i in images), images


MEMORY_STACK = """config:
  langop-infra:namespace: apps
  langop-infra:defaults: {schemaSyncFrom: [{cidr: 10.0.0.0/28}]}
  langop-infra:tools:
    - {name: search, image: "ghcr.io/acme/search:1.0"}
  langop-infra:memories:
    - {name: notes, type: managed, image: "ghcr.io/acme/memory-mcp:1.4.0"}
  langop-infra:agents:
    - name: helper
      image: "ghcr.io/acme/helper@sha256:%s"
      tools: [{name: search}]
      memory: {name: notes}
""" % ("ab" * 32)


def validate_both_ways(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """``validate``'s warning lines from the stack file and from the program's run: equal."""
    found = []
    for run in ("0", "1"):
        monkeypatch.setenv("LANGOP_INFRA_VALIDATE_RUN", run)
        assert main(["validate", "--project-dir", str(ROOT), "--config", str(path)]) == 0
        found.append(capsys.readouterr().err.splitlines())
    assert found[0] == found[1]
    return found[0]


def test_a_managed_memory_warns_once_per_image_at_the_users_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The memory's tool is one the program adds: its image is named where the user wrote
    it, once, and no image twice (the cluster the program builds does not warn again)."""
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text(MEMORY_STACK)
    lines = validate_both_ways(path, monkeypatch, capsys)
    assert [line.split(": image ")[0] for line in lines] == [
        "langop-infra validate: warning: langop-infra:tools[0].image",
        "langop-infra validate: warning: langop-infra:memories[0].image",
    ]
    assert "'ghcr.io/acme/memory-mcp:1.4.0' has no digest" in lines[1]


def test_a_managed_memorys_tool_finding_is_named_after_the_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text(
        MEMORY_STACK.replace(
            "  langop-infra:defaults: {schemaSyncFrom: [{cidr: 10.0.0.0/28}]}\n", ""
        )
    )
    lines = validate_both_ways(path, monkeypatch, capsys)
    sync = [line for line in lines if "schema sync of tool" in line]
    assert [line.split(": schema sync")[0] for line in sync] == [
        "langop-infra validate: warning: tools[0].schemaSync",
        "langop-infra validate: warning: memories[0]",
    ]
    assert "tool 'notes'" in sync[1]


def test_require_image_digests_refuses_a_managed_memorys_unpinned_image() -> None:
    document = {
        "namespace": "apps",
        "defaults": {"requireImageDigests": True},
        "memories": [
            {"name": "pinned", "type": "managed"},  # the default image is pinned
            {"name": "notes", "type": "managed", "image": "ghcr.io/acme/memory-mcp:1.4.0"},
        ],
    }
    with pytest.raises(SpecError) as caught:
        parse_cluster(document)
    assert [p.path for p in caught.value.problems] == ["memories[1].image"]
