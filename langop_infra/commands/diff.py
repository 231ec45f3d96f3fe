"""``langop-infra diff OLD NEW``: what changed between two renders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="a render: YAML stream file or --out folder")
    parser.add_argument("new", type=Path, help="a render: YAML stream file or --out folder")


def run(args: argparse.Namespace) -> int:
    from langop_infra.errors import SpecError
    from langop_infra.offline.manifest_diff import diff_renders, load_render

    try:
        result = diff_renders(load_render(args.old), load_render(args.new))
    except SpecError as exc:
        print(f"langop-infra diff: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(result.report())
    return 0 if result.equal else 1
