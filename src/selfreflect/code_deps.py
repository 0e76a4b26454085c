"""The package files and prompts a ``selfreflect`` command depends on, derived from its imports.

A command's dependencies start at its own function (and the entry point every command passes
through, ``selfreflect.cli:main`` and the ``cli`` group, which imports each command's module
only when it runs). Within a command module only what the function reaches counts: the imports
in its body (lazy imports are imports too) and the module-level names it uses, followed through
the module's own functions, constants and imports. Every library module it reaches then counts
whole, with every module it imports anywhere (top level or inside a function; ``if
TYPE_CHECKING:`` blocks run nothing, a registry's ``load`` imports each of its targets), the
``__init__`` of each package on the way, and the data files it names (``"config.schema.yaml"``).
``prompts.yaml`` is no code dependency: each module that renders prompt texts declares their
keys in ``PROMPT_KEYS`` (strategies in ``register``), and a job depends on those texts alone
(its params), so editing one prompt reruns only the jobs that render it.

A plug-in strategy (``summaries.plugins``) is code of the jobs running it: its module, the
working directory's modules it imports (directly or not) and the package modules these import.

The analysis is static (``ast``) and reads the package files under ``src/selfreflect`` of the
working directory (and a plug-in's modules there), the files a job's code hash and DVC's deps
cover.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE = "selfreflect"
SOURCE = Path("src") / PACKAGE
PROMPTS_FILE = "prompts.yaml"  # tracked per key (params), not as code
ENTRY = (f"{PACKAGE}.cli", ("main", "cli"))  # run by every command


@dataclass(frozen=True)
class Deps:
    """What a command depends on: package files (repository paths) and prompts.yaml keys, and
    what it declares it reads of the config (:func:`selfreflect.cli.options.reads`), and whether
    it takes the config file at all (``--config``)."""

    files: tuple[str, ...]
    prompt_keys: tuple[str, ...]
    settings: tuple[str | Callable[..., Any], ...] = ()
    renders: bool | Callable[[Mapping[str, str]], list[str]] = False
    plugin: bool = False
    takes_config: bool = False

    def setting_keys(self, job: Mapping[str, str], config: dict[str, Any]) -> list[tuple[str, ...]]:
        """The config key paths a job (its wildcards ``job``) of the command reads: templates
        are split at dots before their wildcards are filled in (a name may hold dots)."""
        keys = []
        for setting in self.settings:
            for key in setting(job, config) if callable(setting) else [setting]:
                parts = key.split(".") if isinstance(key, str) else key
                keys.append(tuple(part.format(**job) for part in parts))
        return keys

    def prompts(self, job: Mapping[str, str]) -> list[str]:
        """The prompts.yaml keys a job of the command renders: its code's and the job's."""
        if not self.renders:
            return []
        return [*self.prompt_keys, *(self.renders(job) if callable(self.renders) else ())]


def module_file(module: str) -> Path | None:
    """The file of package module ``module`` (``selfreflect.scoring.judge``), if it is one."""
    if module != PACKAGE and not module.startswith(f"{PACKAGE}."):
        return None
    base = SOURCE.joinpath(*module.split(".")[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without ``if TYPE_CHECKING:`` blocks (they import nothing at run time)."""
    todo = [node]
    while todo:
        for child in ast.iter_child_nodes(todo.pop()):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from child.orelse
                todo += child.orelse
            else:
                yield child
                todo.append(child)


def _import_names(statement: ast.Import | ast.ImportFrom, module: str, path: Path) -> list[str]:
    """The modules an import statement in ``module`` may load (a ``from`` import's names may be
    submodules), with the packages above them."""
    if isinstance(statement, ast.Import):
        names = [alias.name for alias in statement.names]
    else:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(statement.level - 1):
            package = package.rpartition(".")[0]
        base = statement.module or ""
        if statement.level:
            base = f"{package}.{base}" if base else package
        names = [base, *(f"{base}.{alias.name}" for alias in statement.names)]
    return _with_parents(names)


