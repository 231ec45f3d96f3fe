"""``langop-infra render`` on the shipped stacks, as a user and as CI run it.

The stacks are rendered through ``langop_infra.cli.main`` in-process (and once as a real
process), the YAML is parsed back, and the environments' differences are checked on the
objects themselves.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import runpy
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra._errors import REDACTED
from langop_infra.cli.main import main
from langop_infra.offline._mock_engine import run_program
from langop_infra.offline._render import OUT_MARKER, Project, dump_stream, dump_yaml, render_stack
from langop_infra.program.stack import KEYS
from tests.support.manifests import validate_manifests

ROOT = Path(__file__).parents[1]
STACKS = ("dev", "staging", "prod")
LOCATED = re.compile(r"^- \S+\.ya?ml:\d+:\d+: ")
# What a render's YAML stream opens with: what it is for, and where it came from.
BANNER = (
    "# Rendered offline by langop-infra from stack 'dev' (stacks/Pulumi.dev.yaml).\n"
    "# For review and diff, not for `kubectl apply`: Secret values are redacted as [secret],\n"
    "# and values known only at `pulumi up` show as [unknown].\n"
)
NAMESPACES = {"dev": "research-dev", "staging": "research-staging", "prod": "research"}
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
PROD_ONLY_POLICIES = {
    "researcher-egress",
    "triage-egress",
    "memory-egress",
    "docs-search-egress",
    "default-deny-ingress",
    "gateway-egress",
}
# The model gateway: LiteLLM with its own resource defaults.
GATEWAY_RESOURCES = {
    "requests": {"cpu": "100m", "memory": "384Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}


def stack_file(stack: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())


@cache
def cli(*argv: str) -> tuple[int, str, str]:
    """``langop-infra <argv>`` in-process: exit code, stdout, stderr (cached: it is pure)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def rendered(stack: str) -> list[dict[str, Any]]:
    code, out, err = cli("render", "--stack", stack, "--project-dir", str(ROOT))
    assert (code, err) == (0, ""), err
    return [doc for doc in yaml.safe_load_all(out) if doc is not None]


def objects(stack: str, kind: str) -> dict[str, dict[str, Any]]:
    return {m["metadata"]["name"]: m for m in rendered(stack) if m["kind"] == kind}


