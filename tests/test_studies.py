"""The judge pass of an experiment (selfreflect.scoring.experiment) and the report studies read
off it, on the tiny model (transformers judge, no vLLM engine)."""

import pandas as pd
import pytest

from selfreflect.mc_study.choices import sampling_error
from selfreflect.mc_study.scores import mc_rows, mc_truth
from selfreflect.report.alt_metrics import alt_metrics_table
from selfreflect.report.studies import controlled_scores, convergence_scores
from selfreflect.scoring.cache import ResultCache
from selfreflect.scoring.experiment import judge_question, judgement_rows, judgements_table
from selfreflect.scoring.prompts import QuestionAnswers
from selfreflect.scoring.records import Judgement
from selfreflect.scoring.registry import open_judge
from selfreflect.scoring.stopwords import stopword_policy
from selfreflect.scoring.table import SIZE_ABOVE_ANSWERS, convergence_rows, result, summary_scores
from selfreflect.seeds import question_seed, subsample_indices

SETTINGS = {"backend": "hf", "dtype": "auto", "batch_size": 8}
SCORING = {"temperature": 5.0, "keep_tasks": False}
REPORT = {
    "pair_types": [],
    "mc_temperatures": [],
    "convergence_sizes": [],
    "convergence_questions": None,
    "cluster": {"embedder": "string", "threshold": 1.0},
}
NO_SUMMARIES = pd.DataFrame(columns=["id", "strategy", "summary", "error"])


@pytest.fixture(scope="module")
def judge(tiny_spec):
    with open_judge({**tiny_spec, "backend": "hf"}, SETTINGS) as model:
        yield model


def answers_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ["q1", "q2", "q3"],
            "question": [
                "Question: What is the capital of France?",
                "B?\nA. x\nB. y\nAnswer:",
                "Question: Who?",
            ],
            "test_answers": [["Paris is the capital", "Lyon"], ["B", "A"], ["Bob"]],
            "conditioning_answers": [["Paris", "Paris", "Lyon"], ["B", "B"], ["Bob"]],
            "error": [None, None, "failed upstream"],
            "choice_probs": [None, None, None],
            "choice_source": [None, None, None],
            "choice_error": [None, None, None],
        }
    )


def questions_frame(choices=(None, None, None)) -> pd.DataFrame:
    return pd.DataFrame({"id": ["q1", "q2", "q3"], "choices": list(choices)})


def judged(
    judge, summaries=NO_SUMMARIES, questions=None, cache=None, answers=None, shard=None, **report
):
    """The judgements of the three questions of :func:`answers_frame` (or ``answers``), or of
    those of ``shard`` among them."""
    answers = answers_frame() if answers is None else answers
    rows = judgement_rows(
        judge,
        questions_frame() if questions is None else questions,
        answers,
        answers if shard is None else shard,
        summaries,
        SCORING,
        {**REPORT, **report},
        1,
        stopword_policy("none"),
        cache,
    )
    return judgements_table(rows)


def summaries_frame(texts: dict[str, list[str | None]]) -> pd.DataFrame:
    """Summaries of q1 and q2, one list per strategy (None: a failed summary)."""
    rows = [
        (qid, strategy, text, None if text else "x")
        for strategy, per_question in texts.items()
        for qid, text in zip(["q1", "q2"], per_question, strict=True)
    ]
    return pd.DataFrame(rows, columns=["id", "strategy", "summary", "error"])


