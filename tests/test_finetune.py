"""Finetuned summarisers on the tiny model, with real TRL, PEFT and vLLM: training data, LoRA
training (loss, resume after a kill), the adapter on both backends, and the config errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from safetensors.torch import load_file

from selfreflect import paths
from selfreflect.artifacts import write_table
from selfreflect.cli import main
from selfreflect.config import model_spec, read_config_file, validate_config
from selfreflect.errors import InputError
from selfreflect.finetune.data import dpo_pairs, sft_data
from selfreflect.finetune.train import OWNER, train_adapter
from selfreflect.questions import question_id
from tests.assertions import snapshot
from tests.workflow_utils import REPO

QUESTIONS = ["What is the capital of France?", "Who wrote Hamlet?", "What colour is the sky?"]
TARGETS = ["Paris.", "Shakespeare.", "Blue, or grey."]
TRAINING = {"learning_rate": 0.01, "epochs": 6, "batch_size": 3, "checkpoint_every": 3}


def finetune_config(model: Path, **finetune) -> dict:
    return validate_config(
        {
            "run": "t",
            "models": {"tiny": {"path": str(model), "backend": "hf", "dtype": "float32"}},
            "subjects": ["tiny"],
            "judges": ["tiny"],
            "datasets": {
                "eval": {"source": "local", "path": "eval.jsonl"},
                "train": {"source": "local", "path": "train.jsonl"},
            },
            "summaries": {
                "strategies": ["greedy", "sample_and_summarize", "finetuned_sft"],
                "max_tokens": 8,
            },
            "finetune": {"dataset": "train", "training": TRAINING, **finetune},
        }
    )


def questions_table(questions=QUESTIONS, dataset="train") -> pd.DataFrame:
    ids = [question_id(q) for q in questions]
    return pd.DataFrame(
        {
            "id": ids,
            "question": questions,
            "dataset": dataset,
            "source_index": range(len(ids)),
            "choices": None,
            "gold": None,
        }
    )


def sft_table() -> pd.DataFrame:
    teacher = questions_table().assign(summary=TARGETS, error=None)
    return sft_data(questions_table(), teacher)


@pytest.fixture(scope="module")
def sft_adapter(tiny_model, tmp_path_factory):
    """An SFT adapter trained in-process, and its loss per step."""
    config = finetune_config(tiny_model)
    out = tmp_path_factory.mktemp("sft") / "adapter"
    train_adapter(
        model_spec(config, "tiny"),
        "sft",
        sft_table(),
        config["finetune"]["training"],
        out,
        {"ids": []},
        out.parent / "log",
    )
    return out, logged_losses(out.parent / "log")


def logged_losses(log: Path) -> list[dict]:
    """The loss per step a training log (DVCLive's folder) holds."""
    return pd.read_csv(log / paths.LOSS, sep="\t").to_dict("records")


def test_sft_loss_falls(sft_adapter):
    _, losses = sft_adapter
    assert len(losses) == 6 and losses[-1]["loss"] < losses[0]["loss"] / 2


def greedy_summaries(generator) -> list[str]:
    from selfreflect.backends import Sampling
    from selfreflect.strategies.finetuned import finetuned_chat

    chats = [finetuned_chat(q) for q in QUESTIONS]
    return [g.texts[0] for g in generator.chat(chats, Sampling(max_tokens=12))]


# greedy summaries of a vLLM engine with a LoRA adapter, in a process of its own: on a CPU an
# engine runs in its caller's process, and one stopped there tears down vLLM's parallel state,
# which is global, under the session's engine (tests/conftest.py: vllm_engine)
LORA_SUMMARIES = """
import json, sys
from selfreflect.backends.vllm_engine import VllmGenerator
from tests.test_finetune import greedy_summaries
with VllmGenerator(json.loads(sys.argv[1])) as vllm:
    print(json.dumps(greedy_summaries(vllm)))
"""


def test_adapter_changes_summaries_alike_on_hf_and_vllm(sft_adapter, tiny_model, hf_generator):
    """One engine with LoRA on (the session's vLLM engine has none)."""
    from selfreflect.backends.hf_engine import HfGenerator
    from tests.conftest import tiny_model_spec

    adapter = str(sft_adapter[0])
    hf = HfGenerator({**tiny_model_spec(tiny_model, backend="hf"), "adapter": adapter})
    finetuned = greedy_summaries(hf)
    assert finetuned != greedy_summaries(hf_generator)
    spec = json.dumps({**tiny_model_spec(tiny_model), "adapter": adapter})
    vllm = subprocess.run(
        [sys.executable, "-c", LORA_SUMMARIES, spec], cwd=REPO, capture_output=True, text=True
    )
    assert vllm.returncode == 0, vllm.stderr[-3000:]
    assert json.loads(vllm.stdout.splitlines()[-1]) == finetuned


def run_cli(*args: str | Path) -> None:
    """``selfreflect ARGS`` in-process through its real entry point."""
    argv = sys.argv
    sys.argv = ["selfreflect", *map(str, args)]
    try:
        main()
    finally:
        sys.argv = argv


def write_inputs(tmp_path: Path, tiny_model: Path, **finetune) -> list[str | Path]:
    """Config and SFT data files for ``finetune-train``: its arguments but for --out, --loss."""
    config = finetune_config(tiny_model, **finetune)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    ids = sorted(sft_table()["id"])
    write_table("sft_data", sft_table(), tmp_path / "d.parquet", {"ids": ids})
    return [
        "finetune-train",
        "--config",
        tmp_path / "c.yaml",
        "--subject",
        "tiny",
        "--method",
        "sft",
        "--data",
        tmp_path / "d.parquet",
    ]


def test_training_killed_while_writing_a_checkpoint_resumes_from_the_last_complete_one(
    sft_adapter, tiny_model, tmp_path
):
    """The probe: a run killed while its second checkpoint (checkpoint-6) was being written
    (all but the trainer state, the file the Trainer writes last) used to resume from that
    half-written one on every rerun (or fail: "Can't find a valid checkpoint"). It resumes from
    checkpoint-3 to the adapter and losses of a run never killed, and leaves no checkpoint."""
    command = [
        *write_inputs(tmp_path, tiny_model),
        "--out",
        tmp_path / "a",
        "--log",
        tmp_path / "l",
    ]
    kill = [sys.executable, "tests/kill_at.py", "before-training-state", "2", "--"]
    killed = subprocess.run([*kill, *map(str, command)], capture_output=True, text=True)
    assert killed.returncode == -9 and not (tmp_path / "a").exists()
    assert "'loss'" in killed.stderr and "'loss'" not in killed.stdout  # the job's log has them
    [complete] = tmp_path.glob(".a.checkpoints/*/checkpoint-3")
    assert (complete / "trainer_state.json").is_file()
    half = complete.parent / "checkpoint-6"
    assert not (half / "trainer_state.json").exists() and any(half.iterdir())
    run_cli(*command)
    resumed = load_file(tmp_path / "a/adapter_model.safetensors")
    uninterrupted = load_file(sft_adapter[0] / "adapter_model.safetensors")
    assert resumed.keys() == uninterrupted.keys()
    for name, weight in uninterrupted.items():
        assert (resumed[name] - weight).abs().max() < 1e-5, name
    resumed_losses = pd.DataFrame(logged_losses(tmp_path / "l"))
    assert list(resumed_losses.columns) == ["step", "loss"]
    assert list(resumed_losses["step"]) == [1, 2, 3, 4, 5, 6]
    uninterrupted_losses = [e["loss"] for e in sft_adapter[1]]
    assert resumed_losses["loss"].tolist() == pytest.approx(uninterrupted_losses, rel=1e-4)
    assert not (tmp_path / ".a.checkpoints").exists()


def test_a_half_written_checkpoint_is_set_aside_for_the_last_complete_one(tmp_path):
    """Complete: its trainer state (written last) reads back with its step. An empty folder (a
    kill as the save began: "Can't find a valid checkpoint") or a state cut short is removed."""
    from selfreflect.finetune.train import last_complete_checkpoint

    for step in (3, 6, 9, 12):
        (tmp_path / f"checkpoint-{step}").mkdir()
    (tmp_path / "checkpoint-3/trainer_state.json").write_text('{"global_step": 3}')
    (tmp_path / "checkpoint-9/adapter_model.safetensors").write_bytes(b"weights")
    (tmp_path / "checkpoint-9/trainer_state.json").write_text('{"global_step": 9, "log_hi')
    (tmp_path / "checkpoint-12/trainer_state.json").write_text('{"global_step": 6}')
    assert last_complete_checkpoint(tmp_path) == str(tmp_path / "checkpoint-3")
    assert [path.name for path in tmp_path.iterdir()] == ["checkpoint-3"]
    (tmp_path / "checkpoint-15").mkdir()  # the last one, complete
    (tmp_path / "checkpoint-15/trainer_state.json").write_text('{"global_step": 15}')
    assert last_complete_checkpoint(tmp_path) == str(tmp_path / "checkpoint-15")
    assert last_complete_checkpoint(tmp_path / "none") is None


def test_dpo_pairs_rank_candidates_by_score_with_a_minimum_gap():
    questions = questions_table(QUESTIONS[:1])
    qid = questions["id"][0]
    summaries = [
        pd.DataFrame({"id": [qid], "strategy": [s], "summary": [t]})
        for s, t in [("greedy", "Paris."), ("basic", "Paris or Lyon."), ("cot", "Lyon.")]
    ]
    scores = [
        pd.DataFrame({"id": [qid], "strategy": [s], "score": [v]})
        for s, v in [("greedy", 0.3), ("basic", 0.1), ("cot", 0.35)]
    ]
    pairs = dpo_pairs(questions, summaries, scores, min_gap=0.1)
    assert list(zip(pairs["chosen_strategy"], pairs["rejected_strategy"], strict=True)) == [
        ("basic", "greedy"),
        ("basic", "cot"),
    ]
    assert pairs["gap"].tolist() == pytest.approx([0.2, 0.25])
    assert pairs["chosen"].tolist() == ["Paris or Lyon."] * 2


def test_dpo_loss_falls(tiny_model, tmp_path):
    config = finetune_config(tiny_model)
    pairs = questions_table().assign(
        chosen=TARGETS,
        rejected=["I do not know."] * 3,
        chosen_strategy="a",
        rejected_strategy="b",
        gap=0.1,
    )
    train_adapter(
        model_spec(config, "tiny"),
        "dpo",
        pairs,
        config["finetune"]["training"],
        tmp_path / "adapter",
        {"ids": []},
        tmp_path / "log",
    )
    dpo_losses = logged_losses(tmp_path / "log")
    assert dpo_losses[0]["loss"] == pytest.approx(0.6931, abs=1e-3)  # ln 2: the adapter starts at 0
    assert dpo_losses[-1]["loss"] < 0.5
    assert (tmp_path / "adapter/adapter_model.safetensors").is_file()


def fails_with_one_line(capsys, *args: str | Path) -> str:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(*args)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def data_command(tmp_path: Path, tiny_model: Path, evaluated: list[str], **finetune):
    config = finetune_config(tiny_model, **finetune)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    write_table("questions", questions_table(), tmp_path / "train.parquet")
    write_table("questions", questions_table(evaluated, "eval"), tmp_path / "eval.parquet")
    teacher = questions_table().assign(
        subject="tiny",
        strategy="sample_and_summarize",
        summary=TARGETS,
        summarizer="tiny",
        prompt_tokens=1,
        completion_tokens=1,
        seconds=0.1,
        error=None,
    )
    write_table("summaries", teacher, tmp_path / "s.parquet")
    return [
        "finetune-data",
        "--config",
        tmp_path / "c.yaml",
        "--method",
        "sft",
        "--questions",
        tmp_path / "train.parquet",
        "--evaluated",
        tmp_path / "eval.parquet",
        "--summaries",
        tmp_path / "s.parquet",
        "--out",
        tmp_path / "o/d.parquet",
    ]


def test_sft_data_are_the_teachers_summaries(tiny_model, tmp_path):
    from selfreflect.artifacts import read_metadata, read_table

    run_cli(*data_command(tmp_path, tiny_model, ["What is the capital of Spain?"]))
    data = read_table("sft_data", tmp_path / "o/d.parquet")
    assert data["target"].tolist() == TARGETS and data["question"].tolist() == QUESTIONS
    assert read_metadata(tmp_path / "o/d.parquet")["ids"] == sorted(data["id"])


def test_overlapping_train_and_test_questions_stop(tiny_model, tmp_path, capsys):
    command = data_command(tmp_path, tiny_model, ["What is the capital of Spain?", QUESTIONS[1]])
    err = fails_with_one_line(capsys, *command)
    assert "c.yaml: finetune.dataset: 'train'" in err and "'eval'" in err and "Hamlet" in err
    assert not (tmp_path / "o").exists()


def test_unknown_teacher_stops(tiny_model, tmp_path, capsys):
    command = data_command(tmp_path, tiny_model, ["Q?"], teacher="oracle")
    err = fails_with_one_line(capsys, *command)
    assert "c.yaml: finetune.teacher: unknown strategy 'oracle'" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("key", "finetune"),
    [
        ("finetune.teacher", {"teacher": "finetuned_sft-seed0"}),
        ("finetune.candidates", {"candidates": ["greedy", "finetuned_dpo"]}),
    ],
)
def test_a_finetuned_strategy_is_no_teacher_or_candidate(tiny_model, key, finetune):
    """Refused while the DAG is built, and the message lists only the strategies it takes."""
    from selfreflect.errors import ConfigError
    from selfreflect.strategies.registry import check_strategies

    with pytest.raises(ConfigError) as refused:
        check_strategies(finetune_config(tiny_model, **finetune))
    message = str(refused.value)
    assert f"config: {key}: unknown strategy 'finetuned_" in message
    known = message.split("(known: ")[1]
    assert known.startswith("greedy, ") and "finetuned" not in known


