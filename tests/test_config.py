"""Config loading: defaults filled, one-line errors naming the file and key."""

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from selfreflect import paths
from selfreflect.config import load_config, read_config_file, validate_config
from selfreflect.errors import ConfigError
from selfreflect.rule_inputs import checked_config, typed_overrides
from tests.conftest import SMOLLM2_FILE, SMOLLM2_PACKAGE

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_shipped_configs_are_valid(name):
    config = load_config(REPO / "config" / name)
    assert config["subjects"] and config["judges"]
    assert config["answers"]["num_answers"] >= 1


def test_paper_config_is_the_papers_experiment():
    config = load_config(REPO / "config" / "config.yaml")
    subject = config["models"][config["subjects"][0]]
    assert subject["path"] == "Qwen/Qwen2.5-7B-Instruct"
    assert config["judges"] == config["subjects"]
    assert config["datasets"]["natural_questions"]["source"] == "natural_questions"
    assert config["questions"]["num_questions"] == 1000
    assert config["answers"]["num_answers"] == 50
    assert config["seed"] == 1


def _write(tmp_path, change):
    config = read_config_file(REPO / "config" / "smoke.yaml")
    change(config)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def settings_error(path: Path) -> str:
    """The one line the workflow's config check (checked_config) exits with on ``path``."""
    with pytest.raises(SystemExit) as err:
        checked_config([path], {}, str(path))
    return str(err.value)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: c["answers"].update(num_answers=0), "answers.num_answers"),
        (lambda c: c.update(bogus=1), "'bogus' was unexpected"),
        (lambda c: c["models"]["tiny"].update(dtype="f8"), "models.tiny.dtype"),
        (lambda c: c.update(subjects=["nope"]), "subjects: unknown model 'nope'"),
        (lambda c: c["datasets"]["smoke"].update(source="nq"), "datasets.smoke.source"),
        (
            lambda c: c["report"].update(agreement_backends=["hf", "gpu"]),
            "report.agreement_backends.1: 'gpu' is not one of ['hf', 'vllm', 'reference']",
        ),
        (
            lambda c: c["report"].update(agreement_backends=["reference", "reference"]),
            "report.agreement_backends: ['reference', 'reference'] has non-unique elements",
        ),
        (lambda c: c["report"].update(agreement_questions=0), "report.agreement_questions"),
        (
            lambda c: c["report"].update(baseline="nosuch"),
            "report.baseline: 'nosuch' is not a strategy of this run (summaries.strategies: "
            "greedy, basic, sample_and_summarize,",
        ),
        (
            lambda c: c["summaries"].update(strategies=["basic", "cot"]),
            "report.baseline: 'greedy' is not a strategy of this run",
        ),
        (
            lambda c: c["report"].update(plan={"references": ["greedy"]}),
            "report.plan.references: 'greedy' is the baseline",
        ),
        (
            lambda c: c["report"].update(
                plan={"versus": {"strategy": "basic", "others": ["cot", "basic"]}}
            ),
            "report.plan.versus.others: 'basic' is the strategy they are compared with",
        ),
        (
            lambda c: c["report"].update(plan={"versus": {"strategy": "basic"}}),
            "report.plan.versus: 'others' is a required property",
        ),
        (
            lambda c: c["report"].update(plan={"primary_judge": "other"}),
            "report.plan.primary_judge: 'other' is not one of the judges (tiny)",
        ),
        (lambda c: c["scoring"].update(token_budget=0), "scoring.token_budget"),
        (lambda c: c.update(seed=2**70), "seed: an integer of 71 bits (at most 63)"),
        # named, though no finetuned strategy is listed: a name of nothing is a typo
        (lambda c: c.update(finetune={"judge": "nosuch"}), "finetune.judge: unknown model"),
        (
            lambda c: c.update(finetune={"grpo": {"judge": "nosuch"}}),
            "finetune.grpo.judge: unknown model",
        ),
        (lambda c: c.update(finetune={"dataset": "nosuch"}), "finetune.dataset: unknown dataset"),
    ],
)
def test_invalid_config_names_file_and_key(tmp_path, change, expected):
    path = _write(tmp_path, change)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert str(path) in message and expected in message
    assert "\n" not in message


