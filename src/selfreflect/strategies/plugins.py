"""User strategies: one function ``fn(ctx: Context) -> str`` named ``module.path:function``.

The module is a file of the project (:func:`project_module_file`), never the standard
library's or an installed package's. Checking a config (``snakemake -n`` too) reads it without
running it (:func:`check_plugin`); only a job running its strategy imports it, with the working
directory on ``sys.path``. It and the modules it imports from there are code of its strategy's
jobs (:func:`selfreflect.code_deps.plugin_files`), so an edit reruns its summaries and what
follows them. The function is called once per question; it
can run the summariser (``ctx.chat`` or the raw ``ctx.generator``) and draw fresh answers from
the subject (``ctx.fresh_answers()``). Raising :class:`QuestionFailed` fails just that question;
any other exception fails the strategy, naming it.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from selfreflect.errors import SelfReflectError, StrategyError

if TYPE_CHECKING:  # a plug-in's context names no engine: the summarize job opens the models
    from selfreflect.backends import Generator, Sampling
    from selfreflect.chat import Message
    from selfreflect.strategies.context import Batch, StrategyFn

T = TypeVar("T")
_PACKAGE = __name__.partition(".")[0]  # its own modules are no plug-in's


class QuestionFailed(Exception):
    """Raised by a plug-in (or its context) to fail one question with a reason."""


class Context:
    """What a plug-in gets for one question: its text, the summariser, fresh subject answers."""

    def __init__(self, batch: Batch, row: int) -> None:
        self.question: str = batch.questions[row]
        self._batch = batch
        self._row = row

    @property
    def generator(self) -> Generator:
        """The summariser's generation handle (its calls are not metered)."""
        return self._batch.models.summarizer()

    def chat(self, messages: list[Message], sampling: Sampling | None = None) -> str:
        """The summariser's first completion of ``messages``: greedy summary decoding by default."""
        batch, row = self._batch, self._row
        if sampling is None:
            return self._get(batch.summarize({row: messages}))
        generator = batch.models.summarizer()
        return self._get(batch.generate(generator, {row: messages}, lambda _: sampling))[0]

    def fresh_answers(self) -> list[str]:
        """``num_fresh_answers`` new answers of the subject to the question (T=1)."""
        return self._get(self._batch.fresh_answers([self._row]))

    def _get(self, by_row: dict[int, T]) -> T:
        if self._row not in by_row:
            raise QuestionFailed(self._batch.errors[self._row])
        return by_row[self._row]


def project_module_file(module: str) -> Path | None:
    """The file of module ``module`` in the working tree, where a plug-in is imported from:
    under the working directory, or in one of its folders on ``sys.path`` (such as the src/ of
    an editable install), if it is one; found without importing anything. The package's own
    modules and installed ones (an environment inside the tree) are not."""
    base = Path(*module.split("."))
    for path in _module_paths(base):
        if path.is_file():
            return path
    if module == _PACKAGE or module.startswith(f"{_PACKAGE}."):
        return None
    tree = Path.cwd().resolve()
    for folder in _tree_folders(tree):
        for path in _module_paths(folder / base):
            if path.is_file():
                return path.relative_to(tree)
    return None


def _module_paths(base: Path) -> tuple[Path, Path]:
    """Where module ``base`` (its dotted name as a path) may live: a package or a file."""
    return base / "__init__.py", base.with_suffix(".py")


def _tree_folders(tree: Path) -> list[Path]:
    """The folders of ``sys.path`` inside the working tree ``tree``, environments left out; one
    inside the target of a link at the tree's top (a config's DVC project, whose links lead to
    the checkout's folders) by its path through the link."""
    installed = {Path(prefix).resolve() for prefix in (sys.prefix, sys.base_prefix)}
    links = {entry.resolve(): entry for entry in tree.iterdir() if entry.is_symlink()}
    folders = []
    for entry in sys.path:
        folder = Path(entry or ".").resolve()
        if folder == tree or any(folder.is_relative_to(prefix) for prefix in installed):
            continue
        if {"site-packages", "dist-packages"} & set(folder.parts):
            continue
        if folder.is_relative_to(tree):
            folders.append(folder)
        elif linked := _through_links(folder, links):
            folders.append(linked)
    return folders


def _through_links(folder: Path, links: dict[Path, Path]) -> Path | None:
    """``folder`` by its path through the first of ``links`` (``{target: link}``) whose target
    holds it."""
    held = (
        link / folder.relative_to(to) for to, link in links.items() if folder.is_relative_to(to)
    )
    return next(held, None)


