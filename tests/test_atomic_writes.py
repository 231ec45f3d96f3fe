"""Every file the CLI writes is whole or untouched (issue 49 §5): ``import --into`` killed
with SIGKILL at random moments, and the moment the stack file first changes, leaves it either
as it was or as the import makes it, never cut; a read-only target, a full disk or an
unwritable folder is one line and exit 2, the file as it was; the mode and a symlink stay.

Before: ``import --into`` wrote in place (``write_text``): a kill after the truncation left
a cut or empty stack file, a failed write truncated it, and a read-only file was written over
(by root) or gave a traceback.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from langop_infra.cli.main import main
from langop_infra.core import _atomic
from langop_infra.core._atomic import WriteError, write_atomically

MANIFEST = Path(__file__).parent / "fixtures" / "import" / "seed000-deployment-pattern.yaml"
# Large enough that writing it takes a while: a kill can land mid-write.
FILLER = "".join(f"# filler line {i} " + "x" * 80 + "\n" for i in range(20000))
OLD = "# the dev stack\n" + FILLER + "config:\n  langop-infra:namespace: apps\n"


def import_into(stack: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "langop_infra", "import", str(MANIFEST), "--into", str(stack)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def fingerprint(path: Path) -> tuple[int, int, int]:
    found = path.stat()
    return found.st_ino, found.st_size, found.st_mtime_ns


def kill_at_first_change(stack: Path) -> None:
    """Watch the stack file and SIGKILL the writer as soon as anything about it changes."""
    before = fingerprint(stack)
    process = import_into(stack)
    while process.poll() is None:
        if fingerprint(stack) != before:
            process.send_signal(signal.SIGKILL)
            break
    process.wait()


def kill_at_random(stack: Path, rng: random.Random) -> None:
    process = import_into(stack)
    try:
        process.wait(timeout=rng.uniform(0.2, 3.0))
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()


@pytest.mark.slow
def test_sigkill_never_leaves_a_cut_stack_file(tmp_path: Path) -> None:
    reference = tmp_path / "reference" / "Pulumi.dev.yaml"
    reference.parent.mkdir()
    reference.write_text(OLD)
    assert import_into(reference).wait() == 0
    new = reference.read_text()
    assert new != OLD and new.startswith(OLD[:1000])
    stack = tmp_path / "Pulumi.dev.yaml"
    rng = random.Random(49)
    seen: list[str] = []
    for trial in range(9):
        stack.write_text(OLD)
        if trial % 3 == 0:
            kill_at_first_change(stack)
        else:
            kill_at_random(stack, rng)
        text = stack.read_text()
        seen.append("old" if text == OLD else "new" if text == new else f"cut:{len(text)}")
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert all(state in ("old", "new") for state in seen), seen


def test_a_read_only_stack_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(OLD)
    stack.chmod(0o444)
    assert main(["import", str(MANIFEST), "--into", str(stack)]) == 2
    assert capsys.readouterr().err == (
        f"langop-infra import: error: {stack}: read-only (mode 0444); make it writable "
        "(chmod u+w) or write elsewhere\n"
    )
    assert stack.read_text() == OLD


def test_a_full_disk_leaves_the_stack_file_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(OLD)

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    assert main(["import", str(MANIFEST), "--into", str(stack)]) == 2
    monkeypatch.undo()
    assert capsys.readouterr().err == (
        f"langop-infra import: error: {stack}: cannot write: No space left on device; "
        "it is left as it was\n"
    )
    assert stack.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Pulumi.dev.yaml"]


def test_an_unwritable_folder_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root ignores a folder's mode bits, so the refusal the kernel gives others (EACCES
    when the temporary file is made) is played here."""

    def refused(folder: Path, fallback: Path) -> tuple[int, bool]:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(_atomic, "_open_unnamed", refused)
    target = tmp_path / "x.yaml"
    target.write_text("old\n")
    with pytest.raises(WriteError) as caught:
        write_atomically(target, b"new\n")
    assert str(caught.value) == f"{target}: cannot write: Permission denied; it is left as it was"
    assert target.read_text() == "old\n"


def test_the_mode_and_a_symlink_stay(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(OLD)
    real.chmod(0o640)
    link = tmp_path / "Pulumi.dev.yaml"
    link.symlink_to(real)
    assert main(["import", str(MANIFEST), "--into", str(link)]) == 0
    assert link.is_symlink() and "mem0-memory" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh.yaml"
    write_atomically(fresh, b"x")
    assert fresh.read_bytes() == b"x"
    with pytest.raises(WriteError, match="not a regular file; name a file to write"):
        write_atomically(tmp_path, b"x")
