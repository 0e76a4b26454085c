"""Benchmark the SelfReflect judges on the same inputs: work per task, speed, agreement.

The judge is a random-weight model built in memory from a transformers config of a given
shape (no weights can be downloaded); its tokenizer is the tiny model's (token ids stay below
its 640-entry vocabulary whatever the model's vocabulary size). Inputs are the questions and
answers of the reference example files (``tests/data``), cycled to the requested counts, with
one summary per question.

For each number of conditioning answers it scores every task with the `hf` judge (and, with
``--vllm``, the `vllm` judge) and the first ``--reference-tasks`` tasks of each question with
the `reference` judge: each of the reference's tasks is a forward pass of its own, so a subset
gives its rate. Each judge scores a case once untimed (the warm-up: kernels, engine, caches),
then ``--repeats`` times timed; every rate is recorded as the median over the repeats with its
range (min, max), each repeat's rates from that repeat's time. Printed, and written to
``--json``: tokens computed per task by the reference
algorithm, by the previous `hf` judge (one right-padded row per masked word) and by the
current one (a token tree per batch), and the distinct tokens of each context (its prefix and
one token tree of all its masked words: the fewest any exact judge can compute), also counted
without timing for ``--count-answers`` held-out answers; tasks/s and speed-ups; per-task
agreement on the common tasks; the FLOP/s of plain matmuls of the model's layer shapes timed
just before each case and the share of it the `hf` judge achieves (on CUDA also the share of
the bf16 peak). ``selfreflect docs performance`` renders docs/performance.md from the
recorded JSON files.

    selfreflect bench scorer --preset tiny --answers 2
    selfreflect bench scorer --preset qwen2.5-7b --device cuda --dtype bfloat16 --answers 10 \\
        --conditioning 10 --conditioning 25 --conditioning 50 --json docs/benchmarks/h100-7b.json
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click

from selfreflect.scoring.budget import parse_budget
from selfreflect.tiny_model import TINY_SHAPE

if TYPE_CHECKING:
    import torch

REFERENCE = Path("tests") / "data"  # the original tool's example files


@dataclasses.dataclass(frozen=True)
class Settings:
    """The benchmark's options, as recorded with its results."""

    preset: str
    device: str
    dtype: str
    questions: int
    answers: int
    conditioning: list[int]
    reference_tasks: int
    count_answers: list[int]
    batch_size: int
    repeats: int  # timed runs per case and judge after a warm-up (older records: one, no key)
    temperature: float
    vllm: bool
    stopwords: str = "wordfreq"
    # hf: forwards cut by tokens, not batch_size words ("auto": resolved on the device, and the
    # record's settings hold the number; older records: none)
    token_budget: int | str | None = None
    # the model's attention kernel: transformers' ``sdpa`` (the judge's, a fused kernel that
    # takes the tree's additive mask), ``eager`` (its matmuls and softmax) or ``flex_attention``
    # (a compiled kernel that skips the blocks the tree's block mask leaves out); older: sdpa
    attention: str = "sdpa"
    # hf: the decoder run through torch.compile (HfJudge's ``compiled``); older records: eager
    compiled: bool = False


# the model shapes: a Qwen2 config's sizes, and whether the LM head is the embedding matrix
SHAPE = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
    "tie_word_embeddings",
)
PRESETS = {
    "tiny": TINY_SHAPE | {"vocab_size": 640},  # the tiny model's sizes, its tokenizer's vocabulary
    **{
        name: dict(zip(SHAPE, sizes, strict=True))
        for name, sizes in (
            ("qwen2.5-0.5b", (896, 4864, 24, 14, 2, 151936, True)),
            ("qwen2.5-7b", (3584, 18944, 28, 28, 4, 152064, False)),
        )
    },
}
PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L40S": 362e12}

RUNS = Path("docs") / "benchmarks"  # where the docs read the recorded runs
DEVICE_RUNS = RUNS / "device"  # bench device-run's records, their scorer runs among them
RATES = ("seconds", "tasks_per_s", "flop_per_s", "matmul_share", "peak_share")


def read_run(path: Path) -> dict:
    """A run this benchmark recorded (``--json``), as :func:`normalized`."""
    from selfreflect.fileio import read_json

    return normalized(read_json(path), path)


