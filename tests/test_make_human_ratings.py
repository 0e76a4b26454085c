"""The example ratings file is what ``selfreflect bench human-ratings`` writes, not hand-made."""

from tests.workflow_utils import REPO, run


def test_command_regenerates_the_example_ratings(tmp_path):
    out = tmp_path / "ratings.csv"
    run(["selfreflect", "bench", "human-ratings", "--out", str(out)], REPO)
    assert out.read_bytes() == (REPO / "data" / "human_ratings_example.csv").read_bytes()
