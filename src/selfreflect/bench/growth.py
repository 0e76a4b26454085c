"""How the real run grows: the paper-shaped DAG with the tiny model at several sizes, and the
judge's work per question with Qwen2.5's tokenizer on real answers.

    selfreflect bench growth --json docs/growth.json        # 10, 20, 40 questions, N = 25
    selfreflect bench growth --questions 2 --questions 4 --answers 2 --json small.json

Each size is the run of ``--config`` (default: the smoke config, the paper's DAG on the tiny
model: every rule, six strategies, the studies) with that many questions per dataset and N
test and conditioning answers, under the run name ``growth-q<Q>-n<N>`` in a kept work folder
(``--work``): a later call resumes, skipping the sizes ``--json`` holds and the jobs Snakemake
finds done. The JSON carries the measured config's digest; one measured on another config (or
made before digests) is refused rather than resumed. Recorded per size: each job's wall and
CPU seconds and peak memory (its Snakemake benchmark file), each rule's output size, the
judge's forward tokens.

The judge's work per question counts the tasks and the tokens the `hf` judge computes (the
prefix and one token tree per batch of each context, as :mod:`selfreflect.bench.scorer`
counts them) with the tokenizer and prompts of ``--tokenizer-model`` (a ``models`` entry of
``--tokenizer-config``: Qwen2.5-Coder-0.5B-Instruct, the paper's judge's tokenizer) on the
original tool's example answers (tests/data: real answers, 10 held-out answers per
question, cycled to N = ``--judge-answers`` held-out and conditioning answers); with
Qwen2.5-7B's shape these give the judge's FLOPs per question. No model runs.
``selfreflect docs scale`` renders both, with the paper run's prediction, in
docs/scale.md.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import yaml

from selfreflect.bench.scale import copy_checkout, job_records, output_sizes, sized_config

PREDICTED_MODEL = "qwen2.5-7b"  # the paper's judge: its shape gives the FLOPs per question
# The smoke config's datasets read from the shipped real question files (110 free-form, 40
# MMLU questions), so that each has the questions of every default size.
DATASETS = ("smoke=data/questions/real.jsonl", "smoke_mmlu=data/questions/real_mmlu")


def run_name(questions: int, answers: int) -> str:
    return f"growth-q{questions}-n{answers}"


def judge_tokens(project: Path, run: str) -> int:
    """The judge's forward tokens in ``run``: the merged judgements' shards record them."""
    from selfreflect.artifacts import read_metadata
    from selfreflect.report.performance import judge_tokens_table

    paths = (project / "results" / run).glob("*/*/judgements/*.parquet")
    table = judge_tokens_table(read_metadata(path) for path in paths)
    return int(table.loc[table["kind"] == "total", "judge_forward_tokens"].sum())


def measure_size(
    project: Path, config: Path, datasets: dict[str, str], size: tuple[int, int], cores: int
) -> dict:
    """Run ``config`` at one size (questions, N) in ``project``, its ``datasets`` read from the
    files given (resuming what is done); its record."""
    from selfreflect.bench.scale import snakemake
    from selfreflect.snakemake_jobs import job_stats

    questions, answers = size
    run = run_name(questions, answers)
    sized = sized_config(project / config, questions, answers)
    sized["run"] = run
    for name, path in datasets.items():
        sized["datasets"][name]["path"] = path
    name = f"{run}.yaml"
    (project / name).write_text(yaml.safe_dump(sized, sort_keys=False))
    planned = job_stats(snakemake(project, "-n", config=name))
    start = time.perf_counter()
    snakemake(project, "--cores", str(cores), "--resources", "gpu=1", config=name)
    jobs = job_records(project, run)
    return {
        "questions": questions,
        "answers": answers,
        "run_seconds": round(time.perf_counter() - start, 1),  # of this call (it may resume)
        "jobs": jobs,
        "outputs": output_sizes(
            project, snakemake(project, "--summary", config=name), set(planned)
        ),
        "judge_forward_tokens": judge_tokens(project, run),
        "load_average": round(os.getloadavg()[0], 2),
    }


def load_tokenizer(spec: dict[str, Any]) -> Any:
    """The tokenizer of a ``models`` entry: its folder's, else its GGUF file's."""
    from transformers import AutoTokenizer

    from selfreflect.model_sources import gguf_file

    if not spec.get("gguf"):
        return AutoTokenizer.from_pretrained(spec["path"])
    with gguf_file(spec) as source:
        return AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)


def context_work(
    contexts: list, batch_size: int, token_budget: int | None = None
) -> list[dict[str, float]]:
    """Per context (its :class:`~selfreflect.scoring.contexts.ContextTasks`): the tokens and
    attended keys the `hf` judge computes (the prefix once, one token tree per batch of
    ``batch_size`` sequences, or per run of sequences the ``token_budget`` packs) and their
    forward FLOPs with Qwen2.5-7B's shape, the prefix's tokens and FLOPs alone as
    ``prefix_tokens`` and ``prefix_flops``."""
    from types import SimpleNamespace

    from selfreflect.bench.scorer import PRESETS, forward_flops, forward_spans, tree_work

    shape = SimpleNamespace(**PRESETS[PREDICTED_MODEL])
    out = []
    for tasks in contexts:
        spans = forward_spans(tasks, batch_size, token_budget)
        counted, prefix = tree_work(tasks, spans), tree_work(tasks, [])
        flops = forward_flops(shape, counted, tasks.num_tasks)
        out.append(
            {
                **counted,
                "flops": flops,
                "prefix_tokens": prefix["tokens"],
                "prefix_flops": forward_flops(shape, prefix, 0),
            }
        )
    return out


def judge_work(spec: dict[str, Any], sizes: tuple[int, ...], batch_size: int) -> dict:
    """The `hf` judge's work per question on the example answers, cycled to N held-out and N
    conditioning answers for each N of ``sizes``, with the tokenizer and prompts of the
    ``models`` entry ``spec``: the
    tasks, and the tokens, attended keys and Qwen2.5-7B forward FLOPs of the reference context
    and of one summary's context (the example's sample-and-summarize summary)."""
    from selfreflect.bench.scorer import inputs, question_work
    from selfreflect.families import PromptFormat

    fmt = PromptFormat.for_model(load_tokenizer(spec), spec)
    cases = []
    for n in sizes:
        work = question_work(fmt, inputs(None, n, n))
        tasks = sum(summary.num_tasks for _, summary in work) / len(work)
        case: dict[str, Any] = {"answers": n, "tasks": tasks}
        for name, index in (("reference", 0), ("summary", 1)):
            counted = context_work([pair[index] for pair in work], batch_size)
            case[name] = {key: sum(c[key] for c in counted) / len(work) for key in counted[0]}
        cases.append(case)
    return {
        "predicted_model": PREDICTED_MODEL,
        "batch_size": batch_size,
        "questions": len(work),
        "cases": cases,  # per question
    }


def tokenizer_options(command: Callable) -> Callable:
    """The options naming the model whose tokenizer counts the judge's work: --tokenizer-config
    and --tokenizer-model (a model of that config)."""
    command = click.option("--tokenizer-model", default="qwen2.5-coder-0.5b", show_default=True)(
        command
    )
    return click.option(
        "--tokenizer-config",
        default="config/science.yaml",
        show_default=True,
        type=click.Path(dir_okay=False, path_type=Path),
    )(command)


def tokenizer_spec(config: Path, model: str) -> dict[str, Any]:
    """The ``models`` entry of --tokenizer-model in --tokenizer-config (a usage error naming
    the option where the config has no such model)."""
    from selfreflect.config import load_config

    models = load_config(config)["models"]
    if model not in models:
        raise click.BadParameter(
            f"'{model}' is not a model of {config}", param_hint="--tokenizer-model"
        )
    return models[model]


@click.command()
@click.option(
    "--config",
    default="config/smoke.yaml",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The run measured at each size (its models, strategies and studies).",
)
@click.option(
    "--questions",
    "sizes",
    type=click.IntRange(min=1),
    multiple=True,
    default=(10, 20, 40),
    show_default=True,
)
@click.option(
    "--answers", type=click.IntRange(min=1), default=25, show_default=True, help="N at every size."
)
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    default=DATASETS,
    show_default=True,
    help="NAME=PATH: read the config's dataset NAME from PATH (enough questions for each size).",
)
@click.option("--cores", default=os.cpu_count(), show_default=True, help="Snakemake's --cores.")
@click.option(
    "--work",
    type=click.Path(file_okay=False, path_type=Path),
    help="Kept work folder, so that a later call resumes [default: a temporary one].",
)
@tokenizer_options
@click.option(
    "--judge-answers",
    type=click.IntRange(min=1),
    multiple=True,
    default=(10, 25, 50),
    show_default=True,
)
@click.option("--json", "json_out", required=True, type=click.Path(dir_okay=False, path_type=Path))
def growth(
    config: Path,
    sizes: tuple[int, ...],
    answers: int,
    datasets: tuple[str, ...],
    cores: int,
    work: Path | None,
    tokenizer_config: Path,
    tokenizer_model: str,
    judge_answers: tuple[int, ...],
    json_out: Path,
) -> None:
    """Measure the run of CONFIG at several sizes and the judge's work per question (run from
    the project's root); written to --json after each size."""
    from selfreflect.config import load_config
    from selfreflect.fileio import write_json

    measured = load_config(config)
    paths = dataset_paths(datasets, measured, config)
    digest = measured_digest(measured, paths)
    spec = tokenizer_spec(tokenizer_config, tokenizer_model)
    record = resumed(json_out, (str(config), digest), (str(tokenizer_config), tokenizer_model))
    if "judge_work" not in record:
        per_question = judge_work(spec, judge_answers, load_paper_batch_size())
        record["judge_work"] = {"config": str(tokenizer_config), "tokenizer_model": tokenizer_model}
        record["judge_work"] |= per_question
        write_json(json_out, record)
    done = {(s["questions"], s["answers"]) for s in record.get("sizes", [])}
    todo = [q for q in sizes if (q, answers) not in done]
    with tempfile.TemporaryDirectory(prefix="growth-bench-") as tmp:
        root = work or Path(tmp)
        project = root / "project"
        if not (project / "workflow").is_dir():
            copy_checkout(Path.cwd(), project)
        for questions in todo:
            size = measure_size(project, config, paths, (questions, answers), cores)
            record |= {"config": str(config), "config_digest": digest, "cpus": os.cpu_count()}
            record["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            record["sizes"] = sorted(
                [*record.get("sizes", []), size], key=lambda s: (s["answers"], s["questions"])
            )
            write_json(json_out, record)
            cpu = sum(job["cpu_s"] for job in size["jobs"])
            click.echo(f"{questions} questions, N = {answers}: {cpu:.0f} CPU s")