def test_controlled_scores_every_metric(judge):
    pair_types = ["majority_only", "idk"]
    alternatives = alt_metrics_table(judge, answers_frame(), pair_types)
    table = controlled_scores(judged(judge, pair_types=pair_types), alternatives)
    made = table[table["summary"].notna()]
    assert sorted(made.loc[made["id"] == "q1", "pair_type"]) == [
        "idk",
        "idk",
        "majority_only",
        "majority_only",
    ]
    assert made["error"].isna().all()
    for column, (low, high) in {
        "selfreflect": (0, 1),
        "llm_rating": (1, 5),
        "p_true": (0, 1),
        "embedding": (-1, 1),
    }.items():
        assert made[column].between(low, high).all(), column
    excluded = table[table["summary"].isna()]
    assert len(table) == 3 * 2 * 2  # every question, pair type and side keeps its row
    assert excluded.set_index(["id", "pair_type"])["error"].to_dict() == {
        ("q2", "majority_only"): "no majority_only pair: no answer group larger than every other",
        ("q3", "majority_only"): "answers failed: failed upstream",
        ("q3", "idk"): "answers failed: failed upstream",
    }
    assert excluded[["selfreflect", "llm_rating", "p_true", "embedding"]].isna().all().all()


def test_mc_scores_only_for_multiple_choice_questions_with_a_truth(judge):
    questions = questions_frame([[], ["x", "y"], ["x"]])  # q1: no options, as no choices
    answers = answers_frame()
    answers.at[1, "test_answers"] = ["B", "A", "x or y"]  # the last names both choices
    answers.at[1, "choice_probs"] = [0.3, 0.6, 0.1]  # A, B, none
    answers.at[1, "choice_source"], answers.at[1, "choice_error"] = "logprobs", 0.0
    settings = {"mc_temperatures": [0.5, 1.0, 2.0]}
    judgements = judged(judge, questions=questions, answers=answers, **settings)
    table = mc_rows(judgements, mc_truth(questions, [answers], settings))
    scored = table[table["summary"].notna()]
    assert scored["id"].tolist() == ["q2"] * 3
    assert scored["score"].notna().all()
    # the T = 1 summary states the truth (30 / 60 / 10 %): distance 0; both others are farther
    assert scored["w1"].tolist()[1] == pytest.approx(0.0) and min(scored["w1"].tolist()[::2]) > 0
    assert "B. y (about 60 %)" in scored["summary"].iloc[1]
    assert scored[["choice_source", "choice_error"]].values.tolist() == [["logprobs", 0.0]] * 3
    assert scored[["ambiguous_conditioning", "ambiguous_test"]].values.tolist() == [[0, 1]] * 3
    # the truth against all five answers (B, B | B, A, both): A / B / none 0.2 / 0.6 / 0.2
    assert scored["truth_tv"].tolist() == pytest.approx([0.5 * (0.1 + 0.0 + 0.1)] * 3)
    expected = sampling_error([0.3, 0.6, 0.1], 5)
    assert scored["truth_tv_expected"].tolist() == pytest.approx([expected] * 3)
    excluded = table[table["summary"].isna()].drop_duplicates("id")
    assert excluded["error"].tolist() == [
        "not a multiple-choice question",
        "answers failed: failed upstream",
    ]
    answers.at[1, "choice_probs"] = None  # e.g. answers imported from the original tool
    [reason] = (
        judged(judge, questions=questions, answers=answers, **settings)
        .query("id == 'q2'")["error"]
        .unique()
    )
    assert reason == "the answers have no distribution over the choices (answers.choice_truth)"


def test_convergence_scores_subsample_sizes(judge):
    summaries = pd.DataFrame(
        {
            "id": ["q1", "q1", "q2"],
            "strategy": ["a", "b", "a"],
            "summary": ["Paris", None, "B"],
            "error": [None, "x", None],
        }
    )
    settings = {"convergence_sizes": [1, 2, 3], "convergence_questions": None}
    table = convergence_scores(judged(judge, summaries, **settings))
    assert len(table) == 3 * 2 * 2 * 3  # question x strategy x answer set x size
    q1 = table[(table["id"] == "q1") & table["score"].notna()]
    assert set(q1["strategy"]) == {"a"}
    assert sorted(q1.loc[q1["axis"] == "conditioning", "size"]) == [1, 2, 3]
    assert sorted(q1.loc[q1["axis"] == "test", "size"]) == [1, 2]  # only 2 test answers
    reasons = table.loc[table["score"].isna()].groupby(["id", "strategy"])["error"].unique()
    assert reasons["q1", "b"].tolist() == ["summary failed: x"]
    assert reasons["q1", "a"].tolist() == [f"{SIZE_ABOVE_ANSWERS}: 2 test answers"]
    assert reasons["q2", "b"].tolist() == ["no summary for this question"]
    assert reasons["q3", "a"].tolist() == ["answers failed: failed upstream"]


