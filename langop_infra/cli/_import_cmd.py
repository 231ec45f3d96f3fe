"""``langop-infra import FILE... | -``: Kubernetes manifests of language-operator, ark, STOA,
kagent and ToolHive as stack config.

Prints a stack file (``config:``) on stdout, or merges into ``--into FILE`` keeping its
comments and other keys. Every field not carried over is a note on stderr naming the field,
why, and what to do (``-o json`` puts them in the output instead). Exit 2 when a file cannot
be read, holds no manifest import reads, or holds one no valid stack can be made of (a stdio
server with no command, a kmcp server with no image, a placeholder URL): one line each,
naming the field and the fix.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, BinaryIO, cast

from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import CommandError, run_command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="manifest files; - for stdin")
    parser.add_argument(
        "--into",
        type=Path,
        metavar="STACK_FILE",
        help="merge into this stack file (e.g. stacks/Pulumi.dev.yaml), keeping its comments",
    )
    parser.add_argument("--namespace", help="the stack's namespace (default: the manifests')")
    parser.add_argument(
        "--agent-image",
        metavar="IMAGE",
        help="image of agents whose manifest names none (ark and kagent choose it upstream)",
    )
    parser.add_argument(
        "--tool-image",
        action="append",
        default=[],
        metavar="TOOL=IMAGE",
        help="image of the imported tool TOOL (kmcp picks one from cmd; a stdio server's "
        "image must also hold mcp-proxy); repeat for several tools",
    )
    parser.add_argument(
        "--tool-command",
        action="append",
        default=[],
        metavar="TOOL=COMMAND",
        help="command line of the imported stdio tool TOOL, as a shell would split it "
        "(ToolHive runs the image's entrypoint, which its manifest does not name)",
    )
    add_output_argument(
        parser, ("yaml", "json"), "yaml", 'print the stack file, or {"config", "notes"} as'
    )


def _by_tool(option: str, values: list[str]) -> dict[str, str]:
    """``TOOL=VALUE`` arguments of ``option`` by tool name."""
    found: dict[str, str] = {}
    for value in values:
        name, sep, given = value.partition("=")
        if not (sep and name.strip() and given.strip()):
            raise CommandError(f"{option} {value!r}: write it as {option} TOOL=VALUE")
        found[name.strip()] = given.strip()
    return found


def _commands(values: list[str]) -> dict[str, list[str]]:
    """``--tool-command TOOL=COMMAND`` values, each split as a POSIX shell would."""
    found: dict[str, list[str]] = {}
    for name, line in _by_tool("--tool-command", values).items():
        try:
            found[name] = shlex.split(line)
        except ValueError as exc:
            raise CommandError(f"--tool-command {name}: {exc}; quote it as a shell would") from None
    return found


def _check_tool_names(out: Any, given: dict[str, Any], option: str) -> None:
    """Every tool an option names is one the import made (a typo would be ignored)."""
    names = [str(t["name"]) for t in out.entries["tools"]]
    for name in given:
        if name not in names:
            raise CommandError(
                f"{option} {name}: no imported tool is named {name!r} "
                f"(imported: {', '.join(names) or 'none'})"
            )


def _refused(out: Any) -> None:
    """The import's refusals, one line each: what no valid stack can be made of."""
    if out.refusals:
        lines = [str(n) for n in out.refusals]
        raise CommandError("\nlangop-infra import: error: ".join(lines))


def _read(name: str) -> tuple[str, bytes]:
    """A file's or stdin's bytes, read no further than one byte past the loader's limit: a
    3 GB pipe costs 4 MiB, not 3 GB, before it is refused."""
    from langop_infra.core._yaml_io import MAX_CONFIG_BYTES

    label = "<stdin>" if name == "-" else name
    try:
        if name == "-":
            data = _read_up_to(sys.stdin.buffer, MAX_CONFIG_BYTES + 1)
        else:
            with Path(name).open("rb") as file:
                data = _read_up_to(file, MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise CommandError(f"{name}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise CommandError(
            f"{label}: over {MAX_CONFIG_BYTES} bytes; import reads at most that much a file: "
            "split the manifests into several files"
        )
    return label, data


def _read_up_to(stream: BinaryIO, limit: int) -> bytes:
    """At most ``limit`` bytes of ``stream`` (a pipe gives them a chunk at a time)."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = stream.read(min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _manifests(names: list[str]) -> list[Any]:
    from langop_infra.core import _yaml_io as yaml_io
    from langop_infra.offline.importers import Manifest

    found: list[Manifest] = []
    for name in names:
        label, data = _read(name)
        try:
            documents = yaml_io.load_config_all(data)
        except yaml_io.YAMLError as exc:
            first = str(exc).splitlines()[0] if str(exc) else "cannot be parsed"
            raise CommandError(f"{label}: not valid YAML: {first}") from None
        for document in documents:
            if not isinstance(document, dict):
                continue
            fields = cast("dict[str, Any]", document)
            if fields.get("kind") == "List":  # `kubectl get -o yaml` wraps objects in a List
                items = fields.get("items")
                documents.extend(cast("list[Any]", items) if isinstance(items, list) else [])
            else:
                found.append(Manifest(fields, label))
    return found


def _run(args: argparse.Namespace) -> int:
    from langop_infra.offline.importers import import_manifests, manifest_kind, stack_config

    manifests = _manifests(args.files)
    if not any(manifest_kind(m.document) for m in manifests):
        raise CommandError(
            "no manifest import reads (language-operator, ark, STOA, kagent or ToolHive "
            "kinds) in " + ", ".join(args.files)
        )
    images = _by_tool("--tool-image", args.tool_image)
    commands = _commands(args.tool_command)
    out = import_manifests(
        manifests, agent_image=args.agent_image, tool_images=images, tool_commands=commands
    )
    _refused(out)
    _check_tool_names(out, images, "--tool-image")
    _check_tool_names(out, commands, "--tool-command")
    if args.into is not None:
        from langop_infra.core._atomic import WriteError, write_atomically
        from langop_infra.offline.importers._into import IntoError, merged_stack_file

        try:
            text = merged_stack_file(args.into, out, args.namespace)
        except IntoError as exc:
            raise CommandError(str(exc)) from None
        try:
            write_atomically(args.into, text.encode("utf-8"))
        except WriteError as exc:
            raise CommandError(str(exc)) from None
        config = stack_config(out, args.namespace)
    else:
        config = stack_config(out, args.namespace)
    if args.output == "json":
        emit(dump({"config": config, "notes": [n.as_dict() for n in out.notes]}, "json"))
        return 0
    if args.into is None:
        emit(dump({"config": config}, "yaml"))
    for item in out.notes:
        print(f"langop-infra import: note: {item}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    return run_command("import", lambda: _run(args))