def test_missing_and_malformed_config(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: [unclosed\n")
    with pytest.raises(ConfigError, match="malformed YAML"):
        load_config(bad)


def write_configs(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_include_merges_files_in_order_under_the_including_one(tmp_path):
    """Mappings merge key by key, lists and other values are replaced: a later include over an
    earlier one, the including file over both; an include is relative to its own file."""
    write_configs(
        tmp_path,
        {
            "base/a.yaml": "include: b.yaml\nseed: 1\nanswers: {num_answers: 4, top_p: 0.9}\n",
            "base/b.yaml": "run: b\nsubjects: [x, y]\nanswers: {max_tokens: 8}\n",
            "c.yaml": "answers: {num_answers: 6}\nsubjects: [z]\n",
            "run.yaml": "include: [base/a.yaml, c.yaml]\nrun: mine\nanswers: {top_p: 0.5}\n",
        },
    )
    assert read_config_file(tmp_path / "run.yaml") == {
        "run": "mine",
        "subjects": ["z"],
        "seed": 1,
        "answers": {"max_tokens": 8, "num_answers": 6, "top_p": 0.5},
    }


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"a.yaml": "include: gone.yaml\n"}, "a.yaml: include: gone.yaml: config file not found"),
        (
            {"a.yaml": "include: a.yaml\n"},
            "a.yaml: include: a.yaml: a cycle (A/a.yaml -> A/a.yaml)",
        ),
        (
            {"a.yaml": "include: [b.yaml]\n", "b.yaml": "include: a.yaml\n"},
            "b.yaml: include: a.yaml: a cycle (A/a.yaml -> A/b.yaml -> A/a.yaml)",
        ),
        ({"a.yaml": "include: {b: 1}\n"}, "a.yaml: include: expected a file name or a list"),
        (
            {"a.yaml": "include: b.yaml\n", "b.yaml": "[1]\n"},
            "b.yaml: expected a mapping of config keys at the top level (included by A/a.yaml)",
        ),
        (
            {"a.yaml": "include: b.yaml\n", "b.yaml": "seed: [1\n"},
            "(included by A/a.yaml)",
        ),
        (
            {"a.yaml": "include: b.yaml\n", "b.yaml": "include: c.yaml\n"},
            "b.yaml: include: c.yaml: config file not found (A/c.yaml) (included by A/a.yaml)",
        ),
    ],
    ids=["missing", "itself", "cycle", "not-a-name", "not-a-mapping", "malformed", "nested"],
)
def test_a_bad_include_is_one_line_naming_the_file_and_key(tmp_path, monkeypatch, files, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "A").mkdir()
    write_configs(tmp_path / "A", files)
    with pytest.raises(ConfigError) as err:
        load_config("A/a.yaml")
    assert str(err.value).startswith("A/") and expected in str(err.value), err.value
    assert "\n" not in str(err.value)


def test_an_include_error_names_both_files_as_absolute_where_the_config_path_is(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "A").mkdir()
    write_configs(tmp_path / "A", {"a.yaml": "include: b.yaml\n", "b.yaml": "seed: [1\n"})
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "A" / "a.yaml")
    assert str(err.value).startswith(f"{tmp_path}/A/b.yaml: malformed YAML"), err.value
    assert str(err.value).endswith(f"(included by {tmp_path}/A/a.yaml)"), err.value


SHIPPED = sorted(path.stem for path in (REPO / "config").glob("*.yaml"))


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_resolve_as_before_they_shared_blocks(name):
    """Each shipped config, its includes resolved, is the config its file held before the
    shared blocks moved out (tests/data/configs_before_include.json), key order included."""
    before = json.loads((REPO / "tests" / "data" / "configs_before_include.json").read_text())
    assert set(before) == set(SHIPPED)
    resolved = load_config(REPO / "config" / f"{name}.yaml")
    assert json.dumps(resolved) == json.dumps(validate_config(before[name]))


