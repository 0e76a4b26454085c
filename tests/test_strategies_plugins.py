"""User plug-ins and strategy errors: unknown names, plug-ins that raise, the CLI's one line.

The functions at the top are the plug-ins, referenced as ``tests.test_strategies_plugins:NAME``.
"""

import inspect
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_table, write_table
from selfreflect.chat import question_chat
from selfreflect.config import read_config_file, validate_config
from selfreflect.errors import ConfigError
from selfreflect.strategies import Context, QuestionFailed, StrategyError
from selfreflect.strategies.context import Models
from selfreflect.strategies.registry import check_strategies
from selfreflect.strategies.registry import resolve as resolve_strategy
from selfreflect.strategies.runner import summarize
from tests.conftest import REPO
from tests.test_strategies import QUESTIONS, Recording, questions_table, run, summaries_config

MODULE = "tests.test_strategies_plugins"
SEEN: list[dict] = []


def echo_plugin(ctx: Context) -> str:
    """Greedy answer plus the fresh answers, so the test can check both handles."""
    answer = ctx.chat(question_chat(ctx.question))
    return " | ".join([answer, *ctx.fresh_answers()])


def fresh_answers_only(ctx: Context) -> str:
    return " | ".join(ctx.fresh_answers())


def recording_plugin(ctx: Context) -> str:
    SEEN.append({"context": dict(vars(ctx)), "fresh": ctx.fresh_answers()})
    return "ok"


def boom(ctx: Context) -> str:
    raise ValueError("no summary for you")


def blank(ctx: Context) -> str:
    return "" if "Hamlet" in ctx.question else " "


asked: list[str] = []  # the questions interrupted_at_second asked, in order
interrupt = [False]


def interrupted_at_second(ctx: Context) -> str:
    """The question back; while interrupt[0] holds, the job dies (KeyboardInterrupt) at the
    second question it asks."""
    asked.append(ctx.question)
    if interrupt[0] and len(asked) == 2:
        raise KeyboardInterrupt
    return f"summary of {ctx.question}"


def skip_hamlet(ctx: Context) -> str:
    if "Hamlet" in ctx.question:
        raise QuestionFailed("not this one")
    return "fine"


def not_a_string(ctx: Context) -> int:
    return 42


def plugin_config(**plugins: str) -> dict:
    return summaries_config(plugins={k: f"{MODULE}:{v}" for k, v in plugins.items()})


@pytest.mark.vllm
def test_plugin_gets_question_generator_and_fresh_answers(vllm_generator):
    summarizer, subject = Recording(vllm_generator), Recording(vllm_generator)
    config = plugin_config(echo=echo_plugin.__name__)
    table = run("echo", summarizer, config=config, subject=subject)
    assert table["error"].isna().all()
    assert len(summarizer.calls) == len(subject.calls) == len(QUESTIONS)  # one call per question
    for row, (_, _, answer), (_, _, fresh) in zip(
        table.itertuples(), summarizer.calls, subject.calls, strict=True
    ):
        assert row.summary == " | ".join([answer[0].texts[0], *fresh[0].texts])
        assert row.prompt_tokens == answer[0].prompt_tokens + fresh[0].prompt_tokens


@pytest.mark.vllm
def test_plugin_never_sees_test_answers(vllm_generator):
    """Even handed the answers table, a strategy only gets the question text."""
    answers = questions_table().assign(test_answers=[["HELD-OUT-CANARY"]] * len(QUESTIONS))
    SEEN.clear()
    config = plugin_config(spy=recording_plugin.__name__)
    models = Models(lambda: vllm_generator, lambda: vllm_generator)
    summarize("spy", answers, models, config, "tiny")
    assert [seen["context"]["question"] for seen in SEEN] == QUESTIONS
    assert "CANARY" not in repr(SEEN)
    assert set(SEEN[0]["context"]) == {"question", "_batch", "_row"}
    batch = SEEN[0]["context"]["_batch"]
    assert list(batch.questions) == QUESTIONS and "CANARY" not in repr(vars(batch))


def test_plugin_that_raises_names_the_strategy():
    with pytest.raises(StrategyError) as err:
        run("bad", None, config=plugin_config(bad=boom.__name__))
    message = str(err.value)
    assert message.startswith(f"strategy 'bad': plug-in {MODULE}:boom raised ValueError")
    assert "no summary for you" in message and "\n" not in message


