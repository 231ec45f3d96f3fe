"""A Secret volume laid out on disk as the kubelet's atomic writer does it, for code that
reads mounted Secrets (the model gateway's agent keys)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path


def write_secret_mount(root: Path, keys: Mapping[str, bytes]) -> Path:
    """Lay out, or update, ``root`` as the kubelet does: the files in a new ``..<stamp>``
    folder, ``..data`` swapped to it by a rename, one symlink per key through ``..data``;
    then the symlinks of removed keys and the old folder are deleted."""
    root.mkdir(parents=True, exist_ok=True)
    data = root / "..data"
    old = os.readlink(data) if data.is_symlink() else None
    folder = Path(tempfile.mkdtemp(prefix="..", dir=root))
    for name, value in keys.items():
        (folder / name).write_bytes(value)
    swap = root / "..data_tmp"
    os.symlink(folder.name, swap)
    os.replace(swap, data)
    for name in keys:
        if not (root / name).is_symlink():
            os.symlink(f"..data/{name}", root / name)
    for entry in os.listdir(root):
        if not entry.startswith(".") and entry not in keys:
            os.unlink(root / entry)
    if old is not None:
        shutil.rmtree(root / old)
    return root
