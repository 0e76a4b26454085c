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

import pandas as pd
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


def test_a_failed_write_leaves_the_earlier_file_and_no_temporary_file(tmp_path):
    """A write whose block fails (here after writing half its file) raises, leaves the earlier
    file as it was, and leaves no temporary file beside it (this live process's would never be
    swept)."""
    path = tmp_path / "out.json"
    write_text(path, "earlier")

    def half(tmp: Path) -> None:
        tmp.write_text("half")
        raise ValueError("the writer failed")

    with pytest.raises(ValueError, match="the writer failed"):
        fileio.write_atomic(path, half)
    assert path.read_text() == "earlier"
    assert list(tmp_path.iterdir()) == [path]


def test_another_machines_temporary_file_is_kept_whatever_its_pid(tmp_path):
    """A fresh temporary file of another machine's writer stays even where no process of this
    machine has its pid: pids are only asked about on the machine that wrote the file."""
    no_such_pid = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    theirs = temp_file(tmp_path, f".out.json.0123abcd.{no_such_pid}.abcdefgh.tmp")
    write_text(tmp_path / "out.json", "A")
    assert theirs.exists()


def test_malformed_json_is_named_with_its_line(tmp_path):
    """read_json's one line names the line of the error (not its column)."""
    path = tmp_path / "bad.json"
    path.write_text('{\n  "a": 1,\n  "b":\n}\n')
    with pytest.raises(InputError) as err:
        fileio.read_json(path)
    assert str(err.value) == f"{path}: malformed JSON at line 4: Expecting value"


def test_json_and_yaml_saved_with_a_byte_order_mark_are_read(tmp_path):
    """A file an editor saved with a UTF-8 byte order mark reads as the same file without it."""
    (tmp_path / "a.json").write_bytes(b'\xef\xbb\xbf{"a": [1, 2]}\n')
    (tmp_path / "a.yaml").write_bytes(b"\xef\xbb\xbfa: [1, 2]\n")
    assert fileio.read_json(tmp_path / "a.json") == {"a": [1, 2]}
    assert fileio.read_yaml(tmp_path / "a.yaml") == {"a": [1, 2]}


def test_a_link_is_not_replaced_even_to_an_empty_folder(tmp_path):
    """A link to a folder is refused before the block runs, whatever its target holds: the
    target stays as it was."""
    (tmp_path / "target").mkdir()
    out = tmp_path / "out"
    out.symlink_to(tmp_path / "target")
    refused = pytest.raises(InputError, match="exists and is not a folder test wrote; not")
    with refused, atomic_dir(out, "test") as folder:
        (folder / "a").write_text("a")
    assert out.is_symlink() and list((tmp_path / "target").iterdir()) == []


def test_a_file_a_person_put_in_an_own_output_folder_is_not_deleted(tmp_path):
    """An output folder the command wrote, with a file added since: the next build is refused,
    naming that file, which stays (the marker lists what the command wrote)."""
    out = tmp_path / "out"
    with atomic_dir(out, "test") as folder:
        (folder / "a").write_text("first")
    (out / "notes.txt").write_text("mine")
    refused = pytest.raises(InputError, match=r"holds notes\.txt, which test did not write")
    with refused, atomic_dir(out, "test") as folder:
        (folder / "a").write_text("second")
    assert (out / "notes.txt").read_text() == "mine" and (out / "a").read_text() == "first"


def test_a_file_put_in_the_output_folder_while_it_is_built_is_not_deleted(tmp_path):
    """A file put in the earlier output while the new one is built: the swap is refused (the
    folder is checked again before it is replaced) and the file stays; no temporary folder."""
    out = tmp_path / "out"
    with atomic_dir(out, "test") as folder:
        (folder / "a").write_text("first")
    refused = pytest.raises(InputError, match=r"holds notes\.txt, which test did not write")
    with refused, atomic_dir(out, "test") as folder:
        (folder / "a").write_text("second")
        (out / "notes.txt").write_text("mine")
    assert (out / "notes.txt").read_text() == "mine" and (out / "a").read_text() == "first"
    assert list(tmp_path.iterdir()) == [out]


