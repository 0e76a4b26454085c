"""The SelfReflect scorer: stopwords, task construction, the metric, hf vs reference judges,
failure recording, and the ``selfreflect score`` command (real tiny model, no mocks)."""

from __future__ import annotations

import json
import math
import re
import subprocess

import numpy as np
import pandas as pd
import pytest
import torch

from selfreflect.artifacts import read_table, write_table
from selfreflect.chat import format_answers
from selfreflect.cli.score import read_summaries
from selfreflect.errors import InputError
from selfreflect.reference_format import read_reference_answers
from selfreflect.scoring import metric
from selfreflect.scoring.contexts import (
    ContextTasks,
    context_tasks,
    packed_spans,
    question_contexts,
    question_tasks,
    token_tree,
)
from selfreflect.scoring.experiment import judge_question, score_table
from selfreflect.scoring.hf_judge import FLEX, HfJudge, block_mask
from selfreflect.scoring.prompts import (
    QuestionAnswers,
    TaskError,
    context_prompt,
    masked_words,
    question_prompts,
    scoring_question,
)
from selfreflect.scoring.records import TOP_PREDICTIONS
from selfreflect.scoring.reference_judge import ReferenceJudge
from selfreflect.scoring.stopwords import masked_positions, stopword_policy
from tests.conftest import REFERENCE, tiny_format

TEST_ANSWERS = REFERENCE / "example_test_answers.json"
SUMMARIES = REFERENCE / "example_summaries.json"
WORDFREQ = stopword_policy("wordfreq")
NONE = stopword_policy("none")


@pytest.fixture(scope="module")
def hf_model(tiny_model):
    from selfreflect.backends.hf_engine import load_hf_model

    return load_hf_model({"path": str(tiny_model), "dtype": "float32"})


@pytest.fixture(scope="module")
def hf_judge(hf_model):
    tokenizer, model = hf_model
    return HfJudge("tiny", tiny_format(tokenizer), model, batch_size=4)


@pytest.fixture(scope="module")
def reference_judge(hf_model):
    tokenizer, model = hf_model
    return ReferenceJudge("tiny", tiny_format(tokenizer), model)


@pytest.fixture(scope="module")
def example_tasks(hf_model):
    """Tasks of the first reference question under both stopword policies."""
    tokenizer, _ = hf_model
    record = json.loads(TEST_ANSWERS.read_text())[0]
    summaries = json.loads(SUMMARIES.read_text())[0]["summaries"]
    return {
        name: question_tasks(
            tiny_format(tokenizer),
            record["question"],
            record["masked_out_task_answers"],
            record["conditioning_answers"],
            summaries,
            policy,
        )
        for name, policy in [("wordfreq", WORDFREQ), ("none", NONE)]
    }


# --- stopwords ---------------------------------------------------------------------------


def test_wordfreq_marks_function_words_and_keeps_content_words():
    assert [WORDFREQ(w) for w in ["the", "The,", "(and)", "is"]] == [True] * 4
    assert not any(WORDFREQ(w) for w in ["backstroke", "croissant", "swimming", "breathe"])
    # either side of the calibrated line (Zipf 6.3): "which" is 6.30, "or" 6.54, "been" 6.27
    assert WORDFREQ("which") and WORDFREQ("or") and not WORDFREQ("been")


def test_unknown_single_character_and_inner_punctuation_words_are_kept():
    # the authors' TF-IDF vocabulary has no such entries, so they are never stopwords
    assert not any(WORDFREQ(w) for w in ["qzxvbnmw", "a", "I", "don't", "it's", "5", "___"])


def test_all_stopword_answer_masks_every_word():
    only_stops = ["the", "of", "and"]
    assert masked_positions(only_stops, WORDFREQ) == [0, 1, 2]
    assert masked_positions(["the", "backstroke"], WORDFREQ) == [1]


def test_punctuation_only_word_is_kept():
    assert masked_positions(["the", "..."], WORDFREQ) == [1]


