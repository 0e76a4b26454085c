"""The code a command depends on, derived from its imports (in process, no workflow run; the
workflow's reruns per module are checked in test_incremental.py)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from selfreflect import code_deps
from selfreflect.cli import command_deps
from selfreflect.cli.commands import TABLES
from selfreflect.code_deps import SOURCE
from selfreflect.strategies.registry import builtin_names, strategy_prompts

REPO = Path(__file__).resolve().parents[1]
MODULES = sorted(
    ".".join(path.relative_to(REPO / "src").with_suffix("").parts).removesuffix(".__init__")
    for path in (REPO / SOURCE).rglob("*.py")
)
PROMPT_KEYS = set(yaml.safe_load((REPO / SOURCE / "data" / "prompts.yaml").read_text()))
JUDGE_CODE = ("scoring/forwards.py", "backends/__init__.py", "families.py", "chat.py")


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)  # the analysis reads src/selfreflect of the working directory


IMPORTS = """
import importlib, json, sys
loaded = {}
for module in sys.argv[1:]:
    for name in [n for n in sys.modules if n.partition(".")[0] == "selfreflect"]:
        del sys.modules[name]
    importlib.import_module(module)
    loaded[module] = [n for n in sys.modules if n.partition(".")[0] == "selfreflect"]
print(json.dumps(loaded))
"""


@pytest.fixture(scope="module")
def python_imports() -> dict[str, list[str]]:
    """``{module: the package modules Python imports with it}``, each imported afresh in one
    interpreter (a subprocess: the tests' own modules stay as they are)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    args = [sys.executable, "-c", IMPORTS, *MODULES]
    return json.loads(subprocess.run(args, capture_output=True, check=True, env=env).stdout)


@pytest.mark.parametrize("module", MODULES)
def test_loading_a_module_counts_every_module_python_imports_with_it(python_imports, module):
    """What importing a module runs (its top level, the packages above it, what they import)
    the analysis loads: none missing, or an edit could go unnoticed. (It may load more: a
    function a decorator calls counts with the functions defined inside it.)"""
    reach = code_deps.Reach()
    reach.load(module)
    assert set(python_imports[module]) <= reach.loaded


def test_a_function_body_counts_where_the_function_is_named():
    """A lazy import counts for the command whose code runs it, not for every importer of its
    module: the judges' table is read without a judge, and opening one loads a judge backend by
    name (a registry's ``load``: every one of its targets)."""
    reach = code_deps.Reach()
    reach.load("selfreflect.scoring.registry")
    assert not any(m.startswith("selfreflect.backends") for m in reach.loaded)
    reach.name("selfreflect.scoring.registry", "open_judge")  # JUDGES.load: every judge backend
    assert {"selfreflect.scoring.hf_judge", "selfreflect.backends.vllm_engine"} <= reach.loaded
    assert "selfreflect.backends.openai_engine" not in reach.loaded  # BACKENDS' alone


def test_a_registry_counts_its_targets_where_it_is_built_or_imported():
    """``X.load`` of a registry built in another module, imported at the top of the module or
    inside the function that loads from it; a ``load`` of anything else counts no target."""
    reach = code_deps.Reach()
    reach.name("selfreflect.strategies.registry", "resolve")  # STRATEGIES, built there
    assert {"selfreflect.strategies.paper", "selfreflect.strategies.related"} <= reach.loaded
    assert code_deps._registry_in("selfreflect.cli.score", "JUDGES", []) == [
        ("selfreflect.scoring.hf_judge", "HfJudge"),
        ("selfreflect.scoring.vllm_judge", "VllmJudge"),
        ("selfreflect.scoring.reference_judge", "ReferenceJudge"),
    ]
    lazy = ast.parse(
        "def f():\n    from selfreflect.backends.registry import BACKENDS\n    BACKENDS.load(n)"
    )
    targets = code_deps._registry_in("selfreflect.rule_inputs", "BACKENDS", list(ast.walk(lazy)))
    assert ("selfreflect.backends.openai_engine", "OpenaiGenerator") in targets
    assert code_deps._registry_in("selfreflect.cli", "load", []) == []  # the loader, no table


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    """The analyses' store in a folder of this test's, empty."""
    monkeypatch.setattr(code_deps, "CACHE_DIR", tmp_path / "cache")
    code_deps._stored_deps.cache_clear()
    yield tmp_path / "cache"
    code_deps._stored_deps.cache_clear()


def test_an_analysis_is_stored_per_state_of_the_package_and_read_back(cache_dir, monkeypatch):
    """What a command's analysis derived is read back from the store of the package's state,
    not from another state's; a store that cannot be written leaves it derived each time."""
    functions = {"selfreflect.report.tables": ("main_table",)}
    derived = code_deps._function_deps(functions)
    assert code_deps.function_deps(functions) == derived
    (stored,) = cache_dir.iterdir()
    entries = json.loads(stored.read_text())
    entries = {key: [["tampered.py"], keys] for key, (_, keys) in entries.items()}
    stored.write_text(json.dumps(entries))
    code_deps._stored_deps.cache_clear()
    assert code_deps.function_deps(functions).files == ("tampered.py",)  # read back
    monkeypatch.setattr(code_deps, "_package_digest", lambda package: "another state")
    code_deps._stored_deps.cache_clear()
    assert code_deps.function_deps(functions) == derived  # not the other state's
    assert len(list(cache_dir.iterdir())) == 2
    blocked = cache_dir / "blocked"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setattr(code_deps, "CACHE_DIR", blocked / "cache")
    code_deps._stored_deps.cache_clear()
    assert code_deps.function_deps(functions) == derived


def test_the_packages_state_is_its_files_content(tmp_path):
    """An edit that keeps a file's size and modification time is a new state of the package."""
    package = tmp_path / "package"
    shutil.copytree(REPO / SOURCE / "report", package)
    before = code_deps._package_digest(package)
    file = package / "tables.py"
    times = file.stat().st_atime_ns, file.stat().st_mtime_ns
    text = file.read_text()
    file.write_text(text.replace("def ", "def!", 1).replace("def!", "dEf ", 1))
    os.utime(file, ns=times)
    assert code_deps._package_digest.__wrapped__(package) != before


def test_a_command_depends_on_what_its_own_function_reaches():
    tables = command_deps("report main-table").files
    assert "src/selfreflect/report/tables.py" in tables
    assert "src/selfreflect/cli/__init__.py" in tables  # every command runs through its entry
    assert "src/selfreflect/cli/report/tables.py" in tables  # the catalog's tables' commands
    assert "src/selfreflect/data/captions" in tables  # the captions' templates
    assert not any(name.endswith(".rst") for name in tables)  # the Snakemake report's are not
    assert not any(f"src/selfreflect/{name}" in tables for name in JUDGE_CODE)
    studies = command_deps("report alt-metrics").files  # loads the judge
    assert all(f"src/selfreflect/{name}" in studies for name in JUDGE_CODE)
    assert "src/selfreflect/report/tables.py" not in studies
    scores = command_deps("report controlled-scores").files  # reads the judge's records
    assert "src/selfreflect/backends/__init__.py" not in scores


def test_each_command_module_is_its_commands_alone():
    """Editing one command reruns no other command's jobs (the catalog's tables share the
    module that makes their commands)."""
    from selfreflect.cli.commands import COMMANDS

    modules: dict[str, list[str]] = {}
    for name, spec in COMMANDS.items():
        if spec.startswith("selfreflect.cli."):
            module = spec.partition(":")[0].removeprefix("selfreflect.").replace(".", "/")
            modules.setdefault(module, []).append(name)
    assert modules["cli/report/tables"] == [f"report {name}" for name in TABLES]
    commands = [name for names in modules.values() for name in names]
    for module, own in modules.items():
        users = [c for c in commands if f"{SOURCE}/{module}.py" in command_deps(c).files]
        assert users == own, module


def _imported_modules(path: Path) -> set[str]:
    """The modules a file imports anywhere (top level or inside a function)."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return names


def test_the_command_line_is_the_top_floor():
    """Its table names the commands' modules by import strings, so those must lie below it: no
    module outside the command line imports it, and no command's module (nor a helper of one)
    imports its top (``selfreflect.cli``: the groups; ``selfreflect.cli.commands`` and
    ``selfreflect.cli.tools``: the tables). Only ``python -m selfreflect`` lies above it."""
    top = {"selfreflect.cli", "selfreflect.cli.commands", "selfreflect.cli.tools"}
    for path in sorted((REPO / SOURCE).rglob("*.py")):
        module = ".".join(path.relative_to(REPO / "src").with_suffix("").parts)
        imported = _imported_modules(path)
        if module == "selfreflect.__main__":  # `python -m selfreflect`: above the command line
            assert imported <= {"selfreflect.cli", "selfreflect.cli.main"}, imported
        elif not module.startswith("selfreflect.cli"):
            assert not any(name.startswith("selfreflect.cli") for name in imported), module
        elif module.removesuffix(".__init__") not in top:
            assert not imported & top, module


def test_the_commands_of_the_tables_are_the_catalogs():
    from selfreflect.report.catalog import REPORTS

    assert tuple(report.name for report in REPORTS) == TABLES
    for report in REPORTS:  # its caption beside the Snakemake report's
        assert (REPO / "workflow" / "report" / f"{report.table}.rst").is_file()
        link = REPO / "workflow" / "report" / f"{report.table}.j2"
        assert link.resolve() == (REPO / SOURCE / "data" / "captions" / f"{report.table}.j2")


def test_data_files_are_code_and_prompts_are_keys():
    """The config schema is every command's file, and no job's: its defaults are the params'
    values (Deps.job_files)."""
    assert "src/selfreflect/data/tiny_corpus.txt" in command_deps("tiny-model").job_files
    assert "src/selfreflect/data/config.schema.yaml" in command_deps("questions").files
    questions = command_deps("questions")
    assert set(questions.files) - set(questions.job_files) == {
        "src/selfreflect/data/config.schema.yaml"
    }
    assert not any(path.endswith("prompts.yaml") for path in command_deps("score").files)
    assert {"system", "score_masked_word"} <= set(command_deps("score").prompt_keys)
    assert command_deps("questions").prompt_keys == ()
    with pytest.raises(ValueError, match="no such command"):
        command_deps("report nothing")


@pytest.mark.parametrize("module", MODULES)
def test_every_prompt_key_a_module_names_is_declared(module):
    """A module naming a prompts.yaml key declares it: in ``PROMPT_KEYS``, or for a strategy
    module in :data:`selfreflect.strategies.registry.PROMPTS` (a chat role compared is no
    prompt, nor is a strategy's name, a key of the registries' tables)."""
    tree = ast.parse(code_deps.module_file(module).read_text())
    compared = {id(n) for c in ast.walk(tree) if isinstance(c, ast.Compare) for n in ast.walk(c)}
    keys = {id(key) for d in ast.walk(tree) if isinstance(d, ast.Dict) for key in d.keys}
    named = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and node.value in PROMPT_KEYS
        and id(node) not in compared | keys
    }
    declared = set(code_deps._prompt_keys(tree))
    if module.startswith("selfreflect.strategies"):
        declared |= {key for name in builtin_names() for key in strategy_prompts(name)}
    assert named <= declared


def write_modules(root: Path, modules: dict[str, str]) -> None:
    for name, text in modules.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


PLUGIN_PROJECT = {
    "mine/__init__.py": "",
    "mine/strategy.py": (
        "import json\nimport yaml\nfrom typing import TYPE_CHECKING\n"
        "from mine import helpers\nfrom .wording import phrase\n"
        "if TYPE_CHECKING:\n    import typed_only\n"
        "def vote(ctx):\n    import lazy\n    return phrase(helpers.count(ctx))\n"
    ),
    "mine/wording.py": "from mine.strategy import vote\nphrase = str\n",  # a cycle
    "mine/helpers.py": "import deeper\ntry:\n    import absent\nexcept ImportError:\n    pass\n",
    "deeper.py": "count = len\n",
    "lazy.py": "",
    "typed_only.py": "",
    "unrelated.py": "",
}


def test_a_plugin_runs_its_module_and_the_local_modules_it_imports(tmp_path, monkeypatch):
    """Followed through the working directory's modules, directly or not (lazy and relative
    imports too, packages' ``__init__`` on the way); the standard library, installed packages,
    missing modules and type-checking imports are no files of the project."""
    write_modules(tmp_path, PLUGIN_PROJECT)
    monkeypatch.chdir(tmp_path)
    assert code_deps.plugin_files("mine.strategy:vote") == (
        "deeper.py",
        "lazy.py",
        "mine/__init__.py",
        "mine/helpers.py",
        "mine/strategy.py",
        "mine/wording.py",
    )
    assert code_deps.plugin_files("deeper:count") == ("deeper.py",)


def test_a_plugin_outside_a_checkout_counts_the_installed_package_files_it_uses(
    tmp_path, monkeypatch
):
    """Where the package is not the working directory's (the workflow run as a module), the
    package files a plug-in uses are those of the package that runs, by their full path."""
    write_modules(tmp_path, {"p.py": "from selfreflect.strategies import Context\n"})
    monkeypatch.chdir(tmp_path)
    installed = Path(code_deps.__file__).resolve().parent
    files = set(code_deps.plugin_files("p:f"))
    package = files - {"p.py"}
    assert "p.py" in files and str(installed / "strategies" / "__init__.py") in package
    assert all(Path(path).is_relative_to(installed) for path in package)


def test_the_example_plugin_adds_only_its_own_module_to_the_summaries_code():
    """Its package imports are followed whole, like a command's: here all of them are the
    summarize command's own code already, so the plug-in's job adds just its module."""
    files = code_deps.plugin_files("examples.plugins:majority_vote")
    assert {"examples/plugins.py", "src/selfreflect/chat.py"} <= set(files)
    assert set(files) - set(command_deps("summarize").files) == {"examples/plugins.py"}


def test_a_plugin_importing_more_of_the_package_adds_those_modules(tmp_path, monkeypatch):
    """A package module summarize never runs (the main table's) counts for the plug-in."""
    write_modules(tmp_path, {"p.py": "from selfreflect.report import tables\n"})
    monkeypatch.chdir(tmp_path)
    tables = str(code_deps.package_dir() / "report" / "tables.py")
    assert {"p.py", tables} <= set(code_deps.plugin_files("p:f"))
    assert tables not in command_deps("summarize").files


def test_outside_a_checkout_a_command_runs_the_installed_files_and_hashes_alike(
    monkeypatch, tmp_path
):
    """Started in another folder (as the workflow's jobs are where it runs as a Snakemake
    module), a command depends on the files of the package that runs, by their full path,
    and its code hash names them as in the checkout: the same code hashes alike. What one
    folder computed is never handed out in the other (asked there first, then here)."""
    monkeypatch.chdir(tmp_path)
    elsewhere = command_deps("judge")
    monkeypatch.chdir(REPO)
    in_repo = command_deps("judge")
    in_repo_hash = code_deps.code_digest(in_repo.files)
    monkeypatch.chdir(tmp_path)
    installed = Path(code_deps.__file__).resolve().parent
    assert [Path(path).relative_to(installed) for path in elsewhere.files] == [
        Path(path).relative_to(SOURCE) for path in in_repo.files
    ]
    assert code_deps.code_digest(elsewhere.files) == in_repo_hash


def test_a_plugin_found_on_the_path_in_a_folder_of_the_project_is_tracked(tmp_path, monkeypatch):
    """A plug-in module in src/ (on ``sys.path`` through an editable install) is imported
    from there, so it is code of its jobs like one in the working directory; a module of an
    environment inside the project is not."""
    write_modules(
        tmp_path,
        {
            "src/myplug.py": "import helper\n",
            "src/helper.py": "",
            ".venv/lib/site-packages/installed.py": "",
        },
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / ".venv/lib/site-packages"))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    assert code_deps.plugin_files("myplug:fn") == ("src/helper.py", "src/myplug.py")
    assert code_deps.plugin_files("installed:fn") == ()
    run_project = tmp_path / "dvc/r"  # a config's DVC project: links to the checkout's folders
    run_project.mkdir(parents=True)
    (run_project / "src").symlink_to("../../src")
    monkeypatch.chdir(run_project)
    assert code_deps.plugin_files("myplug:fn") == ("src/helper.py", "src/myplug.py")


# The commands that load a generation or judge model (the rules asking for a GPU); every other
# stage (questions, merges, score files, tables, the explorer) runs no engine.
MODEL_COMMANDS = {
    "answers",
    "summarize",
    "judge",
    "score",
    "finetune-train",
    "report alt-metrics",
    "report agreement-scores",
}
BACKENDS = f"{SOURCE}/backends/"


def test_the_commands_that_load_a_model_are_those_depending_on_the_engines():
    from selfreflect.cli.commands import COMMANDS

    engines = {c for c in COMMANDS if any(f.startswith(BACKENDS) for f in command_deps(c).files)}
    assert engines == MODEL_COMMANDS


@pytest.mark.workflow
@pytest.mark.parametrize("config", ["config/smoke.yaml", "config/config.yaml"])
def test_no_stage_without_a_model_depends_on_an_engine(config, tmp_path):
    """A row filter, merge, table or the explorer reruns for no edit of a generation engine or
    a judge backend: no such stage of the config's dvc.yaml (Snakemake's DAG, each job's code
    inputs) lists a file of backends/."""
    from selfreflect.cli.commands import command_name
    from tests.workflow_utils import copy_project, dvc_yaml_stages

    project = copy_project(tmp_path / "p", config=config)
    stages = dvc_yaml_stages(project)
    model_free = {
        name: stage
        for name, stage in stages.items()
        if not any(
            command_name(line.split()[1:]) in MODEL_COMMANDS
            for line in ([stage["cmd"]] if isinstance(stage["cmd"], str) else stage["cmd"])
        )
    }
    assert any(name.startswith("strategy_scores-") for name in model_free)
    engines = {
        name: [dep for dep in stage.get("deps", []) if dep.startswith(BACKENDS)]
        for name, stage in model_free.items()
    }
    assert {name: deps for name, deps in engines.items() if deps} == {}


def test_a_setting_template_is_split_at_dots_before_its_wildcards_are_filled():
    """``models.{judge}.dtype`` of a job whose judge is named ``a.b`` is the key path
    ``models``, ``a.b``, ``dtype``; a key path given whole is kept."""
    deps = code_deps.Deps((), (), settings=("models.{judge}.dtype", lambda job, config: [("x.y",)]))
    assert deps.setting_keys({"judge": "a.b"}, {}) == [("models", "a.b", "dtype"), ("x.y",)]


def test_a_command_that_renders_no_prompt_tracks_no_prompt_text():
    """The PROMPT_KEYS of the modules a command loads are tracked only where it renders prompts
    (a job of another command would rerun on an edited prompt it never shows)."""
    assert code_deps.Deps((), ("system",)).prompts({}) == []
    assert code_deps.Deps((), ("system",), renders=True).prompts({}) == ["system"]
    own = code_deps.Deps((), ("system",), renders=lambda job: [f"strategy.{job['strategy']}"])
    assert own.prompts({"strategy": "basic"}) == ["system", "strategy.basic"]


def test_a_code_hash_leaves_bytecode_caches_out(tmp_path):
    """Python writes __pycache__ files as it imports: they change no job's code."""
    (tmp_path / "module.py").write_text("X = 1\n")
    before = code_deps.code_digest(str(tmp_path))
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"\x00compiled")
    assert code_deps.code_digest(str(tmp_path)) == before
    (tmp_path / "module.py").write_text("X = 2\n")
    assert code_deps.code_digest(str(tmp_path)) != before


def test_a_command_taking_a_config_file_says_so():
    """``takes_config``: the commands with ``--config`` get the resolved config as a param."""
    assert command_deps("answers").takes_config
    assert not command_deps("export-answers").takes_config
