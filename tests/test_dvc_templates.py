"""dvc.yaml's templates: the jobs of a rule whose stages differ only in their wildcard values are
one ``foreach`` stage, and DVC's own interpolation (``expanded``) reads back each job's stage.
The whole DAG of the smoke and paper configs, read by DVC itself: tests/test_dag_consistency.py."""

import pytest

from selfreflect.errors import ConfigError
from selfreflect.snakemake_jobs import Job
from selfreflect.workflow import expanded, grouped, rule_of
from tests.workflow_utils import job_name


def job(rule: str, **wildcards: str) -> Job:
    return Job(rule, wildcards, [], [], [], None, {}, "")


def judge_stage(dataset: str, subject: str, judge: str) -> dict:
    folder = f"results/smoke/{dataset}/{subject}"
    return {
        "cmd": f"selfreflect judge --subject {subject} --judge {judge} --out {folder}/{judge}.p",
        "deps": [f"results/smoke/{dataset}/questions.p", f"{folder}/answers.p"],
        "params": ["models", f"datasets.{dataset}"],
        "outs": [f"{folder}/judgements/{judge}.p"],
    }


def summary_stage(strategy: str, prompts: list[str]) -> dict:
    return {
        "cmd": f"selfreflect summarize --strategy {strategy}",
        "params": [{"prompts.yaml": ["system", *prompts]}],
        "outs": [f"results/smoke/smoke/tiny/summaries/{strategy}.p"],
    }


def stages_read(stages: list[tuple[Job, dict]]) -> dict[str, dict]:
    """What DVC reads from the stages ``grouped`` writes, by the job's own stage name."""
    return {job_name(name): stage for name, stage in expanded(grouped(stages)).items()}


def test_jobs_differing_only_in_wildcard_values_are_one_foreach_stage():
    """A dataset named like the run (``results/smoke/smoke``), a subject that is also the judge,
    the values the jobs share written out."""
    judged = [("smoke", "tiny", "tiny"), ("smoke_mmlu", "tiny", "tiny"), ("other", "tiny", "tiny")]
    stages = [
        (job("judge", dataset=d, subject=s, judge=j), judge_stage(d, s, j)) for d, s, j in judged
    ]
    written = grouped(stages)
    assert list(written) == ["judge"]
    assert written["judge"]["foreach"] == {
        "smoke-tiny-tiny": {"dataset": "smoke"},
        "smoke_mmlu-tiny-tiny": {"dataset": "smoke_mmlu"},
        "other-tiny-tiny": {"dataset": "other"},
    }
    assert written["judge"]["do"]["outs"] == [
        "results/smoke/${item.dataset}/tiny/judgements/tiny.p"
    ]
    assert written["judge"]["do"]["params"] == ["models", "datasets.${item.dataset}"]
    assert expanded(written) == {f"judge@{d}-{s}-{j}": judge_stage(d, s, j) for d, s, j in judged}


def test_a_subject_judging_itself_and_one_judged_by_another_each_get_their_own_stage():
    """Where the subject is its own judge, a blind replacement would write either wildcard in
    both places; each job's stage comes back as it is."""
    judged = [("smoke", "a", "a"), ("smoke", "a", "b"), ("smoke", "b", "a"), ("smoke", "b", "b")]
    stages = [
        (job("judge", dataset=d, subject=s, judge=j), judge_stage(d, s, j)) for d, s, j in judged
    ]
    written = grouped(stages)
    assert written["judge"]["do"]["outs"] == [
        "results/smoke/smoke/${item.subject}/judgements/${item.judge}.p"
    ]
    assert expanded(written) == {f"judge@{d}-{s}-{j}": judge_stage(d, s, j) for d, s, j in judged}