def test_empty_answers_are_skipped_and_control_characters_split():
    assert masked_words(["", "   ", "\n"], NONE) == []
    words = masked_words(["ab\x0ccd\x1c ef"], NONE)
    assert [w.word for w in words] == ["ab", "cd", "ef"]
    assert words[1].masked_answer == "ab _ ef"


def test_none_policy_and_word_list_file(tmp_path):
    assert masked_positions(["the", "of"], NONE) == [0, 1]
    path = tmp_path / "stop.txt"
    path.write_text("# of\nBackstroke\n\nthe\n")  # a comment line is no word
    policy = stopword_policy(str(path))
    assert policy("backstroke.") and policy("The") and not policy("of")
    with pytest.raises(InputError, match="stopword list not found"):
        stopword_policy(str(tmp_path / "missing.txt"))


# --- tasks ---------------------------------------------------------------------------------


def test_masked_answer_replaces_one_word():
    words = masked_words(["Clearly a backstroke."], NONE)
    assert [(w.masked_answer, w.word) for w in words] == [
        ("_ a backstroke.", "Clearly"),
        ("Clearly _ backstroke.", "a"),
        ("Clearly a _", "backstroke."),
    ]
    assert [w.word for w in masked_words(["Clearly a backstroke."], WORDFREQ)] == [
        "Clearly",
        "a",
        "backstroke.",
    ]


def test_choice_label_and_text_are_masked_as_one_word():
    choices = ["Sydney", "Canberra", "New York"]
    words = masked_words(["B. Canberra is right", "(C) new york.", "Canberra, B."], NONE, choices)
    assert [(w.masked_answer, w.word, w.answer, w.position) for w in words] == [
        ("_ is right", "B. Canberra", 0, 0),
        ("B. Canberra _ right", "is", 0, 2),
        ("B. Canberra is _", "right", 0, 3),
        ("_", "(C) new york.", 1, 0),
        ("_ B.", "Canberra,", 2, 0),  # no leading label: words masked on their own
        ("Canberra, _", "B.", 2, 1),
    ]
    # a label followed by another choice's text, or no choices given: word by word
    assert [w.word for w in masked_words(["A. Canberra"], NONE, choices)] == ["A.", "Canberra"]
    assert [w.word for w in masked_words(["B. Canberra"], NONE)] == ["B.", "Canberra"]


def test_scoring_question_and_answer_list():
    assert scoring_question("Why\n") == "Question: Why?"
    assert scoring_question("Question: Why?") == "Question: Why?"
    assert format_answers(["a b", "c"]) == "x_1 = 'a b'\nx_2 = 'c'"


def test_the_judge_s_chats_are_the_protocol_s():
    """The chats of docs/protocol.md §5 with the original tool's texts (data/prompts.yaml), word
    for word: the reference context says how many answers it lists and asks by the
    distribution of answers, a summary context by the answer."""
    prompts = question_prompts(QuestionAnswers("Why", ["a b"], ["c", "d"], []), ["s"], NONE)
    system = {
        "role": "system",
        "content": "You are a friendly chatbot who always responds with short and concise"
        " answers.\n",
    }
    ask = (
        'We now show a text with a missing word "_". Fill in the missing word "_" only based on'
        ' the {} you gave above: {}\nPlease provide only the missing word "_", not the whole'
        " sentence."
    )
    assert prompts.references[0].chats[0] == [
        system,
        {"role": "user", "content": "Question: Why?\nSample 2 answers to this question."},
        {"role": "assistant", "content": "x_1 = 'c'\nx_2 = 'd'"},
        {"role": "user", "content": ask.format("distribution of answers", "_ b")},
    ]
    assert prompts.summaries["s"].chats[1] == [
        system,
        {"role": "user", "content": "Question: Why?"},
        {"role": "assistant", "content": "s"},
        {"role": "user", "content": ask.format("answer", "a _")},
    ]


