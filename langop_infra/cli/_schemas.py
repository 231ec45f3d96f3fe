"""``langop-infra schemas``: sync every tool's MCP schema and check it against a lock file.

    langop-infra schemas --stack prod --lock schemas.lock.yaml --update   # write the lock
    langop-infra schemas --stack prod --lock schemas.lock.yaml            # CI: check drift
    langop-infra schemas --stack prod --lock schemas.lock.yaml \\
        --url memory=http://127.0.0.1:18080/mcp                          # via a port-forward

The stack is rendered offline to find every service tool with schema sync enabled; each is
reached the way its ``schemaSync`` access mode says, unless ``--url`` overrides it.

Exit status: 0 no change or only compatible ones (``--update``: lock written); 1 a breaking
change, an unreachable tool, or with ``--strict`` any change; 2 usage or configuration errors.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import UsageError

if TYPE_CHECKING:
    from langop_infra.offline._mock_engine import Registration
    from langop_infra.sync._lock import SyncResult, SyncTarget

PROG = "langop-infra schemas"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", "-s", help="stack name: reads stacks/Pulumi.<stack>.yaml")
    parser.add_argument("--config", type=Path, help="a stack config file to use instead")
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."), help="where Pulumi.yaml is (default: .)"
    )
    parser.add_argument(
        "--lock", type=Path, required=True, help="the lock file (.yaml, .yml or .json)"
    )
    parser.add_argument("--update", action="store_true", help="write the lock from live schemas")
    parser.add_argument("--strict", action="store_true", help="exit 1 on compatible changes too")
    add_output_argument(parser, ("text", "json", "yaml"), "text", "report format")
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds for the whole sync (default: the largest schemaSync.timeout)",
    )
    parser.add_argument(
        "--url",
        action="append",
        default=[],
        metavar="TOOL=URL",
        help="reach TOOL's MCP endpoint at URL instead (port-forward, ingress); repeatable",
    )


def run(args: argparse.Namespace) -> int:
    from langop_infra.core.problems import SpecError
    from langop_infra.sync._lock import LockError, load_lock, lock_format

    try:
        if not args.stack and not args.config:
            raise UsageError("give --stack NAME or --config FILE")
        if args.timeout is not None and not args.timeout > 0:
            raise UsageError("--timeout must be a positive number of seconds")
        overrides = parse_overrides(args.url)
        lock_format(args.lock)
        if args.update:
            lock = load_lock(args.lock) if args.lock.exists() else {}
        else:
            lock = load_lock(args.lock)
        targets, failed = stack_targets(
            args.project_dir, args.stack, args.config, overrides, args.timeout
        )
    except (UsageError, LockError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except SpecError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2

    from langop_infra.core._atomic import WriteError
    from langop_infra.sync._lock import check_lock, save_lock, sync_all, updated_lock

    results = {**sync_all(targets, deadline=args.timeout), **failed}
    if args.update:
        update = updated_lock(lock, results)
        try:
            save_lock(args.lock, update.entries)
        except WriteError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        _print_errors(update.errors)
        if args.output != "text":
            written = {"lock": str(args.lock), "tools": list(update.lines)}
            emit(dump(written, args.output))
        else:
            print(_safe("\n".join([*update.lines, f"wrote {args.lock}"])))
        return 0 if update.ok else 1
    report = check_lock(lock, results)
    _print_errors(report.errors())
    if args.output != "text":
        emit(dump(report_data(report, args.strict), args.output))
    else:
        emit(_safe(report.summary()))
    return report.exit_code(strict=args.strict)


def report_data(report: Any, strict: bool) -> dict[str, Any]:
    """The lock check as data: each tool's status, whether it breaks, what changed."""
    tools = [
        {
            "name": check.name,
            "status": check.status,
            "breaking": check.is_breaking,
            "changes": check.summary().split("\n", 1)[0].split(": ", 1)[-1],
            "error": check.error,
        }
        for check in report.checks
    ]
    return {"tools": tools, "breaking": report.is_breaking, "exitCode": report.exit_code(strict)}


def parse_overrides(values: Sequence[str]) -> dict[str, str]:
    """``["memory=http://..."]`` as ``{"memory": "http://..."}``."""
    overrides: dict[str, str] = {}
    for value in values:
        tool, sep, url = value.partition("=")
        tool, url = tool.strip(), url.strip()
        if not sep or not tool or not url.startswith(("http://", "https://")):
            raise UsageError(f"--url {value!r}: expected TOOL=http(s)://host:port/path")
        parts = urlsplit(url)
        if parts.path in ("", "/") and not parts.query:
            url = url.rstrip("/") + "/mcp"  # as `tools` does: a tool serves MCP at /mcp
        overrides[tool] = url
    return overrides


