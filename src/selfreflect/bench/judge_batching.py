"""The judge pass of a run, its forwards cut by masked words and by tokens, timed side by side.

    selfreflect bench judge-batching --config config/laptop.yaml --budget 256 --budget 1024 \\
        --compile --json docs/judge_batching.json

Reads one summarised dataset's questions, answers and summaries of the config's run (README command
1 writes them; ``dvc pull`` in its DVC project fetches them), loads the `hf` judge once and judges
every question (``--questions N``: the first N) with its studies, as the workflow's judge job does,
under each setting: the config's ``batch_size`` masked words per forward, then ``token_budget``
each ``--budget`` tokens, then (``--compile``) the config's ``batch_size`` with the decoder through
``torch.compile``. One untimed pass of each setting (its first: the warm-up, in which a compiled
decoder compiles), then ``--repeats`` timed ones of each, the settings taking turns so that other
work on the machine slows each alike. Recorded per setting: the first pass's and the timed passes'
wall and CPU seconds (median and range), forwards and tokens computed, and the largest difference
of any score from the first setting's. ``selfreflect docs performance`` shows the record in
docs/performance.md.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

import click

from selfreflect import paths

# when a CPU judge job compiles its decoder, decided before the first recorded run: if its one
# pass, compilation included (the setting's first pass), takes at most this share of the CPU
# seconds of a pass as the config runs it, every score within this of that pass's
COMPILE_RULE = {"cpu_ratio": 0.95, "score_difference": 1e-6}


def judge_inputs(config: dict[str, Any], dataset: str) -> dict[str, Any]:
    """The questions, answers and summaries tables of ``dataset`` in the run of ``config``,
    judged as its judge job judges them (the config's first subject)."""
    from selfreflect.artifacts import read_table, read_tables
    from selfreflect.errors import InputError

    subject = config["subjects"][0]
    labels = {"run": config["run"], "dataset": dataset, "subject": subject}
    files = {
        "questions": Path(paths.QUESTIONS.format(**labels)),
        "answers": Path(paths.ANSWERS.format(**labels)),
        "summaries": [
            Path(paths.SUMMARIES.format(**labels, strategy=strategy))
            for strategy in config["summaries"]["strategies"]
        ],
    }
    needed = [files["questions"], files["answers"], *files["summaries"]]
    if missing := [path for path in needed if not path.exists()]:
        raise InputError(
            f"{missing[0]}: not found; run the config's workflow up to its summaries, or"
            f" `dvc pull` in {paths.DVC_PROJECT.format(run=config['run'])}"
        )
    return {
        "subject": subject,
        "questions": read_table("questions", files["questions"]),
        "answers": read_table("answers", files["answers"]),
        "summaries": read_tables("summaries", files["summaries"]),
    }


def judge_pass(judge: Any, config: dict[str, Any], inputs: dict[str, Any]) -> list[float]:
    """Every judgement row's score of one judge pass over ``inputs`` (NaN: no score)."""
    from selfreflect.scoring.experiment import judgement_rows
    from selfreflect.scoring.stopwords import stopword_policy

    report = {**config["report"], "cluster": config["summaries"]["cluster"]}
    rows = judgement_rows(
        judge,
        inputs["questions"],
        inputs["answers"],
        inputs["answers"],
        inputs["summaries"],
        config["scoring"],
        report,
        config["seed"],
        stopword_policy(config["scoring"]["stopwords"]),
    )
    return [math.nan if row["score"] is None else row["score"] for q in rows for row in q]


def timed_pass(judge: Any, config: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """One judge pass: its wall and CPU seconds, forwards, tokens computed and scores."""
    forwards = judge.forwards
    tokens = judge.forward_tokens
    wall, cpu = time.perf_counter(), time.process_time()
    scores = judge_pass(judge, config, inputs)
    return {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "forwards": judge.forwards - forwards,
        "tokens": judge.forward_tokens - tokens,
        "scores": scores,
    }


def summary(runs: list[dict[str, Any]], first: list[float]) -> dict[str, Any]:
    """A setting's timed ``runs``: median and range of its seconds, its work, and the largest
    difference of a score from ``first`` (the first setting's scores)."""
    out: dict[str, Any] = {"forwards": runs[0]["forwards"], "tokens": runs[0]["tokens"]}
    for key in ("wall_s", "cpu_s"):
        values = [run[key] for run in runs]
        out[key] = round(statistics.median(values), 2)
        out[f"{key}_range"] = [round(min(values), 2), round(max(values), 2)]
    pairs = [(a, b) for a, b in zip(runs[0]["scores"], first, strict=True) if not math.isnan(a)]
    out["scores"] = len(pairs)
    out["max_score_difference"] = max((abs(a - b) for a, b in pairs), default=0.0)
    return out


def first_questions(inputs: dict[str, Any], count: int) -> dict[str, Any]:
    """``inputs`` cut to the first ``count`` questions of the dataset."""
    kept = set(inputs["questions"]["id"].head(count))
    return {
        **inputs,
        **{k: inputs[k][inputs[k]["id"].isin(kept)] for k in ("questions", "answers", "summaries")},
    }


def benchmark(
    config_path: Path,
    dataset: str | None,
    budgets: list[int],
    repeats: int,
    compiled: bool,
    questions: int | None = None,
) -> dict:
    """Judge the run's dataset (its first ``questions``, or all) under each setting, taking
    turns (see module)."""
    from selfreflect.config import load_config, model_spec, summarized_datasets
    from selfreflect.model_sources import check_model_path
    from selfreflect.scoring.hf_judge import HfJudge, load_judge_model

    config = load_config(config_path)
    dataset = dataset or summarized_datasets(config)[0]
    inputs = judge_inputs(config, dataset)
    if questions is not None:
        inputs = first_questions(inputs, questions)
    name = config["judges"][0]
    spec = model_spec(config, name, source=str(config_path))
    check_model_path(spec["path"])
    dtype = config["scoring"]["dtype"]
    fmt, model = load_judge_model(spec if dtype == "auto" else {**spec, "dtype": dtype})
    words = config["scoring"]["batch_size"]
    settings = [("batch_size", words, False), *(("token_budget", b, False) for b in budgets)]
    settings += [("batch_size", words, True)] if compiled else []
    judges = [
        HfJudge(
            name,
            fmt,
            model,
            words,
            spec["max_model_len"],
            value if key == "token_budget" else None,
            compiled=compile_it,
        )
        for key, value, compile_it in settings
    ]
    first_passes = [timed_pass(judge, config, inputs) for judge in judges]  # the warm-ups
    runs: list[list[dict[str, Any]]] = [[] for _ in judges]
    for _ in range(repeats):
        for judge, timed in zip(judges, runs, strict=True):
            timed.append(timed_pass(judge, config, inputs))
    first = runs[0][0]["scores"]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "config": str(config_path),
        "dataset": dataset,
        "judge": name,
        "questions": len(inputs["answers"]),
        "answers": config["answers"]["num_answers"],
        "strategies": len(config["summaries"]["strategies"]),
        "repeats": repeats,
        "cpus": os.cpu_count(),
        "torch_threads": _torch_threads(),
        "load_average": round(os.getloadavg()[1], 2),
        "settings": [
            {
                "setting": key,
                "value": value,
                "compiled": compile_it,
                "first_pass": {k: round(once[k], 2) for k in ("wall_s", "cpu_s")},
                **summary(timed, first),
            }
            for (key, value, compile_it), once, timed in zip(
                settings, first_passes, runs, strict=True
            )
        ],
    }


def meets_compile_rule(row: dict[str, Any], first: dict[str, Any]) -> bool:
    """Whether a compiled setting's recorded ``row`` meets :data:`COMPILE_RULE` against
    ``first``, the config's setting."""
    cheap = row["first_pass"]["cpu_s"] <= COMPILE_RULE["cpu_ratio"] * first["cpu_s"]
    return cheap and row["max_score_difference"] <= COMPILE_RULE["score_difference"]


def setting_text(row: dict[str, Any]) -> str:
    """A recorded setting in words: ``token_budget 256``, ``batch_size 16 (compiled)``."""
    return f"{row['setting']} {row['value']}" + (" (compiled)" if row.get("compiled") else "")


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


@click.command("judge-batching")
@click.option(
    "--config",
    "config_path",
    default="config/laptop.yaml",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The run whose judge pass is timed (its answers and summaries must exist).",
)
@click.option("--dataset", help="A summarised dataset of the config (default: its first).")
@click.option(
    "--budget",
    "budgets",
    multiple=True,
    type=click.IntRange(min=1),
    required=True,
    help="A token budget per forward to time (repeatable).",
)
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True)
@click.option(
    "--questions",
    type=click.IntRange(min=1),
    help="Judge the dataset's first QUESTIONS questions only (default: all).",
)
@click.option(
    "--compile",
    "compiled",
    is_flag=True,
    help="Also time the config's batch_size with the decoder through torch.compile.",
)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path))
def judge_batching(
    config_path: Path,
    dataset: str | None,
    budgets: tuple[int, ...],
    repeats: int,
    questions: int | None,
    compiled: bool,
    json_out: Path | None,
) -> None:
    """Time a run's judge pass batched by masked words, by each --budget tokens and, with
    --compile, compiled."""
    from selfreflect.fileio import write_json

    record = benchmark(config_path, dataset, list(budgets), repeats, compiled, questions)
    base = record["settings"][0]
    for row in record["settings"]:
        click.echo(
            f"{setting_text(row)}: first pass {row['first_pass']['cpu_s']} CPU-s,"
            f" then {row['cpu_s']} CPU-s"
            f" ({base['cpu_s'] / row['cpu_s']:.2f}x of {setting_text(base)}),"
            f" wall {row['wall_s']} s, {row['forwards']} forwards, {row['tokens']} tokens,"
            f" scores within {row['max_score_difference']:.1e}"
        )
    if json_out:
        write_json(json_out, record)