def test_target_tokens_are_the_extra_tokens_of_the_chat_ending_with_the_word(hf_model):
    tokenizer, _ = hf_model
    words = masked_words(["The easiest is backstroke."], NONE)
    prompt = context_prompt("Question: Q?", "ctx", "answer", words)
    tasks = context_tasks(tiny_format(tokenizer), prompt)
    for k, word in enumerate(words):
        sequence = tasks.sequences[k]
        assert tokenizer.decode(sequence[tasks.starts[k] :]) == word.word
        assert tasks.prefix_len < tasks.starts[k]
        assert sequence[: tasks.prefix_len] == tasks.sequences[0][: tasks.prefix_len]


def test_without_word_chat_is_a_prefix_of_the_with_word_chat(hf_model):
    fmt = tiny_format(hf_model[0])
    chat = [{"role": "user", "content": "x"}]
    without = fmt.encode(fmt.render(chat, thinking=True))  # no empty reasoning block
    full = [*chat, {"role": "assistant", "content": "backstroke"}]
    with_word = fmt.encode(fmt.render(full, continue_final_message=True))
    assert with_word[: len(without)] == without and len(with_word) > len(without)


def test_summaries_and_reference_tasks_align(example_tasks):
    reference, summaries = example_tasks["wordfreq"]
    assert reference.num_tasks > 0
    for tasks in summaries.values():
        assert tasks.num_tasks == reference.num_tasks
    assert example_tasks["none"][0].num_tasks > reference.num_tasks


def test_question_without_conditioning_answers_or_words_fails(hf_model):
    tokenizer, _ = hf_model
    with pytest.raises(TaskError, match="no conditioning answers"):
        question_tasks(tiny_format(tokenizer), "Q", ["a b"], [], {"s": "x"}, NONE)
    with pytest.raises(TaskError, match="no held-out answer"):
        question_tasks(tiny_format(tokenizer), "Q", ["", " "], ["c"], {"s": "x"}, NONE)


def test_token_tree_computes_each_distinct_start_once():
    tasks = ContextTasks([[1, 2, 3, 4, 5], [1, 2, 3, 6, 7, 8], [1, 2, 3, 4, 5]], [4, 4, 4], 2)
    tree = token_tree(tasks, range(3))
    # after the prefix and without the last tokens: [3, 4], [3, 6, 7], [3, 4]
    assert tree.tokens == [3, 4, 6, 7]
    assert tree.parents == [-1, 0, 0, 2]
    assert tree.depths == [0, 1, 1, 2]
    # targets 5 | 7, 8 | 5 are predicted by the nodes of 4 | 6, 7 | 4
    assert tree.predictors == [1, 2, 3, 1]


# --- metric --------------------------------------------------------------------------------


def test_total_variation_properties():
    torch.manual_seed(0)
    a, b = torch.randn(6, 50) * 3, torch.randn(6, 50) * 3
    d = metric.task_distances(a, b, 5.0)
    assert d.shape == (6,) and bool(((d >= 0) & (d <= 1)).all())
    assert torch.allclose(d, metric.task_distances(b, a, 5.0))
    assert torch.equal(metric.task_distances(a, a, 5.0), torch.zeros(6))
    # log-probabilities give the same distances as logits
    assert torch.allclose(d, metric.task_distances(a.log_softmax(-1), b, 5.0), atol=1e-6)
    one_hot = torch.full((1, 4), -1e9)
    other = one_hot.clone()
    one_hot[0, 0], other[0, 1] = 0.0, 0.0
    assert metric.task_distances(one_hot, other, 1.0).item() == pytest.approx(1.0)
    # by hand, at T = 5: softmax([0, 5 ln 3] / 5) = [1/4, 3/4] against [1/2, 1/2]
    three_to_one = torch.tensor([[0.0, 5 * math.log(3)]])
    assert metric.task_distances(three_to_one, torch.zeros(1, 2), 5.0).item() == pytest.approx(0.25)


