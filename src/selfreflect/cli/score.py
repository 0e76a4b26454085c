"""``selfreflect score``: summaries scored by a judge, standalone (summaries tables or the
original tool's JSON files): the workflow's judge pass (:mod:`selfreflect.scoring.experiment`)
on them alone, resumed through its result cache."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from selfreflect.cli.options import SHARD, SHARDS, folder_option
from selfreflect.config import schema_enum
from selfreflect.errors import InputError
from selfreflect.scoring.budget import parse_budget
from selfreflect.scoring.registry import JUDGES

if TYPE_CHECKING:
    import pandas as pd


_FILE = click.Path(dir_okay=False)


def _is_json(path: str | os.PathLike) -> bool:
    return Path(path).suffix.lower() == ".json"


def _defaults(name: str, path: str) -> dict[str, Any]:
    """The schema's defaults for a config whose only model is the judge at ``path``."""
    from selfreflect.config import validate_config

    minimal = {
        "models": {name: {"path": path}},
        "subjects": [name],
        "judges": [name],
        "datasets": {"none": {"source": "local"}},
    }
    return validate_config(minimal, source="defaults")


def _config_and_judge(config_path: str | None, judge: str) -> tuple[dict[str, Any], dict]:
    """The config (schema defaults without ``--config``) and the judge's model entry.

    ``judge`` is a model name of the config or, failing that, a model directory.
    """
    from selfreflect.config import load_config, model_spec

    config = load_config(config_path) if config_path else None
    if config is not None and judge in config["models"]:
        return config, model_spec(config, judge, source=config_path)
    if config_path and not Path(judge).exists():
        raise InputError(f"{config_path}: models: unknown judge '{judge}' (not a directory)")
    name = Path(judge).name or judge
    defaults = _defaults(name, judge)
    config = config or defaults
    return config, {**model_spec(defaults, name), "fidelity": config["fidelity"]}


def read_answers(path: str) -> pd.DataFrame:
    from selfreflect.artifacts import read_table
    from selfreflect.reference_format import read_reference_answers

    return read_reference_answers(path) if _is_json(path) else read_table("answers", path)


def read_summaries(path: str) -> pd.DataFrame:
    """A summaries table, or a reference summaries file as one (one row per summary key)."""
    import pandas as pd

    from selfreflect.artifacts import read_table
    from selfreflect.questions import question_id
    from selfreflect.reference_format import read_reference_summaries

    if not _is_json(path):
        return read_table("summaries", path)
    rows = [
        (question_id(record["question"]), record["question"], key, summary, None)
        for record in read_reference_summaries(path)
        for key, summary in record["summaries"].items()
    ]
    return pd.DataFrame(rows, columns=["id", "question", "strategy", "summary", "error"])


def check_questions_answered(
    summaries: pd.DataFrame, summaries_path: str, answers: pd.DataFrame, answers_path: str
) -> None:
    """Refuse summaries none of whose questions the answers hold (nothing would be scored);
    warn of those some of whose do not."""
    asked = set(summaries["id"])
    unknown = asked - set(answers["id"])
    if unknown == asked:
        raise InputError(
            f"{summaries_path}: no summary's question is in {answers_path} (answers of other"
            " questions)"
        )
    if unknown:
        click.echo(f"warning: {len(unknown)} summaries lack a question in the answers", err=True)