@pytest.mark.workflow
def test_snakemake_and_dvc_read_a_config_through_its_includes(tmp_path):
    """Snakemake resolves a --configfile's includes (--config overrides still last; an include
    error is one line); params.yaml is the resolved config, stale when an included file changes."""
    from tests.workflow_utils import copy_project, run

    project = copy_project(tmp_path / "p")  # dvc.yaml and params.yaml for config/smoke.yaml
    params = yaml.safe_load((project / "params.yaml").read_text())
    assert params == load_config(project / "config" / "smoke.yaml") and "include" not in params
    (project / "config" / "exp.yaml").write_text(
        "include: smoke.yaml\nrun: exp\nsummaries: {strategies: [greedy, basic]}\n"
    )
    args = ["snakemake", "-n", "--cores", "1", "--configfile", "config/exp.yaml"]
    plan = run([*args, "--config", "run=other"], project).stdout
    summaries = set(re.findall(r"results/other/(\w+)/tiny/summaries/(\w+)\.parquet", plan))
    assert summaries == {("smoke", "greedy"), ("smoke", "basic")}
    assert "results/other/smoke_mmlu/questions.parquet" in plan and "results/exp" not in plan
    run([*args, "--config", 'answers={"num_answers": 3}'], project)  # plans: 3 is a number
    failed = run([*args, "--config", "run=../x"], project, check=False)
    assert failed.stderr.strip().splitlines()[-1].startswith("error: --config: run: '../x'")

    (project / "config" / "exp.yaml").write_text("include: [smoke.yaml, gone.yaml]\n")
    failed = run(args, project, check=False)
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    assert failed.stderr.strip().splitlines()[-1] == (
        f"error: {project}/config/exp.yaml: include: gone.yaml: config file not found"
        f" ({project}/config/gone.yaml)"
    )

    included = project / "config" / "base" / "smoke.yaml"
    included.write_text(included.read_text().replace("num_questions: 20", "num_questions: 5"))
    stale = run(["selfreflect", "dvc-yaml", "--check"], project, check=False)
    assert stale.returncode != 0 and "params.yaml: not up to date" in stale.stderr


def test_defaults_are_filled():
    config = validate_config(
        {
            "models": {"m": {"path": "x/y"}},
            "subjects": ["m"],
            "judges": ["m"],
            "datasets": {"d": {"source": "simpleqa"}},
        }
    )
    assert config["models"]["m"]["backend"] == "vllm"
    assert config["answers"]["num_answers"] == 50
    assert config["answers"]["max_tokens"] == 256
    assert config["shards"] == 1


def test_key_order_in_the_file_does_not_change_parameters():
    """Snakemake compares rule parameters as text: reordered YAML keys must not rerun jobs."""
    config = read_config_file(REPO / "config" / "smoke.yaml")
    shuffled = {key: config[key] for key in reversed(config)}
    shuffled["models"] = {
        name: dict(reversed(spec.items())) for name, spec in config["models"].items()
    }
    assert repr(validate_config(shuffled)) == repr(validate_config(config))
    assert list(validate_config(config)["datasets"]) == list(config["datasets"])


def alias_bomb(mapping: bool = False, levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" YAML document: each level holds the previous one ``width`` times."""
    open_, close = "{}" if mapping else "[]"

    def level(item: str) -> str:
        items = [f"k{i}: {item}" if mapping else item for i in range(width)]
        return open_ + ", ".join(items) + close

    lines = [f"l0: &l0 {level('lol')}"]
    lines += [f"l{n}: &l{n} {level(f'*l{n - 1}')}" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


TOO_MANY = "aliases expand to more than 100000 nodes and characters"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (alias_bomb(), f"line 5: {TOO_MANY}"),
        (alias_bomb(mapping=True), f"line 5: {TOO_MANY}"),
        ("models: &m\n  tiny: *m\n", "line 1: an alias refers to a node that contains it"),
        (f"a: &s {'x' * 10_000}\nb: [{', '.join(['*s'] * 9000)}]\n", f"line 2: {TOO_MANY}"),
    ],
    ids=["sequences", "mappings", "recursive", "long-text"],
)
def test_an_alias_bomb_is_refused_before_anything_walks_it(tmp_path, text, expected):
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    started = time.monotonic()
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert time.monotonic() - started < 5
    assert str(err.value) == f"{path}: malformed YAML at {expected}"


