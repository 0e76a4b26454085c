"""The explorer of the smoke run: its data, and its pages in a real headless Chromium (the
system's, driven by Playwright): offline, searchable, sortable, words coloured by distance, a
question's data file loaded only when it is opened. Screenshots of each view are saved in
test-artifacts/."""

from __future__ import annotations

import filecmp
import json
import math
import re
import shutil
import signal
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from selfreflect import explorer as explorer_module
from selfreflect import paths
from selfreflect.artifacts import read_metadata, read_table, write_table
from selfreflect.bench.explorer import synthetic_tables
from selfreflect.config import read_config_file
from selfreflect.errors import InputError
from selfreflect.explorer import (
    EMPTY,
    TOKENS,
    UNKNOWN,
    _encoded,
    question_file,
    question_script,
    questions,
    read_files,
    render,
    share_bytes,
    write_explorer,
)
from tests.conftest import REFERENCE, REPO
from tests.workflow_utils import run

pytestmark = pytest.mark.workflow

ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def explorer(smoke_run):
    return smoke_run / paths.EXPLORER.format(run="smoke")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip(
            "no system Chromium (Debian: apt-get install chromium, or "
            "SELFREFLECT_SYSTEM_TESTS=1 bash scripts/install.sh)"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


def relabel(folder: Path, subject: str) -> None:
    """Make every artifact under ``folder`` say it is ``subject``'s (its rows and metadata)."""
    for path in folder.rglob("*.parquet"):
        metadata = read_metadata(path)
        kind = metadata.pop("kind")
        table = read_table(kind, path)
        if "subject" in table:
            table = table.assign(subject=subject)
        write_table(kind, table, path, {**metadata, "subject": subject})


@pytest.fixture(scope="module")
def two_subjects(smoke_run, tmp_path_factory):
    """An explorer of the smoke run's files and of a copy of them as a second subject."""
    root = tmp_path_factory.mktemp("two-subjects")
    experiment = "results/smoke/smoke/tiny"
    for subject in ("tiny", "tiny2"):
        shutil.copytree(smoke_run / experiment, root / "results/smoke/smoke" / subject)
    relabel(root / "results/smoke/smoke/tiny2", "tiny2")
    kinds = ["answers.parquet", "answer_clusters.parquet", "summaries/*.parquet"]
    kinds.append("scores/tiny/*.parquet")
    files = [
        str(path.relative_to(root))
        for kind in [*kinds, "studies/tiny/controlled.parquet"]
        for path in sorted(root.glob(f"results/smoke/smoke/*/{kind}"))
    ]
    config = str(smoke_run / paths.RESOLVED_CONFIG.format(run="smoke"))
    run(["selfreflect", "explorer", "--config", config, "--out", "explorer", *files], root)
    return root / "explorer"


def open_page(browser, folder: Path):
    """An explorer's page opened from its index.html, recording console errors and every
    request."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.problems, page.requests = [], []
    page.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.on("request", lambda request: page.requests.append(request.url))
    page.goto((folder / "index.html").as_uri())
    return page


def loaded(page) -> list[str]:
    """The files the page requested, relative to its folder (every request a file in it)."""
    folder = page.url.split("#")[0].rsplit("/", 1)[0] + "/"
    assert all(url.startswith(folder) for url in page.requests), page.requests
    return [url.split("#")[0].removeprefix(folder) for url in page.requests]


@pytest.fixture
def page(browser, explorer):
    """The smoke run's explorer page."""
    page = open_page(browser, explorer)
    yield page
    page.close()


def column(page, key: str) -> list[str]:
    """The texts of the question table's column ``key`` (a header's data-key), top to bottom."""
    index = page.eval_on_selector_all(
        "#questions th", "ths => ths.map(th => th.dataset.key)"
    ).index(key)
    return page.eval_on_selector_all(
        f"#questions tbody tr td:nth-child({index + 1})", "tds => tds.map(td => td.textContent)"
    )


def scores(page, strategy: str) -> list[float | None]:
    return [None if cell == "\u2013" else float(cell) for cell in column(page, f"score:{strategy}")]


def assert_quiet_and_offline(page) -> None:
    """No console error, and no request but for the explorer's own files."""
    assert page.problems == []
    assert set(loaded(page)) <= {"index.html", TOKENS} | {
        question_file(i) for i in range(page.evaluate("DATA.rows.length"))
    }


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"explorer-{name}.png", full_page=True)


