"""``schemas --update`` writes the lock atomically, keeps its file mode and leaves no
temporary file behind, also when the process is killed with SIGKILL mid-write (#36 §5)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from langop_infra.sync._lock import LockEntry, load_lock, save_lock

ENTRIES = {"memory": LockEntry.from_tools([{"name": "recall", "inputSchema": {"type": "object"}}])}

# The child writes a lock, but SIGKILLs itself at ``STEP`` (an os function save_lock's write
# calls): the worst moments a kill can come.
CHILD = """
import os, signal, sys
from langop_infra.sync._lock import LockEntry, save_lock
step = sys.argv[2]
real = getattr(os, step)
def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(os, step, killed)
tools = [{"name": f"t{i}", "description": "x" * 200} for i in range(2000)]
save_lock(sys.argv[1], {"big": LockEntry.from_tools(tools)})
"""


def leftovers(folder: Path, keep: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != keep)


def kill_during(lock: Path, step: str) -> int:
    done = subprocess.run([sys.executable, "-c", CHILD, str(lock), step], check=False)
    return done.returncode


def test_the_lock_keeps_its_mode(tmp_path: Path) -> None:
    lock = tmp_path / "schemas.lock.yaml"
    save_lock(lock, ENTRIES)
    os.chmod(lock, 0o644)
    save_lock(lock, ENTRIES)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o644
    os.chmod(lock, 0o664)
    save_lock(lock, ENTRIES)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o664
    assert leftovers(tmp_path, lock.name) == []


def test_a_new_lock_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        save_lock(tmp_path / "new.lock.yaml", ENTRIES)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.lock.yaml").stat().st_mode) == 0o644


def test_sigkill_mid_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    lock = tmp_path / "schemas.lock.yaml"
    save_lock(lock, ENTRIES)
    before = lock.read_bytes()
    assert kill_during(lock, "fsync") == -signal.SIGKILL  # written, not yet named
    assert leftovers(tmp_path, lock.name) == []
    assert lock.read_bytes() == before


def test_a_leftover_of_a_kill_before_the_rename_goes_with_the_next_write(tmp_path: Path) -> None:
    lock = tmp_path / "schemas.lock.yaml"
    save_lock(lock, ENTRIES)
    os.chmod(lock, 0o644)
    assert kill_during(lock, "replace") == -signal.SIGKILL
    assert load_lock(lock) == ENTRIES  # the old lock, whole
    save_lock(lock, ENTRIES)
    assert leftovers(tmp_path, lock.name) == []
    assert stat.S_IMODE(lock.stat().st_mode) == 0o644
