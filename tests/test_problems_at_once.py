"""Every problem of a stack file or a Python spec in one run: checks across fields and items
run on the parts that validated, each problem at its own key, sorted by place, with a kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langop_infra.cli.main import main
from langop_infra.config.checks._validation import parse_agent, parse_cluster
from langop_infra.core.problems import SpecError

ROOT = Path(__file__).resolve().parents[1]
DIGEST = "@sha256:" + "0" * 64
STACK = f"""config:
  langop-infra:namespace: apps
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory-mcp{DIGEST}
    - name: memory
      image: ghcr.io/acme/memory-mcp{DIGEST}
      port: 0
      env:
        TOKEN: {{secure: v1:abc:def}}
        A: b
      secretEnv: {{A: c}}
      egress: open
      egressTo: [{{cidr: 10.0.0.0/8}}]
  langop-infra:agents:
    - name: a
      image: ghcr.io/acme/agent{DIGEST}
      egressTo: [{{ports: [{{port: 443}}]}}]
      bogus: 1
      tools: [{{name: memry}}]
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(STACK)
    code = main(["validate", "--config", str(path), "--project-dir", str(ROOT), *extra])
    captured = capsys.readouterr()
    return code, captured.out if extra else captured.err


def test_a_stack_file_reports_every_problem_at_its_key_in_file_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = validate(tmp_path, capsys, "-o", "json")
    assert code == 2
    found = [
        (p["line"], p["column"], p["path"], p["kind"], p["message"])
        for p in json.loads(out)["problems"]
    ]
    p = "langop-infra:"
    assert found == [
        (
            6,
            7,
            f"{p}tools[1].name",
            "langop_duplicate_name",
            "duplicate tool name 'memory' in namespace 'apps'; tool names must be unique in a "
            "namespace (first at tools[0].name)",
        ),
        (
            8,
            7,
            f"{p}tools[1].port",
            "greater_than_equal",
            "must be at least 1, got 0; change the value",
        ),
        (
            10,
            9,
            f"{p}tools[1].env.TOKEN",
            "langop_secure_value",
            f"holds a secure value; keep secrets under {p}secrets and reference them with "
            "secretKeyRef",
        ),
        (
            12,
            19,
            f"{p}tools[1].secretEnv.A",
            "langop_duplicate_env",
            "A set in both env and secretEnv; keep one",
        ),
        (
            14,
            7,
            f"{p}tools[1].egressTo",
            "langop_egress_to_unused",
            "egressTo only applies with egress: restricted; set it or remove egressTo",
        ),
        (
            18,
            18,
            f"{p}agents[0].egressTo[0]",
            "langop_peer_form",
            "a peer needs cidr (with optional except), or namespace and/or podLabels; give one "
            "of them",
        ),
        (
            19,
            7,
            f"{p}agents[0].bogus",
            "extra_forbidden",
            "unknown field; remove it or fix its spelling",
        ),
        (
            20,
            16,
            f"{p}agents[0].tools[0].name",
            "langop_unknown_reference",
            "no tool named 'memry' in this cluster (known: memory); did you mean 'memory'? "
            "Otherwise: declare it under tools, fix the name, or set enabled: false",
        ),
    ]


def test_a_duplicate_yaml_key_is_at_its_own_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text(
        "config:\n  langop-infra:namespace: a\n  langop-infra:tools:\n"
        "    - name: m\n      port: 1\n      port: 2\n"
    )
    code = main(["validate", "--config", str(path), "--project-dir", str(ROOT), "-o", "json"])
    found = json.loads(capsys.readouterr().out)["problems"]
    assert code == 2
    assert [(p["line"], p["column"], p["kind"]) for p in found] == [(6, 7, "langop_yaml_refused")]


def messages(exc: pytest.ExceptionInfo[SpecError]) -> list[str]:
    return [f"{p.path}: {p.message}" for p in exc.value.problems]


def test_an_agent_reports_duplicates_next_to_a_bad_field() -> None:
    with pytest.raises(SpecError) as exc:
        parse_agent(
            {
                "name": "a",
                "image": "ghcr.io/acme/agent:1",
                "tools": [{"name": "memory"}, {"name": "memory"}],
                "mcpServers": [{"url": "ftp://x"}],
            }
        )
    found = messages(exc)
    assert len(found) == 3
    assert found[-1] == (
        "tools[1]: duplicate tool reference 'memory'; reference each tool once (first at tools[0])"
    )
    assert found[0].startswith("mcpServers[0].")


def test_a_cluster_reports_a_duplicate_tool_next_to_a_bad_port() -> None:
    with pytest.raises(SpecError) as exc:
        parse_cluster(
            {
                "namespace": "apps",
                "tools": [
                    {"name": "memory", "image": "m:1", "deploymentMode": "sidecar"},
                    {"name": "memory", "image": "m:1", "port": 0, "deploymentMode": "sidecar"},
                ],
                "agents": [{"name": "a", "image": "a:1", "tools": [{"name": "memory"}]}],
            }
        )
    # The bad port is not read as the default 8080, so no sidecar port clash follows from it.
    assert messages(exc) == [
        "tools[1].port: must be at least 1, got 0; change the value",
        "tools[1].name: duplicate tool name 'memory' in namespace 'apps'; tool names must be "
        "unique in a namespace (first at tools[0].name)",
    ]