def test_the_least_temperature_the_schema_allows_keeps_the_metric_finite():
    """``scoring.temperature: 1e-300`` passed ``exclusiveMinimum: 0`` and made every score NaN:
    in float32 logits / T overflows. At the schema's minimum even logits of 1e4 stay finite."""
    from selfreflect.config import SCHEMA_PATH
    from selfreflect.fileio import read_yaml

    least = read_yaml(SCHEMA_PATH)["properties"]["scoring"]["properties"]["temperature"]
    logits = torch.tensor([[1e4, -1e4, 0.0, 1.0], [30.0, -30.0, 5.0, 0.0]])
    assert torch.isfinite(metric.task_distances(logits, logits.flip(-1), least["minimum"])).all()
    assert metric.task_distances(logits, logits.flip(-1), 1e-300).isnan().all()


# --- judges --------------------------------------------------------------------------------


def assert_hf_matches_the_reference_algorithm(hf_judge, reference_judge, reference, summaries):
    everything = range(len(reference.sequences))
    # the baseline's logits do not depend on T: compute them once, as its distances() does
    with torch.inference_mode():
        slow_reference = reference_judge.logits(reference, everything)
    for summary in summaries.values():
        with torch.inference_mode():
            slow_summary = reference_judge.logits(summary, everything)
        for temperature in (5.0, 1.0):
            fast = hf_judge.distances(reference, [summary], temperature)[0]
            slow = metric.task_distances(slow_summary, slow_reference, temperature)
            assert fast.shape == (reference.num_tasks,)
            assert torch.allclose(fast, slow, atol=1e-5)
            assert abs(metric.score(fast.tolist()) - metric.score(slow.tolist())) < 1e-4


@pytest.mark.parametrize("policy", ["wordfreq", "none"])
def test_hf_matches_reference_algorithm(example_tasks, hf_judge, reference_judge, policy):
    assert_hf_matches_the_reference_algorithm(hf_judge, reference_judge, *example_tasks[policy])


def test_hf_matches_reference_algorithm_with_one_masked_word(hf_model, hf_judge, reference_judge):
    """A context of one task (one held-out answer of one word): its only sequence is all shared
    prefix but for its target tokens."""
    tasks = question_tasks(
        tiny_format(hf_model[0]), "Q", ["Paris"], ["Paris", "Lyon"], {"s": "Paris, likely"}, NONE
    )
    assert len(tasks[0].sequences) == 1
    assert_hf_matches_the_reference_algorithm(hf_judge, reference_judge, *tasks)


@pytest.mark.parametrize("budget", [1, 150, 600, 10**6])
def test_packed_spans_hold_at_most_the_budget_and_are_full(example_tasks, budget):
    """Token batching: the masked words in order, each forward's token tree within the budget
    (a word over it alone), and no forward could have taken the next word."""
    reference, _ = example_tasks["wordfreq"]
    spans = packed_spans(reference, budget)
    assert [k for rows in spans for k in rows] == list(range(len(reference.sequences)))
    sizes = [len(token_tree(reference, rows).tokens) for rows in spans]
    assert all(size <= budget or len(rows) == 1 for size, rows in zip(sizes, spans, strict=True))
    for rows in spans[:-1]:
        assert len(token_tree(reference, range(rows.start, rows.stop + 1)).tokens) > budget
    if budget == 1:
        assert all(len(rows) == 1 for rows in spans)
    if budget == 10**6:
        assert len(spans) == 1


def test_a_forward_takes_words_up_to_exactly_the_budget(example_tasks):
    reference, _ = example_tasks["wordfreq"]
    budget = len(token_tree(reference, range(2)).tokens)
    assert packed_spans(reference, budget)[0] == range(2)