def test_the_convergence_questions_are_the_dataset_s_first_in_every_shard(judge):
    summaries = summaries_frame({"a": ["Paris", "B"]})
    settings = {"convergence_sizes": [1], "convergence_questions": 1}
    whole = judged(judge, summaries, **settings)
    assert set(whole.loc[whole["kind"] == "convergence", "id"]) == {"q1"}
    later = judged(judge, summaries, shard=answers_frame().iloc[1:], **settings)
    assert set(later["id"]) == {"q2", "q3"} and not (later["kind"] == "convergence").any()


def test_subsample_is_nested_and_seeded():
    assert subsample_indices(8, 3, 7) == subsample_indices(8, 5, 7)[:3]
    assert sorted(subsample_indices(8, 8, 7)) == list(range(8))
    assert subsample_indices(8, 3, 7) != subsample_indices(8, 3, 8)  # each question its own


def alone(judge, row, texts, test=None, conditioning=None):
    """Each text scored on its own question (its own judge pass), as a score row's fields."""
    test = list(row.test_answers) if test is None else test
    conditioning = list(row.conditioning_answers) if conditioning is None else conditioning
    question = QuestionAnswers(row.question, test, conditioning, [])
    judged = judge_question(judge, question, list(texts.values()), 5.0, stopword_policy("none"))
    return {key: result(judged[text]) for key, text in texts.items()}


def test_one_pass_scores_every_summary_as_scoring_it_alone(judge):
    """Strategies, controlled pairs and MC variants of a question share one reference context
    (and each distinct text is judged once), with the scores of judging each on its own."""
    summaries = summaries_frame({"a": ["Paris", "B"], "b": ["Mostly Paris, or Lyon.", "B"]})
    questions = questions_frame([None, ["x", "y"], None])
    settings = {"pair_types": ["majority_only", "idk"], "mc_temperatures": [0.5, 2.0]}
    answers = answers_frame()
    answers.at[1, "choice_probs"] = [0.3, 0.6, 0.1]
    before = judge.forward_tokens
    table = judged(judge, summaries, questions, answers=answers, **settings)
    shared = judge.forward_tokens - before
    before = judge.forward_tokens
    made = table[table["summary"].notna()]
    assert set(made["kind"]) == {"strategy", "pair", "mc"}
    answers = answers_frame().set_index("id")
    for row in made.itertuples():
        expected = alone(judge, answers.loc[row.id], {"x": row.summary})["x"]
        assert abs(row.score - expected.score) < 1e-6, row
        assert row.num_tasks == expected.num_tasks
    assert shared < (judge.forward_tokens - before) / 2
    scores = table[(table["kind"] == "strategy") & (table["strategy"] == "a")]
    assert scores["id"].tolist() == ["q1", "q2", "q3"]
    assert scores["error"].tolist()[2] == "answers failed: failed upstream"


