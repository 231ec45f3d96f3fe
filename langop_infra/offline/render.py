"""Render a stack offline: the project's real program, its stack config, the mock engine.

Secrets (including ``secure:`` config values, which are never decrypted here) come out as
:data:`REDACTED`, or as keyed fingerprints (:func:`fingerprinted_manifests`); schema-sync
resources are recorded but never contacted.
"""

from __future__ import annotations

import difflib
import json
import runpy
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from langop_infra.core import yaml_io
from langop_infra.core.errors import Problem, SpecError
from langop_infra.core.gc_tuning import tuned_for_run
from langop_infra.core.streams import stdout_to_stderr
from langop_infra.offline.esc import environment_config
from langop_infra.offline.formats import OUT_MARKER
from langop_infra.offline.locate import shown
from langop_infra.offline.mock_engine import (
    REDACTED,
    UNKNOWN_MARKER,
    ProgramRun,
    is_unknown,
    run_program,
    to_manifest,
    unknown_paths,
    visit,
)
from langop_infra.offline.stack_secrets import check_secure_values, fingerprint

KIND_ORDER = {
    "Namespace": 0,
    "Secret": 1,
    "ConfigMap": 2,
    "PersistentVolumeClaim": 3,
    "Service": 4,
    "Deployment": 5,
    "NetworkPolicy": 6,
}


@dataclass(frozen=True)
class Project:
    directory: Path
    name: str
    main: Path
    stack_config_dir: Path

    @classmethod
    def load(cls, directory: str | Path) -> Project:
        """The project whose ``Pulumi.yaml`` is in ``directory``."""
        directory = Path(directory).resolve()
        path = directory / "Pulumi.yaml"
        if not path.is_file():
            raise SpecError([Problem(str(path), "no Pulumi.yaml here; pass --project-dir")])
        data = load_stack_file(path)
        main = directory / str(data.get("main") or "")
        if main.is_dir():
            main = main / "__main__.py"
        return cls(
            directory=directory,
            name=str(data.get("name") or directory.name),
            main=main,
            stack_config_dir=directory / str(data.get("stackConfigDir") or "."),
        )

    @classmethod
    def find(cls, start: str | Path = ".") -> Project:
        """The project of ``start`` or of its nearest parent holding ``Pulumi.yaml``, as the
        Pulumi CLI looks for it."""
        start = Path(start).resolve()
        for directory in (start, *start.parents):
            if (directory / "Pulumi.yaml").is_file():
                return cls.load(directory)
        raise SpecError(
            [Problem(str(start), "no Pulumi.yaml here or in a parent folder; pass --project-dir")]
        )

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        """The stacks that have a stack file, sorted."""
        files = self.stack_config_dir.glob("Pulumi.*.yaml")
        return sorted(f.name.removeprefix("Pulumi.").removesuffix(".yaml") for f in files)


class StackChoiceError(SpecError):
    """No stack given, or one without a stack file: one line, with the stacks there are."""

    def __str__(self) -> str:
        return str(self.problems[0])