def check_plugin(name: str, target: str) -> Path:
    """The file of plug-in ``target``'s module, checked without running it: a module of the
    project that parses and defines the function at its top level."""
    module, _, function = target.partition(":")
    prefix = f"strategy '{name}': plug-in {target}"
    path = project_module_file(module)
    if path is None:
        raise StrategyError(
            f"{prefix}: module '{module}' is no .py file of the project ({Path.cwd()}); a"
            " plug-in is the project's code, not Python's or an installed package's"
        )
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as err:
        raise StrategyError(f"{prefix}: {path}:{err.lineno}: {err.msg}") from None
    bindings = [callable_ for name, callable_ in _top_level_names(tree.body) if name == function]
    if not bindings:
        raise StrategyError(f"{prefix}: {path} defines no '{function}' at its top level")
    if not any(bindings):
        raise StrategyError(f"{prefix}: {path} binds '{function}' to a value, not a function")
    return path


# values no call can be made of: a name bound only to these is no function
_LITERALS = (
    ast.Constant,
    ast.JoinedStr,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
)


def _top_level_names(body: list[ast.stmt]) -> Iterator[tuple[str, bool]]:
    """The names a module's top level binds (in its ``if``, ``try`` and ``with`` blocks too),
    each with whether what it binds may be called (not a literal)."""
    for statement in body:
        match statement:
            case ast.FunctionDef() | ast.AsyncFunctionDef() | ast.ClassDef():
                yield statement.name, True
            case ast.Assign(targets=targets, value=value):
                for target in targets:  # one unpacked from a literal may be a function
                    whole = isinstance(target, ast.Name) and isinstance(value, _LITERALS)
                    names = (n.id for n in ast.walk(target) if isinstance(n, ast.Name))
                    yield from ((name, not whole) for name in names)
            case ast.AnnAssign(target=ast.Name(id=name), value=value) if value is not None:
                yield name, not isinstance(value, _LITERALS)
            case ast.Import(names=aliases) | ast.ImportFrom(names=aliases):
                names = ((alias.asname or alias.name).partition(".")[0] for alias in aliases)
                yield from ((name, True) for name in names)
            case ast.If() | ast.With():
                yield from _top_level_names([*statement.body, *getattr(statement, "orelse", [])])
            case ast.Try():
                handled = [line for handler in statement.handlers for line in handler.body]
                blocks = [*statement.body, *handled, *statement.orelse, *statement.finalbody]
                yield from _top_level_names(blocks)


def load_plugin(name: str, target: str) -> Callable[[Context], str]:
    """Import ``module.path:function`` from the project (:func:`check_plugin` first); an
    import failure names the strategy."""
    path = check_plugin(name, target)
    module_name, _, function = target.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # importing runs the module: any error means it cannot be loaded
        reason = " ".join(f"{type(err).__name__}: {err}".split())
        raise StrategyError(f"strategy '{name}': cannot load plug-in {target}: {reason}") from None
    if module.__file__ is None or Path(module.__file__).resolve() != path.resolve():
        raise StrategyError(
            f"strategy '{name}': plug-in {target}: the module imported is {module.__file__},"
            f" not {path} (a module of that name was imported first)"
        )
    fn = getattr(module, function, None)
    if not callable(fn):
        raise StrategyError(f"strategy '{name}': plug-in {target} is not a function")
    return fn


def raised_at(err: BaseException) -> str:
    """``file:line`` where ``err`` was raised (the innermost frame; the file relative to the
    working directory where it lies below it)."""
    import traceback

    from selfreflect.fileio import shown_path

    frame = traceback.extract_tb(err.__traceback__)[-1]
    return f"{shown_path(frame.filename)}:{frame.lineno}"


def plugin_strategy(name: str, target: str) -> StrategyFn:
    """A batch strategy that calls the plug-in once per question."""
    fn = load_plugin(name, target)

    def run(batch: Batch) -> dict[int, str]:
        summaries = {}
        for row in batch.rows():  # the summaries job's checkpoints report the progress
            try:
                summary = fn(Context(batch, row))
            except QuestionFailed as failure:
                batch.fail(row, str(failure))
                continue
            except SelfReflectError:  # the context's model calls: the error names its cause
                raise
            except Exception as err:
                raise StrategyError(
                    f"strategy '{name}': plug-in {target} raised {type(err).__name__}: {err}"
                    f" at {raised_at(err)} (question: {batch.questions[row]!r})"
                ) from err
            if not isinstance(summary, str):
                raise StrategyError(
                    f"strategy '{name}': plug-in {target} returned {type(summary).__name__},"
                    " not a summary string"
                )
            summaries[row] = summary
        return summaries

    return run
