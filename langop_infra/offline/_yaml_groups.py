"""The Kubernetes objects a ``pulumi_kubernetes`` YAML group holds, as the provider creates
them at ``pulumi up``: what the mock engine registers in their place, so ``render`` shows
them and ``check`` judges them (issue 49 §6).

- yaml/v2 ``ConfigGroup`` (``yaml``, ``objs``, ``files``) and ``ConfigFile`` (``file``) are
  components the provider builds: the program registers only the component, with its inputs.
  Each object becomes a child ``kubernetes:<group>/<version>:<Kind>`` named
  ``<resourcePrefix>:<namespace>/<name>`` (the prefix defaults to the component's name).
- The v1 ``ConfigGroup``/``ConfigFile`` decode their text by invoking
  ``kubernetes:yaml:decode`` and register the objects themselves: :func:`decoded` answers it.

Text is read with the bounded loader config files use. A value not known yet (an Output at
preview) holds no objects here, as nothing can be read from it.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from langop_infra.core import _yaml_io as yaml_io

__all__ = ["CONFIG_FILE", "CONFIG_GROUP", "GROUP_TYPES", "children", "decoded", "type_token"]

CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
GROUP_TYPES = frozenset({CONFIG_GROUP, CONFIG_FILE})


def type_token(api_version: str, kind: str) -> str:
    """``v1`` ConfigMap: ``kubernetes:core/v1:ConfigMap``; ``apps/v1``: ``kubernetes:apps/v1:…``."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{kind}"


def decoded(text: str) -> list[dict[str, object]]:
    """What ``kubernetes:yaml:decode`` gives for ``text``: its objects, ``List`` items
    flattened, empty documents left out."""
    return list(_objects(yaml_io.load_config_all(text.encode())))


def children(
    type_: str, name: str, inputs: Mapping[str, Any], cwd: Path
) -> list[tuple[str, str, dict[str, object]]]:
    """``(type, name, object)`` of each object the group at ``type_`` holds."""
    prefix = inputs.get("resourcePrefix")
    prefix = prefix if isinstance(prefix, str) else name
    made: list[tuple[str, str, dict[str, object]]] = []
    for obj in _group_objects(type_, inputs, cwd):
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            continue
        metadata: object = obj.get("metadata")
        meta: Mapping[str, object] = (
            cast("Mapping[str, object]", metadata) if isinstance(metadata, Mapping) else {}
        )
        own = str(meta.get("name") or "")
        namespace = meta.get("namespace")
        local = f"{namespace}/{own}" if isinstance(namespace, str) and namespace else own
        made.append((type_token(api_version, kind), f"{prefix}:{local}" if prefix else local, obj))
    return made


def _group_objects(type_: str, inputs: Mapping[str, Any], cwd: Path) -> Iterator[dict[str, object]]:
    texts: list[str] = []
    if type_ == CONFIG_FILE:
        texts += _read(cwd, inputs.get("file"))
    else:
        texts += [t for t in _listed(inputs.get("yaml")) if isinstance(t, str)]
        for pattern in _listed(inputs.get("files")):
            texts += _read(cwd, pattern)
        yield from _objects(_listed(inputs.get("objs")))
    for text in texts:
        yield from decoded(text)


def _listed(value: object) -> list[object]:
    """A list input as a list; one value as a list of it (``yaml`` takes a string)."""
    if isinstance(value, list):
        return list(cast("list[object]", value))
    return [] if value is None else [value]


def _read(cwd: Path, pattern: object) -> list[str]:
    """The text of each file ``pattern`` names (a glob, relative to the program's folder);
    a URL is not fetched."""
    if not isinstance(pattern, str) or "://" in pattern:
        return []
    full = pattern if Path(pattern).is_absolute() else str(cwd / pattern)
    return [Path(p).read_text(encoding="utf-8") for p in sorted(glob.glob(full))]


def _objects(items: list[object]) -> Iterator[dict[str, object]]:
    for item in items:
        if not isinstance(item, dict):
            continue
        obj = cast("dict[str, object]", item)
        inner = obj.get("items")
        if str(obj.get("kind", "")).endswith("List") and isinstance(inner, list):
            yield from _objects(cast("list[object]", inner))
        else:
            yield obj
