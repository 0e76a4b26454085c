"""The docs renderer (selfreflect.docs): its one table helper, its templates' environment and
its --check."""

from __future__ import annotations

import click
import pandas as pd
import pytest

from selfreflect.docs import publish, render
from selfreflect.docs.tables import frame_table, p_text, table
from tests.workflow_utils import REPO, run


def test_a_table_aligns_text_left_and_numbers_right_unless_told():
    assert table(["name", "n"], [["a|b", 3], ["c\n d", 4]]) == (
        "| name | n |\n| --- | ---: |\n| a\\|b | 3 |\n| c d | 4 |"
    )
    assert table(["n", "share"], [[1, "50%"]], align="rr").splitlines()[1] == "| ---: | ---: |"


@pytest.mark.parametrize(
    ("p", "shown"),
    [(0.0496, "0.0496"), (0.0504, "0.0504"), (0.05, "0.05"), (0.0501, "0.0501"),
     (0.049, "0.049"), (0.23, "0.23"), (1.0, "1"), (3.3e-07, "3.3e-07"), (0.04996, "0.04996")],
)  # fmt: skip
def test_a_p_value_shows_its_side_of_the_level(p, shown):
    """Two significant digits, more where fewer would round it onto the level or across it."""
    assert p_text(p, 0.05) == shown


def test_a_frame_table_is_tabulates_pipe_table_with_its_index():
    frame = pd.DataFrame({"x": [1.5, 2.0]}, index=pd.Index(["a", "b"], name="rule"))
    assert frame_table(frame).splitlines() == [
        "| rule   |   x |",
        "|:-------|----:|",
        "| a      | 1.5 |",
        "| b      | 2   |",
    ]


def test_a_template_refuses_a_missing_name():
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render("performance/tokens.md.j2", tokens="")


def test_check_writes_nothing_and_names_the_command(tmp_path):
    page = tmp_path / "page.md"
    with pytest.raises(click.ClickException, match=r"page\.md: stale; run selfreflect docs x"):
        publish(page, "text\n", check=True, command="docs x")
    assert not page.exists()
    publish(page, "text\n", check=False, command="docs x")
    publish(page, "text\n", check=True, command="docs x")
    assert page.read_text() == "text\n"


@pytest.mark.parametrize("name", ["real-model", "finetuning", "power", "configs"])
def test_a_committed_page_is_what_its_json_renders(name):
    """(docs scale, performance and science are checked beside their benchmarks' tests.)"""
    run(["selfreflect", "docs", name, "--check"], REPO)


def test_the_power_page_renders_from_what_bench_power_records(tmp_path):
    small = ["--questions", "5", "--n-answers", "3", "--trials", "4", "--strategy-trials", "50"]
    small += ["--config", str(REPO / "config" / "science.yaml"), "--json", str(tmp_path / "p.json")]
    run(["selfreflect", "bench", "power", *small], tmp_path)
    files = ["--out", str(tmp_path / "p.md"), "--figure", str(tmp_path / "p.png")]
    run(["selfreflect", "docs", "power", "--json", str(tmp_path / "p.json"), *files], REPO)
    page = (tmp_path / "p.md").read_text()
    assert "| questions | perfect, N = 3 | random, N = 3 |\n| ---: | ---: | ---: |\n| 5 |" in page
    assert "share of 4 simulated studies" in page
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
