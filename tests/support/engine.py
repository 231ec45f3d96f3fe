"""The real Pulumi engine, built from Go modules by tools/engine/build, run as a user runs it:
a project folder, a local file backend, the passphrase secrets provider, no downloads
(tools/engine/local.py sets that up for `tools/engine/pulumi` too)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.repo_tools import TOOLS, load

REPO = TOOLS.parent
local = load("engine/local")

# Bounds a hung run only: a cached prod `pulumi up` takes well under a minute here.
RUN_LIMIT = 900


@dataclass
class Engine:
    """The engine's binaries and one home (state, plugins) for a test session."""

    bin_dir: Path
    home: Path

    @property
    def env(self) -> dict[str, str]:
        return local.engine_environment(self.bin_dir, self.home)

    def run(
        self, cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``pulumi <args>`` in ``cwd``, non-interactive, without colour; output captured."""
        command = [str(self.bin_dir / "pulumi"), *args, "--non-interactive", "--color", "never"]
        done = subprocess.run(
            command,
            cwd=cwd,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=RUN_LIMIT,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"pulumi {' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
            )
        return done


def python_project(folder: Path, source: Path = REPO, stacks: tuple[str, ...] = ()) -> Path:
    """A copy of a Python Pulumi project (``Pulumi.yaml``, ``__main__.py``, stack files) whose
    virtualenv is the repository's own ``venv``, as an absolute path."""
    folder.mkdir(parents=True, exist_ok=True)
    project = yaml.safe_load((source / "Pulumi.yaml").read_text())
    project["runtime"]["options"]["virtualenv"] = str(REPO / "venv")
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
    shutil.copyfile(source / "__main__.py", folder / "__main__.py")
    config_dir = project.get("stackConfigDir", ".")
    for stack in stacks:
        target = folder / config_dir / f"Pulumi.{stack}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / config_dir / f"Pulumi.{stack}.yaml", target)
    return folder


def secure_paths(config: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """Every ``{secure: …}`` value of a stack file's config: (key, path inside its value)."""

    def walk(value: Any, path: list[str]) -> Iterator[list[str]]:
        if isinstance(value, dict):
            if set(value) == {"secure"}:
                yield path
                return
            for name, item in value.items():
                yield from walk(item, [*path, str(name)])
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from walk(item, [*path, str(index)])

    for key, value in config.items():
        for path in walk(value, []):
            yield key, path


def config_path(key: str, path: list[str]) -> str:
    """``pulumi config set --path`` syntax for a key and a path inside it."""
    return key + "".join(f"[{p}]" if p.isdigit() else f'["{p}"]' for p in path)


def reseal_secrets(engine: Engine, project: Path, stack: str, canary: str) -> dict[str, str]:
    """Replace a stack file's ``secure:`` values (sealed for another passphrase, or samples)
    with canaries sealed by this engine's passphrase; returns {config path: canary value}."""
    stack_file = next(project.rglob(f"Pulumi.{stack}.yaml"))
    document = yaml.safe_load(stack_file.read_text())
    paths = list(secure_paths(document.get("config", {})))
    values = {}
    for index, (key, path) in enumerate(paths):
        values[config_path(key, path)] = f"{canary}-{index}"
    document["config"] = _without_secure(document.get("config", {}))
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    for where, value in values.items():
        engine.run(project, "config", "set", "--stack", stack, "--secret", "--path", where, value)
    return values


def _without_secure(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return "resealed-by-test"
        return {name: _without_secure(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_without_secure(item) for item in value]
    return value


def with_virtualenv(source: Path, folder: Path, settings: str) -> Path:
    """A copy of a Python plugin or policy-pack folder whose ``settings`` file names the
    repository's venv as its virtualenv."""
    copy = folder / source.name
    shutil.copytree(source, copy)
    document = yaml.safe_load((copy / settings).read_text())
    document["runtime"]["options"]["virtualenv"] = str(REPO / "venv")
    (copy / settings).write_text(yaml.safe_dump(document, sort_keys=False))
    return copy


def render_to(engine: Engine, project: Path, stack: str, out: Path) -> None:
    """Point the stack's default Kubernetes provider at a folder (renderYamlToDirectory),
    which refuses a kubeconfig context beside it."""
    engine.run(project, "config", "rm", "--stack", stack, "kubernetes:context", check=False)
    engine.run(
        project, "config", "set", "--stack", stack, "kubernetes:renderYamlToDirectory", str(out)
    )


def read_manifests(folder: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The objects under a folder of YAML files, keyed by (kind, namespace, name)."""
    objects: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path in sorted(folder.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                meta = document.get("metadata", {})
                objects[(document["kind"], meta.get("namespace", ""), meta["name"])] = document
    return objects


# Values `render` cannot know, each with its reason. Nothing else may differ.
UNKNOWN_AT_RENDER = {
    # A keyed HMAC of the Secrets a pod reads; its key exists only in state (RolloutKey).
    ("metadata", "annotations", "langop.io/secret-digest"): "keyed by a key made at `pulumi up`",
}


def differences(path: tuple[str, ...], offline: Any, real: Any) -> list[str]:
    """Every leaf where the two objects differ, as `a.b.c: offline != real`."""
    if isinstance(offline, dict) and isinstance(real, dict):
        found: list[str] = []
        for key in sorted(set(offline) | set(real)):
            found += differences(
                (*path, key), offline.get(key, "<absent>"), real.get(key, "<absent>")
            )
        return found
    if isinstance(offline, list) and isinstance(real, list) and len(offline) == len(real):
        return [
            d
            for i, (a, b) in enumerate(zip(offline, real, strict=True))
            for d in differences((*path, str(i)), a, b)
        ]
    if offline == real or (offline == "[unknown]" and path[-3:] in UNKNOWN_AT_RENDER):
        return []
    return [f"{'.'.join(path)}: render {offline!r} != engine {real!r}"]


def without_secret_values(obj: dict[str, Any]) -> dict[str, Any]:
    """A Secret's values: render redacts them, the provider writes them; compared apart."""
    if obj["kind"] != "Secret":
        return obj
    return {k: v for k, v in obj.items() if k not in ("data", "stringData")}


def offline_render(
    project: Path, stack: str, out: Path, env: dict[str, str]
) -> dict[tuple[str, str, str], dict[str, Any]]:
    """`langop-infra render` of a project's stack into ``out``: its objects."""
    done = subprocess.run(
        [str(REPO / "venv" / "bin" / "langop-infra"), "render", "--stack", stack,
         "--project-dir", str(project), "--output-dir", str(out)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return read_manifests(out)


def render_differences(
    expected: dict[tuple[str, str, str], dict[str, Any]],
    actual: dict[tuple[str, str, str], dict[str, Any]],
) -> list[str]:
    """Every field where two sets of objects differ, Secret values apart (render redacts
    them, the provider writes them)."""
    return [
        f"{key}: {d}"
        for key in sorted(expected)
        for d in differences(
            (), without_secret_values(expected[key]), without_secret_values(actual[key])
        )
    ]


def stack_state(engine: Engine, project: Path, stack: str) -> dict[str, Any]:
    """``pulumi stack export``: the state as the backend keeps it."""
    done = engine.run(project, "stack", "export", "--stack", stack)
    return json.loads(done.stdout)
