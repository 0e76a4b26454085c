"""Benchmark the SelfReflect judges on the same inputs: work per task, speed, agreement.

The judge is a random-weight model built in memory from a transformers config of a given
shape (no weights can be downloaded); its tokenizer is the tiny model's (token ids stay below
its 640-entry vocabulary whatever the model's vocabulary size). Inputs are the questions and
answers of the reference example files, cycled to the requested counts, with one summary per
question.

For each number of conditioning answers it scores every task with the `hf` judge (and, with
``--vllm``, the `vllm` judge) and the first ``--reference-tasks`` tasks of each question with
the `reference` judge: each of the reference's tasks is a forward pass of its own, so a subset
gives its rate. Printed, and written to ``--json``: tokens computed per task by the reference
algorithm, by the previous `hf` judge (one right-padded row per masked word) and by the
current one (a token tree per batch), and the distinct tokens of each context (its prefix and
one token tree of all its masked words: the fewest any exact judge can compute), also counted
without timing for ``--count-answers`` held-out answers; tasks/s and speed-ups; per-task
agreement on the common tasks; the FLOP/s of plain matmuls of the model's layer shapes timed
just before each case and the share of it the `hf` judge achieves (on CUDA also the share of
the bf16 peak).
``scripts/render_performance.py`` renders docs/performance.md from the recorded JSON files.

    python scripts/bench_scorer.py --preset tiny --answers 2
    python scripts/bench_scorer.py --preset qwen2.5-7b --device cuda --dtype bfloat16 \\
        --answers 10 --conditioning 10 25 50 --json docs/benchmarks/h100-7b.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "tests" / "data"  # the original tool's example files

PRESETS = {
    "tiny": dict(
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        vocab_size=640,
        tie_word_embeddings=True,
        initializer_range=0.1,  # as the tiny model: peakier distributions
    ),
    "qwen2.5-0.5b": dict(
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=24,
        num_attention_heads=14,
        num_key_value_heads=2,
        vocab_size=151936,
        tie_word_embeddings=True,
    ),
    "qwen2.5-7b": dict(
        hidden_size=3584,
        intermediate_size=18944,
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        vocab_size=152064,
        tie_word_embeddings=False,
    ),
}
PEAK_BF16 = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L40S": 362e12}


def build_model(preset: str, device: str, dtype: torch.dtype):
    """A random-weight Qwen2 model of the preset's shape, in memory."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(**PRESETS[preset], max_position_embeddings=32768, rope_theta=1e6)
    torch.manual_seed(0)
    with torch.device(device):
        return Qwen2ForCausalLM._from_config(config, dtype=dtype).eval()


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


def tree_work(tasks, batch_size: int) -> dict[str, int]:
    """The `hf` judge: the prefix once, then per batch the nodes of its token tree."""
    from selfreflect.scoring.tasks import token_tree

    prefix = tasks.prefix_len
    tokens, keys = prefix, prefix * (prefix + 1) // 2
    for rows in batches(tasks, batch_size):
        tree = token_tree(tasks, rows)
        tokens += len(tree.tokens)
        keys += sum(prefix + d + 1 for d in tree.depths)
    return {"tokens": tokens, "keys": keys}


def distinct_work(tasks) -> dict[str, int]:
    """The fewest tokens an exact judge computes: the prefix and every distinct token after it.

    Positions after a masked word differ for every word in a causal model, so this is one
    token tree of all the context's masked words.
    """
    return tree_work(tasks, len(tasks.sequences))


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
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(judge, work: list, temperature: float, device: str) -> tuple[float, list[torch.Tensor]]:
    """Seconds to score every question of ``work`` and each question's task distances."""
    sync(device)
    start = time.perf_counter()
    distances = [judge.distances(ref, [summary], temperature)[0] for ref, summary in work]
    sync(device)
    return time.perf_counter() - start, distances


def first_tasks(tasks, n: int):
    """The same context with only its first ``n`` tasks (later targets and words dropped)."""
    from selfreflect.scoring.tasks import ContextTasks

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


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        return torch.cuda.get_device_name()
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return f"{names[0] if names else platform.processor()}, {torch.get_num_threads()} threads"


def commit() -> str | None:
    result = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
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


def question_work(fmt, items: list[dict]) -> list:
    """Each question's (reference context, summary) tasks, prompts rendered by ``fmt``."""
    from selfreflect.scoring.stopwords import stopword_policy
    from selfreflect.scoring.tasks import question_tasks

    out = []
    for item in items:
        reference, summaries = question_tasks(
            fmt,
            item["question"],
            item["test"],
            item["conditioning"],
            {"summary": item["summary"]},
            stopword_policy("wordfreq"),
        )
        out.append((reference, summaries["summary"]))
    return out


def work_per_task(work: list, batch_size: int) -> dict:
    """Tokens computed per task by each algorithm (both contexts of a question count)."""
    contexts = [tasks for pair in work for tasks in pair]
    tasks = sum(summary.num_tasks for _, summary in work)
    tokens = {
        "reference": sum(reference_work(t)["tokens"] for t in contexts),
        "hf_padded_rows": sum(padded_rows_work(t, batch_size)["tokens"] for t in contexts),
        "hf": sum(tree_work(t, batch_size)["tokens"] for t in contexts),
        "distinct": sum(distinct_work(t)["tokens"] for t in contexts),
    }
    return {"tasks": tasks, "tokens_per_task": {k: v / tasks for k, v in tokens.items()}}


