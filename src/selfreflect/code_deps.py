"""The package files and prompts a ``selfreflect`` command depends on, derived from its imports.

A command's dependencies start at its own function (and the group every command runs under,
the command line's top, which imports each command's module only when it runs) and follow what
running it loads (:class:`Reach`): a module counts when it
is imported, and importing it runs its top level, so its top-level imports count and so do the
names its top-level statements use; a function's body counts only where the function is named
by code that counts (so an import inside it is as lazy here as it is in Python), a class
counts whole, and a registry's ``load`` counts each of its targets. The ``__init__`` of each
package on the way counts (Python runs it first); ``if TYPE_CHECKING:`` blocks and postponed
annotations run nothing. A counted module's file counts whole, with the data files it names
(``"config.schema.yaml"``).
``prompts.yaml`` is no code dependency: each module that renders prompt texts declares their
keys in ``PROMPT_KEYS`` (strategies in :data:`selfreflect.strategies.registry.PROMPTS`), and a
job depends on those texts alone (its params), so editing one prompt reruns only the jobs that
render it.

A plug-in strategy (``summaries.plugins``) is code of the jobs running it: its module, the
working directory's modules it imports (directly or not) and what these use of the package.

The analysis is static (``ast``) and reads the files of the package that runs; its result for a
command is stored in the user's cache folder (:data:`CACHE_DIR`) under a hash of every file of
that package (:func:`function_deps`), as each ``snakemake`` call derives every rule's code
inputs again. It names them
as the working directory does (:func:`package_dir`): ``src/selfreflect/…`` in a checkout (the
paths DVC's deps name), their full paths where the workflow runs elsewhere (as a Snakemake
module, on an installed copy); a plug-in's modules are read in the working directory. A code
hash names each package file by its path in the source tree, so the same code hashes alike,
checked out or installed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import click

from selfreflect import chat
from selfreflect.strategies.plugins import project_module_file

PACKAGE = "selfreflect"
SOURCE = Path("src") / PACKAGE  # the package's folder in the project (DVC's deps, code hashes)
PROMPTS_FILE = SOURCE / chat.PROMPTS_FILE  # tracked per key (params), not as code
SCHEMA_FILE = "/data/config.schema.yaml"  # tracked by its settings' values, not as a job's code


@dataclass(frozen=True)
class Deps:
    """What a command depends on: package files (repository paths) and prompts.yaml keys, and
    what it declares it reads of the config (its ``reads``: settings, prompts, plug-in), and
    whether it takes the config file at all (``--config``)."""

    files: tuple[str, ...]
    prompt_keys: tuple[str, ...]
    settings: tuple[str | Callable[..., Any], ...] = ()
    renders: bool | Callable[[Mapping[str, str]], list[str]] = False
    plugin: bool = False
    takes_config: bool = False

    @property
    def job_files(self) -> tuple[str, ...]:
        """The files a job's outputs depend on (Snakemake's code input and hash, DVC's deps,
        the keys of caches and checkpoints): all but the config schema. A job reads the schema
        for what it checks and the defaults it fills in, and those defaults are in its params
        already (the config every job reads is resolved), so an edited description or check
        reruns no job; a changed default reruns the jobs reading that setting. The params check
        (the ``dvc_yaml`` stage), whose output is whether params.yaml is the config the schema
        resolves, keeps it (:attr:`files`)."""
        return tuple(f for f in self.files if not f.endswith(SCHEMA_FILE))

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


_HERE = Path(__file__).resolve().parent  # the package that runs, where the analysis reads it


def package_dir() -> Path:
    """The folder of the package as the working directory names it in deps: :data:`SOURCE`
    where the working directory has the package's source (a checkout, a DVC project linking
    one's, a copy of the project whose commands run its own), else the full path of the package
    that runs (an installed copy, as where the workflow runs as a Snakemake module from another
    folder). The analysis itself reads the files of the package that runs, so what it keeps
    between calls holds in any working directory."""
    return SOURCE if (Path.cwd() / SOURCE).is_dir() else _HERE


@cache
def module_file(module: str) -> Path | None:
    """The file (full path) of package module ``module`` (``selfreflect.scoring.forwards``), if
    it is one."""
    if module != PACKAGE and not module.startswith(f"{PACKAGE}."):
        return None
    base = _HERE.joinpath(*module.split(".")[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _path(module: str) -> Path:
    """The file of package module ``module``, which is one."""
    path = module_file(module)
    assert path is not None, module
    return path


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _import_names(statement: ast.Import | ast.ImportFrom, module: str, path: Path) -> list[str]:
    """The modules an import statement in ``module`` (file ``path``) may load (a ``from``
    import's names may be submodules), with the packages above them."""
    if isinstance(statement, ast.Import):
        names = [alias.name for alias in statement.names]
    else:
        base = _from_base(statement, module, path)
        names = [base, *(f"{base}.{alias.name}" for alias in statement.names)]
    return _with_parents(names)


def _from_base(statement: ast.ImportFrom, module: str, path: Path) -> str:
    """The module a ``from … import`` statement in ``module`` (file ``path``) imports from."""
    if not statement.level:
        return statement.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(statement.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{statement.module}" if statement.module else package


def _with_parents(names: list[str]) -> list[str]:
    """``names`` after the packages above them (``a``, ``a.b`` before ``a.b.c``)."""
    parents = [".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 1)]
    return list(dict.fromkeys([*parents, *names]))


def _imported(statement: ast.Import | ast.ImportFrom, module: str, path: Path) -> list[str]:
    """Package modules an import statement in ``module`` loads, with the packages above them."""
    return [name for name in _import_names(statement, module, path) if module_file(name)]


def _registry_targets(module: str, statement: ast.stmt | None, name: str) -> list[tuple[str, str]]:
    """The ``(module, attribute)`` targets of the :class:`~selfreflect.registry.Registry` that
    ``statement`` of package module ``module`` binds to ``name``: built there
    (``NAME = Registry(kind, {name: "module:attribute"})``) or imported from the module that
    builds it, wherever that is; none where it binds no registry."""
    if isinstance(statement, ast.ImportFrom):
        base = _from_base(statement, module, _path(module))
        for alias in statement.names:
            if (alias.asname or alias.name) == name and module_file(base):
                return _registry_targets(base, _bindings(base).get(alias.name), alias.name)
        return []
    if not (
        isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Call)
        and ast.unparse(statement.value.func) == "Registry"
    ):
        return []
    strings = [
        node.value.partition(":")
        for node in ast.walk(statement.value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value
    ]
    return [(target, attribute) for target, _, attribute in strings if module_file(target)]


def _registry_in(module: str, name: str, nodes: list[ast.AST]) -> list[tuple[str, str]]:
    """The targets of the registry ``name`` is in code ``nodes`` of ``module``: imported in
    that code (inside a function), else module-level there."""
    local = [
        child
        for child in nodes
        if isinstance(child, ast.ImportFrom)
        and any((alias.asname or alias.name) == name for alias in child.names)
    ]
    return _registry_targets(module, local[0] if local else _bindings(module).get(name), name)


_DATA_NAME = re.compile(r"\w[\w.-]*(/\w[\w.-]*)*")  # a path in data/, never out of it


@cache
def _data_files(path: Path) -> tuple[Path, ...]:
    """The package's data files and folders a module names in a string, by their path in
    ``data/``: ``"config.schema.yaml"``, ``"data/explorer.html"``, the folder ``"captions"``;
    not an artifact path that shares a file name (a name in another folder, such as
    ``"results/{run}/config.schema.yaml"``)."""
    data = _HERE / "data"
    named = set()
    for child in ast.walk(_tree(path)):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            folder, _, name = child.value.rpartition("data/")
            name = name.strip("/")
            if (not folder or folder.endswith("/")) and _DATA_NAME.fullmatch(name):
                named.add(data / name)
    return tuple(sorted(p for p in named if p != _HERE / chat.PROMPTS_FILE and p.exists()))


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
def _bindings(module: str) -> dict[str, ast.stmt]:
    """Module-level names of package module ``module`` and the statement that binds each
    (imports, defs, assignments; also inside top-level ``if``/``try`` blocks)."""
    path = _path(module)
    bound: dict[str, ast.stmt] = {}
    for statement in _top_level(_tree(path).body):
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                bound[alias.asname or alias.name.partition(".")[0]] = statement
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound[statement.name] = statement
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound[name.id] = statement
    return bound


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a module runs at import, out of their ``if``/``try``/``with`` blocks
    (not ``if TYPE_CHECKING:``'s), each block's test or items excepted."""
    for statement in body:
        if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test):
            yield from _top_level(statement.orelse)
        elif isinstance(statement, ast.If | ast.Try | ast.With | ast.For | ast.While):
            yield statement  # the block itself: its test, items or iterable run too
            for field in ("body", "orelse", "finalbody"):
                yield from _top_level(getattr(statement, field, []))
            for handler in getattr(statement, "handlers", []):
                yield from _top_level(handler.body)
        else:
            yield statement


class Reach:
    """The package modules a command loads (their files run) and the module-level names it
    uses, followed from names it runs (:meth:`name`).

    Loading a module runs its top level: its imports load their modules, and its statements
    run, but a function's body (and so an import inside it) only counts where its name is
    used: by a statement that runs, or in a body that counts. A class counts whole where its
    name is used (its methods may run on any of its objects), and ``X.load(name)`` of a
    registry counts every target (:class:`selfreflect.registry.Registry`, wherever it is built).
    ``module.name`` counts
    ``name`` of that module; any other attribute is an object's and counts nothing more.
    """

    def __init__(self) -> None:
        self.loaded: set[str] = set()
        self._named: set[tuple[str, str]] = set()
        self._followed: set[int] = set()

    def load(self, module: str) -> None:
        """Import package module ``module``: the packages above it first, then its top level."""
        if module in self.loaded or module_file(module) is None:
            return
        self.loaded.add(module)
        for parent in _with_parents([module])[:-1]:
            self.load(parent)
        path = _path(module)
        for statement in _top_level(_tree(path).body):
            self._run(module, statement)

    def name(self, module: str, name: str) -> None:
        """Use the module-level ``name`` of package module ``module`` (its submodule, or what
        its ``__getattr__`` hands out, where it binds none)."""
        if (module, name) in self._named or module_file(module) is None:
            return
        self._named.add((module, name))
        self.load(module)
        statement = _bindings(module).get(name)
        if statement is None:
            if module_file(f"{module}.{name}"):
                self.load(f"{module}.{name}")
            elif "__getattr__" in _bindings(module):
                self.name(module, "__getattr__")
        elif isinstance(statement, ast.ImportFrom):
            base = _from_base(statement, module, _path(module))
            for alias in statement.names:
                if (alias.asname or alias.name) == name and not module_file(f"{base}.{alias.name}"):
                    self.name(base, alias.name)  # a name handed on; a module: its attributes
        elif not isinstance(statement, ast.Import):
            self._follow(module, statement)

    def _run(self, module: str, statement: ast.stmt) -> None:
        """What loading ``module`` runs of one of its top-level ``statement``s."""
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for imported in _imported(statement, module, _path(module)):
                self.load(imported)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for node in _header(statement):
                self._follow(module, node)
            if isinstance(statement, ast.ClassDef):  # its body runs; its methods' bodies wait
                for inner in statement.body:
                    if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                        for node in _header(inner):
                            self._follow(module, node)
                    else:
                        self._follow(module, inner)
        elif isinstance(statement, ast.If | ast.Try | ast.With | ast.For | ast.While):
            for field in ("test", "items", "iter"):
                for node in _as_list(getattr(statement, field, None)):
                    self._follow(module, node)
        else:
            self._follow(module, statement)

    def _follow(self, module: str, node: ast.AST) -> None:
        """Count what running ``node`` (code of ``module``) may use (:func:`_uses`)."""
        if id(node) in self._followed:
            return
        self._followed.add(id(node))
        for used, name in _uses(module, node):
            if name is None:
                self.load(used)
            else:
                self.name(used, name)

    def files(self) -> tuple[str, ...]:
        """The paths of the loaded modules and of the data files they name."""
        return _file_names(self.loaded)

    def prompt_keys(self) -> tuple[str, ...]:
        """The prompts.yaml keys the loaded modules declare (``PROMPT_KEYS``)."""
        trees = [_tree(_path(m)) for m in self.loaded]
        return tuple(sorted({key for tree in trees for key in _prompt_keys(tree)}))


Use = tuple[str, str | None]  # (module, None): the module loads; (module, name): name is used
_USES: dict[tuple[str, int], tuple[Use, ...]] = {}


def _uses(module: str, node: ast.AST) -> tuple[Use, ...]:
    """What running ``node`` (code of ``module``) may use: the modules it imports, the
    module-level names it names, directly or as ``module.name``. Kept for the process, as the
    parsed trees are (:func:`_tree`): every command's analysis walks the modules they share."""
    key = (module, id(node))
    if key not in _USES:
        _USES[key] = tuple(dict.fromkeys(_find_uses(module, node)))
    return _USES[key]


def _find_uses(module: str, node: ast.AST) -> Iterator[Use]:
    path = _path(module)
    bound = _bindings(module)
    bases: set[int] = set()  # names read as a module's attribute's base
    nodes = [node, *_evaluated_nodes(node, _lazy_annotations(module))]
    for child in nodes:
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield from ((imported, None) for imported in _imported(child, module, path))
            if isinstance(child, ast.ImportFrom):
                base = _from_base(child, module, path)
                yield from ((base, alias.name) for alias in child.names)
        elif isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name):
            if child.attr == "load":
                yield from _registry_in(module, child.value.id, nodes)
            if (target := _module_bound(module, child.value.id)) is not None:
                bases.add(id(child.value))
                yield from _attribute_uses(target, child, nodes)
    for child in nodes:
        if isinstance(child, ast.Name) and child.id in bound and id(child) not in bases:
            target = _module_bound(module, child.id)
            if target is None:
                yield module, child.id
            else:  # a module handed on whole
                yield from ((target, name) for name in _bindings(target))


def _attribute_uses(module: str, node: ast.Attribute, nodes: list[ast.AST]) -> Iterator[Use]:
    """What ``module.attr`` uses (and on through submodules: ``package.module.attr``)."""
    submodule = f"{module}.{node.attr}"
    if not module_file(submodule):
        yield module, node.attr
        return
    yield submodule, None
    outer = [n for n in nodes if isinstance(n, ast.Attribute) and n.value is node]
    for attribute in outer:
        yield from _attribute_uses(submodule, attribute, nodes)
    if not outer:
        yield from ((submodule, name) for name in _bindings(submodule))


def _header(definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """What defining a function or class runs: its decorators, defaults or bases."""
    nodes: list[ast.AST] = list(definition.decorator_list)
    if isinstance(definition, ast.ClassDef):
        return nodes + definition.bases + definition.keywords
    defaults = [*definition.args.defaults, *definition.args.kw_defaults]
    return nodes + [default for default in defaults if default is not None]


def _as_list(value: Any) -> list[ast.AST]:
    return [] if value is None else value if isinstance(value, list) else [value]


@cache
def _lazy_annotations(module: str) -> bool:
    """Whether ``module``'s annotations are never evaluated (``from __future__ import
    annotations``)."""
    path = _path(module)
    return any(
        isinstance(s, ast.ImportFrom)
        and s.module == "__future__"
        and any(a.name == "annotations" for a in s.names)
        for s in _tree(path).body
    )


_ANNOTATIONS = ("annotation", "returns")  # fields of arguments, defs and AnnAssign


def _evaluated_nodes(node: ast.AST, lazy_annotations: bool = False) -> Iterator[ast.AST]:
    """``ast.walk`` without ``if TYPE_CHECKING:`` blocks (they import nothing at run time),
    and without annotations where they are never evaluated (``lazy_annotations``)."""
    todo = [node]
    while todo:
        current = todo.pop()
        for field, value in ast.iter_fields(current):
            if lazy_annotations and field in _ANNOTATIONS:
                continue
            for child in _as_list(value):
                if not isinstance(child, ast.AST):
                    continue
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    yield from child.orelse
                    todo += child.orelse
                else:
                    yield child
                    todo.append(child)


def _module_bound(module: str, name: str) -> str | None:
    """The package module that module-level ``name`` of ``module`` is, if it is one."""
    statement = _bindings(module).get(name)
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname == name:
                return alias.name if module_file(alias.name) else None
            if alias.asname is None and alias.name.partition(".")[0] == name:
                return name if module_file(name) else None
    elif isinstance(statement, ast.ImportFrom):
        base = _from_base(statement, module, _path(module))
        for alias in statement.names:
            if (alias.asname or alias.name) == name and module_file(f"{base}.{alias.name}"):
                return f"{base}.{alias.name}"
    return None


# where function_deps keeps what it derived, per state of the package (the user's cache folder)
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / PACKAGE / "code-deps"
_KEPT_STATES = 8  # the newest files of CACHE_DIR kept: a few checkouts' or branches' packages


@cache
def _package_digest(package: Path) -> str:
    """Content hash of the files of ``package`` (each named by its path in it) and of the
    Python that parses them: what the analysis of the commands of the package reads."""
    digest = hashlib.sha256(sys.version.encode())
    for file in _files(package):
        digest.update(file.relative_to(package).as_posix().encode() + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


@cache
def _stored_deps(shown: Path) -> tuple[Path, dict[str, list[list[str]]]]:
    """The file holding the stored analyses of this package's state with its files named under
    ``shown`` (:func:`package_dir`), and what it holds (nothing where it is missing or
    unreadable)."""
    key = hashlib.sha256(f"{_package_digest(_HERE)}\0{shown}".encode()).hexdigest()[:16]
    path = CACHE_DIR / f"{key}.json"
    try:
        return path, json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return path, {}


def _store(path: Path, stored: dict[str, list[list[str]]]) -> None:
    """Write ``stored`` to ``path`` atomically, the oldest other states' files removed; a cache
    folder that cannot be written only leaves the analysis to be done again."""
    from selfreflect.errors import InputError
    from selfreflect.fileio import write_json

    try:
        write_json(path, stored)
        states = sorted(CACHE_DIR.glob("*.json"), key=lambda file: file.stat().st_mtime)
        for old in states[:-_KEPT_STATES]:
            old.unlink(missing_ok=True)
    except (InputError, OSError):  # write_json names the file it could not write
        pass


def function_deps(functions: dict[str, tuple[str, ...]]) -> Deps:
    """The dependencies of ``{package module: top-level names}``, run together (stored for the
    package's state: :func:`_stored_deps`)."""
    path, stored = _stored_deps(package_dir())
    key = json.dumps(sorted(functions.items()))
    if key not in stored:
        deps = _function_deps(functions)
        stored[key] = [list(deps.files), list(deps.prompt_keys)]
        _store(path, stored)
    files, prompt_keys = stored[key]
    return Deps(tuple(files), tuple(prompt_keys))


def _function_deps(functions: dict[str, tuple[str, ...]]) -> Deps:
    """:func:`function_deps`, derived."""
    reach = Reach()
    for module, names in functions.items():
        if module_file(module) is None:
            raise ValueError(f"{module}: not a module of the package")
        for name in names:
            reach.name(module, name)
    return Deps(reach.files(), reach.prompt_keys())


def _file_names(modules: set[str]) -> tuple[str, ...]:
    """The paths of the package ``modules`` and of the data files they name."""
    paths = {_path(m) for m in modules}
    data = {name for path in paths for name in _data_files(path)}
    shown = package_dir()
    return tuple(sorted(str(shown / path.relative_to(_HERE)) for path in paths | data))


def plugin_files(target: str) -> tuple[str, ...]:
    """The files plug-in ``module.path:function`` runs: its module and every module of the
    working directory it imports, directly or not (with each package's ``__init__`` on the
    way), whole, and what these use of the package (as for a command: :class:`Reach`).
    Modules from elsewhere (the standard library, installed packages) are no files of the
    project."""
    local: set[Path] = set()
    reach = Reach()
    seen: set[str] = set()
    todo = _with_parents([target.partition(":")[0]])
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if (path := project_module_file(name)) is not None:
            local.add(path)
            for child in _evaluated_nodes(_tree(path.resolve())):  # a project's own file
                if isinstance(child, ast.Import | ast.ImportFrom):
                    todo += _import_names(child, name, path)
                if isinstance(child, ast.ImportFrom) and not child.level:
                    for alias in child.names:  # what it uses of the package
                        reach.name(child.module or "", alias.name)
        elif module_file(name):
            reach.load(name)
    return tuple(sorted({*map(str, local), *reach.files()}))


def command_deps(command: click.Command, top: click.Group) -> Deps:
    """The dependencies of running the click ``command`` under the group ``top`` (the command
    line's), with the settings and prompts it declares it reads (``reads``)."""
    if isinstance(command, click.Group) or command.callback is None:
        raise ValueError(f"'{command.name}': a group, not a command")
    functions: dict[str, tuple[str, ...]] = {}
    for function in (top.callback, command.callback):
        assert function is not None
        module = function.__module__
        functions[module] = (*functions.get(module, ()), function.__name__)
    settings, renders, plugin = getattr(command, "reads", ((), False, False))
    takes_config = any(param.name == "config_path" for param in command.params)
    return replace(
        function_deps(functions),
        settings=settings,
        renders=renders,
        plugin=plugin,
        takes_config=takes_config,
    )


def running_command_deps() -> Deps:
    """The dependencies of the ``selfreflect`` command running now (click's context)."""
    context = click.get_current_context()
    top = context.find_root().command
    assert isinstance(top, click.Group)
    return command_deps(context.command, top)


def prompt_texts(keys: Iterable[str]) -> dict[str, Any]:
    """``{key: text}`` of prompts.yaml, for the prompts a job renders."""
    texts = chat.prompts()
    return {key: texts[key] for key in dict.fromkeys(keys)}


def code_digest(paths: str | Iterable[str]) -> str:
    """Content hash of package files and folders (``code`` inputs): as a rule's param it makes
    Snakemake rerun a job whose code changed, as DVC does for the same deps. A package file is
    named by its path in the source tree (``src/selfreflect/…``), wherever the package is."""
    root = package_dir()
    digest = hashlib.sha256()
    for path in map(Path, [paths] if isinstance(paths, str) else paths):
        for file in _files(path):
            name = SOURCE / file.relative_to(root) if file.is_relative_to(root) else file
            digest.update(name.as_posix().encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def _files(path: Path) -> Iterator[Path]:
    """The file ``path``, or every file below the folder ``path`` in order, bytecode caches
    left out."""
    for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
        if file.is_file() and "__pycache__" not in file.parts:
            yield file


def job_identity(settings: Any, *specs: dict[str, Any]) -> dict[str, Any]:
    """What the results of the model job running now depend on besides its input rows: its
    ``settings``, the files and ``models`` entries of its models (``specs``), and the running
    ``selfreflect`` command's code and prompts. Caches and checkpoints are keyed by it, so a
    rerun after any of these changed never reuses a result of the old ones."""
    from selfreflect.provenance import model_fingerprint

    deps = running_command_deps()
    return {
        "models": [model_fingerprint(spec["path"]) for spec in specs],
        "specs": list(specs),
        "settings": settings,
        "code": code_digest(deps.job_files),
        "prompts": prompt_texts(deps.prompt_keys),
    }