def test_a_rerun_judges_only_the_summary_texts_it_has_not_judged(judge, tmp_path):
    """With the result cache, adding a strategy judges its summaries alone, and changing one
    strategy's summaries judges the changed ones alone; the tables are unchanged."""
    cache = ResultCache(tmp_path, {"judge": "tiny"})
    answers = answers_frame().set_index("id")
    texts = {"a": ["Paris", "B"], "b": ["Lyon", "A"]}

    def tokens_of(summaries):
        before = judge.forward_tokens
        table = judged(judge, summaries, cache=cache)
        return table, judge.forward_tokens - before

    def tokens_alone(new):
        before = judge.forward_tokens
        for qid, text in new:
            alone(judge, answers.loc[qid], {"x": text})
        return judge.forward_tokens - before

    first, _ = tokens_of(summaries_frame(texts))
    again, spent = tokens_of(summaries_frame(texts))
    assert spent == 0 and again.equals(first)
    added, spent = tokens_of(summaries_frame({**texts, "c": ["Nice", "B, or A"]}))
    assert spent == tokens_alone([("q1", "Nice"), ("q2", "B, or A")])  # "B": a's text
    assert added[added["strategy"] != "c"].reset_index(drop=True).equals(first)
    changed, spent = tokens_of(summaries_frame({**texts, "b": ["Marseille", "A"]}))
    assert spent == tokens_alone([("q1", "Marseille")])
    assert changed[changed["strategy"] == "a"].equals(first[first["strategy"] == "a"])


def test_convergence_shares_each_context_and_scores_as_scoring_each_subsample(judge):
    """Every cell equals scoring its subsampled answers on their own (alone), with the
    summaries' contexts and the full reference computed once: fewer judge tokens."""
    row = answers_frame().iloc[0]
    test, conditioning = list(row.test_answers), list(row.conditioning_answers)
    texts = {"a": "Paris", "b": "Mostly Paris, sometimes Lyon."}
    summaries = summaries_frame({key: [text, "B"] for key, text in texts.items()})
    sizes = [1, 2, 3]
    before = judge.forward_tokens
    table = convergence_scores(
        judged(judge, summaries, convergence_sizes=sizes, convergence_questions=1)
    )
    shared = judge.forward_tokens - before
    assert set(table["id"]) == {"q1"}
    before = judge.forward_tokens
    seed = question_seed(1, "q1")
    cells = table[table["score"].notna()]
    for cell in cells.itertuples():
        pool = conditioning if cell.axis == "conditioning" else test
        part = [pool[i] for i in subsample_indices(len(pool), int(cell.size), seed)]
        args = (test, part) if cell.axis == "conditioning" else (part, conditioning)
        expected = alone(judge, row, {"x": texts[cell.strategy]}, *args)["x"]
        assert abs(cell.score - expected.score) < 1e-6, cell
    assert set(zip(cells["axis"], cells["size"], strict=True)) == {
        ("conditioning", n) for n in sizes
    } | {("test", 1), ("test", 2)}
    assert shared < (judge.forward_tokens - before) / 2


def test_a_multiple_choice_answer_masks_its_label_and_option_text_as_one_word(judge):
    """The judge pass masks "B. y" as one word where the question has choices (x, y)."""
    texts = ["Mostly B."]
    words = {}
    for choices in (["x", "y"], None):
        answers = QuestionAnswers("B?", ["B. y", "A"], ["B", "B"], [], choices)
        judged = judge_question(judge, answers, texts, 5.0, stopword_policy("none"), True)
        words[bool(choices)] = [record["word"] for record in judged[texts[0]].records]
    assert "B. y" in words[True] and "y" not in words[True]
    assert {"B.", "y"} <= set(words[False])


