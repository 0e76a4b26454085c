"""Benchmark the SelfReflect judges on the same inputs: reference vs hf (vs vllm).

The judge is a random-weight model built in memory from a transformers config of a given
shape (no weights can be downloaded); its tokenizer is the tiny model's (token ids stay below
its 640-entry vocabulary whatever the model's vocabulary size). Inputs are the questions and
answers of the reference example files, cycled to the requested counts, with one summary per
question. Prints tasks/s per backend, speed-ups, their agreement, peak host RSS and, on CUDA,
the achieved fraction of the bf16 peak FLOP/s on the hf judge's suffix tokens.

    python scripts/bench_scorer.py --preset qwen2.5-0.5b --questions 1 --answers 4
    python scripts/bench_scorer.py --preset qwen2.5-7b --device cuda --dtype bfloat16
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import torch

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data"  # the original tool's examples

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


def inputs(questions: int, answers: int, conditioning: int) -> list[dict]:
    """Reference questions/answers cycled to the requested counts, one summary each."""
    tests = json.loads((REFERENCE / "example_test_answers.json").read_text())
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


def suffix_flops(config, reference, summary) -> float:
    """Forward FLOPs of the hf judge's suffix tokens (matmuls, attention, LM head rows)."""
    h, layers = config.hidden_size, config.num_hidden_layers
    kv = config.num_key_value_heads * (h // config.num_attention_heads)
    per_token = 2 * layers * (2 * h * h + 2 * h * kv + 3 * h * config.intermediate_size)
    total = 0.0
    for tasks in (reference, summary):
        for seq in tasks.sequences:
            suffix = len(seq) - tasks.prefix_len
            attention = 4 * layers * h * suffix * (tasks.prefix_len + suffix / 2)
            total += per_token * suffix + attention
        total += 2 * h * config.vocab_size * tasks.num_tasks
    return total


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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
        "enforce_eager": device == "cpu",
        "kv_cache_memory_bytes": 512 * 2**20 if device == "cpu" else None,
    }
    return VllmJudge(spec, batch_size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--answers", type=int, default=10, help="held-out answers per question")
    parser.add_argument("--conditioning", type=int, default=10, help="conditioning answers")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--temperature", type=float, default=5.0)
    parser.add_argument("--vllm", action="store_true", help="also time the vllm judge")
    parser.add_argument("--skip-reference", action="store_true", help="time hf (and vllm) only")
    args = parser.parse_args()

    from selfreflect.scoring.hf_judge import HfJudge
    from selfreflect.scoring.reference_judge import ReferenceJudge
    from selfreflect.scoring.stopwords import stopword_policy
    from selfreflect.scoring.tasks import question_tasks
    from selfreflect.tiny_model import build_tokenizer

    torch.set_grad_enabled(False)
    tokenizer = build_tokenizer()
    model = build_model(args.preset, args.device, getattr(torch, args.dtype))
    start = time.perf_counter()
    work = [
        question_tasks(
            tokenizer,
            item["question"],
            item["test"],
            item["conditioning"],
            {"summary": item["summary"]},
            stopword_policy("wordfreq"),
        )
        for item in inputs(args.questions, args.answers, args.conditioning)
    ]
    build_s = time.perf_counter() - start
    tasks = sum(summaries["summary"].num_tasks for _, summaries in work)
    longest = max(len(s) for ref, _ in work for s in ref.sequences)
    print(
        f"{args.preset} on {args.device} ({args.dtype}): {len(work)} questions, {tasks} tasks, "
        f"longest sequence {longest} tokens; task construction {build_s:.2f} s"
    )

    judges = {"hf": HfJudge("bench", tokenizer, model, args.batch_size)}
    if not args.skip_reference:
        judges["reference"] = ReferenceJudge("bench", tokenizer, model)
    with tempfile.TemporaryDirectory() as tmp:
        if args.vllm:
            judges["vllm"] = vllm_judge(
                model, tokenizer, args.device, args.dtype, args.batch_size, Path(tmp)
            )
        seconds, scores = {}, {}
        for name, judge in judges.items():
            sync = torch.cuda.synchronize if args.device.startswith("cuda") else lambda: None
            if name != "reference":  # warm-up (kernels, engine); the baseline needs none
                judge.distances(*_first(work), args.temperature)
            sync()
            start = time.perf_counter()
            scores[name] = [
                judge.distances(ref, [s["summary"]], args.temperature)[0].mean().item()
                for ref, s in work
            ]
            sync()
            seconds[name] = time.perf_counter() - start
            print(
                f"{name:>9}: {tasks / seconds[name]:10.2f} tasks/s  {seconds[name]:8.2f} s  "
                f"peak RSS so far {peak_rss_mib():8.0f} MiB  "
                f"mean score {sum(scores[name]) / len(scores[name]):.6f}"
            )
    for name, base in [("hf", "reference"), ("vllm", "reference"), ("hf", "vllm")]:
        if name in judges and base in judges:
            gap = max(abs(a - b) for a, b in zip(scores[name], scores[base], strict=True))
            print(
                f"speed-up {name}/{base}: {seconds[base] / seconds[name]:.1f}x "
                f"(max score difference {gap:.2e})"
            )
    if args.device.startswith("cuda"):
        flops = sum(suffix_flops(model.config, ref, s["summary"]) for ref, s in work)
        device_name = torch.cuda.get_device_name()
        peak = next((v for k, v in PEAK_BF16.items() if k in device_name), None)
        achieved = flops / seconds["hf"]
        share = f" = {achieved / peak:.0%} of bf16 peak" if peak else ""
        print(f"hf suffix FLOP/s on {device_name}: {achieved / 1e12:.1f} TFLOP/s{share}")
    print(f"peak host RSS: {peak_rss_mib():.0f} MiB")


def _first(work):
    reference, summaries = work[0]
    return reference, [summaries["summary"]]


if __name__ == "__main__":
    main()