def test_plugin_can_fail_one_question():
    table = run("picky", None, config=plugin_config(picky=skip_hamlet.__name__))
    assert table["summary"].tolist() == ["fine", None, "fine"]
    assert table["error"].tolist() == [None, "not this one", None]


def test_plugin_must_return_a_string():
    with pytest.raises(StrategyError, match=r"strategy 'num': .* returned int, not a summary"):
        run("num", None, config=plugin_config(num=not_a_string.__name__))


def test_plugin_that_cannot_be_imported(tmp_path, monkeypatch):
    config = summaries_config(plugins={"gone": "no_such_module.sub:fn"})
    with pytest.raises(StrategyError, match=r"'gone': .* 'no_such_module.sub' is no \.py file"):
        run("gone", None, config=config)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "needs.py").write_text("import no_such_dependency_xyz\n\ndef fn(ctx): ...\n")
    config = summaries_config(plugins={"needs": "needs:fn"})
    with pytest.raises(StrategyError, match="strategy 'needs': cannot load plug-in needs:fn: Mod"):
        run("needs", None, config=config)


def test_checking_a_plugin_reads_its_file_and_runs_none_of_its_code(tmp_path, monkeypatch, capfd):
    """The config's check (``snakemake -n`` too) imports no plug-in: a module of the project
    is parsed for its function; a module of Python's or an installed package's is refused
    unread, so naming one runs nothing of it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "vote.py").write_text(
        "open('imported', 'w').close()\nlimit = 3\n\nif True:\n    def vote(ctx):\n"
        "        return 'a'\n"
    )
    (tmp_path / "mine" / "__init__.py").write_text("open('package-imported', 'w').close()\n")
    check_strategies(summaries_config(strategies=["v"], plugins={"v": "mine.vote:vote"}))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine"]
    assert "mine.vote" not in sys.modules
    for target, fragment in [
        ("this:s", "module 'this' is no .py file of the project"),
        ("antigravity.x:f", "module 'antigravity.x' is no .py file"),
        ("yaml:safe_load", "module 'yaml' is no .py file"),
        ("mine.vote:count", "mine/vote.py defines no 'count' at its top level"),
        ("mine.vote:limit", "mine/vote.py binds 'limit' to a value, not a function"),
    ]:
        config = summaries_config(strategies=["v"], plugins={"v": target})
        with pytest.raises(ConfigError, match=rf"^c.yaml: summaries\.plugins\.v: .*{fragment}"):
            check_strategies(config, "c.yaml")
    assert "this" not in sys.modules and "antigravity" not in sys.modules
    assert capfd.readouterr() == ("", "")
    (tmp_path / "mine" / "vote.py").write_text("def vote(ctx):\n    return 'a'\n)\n")
    config = summaries_config(strategies=["v"], plugins={"v": "mine.vote:vote"})
    with pytest.raises(ConfigError, match=r"mine/vote\.py:3: unmatched '\)'$"):
        check_strategies(config, "c.yaml")


def test_unknown_strategy():
    known = r"\(known: greedy, basic, cot, .*, finetuned_sft, finetuned_dpo, finetuned_grpo\)"
    with pytest.raises(StrategyError, match=rf"unknown strategy 'nope' {known}"):
        resolve_strategy("nope", {})
    config = summaries_config(strategies=["greedy", "nope"])
    with pytest.raises(
        ConfigError, match=r"^c.yaml: summaries.strategies: unknown strategy 'nope'"
    ):
        check_strategies(config, "c.yaml")
    config = summaries_config(strategies=["basic"], plugins={"basic": "m:f"})
    with pytest.raises(ConfigError, match=r"summaries\.plugins: 'basic' is a built-in strategy"):
        check_strategies(config, "c.yaml")
    config = summaries_config(strategies=["greedy", "basic"])
    config["report"]["plan"]["references"] = ["cot", "nosuch"]  # cot: known, not run: left out
    with pytest.raises(
        ConfigError, match=r"^c.yaml: report.plan.references: unknown strategy 'nosuch'"
    ):
        check_strategies(config, "c.yaml")
    for versus in [
        {"strategy": "nosuch", "others": ["cot"]},
        {"strategy": "cot", "others": ["no"]},
    ]:
        config["report"]["plan"] = {"references": [], "versus": versus}
        key = "strategy" if versus["strategy"] == "nosuch" else "others"
        with pytest.raises(ConfigError, match=rf"^c.yaml: report.plan.versus.{key}: unknown"):
            check_strategies(config, "c.yaml")
    mine = {"mine": f"{MODULE}:echo_plugin"}
    check_strategies(summaries_config(strategies=["mine", "cot"], plugins=mine))
    config = summaries_config(strategies=["mine"], plugins={"mine": "m:f"})
    with pytest.raises(ConfigError, match=r"^c.yaml: summaries\.plugins\.mine: .*'m' is no \.py"):
        check_strategies(config, "c.yaml")  # at config time, before any job runs
    for key, finetune in [
        ("teacher", {"teacher": "nosuch"}),
        ("candidates", {"candidates": ["nosuch"]}),
    ]:
        config = summaries_config(strategies=["greedy"])  # no finetuned strategy: still checked
        config["finetune"].update(finetune)
        with pytest.raises(ConfigError, match=rf"^c.yaml: finetune.{key}: unknown strategy"):
            check_strategies(config, "c.yaml")


@pytest.mark.parametrize("target", ["module only", "myplug/hedge.py:top_two"])
def test_plugin_target_must_name_a_function_of_a_module(target):
    """Said in words, not as the schema's regular expression."""
    with pytest.raises(ConfigError) as err:
        validate_config({**summaries_config(), "summaries": {"plugins": {"x": target}}})
    assert f'summaries.plugins.x: {target!r} is not "module.path:function"' in str(err.value)


