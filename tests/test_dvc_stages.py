"""A job's DVC stage (selfreflect.workflow): the command DVC runs, its deps, params, outs,
metrics, plots and meta, on jobs written out by hand (an answer shard read by its merge, a
report, a LoRA adapter). What Snakemake's jobs for the smoke and paper configs make of it, read
by DVC itself: tests/test_dag_consistency.py."""

from selfreflect.code_deps import Deps
from selfreflect.snakemake_jobs import Job
from selfreflect.workflow import (
    command_params,
    dvc_artifacts,
    dvc_param,
    job_stages,
    setting_values,
)

RESOLVED = "logs/r/config.yaml"
CODE = "src/selfreflect/answers.py"
QUESTIONS = "results/r/d/questions.parquet"
SHARD = "results/r/d/s/shards/answers-0.parquet"
SHARD_LOG = "logs/r/answer_shard/d/s/0.log"
ANSWERS = "results/r/d/s/answers.parquet"
PROMPTS = {"system": "Be brief."}
SETTINGS = {"answers.num_answers": 2, "models.qwen2.5-7b": {"path": "Qwen/Qwen2.5-7B"}}
MODELS = {"qwen2.5-7b": {"path": "Qwen/Qwen2.5-7B"}, "qwen2.5-0.5b": {"path": "Qwen/Qwen2.5-0.5B"}}
CONFIG = {"answers": {"num_answers": 2}, "models": MODELS}


def jobs() -> list[Job]:
    shard = Job(
        "answer_shard",
        {"dataset": "d", "subject": "s", "shard": "0"},
        [QUESTIONS, CODE],
        [SHARD],
        [SHARD_LOG],
        "benchmarks/r/answer_shard/d/s/0.tsv",
        {"settings": SETTINGS, "prompts": PROMPTS},
        f"selfreflect answer --config {RESOLVED}\n    --out {SHARD} 2> {SHARD_LOG}",
    )
    merge = Job(
        "merge_answers",
        {"dataset": "d", "subject": "s"},
        [SHARD, CODE],
        [ANSWERS],
        ["logs/r/merge_answers/d/s.log"],
        None,
        {"settings": {"models.qwen2.5-0.5b": {}, "answers.num_answers": 2}, "prompts": PROMPTS},
        f"selfreflect merge --config {RESOLVED} --out {ANSWERS} 2>> logs/r/merge_answers/d/s.log",
    )
    outputs = ["reports/r/metrics/m.json", "reports/r/figures/m.png", "reports/r/tables/m.csv"]
    report = Job("report", {}, [ANSWERS], outputs, [], None, {}, "selfreflect report")
    everything = Job("all", {}, outputs, [], [], None, {}, "")
    return [report, shard, everything, merge]


def test_a_shard_runs_in_its_readers_stage_whose_deps_and_params_are_the_jobs():
    """The shard's job runs first in its merge's stage: its command (reading params.yaml, no
    log redirection), inputs (not the shard), settings and prompts count, each once; the shard
    and its benchmark file are the stage's meta. Stages come by name; `all` has none."""
    stages = job_stages(jobs(), RESOLVED, "params.yaml", CONFIG)
    assert [(job.rule, job.wildcards) for job, _ in stages] == [
        ("merge_answers", {"dataset": "d", "subject": "s"}),
        ("report", {}),
    ]
    assert stages[0][1] == {
        "cmd": [
            f"selfreflect answer --config params.yaml --out {SHARD}",
            f"selfreflect merge --config params.yaml --out {ANSWERS}",
        ],
        "deps": [QUESTIONS, CODE],
        "params": [
            "answers.num_answers",
            "models",  # names with a dot: DVC tracks the key above them, once
            {"src/selfreflect/data/prompts.yaml": ["system"]},
        ],
        "outs": [ANSWERS],
        "meta": {"temporary": [SHARD], "benchmarks": ["benchmarks/r/answer_shard/d/s/0.tsv"]},
    }


def test_a_reports_outputs_are_outs_metrics_and_plots():
    stages = dict((job.rule, stage) for job, stage in job_stages(jobs(), RESOLVED, "p", CONFIG))
    assert stages["report"] == {
        "cmd": "selfreflect report",
        "deps": [ANSWERS],
        "outs": ["reports/r/tables/m.csv"],
        "plots": ["reports/r/figures/m.png"],
        "metrics": ["reports/r/metrics/m.json"],
    }


def test_only_adapters_are_model_artifacts_named_by_their_wildcards():
    adapter = "results/r/finetune/tiny/sft/seed0/adapter"
    wildcards = {"subject": "tiny", "method": "sft", "seed": "0"}
    train = Job("finetune_train", wildcards, [], [adapter, "reports/r/x.csv"], [], None, {}, "")
    assert dvc_artifacts([*jobs(), train]) == {
        "tiny-sft-0-adapter": {"path": adapter, "type": "model"}
    }


def test_dvc_params_are_the_config_keys_dvc_can_spell():
    params = {"answers": {"num": 1, "num_answers": 2}, "models": {"qwen2.5-7b": {"path": "x"}}}
    assert dvc_param("answers.num_answers", params) == "answers.num_answers"
    assert dvc_param("answers.num", params) == "answers.num"
    assert dvc_param("answers.num_answer", params) is None  # a prefix of a key is no key
    assert dvc_param("models.qwen2.5-7b.path", params) == "models"
    assert dvc_param("answers.num_answers.deeper", params) is None
    assert dvc_param("nosuch", params) is None


def test_setting_values_are_the_keys_the_config_has():
    keys = [("answers", "num_answers"), ("answers", "nosuch"), ("models", "qwen2.5-7b", "x")]
    assert setting_values(CONFIG, keys) == {"answers.num_answers": 2}


def test_only_a_command_taking_the_config_gets_the_resolved_one_as_a_param():
    """A model-building command takes no ``--config``: a param naming the run's config would
    rebuild the model every run shares for each run."""
    takes = Deps((), (), ("answers.num_answers",), takes_config=True)
    builds = Deps((), (), ("answers.num_answers",))
    assert command_params(takes, CONFIG, RESOLVED)["config"] == RESOLVED
    assert "config" not in command_params(takes, CONFIG, None)
    params = command_params(builds, CONFIG, RESOLVED)
    assert "config" not in params
    assert params["settings"]({"dataset": "d"}) == {"answers.num_answers": 2}