def normalized(run: dict, source: Path) -> dict:
    """A recorded run (read from ``source``); one of one timing per case (from before repeats)
    in the shape of one with repeats: its time as the one ``timings``, each rate's range that
    rate alone, and on CUDA `hf`'s ``peak_share`` computed from the recorded peak."""
    from selfreflect.errors import InputError

    try:
        run["settings"].setdefault("repeats", 1)
        peak = run.get("peak_bf16_flop_per_s")
        for case in run["cases"]:
            hf = case["judges"]["hf"]
            if peak and "peak_share" not in hf:
                hf["peak_share"] = hf["flop_per_s"] / peak
            for result in case["judges"].values():
                result.setdefault("timings", [result["seconds"]])
                ranges = {key: [result[key]] * 2 for key in RATES if key in result}
                result.setdefault("range", ranges)
    except KeyError as err:
        raise InputError(f"{source}: missing field {err}") from None
    return run


def device_runs(folder: Path = DEVICE_RUNS) -> list[dict]:
    """Every ``bench device-run`` record under ``folder``, oldest first, each with its
    ``source`` path and its scorer runs :func:`normalized`."""
    from selfreflect.fileio import read_json

    records = []
    for path in sorted(folder.glob("*.json")):
        record = read_json(path) | {"source": str(path)}
        record["scorer"] = [normalized(run, path) for run in record["scorer"]]
        records.append(record)
    return sorted(records, key=lambda record: record["scorer"][0]["date"])


def recorded(folder: Path = RUNS) -> list[dict]:
    """Every recorded run (``read_run``), oldest first: this benchmark's records under
    ``folder`` and the scorer runs of each ``bench device-run`` record under ``folder/device``."""
    runs = [read_run(path) for path in folder.glob("*.json")]
    for device_run in device_runs(folder / DEVICE_RUNS.name):
        runs += device_run["scorer"]
    return sorted(runs, key=lambda run: run["date"])


class Cut(NamedTuple):
    """How a run cut the `hf` judge's forwards and ran them (:func:`cut`); sorts as a key."""

    by_tokens: bool  # by a token budget, not a batch size
    size: int  # the batch size or the budget (0 where a derived budget is not exact)
    derived: str  # how a budget was derived (``auto``), else ""
    not_the_judges: bool  # forwards run other than the judge runs them by default
    attention: str  # the attention kernel (older records: sdpa)
    compiled: bool  # the decoder through torch.compile (older records: not)


def cut(run: dict, exact: bool = True) -> Cut:
    """How a run cut the `hf` judge's forwards and ran them: by batch size or, by a token
    budget, its tokens and ``auto`` where derived (0 tokens unless ``exact``), then whether
    the forwards ran other than the judge runs them by default (an attention kernel other than
    sdpa, transformers' default, or the decoder compiled), the attention kernel, and whether
    compiled."""
    settings = run["settings"]
    attention = settings.get("attention", "sdpa")
    compiled = settings.get("compiled", False)
    forwards = (attention != "sdpa" or compiled, attention, compiled)
    if settings.get("token_budget") is None:
        return Cut(False, settings["batch_size"], "", *forwards)
    derived = settings.get("token_budget_from", "")
    return Cut(True, settings["token_budget"] if exact or not derived else 0, derived, *forwards)


def cut_text(key: Cut, named: bool = False) -> str:
    """A :func:`cut` in words: ``32`` (``named``: ``batch size 32``), ``token budget 5005
    (auto)`` (``token budget auto`` where not exact), with `` (eager attention)`` or `` (flex
    attention)`` where it was not sdpa and `` (compiled)`` where the decoder was."""
    size, derived = key.size, key.derived
    if key.by_tokens:
        text = f"token budget {size}" if size else "token budget"
        text += (f" ({derived})" if size else f" {derived}") if derived else ""
    else:
        text = f"batch size {size}" if named else str(size)
    kernel = key.attention.removesuffix("_attention")
    text += "" if key.attention == "sdpa" else f" ({kernel} attention)"
    return text + (" (compiled)" if key.compiled else "")


ATTENTION = ("sdpa", "eager", "flex_attention")  # transformers' names