@pytest.fixture
def cli_project(tmp_path, tiny_model):
    """A config (tiny model on hf), a questions file and an existing summaries file."""
    config = {
        "models": {"tiny": {"path": str(tiny_model), "backend": "hf", "dtype": "float32"}},
        "subjects": ["tiny"],
        "judges": ["tiny"],
        "datasets": {"smoke": {"source": "local", "path": "x.jsonl"}},
        "summaries": {
            "max_tokens": 4,
            "plugins": {
                "bad": f"{MODULE}:boom",
                "blank": f"{MODULE}:blank",
                "picky": f"{MODULE}:skip_hamlet",
                "flaky": f"{MODULE}:interrupted_at_second",
            },
        },
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    write_table(
        "questions",
        questions_table().assign(dataset="smoke", source_index=0, choices=None, gold=None),
        tmp_path / "q.parquet",
    )
    return tmp_path


def summarize_cli(project, strategy, out):
    args = ["selfreflect", "summarize", "--config", str(project / "config.yaml"), "--subject"]
    args += ["tiny", "--strategy", strategy, "--questions", str(project / "q.parquet")]
    return subprocess.run([*args, "--out", str(out)], capture_output=True, text=True, cwd=REPO)


def test_a_killed_summaries_job_resumes_from_its_checkpoints(cli_project, monkeypatch):
    """A summaries job killed at its second question (a checkpoint a question here) asks
    only the questions after the first when rerun, and writes what an uninterrupted job does;
    its checkpoints are gone once the table is written."""
    from selfreflect.cli import main
    from selfreflect.cli import summarize as command

    monkeypatch.setattr(command, "CHECKPOINT_EVERY", 1)
    monkeypatch.chdir(REPO)  # where the plug-in's module is the project's

    def summaries(out):
        args = ["selfreflect", "summarize", "--config", str(cli_project / "config.yaml")]
        args += ["--subject", "tiny", "--strategy", "flaky"]
        args += ["--questions", str(cli_project / "q.parquet"), "--out", str(out)]
        monkeypatch.setattr(sys, "argv", args)
        asked.clear()
        try:
            main()
        except SystemExit as ended:
            return ended.code
        return 0

    out, fresh = cli_project / "s" / "flaky.parquet", cli_project / "fresh.parquet"
    interrupt[0] = True
    assert summaries(out) == 130  # as the CLI ends on Ctrl-C
    assert len(list(out.parent.glob(".flaky.parquet.checkpoints/*/*.parquet"))) == 1
    interrupt[0] = False
    assert summaries(out) == 0
    assert asked == list(QUESTIONS[1:])
    assert summaries(fresh) == 0
    assert asked == list(QUESTIONS)
    written, expected = read_table("summaries", out), read_table("summaries", fresh)
    pd.testing.assert_frame_equal(written.drop(columns="seconds"), expected.drop(columns="seconds"))
    assert not (out.parent / ".flaky.parquet.checkpoints").exists()


def test_cli_errors_name_the_strategy_and_keep_other_summaries(cli_project):
    kept = cli_project / "summaries" / "picky.parquet"
    result = summarize_cli(cli_project, "picky", kept)
    assert result.returncode == 0, result.stderr
    before = kept.read_bytes()
    assert read_table("summaries", kept)["error"].tolist() == [None, "not this one", None]

    for strategy, message in [
        ("nope", "error: unknown strategy 'nope' (known: greedy, basic, cot,"),
        (
            "bad",
            f"error: {cli_project / 'config.yaml'}: summaries.plugins.bad:"
            f" strategy 'bad': plug-in {MODULE}:boom raised ValueError",
        ),
    ]:
        out = cli_project / "summaries" / f"{strategy}.parquet"
        result = summarize_cli(cli_project, strategy, out)
        assert result.returncode == 1
        assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
        assert not out.exists()
    assert kept.read_bytes() == before
    assert sorted(p.name for p in kept.parent.iterdir()) == ["picky.parquet"]


def test_a_plugins_error_says_where_it_was_raised(cli_project):
    """One line, with the file and line of the ``raise`` (the probe had no way to find it)."""
    result = summarize_cli(cli_project, "bad", cli_project / "bad.parquet")
    line = inspect.getsourcelines(boom)[1] + 1
    where = f"at tests/test_strategies_plugins.py:{line} (question: "
    assert f"raised ValueError: no summary for you {where}" in result.stderr


def test_blank_summaries_are_scored_as_given_with_a_warning(cli_project):
    """A plug-in's empty summary is a summary (it says nothing), not a failure; the job's log
    says how many there are, as `selfreflect score` does, and so does its line on stdout."""
    out = cli_project / "blank.parquet"
    result = summarize_cli(cli_project, "blank", out)
    assert result.returncode == 0, result.stderr
    assert "warning: strategy 'blank': 3 blank summaries, scored as given\n" in result.stderr
    # the line the terminal shows under Snakemake (a job's stderr goes to its log)
    assert "blank: 3 summaries (0 failed, 3 blank) written to" in result.stdout
    assert read_table("summaries", out)["error"].isna().all()


def test_a_plugins_error_names_the_users_config_not_the_resolved_one(cli_project):
    """Under Snakemake every command reads the resolved config (``logs/<run>/config.yaml``);
    a failing plug-in is blamed on the file the user wrote, which that file's header names."""
    from selfreflect.config import load_config, write_resolved_config

    resolved = cli_project / "logs" / "config.yaml"
    write_resolved_config(load_config(cli_project / "config.yaml"), resolved, "config/mine.yaml")
    args = ["selfreflect", "summarize", "--config", str(resolved), "--subject", "tiny"]
    args += ["--strategy", "bad", "--questions", str(cli_project / "q.parquet")]
    out = ["--out", str(cli_project / "b.parquet")]
    result = subprocess.run([*args, *out], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 1
    assert result.stderr.startswith("error: config/mine.yaml: summaries.plugins.bad: "), (
        result.stderr
    )


@pytest.mark.workflow
def test_a_plugins_modules_are_code_deps_of_its_strategys_stages_only(tmp_path):
    """In the DAG (dvc.yaml, from the Snakemake jobs' inputs), each plug-in strategy's
    summaries depend on its own modules, a local module it imports included; no other
    strategy's summaries do, and every stage lists each file once."""
    from tests.workflow_utils import copy_project, dvc_yaml_stages, run

    project = copy_project(tmp_path / "p")
    (project / "examples" / "vote.py").write_text(
        "from examples.vote_words import PHRASE\n\ndef vote(ctx):\n    return PHRASE\n"
    )
    (project / "examples" / "vote_words.py").write_text("PHRASE = 'most likely this'\n")
    config = read_config_file(project / "config/smoke.yaml")
    config["summaries"]["plugins"]["vote"] = "examples.vote:vote"
    config["summaries"]["strategies"].append("vote")
    (project / "config/smoke.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    run(["selfreflect", "dvc-yaml", "--config", "config/smoke.yaml", "--project", "."], project)
    stages = dvc_yaml_stages(project)
    plugin_files = {"examples/plugins.py", "examples/vote.py", "examples/vote_words.py"}
    owned = {}
    for name, stage in stages.items():
        assert len(stage["deps"]) == len(set(stage["deps"])), name
        if files := plugin_files & set(stage["deps"]):
            owned[name] = files
    assert owned == {
        "summarize-smoke-tiny-majority_vote": {"examples/plugins.py"},
        "summarize-smoke-tiny-vote": {"examples/vote.py", "examples/vote_words.py"},
    }
