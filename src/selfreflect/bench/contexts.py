"""The judge's host time to tokenize a question's contexts, side by side on the same texts:
each text tokenized whole (as the judge did before) and each context's shared head tokenized
once (:func:`~selfreflect.scoring.contexts.encoded_texts`), with the tokenizer and prompts of
``--tokenizer-model`` on the original tool's example answers cycled to N held-out and N
conditioning answers (one summary per question, as :mod:`selfreflect.bench.scorer`).

    selfreflect bench contexts --json docs/contexts.json

Each N: one untimed pass, then ``--repeats`` timed passes of each way, taking turns; the
median and the range are recorded, with whether both ways gave the same token ids.
"""

from __future__ import annotations

import datetime
import os
import statistics
import time
from pathlib import Path

import click

from selfreflect.bench.growth import load_tokenizer, tokenizer_options, tokenizer_spec
from selfreflect.bench.scorer import cpu_name


def context_texts(fmt, answers: int) -> list[list[str]]:
    """Each context's rendered chats, for every example question at N = ``answers``."""
    from selfreflect.bench.scorer import inputs
    from selfreflect.scoring.contexts import rendered_chats
    from selfreflect.scoring.prompts import QuestionAnswers, question_prompts
    from selfreflect.scoring.stopwords import stopword_policy

    texts = []
    for item in inputs(None, answers, answers):
        answers_ = QuestionAnswers(item["question"], item["test"], item["conditioning"], [])
        prompts = question_prompts(answers_, [item["summary"]], stopword_policy("wordfreq"))
        for prompt in [*prompts.references, *prompts.summaries.values()]:
            texts.append(rendered_chats(fmt, prompt))
    return texts


def timed(encode, contexts: list[list[str]]) -> tuple[float, list]:
    start = time.process_time()
    ids = [encode(texts) for texts in contexts]
    return time.process_time() - start, ids


def measure(fmt, answers: int, repeats: int) -> dict:
    """Both ways' CPU seconds for every example question's contexts at N = ``answers``."""
    from selfreflect.scoring.contexts import encoded_texts

    ways = {
        "whole": lambda texts: [fmt.encode(text) for text in texts],
        "shared_head": lambda texts: encoded_texts(fmt, texts),
    }
    contexts = context_texts(fmt, answers)
    ids = {name: timed(encode, contexts)[1] for name, encode in ways.items()}  # untimed pass
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(repeats):
        for name, encode in ways.items():
            seconds[name].append(timed(encode, contexts)[0])
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "answers": answers,
        "contexts": len(contexts),
        "texts": sum(len(texts) for texts in contexts),
        "tokens": sum(len(i) for context in ids["whole"] for i in context),
        "identical": ids["whole"] == ids["shared_head"],
        "cpu_s": {
            name: {"median": medians[name], "min": min(v), "max": max(v)}
            for name, v in seconds.items()
        },
        "speedup": medians["whole"] / medians["shared_head"],
    }


@click.command()
@tokenizer_options
@click.option("--answers", "sizes", type=click.IntRange(min=1), multiple=True, default=(10, 25, 50))
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--json", "json_out", required=True, type=click.Path(dir_okay=False, path_type=Path))
def contexts(
    tokenizer_config: Path, tokenizer_model: str, sizes: tuple[int, ...], repeats: int, json_out
) -> None:
    """Time tokenizing the judge's contexts whole and with their shared head once."""
    from selfreflect.families import PromptFormat
    from selfreflect.fileio import write_json

    spec = tokenizer_spec(tokenizer_config, tokenizer_model)
    fmt = PromptFormat.for_model(load_tokenizer(spec), spec)
    load = os.getloadavg()[0]  # other work on the cores swells both ways' times
    cases = []
    for n in sizes:
        cases.append(measure(fmt, n, repeats))
        case = cases[-1]
        click.echo(
            f"N = {n}: {case['texts']} texts, {case['tokens']} tokens; whole "
            f"{case['cpu_s']['whole']['median']:.2f} CPU s, shared head "
            f"{case['cpu_s']['shared_head']['median']:.2f} CPU s ({case['speedup']:.1f}x), "
            f"identical: {case['identical']}"
        )
    record = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="minutes"),
        "machine": cpu_name(),
        "load_average": round(load, 1),
        "tokenizer_model": tokenizer_model,
        "repeats": repeats,
        "cases": cases,
    }
    write_json(json_out, record)
