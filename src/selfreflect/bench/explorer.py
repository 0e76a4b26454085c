"""The explorer at the paper's scale: synthetic tables built, opened in headless Chromium.

    selfreflect bench explorer --json docs/explorer_scale.json

writes schema-valid answers, answer clusters, summaries, scores and controlled-pair tables of one
experiment (default: 1000 questions, 6 strategies, N = 50 test and conditioning answers of real
answers' lengths, each a distinct text: ``selfreflect.bench.synthetic.answer_words``, so each a
cluster of its own) through the project's writers, builds their explorer with ``selfreflect
explorer`` (its time and peak memory sampled), and records the size of its files (in all and per
question), the time until the question table shows and the time to open a question's page.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
import yaml

from selfreflect.artifacts import write_arrow, write_table
from selfreflect.bench.synthetic import (
    QUESTION_WORDS,
    SUMMARY_WORDS,
    AnswerWords,
    answer_words,
    sentences,
    task_lists,
    vocabulary,
)
from selfreflect.strategies.clustering import clusters_table

EXPERIMENT = {"dataset": "synthetic", "subject": "subject", "judge": "judge"}
PAIR_TYPES = ("shuffled", "truncated", "contradicting")
OPENED = 3  # questions whose page is timed: the first, the middle and the last


def synthetic_tables(
    folder: Path, questions: int, strategies: int, answers: int, seed: int = 0
) -> list[Path]:
    """Write one experiment's answers, answer clusters, summaries, scores and controlled-pair
    tables of ``questions`` questions, ``strategies`` strategies and ``answers`` test and
    conditioning answers each under ``folder``; returns the files."""
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    ids = [f"q{i:06d}" for i in range(questions)]
    test, conditioning = answer_words(rng, questions, 2 * answers).split(answers)
    answer_table = pd.DataFrame(
        {
            "id": ids,
            "question": [f"{s}?" for s in sentences(rng, words, questions, QUESTION_WORDS)],
            "test_answers": test.texts(words),
            "conditioning_answers": conditioning.texts(words),
            "backend": "synthetic",
            "model": EXPERIMENT["subject"],
            "seed": seed,
            "error": None,
        }
    )
    labels = {"dataset": EXPERIMENT["dataset"], "subject": EXPERIMENT["subject"]}
    files = [folder / "answers.parquet", folder / "answer_clusters.parquet"]
    write_table("answers", answer_table, files[0], labels)
    groups = answer_table["conditioning_answers"]  # distinct texts: a cluster each
    clusters = clusters_table(answer_table["id"], groups, labels, "string", 1.0)
    write_arrow("answer_clusters", [clusters], files[1], labels)
    for strategy in [f"strategy_{i}" for i in range(strategies)]:
        files += _strategy_tables(folder, rng, words, test, ids, strategy)
    files.append(folder / "controlled.parquet")
    write_table("controlled_scores", _controlled(rng, words, ids), files[-1])
    return files


def _strategy_tables(
    folder: Path, rng: np.random.Generator, words: np.ndarray, test: AnswerWords, ids: list[str],
    strategy: str,
) -> list[Path]:  # fmt: skip
    """Write one strategy's summaries and scores tables; returns their files."""
    rows = {"id": ids, **EXPERIMENT, "strategy": strategy}
    summaries = pd.DataFrame(
        {
            **rows,
            "question": "",
            "summary": sentences(rng, words, len(ids), SUMMARY_WORDS),
            "summarizer": "synthetic",
            "prompt_tokens": 1000,
            "completion_tokens": 80,
            "seconds": 1.0,
            "error": None,
        }
    )
    tasks = task_lists(rng, words, test)
    scores = pd.DataFrame(
        {
            **rows,
            "score": rng.gamma(2.0, 0.15, len(ids)).clip(max=1.0),
            "num_tasks": test.tasks_per_question(),
            "error": None,
            "tasks": pd.arrays.ArrowExtensionArray(tasks),
        }
    )
    paths = [folder / f"summaries/{strategy}.parquet", folder / f"scores/{strategy}.parquet"]
    write_table("summaries", summaries, paths[0])
    write_table("scores", scores, paths[1])
    return paths