def test_anchors_aliases_and_merge_keys_still_work(tmp_path):
    path = tmp_path / "anchored.yaml"
    path.write_text(
        "models:\n"
        "  tiny: &tiny {path: x/y, backend: hf}\n"
        "  tiny32:\n    <<: *tiny\n    dtype: float32\n"
        "subjects: &who [tiny, tiny32]\n"
        "judges: *who\n"
        "datasets: {d: {source: simpleqa}}\n"
    )
    config = load_config(path)
    assert config["judges"] == config["subjects"] == ["tiny", "tiny32"]
    assert config["models"]["tiny32"]["backend"] == "hf"
    assert config["models"]["tiny32"]["dtype"] == "float32"


def test_snakemake_dry_run_stops_at_an_alias_bomb_with_one_line(tmp_path):
    """Snakemake merges a --configfile's mappings itself; our loader refuses the bomb before the
    workflow validates (walks) it."""
    (tmp_path / "bomb.yaml").write_text(alias_bomb())
    args = ["snakemake", "-s", str(REPO / paths.SNAKEFILE), "-n", "--configfile", "bomb.yaml"]
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {tmp_path}/bomb.yaml: malformed YAML at line 5: {TOO_MANY}"]
    assert "Traceback" not in result.stderr


def test_a_baseline_typed_into_params_yaml_names_the_file_and_key(tmp_path):
    """DVC stages read params.yaml (every key, defaults filled) as their config."""
    text = (REPO / "params.yaml").read_text()
    assert text.count("  baseline: greedy\n") == 1
    path = tmp_path / "params.yaml"
    path.write_text(text.replace("  baseline: greedy\n", "  baseline: greedyy\n"))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    strategies = ", ".join(load_config(REPO / "params.yaml")["summaries"]["strategies"])
    assert str(err.value) == (
        f"{path}: report.baseline: 'greedyy' is not a strategy of this run"
        f" (summaries.strategies: {strategies})"
    )


def test_a_schema_error_quotes_a_long_value_shortened(tmp_path):
    """A value of a wrong type thousands of characters long is named, not printed whole."""
    path = tmp_path / "c.yaml"
    path.write_text(f"run: t\nseed: [{', '.join(['123456789'] * 2000)}]\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(f"{path}: seed: [123456789, ") and len(message) < 1200
    assert message.endswith("characters in all)")


def test_an_integer_no_python_value_holds_is_one_line(tmp_path):
    """An integer of 5000 digits: Python refuses to read it (its digit limit), one line."""
    path = tmp_path / "c.yaml"
    path.write_text(f"run: t\nseed: {'9' * 5000}\n")
    with pytest.raises(ConfigError, match="malformed YAML: Exceeds the limit"):
        load_config(path)


def test_an_error_of_the_config_overrides_names_them_and_not_the_files(tmp_path):
    """Snakemake's --config, checked as the workflow checks it: a value the overrides bring is
    blamed on --config, one the files hold on the files, and numbers inside an overridden
    mapping are numbers, as in a config file (Snakemake reads them as strings)."""
    path = _write(tmp_path, lambda c: None)
    nested = {"answers": {"num_answers": "5", "temperature": "0.5"}, "run": "r"}
    config = checked_config([path], nested, str(path))
    assert (config["answers"]["num_answers"], config["answers"]["temperature"]) == (5, 0.5)
    assert typed_overrides({"a": {"b": ["1", "x", "true", "null", "", "2024-01-01"]}}) == {
        "a": {"b": [1, "x", True, None, "", "2024-01-01"]}
    }
    (tmp_path / "b").mkdir()
    bad = _write(tmp_path / "b", lambda c: c["answers"].update(num_answers=0))
    for files, overrides, blamed in [
        (path, {"run": "../x"}, "--config: run: '../x' is not a valid name"),
        (path, {"answers": {"num_answers": "-5"}}, "--config: answers.num_answers: -5 is less"),
        (bad, {"run": "r"}, f"{bad}: answers.num_answers: 0 is less"),
        (bad, {"run": "../x"}, f"{bad} with --config: run: '../x' is not a valid name"),
    ]:
        with pytest.raises(SystemExit) as err:
            checked_config([files], overrides, str(files))
        assert str(err.value).startswith(f"error: {blamed}"), err.value


@pytest.mark.parametrize(
    ("key", "change"),
    [
        ("scoring.stopwords", lambda c: c["scoring"].update(stopwords="data/words.txt")),
        ("report.human_ratings", lambda c: c["report"].update(human_ratings="data/words.txt")),
    ],
)
def test_a_missing_word_list_or_ratings_file_is_the_settings_error(tmp_path, key, change):
    """Checked before any job, as a dataset's file is (Snakemake would name a rule's input)."""
    path = _write(tmp_path, change)
    assert settings_error(path) == f"error: {path}: {key}: data/words.txt: not found"


def _gguf_model(gguf: str, package: str | list[str] = SMOLLM2_PACKAGE) -> dict:
    return {"gguf": gguf, "package": package, "backend": "hf"}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (_gguf_model("SmolLM2.ggu"), f"package '{SMOLLM2_PACKAGE}': no file named 'SmolLM2.ggu'"),
        (_gguf_model(SMOLLM2_FILE, "no-such-package-xyz"), "'no-such-package-xyz' is not instal"),
        (_gguf_model("m.gguf", ["no-such-package-xyz"]), "'no-such-package-xyz' is not install"),
        ({"gguf": "models/m.gguf", "backend": "hf"}, "models/m.gguf: GGUF file not found"),
    ],
)
def test_a_gguf_file_that_is_not_where_the_run_s_model_says_is_the_settings_error(
    tmp_path, entry, message
):
    """Checked before any job (a misspelt file name): the conversion would fail only after
    Snakemake removed the converted folder every run shares. A model the run does not name is
    not checked (a config may list models it does not use)."""

    def judged_by(packaged):
        def change(config):
            config["models"].update(packaged=packaged, unused=_gguf_model("x.gguf", "no-such-x"))
            config["judges"] = ["tiny", "packaged"]

        return _write(tmp_path, change)

    path = judged_by(entry)
    error = settings_error(path)
    assert error.startswith(f"error: {path}: models.packaged.gguf: "), error
    assert message in error
    ok = judged_by(_gguf_model(SMOLLM2_FILE))
    assert checked_config([ok], {}, str(ok))["models"]["unused"]["gguf"] == "x.gguf"


