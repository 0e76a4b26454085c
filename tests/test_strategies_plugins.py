"""User plug-ins and strategy errors: unknown names, plug-ins that raise, the CLI's one line.

The functions at the top are the plug-ins, referenced as ``tests.test_strategies_plugins:NAME``.
"""

import contextlib
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


def chat_then_fresh(ctx: Context) -> str:
    """Goes on after its own chat failed: the question stays failed, its fresh answers unasked."""
    with contextlib.suppress(QuestionFailed):
        ctx.chat([{"role": "user", "content": "why " * 300}])
    return " | ".join(ctx.fresh_answers())


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


def test_a_seeded_finetuned_strategy_is_its_methods_built_in():
    """``finetuned_<method>-seed<N>`` runs the built-in of its method: resolved as it, and no
    plug-in may take the name; an unknown name's message lists the plug-ins too."""
    assert resolve_strategy("finetuned_sft-seed2", {}) is resolve_strategy("finetuned_sft", {})
    mine = {"finetuned_dpo-seed3": f"{MODULE}:echo_plugin"}
    config = summaries_config(strategies=["basic"], plugins=mine)
    with pytest.raises(ConfigError, match=r"'finetuned_dpo-seed3' is a built-in strategy"):
        check_strategies(config, "c.yaml")
    with pytest.raises(StrategyError, match=r"\(known: greedy, .*, finetuned_grpo, mine\)$"):
        resolve_strategy("nope", {"mine": f"{MODULE}:echo_plugin"})


def test_the_packages_own_modules_are_no_plugins(monkeypatch):
    """Even run from the checkout with its src/ on the path, a module of the package is
    refused as a plug-in: a plug-in is the project's code."""
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys, "path", [str(REPO / "src"), *sys.path])
    plugins = {"mine": "selfreflect.strategies.paper:greedy"}
    config = summaries_config(strategies=["mine"], plugins=plugins)
    with pytest.raises(ConfigError, match=r"'selfreflect.strategies.paper' is no \.py file"):
        check_strategies(config, "c.yaml")


def test_a_package_is_read_before_a_module_of_its_name(tmp_path, monkeypatch):
    """As Python imports it: ``mine/__init__.py``, not ``mine.py`` beside it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "__init__.py").write_text("def vote(ctx):\n    return 'a'\n")
    (tmp_path / "mine.py").write_text("limit = 3\n")
    check_strategies(summaries_config(strategies=["v"], plugins={"v": "mine:vote"}))


def test_the_interpreters_environment_inside_the_project_holds_no_plugins(tmp_path, monkeypatch):
    """A module on the path in the running environment, where it lies inside the working
    tree (not only its site-packages), is installed code, refused unread."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "env/lib/python3.11"
    folder.mkdir(parents=True)
    (folder / "vote.py").write_text("def vote(ctx):\n    return 'a'\n")
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "env"))
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path])
    config = summaries_config(strategies=["v"], plugins={"v": "vote:vote"})
    with pytest.raises(ConfigError, match=r"module 'vote' is no \.py file of the project"):
        check_strategies(config, "c.yaml")


BINDINGS = """\
vote = None  # replaced below
try:
    import json as parse
except ImportError:
    pass
if False:
    pass
else:
    def pick(ctx):
        return "a"
try:
    import no_such_fast_module
except ImportError:
    def score(ctx):
        return "a"
first, second = (str.upper, str.lower)
limit: int = 3


def vote(ctx):
    return "a"
"""


def test_a_plugins_function_is_found_however_its_module_binds_it(tmp_path, monkeypatch):
    """Read, not run: a name bound to a function in an ``else`` or ``except`` block, imported
    under another name, unpacked, or bound to a value first and a function after, is a function;
    one annotated and bound to a literal is a value."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "mine.py").write_text(BINDINGS)
    for function in ["vote", "parse", "pick", "score", "first"]:
        plugins = {"v": f"mine:{function}"}
        check_strategies(summaries_config(strategies=["v"], plugins=plugins))
    config = summaries_config(strategies=["v"], plugins={"v": "mine:limit"})
    with pytest.raises(ConfigError, match=r"mine\.py binds 'limit' to a value, not a function"):
        check_strategies(config, "c.yaml")


def test_a_plugin_must_be_the_projects_module_and_a_function_when_imported(tmp_path, monkeypatch):
    """A module of the plug-in's name imported first from elsewhere is refused (its code is
    not the file checked), and so is a name the import binds to no function."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    for project in ("one", "two"):
        (tmp_path / project).mkdir()
        (tmp_path / project / "dup_plugin.py").write_text(
            "def vote(ctx):\n    return 'a'\n\n\nlimit = int('3')\n"
        )
    try:
        monkeypatch.chdir(tmp_path / "one")
        resolve_strategy("v", {"v": "dup_plugin:vote"})
        with pytest.raises(StrategyError, match=r"^strategy 'v': plug-in dup_plugin:limit is not"):
            resolve_strategy("v", {"v": "dup_plugin:limit"})
        monkeypatch.chdir(tmp_path / "two")
        with pytest.raises(StrategyError, match=r"the module imported is .*one/dup_plugin\.py,"):
            resolve_strategy("v", {"v": "dup_plugin:vote"})
    finally:
        sys.modules.pop("dup_plugin", None)


