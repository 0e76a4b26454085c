"""Batched against one-prompt-at-a-time generation on the hf backend, side by side in one run.

    python3 scripts/bench_hf_generation.py --model results/models/smollm2 --questions 8 --n 5

Samples ``n`` answers to each of the first questions of data/questions/real.jsonl (the answer
stage's and the fresh answers' workload) twice with the same seeds: with ``batch_size`` = n (one
prompt per ``generate`` call, as before batching) and batched across questions. Prints the
model's load time, both generation times (CPU time of the process, which other work on a shared
machine does not inflate, and wall time) and their ratio. Run it with OMP_NUM_THREADS=1, as
Snakemake runs a one-core job.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from selfreflect.backends import Sampling
from selfreflect.backends.hf_engine import HfGenerator
from selfreflect.chat import question_chat
from selfreflect.questions import normalize_question

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="A model folder (e.g. converted SmolLM2).")
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--n", type=int, default=5, help="Answers per question.")
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    lines = (REPO / "data" / "questions" / "real.jsonl").read_text().splitlines()
    questions = [normalize_question(json.loads(line)["question"]) for line in lines]
    chats = [question_chat(q) for q in questions[: args.questions]]
    sampling = [
        Sampling(n=args.n, temperature=1.0, max_tokens=args.max_tokens, seed=seed)
        for seed in range(len(chats))
    ]
    start = time.process_time()
    spec = {"name": "m", "path": args.model, "dtype": "float32", "max_model_len": 2048}
    generator = HfGenerator({**spec, "batch_size": args.batch_size})
    print(f"model load: {time.process_time() - start:.1f} s CPU")
    seconds = {}
    for label, size in (("one prompt per call", args.n), ("batched", args.batch_size)):
        generator.batch_size = size
        start, wall = time.process_time(), time.perf_counter()
        generations = generator.chat(chats, sampling)
        seconds[label] = time.process_time() - start
        tokens = sum(g.completion_tokens for g in generations)
        wall = time.perf_counter() - wall
        print(f"{label}: {seconds[label]:.1f} s CPU ({wall:.1f} s wall), {tokens} tokens")
    ratio = seconds["one prompt per call"] / seconds["batched"]
    print(f"speed-up batched / one prompt per call (CPU time): {ratio:.1f}x")


if __name__ == "__main__":
    main()
