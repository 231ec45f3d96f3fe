"""Pods roll when a Secret they read changes, through a keyed digest, never a plain hash.

Each workload that reads a Secret langop-infra makes (tool and agent Deployments, a scheduled
agent's CronJob, the model gateway) carries ``langop.io/secret-digest: hmac-sha256:<hex>`` on
its pod template: an HMAC of the Secrets' data keyed by the workload's RolloutKey, a dynamic
resource whose key lives only in Pulumi state. The mock engine answers the key only when
given one (here ``OFFLINE_KEY``; ``render`` derives one from ``--fingerprint-key-env``), else
the digest stays unknown; the provider itself is driven through the SDK's own servicer.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pytest
from pulumi.runtime import mocks as sdk_mocks
from pulumi.runtime.proto import provider_pb2

from langop_infra.components._rollout import DIGEST_PREFIX, canonical, digest
from langop_infra.components.cluster import LanguageCluster
from langop_infra.components.tool import LanguageTool
from langop_infra.manifests._contract import SECRET_DIGEST_ANNOTATION
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.sync import rollout_key
from langop_infra.sync.rollout_key import OFFLINE_KEY, TYPE, RolloutKey, RolloutKeyProvider
from langop_infra.testing import Mocks
from tests.support.provider_host import URN, EngineHost, Secret

TOKEN = "cnry-roll-token-5e1a"
OTHER = "cnry-roll-other-5e1a"
IMAGE = "ghcr.io/acme/memory:1"
GATEWAY_IMAGE = "ghcr.io/acme/litellm:1"
SHARED_REF = {"secretKeyRef": {"name": "shared", "key": "token"}}
# Every workload kind that reads a Secret: (kind, name).
READERS = [
    ("Deployment", "memory"),
    ("Deployment", "researcher"),
    ("CronJob", "digest"),
    ("Deployment", "gateway"),
]


def cluster_document(token: str, image: str = IMAGE, extra: str | None = None) -> dict[str, Any]:
    secrets: dict[str, Any] = {"shared": {"token": token}}
    if extra is not None:
        secrets["other"] = {"token": extra}
    return {
        "namespace": "apps",
        "defaults": {"modelGateway": {"image": GATEWAY_IMAGE}},
        "secrets": secrets,
        "models": [
            {
                "name": "gpt",
                "provider": "openai",
                "modelName": "gpt-4o-mini",
                "apiKey": {"secretKeyRef": {"name": "shared", "key": "token"}},
            }
        ],
        "tools": [
            {"name": "memory", "image": image, "secretEnv": {"TOKEN": SHARED_REF}},
            {"name": "plain", "image": IMAGE},
        ],
        "agents": [
            {
                "name": "researcher",
                "image": "ghcr.io/acme/agent:1",
                "tools": [{"name": "memory"}],
                "mcpServers": [
                    {
                        "name": "web",
                        "url": "https://search.example.com/mcp",
                        "headers": [{"name": "Authorization", "valueFrom": SHARED_REF}],
                    }
                ],
            },
            {
                "name": "digest",
                "image": "ghcr.io/acme/agent:1",
                "model": "gpt",
                "secretEnv": {"TOKEN": SHARED_REF},
                "schedule": {"cron": "0 7 * * 1-5", "input": "Summarise."},
            },
            {"name": "idle", "image": "ghcr.io/acme/agent:1"},
        ],
    }


def render(document: dict[str, Any], **options: Any) -> ProgramRun:
    options.setdefault("rollout_key", OFFLINE_KEY)
    return run_program(lambda: LanguageCluster("apps", document), **options)


def pod_metadata(run: ProgramRun, kind: str, name: str) -> dict[str, Any]:
    for manifest in run.manifests():
        if manifest["kind"] == kind and manifest["metadata"]["name"] == name:
            spec = manifest["spec"]
            if kind == "CronJob":
                spec = spec["jobTemplate"]["spec"]
            return spec["template"]["metadata"]
    raise AssertionError(f"no {kind} {name}")


def digests(run: ProgramRun) -> dict[tuple[str, str], str | None]:
    return {
        (kind, name): pod_metadata(run, kind, name)
        .get("annotations", {})
        .get(SECRET_DIGEST_ANNOTATION)
        for kind, name in [*READERS, ("Deployment", "plain"), ("Deployment", "idle")]
    }


def test_every_reader_rolls_when_a_secret_value_changes() -> None:
    before = digests(render(cluster_document(TOKEN)))
    after = digests(render(cluster_document(OTHER)))
    for reader in READERS:
        first, second = before[reader], after[reader]
        assert first is not None and first.startswith(DIGEST_PREFIX), reader
        assert second is not None and second != first, reader


def test_the_same_values_keep_every_digest() -> None:
    first = digests(render(cluster_document(TOKEN)))
    assert digests(render(cluster_document(TOKEN))) == first
    # Nothing but the Secrets' data counts: another image, or a Secret nobody reads, is no roll.
    other_image = digests(render(cluster_document(TOKEN, image="ghcr.io/acme/memory:2")))
    assert other_image[("Deployment", "memory")] == first[("Deployment", "memory")]
    unread = digests(render(cluster_document(TOKEN, extra=OTHER)))
    assert unread == first


def test_a_workload_that_reads_no_secret_gets_no_digest_and_no_key() -> None:
    run = render(cluster_document(TOKEN))
    found = digests(run)
    assert found[("Deployment", "plain")] is None
    assert found[("Deployment", "idle")] is None
    keys = sorted(r.name for r in run.by_type(TYPE))
    assert keys == sorted(
        f"apps/{name}-rollout-key" for name in ("memory", "researcher", "digest", "gateway")
    )


def test_the_digest_is_keyed_not_a_plain_hash_of_the_value_or_the_data() -> None:
    run = render(cluster_document(TOKEN))
    value = pod_metadata(run, "Deployment", "memory")["annotations"][SECRET_DIGEST_ANNOTATION]
    hex_part = value.removeprefix(DIGEST_PREFIX)
    assert len(hex_part) == 64
    data = {"shared": {"token": TOKEN}}
    forms = [
        TOKEN,
        canonical([("shared", {"token": TOKEN})]).decode(),
        json.dumps(data),
        json.dumps(data, sort_keys=True),
        json.dumps({"token": TOKEN}),
        json.dumps({"token": TOKEN}, sort_keys=True, separators=(",", ":")),
        f"token={TOKEN}",
    ]
    plain = {
        getattr(hashlib, algorithm)(form.encode()).hexdigest()
        for algorithm in ("sha256", "sha1", "md5", "sha512", "blake2b")
        for form in forms
    }
    assert all(hex_part not in h and h not in hex_part for h in plain)
    # It is the HMAC under the offline key, and another key gives another digest.
    assert value == digest(OFFLINE_KEY, [("shared", {"token": TOKEN})])
    assert value != digest("00" * 32, [("shared", {"token": TOKEN})])


def test_the_digest_is_shown_not_secret_and_the_spec_stays_readable() -> None:
    run = render(cluster_document(TOKEN))
    metadata = pod_metadata(run, "Deployment", "researcher")
    text = json.dumps([m for m in run.manifests() if m["kind"] != "Secret"])
    assert metadata["annotations"][SECRET_DIGEST_ANNOTATION].startswith(DIGEST_PREFIX)
    assert TOKEN not in text and OFFLINE_KEY not in text
    [researcher] = [
        m
        for m in run.manifests()
        if m["kind"] == "Deployment" and m["metadata"]["name"] == "researcher"
    ]
    assert researcher["spec"]["replicas"] == 1  # not "[secret]": the spec is not secret
    [container] = researcher["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "ghcr.io/acme/agent:1"


def test_preview_and_up_show_the_same_digest() -> None:
    up = digests(render(cluster_document(TOKEN)))
    assert digests(render(cluster_document(TOKEN), preview=True)) == up


def tool_with_secret_env(value: str) -> Callable[[], Any]:
    def program() -> None:
        LanguageTool(
            "memory", image=IMAGE, namespace="apps", env={"TOKEN": pulumi.Output.secret(value)}
        )

    return program


def keyed(program: Callable[[], Any]) -> ProgramRun:
    return run_program(program, rollout_key=OFFLINE_KEY)


def test_a_secret_output_in_env_rolls_the_tool() -> None:
    before = pod_metadata(keyed(tool_with_secret_env(TOKEN)), "Deployment", "memory")
    same = pod_metadata(keyed(tool_with_secret_env(TOKEN)), "Deployment", "memory")
    after = pod_metadata(keyed(tool_with_secret_env(OTHER)), "Deployment", "memory")
    digest_before = before["annotations"][SECRET_DIGEST_ANNOTATION]
    assert same["annotations"][SECRET_DIGEST_ANNOTATION] == digest_before
    assert after["annotations"][SECRET_DIGEST_ANNOTATION] != digest_before
    assert digest_before == digest(OFFLINE_KEY, [("memory-env", {"TOKEN": TOKEN})])


def test_a_plain_output_in_env_makes_no_secret_and_no_digest() -> None:
    def program() -> None:
        LanguageTool(
            "memory", image=IMAGE, namespace="apps", env={"MODE": pulumi.Output.from_input("x")}
        )

    run = run_program(program)
    assert SECRET_DIGEST_ANNOTATION not in pod_metadata(run, "Deployment", "memory").get(
        "annotations", {}
    )
    assert [m for m in run.manifests() if m["kind"] == "Secret"] == []


# -- the key under a real key: users' mocks and the canary -----------------------------------

KEY_CANARY = "c4" * 32


class _KeyMocks(Mocks):
    """langop_infra.testing.Mocks, except that the rollout key is a canary (as a real
    ``pulumi up`` would draw one)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == TYPE:
            self.resources.append(args)
            return f"{args.name}-id", {**args.inputs, "key": KEY_CANARY}
        return super().new_resource(args)