def test_lora_target_module_the_model_lacks_stops(tiny_model, tmp_path, capsys):
    lora = {"target_modules": ["q_proj", "query_key_value"]}
    command = write_inputs(tmp_path, tiny_model, training={**TRAINING, "lora": lora})
    err = fails_with_one_line(
        capsys, *command, "--out", tmp_path / "o/a", "--log", tmp_path / "o/l"
    )
    assert "c.yaml: finetune.training.lora.target_modules: ['query_key_value']" in err
    assert not (tmp_path / "o").exists()


def test_learning_rate_reruns_training_and_what_follows_only(tmp_path, monkeypatch):
    """The DVC stages of the smoke DAG with both finetuned strategies: the learning rate is a
    param of the training stages alone, and downstream of them are only the finetuned
    strategies' summaries, the evaluated dataset's judge pass with what is read off it, and
    the tables (and the explorer page)."""
    import networkx as nx

    from selfreflect import paths
    from selfreflect.snakemake_jobs import workflow_jobs
    from selfreflect.workflow import dvc_artifacts, job_stages, stage_name

    repo = Path(__file__).parents[1]
    config = read_config_file(repo / "config/smoke.yaml")
    config["summaries"]["strategies"] = ["greedy", "finetuned_sft", "finetuned_dpo"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.chdir(repo)
    jobs = workflow_jobs(Path(paths.SNAKEFILE), tmp_path / "params.yaml")
    own = job_stages(jobs, "logs/smoke/config.yaml", "params.yaml", config)
    stages = {stage_name(job): stage for job, stage in own}  # each job's, as DVC expands them
    graph = nx.DiGraph()  # edges from a stage to the stages reading its outputs
    producer = {out: name for name, stage in stages.items() for out in stage.get("outs", [])}
    for name, stage in stages.items():
        graph.add_node(name)
        graph.add_edges_from(
            (producer[dep], name) for dep in stage.get("deps", []) if dep in producer
        )
    key = "finetune.training.learning_rate"
    changed = {
        name
        for name, stage in stages.items()
        for param in stage.get("params", [])
        if isinstance(param, str) and f"{key}.".startswith(f"{param}.")
    }
    reruns = changed | {d for name in changed for d in nx.descendants(graph, name)}
    finetuned = {
        f"{rule}-smoke-tiny-finetuned_{m}" for m in ("sft", "dpo") for rule in ("summarize",)
    }
    # the dataset's judge pass (its result cache judges only the new summaries) and what is
    # read off it: every strategy's scores and the studies
    judged = {"merge_judgements-smoke-tiny-tiny"}
    judged |= {f"strategy_scores-smoke-tiny-tiny-{s}" for s in config["summaries"]["strategies"]}
    judged |= {
        f"{study}-smoke-tiny-tiny" for study in ("report_controlled_scores", "report_mc_scores")
    }
    judged |= {"report_convergence_scores-smoke-tiny-tiny"}
    readers = {"explorer"} | {
        f"report_{table}"
        for table in (
            "main_table",
            "cost_table",
            "convergence",
            "human_agreement",
            "validation",
            "mc_study",
        )
    }
    assert changed == {"finetune_train-tiny-sft-0", "finetune_train-tiny-dpo-0"}
    assert reruns == changed | finetuned | judged | readers
    assert stages["finetune_train-tiny-sft-0"]["outs"] == [
        "results/smoke/finetune/tiny/sft/seed0/adapter",
        "reports/smoke/finetune/tiny/sft/seed0/dvclive",
    ]
    assert dvc_artifacts(jobs)["tiny-sft-0-adapter"] == {
        "path": "results/smoke/finetune/tiny/sft/seed0/adapter",
        "type": "model",
    }


def test_finetuned_strategy_without_adapter_stops(tiny_model, tmp_path, capsys):
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(finetune_config(tiny_model)))
    write_table("questions", questions_table(), tmp_path / "q.parquet")
    command = [
        "summarize",
        "--config",
        tmp_path / "c.yaml",
        "--subject",
        "tiny",
        "--strategy",
        "finetuned_sft",
        "--questions",
        tmp_path / "q.parquet",
        "--out",
        tmp_path / "o/s.pq",
    ]
    err = fails_with_one_line(capsys, *command)
    assert "--adapter: strategy 'finetuned_sft' needs one" in err
    assert not (tmp_path / "o").exists()