def test_stages_that_differ_in_more_than_wildcard_values_are_templates_of_their_own():
    """Strategies with a prompt named after them, without one, with two: ``cot`` is a word of
    ``twostep_cot``'s prompts, not its strategy."""
    prompts = {
        "basic": ["basic"],
        "cot": ["cot"],
        "greedy": [],
        "concatenated_answers": [],
        "twostep_cot": ["twostep_cot_brainstorm", "twostep_cot_distill"],
    }
    stages = [
        (job("summarize", dataset="smoke", subject="tiny", strategy=s), summary_stage(s, p))
        for s, p in prompts.items()
    ]
    written = grouped(stages)
    assert {name: list(stage.get("foreach", [])) for name, stage in written.items()} == {
        "summarize": ["smoke-tiny-basic", "smoke-tiny-cot"],
        "summarize-2": ["smoke-tiny-greedy", "smoke-tiny-concatenated_answers"],
        "summarize-smoke-tiny-twostep_cot": [],
    }
    assert written["summarize"]["do"]["params"] == [
        {"prompts.yaml": ["system", "${item.strategy}"]}
    ]
    assert stages_read(stages) == {
        f"summarize-smoke-tiny-{s}": summary_stage(s, p) for s, p in prompts.items()
    }


def test_a_stage_dvc_would_read_otherwise_stops_the_generation():
    """DVC's interpolation reads ``\\${`` as ``${``: no dvc.yaml is written that runs another
    command than the job's."""
    stage = {"cmd": "echo \\${HOME}", "outs": ["out"]}
    with pytest.raises(ConfigError, match="DVC reads the stage 'echo' other than its job runs"):
        grouped([(job("echo"), stage)])


@pytest.mark.parametrize(
    "datasets",
    [("a.b", "a_b"), ("a b", "a.b")],
    ids=["in one foreach stage", "as two stages of their own"],
)
def test_two_jobs_whose_names_dvc_writes_alike_stop_the_generation(datasets):
    """Characters DVC forbids in a name become ``_``: two datasets differing only there would
    share one stage name (and one record in dvc.lock)."""
    stages = [(job("judge", dataset=d), judge_stage(d, "tiny", "tiny")) for d in datasets]
    if datasets[0] == "a b":  # stages that are no one template: the second has its own deps
        stages[1][1]["deps"] = ["elsewhere"]
    with pytest.raises(ConfigError, match=r"two jobs map to the DVC stage name 'judge.*a_b'"):
        grouped(stages)


def test_a_value_that_begins_another_is_read_as_the_longer_one():
    """A subject named like its judge and more (``a-b`` judged by ``a``): the longer value is
    the word where it stands, so both jobs are one template."""
    judged = [("smoke", "a-b", "a"), ("smoke", "c-d", "c")]
    stages = [
        (job("judge", dataset=d, subject=s, judge=j), judge_stage(d, s, j)) for d, s, j in judged
    ]
    written = grouped(stages)
    assert list(written) == ["judge"]
    assert written["judge"]["do"]["outs"] == [
        "results/smoke/smoke/${item.subject}/judgements/${item.judge}.p"
    ]


def test_stages_differing_after_their_last_wildcard_value_are_stages_of_their_own():
    """One job's command has an option more after the value: no template makes both."""
    stages = [
        (job("echo", name="a"), {"cmd": "echo a", "outs": ["a.txt"]}),
        (job("echo", name="b"), {"cmd": "echo b --twice", "outs": ["b.txt"]}),
    ]
    assert stages_read(stages) == {"echo-a": stages[0][1], "echo-b": stages[1][1]}
    assert list(grouped(stages)) == ["echo-a", "echo-b"]


def test_a_rules_second_template_is_named_2_after_stages_of_their_own():
    """The numbering counts the rule's templates (``foreach`` stages) alone."""
    prompts = {"twostep_cot": ["x", "y"], "basic": ["basic"], "cot": ["cot"], "greedy": []}
    prompts |= {"concatenated_answers": []}
    stages = [
        (job("summarize", dataset="smoke", subject="tiny", strategy=s), summary_stage(s, p))
        for s, p in prompts.items()
    ]
    assert list(grouped(stages)) == ["summarize-smoke-tiny-twostep_cot", "summarize", "summarize-2"]


def test_the_rule_of_a_stage_is_read_off_its_name():
    names = ["summarize-2@smoke-tiny-greedy", "summarize@smoke-tiny-basic", "judge-smoke-tiny-a"]
    assert [rule_of(name) for name in names] == ["summarize", "summarize", "judge"]
    assert rule_of("report_main_table") == "report_main_table"
