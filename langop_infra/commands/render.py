"""``langop-infra render``: a stack's Kubernetes manifests, offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--stack", "-s", help="stack name: reads stacks/Pulumi.<stack>.yaml")
    source.add_argument("--config", type=Path, help="a stack config file to use instead")
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."), help="where Pulumi.yaml is (default: .)"
    )
    parser.add_argument("--out", type=Path, help="write one file per object under this folder")


def run(args: argparse.Namespace) -> int:
    from langop_infra.errors import SpecError
    from langop_infra.offline.mock_engine import close_event_loop
    from langop_infra.offline.render import dump_stream, render_stack, write_tree

    try:
        result = render_stack(args.project_dir, stack=args.stack, config_file=args.config)
        manifests = result.manifests()
        for warning in result.warnings:
            print(f"langop-infra render: warning: {warning}", file=sys.stderr)
        if args.out is not None:
            written = write_tree(manifests, args.out)
            print(f"wrote {len(written)} objects under {args.out}", file=sys.stderr)
        else:
            sys.stdout.write(dump_stream(manifests))
    except SpecError as exc:
        print(f"langop-infra render: {exc}", file=sys.stderr)
        return 2
    finally:
        close_event_loop()
    return 0
