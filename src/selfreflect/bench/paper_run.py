"""The paper's whole run predicted, per Snakemake rule, on 1 and 8 GPUs.

    selfreflect bench paper-run --json docs/paper_run.json

No model runs. The rules and their jobs are the paper config's DAG (``snakemake -n`` with one
judge and answer shard per GPU); a rule without a cost model here is refused, not left out.
Per rule, the work and its seconds, each an estimate with a low and a high bound
(:class:`Bound`):

- the judge (``judge``, ``report_alt_metrics``): every context the DAG scores, built as
  :mod:`selfreflect.scoring.experiment` builds them (the reference, each strategy's summary, the
  controlled pairs' distinct texts, the convergence study's subsampled references, the MMLU
  study's variants, the alternative metrics' chats), counted as the `hf` judge computes them
  (:func:`selfreflect.bench.growth.context_work`: Qwen2.5's tokenizer and prompts on the
  original tool's example answers, cycled to N, Qwen2.5-7B's FLOPs), at the GPU throughput the
  scorer benchmark recorded (docs/benchmarks);
- sampling (``answers``, ``summarize``): generated tokens (answer and summary lengths counted
  on the example answers and summaries) at a stated vLLM throughput (:data:`GENERATION`);
- grouping answers by meaning (``answer_clusters``, and the judge jobs' controlled pairs):
  every conditioning answer embedded by MiniLM on the job's GPU (:func:`embedding_rate`);
- each GPU job's engine start-up (:data:`STARTUP`);
- the CPU rules after the judge as docs/scale.json measured them at the paper's size, the ones
  before it as docs/growth.json measured them.

``selfreflect docs paper-run`` renders docs/paper_run.md from the JSON.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from selfreflect.bench.growth import tokenizer_options

if TYPE_CHECKING:
    from selfreflect.bench.scorer import Cut

GPUS = (1, 8)  # one judge and answer shard per GPU
RECORDS = {"scale": Path("docs") / "scale.json", "growth": Path("docs") / "growth.json"}
GENERATION = {  # vLLM's output tokens/s for a 7B model on one H100, bf16
    "estimate": 2900.0,
    "low": 1450.0,
    "high": 5777.0,
    "source": "high: MLPerf Inference v5.1, Llama-3.1-8B in FP8 on one H100 with vLLM 0.10.0,"
    " offline scenario, 5777 tokens/s (Red Hat's submission); bf16 moves twice the weight"
    " bytes per token and is no faster: estimate half of it, low a quarter",
}
STARTUP = {  # seconds to load a job's model (Qwen2.5-7B-Instruct, MiniLM) onto one GPU
    "vllm": {
        "estimate": 90.0,
        "low": 30.0,
        "high": 300.0,
        "source": "stated: weights (15 GB), memory profiling, CUDA graph capture; a cold"
        " torch.compile cache makes the high bound",
    },
    "hf": {
        "estimate": 45.0,
        "low": 15.0,
        "high": 180.0,
        "source": "stated: transformers reading 15 GB of safetensors onto the GPU",
    },
    "minilm": {
        "estimate": 5.0,
        "low": 2.0,
        "high": 30.0,
        "source": "stated: sentence-transformers reading all-MiniLM-L6-v2's 90 MB onto the GPU",
    },
}
# scoring.token_budget auto on the paper's judge: an H100's memory, less the weights of
# Qwen2.5-7B (its model card's parameters) in bf16, free after a prefix of its full context
H100_BYTES = 80 * 10**9
JUDGE_PARAMETERS = 7.62e9
BF16_BYTES = 2
JUDGE_CONTEXT = 32768
PROMPT_KEYS = ("basic", "cot", "twostep_cot_brainstorm", "sample_and_summarize")  # measured
REASONING_TOKENS = 512  # a reasoning step's output (cot, twostep_cot's brainstorm): stated
GPU_RULES = {"answers", "summarize", "judge", "report_alt_metrics", "answer_clusters"}
BEFORE_JUDGE = {"questions", "merge_answers"}  # CPU rules docs/scale.json does not run


@dataclass(frozen=True)
class Bound:
    """An estimate with its low and high bounds."""

    low: float
    estimate: float
    high: float

    @classmethod
    def exact(cls, value: float) -> Bound:
        return cls(value, value, value)

    @classmethod
    def of(cls, values: Iterable[float]) -> Bound:
        """The mean of ``values`` between their least and greatest."""
        values = list(values)
        return cls(min(values), sum(values) / len(values), max(values))

    @classmethod
    def stated(cls, entry: dict[str, Any]) -> Bound:
        return cls(entry["low"], entry["estimate"], entry["high"])

    def __add__(self, other: Bound) -> Bound:
        return Bound(self.low + other.low, self.estimate + other.estimate, self.high + other.high)

    def __mul__(self, other: Bound | float) -> Bound:
        o = other if isinstance(other, Bound) else Bound.exact(other)
        return Bound(self.low * o.low, self.estimate * o.estimate, self.high * o.high)

    def __truediv__(self, rate: Bound) -> Bound:
        """Work over a rate: the low bound at the highest rate."""
        return Bound(self.low / rate.high, self.estimate / rate.estimate, self.high / rate.low)

    def record(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


ZERO = Bound.exact(0.0)


def total(bounds: Iterable[Bound]) -> Bound:
    return sum(bounds, ZERO)


def judge_throughput(scoring: dict[str, Any], answers: int) -> tuple[Bound, str]:
    """The `hf` judge's FLOP/s on a GPU with Qwen2.5-7B's shape: the case at ``answers``
    conditioning answers of the latest recorded scorer run that cut forwards as ``scoring``
    cuts them (its batch size, or a token budget of the same kind: ``auto`` or a number), run as
    the judge runs them (sdpa attention, not compiled; else of any run), bounded by every case of
    every recorded run so run, whatever its device and cut."""
    from selfreflect.bench.scorer import cut, cut_text, recorded

    gpu = [
        run
        for run in recorded()
        if run.get("device", "").startswith("cuda") and run["settings"]["preset"] == "qwen2.5-7b"
    ]
    rate = {
        id(run): {c["conditioning"]: c["judges"]["hf"]["flop_per_s"] for c in run["cases"]}
        for run in gpu
    }
    matching = [run for run in gpu if same_cut(cut(run), scoring)] or gpu
    run = ([r for r in matching if answers in rate[id(r)]] or matching)[-1]
    as_judged = [r for r in gpu if not cut(r).not_the_judges]  # sdpa, not compiled
    cases = [value for r in as_judged or gpu for value in rate[id(r)].values()]
    measured = rate[id(run)].get(answers, max(rate[id(run)].values()))
    source = (
        f"{run['device_name']}, {cut_text(cut(run), named=True)}, recorded {run['date'][:10]}:"
        f" the case at {answers} conditioning answers of the latest run of that setting,"
        f" bounded by every case of the {len(as_judged or gpu)} runs recorded on GPUs"
    )
    return Bound(min(cases), measured, max(cases)), source


def same_cut(key: Cut, scoring: dict[str, Any]) -> bool:
    """Whether a scorer run cut (:func:`selfreflect.bench.scorer.cut`) forwards as the
    ``scoring`` settings do, and ran them as the judge does (sdpa attention, not compiled)."""
    budget = scoring.get("token_budget")
    if key.not_the_judges or key.by_tokens != (budget is not None):
        return False
    if budget is None:
        return key.size == scoring["batch_size"]
    return key.derived == "auto" if budget == "auto" else key.size == budget and not key.derived


@dataclass(frozen=True)
class Example:
    """One of the original tool's example questions, cycled to the config's N."""

    question: str
    test: list[str]
    conditioning: list[str]
    fresh: list[str]  # the fresh answers of sample_and_summarize and concatenated_answers
    summaries: dict[str, str]  # the tool's example summaries: greedy, sample_and_summarize


def examples(answers: int, fresh: int) -> list[Example]:
    """The example questions with ``answers`` held-out and conditioning answers and ``fresh``
    fresh answers (the conditioning answers, cycled)."""
    from selfreflect.bench.scorer import REFERENCE, inputs
    from selfreflect.fileio import read_json

    summaries = read_json(REFERENCE / "example_summaries.json")
    out = []
    for i, item in enumerate(inputs(None, answers, max(answers, fresh))):
        given = summaries[i % len(summaries)]["summaries"]
        out.append(
            Example(
                item["question"],
                item["test"],
                item["conditioning"][:answers],
                item["conditioning"][:fresh],
                {"greedy": given["greedy"], "sample_and_summarize": item["summary"]},
            )
        )
    return out


def summary_text(strategy: str, example: Example) -> str:
    """A strategy's summary of ``example``: the tool's example of greedy and
    sample_and_summarize, the fresh answers' block of concatenated_answers, and for the other
    strategies (basic, cot, twostep_cot: one summary sentence) sample_and_summarize's."""
    from selfreflect.chat import format_answers

    if strategy == "concatenated_answers":
        return format_answers(example.fresh)
    return example.summaries.get(strategy, example.summaries["sample_and_summarize"])


