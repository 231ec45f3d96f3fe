"""The one way the CLI writes a file: whole or not at all.

:func:`write_atomically` writes to a file in the target's folder, fsyncs it, and renames it
over the target, keeping the target's mode; a SIGKILL, a full disk or a failed write at any
moment leaves the old file as it was. Every file a command writes (``import --into``, the
schema lock, ``render --output-dir``) goes through it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from langop_infra._errors import LangopError

__all__ = ["WriteError", "write_atomically"]


class WriteError(LangopError):
    """A file could not be written; the message names it, the reason and the fix."""


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (a symlink's target, so the link stays), keeping its
    mode; :class:`WriteError` when the target is read-only or cannot be written."""
    path = path.resolve() if path.is_symlink() else path
    mode = _mode_for(path)
    try:
        _replace(path, data, mode)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise WriteError(f"{path}: cannot write: {reason}; it is left as it was") from None


def _mode_for(path: Path) -> int:
    """The target's mode (a new file gets the umask's); a read-only target is refused, as
    ``open`` would refuse it to anyone but root: renaming over it would ignore that."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
    except OSError as exc:
        raise WriteError(f"{path}: cannot write: {exc.strerror}") from None
    if not path.is_file():
        raise WriteError(f"{path}: not a regular file; name a file to write")
    if not mode & 0o222:
        raise WriteError(
            f"{path}: read-only (mode {mode:04o}); make it writable (chmod u+w) or write elsewhere"
        )
    return mode


def _replace(path: Path, data: bytes, mode: int) -> None:
    """The data goes to an unnamed file (``O_TMPFILE``) that a SIGKILL takes with it, then
    linked as ``.<name>.langop-tmp`` and renamed over ``path``; a leftover of that name (a
    kill between link and rename) is removed by the next write. Without ``O_TMPFILE`` the
    named file is written directly."""
    temporary = path.with_name(f".{path.name}.langop-tmp")
    temporary.unlink(missing_ok=True)
    fd, unnamed = _open_unnamed(path.parent, temporary)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
        if unnamed:
            _link_unnamed(fd, temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (a power cut after it keeps the new name)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a folder; the rename itself is atomic
    finally:
        os.close(fd)


def _link_unnamed(fd: int, name: Path) -> None:
    """Give the unnamed file ``fd`` the name ``name`` (``linkat`` with AT_SYMLINK_FOLLOW:
    os.link uses it only when given a directory fd)."""
    root = os.open("/", os.O_RDONLY)
    try:
        os.link(f"/proc/self/fd/{fd}", name, src_dir_fd=root, follow_symlinks=True)
    finally:
        os.close(root)


def _open_unnamed(folder: Path, fallback: Path) -> tuple[int, bool]:
    """An unnamed file in ``folder`` where the system has them, else ``fallback`` opened."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and Path("/proc/self/fd").is_dir():
        try:
            return os.open(folder, flag | os.O_WRONLY, 0o600), True
        except OSError:
            pass  # a filesystem without O_TMPFILE support
    return os.open(fallback, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o600), False