def test_hf_batched_by_tokens_matches_the_reference_algorithm(
    example_tasks, hf_model, hf_judge, reference_judge
):
    """The same distances, and the tokens it computes are each token batch's tree, with every
    context's forwards cut where the first reference's are."""
    tokenizer, model = hf_model
    judge = HfJudge("tiny", tiny_format(tokenizer), model, batch_size=4, token_budget=300)
    reference, summaries = example_tasks["wordfreq"]
    everything = range(len(reference.sequences))
    with torch.inference_mode():
        slow_reference = reference_judge.logits(reference, everything)
    spans = packed_spans(reference, 300)
    assert 1 < len(spans) < len(reference.sequences) and judge.spans(reference) == spans
    by_words = hf_judge.distances(reference, list(summaries.values()), 5.0)
    by_tokens = judge.distances(reference, list(summaries.values()), 5.0)
    for summary, fast, words in zip(summaries.values(), by_tokens, by_words, strict=True):
        with torch.inference_mode():
            slow_summary = reference_judge.logits(summary, everything)
        slow = metric.task_distances(slow_summary, slow_reference, 5.0)
        assert torch.allclose(fast, slow, atol=1e-5) and torch.allclose(fast, words, atol=1e-6)
    contexts = [reference, *summaries.values()]
    assert judge.forward_tokens == sum(
        tasks.prefix_len + sum(len(token_tree(tasks, rows).tokens) for rows in spans)
        for tasks in contexts
    )


def test_judges_count_the_tokens_they_compute(example_tasks, hf_judge, reference_judge):
    """hf: each context's prefix once, then each batch's token tree; the reference algorithm:
    everything before each target, once per target."""
    reference, summaries = example_tasks["wordfreq"]
    contexts = [reference, *summaries.values()]
    step = hf_judge.batch_size
    expected = sum(
        tasks.prefix_len
        + sum(
            len(token_tree(tasks, range(b, min(b + step, len(tasks.sequences)))).tokens)
            for b in range(0, len(tasks.sequences), step)
        )
        for tasks in contexts
    )
    before = hf_judge.forward_tokens
    hf_judge.distances(reference, list(summaries.values()), 5.0)
    assert hf_judge.forward_tokens - before == expected
    before = reference_judge.forward_tokens
    with torch.inference_mode():
        reference_judge.logits(reference, range(len(reference.sequences)))
    per_target = sum(
        j
        for seq, start in zip(reference.sequences, reference.starts, strict=True)
        for j in range(start, len(seq))
    )
    assert reference_judge.forward_tokens - before == per_target


def test_identical_context_scores_zero_and_roles_are_symmetric(example_tasks, hf_judge):
    reference, summaries = example_tasks["wordfreq"]
    summary = summaries["greedy"]
    assert metric.score(hf_judge.distances(reference, [reference], 5.0)[0].tolist()) == 0.0
    forward = hf_judge.distances(reference, [summary], 5.0)[0]
    backward = hf_judge.distances(summary, [reference], 5.0)[0]
    assert torch.allclose(forward, backward, atol=1e-6)
    assert 0.0 < metric.score(forward.tolist()) <= 1.0


