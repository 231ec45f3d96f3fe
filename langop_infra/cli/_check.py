"""``langop-infra check``: the policy pack against a stack's offline render.

The same policies ``pulumi preview --policy-pack policy-pack`` enforces, judged through the
pack's own Analyzer servicer with no Pulumi CLI and no cluster. Violations print as preview
prints them (level, policy, resource, message); exit 1 on a mandatory one.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from pathlib import Path
from typing import Any, cast

import langop_infra._json as _json
from langop_infra.cli._stack import CommandError, add_stack_arguments, run_command, run_stack


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stack_arguments(parser)
    parser.add_argument(
        "--policy-config",
        type=Path,
        metavar="FILE",
        help="policy configuration, as for `pulumi preview --policy-pack-config` (JSON)",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("text", "json"),
        default="text",
        help='text (as pulumi preview prints it) or json: [{"policy", "level", "urn", ...}]',
    )


def run(args: argparse.Namespace) -> int:
    return run_command("check", lambda: _check(args))


def _check(args: argparse.Namespace) -> int:
    try:
        from langop_infra.policy.offline import check
    except ImportError as exc:
        raise CommandError(
            f"the policy pack needs pulumi-policy ({exc.name} is missing); "
            "pip install 'langop-infra[policy]'"
        ) from None
    config = _policy_config(args.policy_config)
    # As a preview after the first `pulumi up`, when the pods' secret digests are known (a
    # value unknown at preview keeps Pulumi's policies from running): a throwaway key, never
    # shown; the digests themselves are no policy's concern.
    run = run_stack(args, "check", rollout_key=secrets.token_hex(32))
    stack = args.stack or (args.config.stem.removeprefix("Pulumi.") if args.config else "")
    try:
        violations = check(run, stack, config)
    except ValueError as exc:
        raise CommandError(f"--policy-config {args.policy_config}: {exc}") from None
    if args.output == "json":
        rows = [{**vars(v), "resource": v.resource} for v in violations]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    elif violations:
        print("Policies:")
        print("    langop-infra")
        for v in violations:
            print(f"        - [{v.level}]  {v.policy}  ({v.resource})")
            for line in v.message.splitlines():
                print(f"          {line}")
    mandatory = sum(v.level == "mandatory" for v in violations)
    if mandatory:
        print(f"langop-infra check: {mandatory} mandatory violation(s)", file=sys.stderr)
    return 1 if mandatory else 0


def _policy_config(path: Path | None) -> dict[str, object] | None:
    if path is None:
        return None
    try:
        config = _json.read(path.read_text())
    except (OSError, ValueError) as exc:  # not JSON, or over the reader's limits
        raise CommandError(f"--policy-config {path}: {exc}") from None
    if not isinstance(config, dict):
        raise CommandError(f"--policy-config {path}: expected a JSON object of policy names")
    return cast("dict[str, Any]", config)