class _RecordingMonitor(sdk_mocks.MockMonitor):
    """The SDK's mock monitor, keeping each request's additionalSecretOutputs by name."""

    def __init__(self, mocks_: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks_)
        self.secret_outputs: dict[str, list[str]] = {}

    def RegisterResource(self, request: Any) -> Any:
        self.secret_outputs[request.name] = list(request.additionalSecretOutputs)
        return super().RegisterResource(request)


@pytest.fixture
def key_program(caplog: pytest.LogCaptureFixture) -> Any:
    mocks_ = _KeyMocks()
    monitor = _RecordingMonitor(mocks_)
    pulumi.runtime.set_mocks(mocks_, preview=False, monitor=monitor)
    caplog.set_level(logging.DEBUG)
    return mocks_, monitor


@pulumi.runtime.test
def test_the_key_stays_in_state_only_as_a_secret(key_program: Any) -> Any:
    mocks_, monitor = key_program
    tool = LanguageTool(
        "memory", image=IMAGE, namespace="apps", env={"TOKEN": pulumi.Output.secret(TOKEN)}
    )

    def check(spec: Any) -> None:
        assert monitor.secret_outputs["apps/memory-rollout-key"] == ["key"]
        annotation = spec["template"]["metadata"]["annotations"][SECRET_DIGEST_ANNOTATION]
        assert annotation == digest(KEY_CANARY, [("memory-env", {"TOKEN": TOKEN})])
        registered = json.dumps([r.inputs for r in mocks_.resources if r.typ != TYPE], default=str)
        assert KEY_CANARY not in registered
        [key] = [r for r in mocks_.resources if r.typ == TYPE]
        assert set(key.inputs) == {"purpose", "__provider"}
        assert key.inputs["purpose"] == rollout_key.PURPOSE

    assert tool.deployment is not None
    return tool.deployment.spec.apply(check)