def test_conditioning_answers_are_clustered_by_meaning_and_test_answers_by_identity(tmp_path):
    """`selfreflect cluster-answers` clusters the conditioning answers as the cluster strategies
    do (summaries.cluster), and the page shows its clusters; the test answers' groups decide
    whose masked words are shown, so only identical ones share a group."""
    experiment = {"dataset": "d", "subject": "s", "judge": "j", "id": "q"}
    said = ["The capital of France is Paris.", "Paris is the capital of France.", "London."]
    answers = pd.DataFrame(
        [{"id": "q", "question": "Q?", "error": None, "test_answers": [*said, " London. "],
          "conditioning_answers": said, "backend": "hf", "model": "m", "seed": 0}]
    )  # fmt: skip
    write_table("answers", answers, tmp_path / "a.parquet", {"dataset": "d", "subject": "s"})
    clustered = {}
    for embedder in ("minilm", "string"):
        config = read_config_file(REPO / "config/smoke.yaml")
        config["summaries"]["cluster"] = {"embedder": embedder, "threshold": 0.8}
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        out = tmp_path / f"{embedder}.parquet"
        args = ["--config", "config.yaml", "--answers", "a.parquet", "--out", out.name]
        run(["selfreflect", "cluster-answers", *args], tmp_path)
        clustered[embedder] = read_table("answer_clusters", out)
        assert read_metadata(out)["cluster"] == {"embedder": embedder, "threshold": 0.8}
    by_meaning = clustered["minilm"]
    assert list(by_meaning["clusters"][0]) == [
        {"text": said[0], "count": 2}, {"text": said[2], "count": 1}
    ]  # fmt: skip
    assert len(clustered["string"]["clusters"][0]) == 3
    scores = pd.DataFrame(
        [{**experiment, "strategy": "greedy", "score": 0.1, "error": None, "tasks": None}]
    )
    tables = {"answers": answers.assign(dataset="d", subject="s"), "scores": scores}
    tables |= {"answer_clusters": by_meaning, "controlled_scores": pd.DataFrame()}
    tables["summaries"] = pd.DataFrame(columns=[*experiment, "strategy", "summary"])
    (row,) = questions([tables], {})
    assert row["conditioning"] == [{"text": said[0], "count": 2}, {"text": said[2], "count": 1}]
    assert [(group["text"], group["count"]) for group in row["test"]] == [
        (said[2], 2), (said[0], 1), (said[1], 1)
    ]  # fmt: skip


