"""Artifact files (selfreflect.fileio, selfreflect.artifacts) as colleagues on shared storage
see them."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from selfreflect import fileio
from selfreflect.artifacts import write_table
from selfreflect.errors import InputError
from selfreflect.fileio import STALE_AFTER, atomic_dir, write_text
from selfreflect.reference_format import read_reference_answers
from tests.test_reference_format import ANSWERS, write_json


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077], ids=oct)
def test_artifacts_get_the_modes_of_the_umask(tmp_path, umask):
    """Colleagues on shared storage can read results (the umask decides, not 0600)."""
    previous = os.umask(umask)
    try:
        write_table("answers", read_reference_answers(write_json(tmp_path / "a.json", ANSWERS)),
                    tmp_path / "a.parquet")  # fmt: skip
        with atomic_dir(tmp_path / "model", "test") as folder:
            (folder / "x").write_text("x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a.parquet").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "model").stat().st_mode) == 0o777 & ~umask


def before_rename(monkeypatch, other: Callable[[], Any], folder: bool = False) -> list[Any]:
    """Run ``other`` (another writer of the same output) once, when this process is about to
    move its first temporary file (``folder``: folder) into place: the race of two writers,
    made deterministic. Returns the list that will hold ``other``'s result."""
    replace, pending, results = os.replace, [other], []

    def pausing(src: str | os.PathLike, dst: str | os.PathLike) -> None:
        if pending and os.path.isdir(src) == folder:
            results.append(pending.pop()())
        replace(src, dst)

    monkeypatch.setattr(fileio.os, "replace", pausing)
    return results


def python(code: str, *args: Any) -> subprocess.CompletedProcess:
    """Run ``code`` in another Python process (``args``: its ``sys.argv[1:]``)."""
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True
    )


WRITE = "import sys; from selfreflect.fileio import write_text; write_text(sys.argv[1], 'B')"
# a writer killed with its temporary file (folder) written, before moving it into place
KILLED_FILE_WRITER = """import os, signal, sys
from selfreflect.fileio import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    tmp.write_text("half")
    os.kill(os.getpid(), signal.SIGKILL)
"""
KILLED_FOLDER_WRITER = """import os, signal, sys
from selfreflect.fileio import atomic_dir
with atomic_dir(sys.argv[1], "test") as tmp:
    (tmp / "half").write_text("half")
    os.kill(os.getpid(), signal.SIG{})
"""


def test_two_writers_of_one_file_both_succeed_and_the_last_wins(tmp_path, monkeypatch):
    """Another process writes the file while this one is about to move its own into place:
    neither deletes the other's temporary file, both succeed, and the later write stays."""
    path = tmp_path / "out.json"
    others = before_rename(monkeypatch, lambda: python(WRITE, path))
    write_text(path, "A")
    [other] = others
    assert other.returncode == 0, other.stderr
    assert path.read_text() == "A"
    assert list(tmp_path.iterdir()) == [path]


def temp_file(folder: Path, name: str, age: float = 0) -> Path:
    """A temporary file ``name`` in ``folder``, last modified ``age`` seconds ago."""
    path = folder / name
    path.write_text("half")
    os.utime(path, (path.stat().st_atime - age,) * 2)
    return path


def test_only_dead_writers_temporary_files_are_removed(tmp_path):
    """A write removes the temporary files of its path that a killed writer of this machine
    left, or that nobody touched for a day (another machine's, or an older version's, whose
    writers it cannot ask); those of live writers, here or elsewhere, stay."""
    path = tmp_path / "out.json"
    killed = python(KILLED_FILE_WRITER, path)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    [dead] = tmp_path.iterdir()
    live = [
        temp_file(tmp_path, f".out.json.{fileio._HOST}.{os.getpid()}.abcdefgh.tmp"),
        temp_file(tmp_path, ".out.json.0123abcd.1.abcdefgh.tmp"),  # another machine's
        temp_file(tmp_path, ".out.json.abcdefgh.tmp"),  # an older version's
        temp_file(tmp_path, ".out.json.other.tmp", age=2 * STALE_AFTER),  # not a temp name
    ]
    old = [
        temp_file(tmp_path, ".out.json.0123abcd.1.bcdefghi.tmp", age=2 * STALE_AFTER),
        temp_file(tmp_path, ".out.json.bcdefghi.tmp", age=2 * STALE_AFTER),
    ]
    write_text(path, "A")
    assert not dead.exists() and not any(p.exists() for p in old)
    assert all(p.exists() for p in live) and path.read_text() == "A"


def test_a_second_writer_of_a_folder_is_refused_while_the_first_holds_it(tmp_path):
    """One writer of a folder at a time: another is refused with one line and touches
    nothing; the first finishes, and leaves nothing beside its folder."""
    path = tmp_path / "out"
    with atomic_dir(path, "test") as first:
        (first / "a").write_text("first")
        refused = pytest.raises(InputError, match="another writer is writing it now")
        with refused, atomic_dir(path, "test"):
            pass
    assert (path / "a").read_text() == "first"
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("signame", ["KILL", "TERM"])
def test_an_interrupted_folder_build_leaves_nothing_after_the_next(tmp_path, signame):
    """A writer killed mid-build (SIGKILL) leaves its temporary folder and lock file; the next
    build of the folder removes them. One stopped with SIGTERM removes its own."""
    path = tmp_path / "out"
    killed = python(KILLED_FOLDER_WRITER.format(signame), path)
    assert killed.returncode == -getattr(signal, f"SIG{signame}"), killed.stderr
    assert not path.exists()
    if signame == "TERM":
        assert list(tmp_path.iterdir()) == []
    with atomic_dir(path, "test") as folder:
        (folder / "a").write_text("whole")
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize(
    "write",
    [lambda path: write_text(path, "x"), lambda path: atomic_dir(path, "t").__enter__()],
    ids=["file", "folder"],
)
def test_a_file_where_a_folder_above_an_output_should_be_is_named(tmp_path, write):
    (tmp_path / "results").write_text("")  # the system says only "File exists"
    out = tmp_path / "results" / "run" / "out"
    with pytest.raises(InputError) as err:
        write(out)
    assert str(err.value) == f"{out}: cannot write here ({tmp_path / 'results'} is not a folder)"


HOLD = """import sys
from selfreflect.fileio import write_text_held
assert write_text_held(sys.argv[1], "header a\\nsettings\\n")
print("held", flush=True)
sys.stdin.read()
"""


def test_a_held_file_is_rewritten_only_when_no_other_process_holds_it(tmp_path):
    """write_text_held: while another process holds the file, other text is refused (False,
    nothing written) unless ``compatible`` accepts what it holds; once that process has ended,
    the file is rewritten."""
    from selfreflect.fileio import write_text_held

    path = tmp_path / "logs" / "config.yaml"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout.readline() == b"held\n"
        assert not write_text_held(path, "header a\nother\n")
        assert write_text_held(path, "header b\nsettings\n", lambda held: "settings" in held)
        assert path.read_text() == "header a\nsettings\n"
    finally:
        holder.communicate(b"")
    assert write_text_held(path, "header a\nother\n")
    assert path.read_text() == "header a\nother\n"