def test_a_misspelt_strategy_is_named_not_the_baseline_it_leaves_out(tmp_path):
    """The baseline (greedy) is checked against the strategies after their names are."""
    path = _write(tmp_path, lambda c: c["summaries"].update(strategies=["greddy", "basic"]))
    assert settings_error(path).startswith(
        f"error: {path}: summaries.strategies: unknown strategy 'greddy' (known: greedy, "
    )


def test_a_yaml_syntax_error_is_snakemakes_line_and_ours_names_file_and_line(tmp_path, monkeypatch):
    """Snakemake parses a --configfile before the workflow: its error names no file (as
    docs/configuration.md says); selfreflect's check of the same file names it and the line."""
    (tmp_path / "bad.yaml").write_text("run: r\nmodels: [unclosed\n")
    args = ["snakemake", "-s", str(REPO / paths.SNAKEFILE), "-n", "--configfile", "bad.yaml"]
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    said = result.stdout + result.stderr
    assert result.returncode != 0 and "Config file is not valid JSON or YAML" in said
    assert "bad.yaml" not in said
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^bad\.yaml: malformed YAML at line 3: did not find"):
        read_config_file("bad.yaml")


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            "finetune: {training: {learning_rate: 2e-4}}",
            "finetune.training.learning_rate: '2e-4' is not of type 'number'"
            " (YAML reads 2e-4 as text: write 2.0e-4)",
        ),
        (
            "questions: {num_questions: 1e3}",
            "questions.num_questions: '1e3' is not of type 'integer'"
            " (YAML reads 1e3 as text: write 1000)",
        ),
    ],
    ids=["number", "integer"],
)
def test_a_number_yaml_reads_as_text_is_told_how_to_write_it(tmp_path, setting, expected):
    """YAML 1.1 (PyYAML, Snakemake) reads an exponent with no dot as a string."""
    path = tmp_path / "lr.yaml"
    path.write_text(f"include: {REPO / 'config' / 'smoke.yaml'}\n{setting}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: {expected}"


def _local_run(tmp_path, **changes) -> dict:
    """A config of a local model folder, an openai-served subject and a local questions file,
    all present under ``tmp_path``; ``changes`` update its top level."""
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "config.json").write_text("{}")
    (tmp_path / "q.jsonl").write_text('{"question": "Q?"}\n')
    api = {"backend": "openai", "path": "gpt-4o-mini", "base_url": "http://localhost:1/v1"}
    config = {
        "run": "t",
        "models": {"m": {"path": str(tmp_path / "m")}, "api": api},
        "subjects": ["m", "api"],
        "judges": ["m"],
        "datasets": {"d": {"source": "local", "path": str(tmp_path / "q.jsonl")}},
    }
    return {**config, **changes}