def short_context_generator(tiny_model):
    """The tiny model through transformers with a 128-token context: a long question fails."""
    from selfreflect.backends.hf_engine import HfGenerator
    from tests.conftest import tiny_model_spec

    spec = {**tiny_model_spec(tiny_model, backend="hf"), "fidelity": "corrected"}
    return HfGenerator({**spec, "max_model_len": 128})


def test_a_batch_samples_meters_and_drops_failed_rows_on_hf(tiny_model):
    """On the tiny model (transformers, no vLLM): a question too long for the model fails at
    twostep_cot's first step and is not asked again (a batch of it alone ends without a
    second call); each step samples with the settings and each question's own seed; a row's
    tokens add up over its calls, and the call's seconds are shared among its rows."""
    import time

    from selfreflect.strategies.runner import fresh_seed

    recording = Recording(short_context_generator(tiny_model))
    long = "Question: " + "why " * 200 + "?"
    questions = [QUESTIONS[0], long, QUESTIONS[1]]
    start = time.perf_counter()
    table = run("twostep_cot", recording, questions=questions)
    elapsed = time.perf_counter() - start
    (first, _, made), (second, samplings, more) = recording.calls
    assert len(first) == 3 and len(second) == 2 and made[1].error is not None
    assert table["summary"][1] is None and "max_model_len is 128" in table["error"][1]
    seed = summaries_config()["seed"]
    seeds = [fresh_seed(seed, qid) for qid in questions_table([questions[0], questions[2]])["id"]]
    assert [(s.seed, s.max_tokens, s.stop) for s in samplings] == [
        (one, 12, recording.format.summary_stop) for one in seeds
    ]
    assert table["prompt_tokens"][0] == made[0].prompt_tokens + more[0].prompt_tokens
    assert table["completion_tokens"][2] == made[2].completion_tokens + more[1].completion_tokens
    assert 0 < table["seconds"].sum() <= elapsed
    recording.calls.clear()
    table = run("twostep_cot", recording, questions=[long])
    assert len(recording.calls) == 1 and table["summary"].isna().all()


def test_fresh_answers_sample_with_their_settings_and_each_questions_seed(hf_generator):
    """A question's fresh answers: ``num_fresh_answers`` at ``fresh_temperature`` and
    ``fresh_max_tokens``, stopping where the subject's summaries stop, with its own seed."""
    from selfreflect.strategies.runner import fresh_seed

    subject = Recording(hf_generator)
    plugins = {"fresh": f"{MODULE}:fresh_answers_only"}
    config = summaries_config(plugins=plugins, fresh_temperature=0.7)
    run("fresh", None, config=config, questions=QUESTIONS[:2], subject=subject)
    samplings = [sampling for _, call, _ in subject.calls for sampling in call]
    seeds = [fresh_seed(config["seed"], qid) for qid in questions_table(QUESTIONS[:2])["id"]]
    stop = hf_generator.format.summary_stop
    assert [(s.n, s.temperature, s.max_tokens, s.stop, s.seed) for s in samplings] == [
        (4, 0.7, 8, stop, seed) for seed in seeds
    ]


def test_a_question_failed_in_a_plugins_call_draws_no_fresh_answers(tiny_model):
    """A plug-in that goes on after its chat failed gets no fresh answers for the question:
    it stays failed, for the chat's reason."""
    generator = Recording(short_context_generator(tiny_model))
    table = run("goes_on", generator, config=plugin_config(goes_on=chat_then_fresh.__name__))
    assert table["summary"].isna().all() and len(generator.calls) == 3  # one chat a question
    assert table["error"].str.contains("max_model_len is 128").all()


def test_a_thinking_summariser_samples_in_thinking_mode_on_hf(hf_generator):
    """With ``thinking`` on, the summariser is asked in thinking mode (no empty reasoning
    block in the prompt) and samples with ``summaries.thinking``."""
    from tests.test_strategies_prompts import GOLDEN

    recording = Recording(hf_generator)
    run("greedy", recording, questions=[QUESTIONS[0]], thinking=True)
    [(prompts, samplings, _)] = recording.calls
    assert prompts == [GOLDEN["greedy"]]
    assert [(s.temperature, s.top_p, s.top_k) for s in samplings] == [(0.6, 0.95, 20)]