def test_imported_answers_need_their_experiment_named(tmp_path):
    """The explorer takes an answers table's dataset and subject from its metadata: imported
    without them, one line names the file and what is missing."""
    source = REFERENCE / "example_test_answers.json"
    bare, named = tmp_path / "bare.parquet", tmp_path / "named.parquet"
    run(["selfreflect", "import-answers", str(source), str(bare)], tmp_path)
    labels = ["--dataset", "nq", "--subject", "qwen"]
    run(["selfreflect", "import-answers", *labels, str(source), str(named)], tmp_path)
    answers = read_table("answers", named)
    scores = answers[["id"]].assign(dataset="nq", subject="qwen", judge="j", strategy="greedy")
    scores = scores.assign(score=0.1, num_tasks=1, error=None, tasks=None)
    write_table("scores", scores, tmp_path / "scores.parquet")
    config = ["--config", str(REPO / "config/smoke.yaml")]
    clusters = tmp_path / "clusters.parquet"
    args = ["--answers", str(named), "--out", str(clusters)]
    run(["selfreflect", "cluster-answers", *config, *args], tmp_path)
    (tables,) = read_files([named, clusters, tmp_path / "scores.parquet"])  # one block
    assert set(zip(tables["answers"]["dataset"], tables["answers"]["subject"], strict=True)) == {
        ("nq", "qwen")
    }
    result = run(
        ["selfreflect", "explorer", "--config", str(REPO / "config/smoke.yaml"), "--out", "x",
         str(bare), str(tmp_path / "scores.parquet")],
        tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 1 and not (tmp_path / "x").exists()
    assert result.stderr.startswith(f"error: {bare}: metadata: no dataset or subject")
    args = ["--answers", str(bare), "--out", str(tmp_path / "y.parquet")]
    result = run(["selfreflect", "cluster-answers", *config, *args], tmp_path, check=False)
    assert result.returncode == 1 and not (tmp_path / "y.parquet").exists()
    assert result.stderr.startswith(f"error: {bare}: metadata: no dataset or subject")


def test_the_page_holds_every_scored_question_and_loads_nothing(page, smoke_run):
    scores_file = paths.SCORES.format(
        run="smoke", dataset="smoke", subject="tiny", judge="tiny", strategy="greedy"
    )
    questions = len(read_table("scores", smoke_run / scores_file))
    assert page.locator("#questions tbody tr").count() == questions
    assert page.text_content("#count") == f"{questions} of {questions} questions"
    assert loaded(page) == ["index.html"]  # no question's data file before it is opened
    assert_quiet_and_offline(page)
    shot(page, "questions")


def test_search_narrows_the_table(page):
    first = page.text_content("#questions tbody tr td")
    word = max(first.split(), key=len)
    page.fill("#search", word)
    rows = page.locator("#questions tbody tr td:first-child").all_text_contents()
    assert 0 < len(rows) < page.evaluate("DATA.rows.length")
    assert all(word.lower() in row.lower() for row in rows)


def test_sorting_by_a_strategy_orders_the_table(page):
    page.click('#questions th[data-key="score:greedy"]')
    ascending = scores(page, "greedy")
    scored = [s for s in ascending if s is not None]
    assert scored == sorted(scored) and ascending[: len(scored)] == scored
    page.click('#questions th[data-key="score:greedy"]')
    descending = [s for s in scores(page, "greedy") if s is not None]
    assert descending == sorted(scored, reverse=True)


def test_a_question_page_colours_the_masked_words(page):
    page.click("#questions tbody tr:first-child")  # sets the hash; its hashchange shows the page
    page.wait_for_selector("#detail .word")  # once the question's data file has run
    page.wait_for_selector("#list", state="hidden")
    assert loaded(page) == ["index.html", TOKENS, question_file(0)]
    words = page.locator("#detail .word")
    assert words.count() > 0
    assert words.first.get_attribute("style").startswith("background:")
    assert "with the summary:" in words.first.get_attribute("title")
    assert page.locator("#summaries tbody tr").count() >= 2
    assert page.locator("#detail section h2", has_text="Controlled pairs").count() == 1
    shot(page, "question")
    page.locator("#summaries tbody tr").nth(1).click()  # another strategy colours the words
    assert page.locator("#summaries tbody tr.chosen").count() == 1
    assert_quiet_and_offline(page)


def test_a_filter_narrows_the_table_to_one_experiment(browser, two_subjects):
    page = open_page(browser, two_subjects)
    both = column(page, "subject")
    assert sorted(set(both)) == ["tiny", "tiny2"] and both.count("tiny") == both.count("tiny2")
    page.select_option("#subject", "tiny2")
    assert column(page, "subject") == ["tiny2"] * (len(both) // 2)
    assert page.text_content("#count") == f"{len(both) // 2} of {len(both)} questions"
    page.select_option("#judge", "tiny")  # filters combine
    assert column(page, "subject") == ["tiny2"] * (len(both) // 2)
    page.select_option("#subject", "")
    assert len(column(page, "subject")) == len(both)
    assert_quiet_and_offline(page)
    shot(page, "filters")
    page.close()


# Texts that end or comment out a script element, or end a JavaScript string, if embedded raw.
HOSTILE = [
    "<!--<script",
    "</script><b>x</b>",
    "]]> & &amp;",
    "line\u2028para\u2029end",
    "'\"`${1}`",
]


def hostile_tables() -> dict[str, pd.DataFrame]:
    """One question per hostile text, as its question, answers and summary; the first scored
    inf, the second with a NaN word distance, the others with a NaN, an infinite and a too large
    predicted token's probability. The answers labelled (as read_files labels them)."""
    experiment = {"dataset": "d", "subject": "s", "judge": "j"}
    ids = [f"q{i}" for i in range(len(HOSTILE))]
    answers = pd.DataFrame(
        {"id": ids, "dataset": "d", "subject": "s", "question": HOSTILE,
         "test_answers": [[f"{t} word"] for t in HOSTILE],
         "conditioning_answers": [[t] for t in HOSTILE], "backend": "hf", "model": "m", "seed": 0,
         "error": None}
    )  # fmt: skip
    summaries = pd.DataFrame(
        {"id": ids, "question": HOSTILE, **experiment, "strategy": "greedy", "summary": HOSTILE,
         "summarizer": "m", "prompt_tokens": 1, "completion_tokens": 1, "seconds": 0.0,
         "error": None}
    )  # fmt: skip
    task = {"answer": 0, "word": "word", "token": " word", "distance": 0.5,
            "summary_top": ["<!--"], "summary_p": [0.5], "reference_top": ["</"],
            "reference_p": [0.5]}  # fmt: skip
    changes = [{}, {"distance": math.nan}, {"summary_p": [math.nan]},
               {"reference_p": [math.inf]}, {"summary_p": [1e30]}]  # fmt: skip
    scores = pd.DataFrame(
        {"id": ids, **experiment, "strategy": "greedy", "score": [math.inf, *[0.5] * 4],
         "num_tasks": 1, "error": None,
         "tasks": [[{**task, "position": len(text.split()), **change}]  # the word "word"
                   for text, change in zip(HOSTILE, changes, strict=True)]}
    )  # fmt: skip
    clusters = answers[["id", "dataset", "subject"]].assign(
        clusters=[[{"text": text, "count": 1}] for text in HOSTILE]
    )
    return {
        "answers": answers,
        "answer_clusters": clusters,
        "summaries": summaries,
        "scores": scores,
    }


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """A folder with the hostile answers, their clusters (by string), summaries and scores
    files and a config."""
    folder = tmp_path_factory.mktemp("hostile")
    tables = hostile_tables()
    write_table(
        "answers", tables["answers"], folder / "a.parquet", {"dataset": "d", "subject": "s"}
    )
    write_table("summaries", tables["summaries"], folder / "summaries.parquet")
    write_table("scores", tables["scores"], folder / "scores.parquet")
    config = read_config_file(REPO / "config/smoke.yaml")
    config["summaries"]["cluster"] = {"embedder": "string"}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    args = ["--config", "config.yaml", "--answers", "a.parquet", "--out", "clusters.parquet"]
    run(["selfreflect", "cluster-answers", *args], folder)
    assert read_table("answer_clusters", folder / "clusters.parquet").equals(
        tables["answer_clusters"]
    )
    return folder


def explorer_cli(folder: Path, out: str, *files: str, check: bool = True):
    args = ["selfreflect", "explorer", "--config", "config.yaml", "--out", out, *files]
    return run(args, folder, check=check)


def embedded(page: str) -> str:
    """The text of the page's data script element, as the HTML parser ends it."""
    tag = '<script id="data" type="application/json">'
    start = page.index(tag) + len(tag)
    return page[start : page.index("</script", start)]


FORBIDDEN = "<>&'"  # besides any character that is not ASCII (U+2028 and U+2029 among them)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


def question_data(script: str, index: int) -> str:
    """The JSON a question's data file hands the page: the file is exactly one call."""
    call = f"explorerQuestion({index}, "
    assert script.startswith(call) and script.endswith(");\n")
    return script[len(call) : -len(");\n")]


@given(run_name=st.text(), value=json_values)
@settings(max_examples=60, deadline=None)
def test_no_text_can_end_or_comment_out_the_embedded_data(run_name, value):
    """Whatever the texts, the index's data script element and a question's data file hold
    exactly the data: no <, >, &, ' nor any character that is not ASCII (U+2028 and U+2029
    among them: each escaped), and it parses back to the same data."""
    data = {"run": run_name, "strategies": [], "rows": [value]}
    for text in (embedded(render(data)), question_data(question_script(7, data), 7)):
        assert text.isascii() and not set(text) & set(FORBIDDEN)
        assert json.loads(text) == data


def test_hostile_texts_are_embedded_literally_and_non_finite_numbers_as_missing(tmp_path):
    tables = {**hostile_tables(), "controlled_scores": pd.DataFrame()}
    write_explorer([tables], "</title>", tmp_path / "x")
    page = (tmp_path / "x/index.html").read_text()
    assert "<title>SelfReflect explorer: &lt;/title&gt;</title>" in page
    table = json.loads(embedded(page))
    assert [row["question"] for row in table["rows"]] == HOSTILE
    assert table["rows"][0]["scores"]["greedy"] is None  # inf
    shown = [
        json.loads(question_data((tmp_path / "x" / question_file(i)).read_text(), i))
        for i in range(len(HOSTILE))
    ]
    assert [row["question"] for row in shown] == HOSTILE
    assert [row["strategies"]["greedy"]["summary"] for row in shown] == HOSTILE
    assert [row["words"] for row in shown] == [[0, len(text.split()), 1] for text in HOSTILE]
    assert [row["strategies"]["greedy"]["distances"] for row in shown] == [
        [5000], [None], [5000], [5000], [5000]
    ]  # fmt: skip
    tokens = (tmp_path / "x" / TOKENS).read_text()
    assert tokens.startswith("explorerTokens(") and tokens.endswith(");\n")
    assert json.loads(tokens[len("explorerTokens(") : -len(");\n")]) == [" word", "</", "<!--"]


def test_strategies_that_mask_other_words_are_refused_with_one_line(tmp_path):
    """A question's masked words are stored once, so each strategy's must be the same (the
    same words split into the same tokens); scores made with other settings are refused."""
    tables = {**hostile_tables(), "controlled_scores": pd.DataFrame()}
    scores = tables["scores"]
    split = [[{**task, "token": " wo"}, {**task, "token": "rd"}] for [task] in scores["tasks"]]
    tables["scores"] = pd.concat([scores, scores.assign(strategy="other", tasks=split)])
    message = r"^id q0 \(d, s, j\): strategy 'other' masks other words than 'greedy'"
    with pytest.raises(InputError, match=message):
        write_explorer([tables], "run", tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


def test_the_page_reads_four_byte_token_ids_and_shares_below_one_percent(browser, tmp_path):
    """A question of more than 65,536 distinct tokens has 4-byte token ids; the page reads
    them, shares and missing predictions as in 2-byte ones. Shares below 1 % (a judge's top
    tokens at temperature 5 over a large vocabulary) show two digits, not 0 %."""
    tables = {**hostile_tables(), "controlled_scores": pd.DataFrame()}
    write_explorer([tables], "run", tmp_path / "x")
    page = open_page(browser, tmp_path / "x")
    tokens = [f"t{i}" for i in range(2**16 + 2)]
    ids = np.array([[2**16 + 1, 0, 0], [2, 3, 4]])
    small = share_bytes(np.array([0.0037, 1.2e-5, 0.0]))
    shares = np.array([[50, UNKNOWN, EMPTY], small])
    lines = page.evaluate(
        "([tokens, q, encoded]) => { explorerTokens(tokens); return predicted(q, encoded); }",
        [tokens, {"targets": [2**16, 1]}, _encoded(ids, shares, True)],
    )
    assert lines == [
        "\u201ct65536\u201d \u2192 \u201ct65537\u201d 50%, \u201ct0\u201d ?%",
        "\u201ct1\u201d \u2192 \u201ct2\u201d 0.38%, \u201ct3\u201d 0.0012%,"
        " \u201ct4\u201d \u22640.0001%",
    ]
    assert page.problems == []
    page.close()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (["a.parquet", "scores.parquet", "a.parquet"], "a.parquet: given twice"),
        (["a.parquet", "scores.parquet", "scores.parquet"], "scores.parquet: given twice"),
        (["a.parquet", "clusters.parquet", "scores.parquet", "copy.parquet"],
         "copy.parquet: scores row (dataset d, subject s, judge j, id q0, strategy greedy) is "
         "also in scores.parquet"),
        (["other.parquet", "clusters.parquet", "scores.parquet"],
         "scores.parquet: id q0 (d, s) has no row in the answers files given"),
        (["a.parquet", "scores.parquet"],
         "explorer: no answer clusters file among the files given (selfreflect cluster-answers)"),
    ],
)  # fmt: skip
def test_files_that_do_not_fit_together_are_refused_with_one_line(hostile, files, message):
    """A file named twice, a row given by two files, scores of questions whose answers are not
    among the files (e.g. another subject's), or answers without their clusters: one line, no
    page."""
    shutil.copy(hostile / "scores.parquet", hostile / "copy.parquet")
    other = read_table("answers", hostile / "a.parquet")
    write_table("answers", other, hostile / "other.parquet", {"dataset": "d", "subject": "t"})
    result = explorer_cli(hostile, "refused", *files, check=False)
    assert result.returncode == 1 and not (hostile / "refused").exists()
    assert result.stderr.strip() == f"error: {message}", result.stderr


@pytest.mark.parametrize("point", ["before-rename", "term-before-rename"])
def test_an_interrupted_build_leaves_nothing_after_the_next(hostile, tmp_path, point):
    """Killed (SIGKILL) or stopped (SIGTERM) as the explorer is about to move its folder into
    place: no explorer folder; SIGTERM leaves nothing at all, SIGKILL nothing that outlives
    the next build."""
    out = tmp_path / "explorer"
    files = ["a.parquet", "clusters.parquet", "summaries.parquet", "scores.parquet"]
    kill_at = [sys.executable, str(REPO / "tests" / "kill_at.py"), point, "1", "--"]
    args = ["explorer", "--config", "config.yaml", "--out", str(out), *files]
    killed = run([*kill_at, *args], hostile, check=False)
    signum = signal.SIGTERM if point.startswith("term") else signal.SIGKILL
    assert killed.returncode == -signum, killed.stderr
    assert not out.exists() and (signum == signal.SIGKILL or list(tmp_path.iterdir()) == [])
    explorer_cli(hostile, str(out), *files)
    assert list(tmp_path.iterdir()) == [out]


def test_scores_of_other_answers_are_refused_with_one_line(hostile):
    """The probe: answers sampled again after scoring, shown with the old scores, coloured
    words that are not there (rc 0). The masked words the scores record must be the answers'
    words at their positions."""
    answers = read_table("answers", hostile / "a.parquet")
    resampled = answers.assign(test_answers=[["a fresh answer"]] * len(answers))
    labels = {"dataset": "d", "subject": "s"}
    write_table("answers", resampled, hostile / "resampled.parquet", labels)
    files = ["resampled.parquet", "clusters.parquet", "scores.parquet"]
    result = explorer_cli(hostile, "refused", *files, check=False)
    assert result.returncode == 1 and not (hostile / "refused").exists()
    assert result.stderr.strip() == (
        "error: scores.parquet: id q0 (d, s): masked word 'word' (test answer 0, word 1) is not"
        " in the answers of resampled.parquet: scores of other answers (sampled again?)"
    )


def test_a_controlled_pair_with_one_side_is_refused_with_one_line(hostile):
    """It used to end in a traceback (KeyError 'bad')."""
    pair = {"id": "q0", "dataset": "d", "subject": "s", "judge": "j", "pair_type": "length",
            "side": "good", "summary": "s", "selfreflect": 0.1, "llm_rating": 5.0,
            "embedding": 0.5, "p_true": 0.5, "error": None}  # fmt: skip
    write_table("controlled_scores", pd.DataFrame([pair]), hostile / "half.parquet")
    files = ["a.parquet", "clusters.parquet", "scores.parquet", "half.parquet"]
    result = explorer_cli(hostile, "refused", *files, check=False)
    assert result.returncode == 1 and not (hostile / "refused").exists()
    assert result.stderr.strip() == (
        "error: half.parquet: controlled pair 'length' of id q0 (d, s, j) has no bad side in the"
        " files given"
    )


def test_the_page_shows_hostile_texts_literally(browser, hostile):
    """Every row shows, its texts as written; a question's page too, with missing numbers as
    missing and nothing run from the texts."""
    explorer_cli(
        hostile, "x", "a.parquet", "clusters.parquet", "summaries.parquet", "scores.parquet"
    )
    page = open_page(browser, hostile / "x")
    assert column(page, "question") == HOSTILE
    assert scores(page, "greedy") == [None, 0.5, 0.5, 0.5, 0.5]
    page.click("#questions tbody tr:nth-child(2)")
    page.wait_for_selector("#detail .question")
    assert page.text_content("#detail .question") == HOSTILE[1]
    assert page.text_content("#summaries tbody td:nth-child(4)") == HOSTILE[1]
    word = page.locator("#detail .word")
    assert word.get_attribute("style") is None  # its distance is not a number
    assert page.locator("#detail b").count() == 0
    titles = [word.get_attribute("title")]
    for row in range(3, 6):
        page.go_back()
        page.click(f"#questions tbody tr:nth-child({row})")
        page.wait_for_selector("#detail .word")
        titles.append(word.get_attribute("title"))
    given = "with the summary: \u201c\u2423word\u201d \u2192 \u201c<!--\u201d"
    answers = "with the answers: \u201c\u2423word\u201d \u2192 \u201c</\u201d"
    assert titles == [  # a probability that is no number in [0, 1] is shown as missing
        f"distance \u2013\n{given} 50%\n{answers} 50%",
        f"distance 0.500\n{given} ?%\n{answers} 50%",
        f"distance 0.500\n{given} 50%\n{answers} ?%",
        f"distance 0.500\n{given} ?%\n{answers} 50%",
    ]
    assert_quiet_and_offline(page)
    page.close()


def test_a_generated_explorer_loads_a_question_only_when_it_is_opened(browser, tmp_path):
    """An explorer of generated tables (60 questions, 3 strategies, 10 answers each), built in
    process: the table shows every question, search and sort work, and a question's page,
    with its coloured words, loads that question's data file alone."""
    files = synthetic_tables(tmp_path / "tables", questions=60, strategies=3, answers=10)
    assert write_explorer(read_files(files), "generated", tmp_path / "explorer") == 60
    assert len(list((tmp_path / "explorer/questions").iterdir())) == 60
    page = open_page(browser, tmp_path / "explorer")
    assert page.locator("#questions tbody tr").count() == 60
    page.click('#questions th[data-key="score:strategy_1"]')
    ordered = scores(page, "strategy_1")
    assert ordered == sorted(ordered)
    word = max(column(page, "question")[7].split(), key=len)
    page.fill("#search", word)
    assert all(word in question for question in column(page, "question"))
    assert loaded(page) == ["index.html"]
    index = page.get_attribute("#questions tbody tr:first-child", "data-index")
    page.click("#questions tbody tr:first-child")
    page.wait_for_selector("#detail .word")
    assert page.locator("#detail .word").first.get_attribute("style").startswith("background:")
    assert loaded(page) == ["index.html", TOKENS, question_file(int(index))]
    assert_quiet_and_offline(page)
    page.close()


def same_folders(left: Path, right: Path) -> bool:
    """Whether the folders hold the same files, byte for byte."""
    names = sorted(str(p.relative_to(left)) for p in left.rglob("*") if p.is_file())
    if names != sorted(str(p.relative_to(right)) for p in right.rglob("*") if p.is_file()):
        return False
    return all(filecmp.cmp(left / name, right / name, shallow=False) for name in names)


def test_the_explorer_read_a_block_at_a_time_is_the_explorer_of_the_whole(tmp_path, monkeypatch):
    """Read in blocks of 7 questions (two experiments judging one subject's answers, the
    second's first strategy missing two questions, so that they come last; a summary missing),
    the folder is byte for byte the one read in one block."""
    files = synthetic_tables(tmp_path / "tables", questions=30, strategies=3, answers=4)
    summaries = [path for path in files if read_metadata(path)["kind"] == "summaries"]
    table = read_table("summaries", summaries[0])
    write_table("summaries", table.iloc[1:], summaries[0], read_metadata(summaries[0]))
    for number, path in enumerate([p for p in files if read_metadata(p)["kind"] == "scores"]):
        table = read_table("scores", path).assign(judge="other")
        files.append(tmp_path / f"other-{path.name}")
        write_table("scores", table.iloc[2 if number == 0 else 0 :], files[-1], read_metadata(path))
    built = {}
    for block in (7, 10**6):
        monkeypatch.setattr(explorer_module, "BLOCK", block)
        built[block] = tmp_path / f"explorer-{block}"
        assert write_explorer(read_files(files), "run", built[block]) == 60
    assert same_folders(built[7], built[10**6])


@pytest.mark.parametrize("name", ["constructor", "toString", "__proto__"])
def test_a_strategy_named_like_an_objects_property_shows_every_row(browser, tmp_path, name):
    """A strategy whose name every JavaScript object answers to, with a question it has no
    score for: every row shows, its missing score as missing, and its page opens."""
    files = synthetic_tables(tmp_path / "tables", questions=3, strategies=2, answers=3)
    for path in files:
        metadata = read_metadata(path)
        kind = metadata.pop("kind")
        table = read_table(kind, path)
        if "strategy" in table:
            table = table.assign(strategy=table["strategy"].replace({"strategy_1": name}))
            if kind == "scores" and (table["strategy"] == name).any():
                table = table[table["id"] != table["id"].min()]
        write_table(kind, table, path, metadata)
    write_explorer(read_files(files), "generated", tmp_path / "explorer")
    page = open_page(browser, tmp_path / "explorer")
    assert page.locator("#questions tbody tr").count() == 3
    assert scores(page, name)[0] is None and None not in scores(page, name)[1:]
    page.click(f'#questions th[data-key="score:{name}"]')
    page.click("#questions tbody tr:first-child")
    page.wait_for_selector("#detail .question")
    assert_quiet_and_offline(page)
    page.close()


def test_the_docs_say_the_workflow_deletes_its_folder_outputs_before_a_rerun():
    """Notes kept in results/<run>/explorer/ vanished on `snakemake --forcerun explorer`
    (Snakemake deletes a directory output before its job; so does `dvc repro`) while the README
    said the explorer refuses its own folder "with your notes in it". The paragraph on output
    folders (docs/layout.md, moved there from the README) names every folder a rule outputs as
    holding only what its command writes."""
    rules = "".join(path.read_text() for path in (REPO / "workflow/rules").glob("*.smk"))
    folders = re.findall(r"directory\((?:run_path\()?paths\.(\w+)", rules)
    assert "EXPLORER" in folders
    [paragraph] = [
        " ".join(text.split())
        for text in (REPO / "docs" / "layout.md").read_text().split("\n\n")
        if "with your notes in it" in text
    ]
    assert "delete it before they rerun its job" in paragraph
    assert "keep your notes elsewhere" in paragraph
    for name in folders:
        named = getattr(paths, name).replace("{run}", "<run>").split("{")[0]
        assert f"`{named}" in paragraph, name


def test_tied_scores_share_the_best_rank_and_a_pairs_failed_side_is_shown():
    """Two strategies with one score both rank 1; a controlled pair whose bad side failed
    shows that side's reason."""
    tables = hostile_tables()
    scores = tables["scores"]
    tables["scores"] = pd.concat([scores, scores.assign(strategy="other")], ignore_index=True)
    pair = {"id": "q1", "dataset": "d", "subject": "s", "judge": "j", "pair_type": "idk",
            "summary": "s", "selfreflect": 0.1, "llm_rating": 5.0, "embedding": 0.5,
            "p_true": 0.5}  # fmt: skip
    sides = [{**pair, "side": "good", "error": None}, {**pair, "side": "bad", "error": "died"}]
    tables["controlled_scores"] = pd.DataFrame(sides)
    shown = {row["id"]: row for row in questions([tables], {})}
    assert [shown["q1"]["strategies"][name]["rank"] for name in ("greedy", "other")] == [1, 1]
    assert [pair["error"] for pair in shown["q1"]["pairs"]] == ["died"]


def test_scores_of_a_question_without_its_answer_clusters_are_refused(tmp_path):
    """Every scored question needs its row in the answer clusters given, not only in the
    answers: one line names the file and the question."""
    tables = hostile_tables()
    write_table(
        "answers", tables["answers"], tmp_path / "a.parquet", {"dataset": "d", "subject": "s"}
    )
    clusters = tables["answer_clusters"].iloc[1:]
    write_table(
        "answer_clusters", clusters, tmp_path / "c.parquet", {"dataset": "d", "subject": "s"}
    )
    write_table("scores", tables["scores"], tmp_path / "s.parquet")
    message = r"s\.parquet: id q0 \(d, s\) has no row in the answer clusters files given"
    with pytest.raises(InputError, match=message):
        read_files([tmp_path / "a.parquet", tmp_path / "c.parquet", tmp_path / "s.parquet"])
