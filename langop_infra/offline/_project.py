"""A Pulumi project and its stack files, read without the Pulumi SDK: which program the
project runs, which stack file a command means, and the stack's config as the Pulumi CLI
hands it to a program. ``render`` and ``validate`` share it; importing it costs no Pulumi."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from langop_infra._errors import REDACTED
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.core._text import did_you_mean
from langop_infra.core.problems import Problem, SpecError
from langop_infra.offline._locate import shown


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
        hint = did_you_mean(stack, known, then="")
        message = f"no config for stack {stack!r}; {hint}(stacks here: {listed}); create this file"
        raise SpecError([Problem(str(path), message)])
    return stack, path


def load_stack_file(path: Path) -> dict[str, Any]:
    """A Pulumi project or stack file, within the limits of :func:`yaml_io.load_config`:
    UTF-8, no duplicate keys, bounded size, depth and alias expansion."""
    try:
        raw = path.read_bytes()
        _refuse_manifests(path, raw)
        data: object = yaml_io.load_config(raw) or {}
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
    try:
        documents = yaml_io.load_config_all(raw)
    except yaml_io.YAMLError:
        return  # load_config reports it, at its line
    if not any(isinstance(d, Mapping) and "apiVersion" in d for d in documents):
        return  # not a manifest (manifest_kind would say None): no importers to import
    from langop_infra.offline.importers import manifest_kind

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
        message = message.replace(str(context), f"{context} (from line {context_mark.line + 1})", 1)
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
    data: Mapping[str, object] | None = None,
    *,
    keep_ciphertext: bool = False,
) -> tuple[dict[str, str], list[str]]:
    """A stack file's ``config:`` as the CLI passes it to a program: full keys, values as
    strings (structured values as JSON), and the keys holding secure values.

    ``secure:`` values become the redaction marker, or with ``keep_ciphertext`` their
    ciphertext (not secret in itself), so that fingerprints change when a value is set again.
    """
    data = load_stack_file(path) if data is None else data
    raw: object = data.get("config") or {}
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


def _strip_secure(value: object, keep_ciphertext: bool = False) -> tuple[object, bool]:
    """Replace every ``{secure: ...}`` with the redaction marker; say whether there was one."""
    if isinstance(value, Mapping):
        mapping = cast("Mapping[Any, Any]", value)
        if set(mapping) == {"secure"}:
            return (str(mapping["secure"]) if keep_ciphertext else REDACTED), True
        found = False
        out: dict[object, object] = {}
        for k, v in mapping.items():
            out[k], inner = _strip_secure(v, keep_ciphertext)
            found = found or inner
        return out, found
    if isinstance(value, list):
        items = [_strip_secure(v, keep_ciphertext) for v in cast("list[Any]", value)]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False
