"""Progress lines of long jobs (selfreflect.progress)."""

import logging

from selfreflect.progress import progress


def test_progress_lines_count_done_and_total(caplog):
    caplog.set_level(logging.INFO)
    assert list(progress("abc", "letters", 3, every=0)) == ["a", "b", "c"]
    lines = [r.getMessage() for r in caplog.records if r.name == "selfreflect.progress"]
    assert [line.split(",")[0] for line in lines] == [
        "letters: 1/3 (33%)",
        "letters: 2/3 (67%)",
        "letters: 3/3 (100%)",
    ]
    assert all("elapsed, about" in line for line in lines)
