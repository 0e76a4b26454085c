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


def type_only_imports(modules: frozenset[str]) -> set[str]:
    """What the ``if TYPE_CHECKING:`` blocks of ``modules`` import, with its closure: modulefinder
    follows them, though they run nothing."""
    found = set()
    for module in modules:
        for node in ast.walk(ast.parse(code_deps.module_file(module).read_text())):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                imports = [s for s in node.body if isinstance(s, ast.ImportFrom | ast.Import)]
                names = [n.name for s in imports for n in s.names]
                names += [s.module for s in imports if isinstance(s, ast.ImportFrom)]
                found |= {m for n in names if n and n.startswith("selfreflect")
                          for m in module_closure(n)}  # fmt: skip
    return found


@pytest.mark.parametrize("module", MODULES)
def test_a_module_closure_holds_every_import_python_finds(module):
    """Python's modulefinder (scanning every code object, lazy imports too) finds no package
    module the closure misses but those only type checking imports; the closure adds only what
    a registry's ``load`` imports."""
    finder = modulefinder.ModuleFinder(path=[str(REPO / "src")])
    finder.run_script(str(code_deps.module_file(module)))
    found = {name for name in finder.modules if name.startswith("selfreflect")} - {"__main__"}
    found.add(module)
    closure = module_closure(module)
    assert found - type_only_imports(closure) <= closure
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
    from selfreflect.commands import COMMANDS

    modules = {
        spec.partition(":")[0].removeprefix("selfreflect.").replace(".", "/"): name
        for name, spec in COMMANDS.items()
        if spec.startswith("selfreflect.cli.") and name not in ("report", "bench")  # groups
    }
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


def test_a_plugin_in_a_project_without_the_package_lists_no_package_file(tmp_path, monkeypatch):
    write_modules(tmp_path, {"p.py": "from selfreflect.strategies import Context\n"})
    monkeypatch.chdir(tmp_path)
    assert code_deps.plugin_files("p:f") == ("p.py",)


def test_the_example_plugin_adds_only_its_own_module_to_the_summaries_code():
    """Its package imports are followed whole, like a command's: here all of them are the
    summarize command's own code already, so the plug-in's job adds just its module."""
    files = code_deps.plugin_files("examples.plugins:majority_vote")
    assert {"examples/plugins.py", "src/selfreflect/chat.py"} <= set(files)
    assert set(files) - set(command_deps("summarize").files) == {"examples/plugins.py"}


def test_a_plugin_importing_more_of_the_package_adds_those_modules(tmp_path, monkeypatch):
    """A package module summarize never runs (the main table's) counts for the plug-in."""
    (tmp_path / "src").symlink_to(REPO / "src")
    write_modules(tmp_path, {"p.py": "from selfreflect.report import tables\n"})
    monkeypatch.chdir(tmp_path)
    files = code_deps.plugin_files("p:f")
    assert {"p.py", "src/selfreflect/report/tables.py"} <= set(files)
    assert "src/selfreflect/report/tables.py" not in command_deps("summarize").files


def test_a_command_run_outside_the_project_root_is_one_line(monkeypatch, tmp_path):
    """A command's code hash reads src/selfreflect of the working directory: elsewhere (e.g.
    `selfreflect judge` started in another folder) that is one line, not a traceback."""
    from selfreflect.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"src/selfreflect: not in the working directory .*root"):
        command_deps.__wrapped__("judge")  # not the cached result of an earlier test


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