def _with_parents(names: list[str]) -> list[str]:
    """``names`` after the packages above them (``a``, ``a.b`` before ``a.b.c``)."""
    parents = [".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 1)]
    return list(dict.fromkeys([*parents, *names]))


def _imported(statement: ast.Import | ast.ImportFrom, module: str, path: Path) -> list[str]:
    """Package modules an import statement in ``module`` loads, with the packages above them."""
    return [name for name in _import_names(statement, module, path) if module_file(name)]


@cache
def _registry_targets() -> dict[str, list[str]]:
    """``{registry name: modules}`` of :mod:`selfreflect.registry` (``"module:attribute"``)."""
    targets: dict[str, list[str]] = {}
    for statement in _tree(SOURCE / "registry.py").body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            strings = [
                node.value.partition(":")[0]
                for node in ast.walk(statement.value)
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and ":" in node.value
            ]
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    targets[target.id] = [name for name in strings if module_file(name)]
    return targets


def _imports_in(node: ast.AST, module: str) -> list[str]:
    """Package modules imported under ``node``: import statements, and the targets of a
    registry whose ``load`` it calls (``BACKENDS.load(name)`` may import every backend)."""
    path = module_file(module)
    assert path is not None
    names = []
    for child in _runtime_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            names += _imported(child, module, path)
        elif (
            isinstance(child, ast.Attribute)
            and child.attr == "load"
            and isinstance(child.value, ast.Name)
        ):
            names += _registry_targets().get(child.value.id, [])
    return names


@cache
def _data_files(path: Path) -> tuple[str, ...]:
    """The package's data files a module names in a string: ``"config.schema.yaml"`` or
    ``"data/explorer.html"``, not an artifact path that shares a file name
    (a name in another folder, such as ``"results/{run}/config.schema.yaml"``)."""
    data = SOURCE / "data"
    names = {file.name for file in data.iterdir() if file.is_file()} - {PROMPTS_FILE}
    found = set()
    for child in ast.walk(_tree(path)):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            folder, _, name = child.value.rpartition("/")
            if folder in ("", "data") or folder.endswith("/data"):
                found.add(name)
    return tuple(str(data / name) for name in sorted(names & found))


def _prompt_keys(tree: ast.Module) -> list[str]:
    """The module's ``PROMPT_KEYS``: the prompts.yaml keys its code renders."""
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Name) and t.id == "PROMPT_KEYS" for t in targets):
                assert statement.value is not None
                return list(ast.literal_eval(statement.value))
    return []