def stack_targets(
    project_dir: Path,
    stack: str | None,
    config: Path | None,
    overrides: Mapping[str, str],
    timeout: float | None,
) -> tuple[list[SyncTarget], dict[str, SyncResult]]:
    """Every schema-synced tool of the stack as a target, and those that cannot be reached at
    all (e.g. no kubeconfig for ``apiserver-proxy``) as failed results."""
    from langop_infra.core._redact import redact
    from langop_infra.offline._mock_engine import DYNAMIC_TYPE
    from langop_infra.offline._render import render_stack
    from langop_infra.sync._lock import SyncResult, SyncTarget
    from langop_infra.sync.provider import credentials, sync_target

    run = render_stack(project_dir, stack=stack, config_file=config)
    # A2A card syncs share the type; they carry card_path (sync/card_sync.py).
    syncs = [r for r in run.by_type(DYNAMIC_TYPE) if "card_path" not in r.inputs]
    names = lock_names(syncs)
    unknown = sorted(overrides.keys() - set(names.values()))
    if unknown:
        known = ", ".join(sorted(names.values())) or "none"
        raise UsageError(
            f"--url names {', '.join(unknown)}, not a schema-synced tool of the stack "
            f"(they are: {known})"
        )
    targets: list[SyncTarget] = []
    failed: dict[str, SyncResult] = {}
    seen: set[str] = set()
    for registration in syncs:
        name = names[registration.urn]
        inputs = plain_inputs(registration.inputs)
        if name in seen:
            continue  # a sidecar tool is synced once per agent carrying it; lock it once
        seen.add(name)
        if inputs.get("deployment_mode") == "sidecar" and name not in overrides:
            # It listens on localhost in agent pods: reachable only through a cluster.
            print(
                f"{PROG}: note: skipped sidecar tool {name} (it listens inside agent pods); "
                f"lock it with --url {name}=<its MCP URL>",
                file=sys.stderr,
            )
            continue
        headers = _usable_headers(name, inputs.get("headers") or {})
        per_tool = float(inputs.get("timeout") or 10.0)
        if timeout is not None:
            per_tool = min(per_tool, timeout)
        # OAuth and the caps as `pulumi up` uses them; the issuer pin keeps the client secret
        # on its authorization server whichever route the listing takes.
        oauth: Mapping[str, object] | None = inputs.get("oauth") or None
        limits: Mapping[str, object] = inputs.get("limits") or {}
        if oauth and _unreadable(oauth.get("client_secret")):
            failed[name] = SyncResult(name, error=ENCRYPTED_OAUTH_SECRET)
            continue
        if name in overrides:
            # The override replaces the route, so apiserver credentials are never sent to it.
            targets.append(
                SyncTarget(name, overrides[name], headers, per_tool, oauth=oauth, limits=limits)
            )
            continue
        try:
            url, route_headers, tls = sync_target({**inputs, "headers": headers})
        except Exception as exc:  # e.g. no kubeconfig: this tool fails, the others still sync
            failed[name] = SyncResult(name, error=redact(str(exc), credentials(inputs)))
            continue
        targets.append(
            SyncTarget(name, url, route_headers, per_tool, tls, oauth=oauth, limits=limits)
        )
    return targets, failed


def lock_names(syncs: Sequence[Registration]) -> dict[str, str]:
    """Each sync resource's name in the lock: the tool's name, or ``namespace/name`` when two
    namespaces have a tool of that name."""
    services = Counter(str(r.inputs.get("service")) for r in syncs)
    return {
        r.urn: (
            str(r.inputs.get("service"))
            if services[str(r.inputs.get("service"))] == 1
            else f"{r.inputs.get('namespace')}/{r.inputs.get('service')}"
        )
        for r in syncs
    }


def plain_inputs(inputs: Mapping[str, object]) -> dict[str, Any]:
    """Engine inputs with secret wrappers removed (the values are needed to call the tool)."""
    from langop_infra.offline._engine_values import visit

    def plain(value: object) -> Any:
        return visit(value, secret=lambda inner, _: plain(inner))

    return {k: plain(v) for k, v in inputs.items() if k != "__provider"}


ENCRYPTED_OAUTH_SECRET = (
    "schemaSync.auth.clientSecret is a `secure:` config value that cannot be decrypted here "
    "(only the passphrase provider's can, with PULUMI_CONFIG_PASSPHRASE set); without it no "
    "token can be asked for: let `pulumi up` sync this tool"
)


def _unreadable(value: object) -> bool:
    """Whether ``value`` is a ``secure:`` config value, which render cannot decrypt."""
    from langop_infra._errors import REDACTED

    return value is None or value == REDACTED


def _usable_headers(tool: str, headers: Mapping[str, object]) -> dict[str, str]:
    usable: dict[str, str] = {}
    for name, value in headers.items():
        if _unreadable(value):
            # `secure:` config values cannot be decrypted offline; sending the marker would
            # only earn a confusing 401.
            print(
                f"{PROG}: warning: {tool}: header {name} comes from an encrypted config value, "
                "which cannot be read offline; sent without it",
                file=sys.stderr,
            )
            continue
        usable[str(name)] = str(value)
    return usable


def _print_errors(errors: Sequence[str]) -> None:
    for line in errors:
        print(f"{PROG}: {_safe(line)}", file=sys.stderr)


def _safe(text: str) -> str:
    """``text`` with what a server wrote in tool names kept from driving the terminal."""
    from langop_infra.core._redact import escape

    return escape(text, keep="\n")