def test_finetuning_doc_is_rendered_from_its_runs(tmp_path, monkeypatch):
    """docs/finetuning.md and its figures are what ``selfreflect docs finetuning`` renders from
    the runs ``selfreflect bench finetuning`` recorded (docs/finetuning/<run>.json), never
    edited by hand; each record is the run of its config as it stands."""
    from selfreflect.config import load_config
    from selfreflect.docs import finetuning as render
    from selfreflect.finetune import trained_adapters

    monkeypatch.chdir(REPO)
    records = render.read_records()
    assert next(iter(records)) == render.FIRST
    assert render.DOC.read_text() == render.text(records)
    for run, result in records.items():
        config = load_config(result["config_path"])
        assert config["run"] == run
        # every seeded adapter of the config, evaluated by a judge of its own
        adapters = [f"{method}-seed{seed}" for method, seed in trained_adapters(config)]
        assert list(result["loss"]) == adapters and len(adapters) >= 3
        finetuned = [
            row for row in result["main"] if row.get("strategy", "").startswith("finetuned_")
        ]
        assert [row["strategy"] for row in finetuned] == [f"finetuned_{a}" for a in adapters]
        assert {row["teacher"] for row in finetuned if row.get("teacher")} == {
            config["finetune"]["teacher"]
        }
        assert all(row["verdict"] for row in finetuned)
        assert all(row["teacher_verdict"] for row in finetuned if row.get("teacher"))
        assert result["config"]["preference_judge"] not in result["config"]["evaluation_judges"]
        # the time table counts every job of the run once, however many sittings it took
        jobs = {row["rule"]: row["jobs"] for row in result["jobs"]}
        assert jobs["finetune_train"] == len(adapters)
        assert jobs["total"] == sum(count for rule, count in jobs.items() if rule != "total")
    render.training_figure(records[render.FIRST], tmp_path / "training.png")
    assert (tmp_path / "training.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_finetuning_config_without_a_record_is_listed_as_planned(monkeypatch):
    """Each shipped finetuning config appears on the page and in README's table of configs:
    with its record's figures once run, as "not yet run" before."""
    from selfreflect.docs import configs
    from selfreflect.docs import finetuning as render

    monkeypatch.chdir(REPO)
    records = render.read_records()
    shipped = sorted(p.as_posix() for p in Path("config").glob("finetune*.yaml"))
    recorded = {result["config_path"] for result in records.values()}
    assert sorted(recorded | set(render.planned(records))) == shipped
    assert "config/finetune-grpo.yaml" in shipped
    times = configs.finetuning_times()
    assert list(times) == [config for config in shipped if config != "config/finetune.yaml"]
    page = render.text(records)
    for config in shipped:
        unrun = f"`{config}`: planned, not yet run" in page
        assert unrun == (config not in recorded)
        assert (times.get(config) is None) == unrun or config == "config/finetune.yaml"
    fewer = {run: result for run, result in records.items() if run != "finetune-control"}
    assert "config/finetune-control.yaml" in render.planned(fewer)


def adapter_copy(sft_adapter, tmp_path: Path) -> Path:
    """A copy of the trained adapter to spoil."""
    return Path(shutil.copytree(sft_adapter[0], tmp_path / "adapter"))


def edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def summarize_command(tmp_path: Path, tiny_model: Path, adapter: Path, backend: str = "hf"):
    config = finetune_config(tiny_model)
    config["models"]["tiny"]["backend"] = backend
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    write_table("questions", questions_table(), tmp_path / "q.parquet")
    return [
        *("summarize", "--config", tmp_path / "c.yaml", "--subject", "tiny"),
        *("--strategy", "finetuned_sft", "--questions", tmp_path / "q.parquet"),
        *("--adapter", adapter, "--out", tmp_path / "o/s.parquet"),
    ]


def refused(capsys, tmp_path: Path, tiny_model: Path, adapter: Path, backend: str = "hf") -> str:
    """The one-line error of summarising with ``adapter``; no summaries written."""
    err = fails_with_one_line(capsys, *summarize_command(tmp_path, tiny_model, adapter, backend))
    assert str(adapter) in err
    assert not (tmp_path / "o").exists()
    return err


@pytest.mark.parametrize("backend", ["hf", "vllm"])
def test_adapter_of_another_subject_is_refused(sft_adapter, tiny_model, tmp_path, capsys, backend):
    adapter = adapter_copy(sft_adapter, tmp_path)
    edit_json(adapter / "training.json", lambda t: t["base_model"].update(sha256="0" * 64))
    err = refused(capsys, tmp_path, tiny_model, adapter, backend)
    assert "training.json: model sha256: trained on 0000" in err and "model 'tiny'" in err


@pytest.mark.parametrize(
    ("trained", "message"),
    [({"method": "dpo"}, "trained as dpo with seed 0, not sft"), ({"seed": 2}, "seed 2, not")],
    ids=["method", "seed"],
)
def test_adapter_trained_otherwise_than_its_strategy_says_is_refused(
    sft_adapter, tiny_model, tmp_path, capsys, trained, message
):
    """finetuned_sft runs the SFT adapter of finetune.training.seed (0), nothing else."""
    adapter = adapter_copy(sft_adapter, tmp_path)

    def retrain(record: dict) -> None:
        record["method"] = trained.get("method", "sft")
        record["training"]["seed"] = trained.get("seed", 0)

    edit_json(adapter / "training.json", retrain)
    err = refused(capsys, tmp_path, tiny_model, adapter)
    assert "training.json: method and training.seed:" in err and message in err


def test_adapter_without_its_subjects_fingerprint_is_refused(
    sft_adapter, tiny_model, tmp_path, capsys
):
    adapter = adapter_copy(sft_adapter, tmp_path)
    edit_json(adapter / "training.json", lambda t: t.pop("base_model"))
    assert "training.json: base_model: missing" in refused(capsys, tmp_path, tiny_model, adapter)


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        (
            ["q_proj", "v_proj"],
            "['q_proj', 'v_proj'] do not name 'model.layers.0.self_attn.k_proj'",
        ),
        (["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj"], "['gate_proj'] have no weights"),
        ("q_proj(", "'q_proj(' is no regular expression (missing ), unterminated subpattern"),
        (".*", "['lm_head', 'model', 'model.embed_tokens'] and"),
    ],
    ids=["fewer", "more", "no-pattern", "pattern-of-all"],
)
def test_adapter_whose_target_modules_are_not_its_weights_is_refused(
    sft_adapter, tiny_model, tmp_path, capsys, targets, message
):
    adapter = adapter_copy(sft_adapter, tmp_path)
    edit_json(adapter / "adapter_config.json", lambda c: c.update(target_modules=targets))
    err = refused(capsys, tmp_path, tiny_model, adapter)
    assert f"adapter_config.json: target_modules: {message}" in err


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        ({"peft_type": "IA3"}, "adapter_config.json: peft_type: 'IA3', not 'LORA'"),
        ({"use_dora": True}, "adapter_config.json: use_dora: True, not False"),
        ({"modules_to_save": ["lm_head"]}, "modules_to_save: ['lm_head'], not None"),
        ({"r": 4}, "k_proj.lora_A.weight: shape [8, 128] is not of rank r = 4"),
        ("lora_B", "adapter_model.safetensors: module 'model.layers.0.self_attn.k_proj' has no"
                   " lora_B weights"),
    ],
    ids=["peft_type", "dora", "modules_to_save", "rank", "lora_B"],
)  # fmt: skip
def test_an_adapter_that_is_no_whole_lora_adapter_is_refused(
    sft_adapter, tiny_model, tmp_path, capsys, spoil, message
):
    """Another PEFT method's config, DoRA, modules saved whole, another rank than the weights',
    or LoRA weights without their B matrices: PEFT would load them with a warning and
    summarise with the base model, untrained or random weights, or fail after loading."""
    from safetensors.torch import save_file

    adapter = adapter_copy(sft_adapter, tmp_path)
    if isinstance(spoil, dict):
        edit_json(adapter / "adapter_config.json", lambda c: c.update(spoil))
    else:
        weights = load_file(adapter / "adapter_model.safetensors")
        kept = {name: w for name, w in weights.items() if ".lora_B" not in name}
        save_file(kept, adapter / "adapter_model.safetensors")
    assert message in refused(capsys, tmp_path, tiny_model, adapter)