@pulumi.runtime.test
def test_the_programs_key_output_is_a_secret(key_program: Any) -> Any:
    key = RolloutKey("k")

    async def secret() -> bool:
        return await pulumi.Output.secret(key.key).is_secret()

    def check(parts: list[Any]) -> None:
        is_secret, value = parts
        assert is_secret and value == KEY_CANARY

    return pulumi.Output.all(pulumi.Output.from_input(secret()), key.key).apply(check)


def test_the_key_never_reaches_logs(caplog: pytest.LogCaptureFixture) -> None:
    run = keyed(tool_with_secret_env(TOKEN))
    text = "\n".join([*run.logs, *run.warnings, caplog.text])
    assert OFFLINE_KEY not in text and TOKEN not in text


# -- the provider, through the SDK's dynamic-provider host ----------------------------------


def host() -> EngineHost:
    return EngineHost(RolloutKeyProvider(), secret_outputs=tuple(RolloutKey.SECRET_OUTPUTS))


INPUTS: Mapping[str, Any] = {"purpose": rollout_key.PURPOSE}


def test_create_draws_a_32_byte_key_held_as_a_secret() -> None:
    engine = host()
    assert engine.up(INPUTS) == "create"
    key = engine.outputs["key"]
    assert isinstance(key, Secret)
    assert len(bytes.fromhex(key.value)) == 32
    assert key.value != OFFLINE_KEY
    assert key.value not in engine.state_text()
    other = host()
    other.up(INPUTS)
    assert other.plain_outputs()["key"] != key.value


def test_diff_never_changes_or_replaces_the_key() -> None:
    engine = host()
    engine.up(INPUTS)
    key = engine.plain_outputs()["key"]
    assert engine.preview(INPUTS).op == "same"
    assert engine.up(INPUTS) == "same"
    assert engine.up({"purpose": "something else"}) == "same"
    # Even news that name another key: the engine's Diff, straight to the servicer.
    news = {**engine.inputs, "key": "00" * 32}
    send: Any = engine._send  # pyright: ignore[reportPrivateUsage]
    call: Any = engine._call  # pyright: ignore[reportPrivateUsage]
    request = provider_pb2.DiffRequest(
        id=engine.id,
        urn=URN,
        olds=send(engine.outputs),
        news=send(news),
        old_inputs=send(engine.inputs),
    )
    reply = call("Diff", request)
    assert reply.changes != provider_pb2.DiffResponse.DIFF_SOME
    assert list(reply.replaces) == [] and not reply.deleteBeforeReplace
    assert engine.plain_outputs()["key"] == key
    assert "Create" in engine.calls and engine.calls.count("Create") == 1
    assert "Update" not in engine.calls