def build_model(preset: str, device: str, dtype: torch.dtype, attention: str = "sdpa"):
    """A random-weight Qwen2 model of the preset's shape, in memory, attending with the
    ``attention`` implementation of transformers."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        **PRESETS[preset],
        max_position_embeddings=32768,
        rope_theta=1e6,
        attn_implementation=attention,
    )
    torch.manual_seed(0)
    with torch.device(device):  # built in float32, then cast: any transformers version
        return Qwen2ForCausalLM(config).to(dtype).eval()


def inputs(questions: int | None, answers: int, conditioning: int) -> list[dict]:
    """Reference questions/answers cycled to the requested counts (None: every example
    question), one summary each."""
    tests = json.loads((REFERENCE / "example_test_answers.json").read_text())
    questions = len(tests) if questions is None else questions
    summaries = json.loads((REFERENCE / "example_summaries.json").read_text())

    def cycle(items: list[str], n: int) -> list[str]:
        return [items[i % len(items)] for i in range(n)]

    out = []
    for i in range(questions):
        record, summary = tests[i % len(tests)], summaries[i % len(summaries)]
        out.append(
            {
                "question": record["question"],
                "test": cycle(record["masked_out_task_answers"], answers),
                "conditioning": cycle(record["conditioning_answers"], conditioning),
                "summary": summary["summaries"]["sample_and_summarize_summary"],
            }
        )
    return out


# --- work per task -------------------------------------------------------------------------


def batches(tasks, batch_size: int) -> list[range]:
    """The rows of each step of ``Judge.distances``."""
    total = len(tasks.sequences)
    return [range(b, min(b + batch_size, total)) for b in range(0, total, batch_size)]


def forward_spans(tasks, batch_size: int, token_budget: int | None) -> list[range]:
    """The rows of each `hf` forward: ``batch_size`` masked words, or those the
    ``token_budget`` packs together."""
    from selfreflect.scoring.contexts import packed_spans

    if token_budget is None:
        return batches(tasks, batch_size)
    return packed_spans(tasks, token_budget)


def reference_work(tasks) -> dict[str, int]:
    """One forward pass over everything before each target token."""
    lengths = [j for k, seq in enumerate(tasks.sequences) for j in range(tasks.starts[k], len(seq))]
    return {"tokens": sum(lengths), "keys": sum(n * (n + 1) // 2 for n in lengths)}


def padded_rows_work(tasks, batch_size: int) -> dict[str, int]:
    """The previous `hf` judge: the prefix once, then per batch one right-padded row per word."""
    prefix = tasks.prefix_len
    tokens = keys = 0
    for rows in batches(tasks, batch_size):
        width = max(len(tasks.sequences[k]) for k in rows) - prefix
        tokens += len(rows) * width
        keys += len(rows) * sum(prefix + d + 1 for d in range(width))
    return {"tokens": prefix + tokens, "keys": prefix * (prefix + 1) // 2 + keys}


def tree_work(tasks, spans: list[range]) -> dict[str, int]:
    """The `hf` judge: the prefix once, then per forward (``spans``) the nodes of its token
    tree."""
    from selfreflect.scoring.contexts import token_tree

    prefix = tasks.prefix_len
    tokens, keys = prefix, prefix * (prefix + 1) // 2
    for rows in spans:
        tree = token_tree(tasks, rows)
        tokens += len(tree.tokens)
        keys += sum(prefix + d + 1 for d in tree.depths)
    return {"tokens": tokens, "keys": keys}


def distinct_work(tasks) -> dict[str, int]:
    """The fewest tokens an exact judge computes: the prefix and every distinct token after it.

    Positions after a masked word differ for every word in a causal model, so this is one
    token tree of all the context's masked words.
    """
    return tree_work(tasks, [range(len(tasks.sequences))])


def forward_flops(config, work: dict[str, int], lm_rows: int) -> float:
    """Forward FLOPs: layer matmuls per token, attention per attended key, LM head rows."""
    h, layers = config.hidden_size, config.num_hidden_layers
    head_dim = getattr(config, "head_dim", None) or h // config.num_attention_heads
    q, kv = config.num_attention_heads * head_dim, config.num_key_value_heads * head_dim
    per_token = 2 * layers * (2 * h * q + 2 * h * kv + 3 * h * config.intermediate_size)
    attention = 4 * layers * q * work["keys"]
    return per_token * work["tokens"] + attention + 2 * h * config.vocab_size * lm_rows


def matmul_flops_per_s(config, device: str, dtype: torch.dtype, rows: int = 512) -> float:
    """FLOP/s of plain ``rows``-row matmuls with the model's layer shapes (q, k, v, o, MLP)."""
    import torch

    h, inter = config.hidden_size, config.intermediate_size
    head_dim = getattr(config, "head_dim", None) or h // config.num_attention_heads
    q, kv = config.num_attention_heads * head_dim, config.num_key_value_heads * head_dim
    shapes = [(h, q), (h, kv), (h, kv), (q, h), (h, inter), (h, inter), (inter, h)]
    with torch.device(device):
        weights = [torch.randn(i, o, dtype=dtype) for i, o in shapes]
        xs = {i: torch.randn(rows, i, dtype=dtype) for i, _ in shapes}

    def once() -> None:
        for w in weights:
            xs[w.shape[0]] @ w

    once()
    sync(device)
    repeat, start = 0, time.perf_counter()
    while repeat < 3 or time.perf_counter() - start < 1.0:
        once()
        repeat += 1
    sync(device)
    seconds = time.perf_counter() - start
    return repeat * sum(2 * rows * i * o for i, o in shapes) / seconds