@pytest.mark.parametrize(
    ("old", "new", "example"),
    [
        ("q_proj", "query_key_value", "model.layers.0.self_attn.query_key_value"),
        ("model.layers", "transformer.h", "transformer.h.0.self_attn.k_proj"),
    ],
    ids=["one-module", "every-module"],
)
def test_adapter_with_weights_for_modules_the_subject_lacks_is_refused(
    sft_adapter, tiny_model, tmp_path, capsys, old, new, example
):
    from safetensors.torch import save_file

    adapter = adapter_copy(sft_adapter, tmp_path)
    weights = load_file(adapter / "adapter_model.safetensors")
    save_file(
        {name.replace(old, new): w for name, w in weights.items()},
        adapter / "adapter_model.safetensors",
    )
    targets = ["query_key_value", "k_proj", "v_proj", "o_proj"]
    edit_json(adapter / "adapter_config.json", lambda c: c.update(target_modules=targets))
    err = refused(capsys, tmp_path, tiny_model, adapter)
    assert "adapter_model.safetensors: weights for" in err and "model 'tiny' lacks" in err
    assert f"'{example}" in err


def test_sft_data_without_their_ids_stop_training(tiny_model, tmp_path, capsys):
    command = write_inputs(tmp_path, tiny_model)
    write_table("sft_data", sft_table(), tmp_path / "d.parquet")  # no ids in its metadata
    err = fails_with_one_line(
        capsys, *command, "--out", tmp_path / "o/a", "--log", tmp_path / "o/l"
    )
    assert f"{tmp_path / 'd.parquet'}: metadata: no 'ids'" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("resolver", ["snakemake", "dvc"])
