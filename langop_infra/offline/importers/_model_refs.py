"""language-operator's model names and references as stack names that validate: a
LanguageModel's name is a DNS-1123 subdomain (``gpt-3.5-turbo``), a stack model's a label
(``gpt-3-5-turbo``); its own name, each ``fallbacks[].modelRef`` and each agent's model
reference are renamed alike, and a fallback to a model the import did not read is dropped
with a note (the gateway would otherwise be refused by ``validate``)."""

from __future__ import annotations

from langop_infra.offline.importers._common import (
    Imported,
    Json,
    Manifest,
    items,
    mapping,
    note,
    stack_label,
)


def model_name(out: Imported, m: Manifest, path: str, name: object) -> str:
    """``name`` as a stack name; renaming it leaves a note at ``path``."""
    label = stack_label(str(name or ""))
    if label != name:
        note(
            out,
            m,
            path,
            f"{name!r} is a Kubernetes name but not a stack name (a DNS-1123 label)",
            f"renamed {label!r}; references to it are renamed alike",
        )
    return label


def fallbacks(out: Imported, m: Manifest) -> list[str]:
    """``spec.fallbacks`` as stack names, in order; ``conditions`` noted (the gateway falls
    back on any failure); the ones no imported model answers are dropped once all is read."""
    names: list[str] = []
    for i, fallback in enumerate(map(mapping, items(m.spec.get("fallbacks")))):
        path = f"spec.fallbacks[{i}]"
        names.append(model_name(out, m, f"{path}.modelRef", fallback.get("modelRef")))
        if fallback.get("conditions"):
            note(
                out,
                m,
                f"{path}.conditions",
                "the gateway falls back on any failed call here, not on chosen conditions",
                "nothing to set; LiteLLM retries, then tries the fallbacks in order",
            )
    own = stack_label(m.name)
    out.finishers.append(lambda done: _drop_unknown(done, m, own))
    return names


def _drop_unknown(out: Imported, m: Manifest, own: str) -> None:
    models: list[Json] = out.entries["models"]
    known = {str(e.get("name")) for e in models}
    for entry in models:
        if entry.get("name") != own or entry.get("namespace") != m.namespace:
            continue
        kept = [f for f in entry.get("fallbacks", []) if f in known]
        for i, name in enumerate(entry.get("fallbacks", [])):
            if name not in known:
                note(
                    out,
                    m,
                    f"spec.fallbacks[{i}].modelRef",
                    f"LanguageModel {name!r} was not among the imported files",
                    "dropped; import it in the same run to keep the fallback",
                )
        if kept:
            entry["fallbacks"] = kept
        else:
            entry.pop("fallbacks", None)
