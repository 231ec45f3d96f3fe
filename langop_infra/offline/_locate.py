"""Where a problem's config path is in the stack file: ``file:line:column`` of the offending
key, from the YAML nodes' marks (the program reads config as JSON strings, which have none)."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import yaml

import langop_infra._json as _json
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.core.problems import Problem

# One step of a path: `.name`, `[3]`, or a quoted key `["a b"]`.
_STEP = re.compile(r'\.([^.\[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
_CONFIG_KEY = re.compile(r"^([A-Za-z0-9_-]+:[^.\[]+)")


def path_steps(path: str) -> list[str | int] | None:
    """``langop-infra:tools[1].port`` as ``["langop-infra:tools", 1, "port"]``; None for a
    path that is not a config key's."""
    head = _CONFIG_KEY.match(path)
    if head is None:
        return None
    steps: list[str | int] = [head.group(1)]
    rest = path[head.end() :]
    while rest:
        step = _STEP.match(rest)
        if step is None:
            return None
        name, index, quoted = step.groups()
        steps.append(int(index) if index is not None else _json.read(quoted) if quoted else name)
        rest = rest[step.end() :]
    return steps


def _child(node: yaml.Node, step: str | int) -> yaml.Node | None:
    """The key node of ``step`` in a mapping (a key marks where the field is), or the item
    node of an index in a sequence."""
    if isinstance(node, yaml.MappingNode) and isinstance(step, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == step:
                return key if value is None else _Pair(key, value)
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
        return node.value[step]
    return None


class _Pair(yaml.Node):
    """A key node (for its mark) that walks on into its value."""

    def __init__(self, key: yaml.Node, value: yaml.Node) -> None:
        # typeshed's PyYAML stub leaves Node's value parameter untyped.
        super().__init__(key.tag, value.value, key.start_mark, key.end_mark)  # pyright: ignore[reportUnknownMemberType]
        self.node = value


def _mark(root: yaml.Node, steps: Sequence[str | int]) -> yaml.Mark | None:
    """The mark of the deepest node the steps reach (the parent of a missing field)."""
    node, mark = root, None
    for step in steps:
        found = _child(node.node if isinstance(node, _Pair) else node, step)
        if found is None:
            break
        node, mark = found, found.start_mark
    return mark


def shown(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it, as compilers show it."""
    try:
        return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
    except ValueError:  # another drive
        return str(path)


def located(problems: Sequence[Problem], stack_file: Path) -> list[Problem]:
    """``problems`` with ``file``, ``line`` and ``column`` of their key in ``stack_file``
    (a key may be written in full, ``langop-infra:tools``, or short, ``tools``), in the
    order of the file; those without a place come last."""
    try:
        text = stack_file.read_text(encoding="utf-8")
        # typeshed's PyYAML stub leaves compose()'s stream and result untyped.
        root = cast("yaml.Node | None", yaml.compose(text, Loader=yaml_io.LOADER))  # pyright: ignore[reportUnknownMemberType]
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return list(problems)
    config = _child(root, "config") if root is not None else None
    if not isinstance(config, _Pair):
        return list(problems)
    out: list[Problem] = []
    for problem in problems:
        steps = path_steps(problem.path)
        mark = None
        if steps is not None:
            full = str(steps[0])
            key = full if _child(config.node, full) is not None else full.split(":", 1)[1]
            mark = _mark(config.node, [key, *steps[1:]])
        if mark is None:
            out.append(problem)
            continue
        where = dict(file=shown(stack_file), line=mark.line + 1, column=mark.column + 1)
        out.append(dataclasses.replace(problem, **where))
    return sorted(out, key=lambda p: (not p.line, p.line, p.column))
