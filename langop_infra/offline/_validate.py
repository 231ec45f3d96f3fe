"""Validate a stack file without the Pulumi SDK, when the project runs the stack program.

For a project whose program is the package's own stack program (``__main__.py`` imports
``langop_infra.program.stack.main`` and calls it), every problem ``validate`` reports is found
while the stack config is read, and every warning is a function of the validated config.
:func:`validate_stack_file` finds both without importing pulumi or pulumi-kubernetes: the same
reader as the program (``program.config_reader``), the same checks, in the order the program
logs them. ``tests/test_validate_fast.py`` runs both ways over every stack and bad-input case
and compares. A project with its own program, a stack that reads other stacks (``toolsFrom``)
or config set through ``PULUMI_CONFIG*`` variables is left to the mock engine (``None``).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from langop_infra.config._http_tool import with_http_tools
from langop_infra.config.agent import AgentSpec, model_refs
from langop_infra.config.checks._checked import CheckedCluster, deploy_warnings
from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import SpecError
from langop_infra.manifests._agent_models import agent_model_parts, override_warnings
from langop_infra.offline._project import Project, choose_stack, load_stack_file, stack_config
from langop_infra.offline._stack_secrets import check_secure_values
from langop_infra.program._config_reader import (
    PROJECT,
    StackFileConfig,
    config_warnings,
    read_cluster_document,
)

# The stack program's __main__.py, as `langop-infra init` and this repository write it.
STACK_PROGRAM = "from langop_infra.program.stack import main\nmain()"


def is_stack_program(main: Path) -> bool:
    """Whether ``main`` only runs the package's stack program (a docstring aside)."""
    try:
        tree = ast.parse(main.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the module docstring
    expected = ast.parse(STACK_PROGRAM).body
    return [ast.dump(s) for s in body] == [ast.dump(s) for s in expected]


def validate_stack_file(
    project_dir: str | Path = ".",
    *,
    stack: str | None = None,
    config_file: str | Path | None = None,
) -> list[str] | None:
    """The warnings ``render_stack`` would collect for the stack, or ``None`` when only
    running the program can tell. Raises :class:`SpecError` for every problem, as the
    program's run does (the stack file's own first, then the config's)."""
    project = Project.find(project_dir)
    stack, path = choose_stack(project, stack, config_file)
    data = load_stack_file(path)
    problems = check_secure_values(data, path, stack)
    if problems:
        raise SpecError(problems)
    config, secret_keys = stack_config(project, path, data)
    if not _runs_here(project, config):
        return None
    source = StackFileConfig(config, frozenset(secret_keys))
    checked = read_cluster_document(source, [])
    return [str(w) for w in config_warnings(checked.spec)] + cluster_warnings(checked.warned())


def _runs_here(project: Project, config: dict[str, str]) -> bool:
    """The program is the stack program, reads nothing but this config, and no other stack."""
    if any(name.startswith("PULUMI_CONFIG") for name in os.environ):
        return False  # the SDK reads config from these too
    if f"{PROJECT}:toolsFrom" in config:
        return False  # StackReferences: the mock engine answers them
    return project.main.is_file() and is_stack_program(project.main)


def cluster_warnings(checked: CheckedCluster) -> list[str]:
    """What ``LanguageCluster`` and its agents log for a cluster the stack program built,
    in the same order (the program has warned of unpinned images under their config keys,
    and hands the cluster a :class:`CheckedCluster` without them)."""
    warnings = [f"{f.path}: {f.message}" for f in deploy_warnings(checked)]
    spec = checked.spec
    return warnings + [w for agent in spec.agents for w in _agent_warnings(spec, agent)]


def _agent_warnings(spec: ClusterSpec, agent: AgentSpec) -> list[str]:
    """An agent's env vars that override what langop-infra injects (``agent_objects``)."""
    namespace = agent.namespace or spec.namespace
    models = {m.name: m for m in spec.models}
    personas = {p.name: p for p in spec.personas}
    persona = personas.get(agent.persona) if isinstance(agent.persona, str) else None
    full = with_http_tools(spec.http_tools, agent, spec.namespace)
    full = full.model_copy(update={"namespace": namespace})
    used = [models[ref.name] for ref in model_refs(agent, models)]
    parts = agent_model_parts(
        full,
        used,
        spec.defaults,
        namespace=namespace,
        part_of=spec.part_of or namespace,
        persona=persona,
    )
    return override_warnings(full.name, parts.overridden)
