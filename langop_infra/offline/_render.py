"""Render a stack offline: the project's real program, its stack config, the mock engine.

Secrets (including ``secure:`` config values, which are never decrypted here) come out as
:data:`REDACTED`, or as keyed fingerprints (:func:`fingerprinted_manifests`); schema-sync
resources are recorded but never contacted.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from langop_infra.core import _yaml_io as yaml_io
from langop_infra.core._atomic import WriteError, write_atomically
from langop_infra.core._gc_tuning import tuned_for_run
from langop_infra.core._streams import stdout_to_stderr
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests._contract import SECRET_DIGEST_ANNOTATION
from langop_infra.offline._engine_values import (
    UNKNOWN_MARKER,
    is_unknown,
    to_manifest,
    unknown_paths,
    visit,
)
from langop_infra.offline._esc import environment_config
from langop_infra.offline._formats import OUT_MARKER
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.offline._project import (
    Project,
    choose_stack,
    load_stack_file,
    stack_config,
)
from langop_infra.offline._stack_secrets import check_secure_values, fingerprint

KIND_ORDER = {
    "Namespace": 0,
    "Secret": 1,
    "ConfigMap": 2,
    "PersistentVolumeClaim": 3,
    "Service": 4,
    "Deployment": 5,
    "CronJob": 5,  # a scheduled agent's workload, beside the Deployments
    "NetworkPolicy": 6,
}


def render_stack(
    project_dir: str | Path = ".",
    *,
    stack: str | None = None,
    config_file: str | Path | None = None,
    keep_ciphertext: bool = False,
    project: Project | None = None,
    environment_values: Sequence[Path] = (),
    rollout_key: str | None = None,
) -> ProgramRun:
    """Run the project's program for a stack under the mock engine.

    The project is found in ``project_dir`` or its parents, unless the caller found it
    already (``project``: a render discovers it once); a stack must be named (``stack`` or
    ``config_file``). Raises :class:`SpecError` for an unusable stack file.

    ``environment_values``: outputs of ``pulumi env open <env> --format json`` for the ESC
    environments the stack imports; their ``pulumiConfig`` is merged under the stack's own
    config (see :mod:`langop_infra.offline._esc`). ``rollout_key``: the key of the pods'
    secret digests (None: unknown, as at a first ``pulumi preview``; see
    :mod:`langop_infra.sync.rollout_key`).
    """
    project = project if project is not None else Project.find(project_dir)
    stack, path = choose_stack(project, stack, config_file)
    data = load_stack_file(path)
    problems = check_secure_values(data, path, stack)
    if problems:
        raise SpecError(problems)
    config, secret_keys = stack_config(project, path, data, keep_ciphertext=keep_ciphertext)
    # As `pulumi up` merges them: the stack file's own keys win over its environments'.
    config = {**environment_config(environment_values, project.name), **config}
    if not project.main.is_file():
        raise SpecError([Problem(str(project.main), "the project's program is missing")])

    def program() -> None:
        sys.path.insert(0, str(project.directory))
        try:
            runpy.run_path(str(project.main), run_name="__main__")
        finally:
            sys.path.remove(str(project.directory))

    # The render is stdout: what the program and its child processes print (in applies
    # too) goes to stderr.
    with tuned_for_run(), stdout_to_stderr():
        run = run_program(
            program,
            project=project.name,
            stack=stack,
            config=config,
            secret_keys=secret_keys,
            preview=True,
            rollout_key=rollout_key,
        )
    run.warnings.extend(unknown_warnings(run))
    return run


def unknown_warnings(run: ProgramRun) -> list[str]:
    """One warning per field whose value `pulumi preview` would not know either."""
    warnings: list[str] = []
    for registration in run.kubernetes():
        # The secret digest is unknown by design without a key: no warning for it.
        found = unknown_paths(registration.inputs)
        fields = list(dict.fromkeys(f for f in found if not f.endswith(SECRET_DIGEST_ANNOTATION)))
        if not fields:
            continue
        kind = registration.type.rsplit(":", 1)[-1]
        given = registration.inputs.get("metadata")
        meta: dict[str, object] = cast("dict[str, Any]", given) if isinstance(given, dict) else {}
        where = registration.name
        named = not is_unknown(meta.get("name"))
        if named and isinstance(meta.get("name"), str):
            where = "/".join(str(meta[k]) for k in ("namespace", "name") if meta.get(k))
        warnings += [
            f"{kind} {where}: {field} is known only at `pulumi up` ("
            + (
                "the provider names the object"
                if field == "metadata.name" and not named
                else "it comes from another resource's output"
            )
            + f"); rendered as {UNKNOWN_MARKER}"
            for field in fields
        ]
    return warnings


def fingerprinted_manifests(run: ProgramRun, key: bytes) -> list[dict[str, Any]]:
    """Like ``run.manifests()``, with each secret scalar as its keyed fingerprint."""
    return [_fingerprinted(r.inputs, key) for r in run.kubernetes()]


def _fingerprinted(value: object, key: bytes) -> Any:
    """``to_manifest`` with each secret scalar as its keyed fingerprint."""
    return visit(
        value,
        secret=lambda inner, _: visit(to_manifest(inner), leaf=lambda s, __: fingerprint(s, key)),
        leaf=lambda scalar, _: to_manifest(scalar),
        skip_none=True,
    )


def manifest_key(manifest: Mapping[str, Any]) -> tuple[int, str, str, str]:
    given = manifest.get("metadata")
    # Not a mapping while unknown until `pulumi up`.
    meta: Mapping[str, Any] = cast("Mapping[str, Any]", given) if isinstance(given, Mapping) else {}
    return (
        KIND_ORDER.get(manifest.get("kind", ""), 99),
        str(manifest.get("kind", "")),
        str(meta.get("namespace", "")),
        str(meta.get("name", "")),
    )


def sorted_manifests(manifests: list[dict[str, object]]) -> list[dict[str, Any]]:
    return sorted(manifests, key=manifest_key)


def dump_yaml(manifest: Mapping[str, object]) -> str:
    """One object as YAML; multi-line strings (a ConfigMap's config.yaml, the gateway's
    config) as ``|`` blocks, the form ``kubectl get -o yaml`` and ``helm template`` print."""
    return yaml_io.dump(dict(manifest), literal_blocks=True)


@tuned_for_run()
def dump_stream(manifests: list[dict[str, object]]) -> str:
    """One multi-document YAML stream, objects in a deterministic order."""
    return "".join(f"---\n{dump_yaml(m)}" for m in sorted_manifests(manifests))


def manifest_filename(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata", {})
    namespace = meta.get("namespace") or "_cluster"
    return f"{namespace}/{manifest.get('kind', 'Object').lower()}-{meta.get('name')}.yaml"


@tuned_for_run()
def write_tree(manifests: list[dict[str, object]], out: Path) -> list[Path]:
    """One file per object under ``out/<namespace>/<kind>-<name>.yaml``.

    ``out`` must be empty or a previous render (marked by ``.langop-render``), whose YAML
    files are replaced so that deleted objects do not linger.
    """
    if out.exists() and not out.is_dir():
        raise SpecError([Problem(str(out), "is a file; --out needs a folder")])
    if out.exists() and any(out.iterdir()):
        if not (out / OUT_MARKER).is_file():
            raise SpecError(
                [Problem(str(out), "not empty and not a previous render; pick another --out")]
            )
        for old in out.rglob("*.yaml"):
            old.unlink()
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomically(out / OUT_MARKER, b"written by langop-infra render\n")
        written: list[Path] = []
        for manifest in sorted_manifests(manifests):
            path = out / manifest_filename(manifest)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, dump_yaml(manifest).encode("utf-8"))
            written.append(path)
    except OSError as exc:
        raise SpecError([Problem(str(out), f"cannot write: {exc.strerror}")]) from None
    except WriteError as exc:
        raise SpecError([Problem(str(out), str(exc))]) from None
    return written