def test_finetune_config_error_names_the_users_config(tiny_model, tmp_path, capsys, resolver):
    """Snakemake's and DVC's commands read a resolved config; errors name the user's."""
    from selfreflect.config import load_config, write_resolved_config
    from selfreflect.workflow import params_yaml

    lora = {"target_modules": ["q_proj", "query_key_value"]}
    command = write_inputs(tmp_path, tiny_model, training={**TRAINING, "lora": lora})
    user_config = tmp_path / "c.yaml"
    resolved = tmp_path / "logs/t/config.yaml"
    if resolver == "snakemake":
        write_resolved_config(load_config(user_config), resolved, str(user_config))
    else:
        resolved.parent.mkdir(parents=True)
        resolved.write_text(params_yaml(user_config))
    command[command.index(user_config)] = resolved
    err = fails_with_one_line(
        capsys, *command, "--out", tmp_path / "o/a", "--log", tmp_path / "o/l"
    )
    assert err.startswith(f"error: {user_config}: finetune.training.lora.target_modules: [")
    assert not (tmp_path / "o").exists()


def test_training_into_a_foreign_folder_is_refused(tiny_model, tmp_path, capsys):
    (tmp_path / "o/a").mkdir(parents=True)
    (tmp_path / "o/a/notes.txt").write_text("mine")
    command = write_inputs(tmp_path, tiny_model)
    err = fails_with_one_line(
        capsys, *command, "--out", tmp_path / "o/a", "--log", tmp_path / "o/l"
    )
    assert f"{tmp_path / 'o/a'}: exists and has no .selfreflect-output marker" in err
    assert sorted(p.name for p in (tmp_path / "o").rglob("*")) == ["a", "notes.txt"]
    assert (tmp_path / "o/a/notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    ("out", "log"),
    [("o/a", "o/a"), ("o/a", "o"), ("o", "o/l")],
    ids=["same", "log-holds", "out-holds"],
)
def test_an_adapter_and_its_log_in_one_folder_are_refused_before_training(
    tiny_model, tmp_path, capsys, out, log
):
    """The log's folder swap would delete the adapter written before it (or the other way)."""
    command = write_inputs(tmp_path, tiny_model)
    err = fails_with_one_line(capsys, *command, "--out", tmp_path / out, "--log", tmp_path / log)
    assert "one output folder is or holds the other" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("strategies", "message"),
    [
        (
            ["finetuned_sft-seed1", "finetuned_sft-seed01"],
            "unknown strategy 'finetuned_sft-seed01'",
        ),
        (
            ["finetuned_sft", "finetuned_sft-seed0"],
            "'finetuned_sft' and 'finetuned_sft-seed0' run the same adapter (sft, seed 0)",
        ),
        (["finetuned_dpo-seed4294967296"], "'finetuned_dpo-seed4294967296': seed above 4294967295"),
    ],
    ids=["leading-zero", "alias", "too-large"],
)
def test_finetuned_strategies_naming_one_adapter_twice_or_no_seed_are_refused(
    tiny_model, strategies, message
):
    from selfreflect.errors import ConfigError
    from selfreflect.finetune import check_finetune
    from selfreflect.strategies.registry import check_strategies

    config = finetune_config(tiny_model)
    config["summaries"]["strategies"] = ["greedy", "sample_and_summarize", *strategies]
    with pytest.raises(ConfigError) as raised:
        check_strategies(config)
        check_finetune(config)
    assert message in str(raised.value)