def test_a_folder_holding_the_working_directory_is_not_replaced(tmp_path, monkeypatch):
    """Even an empty output folder is refused while the working directory lies in it."""
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    with pytest.raises(InputError, match="holds the working directory; test does not replace"):
        fileio.check_replaceable(out, "test")


def test_a_frame_lacking_a_column_of_its_kind_is_refused_naming_it(tmp_path):
    """write_table names the columns a frame lacks (a later field excepted) and writes
    nothing."""
    answers = read_reference_answers(write_json(tmp_path / "a.json", ANSWERS))
    answers = answers.drop(columns=["seed"])
    with pytest.raises(ValueError, match=r"^answers table lacks columns \['seed'\]$"):
        write_table("answers", answers, tmp_path / "a.parquet")
    assert not (tmp_path / "a.parquet").exists()


def test_a_null_read_a_batch_at_a_time_is_named_with_its_row_in_the_file(tmp_path):
    """read_frames checks each batch as it comes; a null where every row holds a value is
    named with its row in the whole file, past the first batch too."""
    from selfreflect.artifacts import ROW_BATCH, read_frames

    rows = ROW_BATCH + 10
    frame = pd.DataFrame({"id": [f"q{i}" for i in range(rows)], "question": "Q?"})
    frame.loc[ROW_BATCH + 6, "question"] = None
    frame = frame.assign(dataset="d", source_index=range(rows), choices=None, gold=None)
    write_table("questions", frame, tmp_path / "q.parquet")
    with pytest.raises(InputError) as err:
        list(read_frames("questions", tmp_path / "q.parquet", ["id", "question"]))
    row = ROW_BATCH + 6
    expected = f"{tmp_path / 'q.parquet'}: field 'question' is empty in row {row} (id q{row})"
    assert str(err.value) == expected


def test_a_filtered_read_gives_only_the_rows_holding_every_value_asked_for(tmp_path):
    """read_table's ``where``: the rows whose columns hold all its values, in file order."""
    from selfreflect.artifacts import read_table

    keys = [("d", "a"), ("d", "b"), ("e", "a"), ("d", "a")]
    frame = pd.DataFrame(
        {"id": [f"q{i}" for i in range(4)], "dataset": [d for d, _ in keys]}
    ).assign(question="Q?", subject="s", strategy=[s for _, s in keys], summary="x")
    frame = frame.assign(summarizer="m", prompt_tokens=1, completion_tokens=1, seconds=0.0)
    write_table("summaries", frame.assign(error=None), tmp_path / "s.parquet")
    read = read_table("summaries", tmp_path / "s.parquet", where={"dataset": "d", "strategy": "a"})
    assert read["id"].tolist() == ["q0", "q3"]


def test_a_table_labelled_with_two_experiments_is_refused(tmp_path):
    """one_label: a table whose rows name two datasets is not one experiment's; one is."""
    from selfreflect.artifacts import one_label

    table = pd.DataFrame({"dataset": ["d", "e", None]})
    with pytest.raises(InputError, match=r"^q\.parquet: dataset: several values \['d', 'e'\]"):
        one_label(table, "dataset", "q.parquet")
    assert one_label(table.iloc[[0, 2]], "dataset", "q.parquet") == "d"


@pytest.mark.parametrize("folder", ["results", "reports"])
def test_an_unreadable_workflow_artifact_says_how_to_make_it_again(tmp_path, monkeypatch, folder):
    """A file cut short under the workflow's folders looks up to date to Snakemake: its one
    line says how to have it made again."""
    from selfreflect.artifacts import read_table

    monkeypatch.chdir(tmp_path)
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "a.parquet").write_bytes(b"PAR1 cut short")
    with pytest.raises(InputError, match=r"not a readable Parquet file") as err:
        read_table("answers", f"{folder}/a.parquet")
    assert str(err.value).endswith(f"; `snakemake --forcerun {folder}/a.parquet` makes it again")