def _controlled(rng: np.random.Generator, words: np.ndarray, ids: list[str]) -> pd.DataFrame:
    """A better and a worse summary of each question per pair type, with their metrics."""
    keys = [(qid, pair, side) for qid in ids for pair in PAIR_TYPES for side in ("good", "bad")]
    n = len(keys)
    return pd.DataFrame(
        {
            "id": [key[0] for key in keys],
            **EXPERIMENT,
            "pair_type": [key[1] for key in keys],
            "side": [key[2] for key in keys],
            "summary": sentences(rng, words, n, SUMMARY_WORDS),
            "selfreflect": rng.gamma(2.0, 0.15, n),
            "llm_rating": rng.uniform(1, 10, n),
            "embedding": rng.uniform(0, 1, n),
            "p_true": rng.uniform(0, 1, n),
            "error": None,
        }
    )


def file_sizes(folder: Path, questions: int) -> dict[str, Any]:
    """The explorer folder's file count, total size (and per question of ``questions``),
    largest file size and the index's size."""
    files = [path for path in folder.rglob("*") if path.is_file()]
    largest = max(files, key=lambda path: path.stat().st_size)
    mib, total = 2**20, sum(path.stat().st_size for path in files)
    return {
        "files": len(files),
        "total_mib": round(total / mib, 1),
        "kib_per_question": round(total / questions / 2**10, 1),
        "largest_file": str(largest.relative_to(folder)),
        "largest_file_mib": round(largest.stat().st_size / mib, 3),
        "index_mib": round((folder / "index.html").stat().st_size / mib, 3),
    }


def browser_times(folder: Path, questions: int) -> dict[str, Any]:
    """Seconds until the question table shows (from opening ``index.html``) and until each of
    :data:`OPENED` questions' pages shows its coloured words (from the click on its row)."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise click.ClickException("no system Chromium (Debian: apt-get install chromium)")
    opened = sorted({0, questions // 2, questions - 1})
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        start = time.perf_counter()
        page.goto((folder / "index.html").as_uri())
        page.wait_for_selector("#questions tbody tr")
        table = time.perf_counter() - start
        times = []
        for index in opened:
            start = time.perf_counter()
            page.click(f'#questions tbody tr[data-index="{index}"]')
            page.wait_for_selector("#detail .word")
            times.append(round(time.perf_counter() - start, 3))
            page.go_back()
            page.wait_for_selector("#questions tbody tr")
        browser.close()
    return {"table_seconds": round(table, 3), "opened": opened, "question_seconds": times}


def _last_error(log: Path) -> str:
    """The last line of a failed command's ``log`` (its error) without its own ``error: ``."""
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1].removeprefix("error: ") if lines else f"{log}: empty"


def run_benchmark(questions: int, strategies: int, answers: int, work: Path) -> dict[str, Any]:
    """Build and open the explorer of synthetic tables of the given size under ``work``."""
    from selfreflect.bench.resources import sampled_run
    from selfreflect.config import read_config_file

    files = synthetic_tables(work / "tables", questions, strategies, answers)
    config = read_config_file(Path(__file__).parents[3] / "config/smoke.yaml")
    config["run"] = "explorer-bench"
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    out = work / "explorer"
    command = ["selfreflect", "explorer", "--config", "config.yaml", "--out", str(out)]
    build = sampled_run([*command, *map(str, files)], work, work / "build.log")
    if build["returncode"] != 0:
        raise click.ClickException(f"the explorer build failed: {_last_error(work / 'build.log')}")
    size = {"questions": questions, "strategies": strategies, "answers": answers}
    inputs = sum(path.stat().st_size for path in files) / 2**20
    return {
        **size,
        "input_mib": round(inputs, 1),
        "build": {key: value for key, value in build.items() if key != "command"},
        **file_sizes(out, questions),
        **browser_times(out, questions),
    }


@click.command()
@click.option("--questions", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--strategies", type=click.IntRange(min=1), default=6, show_default=True)
@click.option(
    "--answers",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Test and conditioning answers.",
)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path))
def explorer(questions: int, strategies: int, answers: int, json_out: Path | None) -> None:
    """Build the explorer of synthetic tables of the given size (default: the paper's) and
    time it in headless Chromium: build time and peak memory, file sizes, time until the
    question table shows and until a question's page does; written to --json."""
    from selfreflect.fileio import write_json

    with tempfile.TemporaryDirectory(prefix="explorer-bench-") as work:
        result = run_benchmark(questions, strategies, answers, Path(work))
    if json_out:
        write_json(json_out, result)
    click.echo(yaml.safe_dump(result, sort_keys=False))