def bench_case(args, model, fmt, judges: dict, conditioning: int) -> dict:
    """Work, speed and agreement of every judge for one number of conditioning answers."""
    work = question_work(fmt, inputs(args.questions, args.answers, conditioning))
    contexts = [tasks for pair in work for tasks in pair]
    case: dict = {
        "conditioning": conditioning,
        "longest_sequence": max(len(s) for t in contexts for s in t.sequences),
        **work_per_task(work, args.batch_size),
        "hf_flops": sum(
            forward_flops(model.config, tree_work(t, args.batch_size), t.num_tasks)
            for t in contexts
        ),
        "matmul_flop_per_s": matmul_flops_per_s(model.config, args.device, model.dtype),
    }
    results, distances = {}, {}
    for name, judge in judges.items():
        subset = work
        if name == "reference":
            n = args.reference_tasks
            subset = [(first_tasks(r, n), first_tasks(s, n)) for r, s in work]
        seconds, distances[name] = timed(judge, subset, args.temperature, args.device)
        done = sum(summary.num_tasks for _, summary in subset)
        results[name] = {"tasks": done, "seconds": seconds, "tasks_per_s": done / seconds}
    hf = results["hf"]
    hf["flop_per_s"] = case["hf_flops"] / hf["seconds"]
    hf["matmul_share"] = hf["flop_per_s"] / case["matmul_flop_per_s"]
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


def print_case(case: dict) -> None:
    print(
        f"{case['conditioning']} conditioning answers: {case['tasks']} tasks, longest sequence "
        f"{case['longest_sequence']} tokens; {tokens_line(case['tokens_per_task'])}"
    )
    judges = case["judges"]
    for name, result in judges.items():
        print(
            f"{name:>11}: {result['tasks_per_s']:9.3g} tasks/s  {result['seconds']:8.2f} s  "
            f"({result['tasks']} tasks)"
        )
    print(
        f"{'':>11}  hf: {judges['hf']['flop_per_s'] / 1e9:.1f} GFLOP/s = "
        f"{judges['hf']['matmul_share']:.0%} of plain matmuls of the layer shapes "
        f"({case['matmul_flop_per_s'] / 1e9:.1f} GFLOP/s)"
    )
    for pair, gap in case["agreement"].items():
        name, base = pair.split("/")
        speedup = judges[name]["tasks_per_s"] / judges[base]["tasks_per_s"]
        print(f"{'':>11}  speed-up {pair}: {speedup:.1f}x (max task difference {gap:.1e})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--questions", type=int, default=1)
    parser.add_argument("--answers", type=int, default=10, help="held-out answers per question")
    parser.add_argument(
        "--conditioning", type=int, nargs="+", default=[10], help="conditioning answers (sweep)"
    )
    parser.add_argument(
        "--reference-tasks", type=int, default=2, help="tasks per question for reference"
    )
    parser.add_argument(
        "--count-answers",
        type=int,
        nargs="*",
        default=[1, 10],
        help="also count (not time) tokens per task on every example question",
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--temperature", type=float, default=5.0)
    parser.add_argument("--vllm", action="store_true", help="also time the vllm judge")
    parser.add_argument("--json", type=Path, help="write the results to this JSON file")
    args = parser.parse_args()

    from selfreflect.families import PromptFormat, detect_family
    from selfreflect.scoring.hf_judge import HfJudge
    from selfreflect.scoring.reference_judge import ReferenceJudge
    from selfreflect.tiny_model import build_tokenizer

    torch.set_grad_enabled(False)
    record = {
        "command": shlex.join(["python", "scripts/bench_scorer.py", *sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "device": args.device,
        "device_name": device_name(args.device),
        "torch": torch.__version__,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "settings": {k: v for k, v in vars(args).items() if k != "json"},
    }
    tokenizer = build_tokenizer()
    fmt = PromptFormat(tokenizer, detect_family("tiny"))  # the tiny model's prompts
    model = build_model(args.preset, args.device, getattr(torch, args.dtype))
    print(f"{args.preset} on {record['device_name']} ({args.dtype})")
    record["token_counts"] = [
        {
            "answers": answers,
            "conditioning": conditioning,
            **work_per_task(
                question_work(fmt, inputs(None, answers, conditioning)),
                args.batch_size,
            ),
        }
        for answers in args.count_answers
        for conditioning in args.conditioning
    ]
    for count in record["token_counts"]:
        print(
            f"{count['answers']} held-out, {count['conditioning']} conditioning answers: "
            f"{count['tasks']} tasks; {tokens_line(count['tokens_per_task'])}"
        )
    judges = {
        "hf": HfJudge("bench", fmt, model, args.batch_size),
        "reference": ReferenceJudge("bench", fmt, model),
    }
    with tempfile.TemporaryDirectory() as tmp:
        if args.vllm:
            judges["vllm"] = vllm_judge(
                model, tokenizer, args.device, args.dtype, args.batch_size, Path(tmp)
            )
        warm = question_work(fmt, inputs(1, 1, 1))
        for name, judge in judges.items():
            if name != "reference":  # kernels, engine; the baseline needs none
                timed(judge, warm, args.temperature, args.device)
        record["cases"] = []
        for conditioning in args.conditioning:
            case = bench_case(args, model, fmt, judges, conditioning)
            print_case(case)
            record["cases"].append(case)
    if args.device.startswith("cuda"):
        peak = next((v for k, v in PEAK_BF16.items() if k in record["device_name"]), None)
        record["peak_bf16_flop_per_s"] = peak
        for case in record["cases"] if peak else []:
            share = case["judges"]["hf"]["flop_per_s"] / peak
            print(f"{case['conditioning']} conditioning answers: hf at {share:.0%} of bf16 peak")
    record["peak_rss_mib"] = peak_rss_mib()
    print(f"peak host RSS: {record['peak_rss_mib']:.0f} MiB")
    if args.json:
        from selfreflect.fileio import write_json

        write_json(args.json, record)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