def _checked_error(tmp_path, config: dict) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    return settings_error(path).removeprefix(f"error: {path}: ")


def test_a_missing_local_dataset_or_model_is_named_before_any_job(tmp_path):
    """The workflow's check (checked_config): a local questions file that is gone, a model folder
    that is missing or has no config.json are each the setting's one line; a model served by
    an openai endpoint names no folder and passes."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_local_run(tmp_path)))
    assert checked_config([path], {}, str(path))["models"]["api"]["path"] == "gpt-4o-mini"
    datasets = {"d": {"source": "local", "path": str(tmp_path / "gone.jsonl")}}
    assert _checked_error(tmp_path, _local_run(tmp_path, datasets=datasets)) == (
        f"datasets.d.path: {tmp_path}/gone.jsonl: not found"
    )
    models = {"m": {"path": str(tmp_path / "empty")}}
    (tmp_path / "empty").mkdir()
    assert _checked_error(tmp_path, _local_run(tmp_path, models=models, subjects=["m"])) == (
        f"models.m.path: {tmp_path}/empty: model directory has no config.json"
    )
    models = {"m": {"path": str(tmp_path / "absent")}}
    assert _checked_error(tmp_path, _local_run(tmp_path, models=models, subjects=["m"])) == (
        f"models.m.path: {tmp_path}/absent: model directory not found"
    )


def test_an_integer_of_64_bits_is_refused(tmp_path):
    """The artifacts store signed 64-bit integers: 2**63 is the first that does not fit."""
    config = _local_run(tmp_path)
    assert validate_config({**config, "seed": 2**63 - 1})["seed"] == 2**63 - 1
    with pytest.raises(ConfigError, match=r"^c\.yaml: seed: an integer of 64 bits \(at most 63\)"):
        validate_config({**config, "seed": 2**63}, source="c.yaml")


def test_an_unknown_summarizer_is_named(tmp_path):
    """The summariser is a model reference like the subjects and judges."""
    with pytest.raises(ConfigError, match=r"^c\.yaml: summarizer: unknown model 'nosuch'"):
        validate_config(_local_run(tmp_path, summarizer="nosuch"), source="c.yaml")


def test_a_datasets_own_question_count_and_answer_settings_override_the_runs(tmp_path):
    """``datasets.NAME.num_questions`` and ``datasets.NAME.answers`` win over the run's
    ``questions.num_questions`` and ``answers``; a dataset without them keeps the run's."""
    from selfreflect.config import answer_settings, question_count

    config = _local_run(tmp_path, questions={"num_questions": 7}, answers={"num_answers": 5})
    config["datasets"]["own"] = {
        "source": "local",
        "path": str(tmp_path / "q.jsonl"),
        "num_questions": 3,
        "answers": {"num_answers": 2},
    }
    config = validate_config(config)
    assert (question_count(config, "own"), question_count(config, "d")) == (3, 7)
    assert answer_settings(config, "own")["num_answers"] == 2
    assert answer_settings(config, "d")["num_answers"] == 5
    assert answer_settings(config, "own")["max_tokens"] == config["answers"]["max_tokens"]


def test_a_datasets_local_files_are_its_question_jobs_inputs_and_hashed(tmp_path):
    """RunInputs: a local file, or a hub-kind dataset kept in a local folder, is an input of
    its questions job, and every file in the folder is hashed into the job's params (an edited
    file reruns it); a hub id is no input."""
    from snakemake.iocontainers import Namedlist

    from selfreflect.fileio import file_digest
    from selfreflect.rule_inputs import RunInputs

    folder = tmp_path / "sqa" / "default"
    folder.mkdir(parents=True)
    (folder / "test.parquet").write_bytes(b"one")
    (folder / "README.md").write_bytes(b"two")
    config = _local_run(tmp_path)
    config["datasets"].update(
        folder={"source": "simpleqa", "path": str(tmp_path / "sqa")},
        hub={"source": "simpleqa"},
    )
    run = RunInputs(validate_config(config), lambda command: None)
    job = {name: Namedlist(fromdict={"dataset": name}) for name in ("d", "folder", "hub")}
    assert run.dataset_files(job["d"]) == [str(tmp_path / "q.jsonl")]
    assert run.dataset_files(job["folder"]) == [str(tmp_path / "sqa")]
    assert run.dataset_files(job["hub"]) == [] and run.dataset_digest(job["hub"]) == []
    files = sorted([folder / "README.md", folder / "test.parquet"])
    assert run.dataset_digest(job["folder"]) == [file_digest(f) for f in files]
    before = run.dataset_digest(job["folder"])
    (folder / "test.parquet").write_bytes(b"edited")
    assert run.dataset_digest(job["folder"]) != before


