"""``langop-infra import``: the resources of the systems langop-infra replaces, as stack
config. One module per system (language-operator, ark, McKinsey's Ark, STOA, kagent,
ToolHive); each turns a manifest into stack-config entries and a note for every field it
cannot carry; checks that need every manifest read run last (``Imported.finishers``).

Nothing here validates: the stack config it gives is checked by ``validate`` like any other.
Secrets are referenced (``secretKeyRef``, ``externalSecrets``), never read or copied.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from langop_infra.offline.importers import (
    _ark as ark,
    _ark_mckinsey as ark_mckinsey,
    _kagent as kagent,
    _language_operator as language_operator,
    _stoa as stoa,
    _toolhive as toolhive,
)
from langop_infra.offline.importers._common import (
    SECTIONS,
    Converter,
    Imported,
    Json,
    Manifest,
    Note,
    mapping,
    note,
)

__all__ = [
    "SYSTEMS",
    "Imported",
    "Manifest",
    "Note",
    "import_manifests",
    "manifest_kind",
    "stack_config",
]

CONVERTERS: dict[tuple[str, str], Converter] = {
    **language_operator.CONVERTERS,
    **ark.CONVERTERS,
    **ark_mckinsey.CONVERTERS,
    **stoa.CONVERTERS,
    **kagent.CONVERTERS,
    **toolhive.CONVERTERS,
}
SYSTEMS = {
    language_operator.GROUP: "language-operator",
    ark.GROUP: "ark",
    ark_mckinsey.GROUP: "McKinsey's Ark",
    stoa.GROUP: "STOA",
    kagent.GROUP: "kagent",
    toolhive.GROUP: "ToolHive",
}
# Read first: what other kinds refer to.
_FIRST = {(kagent.GROUP, "RemoteMCPServer"), (kagent.GROUP, "ModelConfig")}
PREFIX = "langop-infra"


def manifest_kind(document: object) -> str | None:
    """``"<Kind> (<system>)"`` when ``document`` is a manifest ``import`` reads, else None."""
    if not isinstance(document, Mapping) or "apiVersion" not in document:
        return None
    m = Manifest(dict(document), "")  # pyright: ignore[reportUnknownArgumentType]
    if (m.group, m.kind) in CONVERTERS:
        return f"{m.kind} ({SYSTEMS[m.group]})"
    return None


def import_manifests(
    manifests: Iterable[Manifest],
    agent_image: str | None = None,
    tool_images: Mapping[str, str] | None = None,
    tool_commands: Mapping[str, list[str]] | None = None,
) -> Imported:
    """Every manifest converted; one of a kind no importer reads is noted and skipped. The
    user's ``tool_images`` and ``tool_commands`` (by tool name) win over the manifests'."""
    out = Imported(
        agent_image=agent_image,
        tool_images=dict(tool_images or {}),
        tool_commands=dict(tool_commands or {}),
    )
    ordered = sorted(manifests, key=lambda m: (m.group, m.kind) not in _FIRST)
    for m in ordered:
        converter = CONVERTERS.get((m.group, m.kind))
        if converter is None:
            known = ", ".join(sorted({k for _, k in CONVERTERS}))
            note(
                out,
                m,
                "kind",
                f"{m.document.get('apiVersion')} {m.kind or '<none>'} is not a kind import reads",
                f"import reads {known}; skipped",
            )
            continue
        converter(m, out)
    for finish in out.finishers:
        finish(out)
    for tool in out.entries["tools"]:
        if tool["name"] in out.tool_images:
            tool["image"] = out.tool_images[tool["name"]]
        if tool["name"] in out.tool_commands:
            tool["command"] = out.tool_commands[tool["name"]]
    return out


def _stack_namespace(out: Imported, given: str | None) -> str | None:
    if given:
        return given
    if out.cluster_namespace:
        return out.cluster_namespace
    counts = Counter(e["namespace"] for s in SECTIONS for e in out.entries[s] if e.get("namespace"))
    return counts.most_common(1)[0][0] if counts else None


def _place(out: Imported, section: str, entry: Json, namespace: str | None) -> Json:
    """``entry`` with its ``namespace`` key kept only when it differs from the stack's."""
    own = entry.get("namespace")
    placed = {k: v for k, v in entry.items() if k != "namespace"}
    if own and own != namespace:
        if section in ("models", "personas"):
            out.notes.append(
                Note(
                    f"{section}/{entry['name']}",
                    "metadata.namespace",
                    f"{section} live in the stack's namespace ({namespace})",
                    "import them with that namespace's stack",
                )
            )
        else:
            placed = {"name": placed.pop("name"), "namespace": own, **placed}
            if section == "agents" and _imported_models(out, entry):
                out.notes.append(_gateway_note(entry, own, namespace))
    return placed


def _imported_models(out: Imported, agent: Json) -> list[str]:
    """The imported models an agent names."""
    refs: list[Any] = list(agent.get("models") or [])
    names = [agent.get("model"), *(mapping(m).get("name") for m in refs)]
    return [str(m["name"]) for m in out.entries["models"] if m.get("name") in names]


def _gateway_note(agent: Json, own: str, namespace: str | None) -> Note:
    """How an agent outside the stack's namespace reaches its models: a gateway of its own
    namespace, never a route across namespaces (config/checks/_gateway_routes)."""
    return Note(
        f"agents/{agent['name']}",
        "metadata.namespace",
        f"the agent stays in namespace {own}, where the stack runs a second model gateway "
        f"for it (one per namespace whose agents use a gateway model, with the models' keys); "
        f"agents never call another namespace's gateway",
        f"nothing to do; to share the gateway of {namespace}, move the agent there, or set "
        "gateway: false on its models to call the provider directly",
    )


def stack_config(out: Imported, namespace: str | None = None) -> dict[str, Any]:
    """The ``config:`` of a stack file holding what was imported (full keys)."""
    chosen = _stack_namespace(out, namespace)
    config: dict[str, object] = {}
    if chosen:
        config[f"{PREFIX}:namespace"] = chosen
    if out.part_of:
        config[f"{PREFIX}:partOf"] = out.part_of
    for section in SECTIONS:
        placed = [_place(out, section, e, chosen) for e in out.entries[section]]
        if placed:
            config[f"{PREFIX}:{section}"] = placed
    if out.external_secrets:
        config[f"{PREFIX}:externalSecrets"] = list(out.external_secrets)
    return config
