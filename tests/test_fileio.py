"""Artifact files (selfreflect.fileio, selfreflect.artifacts) as colleagues on shared storage
see them."""

from __future__ import annotations

import os
import stat

import pytest

from selfreflect.artifacts import write_table
from selfreflect.fileio import atomic_dir
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