@pytest.mark.parametrize("attention", ["sdpa", FLEX])
def test_hf_matches_reference_algorithm_with_a_sliding_window(example_tasks, hf_model, attention):
    """Full and sliding-window layers, through the kernel the judge uses (sdpa, an additive mask)
    and through FlexAttention (a block mask, compiled on first use)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer, model = hf_model
    settings = {k: v for k, v in model.config.to_dict().items() if k != "layer_types"}
    window = {"use_sliding_window": True, "sliding_window": 64, "max_window_layers": 1}
    config = Qwen2Config(**{**settings, **window})
    assert config.layer_types == ["full_attention", "sliding_attention"]
    torch.manual_seed(0)
    sliding = Qwen2ForCausalLM(config).eval()
    reference, summaries = example_tasks["wordfreq"]
    assert max(map(len, reference.sequences)) > 4 * 64
    summary = summaries["greedy"]
    fmt = tiny_format(tokenizer)
    slow = ReferenceJudge("sliding", fmt, sliding).distances(reference, [summary], 5.0)
    sliding.set_attn_implementation(attention)
    fast = HfJudge("sliding", fmt, sliding, batch_size=32).distances(reference, [summary], 5.0)
    assert torch.allclose(fast[0], slow[0], atol=1e-5)


def test_hf_matches_reference_algorithm_with_final_logit_softcapping(hf_model):
    """A judge whose logits are soft-capped (Gemma 2's ``final_logit_softcapping``): the hf
    judge caps the logits it computes itself as the model's own forward does."""
    from transformers import Gemma2Config, Gemma2ForCausalLM

    tokenizer, model = hf_model
    ids = {k: getattr(model.config, k) for k in ("vocab_size", "pad_token_id", "eos_token_id")}
    shape = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, head_dim=16)
    heads = dict(num_attention_heads=4, num_key_value_heads=2, attn_logit_softcapping=None)
    config = Gemma2Config(**ids, **shape, **heads, final_logit_softcapping=0.5)
    torch.manual_seed(0)
    capped = Gemma2ForCausalLM(config).eval()
    fmt = tiny_format(tokenizer)
    reference, summaries = question_tasks(
        fmt, "Q", ["Paris is big", "Lyon"], ["Paris", "Lyon"], {"s": "Paris, likely"}, NONE
    )
    slow = ReferenceJudge("capped", fmt, capped).distances(reference, [summaries["s"]], 5.0)
    capped.set_attn_implementation("sdpa")
    fast = HfJudge("capped", fmt, capped, batch_size=4).distances(reference, [summaries["s"]], 5.0)
    assert torch.allclose(fast[0], slow[0], atol=1e-5)


# --- scoring tables and failures -----------------------------------------------------------


def test_score_table_records_and_counts_failures(hf_judge):
    answers = read_reference_answers(TEST_ANSWERS)
    summaries = read_summaries(str(SUMMARIES))
    answers.loc[2] = answers.loc[0].copy()  # a third question with no conditioning answers
    answers.at[2, "id"], answers.at[2, "conditioning_answers"] = "empty", []
    first = summaries[summaries["id"] == answers.at[0, "id"]]
    summaries = pd.concat([summaries, first.assign(id="empty")], ignore_index=True)
    answers.loc[3] = answers.loc[0].copy()  # a fourth whose answer sampling failed
    answers.at[3, "id"], answers.at[3, "error"] = "failed", "engine died"
    summaries = summaries[~((summaries["id"] == answers.at[1, "id"]) & (summaries.index % 2 == 1))]
    scores = score_table(hf_judge, answers, summaries, 5.0, WORDFREQ)
    assert len(scores) == 4 * 2 - 1 and list(scores["id"].unique()) == list(answers["id"])
    errors = {(r.id, r.strategy): r.error for r in scores.itertuples()}
    assert errors["empty", "greedy"] == "no conditioning answers"
    assert errors["failed", "greedy"] == "answers failed: engine died"
    assert (answers.at[1, "id"], "greedy") not in errors  # a key it never had: absent, not failed
    ok = scores[scores["error"].isna()]
    assert len(ok) == 3 and ok["score"].between(0, 1).all() and (ok["num_tasks"] > 0).all()


def test_a_score_that_is_not_finite_is_a_recorded_failure(hf_judge):
    """At a temperature whose distributions overflow (1e-300) the scores were NaN and counted
    as scored ("2 scores (0 failed)"); each is now a failed question with its reason."""
    answers = read_reference_answers(TEST_ANSWERS).head(1)
    summaries = read_summaries(str(SUMMARIES))
    summaries = summaries[summaries["id"] == answers.at[0, "id"]]
    scores = score_table(hf_judge, answers, summaries, 1e-300, WORDFREQ)
    assert len(scores) == len(summaries) >= 2 and scores["score"].isna().all()
    assert scores["error"].str.startswith("the judge's distances are not finite").all()
    assert (scores["num_tasks"] == 0).all()