def trained_folders(sft_adapter, tmp_path: Path) -> Path:
    """Copies of a trained run's adapter and log folders (``seed0/adapter``, ``seed0/log``)."""
    shutil.copytree(sft_adapter[0], tmp_path / "seed0/adapter")
    shutil.copytree(sft_adapter[0].parent / "log", tmp_path / "seed0/log")
    return tmp_path / "seed0"


# (seed, --out, --log, the folder refused, its owner): the first is the probe's
OTHER_RUNS_FOLDERS = {
    "seed 1's log over seed 0's adapter": (1, "seed1/adapter", "seed0/adapter", "seed0/adapter"),
    "seed 1's adapter over seed 0's": (1, "seed0/adapter", "seed1/log", "seed0/adapter"),
    "seed 1's log over seed 0's": (1, "seed1/adapter", "seed0/log", "seed0/log"),
    "a log over its own run's adapter": (0, "seed0/other", "seed0/adapter", "seed0/adapter"),
    "an adapter over its own run's log": (0, "seed0/log", "seed0/other", "seed0/log"),
}


@pytest.mark.parametrize("case", OTHER_RUNS_FOLDERS)
def test_training_refuses_another_runs_adapter_or_log_folder(
    sft_adapter, tiny_model, tmp_path, capsys, case
):
    """Both folders used to carry the same marker: seed 1's --log naming seed 0's adapter
    deleted the adapter and wrote a log there (rc 0). The marker names the folder's kind and
    run; a refusal names the folder and whose it is, and touches nothing."""
    seed, out, log, taken = OTHER_RUNS_FOLDERS[case]
    trained_folders(sft_adapter, tmp_path)
    command = [*write_inputs(tmp_path, tiny_model), "--seed", str(seed)]
    before = snapshot(tmp_path)
    err = fails_with_one_line(capsys, *command, "--out", tmp_path / out, "--log", tmp_path / log)
    assert err.startswith(f"error: {tmp_path / taken}: exists and was written by {OWNER} ")
    assert snapshot(tmp_path) == before