def dataset_paths(
    entries: tuple[str, ...], config: dict[str, Any], config_path: Path
) -> dict[str, str]:
    """The ``--dataset NAME=PATH`` entries as ``{NAME: PATH}``, each NAME a dataset of
    ``config``; one line naming the entry otherwise."""
    paths = {}
    for entry in entries:
        name, equals, path = entry.partition("=")
        if not (name and equals and path):
            raise click.BadParameter(f"'{entry}' is not NAME=PATH", param_hint="--dataset")
        if name not in config["datasets"]:
            known = ", ".join(config["datasets"])
            raise click.BadParameter(
                f"'{name}' is not a dataset of {config_path} ({known})", param_hint="--dataset"
            )
        paths[name] = path
    return paths


def measured_digest(config: dict[str, Any], datasets: dict[str, str]) -> str:
    """The digest of the run measured at each size: ``config`` (validated) with its
    ``datasets`` read from the files given."""
    from selfreflect.provenance import config_hash

    measured = copy.deepcopy(config)
    for name, path in datasets.items():
        measured["datasets"][name]["path"] = path
    return config_hash(measured)


def resumed(json_out: Path, run: tuple[str, str], tokenizer: tuple[str, str]) -> dict[str, Any]:
    """What ``json_out`` holds (nothing if it is missing), to resume; refused, naming the
    field, if it is not a growth record, if its sizes were measured on another ``run`` (config
    path and digest; a record without a digest cannot tell) or its judge work counted with
    another ``tokenizer`` (config path and model): its numbers would stand for this run's."""
    from selfreflect.errors import InputError
    from selfreflect.fileio import read_json

    if not json_out.exists():
        return {}
    record = read_json(json_out)
    if not isinstance(record, dict):
        raise InputError(f"{json_out}: expected a JSON object (a growth record)")
    made = (record.get("config"), record.get("config_digest"))
    if record.get("sizes") and made != run:
        raise InputError(
            f"{json_out}: config_digest: its sizes were measured on another config ({made[0]},"
            f" digest {made[1] or 'none'}) than {run[0]} (digest {run[1][:12]}); use another --json"
        )
    counted = record.get("judge_work")
    if counted is not None and (counted.get("config"), counted.get("tokenizer_model")) != tokenizer:
        raise InputError(
            f"{json_out}: judge_work: counted with {counted.get('tokenizer_model')} of"
            f" {counted.get('config')}, not {tokenizer[1]} of {tokenizer[0]}; use another --json"
        )
    return record


def load_paper_batch_size() -> int:
    """The paper config's scoring batch size (masked words per judge step)."""
    from selfreflect.config import load_config
    from selfreflect.paths import DEFAULT_CONFIG

    return load_config(DEFAULT_CONFIG)["scoring"]["batch_size"]
