"""Another provider's computed outputs (issue 35 §1): a user's project outside this repository
declares a pulumi_random-style resource with no `random` plugin anywhere and feeds its
``result`` into a LanguageTool's env. Whatever the provider would compute (``result``, the id,
a Kubernetes object's ``status``) stays unknown offline, in a render, in ``outputs``, as
`pulumi up` registers it and under ``langop_infra.testing``; an input echoed back stays known."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.runtime.sync_await import _sync_await

from langop_infra.offline._engine_values import UNKNOWN_MARKER
from langop_infra.offline._mock_engine import run_program
from tests.support.user_project import make_project, run_cli

# As pulumi_random's generated SDK declares it: `result` is an output only (None as input).
RANDOM_PASSWORD = """
class RandomPassword(pulumi.CustomResource):
    result: pulumi.Output[str]
    length: pulumi.Output[int]

    def __init__(self, name, length):
        super().__init__(
            "random:index/randomPassword:RandomPassword", name, {"length": length, "result": None}
        )
"""

_scope: dict[str, Any] = {"pulumi": pulumi, "__name__": __name__}
exec(RANDOM_PASSWORD, _scope)  # the same class here, for the engine's own runs below
RandomPassword = _scope["RandomPassword"]
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64

PROGRAM = f"""
import pulumi
import pulumi_kubernetes as k8s
from langop_infra import LanguageTool
{RANDOM_PASSWORD}
password = RandomPassword("db-password", length=24)
ns = k8s.core.v1.Namespace("apps", metadata={{"name": "apps"}})
LanguageTool("memory", image="{IMAGE}", namespace="apps",
             env={{"DB_PASSWORD": password.result, "NS_PHASE": ns.status.phase}})
pulumi.export("password", password.result)
pulumi.export("length", password.length)
pulumi.export("status", ns.status)
"""


def env_of(manifest: dict[str, Any]) -> dict[str, Any]:
    [container] = manifest["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value") for e in container["env"]}


def test_render_shows_another_providers_result_as_unknown(tmp_path: Path) -> None:
    code, out, err = run_cli(make_project(tmp_path / "shop", PROGRAM), "render", "--stack", "dev")
    assert code == 0, err
    [deployment] = [d for d in yaml.safe_load_all(out) if d and d["kind"] == "Deployment"]
    assert env_of(deployment) == {
        "PORT": "8080",
        "DB_PASSWORD": UNKNOWN_MARKER,
        "NS_PHASE": UNKNOWN_MARKER,
    }
    assert "env[1].value is known only at `pulumi up`" in err


def test_outputs_show_computed_values_unknown_and_inputs_known(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop", PROGRAM)
    code, out, err = run_cli(project, "outputs", "-s", "dev", "-o", "json")
    assert code == 0, err
    assert json.loads(out) == {
        "password": UNKNOWN_MARKER,
        "length": 24,
        "status": UNKNOWN_MARKER,
    }


def test_as_pulumi_up_registers_the_env_is_accepted_and_stays_unknown() -> None:
    """preview=False: the SDK reads an output the answer leaves out as None unless the
    engine says the resource's outputs are computed; today's bug was "got None"."""
    seen: dict[str, Any] = {}

    def program() -> None:
        from langop_infra import LanguageTool

        password = RandomPassword("db-password", length=24)
        LanguageTool("memory", image=IMAGE, namespace="apps", env={"PW": password.result})
        seen.update(id=password.id, result=password.result, length=password.length)
        pulumi.export("password", password.result)

    run = run_program(program, preview=False)
    known = {k: _sync_await(v.is_known()) for k, v in seen.items()}
    assert known == {"id": True, "result": False, "length": True}
    assert _sync_await(seen["length"].future()) == 24
    [deployment] = [m for m in run.manifests() if m["kind"] == "Deployment"]
    assert env_of(deployment) == {"PORT": "8080", "PW": UNKNOWN_MARKER}
    assert run.outputs == {"password": UNKNOWN_MARKER}


USER_TEST = f"""
import pulumi
import pulumi_kubernetes as k8s

from langop_infra import LanguageTool
{RANDOM_PASSWORD}

@pulumi.runtime.test
def test_computed_outputs_are_unknown(langop_mocks):
    password = RandomPassword("db-password", length=24)
    ns = k8s.core.v1.Namespace("apps", metadata={{"name": "apps"}})
    memory = LanguageTool("memory", image="{IMAGE}", namespace="apps",
                          env={{"PW": password.result}})

    def check(args):
        result_known, length, status_known, uid, _ = args
        assert (result_known, length, status_known) == (False, 24, False)
        assert uid  # the kubernetes provider's uid, known at `pulumi up`
        [_, env] = langop_mocks.find("kubernetes:apps/v1:Deployment", "memory")["spec"][
            "template"]["spec"]["containers"][0]["env"]
        assert env["name"] == "PW" and isinstance(env["value"], pulumi.output.Unknown)
        print("CHECKED")

    return pulumi.Output.all(
        password.result.is_known(), password.length, ns.status.is_known(), ns.metadata.uid,
        memory.deployment.id,
    ).apply(check)
"""


@pytest.mark.slow
def test_langop_mocks_leave_computed_outputs_unknown_never_none(tmp_path: Path) -> None:
    folder = tmp_path / "shop-tests"
    folder.mkdir()
    (folder / "test_shop.py").write_text(textwrap.dedent(USER_TEST))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CHECKED" in done.stdout and "1 passed" in done.stdout