def controlled_pairs(example: Example, foreign: str, pair_types: list[str]) -> list:
    """``example``'s controlled pairs (its answers grouped by string; ``foreign``: another
    question's answer, for extra_option)."""
    from selfreflect.controlled import clusters_of, question_pairs

    return question_pairs(clusters_of([example.conditioning])[0], pair_types, foreign)


def alt_metric_tasks(fmt: Any, example: Example, pairs: list):
    """The alternative metrics' forwards as the judge runs them: the rating's and P(True)'s
    chat of both summaries of each pair, one sequence each, the logits of its last token
    (:func:`selfreflect.report.alt_metrics.next_token_logprobs`)."""
    from selfreflect.report.alt_metrics import p_true_chat, rating_chat
    from selfreflect.scoring.contexts import ContextTasks

    texts = [text for pair in pairs for text in (pair.good, pair.bad)]
    item = (example.question, example.conditioning)
    chats = [chat(*item, text) for chat in (rating_chat, p_true_chat) for text in texts]
    ids = [fmt.encode(fmt.render(chat)) for chat in chats]
    return ContextTasks([[*seq, 0] for seq in ids], [len(seq) for seq in ids], 0)


def judge_budget(scoring: dict[str, Any]) -> int | None:
    """The `hf` judge's tokens per forward under ``scoring``: None where it cuts by batch size;
    ``auto`` as the judge derives it on an H100 (:data:`H100_BYTES` less the judge's bf16
    weights free, after a prefix of its full context)."""
    from types import SimpleNamespace

    from selfreflect.bench.growth import PREDICTED_MODEL
    from selfreflect.bench.scorer import PRESETS
    from selfreflect.scoring.budget import Shape, token_budget

    budget = scoring.get("token_budget")
    if budget != "auto":
        return budget
    shape = Shape.of(SimpleNamespace(**PRESETS[PREDICTED_MODEL]), BF16_BYTES)
    free = H100_BYTES - BF16_BYTES * JUDGE_PARAMETERS
    return token_budget(shape, int(free), prefix=JUDGE_CONTEXT)


