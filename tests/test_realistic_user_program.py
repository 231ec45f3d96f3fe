"""Issue 51's "Done when": a realistic program (tests/user_program/realistic_program.py), in a
project outside the repository, renders, validates, graphs and lists its outputs as written:
exit 0, no traceback, the credential nowhere in plain text, and the objects the same program
registers with ``namespace="apps"`` written in place of the Namespace's Output."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.user_project import make_project, run_cli

PROGRAM = Path(__file__).resolve().parent / "user_program" / "realistic_program.py"
CANARY = "cnry-weather-token-51d9"
CONFIG = f"config:\n  shop:weatherToken: {CANARY}\n"
PLAIN = "ns.metadata.name,\n"


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The program as written, and the same with every namespace the plain string."""
    base = tmp_path_factory.mktemp("user")
    text = PROGRAM.read_text()
    plain = text.replace("namespace=ns.metadata.name", 'namespace="apps"')
    assert plain != text
    return make_project(base / "shop", text, CONFIG), make_project(base / "plain", plain, CONFIG)


def cli(project: Path, command: str) -> str:
    code, out, err = run_cli(project, command, "--stack", "dev")
    assert code == 0, (command, err[-3000:])
    for text in (out, err):
        assert "Traceback" not in text and "internal error" not in text, (command, text)
        assert CANARY not in text, command
        assert "placeholder" not in text and "stand-in" not in text, command
    return out


def test_it_renders_the_objects_of_the_plain_namespace_program(projects: tuple[Path, Path]) -> None:
    given, plain = projects
    rendered = cli(given, "render")
    assert rendered == cli(plain, "render")
    objects = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(rendered) if d}
    assert {
        ("Deployment", "gateway"),
        ("Service", "gateway"),
        ("Deployment", "planner"),
        ("Deployment", "researcher"),
        ("CronJob", "nightly"),
        ("Deployment", "notes"),
        ("Secret", "weather.http-tool"),
        ("ConfigMap", "weather.http-tool"),
        ("NetworkPolicy", "researcher-a2a-ingress"),
    } <= objects
    planner = next(
        d
        for d in yaml.safe_load_all(rendered)
        if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "planner"
    )
    env = {e["name"]: e for e in planner["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["MODEL_ENDPOINT"]["value"] == "http://gateway.apps.svc.cluster.local:8000"
    assert "http://researcher.apps.svc.cluster.local:8080/" in env["A2A_PEERS"]["value"]
    assert env["AGENT_MEMORY_ENDPOINT"]["value"] == "http://notes.apps.svc.cluster.local:8080"
    assert env["AGENT_WEBHOOK_WEATHER_AUTH"]["valueFrom"]["secretKeyRef"] == {
        "name": "weather.http-tool",
        "key": "credential",
    }
    researcher = next(
        d
        for d in yaml.safe_load_all(rendered)
        if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "researcher"
    )
    # The unknown label is unknown where it is, and only there.
    assert researcher["metadata"]["labels"]["run"] == "[unknown]"
    assert researcher["metadata"]["labels"]["app.kubernetes.io/part-of"] == "apps"


def test_it_validates(projects: tuple[Path, Path]) -> None:
    cli(projects[0], "validate")


def test_it_graphs_every_edge(projects: tuple[Path, Path]) -> None:
    graph = cli(projects[0], "graph")
    planner = graph[graph.index("agent planner") : graph.index("agent researcher")]
    assert "may reach gateway apps/gateway:8000" in planner
    assert "may reach tool apps/notes:8080" in planner
    assert "may reach agent apps/researcher:8080" in planner
    assert "may reach sidecar files:8080 (localhost)" in planner
    assert "may reach external webhook weather (weather.example.com):443" in planner
    assert "agent nightly\n  may reach gateway apps/gateway:8000" in graph


def test_it_lists_its_outputs(projects: tuple[Path, Path]) -> None:
    outputs = yaml.safe_load(cli(projects[0], "outputs"))
    assert outputs["gateway"] == "http://gateway.apps.svc.cluster.local:8000"
    assert outputs["memory"] == "http://notes.apps.svc.cluster.local:8080"
    assert outputs["plannerServers"] == (
        "http://localhost:8080,http://notes.apps.svc.cluster.local:8080"
    )