def test_a_word_list_and_a_built_model_are_job_inputs_and_gpu_jobs_ask_the_gpu_partition(
    tmp_path,
):
    """RunInputs: the word list ``scoring.stopwords`` names is an input of the scoring jobs (a
    built-in policy is none); a model the workflow builds (results/models/) is an input of the
    jobs loading it, a local folder elsewhere is not; a job holding a GPU model asks SLURM's GPU
    partition, one holding a CPU model (``gpus: 0``) the default one."""
    from snakemake.iocontainers import Namedlist

    from selfreflect.rule_inputs import GPU_PARTITION, RunInputs

    config = _local_run(tmp_path, scoring={"stopwords": "data/words.txt"})
    config["models"]["built"] = {"gguf": "x.gguf", "gpus": 0}
    run = RunInputs(validate_config(config), lambda command: None)
    job = Namedlist(fromdict={"subject": "built", "judge": "m", "dataset": "d"})
    assert run.stopword_files(job) == ["data/words.txt"]
    assert RunInputs(validate_config(_local_run(tmp_path)), None).stopword_files(job) == []
    assert run.models("{subject}", "{judge}")(job) == ["results/models/built"]
    assert run.models("{judge}")(job) == []
    resources = run.model_resources(lambda w: [w.judge])
    assert (resources["gpu"](job), resources["slurm_partition"](job)) == (1, GPU_PARTITION)
    cpu = run.model_resources(lambda w: [w.subject])
    assert (cpu["gpu"](job), cpu["slurm_partition"](job)) == (0, None)


def test_an_openai_model_takes_no_gpu_unless_its_gpus_say_so(tmp_path):
    """A model served by an openai endpoint runs elsewhere: a job holding it alone takes no GPU
    and goes to SLURM's default partition; its ``gpus`` still count where set."""
    from snakemake.iocontainers import Namedlist

    from selfreflect.config import model_gpus
    from selfreflect.rule_inputs import RunInputs

    config = validate_config(_local_run(tmp_path))
    assert (model_gpus(config, "api"), model_gpus(config, "api", "m")) == (0, 1)
    resources = RunInputs(config, None).model_resources(lambda w: [w.subject])
    job = Namedlist(fromdict={"subject": "api"})
    assert (resources["gpu"](job), resources["slurm_partition"](job)) == (0, None)
    config["models"]["api"]["gpus"] = 2
    assert model_gpus(config, "api") == 2


def test_sft_learns_from_the_teachers_summaries_dpo_from_the_candidates(tmp_path):
    """RunInputs: the training questions' tables a finetuning method learns from are its
    teacher's (SFT) or the candidates' (DPO), and the candidates are what the judge pass scores
    on the training questions."""
    from snakemake.iocontainers import Namedlist

    from selfreflect.rule_inputs import RunInputs

    finetune = {"dataset": "train", "teacher": "cot", "candidates": ["greedy", "basic"]}
    config = _local_run(tmp_path, finetune=finetune)
    config["datasets"]["train"] = config["datasets"]["d"]
    run = RunInputs(validate_config(config), None)
    for method, strategies in {"sft": ["cot"], "dpo": ["greedy", "basic"]}.items():
        job = Namedlist(fromdict={"subject": "m", "method": method})
        wildcards = run.training_wildcards(job)
        assert (wildcards["strategy"], wildcards["dataset"]) == (strategies, "train")
    on_training = Namedlist(fromdict={"dataset": "train"})
    assert run.judged_strategies(on_training) == ["greedy", "basic"]