def test_refresh_reads_back_the_same_key_still_secret() -> None:
    engine = host()
    engine.up(INPUTS)
    key = engine.plain_outputs()["key"]
    refreshed = engine.refresh()
    assert isinstance(refreshed["key"], Secret)
    assert refreshed["key"].value == key
    assert engine.up(INPUTS) == "same"
    assert engine.plain_outputs()["key"] == key


def test_offline_mocks_answer_only_the_key_resource() -> None:
    answered = rollout_key.offline_outputs(TYPE, {"purpose": "x"}, OFFLINE_KEY)
    assert answered == {"purpose": "x", "key": OFFLINE_KEY}
    assert rollout_key.offline_outputs("pulumi-python:dynamic:Resource", {"x": 1}, "k") is None
    # The SDK derives the type token the mocks answer from the class's module and name.
    derived = RolloutKey._resource_type_name  # pyright: ignore[reportPrivateUsage]
    assert f"pulumi-python:{derived}" == TYPE


def test_a_sidecar_reading_a_cluster_secret_rolls_its_agent() -> None:
    def document(token: str) -> dict[str, Any]:
        return {
            "namespace": "apps",
            "secrets": {"shared": {"token": token}},
            "tools": [
                {
                    "name": "files",
                    "image": IMAGE,
                    "deploymentMode": "sidecar",
                    "secretEnv": {"TOKEN": SHARED_REF},
                }
            ],
            "agents": [
                {"name": "helper", "image": "ghcr.io/acme/agent:1", "tools": [{"name": "files"}]}
            ],
        }

    def agent_digest(token: str) -> str:
        metadata = pod_metadata(render(document(token)), "Deployment", "helper")
        return metadata["annotations"][SECRET_DIGEST_ANNOTATION]

    assert agent_digest(TOKEN) == agent_digest(TOKEN)
    assert agent_digest(TOKEN) != agent_digest(OTHER)


# -- render: no digest under a key anyone knows ---------------------------------------------


def test_without_a_key_the_render_shows_the_digest_unknown_and_the_rest_known() -> None:
    document = cluster_document(TOKEN)
    document["agents"][0]["podAnnotations"] = {"team": "research"}
    run = render(document, rollout_key=None, preview=True)
    annotations = pod_metadata(run, "Deployment", "researcher")["annotations"]
    assert annotations[SECRET_DIGEST_ANNOTATION] == "[unknown]"
    assert annotations["team"] == "research"
    assert annotations["langop.io/config-checksum"] != "[unknown]"
    assert SECRET_DIGEST_ANNOTATION not in pod_metadata(run, "Deployment", "plain").get(
        "annotations", {}
    )


def test_the_dev_render_derives_the_key_only_from_the_users_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import contextlib
    import io
    from pathlib import Path

    from langop_infra.cli.main import main

    root = Path(__file__).resolve().parents[1]

    def rendered(*argv: str) -> tuple[str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main(["render", "--project-dir", str(root), "--stack", "dev", *argv]) == 0
        return out.getvalue(), err.getvalue()

    plain, warnings = rendered()
    assert f"{SECRET_DIGEST_ANNOTATION}: '[unknown]'" in plain
    assert SECRET_DIGEST_ANNOTATION not in warnings  # unknown by design: no warning
    user_key = "a-fingerprint-key-for-tests-0123456789"
    monkeypatch.setenv("ROLL_KEY", user_key)
    keyed_text, _ = rendered("--fingerprint-key-env", "ROLL_KEY")
    [line] = [x for x in keyed_text.splitlines() if SECRET_DIGEST_ANNOTATION in x]
    shown = line.split(": ", 1)[1]
    assert shown.startswith(DIGEST_PREFIX)
    derived = rollout_key.derived_key(user_key.encode())
    assert derived not in keyed_text and OFFLINE_KEY not in keyed_text
    assert user_key not in keyed_text
    # Not the digest anyone could compute with the public test key.
    assert shown != digest(
        OFFLINE_KEY,
        [
            ("search-credentials", {"token": "dev-search-token-not-for-prod"}),
            ("ticketing-token", {"token": "dev-ticketing-token-not-for-prod"}),
        ],
    )


def test_diff_knows_the_digest_annotation_by_its_contract_name() -> None:
    from langop_infra.offline import _manifest_diff

    assert _manifest_diff.SECRET_DIGEST_ANNOTATION == SECRET_DIGEST_ANNOTATION
