"""``import --into``: imported config merged into an existing stack file, keeping its
comments, key order, quoting and every key the import does not touch (``ruamel.yaml``'s
round trip; PyYAML drops comments).

Lists merge by ``name``: an entry of the same name (and namespace) is replaced, others are
appended. ``namespace`` and ``partOf`` are set only when the file has none. A Secret the
file creates under ``secrets`` is not listed again in ``externalSecrets``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from langop_infra._errors import LangopError
from langop_infra.offline.importers import PREFIX, Imported, stack_config


class IntoError(LangopError):
    """The stack file cannot take the import (unreadable, or not a stack file)."""


def _yaml() -> YAML:
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=4, offset=2)
    return rt


def _key(config: CommentedMap, short: str) -> str:
    """The spelling the file uses for ``short`` (full ``langop-infra:`` key by default)."""
    full = f"{PREFIX}:{short}"
    return short if short in config and full not in config else full


def _same(a: Any, b: Any) -> bool:
    return (
        isinstance(a, dict)
        and isinstance(b, dict)
        and a.get("name") == b.get("name")  # pyright: ignore[reportUnknownMemberType]
        and a.get("namespace") == b.get("namespace")  # pyright: ignore[reportUnknownMemberType]
    )


def _merge_list(config: CommentedMap, key: str, new: list[Any]) -> None:
    existing = config.get(key)
    if not isinstance(existing, list):
        config[key] = CommentedSeq(new)
        return
    seq = cast("list[Any]", existing)
    for entry in new:
        at = next((i for i, old in enumerate(seq) if _same(old, entry)), None)
        if at is None:
            seq.append(entry)
        else:
            seq[at] = entry


def _load(path: Path) -> tuple[YAML, CommentedMap]:
    rt = _yaml()
    try:
        data = rt.load(path.read_text(encoding="utf-8")) if path.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise IntoError(f"{path}: cannot read: {exc}") from None
    except Exception as exc:  # ruamel's parser errors share no public base with a message
        raise IntoError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        data = CommentedMap()
    if not isinstance(data, CommentedMap):
        raise IntoError(f"{path}: expected a stack file (a mapping with config:)")
    if data.get("config") is None:
        data["config"] = CommentedMap()
    if not isinstance(data["config"], CommentedMap):
        raise IntoError(f"{path}: config: expected a mapping of config keys")
    return rt, data


def merged_stack_file(path: Path, out: Imported, namespace: str | None = None) -> str:
    """The text of ``path`` with ``out`` merged in (``path`` itself is not written)."""
    rt, data = _load(path)
    config = cast("CommentedMap", data["config"])
    ns_key = _key(config, "namespace")
    imported = stack_config(out, namespace or config.get(ns_key))
    created = config.get(_key(config, "secrets"))
    own_secrets = set(cast("dict[str, Any]", created)) if isinstance(created, dict) else set()
    scalar: Callable[[str], bool] = lambda short: short in ("namespace", "partOf")  # noqa: E731
    for full, value in imported.items():
        short = full.removeprefix(f"{PREFIX}:")
        key = _key(config, short)
        if scalar(short):
            if config.get(key) is None:
                config[key] = value
        elif short == "externalSecrets":
            wanted = [n for n in value if n not in own_secrets]
            have = config.get(key)
            listed = list(cast("list[Any]", have)) if isinstance(have, list) else []
            if wanted:
                _merge_list(config, key, [n for n in wanted if n not in listed])
        else:
            _merge_list(config, key, value)
    buffer = io.StringIO()
    rt.dump(data, buffer)
    return buffer.getvalue()
