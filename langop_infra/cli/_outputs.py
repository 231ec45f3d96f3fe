"""``langop-infra outputs``: what a stack exports, computed offline under the mock engine.

Tools' endpoints, modes and schema-sync phases (offline a tool is never contacted, so its
phase is ``Pending``), each agent's config.yaml and ``MCP_SERVERS`` as the stack exports them,
plus the names of the env vars its container gets (read from the rendered Deployment, or a
scheduled agent's CronJob; names only, never values). Secret outputs print as ``[secret]``.
"""

from __future__ import annotations

import argparse
from typing import Any, cast

from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import add_stack_arguments, run_command, run_stack


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stack_arguments(parser)
    add_output_argument(parser, ("yaml", "json"), "yaml", "output format", json_alias=True)


def run(args: argparse.Namespace) -> int:
    return run_command("outputs", lambda: _outputs(args))


def _outputs(args: argparse.Namespace) -> int:
    result = run_stack(args, "outputs")
    outputs = plain(result.outputs)
    env_names = agent_env_names(result.manifests())
    agents: Any = outputs.get("agents") or {}
    for name, agent in agents.items():
        if isinstance(agent, dict) and name in env_names:
            cast("dict[str, Any]", agent)["envNames"] = env_names[name]
    emit(dump(outputs, args.output))
    return 0


def plain(value: object) -> Any:
    """Resolved outputs with every secret as the redaction marker."""
    from langop_infra._errors import REDACTED
    from langop_infra.offline._engine_values import visit

    # Output keys are strings already (Pulumi serializes exports as JSON objects).
    return visit(value, secret=lambda _, __: REDACTED)


def agent_env_names(manifests: list[dict[str, Any]]) -> dict[str, list[str] | str]:
    """Agent name -> env var names of its main container, from the rendered Deployments and
    CronJobs; ``[unknown]`` when its pod spec or env is known only at `pulumi up`."""
    from langop_infra.cli._unknown_parts import UNKNOWN_MARKER, mapping, pod_spec

    names: dict[str, list[str] | str] = {}
    for m in manifests:
        # Labels known only at `pulumi up` render as "[unknown]".
        labels = mapping(mapping(m.get("metadata")).get("labels"))
        component = labels.get("app.kubernetes.io/component")
        if m.get("kind") not in ("Deployment", "CronJob") or component != "agent":
            continue
        name = m["metadata"]["name"]
        spec = pod_spec(m)
        containers: Any = spec["containers"] if spec else []
        main: Any = next((c for c in containers if c.get("name") == name), None)
        env: Any = (main or containers[0]).get("env", []) if containers else None
        if not isinstance(env, list):
            names[name] = UNKNOWN_MARKER
            continue
        # An entry known only at `pulumi up` as a whole reads as a name unknown.
        entries = [mapping(e) for e in cast("list[object]", env)]
        names[name] = [str(e.get("name", UNKNOWN_MARKER)) for e in entries]
    return names