def test_kept_tasks_explain_the_score_and_leave_it_unchanged(hf_judge, tmp_path):
    answers = read_reference_answers(TEST_ANSWERS).head(1)
    summaries = read_summaries(str(SUMMARIES))
    plain = score_table(hf_judge, answers, summaries, 5.0, WORDFREQ)
    kept = score_table(hf_judge, answers, summaries, 5.0, WORDFREQ, keep_tasks=True)
    assert plain["tasks"].isna().all()
    pd.testing.assert_frame_equal(plain.drop(columns="tasks"), kept.drop(columns="tasks"))
    write_table("scores", kept.assign(dataset="d", subject="s"), tmp_path / "s.parquet")
    test_answers = answers.at[0, "test_answers"]
    for row in read_table("scores", tmp_path / "s.parquet").itertuples():
        tasks = pd.DataFrame(list(row.tasks))
        assert len(tasks) == row.num_tasks
        assert tasks["distance"].mean() == pytest.approx(row.score, abs=1e-12)
        for task in tasks.itertuples():
            assert test_answers[task.answer].split()[task.position] == task.word
            assert len(task.summary_top) == len(task.reference_p) == TOP_PREDICTIONS
            assert list(task.summary_p) == sorted(task.summary_p, reverse=True)


def test_too_long_prompt_is_a_recorded_failure(hf_model):
    tokenizer, model = hf_model
    judge = HfJudge("tiny", tiny_format(tokenizer), model, batch_size=4)
    judge.max_model_len = 64
    answers = QuestionAnswers("Q", ["a b"], ["c"], [])
    judged = judge_question(judge, answers, ["x"], 5.0, NONE)
    assert judged["x"].score is None and "max_model_len is 64" in judged["x"].error
    judge.max_model_len = int(re.search(r"prompt has (\d+) tokens", judged["x"].error)[1])
    assert judge_question(judge, answers, ["x"], 5.0, NONE)["x"].score is not None  # just fits


def test_a_summary_whose_target_tokens_differ_from_the_reference_s_fails_alone(hf_model):
    """Were a summary's context to tokenise a masked word's target tokens otherwise than the
    reference context does, its tasks would not line up with the reference's: that summary is a
    recorded failure, and the other summary is judged."""
    fmt = tiny_format(hf_model[0])

    class OddFormat(type(fmt)):
        def encode(self, text: str) -> list[int]:  # one more target token in the odd context
            return [*super().encode(text), 0] if "an odd one" in text else super().encode(text)

    answers = QuestionAnswers("Q", ["a b"], ["c"], [])
    prompts = question_prompts(answers, ["a fine one", "an odd one"], NONE)
    contexts = question_contexts(OddFormat(fmt.tokenizer, fmt.family), 10**6, prompts)
    assert set(contexts.summaries) == {"a fine one"}
    assert "differ from the reference context's" in contexts.failed["an odd one"]


# --- the command ---------------------------------------------------------------------------


def run(*args):
    return subprocess.run(["selfreflect", *args], capture_output=True, text=True)