def forward_fill(trees: list[float], budget: int) -> float:
    """The share of ``budget`` tokens per forward that the contexts' token trees (``trees``:
    tokens after each prefix) fill, each context packed to the token into the fewest forwards:
    every forward full but each context's last."""
    return sum(trees) / (budget * sum(math.ceil(tokens / budget) for tokens in trees))


def example_work(fmt: Any, config: dict[str, Any], example: Example, foreign: str) -> dict:
    """Per context kind of ``example``'s judge pass, as the DAG's judge jobs build them: its
    contexts (alternative metrics: chats) and their Qwen2.5-7B forward FLOPs."""
    from selfreflect.bench.growth import context_work
    from selfreflect.scoring.contexts import context_tasks
    from selfreflect.scoring.prompts import masked_words, reference_prompt, summary_prompt
    from selfreflect.scoring.stopwords import stopword_policy
    from selfreflect.seeds import question_seed, subsample_indices

    scoring, report = config["scoring"], config["report"]
    distinct = list(dict.fromkeys(example.test))  # the example's answers, cycled to N
    repeats = len(example.test) / len(distinct)
    words = masked_words(distinct, stopword_policy(scoring["stopwords"]))
    reference = context_tasks(fmt, reference_prompt(example.question, example.conditioning, words))
    budget = judge_budget(scoring)

    def work(contexts: list, repeats: float = repeats) -> dict[str, float]:
        """Their FLOPs, the held-out answers' part ``repeats`` times: N held-out answers as
        copies of the example's distinct ones that share no token, as sampled answers that
        differ would not (a forward computes a copy's tokens once); cut by a token budget, how
        full its forwards are (:func:`forward_fill`)."""
        counted = context_work(contexts, scoring["batch_size"], budget)
        flops = sum(c["prefix_flops"] + repeats * (c["flops"] - c["prefix_flops"]) for c in counted)
        out = {"contexts": len(contexts), "flops": flops}
        if budget is not None:
            trees = [repeats * (c["tokens"] - c["prefix_tokens"]) for c in counted]
            out["fill"] = forward_fill(trees, budget)
        return out

    def summaries(texts: Iterable[str]) -> dict[str, float]:
        contexts = [context_tasks(fmt, summary_prompt(example.question, t, words)) for t in texts]
        return work(contexts)

    kinds = {"reference": work([reference])}
    for strategy in config["summaries"]["strategies"]:
        kinds[f"strategy {strategy}"] = summaries([summary_text(strategy, example)])
    pairs = controlled_pairs(example, foreign, report["pair_types"])
    kinds["controlled pairs"] = summaries(dict.fromkeys(t for p in pairs for t in (p.good, p.bad)))
    seed = question_seed(config["seed"], example.question)
    n = len(example.conditioning)
    for size in [size for size in report["convergence_sizes"] if size <= n]:
        answers = [example.conditioning[i] for i in subsample_indices(n, size, seed)]
        contexts = [context_tasks(fmt, reference_prompt(example.question, answers, words))]
        kinds[f"convergence {size}"] = work(contexts)
    chats = alt_metric_tasks(fmt, example, pairs)
    kinds["alt metrics"] = work([chats], repeats=1) | {"contexts": len(chats.sequences)}
    return kinds


