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
from ruamel.yaml.scalarstring import LiteralScalarString

from langop_infra._errors import LangopError
from langop_infra.offline.importers import PREFIX, Imported, stack_config


class IntoError(LangopError):
    """The stack file cannot take the import (unreadable, or not a stack file)."""


def _yaml() -> Any:
    """ruamel.yaml's round-trip loader and dumper (the library ships no type hints)."""
    rt: Any = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=4, offset=2)
    return rt


def _key(config: dict[str, object], short: str) -> str:
    """The spelling the file uses for ``short`` (full ``langop-infra:`` key by default)."""
    full = f"{PREFIX}:{short}"
    return short if short in config and full not in config else full


def _same(a: object, b: object) -> bool:
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    left, right = cast("dict[str, Any]", a), cast("dict[str, Any]", b)
    return all(left.get(k) == right.get(k) for k in ("name", "namespace"))


def _merge_list(config: dict[str, object], key: str, new: list[object]) -> None:
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


def _load(path: Path) -> tuple[Any, dict[str, Any]]:
    rt = _yaml()
    try:
        data: Any = rt.load(path.read_text(encoding="utf-8")) if path.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise IntoError(f"{path}: cannot read: {exc}") from None
    except Exception as exc:  # ruamel's parser errors share no public base with a message
        raise IntoError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        data = CommentedMap()
    if not isinstance(data, CommentedMap):
        raise IntoError(f"{path}: expected a stack file (a mapping with config:)")
    document = cast("dict[str, Any]", data)
    if document.get("config") is None:
        document["config"] = CommentedMap()
    if not isinstance(document["config"], CommentedMap):
        raise IntoError(f"{path}: config: expected a mapping of config keys")
    return rt, document


def _blocks(value: object) -> Any:
    """``value`` with each multi-line string a literal block scalar (``|``), as the import
    prints it without ``--into`` and as people write instructions, never one quoted line."""
    if isinstance(value, str) and "\n" in value and _block_safe(value):
        return LiteralScalarString(value)
    if isinstance(value, dict):
        return {k: _blocks(v) for k, v in cast("dict[str, Any]", value).items()}
    if isinstance(value, list):
        return [_blocks(v) for v in cast("list[Any]", value)]
    return value


def _block_safe(text: str) -> bool:
    """Whether a literal block holds ``text`` as is: printable, no carriage returns."""
    return all(c in "\n\t" or c.isprintable() for c in text)


def merged_stack_file(path: Path, out: Imported, namespace: str | None = None) -> str:
    """The text of ``path`` with ``out`` merged in (``path`` itself is not written)."""
    rt, data = _load(path)
    config = cast("dict[str, Any]", data["config"])
    existing_ns = config.get(_key(config, "namespace"))
    imported = _blocks(stack_config(out, namespace or (str(existing_ns) if existing_ns else None)))
    created = config.get(_key(config, "secrets"))
    own_secrets: set[str] = (
        {str(k) for k in cast("dict[Any, Any]", created)} if isinstance(created, dict) else set()
    )
    scalar: Callable[[str], bool] = lambda short: short in ("namespace", "partOf")  # noqa: E731
    for full, value in imported.items():
        short = full.removeprefix(f"{PREFIX}:")
        key = _key(config, short)
        if scalar(short):
            if config.get(key) is None:
                config[key] = value
        elif short == "externalSecrets":
            wanted = [n for n in value if n not in own_secrets]
            have: Any = config.get(key)
            listed = list(cast("list[Any]", have)) if isinstance(have, list) else []
            if wanted:
                _merge_list(config, key, [n for n in wanted if n not in listed])
        else:
            _merge_list(config, key, value)
    buffer = io.StringIO()
    rt.dump(data, buffer)
    return buffer.getvalue()