@cache
def module_closure(module: str) -> frozenset[str]:
    """``module`` and every package module it imports, directly or not (whole modules)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or module_file(name) is None:
            continue
        seen.add(name)
        todo += _module_imports(name)
    return frozenset(seen)


@cache
def _module_imports(module: str) -> tuple[str, ...]:
    """Package modules imported anywhere in package module ``module`` (parsed once)."""
    path = module_file(module)
    assert path is not None
    return tuple(_imports_in(_tree(path), module))


def _bindings(tree: ast.Module) -> dict[str, ast.stmt]:
    """Module-level names and the statement that binds each (imports, defs, assignments)."""
    bound: dict[str, ast.stmt] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                bound[alias.asname or alias.name.partition(".")[0]] = statement
        elif isinstance(statement, ast.FunctionDef | ast.ClassDef):
            bound[statement.name] = statement
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound[name.id] = statement
    return bound


@cache
def _reached(module: str, names: tuple[str, ...]) -> tuple[frozenset[str], frozenset[Path]]:
    """The modules the top-level ``names`` of command module ``module`` use, and the files of
    the command modules they are defined in (followed through module-level names)."""
    path = module_file(module)
    if path is None:
        raise ValueError(f"{module}: not a module of the package")
    tree = _tree(path)
    bound = _bindings(tree)
    modules = set(module_closure(module.rpartition(".")[0]) if "." in module else ())
    todo = [bound[name] for name in names]
    seen: set[int] = set()
    while todo:
        statement = todo.pop()
        if id(statement) in seen:
            continue
        seen.add(id(statement))
        if isinstance(statement, ast.Import | ast.ImportFrom):
            imported = _imported(statement, module, path)
            modules.update(m for name in imported for m in module_closure(name))
            continue
        for name in _imports_in(statement, module):
            modules.update(module_closure(name))
        used = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
        todo += [bound[name] for name in used if name in bound]
    return frozenset(modules), frozenset({path})


def function_deps(functions: dict[str, tuple[str, ...]]) -> Deps:
    """The dependencies of ``{command module: top-level function names}``, run together."""
    modules: set[str] = set()
    files: set[Path] = set()
    for module, names in functions.items():
        reached, own = _reached(module, names)
        modules |= reached
        files |= own
    trees = [_tree(path) for path in files | {module_file(m) for m in modules}]  # type: ignore[misc]
    keys = [key for tree in trees for key in _prompt_keys(tree)]
    return Deps(_file_names(files, modules), tuple(sorted(set(keys))))


def _file_names(files: set[Path], modules: set[str]) -> tuple[str, ...]:
    """The paths of ``files``, of the package ``modules`` and of the data files they name."""
    paths = {*files, *(module_file(m) for m in modules)}
    data = {name for path in paths for name in _data_files(path)}  # type: ignore[arg-type]
    return tuple(sorted({*map(str, paths), *data}))


def _local_file(module: str) -> Path | None:
    """The file of module ``module`` in the working tree, where a plug-in is imported from:
    under the working directory, or found on ``sys.path`` in one of its folders (such as the
    src/ of an editable install), if it is one. The package's own modules and installed ones
    (an environment inside the tree) are not."""
    base = Path(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    if module == PACKAGE or module.startswith(f"{PACKAGE}."):
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = Path(spec.origin).resolve() if spec and spec.origin else None
    tree = Path.cwd().resolve()
    if origin is None or not origin.is_file() or not origin.is_relative_to(tree):
        return None
    installed = {Path(prefix).resolve() for prefix in (sys.prefix, sys.base_prefix)}
    if any(origin.is_relative_to(prefix) for prefix in installed) or {
        "site-packages",
        "dist-packages",
    } & set(origin.parts):
        return None
    return origin.relative_to(tree)


def plugin_files(target: str) -> tuple[str, ...]:
    """The files plug-in ``module.path:function`` runs: its module and every module of the
    working directory it imports, directly or not (with each package's ``__init__`` on the
    way), and the package modules these import, whole (as for a command). Modules from
    elsewhere (the standard library, installed packages) are no files of the project."""
    local: set[Path] = set()
    modules: set[str] = set()
    seen: set[str] = set()
    todo = _with_parents([target.partition(":")[0]])
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if (path := _local_file(name)) is not None:
            local.add(path)
            todo += [
                imported
                for child in _runtime_nodes(_tree(path.resolve()))  # a project's own file
                if isinstance(child, ast.Import | ast.ImportFrom)
                for imported in _import_names(child, name, path)
            ]
        elif module_file(name):
            modules |= module_closure(name)
    return tuple(sorted({*map(str, local), *_file_names(set(), modules)}))


@cache
def command_deps(command: str) -> Deps:
    """The dependencies of ``selfreflect COMMAND`` (``"answers"``, ``"report main-table"``),
    with the settings and prompts it declares it reads (``reads``)."""
    from selfreflect.commands import find_command
    from selfreflect.errors import InputError

    if not (SOURCE / "__init__.py").is_file():
        raise InputError(
            f"{SOURCE}: not in the working directory {Path.cwd()}; run `selfreflect {command}` "
            "from the project's root (its code hash reads the package's files there)"
        )
    node = find_command(command)
    if node.callback is None:
        raise ValueError(f"'selfreflect {command}': a group, not a command")
    callback = node.callback
    entry_module, entry_names = ENTRY
    functions = {entry_module: entry_names}
    functions[callback.__module__] = (*functions.get(callback.__module__, ()), callback.__name__)
    settings, renders, plugin = getattr(node, "reads", ((), False, False))
    takes_config = any(param.name == "config_path" for param in node.params)
    return replace(
        function_deps(functions),
        settings=settings,
        renders=renders,
        plugin=plugin,
        takes_config=takes_config,
    )


def prompt_texts(keys: Iterable[str]) -> dict[str, Any]:
    """``{key: text}`` of prompts.yaml, for the prompts a job renders."""
    from selfreflect.chat import prompts

    texts = prompts()
    return {key: texts[key] for key in dict.fromkeys(keys)}


def code_digest(paths: str | Iterable[str]) -> str:
    """Content hash of package files and folders (``code`` inputs): as a rule's param it makes
    Snakemake rerun a job whose code changed, as DVC does for the same deps."""
    digest = hashlib.sha256()
    for path in map(Path, [paths] if isinstance(paths, str) else paths):
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file() and "__pycache__" not in file.parts:
                digest.update(file.as_posix().encode())
                digest.update(file.read_bytes())
    return digest.hexdigest()[:16]
