"""``langop-infra render``: a stack's Kubernetes manifests, offline.

Rendered Secrets are redacted (``[secret]``, or a keyed fingerprint with
``--fingerprint-key-env``): a render is for review and diff, never for ``kubectl apply``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from langop_infra.cli._stack import CommandError, add_stack_arguments, render, run_command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stack_arguments(parser)
    parser.add_argument("--out", type=Path, help="write one file per object under this folder")
    parser.add_argument(
        "--fingerprint-key-env",
        metavar="VAR",
        help="show each secret as an HMAC-SHA256 of its value keyed by the key in environment "
        "variable VAR, so that `diff` sees rotations (never a plain hash)",
    )


def run(args: argparse.Namespace) -> int:
    return run_command("render", lambda: _render(args))


def _render(args: argparse.Namespace) -> int:
    from langop_infra.core.errors import SpecError
    from langop_infra.offline.render import dump_stream, fingerprinted_manifests, write_tree
    from langop_infra.offline.stack_secrets import fingerprint_key

    key = None
    if args.fingerprint_key_env:
        try:
            key = fingerprint_key(args.fingerprint_key_env)
        except ValueError as exc:
            raise CommandError(f"--fingerprint-key-env: {exc}") from None
    result = render(args, "render", keep_ciphertext=key is not None)
    for warning in result.warnings:
        print(f"langop-infra render: warning: {warning}", file=sys.stderr)
    manifests = result.manifests() if key is None else fingerprinted_manifests(result, key)
    if args.out is None:
        sys.stdout.write(dump_stream(manifests))
        return 0
    try:
        written = write_tree(manifests, args.out)
    except SpecError as exc:
        raise CommandError(str(exc)) from None
    print(f"wrote {len(written)} objects under {args.out}", file=sys.stderr)
    return 0