# --- timing --------------------------------------------------------------------------------


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(judge, work: list, temperature: float, device: str) -> tuple[float, list[torch.Tensor]]:
    """Seconds to score every question of ``work`` and each question's task distances."""
    sync(device)
    start = time.perf_counter()
    distances = [judge.distances(ref, [summary], temperature)[0] for ref, summary in work]
    sync(device)
    return time.perf_counter() - start, distances


def repeated(
    judge, work: list, settings: Settings, amounts: dict[str, float]
) -> tuple[dict, list[torch.Tensor]]:
    """A warm-up (its seconds: ``warmup_seconds``, a compiled judge's compilation included),
    then ``settings.repeats`` timed runs of ``work``: the seconds of each run (``timings``),
    their median and the median of each rate ``amount / seconds``, the range (min, max) of each
    under ``range``; and the last run's task distances."""
    warmup, _ = timed(judge, work, settings.temperature, settings.device)
    runs = [
        timed(judge, work, settings.temperature, settings.device) for _ in range(settings.repeats)
    ]
    seconds = [s for s, _ in runs]
    result: dict = {
        "warmup_seconds": warmup,
        "timings": seconds,
        "seconds": statistics.median(seconds),
    }
    result["range"] = {"seconds": [min(seconds), max(seconds)]}
    for key, amount in amounts.items():
        values = [amount / s for s in seconds]
        result[key] = statistics.median(values)
        result["range"][key] = [min(values), max(values)]
    return result, runs[-1][1]


def host_syncs(judge, work: list, settings: Settings) -> dict | None:
    """On a GPU, the synchronisations of one run of ``work`` (torch's CUDA sync debug mode:
    each wait of the host for the device), beside its contexts and forwards. A judge that
    keeps the device busy waits once per context, to copy its results; one wait per forward
    means the host cannot build the next batch while the device computes. None elsewhere."""
    import warnings

    import torch

    if not settings.device.startswith("cuda"):
        return None
    forwards = judge.forwards
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for reference, summary in work:
                judge.distances(reference, [summary], settings.temperature)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    syncs = sum("synchroniz" in str(warning.message) for warning in caught)
    return {"syncs": syncs, "contexts": 2 * len(work), "forwards": judge.forwards - forwards}


def first_tasks(tasks, n: int):
    """The same context with only its first ``n`` tasks (later targets and words dropped)."""
    from selfreflect.scoring.contexts import ContextTasks

    sequences, starts = [], []
    for sequence, start in zip(tasks.sequences, tasks.starts, strict=True):
        take = min(n, len(sequence) - start)
        if take <= 0:
            break
        sequences.append(sequence[: start + take])
        starts.append(start)
        n -= take
    return ContextTasks(sequences, starts, tasks.prefix_len)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo), else what the platform module says."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.processor()


