"""The mutation score of each security-critical module, from mutmut's results in mutants/.

Run by hand after the runs docs/testing.md#mutation-testing lists (``pip install -e
'.[mutation]'``); prints one line per module: mutants, killed, survived, score. ``--survivors``
lists the surviving mutants too (``mutmut show NAME`` shows one); ``--markdown`` prints the
table docs/testing.md shows.

    venv/bin/python tools/mutation_score.py [--survivors | --markdown]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from mutmut.stats import status_by_exit_code

ROOT = Path(__file__).resolve().parents[1]
KILLED = {"killed", "timeout", "caught by type check"}
NOT_COUNTED = {"not checked", "skipped"}
# name on the report -> (results file, which mutants of it count)
MODULES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "core/redact": ("langop_infra/core/_redact.py", lambda _: True),
    "mcp/confinement": ("langop_infra/mcp/_confinement.py", lambda _: True),
    "config/fields": ("langop_infra/config/_fields.py", lambda _: True),
    "manifests/policies": ("langop_infra/manifests/_policies.py", lambda _: True),
    "policy/rules": ("langop_infra/policy/_rules.py", lambda _: True),
    "sync/compare": ("langop_infra/sync/_compare.py", lambda _: True),
    "agent/http_tools": ("langop_infra/agent/http_tools.py", lambda _: True),
    # The OAuth issuer pin: the comparison, and the check before a secret or key is used.
    "OAuth issuer pin (discovery.same_issuer)": (
        "langop_infra/mcp/oauth/_discovery.py",
        lambda name: ".x_same_issuer__" in name,
    ),
    "OAuth issuer pin (flow.OAuth2Auth._check_pin)": (
        "langop_infra/mcp/oauth/_flow.py",
        lambda name: "ǁ_check_pin__" in name,
    ),
    # What an authorization server's error says, scrubbed before it becomes a message.
    "OAuth scrub (errors.scrub)": (
        "langop_infra/mcp/oauth/_errors.py",
        lambda name: ".x_scrub__" in name,
    ),
    # Issue 49: who may call an agent, the request body cap, every log line scrubbed.
    "agent/inbound_auth": ("langop_infra/agent/_inbound_auth.py", lambda _: True),
    "agent/token_verify": ("langop_infra/agent/_token_verify.py", lambda _: True),
    "agent/body_limit": ("langop_infra/agent/_body_limit.py", lambda _: True),
    "agent/capped": ("langop_infra/agent/_capped.py", lambda _: True),
    "agent/caller_watch": ("langop_infra/agent/_caller_watch.py", lambda _: True),
    # The MCP client's per-server call limit: the slot taken around each tools/call.
    "MCP call limit (Session._take_slot, call_tool)": (
        "langop_infra/mcp/_session.py",
        lambda name: "ǁ_take_slot__" in name or "ǁcall_tool__" in name,
    ),
    "core/log_scrub": ("langop_infra/core/_log_scrub.py", lambda _: True),
    # Issue 53 §3: the feature modules.
    "components/rollout": ("langop_infra/components/_rollout.py", lambda _: True),
    "components/namespace": ("langop_infra/components/_namespace.py", lambda _: True),
    "components/memory": ("langop_infra/components/_memory.py", lambda _: True),
    "manifests/cronjob": ("langop_infra/manifests/_cronjob.py", lambda _: True),
    "importers/toolhive": ("langop_infra/offline/importers/_toolhive.py", lambda _: True),
    "agent/settings": ("langop_infra/agent/_settings.py", lambda _: True),
    "agent/loop": ("langop_infra/agent/_loop.py", lambda _: True),
    "agent/memory": ("langop_infra/agent/_memory.py", lambda _: True),
    "agent/a2a_client": ("langop_infra/agent/_a2a_client.py", lambda _: True),
    "agent/a2a_server": ("langop_infra/agent/_a2a_server.py", lambda _: True),
    "agent/a2a_tasks": ("langop_infra/agent/_a2a_tasks.py", lambda _: True),
    # Issue 49 §6: whose key the gateway was shown (LiteLLM's side runs under the real proxy).
    "manifests/gateway_auth (keys and comparison)": (
        "langop_infra/manifests/_gateway_auth.py",
        lambda name: any(
            f".x_{f}__" in name for f in ("caller_of", "read_agent_keys", "agent_keys", "_digest")
        ),
    ),
}


def statuses(source: str, wanted: Callable[[str], bool]) -> dict[str, str]:
    meta = ROOT / "mutants" / f"{source}.meta"
    if not meta.exists():
        return {}
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    return {name: status_by_exit_code[code] for name, code in codes.items() if wanted(name)}


def main(argv: list[str]) -> int:
    show = "--survivors" in argv
    markdown = "--markdown" in argv
    if markdown:
        print("| module | mutants | killed | survived | score |\n|---|---:|---:|---:|---:|")
    else:
        print(f"{'module':48} {'mutants':>8} {'killed':>7} {'survived':>9} {'score':>7}")
    for label, (source, wanted) in MODULES.items():
        found = statuses(source, wanted)
        counted = {n: s for n, s in found.items() if s not in NOT_COUNTED}
        killed = sum(s in KILLED for s in counted.values())
        left = sorted(n for n, s in counted.items() if s not in KILLED)
        score = f"{100 * killed / len(counted):.1f}%" if counted else "-"
        unchecked = len(found) - len(counted)
        note = f"  ({unchecked} not checked)" if unchecked else ""
        if markdown:
            print(f"| `{label}` | {len(counted)} | {killed} | {len(left)} | {score} |")
            continue
        print(f"{label:48} {len(counted):>8} {killed:>7} {len(left):>9} {score:>7}{note}")
        if show:
            for name in left:
                print(f"    {name} ({counted[name]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