def dataset_groups(config: dict[str, Any]) -> dict[str, list[str]]:
    """The evaluated datasets, those summarised, and those of multiple-choice questions."""
    from selfreflect.config import evaluated_datasets, summarized_datasets
    from selfreflect.questions import DATASET_KINDS

    evaluated = evaluated_datasets(config)
    return {
        "evaluated": evaluated,
        "summarized": summarized_datasets(config),
        "multiple choice": [
            name
            for name in evaluated
            if DATASET_KINDS[config["datasets"][name]["source"]].choices
            or config["datasets"][name].get("choices")
        ],
    }


def judge_contexts(fmt: Any, config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per context kind: contexts and forward FLOPs per question (each a :class:`Bound` over
    the example questions; where the count varies with the answers, bounded by the counts
    that can occur), the datasets that score it and how many of their questions."""
    sizes = config["answers"]["num_answers"], config["summaries"]["num_fresh_answers"]
    items = examples(*sizes)
    foreign = [items[(i + 1) % len(items)].conditioning[0] for i in range(len(items))]
    counted = [example_work(fmt, config, e, f) for e, f in zip(items, foreign, strict=True)]
    report, groups = config["report"], dataset_groups(config)
    pair_types = len(report["pair_types"])
    varying = {  # the contexts a pair type that does not apply leaves out: good + idk at least
        "controlled pairs": (2, 1 + pair_types),
        "alt metrics": (4, 4 * pair_types),  # 2 metrics x both sides of each pair
    }
    out = {}
    for kind in counted[0]:
        entry = {
            "contexts": Bound.of(c[kind]["contexts"] for c in counted),
            "flops": Bound.of(c[kind]["flops"] for c in counted),
            "datasets": groups["summarized"],
            "questions": config["questions"]["num_questions"],
        }
        if "fill" in counted[0][kind]:
            entry["fill"] = Bound.of(c[kind]["fill"] for c in counted)
        if kind in varying:
            each = Bound.of(c[kind]["flops"] / c[kind]["contexts"] for c in counted)
            entry["contexts"] = Bound(
                varying[kind][0], entry["contexts"].estimate, varying[kind][1]
            )
            entry["flops"] = each * entry["contexts"]
        if kind in ("reference", *varying):
            entry["datasets"] = groups["evaluated"]
        if kind.startswith("convergence"):
            entry["questions"] = report["convergence_questions"] or entry["questions"]
        out[kind] = entry
    temperatures = len(report["mc_temperatures"])
    if groups["multiple choice"] and temperatures:  # one per temperature, short as a pair's
        pairs = out["controlled pairs"]
        contexts = Bound(1, temperatures, temperatures)
        out["mc variants"] = {
            "contexts": contexts,
            "flops": pairs["flops"] * Bound.exact(1 / pairs["contexts"].estimate) * contexts,
            "datasets": groups["multiple choice"],
            "questions": config["questions"]["num_questions"],
        } | ({"fill": pairs["fill"]} if "fill" in pairs else {})
    return out


def generated_tokens(fmt: Any, config: dict[str, Any]) -> dict[str, dict[str, Bound]]:
    """Per question, the tokens generated and prompted by the answers job of a dataset
    (``answers``) and by each strategy's summaries job: answer and summary lengths from the
    example answers (low: the shorter question's mean, high: the longest answer) and
    summaries; a reasoning step (cot, twostep_cot's brainstorm) :data:`REASONING_TOKENS`,
    at most ``summaries.max_tokens``. A strategy with no model here is refused."""
    from selfreflect.chat import question_chat
    from selfreflect.strategies.paper import sample_and_summarize_chat, twostep_cot_chat
    from selfreflect.strategies.text import prompt, user_chat

    items = examples(config["answers"]["num_answers"], config["summaries"]["num_fresh_answers"])

    def count(text: str) -> int:
        return len(fmt.encode(text))

    def prompted(chat: list) -> int:
        return len(fmt.encode(fmt.render(chat)))

    lengths = [[count(a) for a in e.test + e.conditioning] for e in items]
    answer = Bound(
        min(sum(n) / len(n) for n in lengths),
        Bound.of(n for question in lengths for n in question).estimate,
        max(max(n) for n in lengths),
    )
    summary = {k: Bound.of(count(e.summaries[k]) for e in items) for k in items[0].summaries}
    said = Bound.of(prompted(question_chat(e.question)) for e in items)
    cap = config["summaries"]["max_tokens"]
    reasoning = Bound(summary["sample_and_summarize"].low, REASONING_TOKENS, cap)
    fresh = answer * config["summaries"]["num_fresh_answers"]

    def chats(build: Callable[[Example], list]) -> Bound:
        return Bound.of(prompted(build(e)) for e in items)

    summarized = summary["sample_and_summarize"]
    strategies = {
        "greedy": (summary["greedy"], said),
        "basic": (summarized, chats(lambda e: user_chat(prompt("basic", question=e.question)))),
        "cot": (reasoning, chats(lambda e: user_chat(prompt("cot", question=e.question)))),
        "sample_and_summarize": (
            fresh + summarized,
            said + chats(lambda e: sample_and_summarize_chat(e.question, e.fresh)),
        ),
        "concatenated_answers": (fresh, said),
        "twostep_cot": (
            reasoning + summarized,
            chats(lambda e: twostep_cot_chat(e.question, e.summaries["sample_and_summarize"]))
            + chats(lambda e: user_chat(prompt("twostep_cot_brainstorm", question=e.question)))
            + reasoning,
        ),
    }
    unknown = [s for s in config["summaries"]["strategies"] if s not in strategies]
    if unknown:
        raise click.ClickException(
            f"summaries.strategies: no generation model for {', '.join(unknown)}"
            f" (known: {', '.join(strategies)})"
        )
    out = {
        "answers": {"generated": answer * (2 * config["answers"]["num_answers"]), "prompt": said}
    }
    for strategy in config["summaries"]["strategies"]:
        generated, prompt_tokens = strategies[strategy]
        out[strategy] = {"generated": generated, "prompt": prompt_tokens}
    return out


def generation_seconds(tokens: dict[str, Bound], rate: Bound) -> Bound:
    """Seconds to generate ``tokens`` (per question or job) at ``rate``; the high bound also
    reads every prompt token at the generation rate (prefill is faster: estimate 0)."""
    out = tokens["generated"] / rate
    return Bound(out.low, out.estimate, out.high + tokens["prompt"].high / rate.low)


def spread(jobs: list[Bound], gpus: int) -> Bound:
    """Wall seconds of a rule's jobs on ``gpus`` GPUs, one job per GPU at a time: the longer
    of its longest job and its total over the GPUs (each bound on its own)."""
    longest = [max(getattr(job, side) for job in jobs) for side in ("low", "estimate", "high")]
    spread = [getattr(total(jobs), side) / gpus for side in ("low", "estimate", "high")]
    return Bound(*(max(a, b) for a, b in zip(longest, spread, strict=True)))


EMBEDDING = {  # all-MiniLM-L6-v2 on the job's GPU: short texts per second
    "estimate": 14200.0,
    "high": 14200.0,
    "source": "sentence-transformers' table of pretrained models: all-MiniLM-L6-v2 encodes"
    " 14,200 sentences/s on a V100 GPU (an H100 is no slower)",
}


def embedding_rate(scale: dict[str, Any]) -> dict[str, Any]:
    """MiniLM's texts/s in a job on a GPU (:data:`EMBEDDING`), its low bound as if on the CPU:
    ``scale``'s (docs/scale.json's) ``answer_clusters`` job, every conditioning answer of the
    paper's size embedded on one CPU thread (loading and clustering included)."""
    seconds = sum(job["wall_s"] for job in scale["jobs"] if job["rule"] == "answer_clusters")
    texts = scale["questions"] * scale["answers"]
    low = f"; low: {texts:,} texts in {seconds:.0f} s on one CPU thread ({RECORDS['scale']})"
    return EMBEDDING | {"low": texts / seconds, "source": EMBEDDING["source"] + low}


def gpu_jobs(
    fmt: Any, config: dict[str, Any], shards: int, rates: dict[str, Bound]
) -> dict[str, dict[str, Any]]:
    """The GPU rules' jobs with ``shards`` judge and answer shards: each job's seconds, and
    each rule's work."""
    groups = dataset_groups(config)
    questions = config["questions"]["num_questions"]
    vllm, hf = Bound.stated(STARTUP["vllm"]), Bound.stated(STARTUP["hf"])
    minilm = Bound.stated(STARTUP["minilm"])
    tokens = generated_tokens(fmt, config)
    per_shard = questions / shards
    answers = generation_seconds(tokens["answers"], rates["generation"]) * per_shard + vllm
    rules: dict[str, dict[str, Any]] = {
        "answers": {
            "jobs": [answers] * (shards * len(groups["evaluated"])),
            "work": {"per question": {k: v.record() for k, v in tokens["answers"].items()}},
        },
        "summarize": {"jobs": [], "work": {}},
    }
    for strategy in config["summaries"]["strategies"]:
        each = generation_seconds(tokens[strategy], rates["generation"])
        rules["summarize"]["jobs"] += [each * questions + vllm] * len(groups["summarized"])
        rules["summarize"]["work"][strategy] = {k: v.record() for k, v in tokens[strategy].items()}
    contexts = judge_contexts(fmt, config)
    # each job groups the dataset's conditioning answers by meaning for the pairs (MiniLM on
    # the job's GPU), as answer_clusters does for the explorer
    texts = questions * config["answers"]["num_answers"]
    clustered = Bound.exact(texts) / rates["embedding"]
    rules["answer_clusters"] = {
        "jobs": [clustered + minilm] * (len(groups["summarized"]) * len(config["subjects"])),
        "work": {"texts per job": texts},
    }
    flops = {
        dataset: total(
            entry["flops"] * entry["questions"]
            for kind, entry in contexts.items()
            if dataset in entry["datasets"] and kind != "alt metrics"
        )
        for dataset in groups["evaluated"]
    }
    rules["judge"] = {
        "jobs": [
            flops[dataset] * (1 / shards) / rates["judge"] + hf + clustered
            for dataset in groups["evaluated"]
            for _ in range(shards)
        ],
        "work": {
            kind: record_entry(entry) for kind, entry in contexts.items() if kind != "alt metrics"
        },
    }
    alt = contexts["alt metrics"]
    rules["report_alt_metrics"] = {
        "jobs": [alt["flops"] * questions / rates["judge"] + hf + clustered] * len(alt["datasets"]),
        "work": {"alt metrics": record_entry(alt)},
    }
    return rules


def record_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A context kind's entry as JSON: per question and in all."""
    scored = entry["questions"] * len(entry["datasets"])
    return {
        "datasets": entry["datasets"],
        "questions": entry["questions"],
        "contexts_per_question": entry["contexts"].record(),
        "flops_per_question": entry["flops"].record(),
        "flops": (entry["flops"] * scored).record(),
        **({"forward_fill": entry["fill"].record()} if "fill" in entry else {}),
    }


def cpu_rules(
    config: dict[str, Any], scale: dict[str, Any], growth: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """The CPU rules' seconds: after the judge, each rule's jobs summed as ``scale``
    (docs/scale.json) measured them at the paper's size (exact: measured; its GPU rules' jobs
    left out); before it (:data:`BEFORE_JUDGE`), as ``growth`` (docs/growth.json) measured
    them at its largest size (low: its smallest time at any size, high: grown linearly in
    questions to the paper's)."""
    rules: dict[str, dict[str, Any]] = {}
    for job in (job for job in scale["jobs"] if job["rule"] not in GPU_RULES):
        entry = rules.setdefault(job["rule"], {"seconds": ZERO, "basis": str(RECORDS["scale"])})
        entry["seconds"] += Bound.exact(job["wall_s"])
    sizes = growth["sizes"]
    questions = config["questions"]["num_questions"]
    for rule in BEFORE_JUDGE:
        measured = [sum(j["wall_s"] for j in s["jobs"] if j["rule"] == rule) for s in sizes]
        largest = sizes[-1]["questions"]
        rules[rule] = {
            "seconds": Bound(min(measured), measured[-1], measured[-1] * questions / largest),
            "basis": f"{RECORDS['growth']}: {largest} questions, grown linearly to {questions}",
        }
    return rules


def predict(config_path: Path, tokenizer: dict[str, Any]) -> dict[str, Any]:
    """The record: per rule of the DAG its jobs and seconds on each of :data:`GPUS`, and the
    totals; refused, naming the rule, if a rule has no cost model or its jobs differ from the
    DAG's."""
    from selfreflect.bench.growth import load_tokenizer
    from selfreflect.bench.scale import planned
    from selfreflect.config import load_config
    from selfreflect.families import PromptFormat
    from selfreflect.fileio import read_json

    config = load_config(config_path)
    fmt = PromptFormat.for_model(load_tokenizer(tokenizer), tokenizer)
    judge, source = judge_throughput(config["scoring"], config["answers"]["num_answers"])
    scale, growth = (read_json(path) for path in RECORDS.values())
    embedding = embedding_rate(scale)
    rates = {
        "judge": judge,
        "generation": Bound.stated(GENERATION),
        "embedding": Bound.stated(embedding),
    }
    cpu = cpu_rules(config, scale, growth)
    rules: dict[str, dict[str, Any]] = {}
    for gpus in GPUS:
        dag = planned(Path.cwd(), config_path, gpus)
        unknown = sorted(set(dag) - GPU_RULES - set(cpu))
        if unknown:
            raise click.ClickException(f"rules {', '.join(unknown)}: no cost model in {__name__}")
        gpu = gpu_jobs(fmt, config, gpus, rates)
        for rule, jobs in dag.items():
            entry = rules.setdefault(rule, {"kind": "gpu" if rule in gpu else "cpu"})
            entry.setdefault("jobs", {})[str(gpus)] = jobs
            if rule in gpu:
                if len(gpu[rule]["jobs"]) != jobs:
                    raise click.ClickException(
                        f"rule {rule}: the DAG plans {jobs} jobs, the prediction"
                        f" {len(gpu[rule]['jobs'])}"
                    )
                entry["work"] = gpu[rule]["work"]
                seconds = spread(gpu[rule]["jobs"], gpus)
                entry.setdefault("gpu_seconds", {})[str(gpus)] = total(gpu[rule]["jobs"]).record()
            else:
                seconds = cpu[rule]["seconds"]
                entry["basis"] = cpu[rule]["basis"]
            entry.setdefault("seconds", {})[str(gpus)] = seconds.record()
    totals = {
        str(gpus): total(Bound.stated(rule["seconds"][str(gpus)]) for rule in rules.values())
        for gpus in GPUS
    }
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "config": str(config_path),
        "tokenizer": tokenizer["name"],
        "gpus": list(GPUS),
        "sizes": {
            "questions": config["questions"]["num_questions"],
            "answers": config["answers"]["num_answers"],
            "fresh_answers": config["summaries"]["num_fresh_answers"],
            "strategies": config["summaries"]["strategies"],
            "datasets": dataset_groups(config),
            "pair_types": config["report"]["pair_types"],
            "mc_temperatures": config["report"]["mc_temperatures"],
            "convergence_sizes": config["report"]["convergence_sizes"],
            "convergence_questions": config["report"]["convergence_questions"],
            "batch_size": config["scoring"]["batch_size"],
            "token_budget": config["scoring"].get("token_budget"),
            "tokens_per_forward": judge_budget(config["scoring"]),
        },
        "rates": {
            "judge_flop_per_s": judge.record() | {"source": source},
            "generation_tokens_per_s": GENERATION,
            "embedding_texts_per_s": embedding,
            "startup_s": STARTUP,
            "reasoning_tokens": REASONING_TOKENS,
        },
        "rules": dict(sorted(rules.items(), key=lambda item: -item[1]["seconds"]["1"]["estimate"])),
        "totals": {gpus: bound.record() for gpus, bound in totals.items()},
        "not_included": [],
    }


@click.command()
@click.option(
    "--config",
    "config_path",
    default="config/config.yaml",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The run predicted (its DAG, sizes and settings).",
)
@tokenizer_options
@click.option("--json", "json_out", required=True, type=click.Path(dir_okay=False, path_type=Path))
def paper_run(
    config_path: Path, tokenizer_config: Path, tokenizer_model: str, json_out: Path
) -> None:
    """Predict CONFIG's whole run per rule on 1 and 8 GPUs (run from the project's root; no
    model runs); written to --json."""
    from selfreflect.config import load_config, model_spec
    from selfreflect.fileio import write_json

    spec = model_spec(load_config(tokenizer_config), tokenizer_model, source=str(tokenizer_config))
    record = predict(config_path, spec)
    write_json(json_out, record)
    hours = ", ".join(f"{t['estimate'] / 3600:.1f} h on {g}" for g, t in record["totals"].items())
    click.echo(f"{len(record['rules'])} rules; {hours} GPU(s)")
