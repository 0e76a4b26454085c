"""The example ratings file is what scripts/make_human_ratings.py writes, not hand-made."""

import subprocess
import sys

from tests.workflow_utils import REPO


def test_script_regenerates_the_example_ratings(tmp_path):
    out = tmp_path / "ratings.csv"
    script = REPO / "scripts" / "make_human_ratings.py"
    subprocess.run([sys.executable, script, "--out", out], cwd=REPO, check=True)
    assert out.read_bytes() == (REPO / "data" / "human_ratings_example.csv").read_bytes()