@pytest.mark.parametrize(
    ("given", "read"),
    [(1, "1"), (0.5, "0.5"), (1073741824, "1073741824"), (2.0, "2"), (1e21, "1" + "0" * 21)],
)
def test_a_number_is_a_quantity_as_kubernetes_reads_it(given: float, read: str) -> None:
    spec = parse_cluster(
        {
            "namespace": "apps",
            "tools": [{"name": "m", "image": "m:1", "resources": {"limits": {"cpu": given}}}],
        }
    )
    assert spec.tools[0].resources.limits.cpu == read


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (True, "expected a string, got True; write the value as such"),
        (-1, "'-1' is not a Kubernetes quantity such as '250m' or '256Mi'"),
        (float("inf"), "inf is not a Kubernetes quantity such as '250m'"),
    ],
)
def test_nonsense_is_still_no_quantity(given: object, message: str) -> None:
    with pytest.raises(SpecError) as exc:
        parse_cluster(
            {
                "namespace": "apps",
                "tools": [{"name": "m", "image": "m:1", "resources": {"limits": {"cpu": given}}}],
            }
        )
    assert messages(exc) == [f"tools[0].resources.limits.cpu: {message}"]


@pytest.mark.parametrize(
    ("given", "python", "yaml"),
    [
        (None, "got None", "got null None"),
        (True, "got True", "got true/false True"),
        (3, "got a number 3", "got a number 3"),
    ],
)
def test_a_value_of_the_wrong_type_is_worded_for_where_it_came_from(
    given: object, python: str, yaml: str
) -> None:
    from langop_infra.config._pydantic_errors import stack_wording

    document = {"namespace": "apps", "tools": [{"name": "m", "image": given}]}
    with pytest.raises(SpecError) as exc:
        parse_cluster(document)
    assert messages(exc) == [
        f"tools[0].image: expected a string, {python}; write the value as such"
    ]
    with stack_wording(), pytest.raises(SpecError) as exc:
        parse_cluster(document)
    assert messages(exc) == [
        f"tools[0].image: expected a string (quote it in YAML), {yaml}; write the value as such"
    ]


def test_a_misspelt_tool_of_a_language_agent_gets_a_did_you_mean() -> None:
    from langop_infra.components.agent import LanguageAgent
    from langop_infra.components.tool import LanguageTool
    from langop_infra.offline._mock_engine import run_program

    def program() -> None:
        LanguageTool("memory", namespace="apps", image=f"ghcr.io/acme/m{DIGEST}")
        LanguageTool("files", namespace="other", image=f"ghcr.io/acme/f{DIGEST}")
        LanguageAgent(
            "helper",
            namespace="apps",
            image=f"ghcr.io/acme/agent{DIGEST}",
            tools=[{"name": "memry"}, {"name": "filez"}],
        )

    with pytest.raises(SpecError) as exc:
        run_program(program)
    # 'files' is in another namespace: no suggestion from there.
    assert messages(exc) == [
        "tools[0].name: no LanguageTool 'memry' in namespace 'apps'; did you mean 'memory'? "
        "Otherwise: create it before the agent, pass the LanguageTool object itself, declare "
        "the tool in the same LanguageCluster, or set enabled: false",
        "tools[1].name: no LanguageTool 'filez' in namespace 'apps'; create it before the "
        "agent, pass the LanguageTool object itself, declare the tool in the same "
        "LanguageCluster, or set enabled: false",
    ]


UNPINNED = (
    "image 'ghcr.io/acme/memory-mcp:1.4.0' has no digest, so what runs can change without a "
    "change here; pin it as <image>@sha256:<digest> (docker buildx imagetools inspect <image> "
    "shows it), or set defaults.requireImageDigests: true to refuse unpinned images"
)
# What a Python component says: its keyword arguments are snake_case (issue 35).
UNPINNED_PY = UNPINNED.replace("requireImageDigests", "require_image_digests")


def test_python_components_warn_once_of_each_image_without_a_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a stack file's do; there the stack program warns under the config key, and its
    LanguageCluster does not warn again."""
    from langop_infra.components.agent import LanguageAgent
    from langop_infra.components.cluster import LanguageCluster
    from langop_infra.components.tool import LanguageTool
    from langop_infra.offline._mock_engine import ProgramRun, run_program

    run = ProgramRun()

    def program() -> None:
        LanguageTool("memory", namespace="apps", image="ghcr.io/acme/memory-mcp:1.4.0")
        LanguageAgent(
            "helper",
            namespace="apps",
            image="ghcr.io/acme/memory-mcp:1.4.0",
            tools=[{"name": "memory"}],
        )
        LanguageCluster(
            "c",
            {
                "namespace": "other",
                "tools": [{"name": "t", "image": "ghcr.io/acme/memory-mcp:1.4.0"}],
                "agents": [{"name": "a", "image": f"ghcr.io/acme/agent{DIGEST}"}],
            },
        )

    run_program(program, into=run)
    assert [w for w in run.warnings if "no digest" in w] == [
        f"LanguageTool 'memory': image: {UNPINNED_PY}",
        f"LanguageAgent 'helper': image: {UNPINNED_PY}",
        f"tools[0].image: {UNPINNED}",
    ]

    path = tmp_path / "Pulumi.qa.yaml"
    path.write_text(
        "config:\n  langop-infra:namespace: apps\n  langop-infra:tools:\n"
        "    - {name: memory, image: 'ghcr.io/acme/memory-mcp:1.4.0'}\n"
    )
    code = main(["validate", "--config", str(path), "--project-dir", str(ROOT), "-o", "json"])
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert code == 0
    assert [w for w in warnings if "no digest" in w] == [f"langop-infra:tools[0].image: {UNPINNED}"]