def test_a_rerun_of_the_same_training_run_may_replace_its_own_folders(sft_adapter, tmp_path):
    """Including an adapter an older version marked with the bare command name, when its
    record names the run (its marker then names it too); never an older log (it records no
    run), nor another seed's older adapter."""
    from selfreflect.fileio import OWNER_MARKER, folder_owner
    from selfreflect.finetune.train import check_outputs

    folders = trained_folders(sft_adapter, tmp_path)
    adapter, log = folders / "adapter", folders / "log"
    seed = json.loads((adapter / "training.json").read_text())["training"]["seed"]
    check_outputs(adapter, log, "tiny", "sft", seed)
    lines = (adapter / OWNER_MARKER).read_text().splitlines()
    (adapter / OWNER_MARKER).write_text("".join(f"{line}\n" for line in [OWNER, *lines[1:]]))
    edit_json(adapter / "training.json", lambda t: t.update(models={"tiny": {}}))
    with pytest.raises(InputError, match=f"{adapter}: exists and was written by {OWNER};"):
        check_outputs(adapter, log, "tiny", "sft", seed + 1)
    assert folder_owner(adapter) == OWNER
    check_outputs(adapter, log, "tiny", "sft", seed)
    assert folder_owner(adapter) == f"{OWNER} adapter (tiny, sft, seed {seed})"
    assert (adapter / OWNER_MARKER).read_text().splitlines()[1:] == lines[1:]
    shutil.rmtree(adapter)
    (log / OWNER_MARKER).write_text(f"{OWNER}\n")
    with pytest.raises(InputError, match=f"{log}: exists and was written by {OWNER};"):
        check_outputs(adapter, log, "tiny", "sft", seed)


