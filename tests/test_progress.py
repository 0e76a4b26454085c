"""Progress lines of long jobs (selfreflect.progress)."""

import logging

from selfreflect.progress import name_job, progress, shard_part


def test_progress_lines_count_done_and_total(caplog):
    caplog.set_level(logging.INFO)
    name_job()  # none (a command run in this process before may have named its own)
    assert list(progress("abc", "letters", 3, every=0)) == ["a", "b", "c"]
    lines = [r.getMessage() for r in caplog.records if r.name == "selfreflect.progress"]
    assert [line.split(",")[0] for line in lines] == [
        "letters: 1/3 (33%)",
        "letters: 2/3 (67%)",
        "letters: 3/3 (100%)",
    ]
    assert all("elapsed, about" in line for line in lines)


def test_a_named_jobs_lines_begin_with_its_name(caplog):
    """A workflow's terminal shows its jobs' lines interleaved: each says whose it is."""
    caplog.set_level(logging.INFO)
    try:
        name_job("nq/qwen", "judge qwen", *shard_part(3, 8))
        list(progress("ab", "judging: questions", 2, every=60))
    finally:
        name_job()
    [line] = [r.getMessage() for r in caplog.records if r.name == "selfreflect.progress"]
    assert line.startswith("nq/qwen judge qwen shard 3: judging: questions: 2/2 (100%)")
    assert shard_part(0, 1) == ()