@click.command()
@click.option("--config", "config_path", type=_FILE, help="Experiment config (YAML).")
@click.option(
    "--judge", required=True, help="Judge: a model name of the config, or a model directory."
)
@click.option(
    "--test-answers",
    "--answers",
    "answers_path",
    required=True,
    type=_FILE,
    help="answers table (Parquet) or reference test-answers file (.json).",
)
@click.option(
    "--summaries",
    "summaries_path",
    required=True,
    type=_FILE,
    help="summaries table (Parquet) or reference summaries file (.json).",
)
@click.option(
    "--out",
    required=True,
    type=_FILE,
    help="scores table (Parquet), or reference scores format if it ends in .json.",
)
@click.option("--backend", type=click.Choice(JUDGES.names()), help="Judge engine.")
@click.option("--temperature", type=float, help="Post-hoc temperature (default 5).")
@click.option("--stopwords", help="wordfreq, none, or a word-list file.")
@click.option("--dtype", type=click.Choice(schema_enum("scoring", "dtype")))
@click.option("--batch-size", type=click.IntRange(min=1), help="Masked words per judge step.")
@click.option(
    "--token-budget",
    type=parse_budget,
    metavar="TOKENS|auto",
    help="hf: tokens per judge forward, packed by masked word (instead of --batch-size); auto:"
    " as many as half the free device memory holds.",
)
@folder_option(
    "--cache",
    "Folder of the judge's content-addressed results, kept and reused across runs"
    " (default: one beside --out, removed once it is written).",
    required=False,
)
@SHARD
@SHARDS
def score(
    config_path: str | None,
    judge: str,
    answers_path: str,
    summaries_path: str,
    out: str,
    cache_dir: str | None,
    shard: int,
    shards: int,
    **overrides: Any,
) -> None:
    """Score summaries with a judge model (docs/protocol.md §5); unset options come from the config.

    The workflow's judge pass (``selfreflect judge``) on these summaries alone. Resumable:
    every judged summary goes into the result cache, so a killed job, rerun, judges only the
    rest.
    """
    import shutil

    from selfreflect import sharding
    from selfreflect.artifacts import check_answers, one_label, write_table
    from selfreflect.failures import check_failures
    from selfreflect.fileio import check_writable, write_json
    from selfreflect.provenance import provenance
    from selfreflect.reference_format import reference_scores
    from selfreflect.scoring.cache import open_cache
    from selfreflect.scoring.experiment import score_table
    from selfreflect.scoring.registry import open_judge
    from selfreflect.scoring.stopwords import stopword_policy
    from selfreflect.strategies.text import blank_summaries

    config, spec = _config_and_judge(config_path, judge)
    settings = {**config["scoring"], **{k: v for k, v in overrides.items() if v is not None}}
    is_stopword = stopword_policy(settings["stopwords"])
    answers = read_answers(answers_path)
    summaries = read_summaries(summaries_path)
    if summaries.empty:
        raise InputError(f"{summaries_path}: no summaries to score")
    # every score row (failed questions' too) carries the summaries' dataset and subject (None
    # for a reference-format file, which names neither)
    labels = {key: one_label(summaries, key, summaries_path) for key in ("dataset", "subject")}
    check_answers(answers, answers_path, {} if _is_json(answers_path) else labels)
    check_questions_answered(summaries, summaries_path, answers, answers_path)
    answers = sharding.shard(answers, shard, shards)
    blank = blank_summaries(summaries["summary"])
    if blank.any():
        keys = ", ".join(dict.fromkeys(summaries["strategy"][blank]))
        click.echo(
            f"warning: {summaries_path}: {int(blank.sum())} blank summaries ({keys}),"
            " scored as given",
            err=True,
        )
    cache = Path(cache_dir or Path(out).parent / f".{Path(out).name}.judge-cache")
    for path in [out, cache]:
        check_writable(path)
    cached = open_cache(cache, spec, settings)
    with open_judge(spec, settings) as model:
        scores = score_table(
            model,
            answers,
            summaries,
            settings["temperature"],
            is_stopword,
            settings["keep_tasks"],
            cached,
        )
    scores = scores.assign(**labels)
    check_failures(scores, config["max_failed_share"], f"scoring with {spec['name']}", "strategy")
    if _is_json(out):
        write_json(out, reference_scores(answers, summaries, scores))
    else:
        meta = provenance(
            config,
            [spec["name"]],
            judge=spec["name"],
            settings=settings,
            shard=[shard, shards],
            judge_forward_tokens=model.forward_tokens,
        )
        write_table("scores", scores, out, meta)
    if cache_dir is None:
        shutil.rmtree(cache, ignore_errors=True)
    failed = int(scores["error"].notna().sum())
    click.echo(
        f"{len(scores) - failed} scores ({failed} failed) written to {out}" + cached.unstored_note()
    )
