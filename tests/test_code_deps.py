"""The code a command depends on, derived from its imports (in process, no workflow run; the
workflow's reruns per module are checked in test_incremental.py)."""

from __future__ import annotations

import ast
import modulefinder
from pathlib import Path

import pytest
import yaml

from selfreflect import code_deps
from selfreflect.code_deps import SOURCE, command_deps, module_closure
from selfreflect.strategies import builtin_names, strategy_prompts

REPO = Path(__file__).resolve().parents[1]
MODULES = sorted(
    ".".join(path.relative_to(REPO / "src").with_suffix("").parts).removesuffix(".__init__")
    for path in (REPO / SOURCE).rglob("*.py")
)
PROMPT_KEYS = set(yaml.safe_load((REPO / SOURCE / "data" / "prompts.yaml").read_text()))
JUDGE_CODE = ("scoring/judge.py", "backends/__init__.py", "families.py", "chat.py")


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)  # the analysis reads src/selfreflect of the working directory


@pytest.mark.parametrize("module", MODULES)
def test_a_module_closure_holds_every_import_python_finds(module):
    """Python's modulefinder (scanning every code object, lazy imports too) finds no package
    module the closure misses; the closure adds only what a registry's ``load`` imports."""
    finder = modulefinder.ModuleFinder(path=[str(REPO / "src")])
    finder.run_script(str(code_deps.module_file(module)))
    found = {name for name in finder.modules if name.startswith("selfreflect")} - {"__main__"}
    found.add(module)
    closure = module_closure(module)
    assert found <= closure
    registries = {t for targets in code_deps._registry_targets().values() for t in targets}
    loaded = {m for target in registries for m in module_closure(target)}
    assert closure - found <= loaded


def test_a_command_depends_on_what_its_own_function_reaches():
    tables = command_deps("report main-table").files
    assert "src/selfreflect/report/tables.py" in tables
    assert "src/selfreflect/cli/__init__.py" in tables  # every command runs through its entry
    assert "src/selfreflect/cli/report/main_table.py" in tables
    assert not any(f"src/selfreflect/{name}" in tables for name in JUDGE_CODE)
    studies = command_deps("report controlled-scores").files
    assert all(f"src/selfreflect/{name}" in studies for name in JUDGE_CODE)
    assert "src/selfreflect/report/tables.py" not in studies


def test_each_command_module_is_its_commands_alone():
    """Editing one command reruns no other command's jobs."""
    from selfreflect.cli import COMMANDS
    from selfreflect.cli.report import COMMANDS as REPORT

    modules = {f"cli/{spec.partition(':')[0]}": name for name, spec in COMMANDS.items()}
    modules |= {f"cli/report/{spec.partition(':')[0]}": f"report {n}" for n, spec in REPORT.items()}
    del modules["cli/report"]  # the group, not a command
    for module, command in modules.items():
        users = [c for c in modules.values() if f"{SOURCE}/{module}.py" in command_deps(c).files]
        assert users == [command], module


def test_data_files_are_code_and_prompts_are_keys():
    assert "src/selfreflect/data/tiny_corpus.txt" in command_deps("tiny-model").files
    assert "src/selfreflect/data/config.schema.yaml" in command_deps("questions").files
    assert not any(path.endswith("prompts.yaml") for path in command_deps("score").files)
    assert {"system", "score_masked_word"} <= set(command_deps("score").prompt_keys)
    assert command_deps("questions").prompt_keys == ()
    with pytest.raises(ValueError, match="no such command"):
        command_deps("report nothing")


@pytest.mark.parametrize("module", MODULES)
def test_every_prompt_key_a_module_names_is_declared(module):
    """A module naming a prompts.yaml key declares it: in ``PROMPT_KEYS``, or for a strategy
    module in its strategies' ``register`` (a chat role compared is no prompt)."""
    tree = ast.parse(code_deps.module_file(module).read_text())
    compared = {id(n) for c in ast.walk(tree) if isinstance(c, ast.Compare) for n in ast.walk(c)}
    named = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in PROMPT_KEYS and id(node) not in compared
    }
    declared = set(code_deps._prompt_keys(tree))
    if module.startswith("selfreflect.strategies"):
        declared |= {key for name in builtin_names() for key in strategy_prompts(name)}
    assert named <= declared