def device_name(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name()
    return f"{cpu_name()}, {torch.get_num_threads()} threads"


def commit() -> str | None:
    """The checkout's commit, ``-dirty`` where its files differ from it (a lent machine's copy
    of the tree may carry an older history than its files)."""
    result = subprocess.run(
        ["git", "describe", "--always", "--dirty", "--abbrev=7"],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() or None


def vllm_judge(model, tokenizer, device: str, dtype: str, batch_size: int, workdir: Path):
    """A vLLM judge on the same random weights (saved to ``workdir``)."""
    from selfreflect.scoring.vllm_judge import VllmJudge

    model.save_pretrained(workdir)
    tokenizer.save_pretrained(workdir)
    spec = {
        "name": "bench",
        "path": str(workdir),
        "dtype": dtype,
        "max_model_len": 8192,
        "gpu_memory_utilization": 0.8,
        "tensor_parallel_size": 1,
        "enforce_eager": None,  # engine_kwargs: eager on a CPU, compiled on a GPU
        "kv_cache_memory_bytes": 256 * 2**20 if device == "cpu" else None,
    }
    return VllmJudge(spec, batch_size)


def question_work(fmt, items: list[dict], stopwords: str = "wordfreq") -> list:
    """Each question's (reference context, summary) tasks, prompts rendered by ``fmt``, words
    masked by the ``stopwords`` policy."""
    from selfreflect.scoring.contexts import question_tasks
    from selfreflect.scoring.stopwords import stopword_policy

    out = []
    for item in items:
        reference, summaries = question_tasks(
            fmt,
            item["question"],
            item["test"],
            item["conditioning"],
            {"summary": item["summary"]},
            stopword_policy(stopwords),
        )
        out.append((reference, summaries["summary"]))
    return out


def work_per_task(work: list, settings: Settings) -> dict:
    """Tokens computed per task by each algorithm (both contexts of a question count)."""
    contexts = [tasks for pair in work for tasks in pair]
    tasks = sum(summary.num_tasks for _, summary in work)
    cut_by = settings.batch_size, settings.token_budget
    padded = [padded_rows_work(t, settings.batch_size)["tokens"] for t in contexts]
    tokens = {
        "reference": sum(reference_work(t)["tokens"] for t in contexts),
        "hf_padded_rows": sum(padded),
        "hf": sum(tree_work(t, forward_spans(t, *cut_by))["tokens"] for t in contexts),
        "distinct": sum(distinct_work(t)["tokens"] for t in contexts),
    }
    return {"tasks": tasks, "tokens_per_task": {k: v / tasks for k, v in tokens.items()}}


def bench_case(
    settings: Settings, model, fmt, judges: dict, conditioning: int, peak: float | None
) -> dict:
    """Work, speed and agreement of every judge for one number of conditioning answers; `hf`'s
    FLOP/s also as a share of plain matmuls and (``peak``: the device's bf16 FLOP/s) of the
    peak."""
    items = inputs(settings.questions, settings.answers, conditioning)
    work = question_work(fmt, items, settings.stopwords)
    contexts = [tasks for pair in work for tasks in pair]
    cut_by = settings.batch_size, settings.token_budget
    trees = [(t, tree_work(t, forward_spans(t, *cut_by))) for t in contexts]
    case: dict = {
        "conditioning": conditioning,
        "longest_sequence": max(len(s) for t in contexts for s in t.sequences),
        **work_per_task(work, settings),
        "hf_flops": sum(forward_flops(model.config, tree, t.num_tasks) for t, tree in trees),
        # the tokens `hf` computes in a pass (prefixes and trees), as a judge job counts them
        "hf_forward_tokens": sum(tree["tokens"] for _, tree in trees),
        "matmul_flop_per_s": matmul_flops_per_s(model.config, settings.device, model.dtype),
    }
    results, distances = {}, {}
    for name, judge in judges.items():
        subset = work
        if name == "reference":
            n = settings.reference_tasks
            subset = [(first_tasks(r, n), first_tasks(s, n)) for r, s in work]
        done = sum(summary.num_tasks for _, summary in subset)
        amounts = {"tasks_per_s": done}
        if name == "hf":
            flops = case["hf_flops"]
            amounts |= {"flop_per_s": flops, "matmul_share": flops / case["matmul_flop_per_s"]}
            amounts |= {"forward_tokens_per_s": case["hf_forward_tokens"]}
            amounts |= {"peak_share": flops / peak} if peak else {}
        result, distances[name] = repeated(judge, subset, settings, amounts)
        results[name] = {"tasks": done, **result}
        if name == "hf" and (syncs := host_syncs(judge, subset, settings)) is not None:
            results[name]["host_syncs"] = syncs
    case["judges"] = results
    case["agreement"] = {
        f"hf/{other}": max(
            float((a[: len(b)] - b).abs().max())
            for a, b in zip(distances["hf"], distances[other], strict=True)
        )
        for other in judges
        if other != "hf"
    }
    return case


def tokens_line(tokens: dict[str, float]) -> str:
    return (
        f"tokens per task: reference {tokens['reference']:.0f}, hf padded rows "
        f"{tokens['hf_padded_rows']:.1f}, hf token tree {tokens['hf']:.1f} "
        f"({1 - tokens['hf'] / tokens['hf_padded_rows']:.0%} fewer), distinct tokens "
        f"{tokens['distinct']:.1f}"
    )


def spread(result: dict, key: str, spec: str, scale: float = 1) -> str:
    """A recorded rate: the median, and over repeats its range, e.g. ``4.53 (4.41–4.6)``."""
    text = f"{result[key] / scale:{spec}}"
    if len(result["timings"]) > 1:
        low, high = (value / scale for value in result["range"][key])
        text += f" ({low:{spec}}–{high:{spec}})"
    return text


def print_case(case: dict) -> None:
    print(
        f"{case['conditioning']} conditioning answers: {case['tasks']} tasks, longest sequence "
        f"{case['longest_sequence']} tokens; {tokens_line(case['tokens_per_task'])}"
    )
    judges = case["judges"]
    for name, result in judges.items():
        print(
            f"{name:>11}: {spread(result, 'tasks_per_s', '.3g')} tasks/s, "
            f"{spread(result, 'seconds', '.3g')} s ({result['tasks']} tasks; median (min–max) "
            f"of {len(result['timings'])} runs; warm-up {result['warmup_seconds']:.3g} s)"
        )
    hf = judges["hf"]
    print(
        f"{'':>11}  hf: {spread(hf, 'flop_per_s', '.1f', 1e9)} GFLOP/s = "
        f"{spread(hf, 'matmul_share', '.0%')} of plain matmuls of the layer shapes "
        f"({case['matmul_flop_per_s'] / 1e9:.1f} GFLOP/s)"
        + (f", {spread(hf, 'peak_share', '.0%')} of bf16 peak" if "peak_share" in hf else "")
    )
    for pair, gap in case["agreement"].items():
        name, base = pair.split("/")
        speedup = judges[name]["tasks_per_s"] / judges[base]["tasks_per_s"]
        print(f"{'':>11}  speed-up {pair}: {speedup:.1f}x (max task difference {gap:.1e})")


def judges_of(settings: Settings, model, fmt, tokenizer, workdir: Path) -> dict:
    """The judges timed (each case warms them up)."""
    from selfreflect.scoring.hf_judge import HfJudge
    from selfreflect.scoring.reference_judge import ReferenceJudge

    judges = {
        "hf": HfJudge(
            "bench",
            fmt,
            model,
            settings.batch_size,
            token_budget=settings.token_budget,
            compiled=settings.compiled,
        ),
        "reference": ReferenceJudge("bench", fmt, model),
    }
    if settings.vllm:
        judges["vllm"] = vllm_judge(
            model, tokenizer, settings.device, settings.dtype, settings.batch_size, workdir
        )
    return judges


def benchmark(settings: Settings) -> dict:
    """Count the work per task, time every case and print it; the run's record."""
    import torch

    from selfreflect.families import PromptFormat, detect_family
    from selfreflect.scoring.hf_judge import auto_budget
    from selfreflect.tiny_model import build_tokenizer

    torch.set_grad_enabled(False)
    record = {
        "command": shlex.join(["selfreflect", *sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "device": settings.device,
        "device_name": device_name(settings.device),
        "torch": torch.__version__,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "settings": dataclasses.asdict(settings),
    }
    if settings.device.startswith("cuda"):
        name = record["device_name"]
        record["peak_bf16_flop_per_s"] = next((v for k, v in PEAK_BF16.items() if k in name), None)
    tokenizer = build_tokenizer()
    fmt = PromptFormat(tokenizer, detect_family("tiny"))  # the tiny model's prompts
    dtype = getattr(torch, settings.dtype)
    model = build_model(settings.preset, settings.device, dtype, settings.attention)
    if settings.token_budget == "auto":  # as the judge job derives it: after the full length
        budget = auto_budget(model, model.config.max_position_embeddings)
        settings = dataclasses.replace(settings, token_budget=budget)
        record["settings"] = dataclasses.asdict(settings) | {"token_budget_from": "auto"}
    compiled = ", compiled" if settings.compiled else ""
    print(
        f"{settings.preset} on {record['device_name']}"
        f" ({settings.dtype}, {settings.attention}{compiled})"
    )
    record["token_counts"] = [
        {
            "answers": answers,
            "conditioning": conditioning,
            **work_per_task(
                question_work(fmt, inputs(None, answers, conditioning), settings.stopwords),
                settings,
            ),
        }
        for answers in settings.count_answers
        for conditioning in settings.conditioning
    ]
    for count in record["token_counts"]:
        print(
            f"{count['answers']} held-out, {count['conditioning']} conditioning answers: "
            f"{count['tasks']} tasks; {tokens_line(count['tokens_per_task'])}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        judges = judges_of(settings, model, fmt, tokenizer, Path(tmp))
        record["cases"] = []
        for conditioning in settings.conditioning:
            peak = record.get("peak_bf16_flop_per_s")
            case = bench_case(settings, model, fmt, judges, conditioning, peak)
            print_case(case)
            record["cases"].append(case)
    record["peak_rss_mib"] = peak_rss_mib()
    print(f"peak host RSS: {record['peak_rss_mib']:.0f} MiB")
    return record


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--preset", type=click.Choice(sorted(PRESETS)), default="tiny", show_default=True)
@click.option("--device", help="torch device  [default: cuda if available, else cpu]")
@click.option(
    "--dtype", type=click.Choice(["float32", "bfloat16"]), default="float32", show_default=True
)
@click.option("--questions", type=int, default=1, show_default=True)
@click.option(
    "--answers", type=int, default=10, show_default=True, help="held-out answers per question"
)
@click.option(
    "--conditioning",
    type=int,
    multiple=True,
    default=[10],
    show_default=True,
    help="conditioning answers (repeat the option for a sweep)",
)
@click.option(
    "--reference-tasks",
    type=int,
    default=2,
    show_default=True,
    help="tasks per question for reference",
)
@click.option(
    "--count-answers",
    type=int,
    multiple=True,
    default=[1, 10],
    show_default=True,
    help="also count (not time) tokens per task on every example question (repeatable)",
)
@click.option("--batch-size", type=int, default=16, show_default=True)
@click.option(
    "--token-budget",
    type=parse_budget,
    metavar="TOKENS|auto",
    help="hf: tokens per forward, packed by masked word, instead of --batch-size; auto: derived"
    " from the free device memory as scoring.token_budget: auto",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=3),
    default=3,
    show_default=True,
    help="timed runs per case and judge after the warm-up (at least 3: a median and a range)",
)
@click.option(
    "--attention",
    type=click.Choice(ATTENTION),
    default="sdpa",
    show_default=True,
    help="the random-weight model's attention implementation (the judge's: sdpa)",
)
@click.option(
    "--compile",
    "compiled",
    is_flag=True,
    help="hf: run the decoder through torch.compile (its warm-up compiles)",
)
@click.option("--temperature", type=float, default=5.0, show_default=True)
@click.option("--vllm", is_flag=True, help="also time the vllm judge")
@click.option(
    "--stopwords",
    default="wordfreq",
    show_default=True,
    help="stopword policy (scoring.stopwords), e.g. a word list where wordfreq is not installed",
)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="write results here")
def scorer(device: str | None, json_path: str | None, **options) -> None:
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    lists = {name: list(options[name]) for name in ("conditioning", "count_answers")}
    record = benchmark(Settings(device=device, **{**options, **lists}))
    if json_path:
        from selfreflect.fileio import write_json

        write_json(json_path, record)
        print(f"wrote {json_path}")