def containers(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    pod = deployment["spec"]["template"]["spec"]
    return [*pod.get("initContainers", []), *pod["containers"]]


def container(deployment: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in containers(deployment) if c["name"] == name)


def render_with(tmp_path: Path, config: Any, capsys: pytest.CaptureFixture[str]) -> tuple:
    """``render --config`` on a stack file holding ``config`` (a dict or raw YAML text)."""
    path = tmp_path / "Pulumi.broken.yaml"
    text = (
        config if isinstance(config, str) else yaml.safe_dump({"config": config}, sort_keys=False)
    )
    path.write_text(text)
    code = main(["render", "--config", str(path), "--project-dir", str(ROOT)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, path


def dev_config() -> dict[str, Any]:
    return stack_file("dev")["config"]


# --- render --stack dev ------------------------------------------------------------------------


def test_render_dev_prints_every_object_and_each_is_valid(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["render", "--stack", "dev", "--project-dir", str(ROOT)])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err == ""
    banner, stream = captured.out.split("---\n", 1)
    assert banner == BANNER
    assert stream.startswith("apiVersion: v1\nkind: Namespace\n")
    manifests = [d for d in yaml.safe_load_all(captured.out) if d is not None]
    validate_manifests(manifests)
    found = {(m["kind"], m["metadata"]["name"]) for m in manifests}
    assert found == {
        ("Namespace", "research-dev"),
        ("Secret", "search-credentials"),
        ("Secret", "ticketing-token"),
        ("ConfigMap", "researcher-config"),
        ("ConfigMap", "triage-config"),
        ("ConfigMap", "gateway-config"),
        ("PersistentVolumeClaim", "memory-data"),
        ("Service", "memory"),
        ("Service", "docs-search"),
        ("Deployment", "memory"),
        ("Deployment", "docs-search"),
        ("Deployment", "researcher"),
        ("Deployment", "triage"),
        ("Service", "gateway"),
        ("Deployment", "gateway"),
        ("NetworkPolicy", "memory-ingress"),
        ("NetworkPolicy", "docs-search-ingress"),
        ("NetworkPolicy", "researcher-ingress"),
        ("NetworkPolicy", "triage-ingress"),
        ("NetworkPolicy", "gateway-ingress"),
        # A2A, a scheduled agent and a managed memory (#38)
        ("ConfigMap", "researcher-a2a-card"),
        ("Service", "researcher"),
        ("NetworkPolicy", "researcher-a2a-ingress"),
        ("ConfigMap", "morning-digest-config"),
        ("CronJob", "morning-digest"),
        ("NetworkPolicy", "morning-digest-ingress"),
        ("PersistentVolumeClaim", "team-notes-data"),
        ("Service", "team-notes"),
        ("Deployment", "team-notes"),
        ("NetworkPolicy", "team-notes-ingress"),
    }
    assert len(manifests) == len(found)
    # The sidecar tool runs inside the researcher's pod (a native sidecar), not on its own.
    researcher = next(
        m for m in manifests if m["metadata"]["name"] == "researcher" and m["kind"] == "Deployment"
    )
    assert [c["name"] for c in containers(researcher)] == ["workspace-files", "researcher"]
    assert captured.out == cli("render", "--stack", "dev", "--project-dir", str(ROOT))[1]


def test_render_as_a_process_from_the_repository_root() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "langop_infra.cli", "render", "--stack", "dev"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Shutdown noise of leaked event loops (see the test below) is the only stderr tolerated.
    assert done.stderr == "" or done.stderr.startswith(LOOP_NOISE), done.stderr
    # Same bytes as in-process: the default --project-dir is the current directory.
    assert done.stdout == cli("render", "--stack", "dev", "--project-dir", str(ROOT))[1]


LOOP_NOISE = "Exception ignored in: <function BaseEventLoop.__del__"
OPEN_LOOPS = """
import asyncio, gc, sys
from langop_infra.cli import main
code = main(["render", "--stack", "dev", "--output-dir", sys.argv[1]])
gc.collect()
loops = [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop)]
print(code, sum(not loop.is_closed() for loop in loops))
"""


def test_a_render_leaves_no_event_loop_open(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_LOOPS, str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.split() == ["0", "0"], done.stderr


def test_rendering_twice_gives_identical_bytes() -> None:
    first = cli("render", "--stack", "dev", "--project-dir", str(ROOT))
    cli.cache_clear()
    second = cli("render", "--stack", "dev", "--project-dir", str(ROOT))
    assert first == second
    assert first[1].count("\n---\n") == 30  # the banner, then 30 objects


def test_a_render_discovers_the_project_once(monkeypatch: pytest.MonkeyPatch) -> None:
    found: list[Path] = []
    real = Project.find.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Project], start: str | Path = ".") -> Project:
        found.append(Path(start))
        return real(cls, start)

    monkeypatch.setattr(Project, "find", classmethod(counting))
    code, out, _ = cli.__wrapped__("render", "--stack", "dev", "--project-dir", str(ROOT))
    assert code == 0 and "kind: Deployment" in out
    assert found == [ROOT]


def test_integral_numbers_stay_integers() -> None:
    deployment = objects("prod", "Deployment")["docs-search"]
    assert type(deployment["spec"]["replicas"]) is int
    port = container(deployment, "docs-search")["ports"][0]["containerPort"]
    assert (type(port), port) == (int, 9090)
    assert "9090.0" not in cli("render", "--stack", "prod", "--project-dir", str(ROOT))[1]


def test_dev_secret_values_never_appear() -> None:
    secrets = dev_config()["langop-infra:secrets"]
    values = [v for keys in secrets.values() for v in keys.values()]
    assert values == ["dev-search-token-not-for-prod", "dev-ticketing-token-not-for-prod"]
    _, out, err = cli("render", "--stack", "dev", "--project-dir", str(ROOT))
    for value in values:
        assert value not in out and value not in err
    rendered_secrets = objects("dev", "Secret")
    assert set(rendered_secrets) == set(secrets)
    for name, secret in rendered_secrets.items():
        assert secret["stringData"] == dict.fromkeys(secrets[name], REDACTED)
    assert out.count(f"'{REDACTED}'") == 2
    # The secret reaches the agent only through a secretKeyRef.
    env = {
        e["name"]: e
        for e in container(objects("dev", "Deployment")["researcher"], "researcher")["env"]
    }
    assert env["ARK_MCP_WEB_SEARCH_HEADER_AUTHORIZATION"] == {
        "name": "ARK_MCP_WEB_SEARCH_HEADER_AUTHORIZATION",
        "valueFrom": {"secretKeyRef": {"name": "search-credentials", "key": "token"}},
    }
    # Nor does it leak into the stack's exports.
    outputs = render_stack(ROOT, stack="dev").outputs
    for value in values:
        assert value not in repr(outputs)


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_encrypted_secure_values_are_redacted(stack: str) -> None:
    ciphertexts = [
        v["secure"]
        for keys in stack_file(stack)["config"]["langop-infra:secrets"].values()
        for v in keys.values()
    ]
    # prod also holds the model gateway's master key, an agent's own gateway key and two
    # providers' API keys.
    assert len(ciphertexts) == {"staging": 2, "prod": 6}[stack]
    out = cli("render", "--stack", stack, "--project-dir", str(ROOT))[1]
    for ciphertext in ciphertexts:
        assert ciphertext not in out
    for secret in objects(stack, "Secret").values():
        assert set(secret["stringData"].values()) == {REDACTED}


# --- the environments -------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_renders_valid_objects_in_its_own_namespace(stack: str) -> None:
    manifests = rendered(stack)
    validate_manifests(manifests)
    namespace = NAMESPACES[stack]
    assert objects(stack, "Namespace").keys() == {namespace}
    for m in manifests:
        if m["kind"] != "Namespace":
            assert m["metadata"]["namespace"] == namespace, m["metadata"]
        assert m["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "langop-infra"
        assert m["metadata"]["labels"]["app.kubernetes.io/part-of"] == "research-assistant"
    assert len(set(NAMESPACES.values())) == len(STACKS)


def test_every_image_is_pinned_by_digest() -> None:
    for stack in STACKS:
        images = [c["image"] for d in objects(stack, "Deployment").values() for c in containers(d)]
        cron = objects(stack, "CronJob").values()
        images += [
            c["image"]
            for j in cron
            for c in j["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
        ]
        # memory, docs-search, researcher + sidecar, triage; and the model gateway but in staging;
        # dev: the team-notes memory and the morning-digest CronJob too
        assert len(images) == {"staging": 5, "dev": 8}.get(stack, 6)
        assert all(DIGEST.search(image) for image in images), (stack, images)


@pytest.mark.parametrize(
    ("stack", "replicas"),
    [
        (
            "dev",
            {
                **{"memory": 1, "docs-search": 1, "researcher": 1, "triage": 1, "gateway": 1},
                "team-notes": 1,
            },
        ),
        ("staging", {"memory": 1, "docs-search": 2, "researcher": 2, "triage": 1}),
        ("prod", {"memory": 1, "docs-search": 3, "researcher": 3, "triage": 2, "gateway": 2}),
    ],
)
def test_replicas_per_environment(stack: str, replicas: dict[str, int]) -> None:
    deployments = objects(stack, "Deployment")
    assert {name: d["spec"]["replicas"] for name, d in deployments.items()} == replicas


@pytest.mark.parametrize(
    ("stack", "pull_policy", "default", "docs_search"),
    [
        (
            "dev",
            "Always",
            {
                "requests": {"cpu": "50m", "memory": "64Mi"},
                "limits": {"cpu": "500m", "memory": "256Mi"},
            },
            None,
        ),
        (
            "staging",
            "IfNotPresent",
            {
                "requests": {"cpu": "50m", "memory": "64Mi"},
                "limits": {"cpu": "500m", "memory": "256Mi"},
            },
            None,
        ),
        (
            "prod",
            "IfNotPresent",
            {
                "requests": {"cpu": "250m", "memory": "256Mi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            },
            {
                "requests": {"cpu": "500m", "memory": "512Mi"},
                "limits": {"cpu": "2", "memory": "2Gi"},
            },
        ),
    ],
)
def test_resources_and_pull_policy_per_environment(
    stack: str, pull_policy: str, default: dict, docs_search: dict | None
) -> None:
    deployments = objects(stack, "Deployment")
    for name, deployment in deployments.items():
        for c in containers(deployment):
            assert c["imagePullPolicy"] == pull_policy, (name, c["name"])
            expected = docs_search if c["name"] == "docs-search" and docs_search else default
            expected = GATEWAY_RESOURCES if c["name"] == "gateway" else expected
            assert c["resources"] == expected, (name, c["name"])
    claim = objects(stack, "PersistentVolumeClaim")["memory-data"]["spec"]
    if stack == "prod":
        assert claim["resources"]["requests"]["storage"] == "10Gi"
        assert claim["storageClassName"] == "ssd"
    else:
        assert claim["resources"]["requests"]["storage"] == "1Gi"
        assert "storageClassName" not in claim


@pytest.mark.parametrize("stack", STACKS)
def test_network_policies_per_environment(stack: str) -> None:
    policies = objects(stack, "NetworkPolicy")
    # Agents declare no ports, so their pods admit no ingress.
    expected = {"memory-ingress", "docs-search-ingress", "researcher-ingress", "triage-ingress"}
    if stack != "staging":
        expected.add("gateway-ingress")
    if stack == "prod":
        expected |= PROD_ONLY_POLICIES
    if stack == "dev":  # an A2A agent, a scheduled agent, a managed memory (#38)
        expected |= {"researcher-a2a-ingress", "morning-digest-ingress", "team-notes-ingress"}
    assert set(policies) == expected
    if stack != "prod":
        return
    assert policies["default-deny-ingress"]["spec"] == {
        "podSelector": {},
        "policyTypes": ["Ingress"],
    }
    egress = policies["researcher-egress"]["spec"]
    assert egress["podSelector"] == {"matchLabels": {"langop.io/agent": "researcher"}}
    assert egress["policyTypes"] == ["Egress"]
    external = [r for r in egress["egress"] if "ipBlock" in r["to"][0]]
    assert [(r["to"][0]["ipBlock"]["cidr"], r["ports"]) for r in external] == [
        ("203.0.113.0/24", [{"port": 443, "protocol": "TCP"}]),
        ("198.51.100.0/24", [{"port": 443, "protocol": "TCP"}]),
    ]
    # triage's docs-search reference is disabled: its egress names memory only.
    triage = policies["triage-egress"]["spec"]["egress"]
    # (and the OTLP collector, which admits its namespace rather than named pods)
    tools = [
        r["to"][0]["podSelector"]["matchLabels"] for r in triage[1:] if "podSelector" in r["to"][0]
    ]
    assert tools == [{"langop.io/tool": "memory"}]


# --- --out DIR --------------------------------------------------------------------------------


def test_out_writes_one_file_per_object(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "render"
    assert (
        main(["render", "--stack", "dev", "--project-dir", str(ROOT), "--output-dir", str(out)])
        == 0
    )
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"wrote 30 objects under {out}\n"
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml"))
    manifests = rendered("dev")
    assert len(files) == len(manifests) == 30
    assert "_cluster/namespace-research-dev.yaml" in files
    assert "research-dev/deployment-researcher.yaml" in files
    assert "research-dev/networkpolicy-memory-ingress.yaml" in files
    for manifest in manifests:
        meta = manifest["metadata"]
        folder = meta.get("namespace", "_cluster")
        path = out / folder / f"{manifest['kind'].lower()}-{meta['name']}.yaml"
        assert path.read_text() == dump_yaml(manifest)
    assert (out / OUT_MARKER).is_file()


def test_out_replaces_a_previous_render(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "render"
    args = ["render", "--project-dir", str(ROOT), "--output-dir", str(out)]
    assert main([*args, "--stack", "prod"]) == 0
    assert (out / "research" / "networkpolicy-default-deny-ingress.yaml").is_file()
    assert main([*args, "--stack", "dev"]) == 0
    capsys.readouterr()
    # Objects of the previous render do not linger.
    assert not (out / "research").exists() or not list((out / "research").rglob("*.yaml"))
    assert len(list(out.rglob("*.yaml"))) == 30


def test_out_refuses_a_folder_that_is_not_a_previous_render(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.yaml").write_text("keep: me\n")
    code = main(["render", "--stack", "dev", "--project-dir", str(ROOT), "--output-dir", str(out)])
    captured = capsys.readouterr()
    assert code == 2
    assert str(out) in captured.err
    assert "not empty and not a previous render" in captured.err
    assert captured.out == ""
    assert [p.name for p in out.iterdir()] == ["notes.yaml"]
    assert (out / "notes.yaml").read_text() == "keep: me\n"


def test_out_pointing_at_a_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    target = tmp_path / "render.yaml"
    target.write_text("")
    code = main(
        ["render", "--stack", "dev", "--project-dir", str(ROOT), "--output-dir", str(target)]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert f"- {target}: " in captured.err
    assert "Traceback" not in captured.err
    assert target.read_text() == ""


# --- invalid config ---------------------------------------------------------------------------


def with_change(change: Any) -> dict[str, Any]:
    config = dev_config()
    change(config)
    return config


CONFIG_ERRORS = {
    "wrong type": (
        lambda c: c["langop-infra:tools"][0].update(port="eighty"),
        "langop-infra:tools[0].port",
        "expected a whole number, got a string 'eighty'",
    ),
    "unknown key in a tool": (
        lambda c: c["langop-infra:tools"][0].update(imagee="ghcr.io/acme/x:1"),
        "langop-infra:tools[0].imagee",
        "did you mean 'image'?",
    ),
    "unknown tool reference": (
        lambda c: c["langop-infra:agents"][0]["tools"][0].update(name="memroy"),
        "langop-infra:agents[0].tools[0].name",
        "no tool named 'memroy'",
    ),
    "unknown top-level key": (
        lambda c: c.update({"langop-infra:agnets": []}),
        "langop-infra:agnets",
        "did you mean langop-infra:agents?",
    ),
    "secure value outside secrets": (
        lambda c: c["langop-infra:tools"][1]["env"].update(TOKEN={"secure": "v1:c1pher"}),
        "langop-infra:tools[1].env.TOKEN",
        "keep secrets under langop-infra:secrets",
    ),
}


@pytest.mark.parametrize("case", CONFIG_ERRORS)
def test_invalid_config_exits_2_naming_the_config_path(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    change, path, hint = CONFIG_ERRORS[case]
    code, out, err, _ = render_with(tmp_path, with_change(change), capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("langop-infra render: error: invalid configuration:")
    # Each problem line opens with where its key is in the file: `<file>:<line>:<column>: `.
    lines = [LOCATED.sub("- ", line.strip()) for line in err.splitlines()]
    problem = next((line for line in lines if line.startswith(f"- {path}: ")), None)
    assert problem is not None, err
    assert hint in problem
    assert "c1pher" not in err


def test_all_tool_and_agent_problems_are_reported_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    def change(config: dict[str, Any]) -> None:
        config["langop-infra:agents"][0]["replicas"] = "many"
        config["langop-infra:agents"][1]["tools"][0]["name"] = "nope"

    code, _, err, _ = render_with(tmp_path, with_change(change), capsys)
    assert code == 2
    assert "2 problems" in err
    assert ": langop-infra:agents[0].replicas: " in err
    assert ": langop-infra:agents[1].tools[0].name: no tool named 'nope'" in err


def test_an_invalid_default_does_not_hide_reference_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    def change(config: dict[str, Any]) -> None:
        config["langop-infra:defaults"]["egress"] = "closed"
        config["langop-infra:agents"][1]["tools"][0]["name"] = "nope"

    code, _, err, _ = render_with(tmp_path, with_change(change), capsys)
    assert code == 2
    assert ": langop-infra:defaults.egress: " in err
    assert ": langop-infra:agents[1].tools[0].name: " in err


def test_an_unknown_key_does_not_hide_spec_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    def change(config: dict[str, Any]) -> None:
        config["langop-infra:agnets"] = []
        config["langop-infra:tools"][1]["port"] = "eighty"

    code, _, err, _ = render_with(tmp_path, with_change(change), capsys)
    assert code == 2
    assert ": langop-infra:agnets: " in err
    assert ": langop-infra:tools[1].port: " in err


def test_malformed_yaml_exits_2_naming_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    text = "config:\n  langop-infra:namespace: research-dev\n  langop-infra:tools: [oops\n"
    code, out, err, path = render_with(tmp_path, text, capsys)
    assert code == 2
    assert out == ""
    assert re.search(rf"- {re.escape(str(path))}:\d+:\d+: not valid YAML: ", err)
    assert "<unicode string>" not in err


def test_unknown_stack_exits_2_naming_the_missing_file(capsys: pytest.CaptureFixture) -> None:
    assert main(["render", "--stack", "qa", "--project-dir", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert str(ROOT / "stacks" / "Pulumi.qa.yaml") in err
    assert "no config for stack 'qa'" in err


# --- the stack program is the one `pulumi up` runs -------------------------------------------


def test_render_runs_the_projects_entry_point_with_the_stack_config_keys() -> None:
    project = Project.load(ROOT)
    assert project.name == yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["name"]
    assert project.main == ROOT / "__main__.py"
    assert project.stack_config_dir == ROOT / "stacks"
    assert "from langop_infra.program.stack import main" in project.main.read_text()
    for stack in STACKS:
        keys = {k for k in stack_file(stack)["config"] if k.startswith(f"{project.name}:")}
        assert keys <= {f"{project.name}:{key}" for key in KEYS}, stack


def test_render_executes_the_project_entry_point_file(tmp_path: Path) -> None:
    """A project whose ``__main__.py`` exports something extra: render must show it, so it
    runs the file ``pulumi up`` would run, not a copy of the program."""
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(
        (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    )
    (tmp_path / "__main__.py").write_text(
        (ROOT / "__main__.py").read_text() + "\nimport pulumi\npulumi.export('entry', __file__)\n"
    )
    run = render_stack(tmp_path, stack="dev")
    assert run.outputs["entry"] == str(tmp_path / "__main__.py")
    assert run.outputs["namespace"] == "research-dev"


@pytest.mark.parametrize("stack", STACKS)
def test_stack_exports_every_tool_endpoint_and_agent_config(stack: str) -> None:
    config = stack_file(stack)["config"]
    namespace = NAMESPACES[stack]
    outputs = render_stack(ROOT, stack=stack).outputs
    assert outputs["namespace"] == namespace
    endpoints = {
        "memory": (f"http://memory.{namespace}.svc.cluster.local:8080", "service"),
        "docs-search": (f"http://docs-search.{namespace}.svc.cluster.local:9090", "service"),
        "workspace-files": ("http://localhost:8181", "sidecar"),
    }
    memories = [m["name"] for m in config.get("langop-infra:memories", [])]
    for memory in memories:  # a managed memory is a tool (#38)
        endpoints[memory] = (f"http://{memory}.{namespace}.svc.cluster.local:8080", "service")
    assert outputs["tools"].keys() == endpoints.keys()
    for name, (endpoint, mode) in endpoints.items():
        exported = outputs["tools"][name]
        assert (exported["endpoint"], exported["deploymentMode"]) == (endpoint, mode)
        # Schema sync's view of the tool; offline it is never contacted.
        assert {"phase", "toolNames"} <= exported.keys()
    assert set(outputs["tools"]) == {t["name"] for t in config["langop-infra:tools"]} | set(
        memories
    )
    assert set(outputs["agents"]) == {a["name"] for a in config["langop-infra:agents"]}
    config_maps = objects(stack, "ConfigMap")
    for agent in config["langop-infra:agents"]:
        exported = outputs["agents"][agent["name"]]
        # The exported config is exactly what the agent's pod mounts.
        assert (
            exported["configYaml"] == config_maps[f"{agent['name']}-config"]["data"]["config.yaml"]
        )
        enabled = [r["name"] for r in agent.get("tools", []) if r.get("enabled", True)]
        enabled += [agent["memory"]["name"]] if "memory" in agent else []
        document = yaml.safe_load(exported["configYaml"])
        assert list(document["tools"]) == enabled
        assert exported["mcpServers"] == ",".join(
            outputs["tools"][name]["endpoint"] for name in enabled
        )


def test_render_matches_the_config_encoding_of_the_pulumi_cli() -> None:
    config = stack_file("dev")["config"]
    assert not any("secure" in json.dumps(v) for v in config.values())
    # What `pulumi up` hands the program: object values as Go's json.Marshal writes them.
    as_cli = {
        k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in config.items()
    }
    run = run_program(
        lambda: runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__"),
        project="langop-infra",
        stack="dev",
        config=as_cli,
        preview=True,  # as render runs it (a run as `pulumi up` would know the secret digest)
    )
    assert (
        BANNER + dump_stream(run.manifests())
        == cli("render", "--stack", "dev", "--project-dir", str(ROOT))[1]
    )


@pytest.mark.parametrize("stack", STACKS)
def test_webhook_input_schema_is_as_written(stack: str) -> None:
    document = yaml.safe_load(
        objects(stack, "ConfigMap")["researcher-config"]["data"]["config.yaml"]
    )
    (webhook,) = document["webhookTools"]
    # A JSON string, as ark's runtime reads it.
    assert json.loads(webhook["inputSchema"])["properties"]["ticketId"] == {
        "type": "string",
        "description": "The ticket's id, e.g. SUP-1234",
    }


def test_the_python_api_example_program_runs_under_the_mock_engine() -> None:
    """examples/stack_program.py, the Python API path, registers what its docstring says."""
    import runpy

    from langop_infra.offline._mock_engine import run_program

    run = run_program(
        lambda: runpy.run_path(str(ROOT / "examples" / "stack_program.py")),
        config={"langop-infra:namespace": "research-dev"},
    )
    manifests = run.manifests()
    validate_manifests(manifests)
    names = {(m["kind"], m["metadata"]["name"]) for m in manifests}
    assert {
        ("Deployment", "memory"),
        ("Deployment", "docs-search"),
        ("Deployment", "researcher"),
        ("Deployment", "triage"),
        ("Secret", "researcher-env"),
    } <= names
    assert ("Deployment", "workspace-files") not in names
    assert run.outputs["memory_endpoint"] == "http://memory.research-dev.svc.cluster.local:8080"