def test_kept_tasks_are_on_the_strategy_rows_alone(judge):
    """The task records kept for the explorer are on the strategies' rows: a controlled
    pair's side or a convergence cell keeps none. A conditioning-answers cell counts every
    test answer's tasks."""
    report = {**REPORT, "pair_types": ["idk"], "convergence_sizes": [1]}
    scoring = {**SCORING, "keep_tasks": True}
    summaries = summaries_frame({"a": ["Paris", "B"]})
    rows = judgement_rows(
        judge, questions_frame(), answers_frame(), answers_frame(), summaries, scoring, report,
        1, stopword_policy("none"),
    )  # fmt: skip
    table = judgements_table(rows)
    scored = table[table["score"].notna()]
    assert set(scored["kind"]) == {"strategy", "pair", "convergence"}
    assert scored.loc[scored["kind"] == "strategy", "tasks"].map(len).gt(0).all()
    assert table.loc[table["kind"] != "strategy", "tasks"].isna().all()
    cells = scored[(scored["kind"] == "convergence") & (scored["axis"] == "conditioning")]
    whole = scored[scored["kind"] == "strategy"].set_index("id")["num_tasks"]
    assert cells["num_tasks"].tolist() == cells["id"].map(whole).tolist()  # every test answer
    assert (whole > 1).all()


def test_scores_keep_each_questions_summaries_in_their_order():
    """The scores rows of a question come in the order of its summaries, which need not be
    the first question's order of strategies."""
    keys = {"id": ["q1", "q1", "q2", "q2"], "strategy": ["b", "a", "a", "b"]}
    judged = pd.DataFrame({"id": ["q1", "q1", "q2", "q2"], "strategy": ["a", "b", "a", "b"]})
    judged = judged.assign(kind="strategy", score=0.5, num_tasks=1, error=None, tasks=None)
    scores = summary_scores(judged, pd.DataFrame(keys))
    assert scores[["id", "strategy"]].to_dict("list") == keys


def test_convergence_cells_of_no_task_and_of_a_failed_judgement_above_the_answers():
    """A subsample of held-out answers none of which had a word to mask is a cell failed with
    that reason (not a score of no tasks); a failed judgement's cells name its error where
    their size fits, and the size where it is above the question's answers."""
    pools = {"conditioning": ["c1", "c2"], "test": ["t1", "t2"]}
    [picked] = subsample_indices(2, 1, seed=7)
    judged = {
        "S": Judgement(distances=[[0.5, 0.25], [0.75, 0.5]], owners=[1 - picked] * 2),
        "F": Judgement(distances=[], owners=[], error="the judge failed"),
    }
    strategies = [{"strategy": name, "summary": name, "error": None} for name in judged]
    rows = convergence_rows("q1", pools, strategies, judged, sizes=[1, 3], seed=7)
    cells = {(r["strategy"], r["axis"], r["size"]): (r["score"], r["error"]) for r in rows}
    above = {axis: f"{SIZE_ABOVE_ANSWERS}: 2 {axis} answers" for axis in pools}
    assert cells == {
        ("S", "conditioning", 1): (0.625, None),
        ("S", "conditioning", 3): (None, above["conditioning"]),
        ("S", "test", 1): (None, "no held-out answer has a word to mask"),
        ("S", "test", 3): (None, above["test"]),
        ("F", "conditioning", 1): (None, "the judge failed"),
        ("F", "conditioning", 3): (None, above["conditioning"]),
        ("F", "test", 1): (None, "the judge failed"),
        ("F", "test", 3): (None, above["test"]),
    }


def test_a_summary_too_long_for_the_judge_fails_its_convergence_cells_not_the_job(judge):
    """A summary whose contexts the judge cannot hold fails on a convergence question like on
    any other: its strategy row and its cells say why, the other strategy's cells are scored."""
    summaries = pd.DataFrame(
        {
            "id": ["q1", "q1"],
            "strategy": ["long", "short"],
            "summary": ["Paris " * 3000, "Paris"],
            "error": [None, None],
        }
    )
    settings = {"convergence_sizes": [1], "convergence_questions": 1}
    table = judged(judge, summaries, **settings)
    q1 = table[table["id"] == "q1"].set_index(["kind", "strategy", "axis"])
    [reason] = q1.loc[("strategy", "long"), "error"].unique()
    assert "max_model_len is 2048" in reason
    cells = q1.loc["convergence"]
    assert cells.loc["long", "error"].tolist() == [reason, reason]
    assert cells.loc["short", "score"].notna().all()