def one_error_line(result) -> str:
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_score_command_on_reference_files(tiny_model, tmp_path):
    out = tmp_path / "scores.json"
    summaries = json.loads(SUMMARIES.read_text())[:1]  # the second question has no summaries
    (tmp_path / "summaries.json").write_text(json.dumps(summaries))
    result = run(
        "score",
        "--test-answers", str(TEST_ANSWERS),
        "--summaries", str(tmp_path / "summaries.json"),
        "--judge", str(tiny_model),
        "--out", str(out),
        "--stopwords", "none",
        "--temperature", "1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    scores = json.loads(out.read_text())
    assert len(scores) == 2 and scores[1] == {}
    assert set(scores[0]) == {"sample_and_summarize_summary", "greedy"}
    assert all(0 < value < 1 for value in scores[0].values())


def test_score_command_writes_scores_table(tiny_model, tmp_path):
    answers_path, summaries_path = tmp_path / "answers.parquet", tmp_path / "greedy.parquet"
    answers = read_reference_answers(TEST_ANSWERS)
    write_table("answers", answers, answers_path)
    summaries = read_summaries(str(SUMMARIES))
    summaries = summaries[summaries["strategy"] == "greedy"].assign(
        dataset="d", subject="s", summarizer="tiny", prompt_tokens=1, completion_tokens=1, seconds=0
    )
    write_table("summaries", summaries, summaries_path)
    out = tmp_path / "scores.parquet"
    result = run(
        "score",
        "--answers", str(answers_path),
        "--summaries", str(summaries_path),
        "--judge", str(tiny_model),
        "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    scores = read_table("scores", out)
    assert list(scores["id"]) == list(answers["id"]) and scores["error"].isna().all()
    # every row says its experiment: the summaries' dataset and subject, and the judge
    labels = scores[["dataset", "subject", "judge"]].drop_duplicates().values.tolist()
    assert labels == [["d", "s", tiny_model.name]]


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ("malformed", "malformed JSON"),
        ("judge", "model directory not found"),
        ("record", "has no field 'masked_out_task_answers'"),
    ],
)
def test_score_command_bad_inputs(tiny_model, tmp_path, change, fragment):
    answers, judge = tmp_path / "answers.json", str(tiny_model)
    answers.write_text(TEST_ANSWERS.read_text())
    if change == "malformed":
        answers.write_text(TEST_ANSWERS.read_text()[:-20])
    elif change == "judge":
        judge = str(tmp_path / "no-judge")
    else:
        answers.write_text(json.dumps([{"question": "Q"}]))
    out = tmp_path / "scores.json"
    result = run(
        "score", "--test-answers", str(answers), "--summaries", str(SUMMARIES),
        "--judge", judge, "--out", str(out),
    )  # fmt: skip
    assert fragment in one_error_line(result)
    assert not out.exists()


def test_summaries_table_round_trip_keeps_question_order():
    table = read_summaries(str(SUMMARIES))
    assert isinstance(table, pd.DataFrame) and len(table) == 4


def test_the_ancestor_mask_is_each_nodes_path_to_the_top():
    """:func:`ancestor_mask`, built on the device in one scatter per level (an ``index_put_``
    made the host wait for a GPU at each level: 64 waits per forward on an H200,
    docs/performance.md), is the mask row by row from the parents (a node sees itself and what
    its parent sees), on random trees."""
    from selfreflect.scoring.hf_judge import ancestor_mask

    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 60, 400):
        parents = [-1, *(int(rng.integers(-1, i)) for i in range(1, size))]
        expected = np.zeros((size, size), dtype=bool)
        depths = []
        for node, parent in enumerate(parents):
            if parent >= 0:
                expected[node] = expected[parent]
            expected[node, node] = True
            depths.append(0 if parent < 0 else depths[parent] + 1)
        found = ancestor_mask(torch.tensor(parents), max(depths)).numpy()
        assert (found == expected).all(), size


def test_the_block_mask_skips_the_blocks_that_see_nothing():
    """FlexAttention's mask of a forward (:func:`block_mask`): its mask function is the
    booleans it was built from, also past the last whole block, and a block of queries runs
    only over the blocks of keys that one of its queries sees."""
    from torch.nn.attention.flex_attention import create_mask

    prefix, answer = 128, 128  # a block each; the last answer ends inside its block
    queries = 2 * answer + 44
    allowed = torch.zeros(queries, prefix + queries, dtype=torch.bool)
    allowed[:, :prefix] = True  # every node sees the prefix
    for start in range(0, queries, answer):  # and its own answer's nodes, causally
        size = min(answer, queries - start)
        own = torch.ones(size, size, dtype=torch.bool).tril()
        allowed[start : start + size, prefix + start : prefix + start + size] = own
    mask = block_mask(allowed)
    assert (create_mask(mask.mask_mod, None, None, *allowed.shape) == allowed).all()
    runs = mask.to_dense()[0, 0]  # (query blocks, key blocks): the blocks the kernel runs
    assert runs.bool().tolist() == [
        [True] + [key == query for key in range(3)] for query in range(3)
    ]