def choose_stack(
    project: Project, stack: str | None, config_file: str | Path | None
) -> tuple[str, Path]:
    """The stack's name and its file: ``config_file`` when given, else the project's
    ``Pulumi.<stack>.yaml``; no default, a did-you-mean for typos."""
    if config_file is not None:
        path = Path(config_file)
        stack = stack or path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        if not path.is_file():
            raise SpecError([Problem(str(path), f"no config for stack {stack!r}; no such file")])
        return stack, path
    known = project.stacks()
    listed = ", ".join(known) if known else f"none yet: add {project.stack_file('<name>')}"
    if stack is None:
        raise StackChoiceError(
            [Problem("", f"no stack given; pass --stack NAME (stacks here: {listed})")]
        )
    path = project.stack_file(stack)
    if not path.is_file():
        close = difflib.get_close_matches(stack, known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        message = f"no config for stack {stack!r}; {hint}(stacks here: {listed}); create this file"
        raise SpecError([Problem(str(path), message)])
    return stack, path


def load_stack_file(path: Path) -> dict[str, Any]:
    """A Pulumi project or stack file, within the limits of :func:`yaml_io.load_config`:
    UTF-8, no duplicate keys, bounded size, depth and alias expansion."""
    try:
        raw = path.read_bytes()
        _refuse_manifests(path, raw)
        data: Any = yaml_io.load_config(raw) or {}
    except yaml_io.ConfigYAMLError as exc:
        if exc.line is None:
            raise SpecError([Problem(str(path), str(exc))]) from None
        at = Problem(
            "", str(exc), "langop_yaml_refused", file=shown(path), line=exc.line, column=exc.column
        )
        raise SpecError([at]) from None
    except yaml_io.YAMLError as exc:
        raise SpecError([_yaml_problem(path, exc)]) from None
    except OSError as exc:
        raise SpecError([Problem(str(path), f"cannot read: {exc.strerror}")]) from None
    if not isinstance(data, dict):
        raise SpecError([Problem(str(path), "expected a mapping at the top level")])
    return cast("dict[str, Any]", data)


def _refuse_manifests(path: Path, raw: bytes) -> None:
    """A Kubernetes manifest of a system ``import`` reads is not a stack file: say so, and
    name the command that converts it (instead of "namespace: required")."""
    from langop_infra.offline.importers import manifest_kind

    try:
        documents = yaml_io.load_config_all(raw)
    except yaml_io.YAMLError:
        return  # load_config reports it, at its line
    kinds = [k for k in map(manifest_kind, documents) if k]
    if kinds:
        listed = ", ".join(dict.fromkeys(kinds))
        message = (
            f"this is a Kubernetes manifest ({listed}), not a stack file: convert it with "
            f"`langop-infra import {shown(path)}` (add --into stacks/Pulumi.<env>.yaml to "
            "merge it into a stack file)"
        )
        raise SpecError([Problem(str(path), message, "langop_manifest_not_stack")])


def _yaml_problem(path: Path, exc: Exception) -> Problem:
    """A parse error at its ``file:line:column``, in PyYAML's words without its internals
    (``in "<unicode string>"``): what it was parsing, and what it found."""
    mark = getattr(exc, "problem_mark", None)
    said = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    message = "; ".join(str(s) for s in said if s) or "cannot be read"
    context_mark = getattr(exc, "context_mark", None)
    context = getattr(exc, "context", None)
    if context_mark is not None and context:
        message = message.replace(
            str(context), f"{context} (from line {context_mark.line + 1})", 1
        )
    if not mark:
        return Problem("", f"not valid YAML: {message}", "yaml_syntax")
    return Problem(
        "",
        f"not valid YAML: {message}",
        "yaml_syntax",
        file=shown(path),
        line=mark.line + 1,
        column=mark.column + 1,
    )


def stack_config(
    project: Project,
    path: Path,
    data: Mapping[str, Any] | None = None,
    *,
    keep_ciphertext: bool = False,
) -> tuple[dict[str, str], list[str]]:
    """A stack file's ``config:`` as the CLI passes it to a program: full keys, values as
    strings (structured values as JSON), and the keys holding secure values.

    ``secure:`` values become the redaction marker, or with ``keep_ciphertext`` their
    ciphertext (not secret in itself), so that fingerprints change when a value is set again.
    """
    data = load_stack_file(path) if data is None else data
    raw: Any = data.get("config") or {}
    if not isinstance(raw, Mapping):
        raise SpecError([Problem(f"{path}:config", "expected a mapping of config keys")])
    config: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in cast("Mapping[Any, Any]", raw).items():
        full_key = key if ":" in str(key) else f"{project.name}:{key}"
        value, is_secret = _strip_secure(value, keep_ciphertext)
        if is_secret:
            secret_keys.append(full_key)
        # As the Pulumi CLI hands structured config over: JSON with sorted keys (Go's
        # json.Marshal of a map), so offline renders match what `pulumi up` computes.
        config[full_key] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return config, secret_keys


def _strip_secure(value: Any, keep_ciphertext: bool = False) -> tuple[Any, bool]:
    """Replace every ``{secure: ...}`` with the redaction marker; say whether there was one."""
    if isinstance(value, Mapping):
        mapping = cast("Mapping[Any, Any]", value)
        if set(mapping) == {"secure"}:
            return (str(mapping["secure"]) if keep_ciphertext else REDACTED), True
        found = False
        out: dict[Any, Any] = {}
        for k, v in mapping.items():
            out[k], inner = _strip_secure(v, keep_ciphertext)
            found = found or inner
        return out, found
    if isinstance(value, list):
        items = [_strip_secure(v, keep_ciphertext) for v in cast("list[Any]", value)]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def render_stack(
    project_dir: str | Path = ".",
    *,
    stack: str | None = None,
    config_file: str | Path | None = None,
    keep_ciphertext: bool = False,
    environment_values: Sequence[Path] = (),
) -> ProgramRun:
    """Run the project's program for a stack under the mock engine.

    ``environment_values``: outputs of ``pulumi env open <env> --format json`` for the ESC
    environments the stack imports; their ``pulumiConfig`` is merged under the stack's own
    config (see :mod:`langop_infra.offline.esc`).

    The project is found in ``project_dir`` or its parents; a stack must be named (``stack``
    or ``config_file``). Raises :class:`SpecError` for an unusable stack file.
    """
    project = Project.find(project_dir)
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
        )
    run.warnings.extend(unknown_warnings(run))
    return run


def unknown_warnings(run: ProgramRun) -> list[str]:
    """One warning per field whose value `pulumi preview` would not know either."""
    warnings: list[str] = []
    for registration in run.kubernetes():
        fields = list(dict.fromkeys(unknown_paths(registration.inputs)))
        if not fields:
            continue
        kind = registration.type.rsplit(":", 1)[-1]
        given = registration.inputs.get("metadata")
        meta: dict[str, Any] = cast("dict[str, Any]", given) if isinstance(given, dict) else {}
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


def _fingerprinted(value: Any, key: bytes) -> Any:
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


def sorted_manifests(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(manifests, key=manifest_key)


def dump_yaml(manifest: Mapping[str, Any]) -> str:
    """One object as YAML; multi-line strings (a ConfigMap's config.yaml, the gateway's
    config) as ``|`` blocks, the form ``kubectl get -o yaml`` and ``helm template`` print."""
    return yaml_io.dump(dict(manifest), literal_blocks=True)


@tuned_for_run()
def dump_stream(manifests: list[dict[str, Any]]) -> str:
    """One multi-document YAML stream, objects in a deterministic order."""
    return "".join(f"---\n{dump_yaml(m)}" for m in sorted_manifests(manifests))


def manifest_filename(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata", {})
    namespace = meta.get("namespace") or "_cluster"
    return f"{namespace}/{manifest.get('kind', 'Object').lower()}-{meta.get('name')}.yaml"


@tuned_for_run()
def write_tree(manifests: list[dict[str, Any]], out: Path) -> list[Path]:
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
    out.mkdir(parents=True, exist_ok=True)
    (out / OUT_MARKER).write_text("written by langop-infra render\n")
    written: list[Path] = []
    for manifest in sorted_manifests(manifests):
        path = out / manifest_filename(manifest)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(manifest))
        written.append(path)
    return written