@pytest.mark.parametrize(
    ("judge", "message"),
    [
        (None, "config: finetune.grpo.judge: finetuned_grpo needs a reward judge"),
        ("tiny", "finetune.grpo.judge: 'tiny' is an evaluation judge (judges)"),
    ],
)
def test_grpo_without_a_reward_judge_or_with_an_evaluation_judge_is_refused(
    tiny_model, judge, message
):
    """The adapter is never scored by the judge whose reward it was trained on."""
    from selfreflect.errors import ConfigError
    from selfreflect.finetune import check_finetune

    config = finetune_config(tiny_model, grpo={"judge": judge})
    config["summaries"]["strategies"] = ["greedy", "finetuned_grpo"]
    with pytest.raises(ConfigError, match=re.escape(message)):
        check_finetune(config)
    # under another name, the same weights are the same judge; other weights are another
    config["models"]["reward"] = {**config["models"]["tiny"], "backend": "hf"}
    config["finetune"]["grpo"]["judge"] = "reward"
    named = "finetune.grpo.judge: 'reward' is an evaluation judge (the weights of 'tiny')"
    with pytest.raises(ConfigError, match=re.escape(named)):
        check_finetune(config)
    config["models"]["reward"]["path"] = str(tiny_model.parent / "other-weights")
    check_finetune(config)


def test_a_positive_control_needs_its_teacher_and_enough_adapters_listed(tiny_model):
    """report.plan.control_min_adapters: its rule reads the teacher's row and the adapters that
    learn from it, so a config that scores too few of them is refused before the run."""
    from selfreflect.errors import ConfigError
    from selfreflect.finetune import check_finetune

    config = finetune_config(tiny_model, teacher="sample_and_summarize")
    config["report"]["plan"]["control_min_adapters"] = 1
    check_finetune(config)
    config["report"]["plan"]["control_min_adapters"] = 2
    with pytest.raises(ConfigError, match="2 adapters needed, but 1 learn from 'sample_and"):
        check_finetune(config)
    config["summaries"]["strategies"] = ["greedy", "finetuned_sft", "finetuned_sft-seed1"]
    message = "control_min_adapters: the control's teacher 'sample_and_summarize' is not listed"
    with pytest.raises(ConfigError, match=message):
        check_finetune(config)


def test_a_finetuning_record_with_per_question_scores_recomputes_its_main_table(monkeypatch):
    """``docs finetuning --check`` builds each record's main table again from the per-question
    scores kept beside it: today's records give their tables, and one changed score shows."""
    from selfreflect.docs import finetuning as render

    monkeypatch.chdir(REPO)
    records = render.read_records()
    kept = [run for run in records if render.rows_path(run).is_file()]
    assert "finetune-control" in kept
    for run in kept:
        rows = pd.read_parquet(render.rows_path(run))
        assert render.recompute(records[run], rows) == []
        changed = rows.copy()
        first = changed.index[changed["strategy"] == "greedy"][0]
        changed.loc[first, "score"] += 0.05
        lines = render.recompute(records[run], changed)
        mean = f"{render.record_path(run)}: mean: recorded "
        assert any(line.startswith(mean) and line.endswith(", greedy)") for line in lines)
