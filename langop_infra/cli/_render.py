"""``langop-infra render``: a stack's Kubernetes manifests, offline.

Rendered Secrets are redacted (``[secret]``, or a keyed fingerprint with
``--fingerprint-key-env``): a render is for review and diff, never for ``kubectl apply``, and
the YAML stream opens with a comment saying so and naming the stack it came from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from langop_infra.cli._output import DeprecatedOutput, add_output_argument, emit
from langop_infra.cli._stack import CommandError, add_stack_arguments, run_command, run_stack


class _DeprecatedOut(DeprecatedOutput):
    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        print(
            f"{parser.prog}: warning: --out is deprecated and goes away in the next release; "
            "use --output-dir",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stack_arguments(parser)
    add_output_argument(
        parser, ("yaml", "json"), "yaml", "output format on stdout", json_alias=True
    )
    parser.add_argument(
        "--output-dir", type=Path, metavar="DIR", help="write one YAML file per object under DIR"
    )
    parser.add_argument(
        "--out", type=Path, dest="output_dir", action=_DeprecatedOut, help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--show-only",
        action="append",
        default=[],
        metavar="KIND/NAME",
        help="only this object, e.g. Deployment/memory (repeatable)",
    )
    parser.add_argument(
        "-l",
        "--selector",
        metavar="SELECTOR",
        help="only objects whose labels match, as kubectl: key=value, key!=value, "
        "key in (a,b), key notin (a,b), key, !key; comma-separated, all must hold",
    )
    parser.add_argument(
        "--fingerprint-key-env",
        metavar="VAR",
        help="show each secret as an HMAC-SHA256 of its value keyed by the key in environment "
        "variable VAR, so that `diff` sees rotations (never a plain hash)",
    )


def run(args: argparse.Namespace) -> int:
    return run_command("render", lambda: _render(args))


def _render(args: argparse.Namespace) -> int:
    from langop_infra.core.problems import SpecError
    from langop_infra.offline._render import (
        dump_stream,
        fingerprinted_manifests,
        sorted_manifests,
        write_tree,
    )
    from langop_infra.offline._select import SelectionError, label_selector, select
    from langop_infra.offline._stack_secrets import fingerprint_key
    from langop_infra.sync.rollout_key import derived_key

    if args.output_dir is not None and args.output != "yaml":
        raise CommandError("-o json prints to stdout; --output-dir writes YAML files")
    try:
        if args.selector is not None:
            label_selector(args.selector)  # a bad selector fails before the render
    except SelectionError as exc:
        raise CommandError(f"--selector: {exc}") from None
    key = None
    if args.fingerprint_key_env:
        try:
            key = fingerprint_key(args.fingerprint_key_env)
        except ValueError as exc:
            raise CommandError(f"--fingerprint-key-env: {exc}") from None
    # The pods' secret digests under a key derived from the user's, else unknown.
    rollout = None if key is None else derived_key(key)
    result = run_stack(args, "render", keep_ciphertext=key is not None, rollout_key=rollout)
    for warning in result.warnings:
        print(f"langop-infra render: warning: {warning}", file=sys.stderr)
    manifests = result.manifests() if key is None else fingerprinted_manifests(result, key)
    try:
        manifests = select(manifests, args.show_only, args.selector)
    except SelectionError as exc:
        raise CommandError(str(exc)) from None
    if args.output == "json":
        items = sorted_manifests(manifests)
        # Keys sorted, as in the YAML stream and `kubectl get -o json`: apiVersion first.
        document = {"apiVersion": "v1", "kind": "List", "items": items}
        emit(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        return 0
    if args.output_dir is None:
        emit(banner(args, fingerprinted=key is not None) + dump_stream(manifests))
        return 0
    try:
        written = write_tree(manifests, args.output_dir)
    except SpecError as exc:
        raise CommandError(str(exc)) from None
    print(f"wrote {len(written)} objects under {args.output_dir}", file=sys.stderr)
    return 0


def banner(args: argparse.Namespace, *, fingerprinted: bool) -> str:
    """The comment the YAML stream opens with: what it is for, and where it came from."""
    secrets = "as keyed fingerprints ([secret hmac-sha256 ...])" if fingerprinted else "as [secret]"
    return (
        f"# Rendered offline by langop-infra from stack {args.stack_name!r} "
        f"({args.stack_source}).\n"
        f"# For review and diff, not for `kubectl apply`: Secret values are redacted {secrets},\n"
        "# and values known only at `pulumi up` show as [unknown].\n"
    )
