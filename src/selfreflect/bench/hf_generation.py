"""Batched against one-prompt-at-a-time generation on the hf backend, side by side in one run.

    OMP_NUM_THREADS=1 selfreflect bench hf-generation --model results/models/smollm2 \\
        --questions 8 --n 5

Samples ``n`` answers to each of the first questions of data/questions/real.jsonl (the answer
stage's and the fresh answers' workload) twice with the same seeds: with ``batch_size`` = n (one
prompt per ``generate`` call, as before batching) and batched across questions. Prints the
model's load time, both generation times (CPU time of the process, which other work on a shared
machine does not inflate, and wall time) and their ratio. Run it with OMP_NUM_THREADS=1, as
Snakemake runs a one-core job.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

QUESTIONS = Path("data") / "questions" / "real.jsonl"


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--model", required=True, help="A model folder (e.g. converted SmolLM2).")
@click.option("--questions", type=int, default=8, show_default=True)
@click.option("--n", type=int, default=5, show_default=True, help="Answers per question.")
@click.option("--max-tokens", type=int, default=24, show_default=True)
@click.option("--batch-size", type=int, default=64, show_default=True)
def hf_generation(model: str, questions: int, n: int, max_tokens: int, batch_size: int) -> None:
    from selfreflect.backends import Sampling
    from selfreflect.backends.hf_engine import HfGenerator
    from selfreflect.chat import question_chat
    from selfreflect.questions import normalize_question

    lines = QUESTIONS.read_text().splitlines()
    texts = [normalize_question(json.loads(line)["question"]) for line in lines]
    chats = [question_chat(q) for q in texts[:questions]]
    sampling = [
        Sampling(n=n, temperature=1.0, max_tokens=max_tokens, seed=seed)
        for seed in range(len(chats))
    ]
    start = time.process_time()
    spec = {"name": "m", "path": model, "dtype": "float32", "max_model_len": 2048}
    generator = HfGenerator({**spec, "batch_size": batch_size})
    print(f"model load: {time.process_time() - start:.1f} s CPU")
    seconds = {}
    for label, size in (("one prompt per call", n), ("batched", batch_size)):
        generator.batch_size = size
        start, wall = time.process_time(), time.perf_counter()
        generations = generator.chat(chats, sampling)
        seconds[label] = time.process_time() - start
        tokens = sum(g.completion_tokens for g in generations)
        wall = time.perf_counter() - wall
        print(f"{label}: {seconds[label]:.1f} s CPU ({wall:.1f} s wall), {tokens} tokens")
    ratio = seconds["one prompt per call"] / seconds["batched"]
    print(f"speed-up batched / one prompt per call (CPU time): {ratio:.1f}x")
