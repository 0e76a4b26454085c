"""The ``selfreflect`` command line: one subcommand per workflow stage.

Snakemake rules and DVC stages call these commands; each reads its parameters by key from the
experiment config and names its inputs and outputs explicitly. Each command lives in its own
module of this package (or of :mod:`selfreflect.bench` and :mod:`selfreflect.docs`), imported
only when it runs (the tables: :mod:`selfreflect.cli.commands`, and :mod:`selfreflect.cli.tools`
for ``bench`` and ``docs``, loaded by name), so editing one command never reruns the jobs of
another, and adding a benchmark or a docs page reruns none. This module is the command line's
top: it builds the groups, and looks a command and its code dependencies up by its words
(:func:`command_deps`, which the workflow's rules are handed in ``workflow/rules/common.smk``).
"""

from __future__ import annotations

import logging
import sys
from functools import cache
from typing import TYPE_CHECKING

import click

from selfreflect import __version__
from selfreflect.cli.commands import COMMANDS, GROUPS, TOOLS, subcommands
from selfreflect.errors import SelfReflectError
from selfreflect.progress import echo_to_stdout, name_job, quiet_bars_in_logs
from selfreflect.registry import load

if TYPE_CHECKING:
    from pathlib import Path

    from selfreflect.code_deps import Deps

# libraries that log every request or lock at INFO: warnings only, unless --verbose
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "openai", "urllib3", "filelock", "huggingface_hub")


class LazyGroup(click.Group):
    """A group whose commands (``{name: "module:function"}``, :mod:`selfreflect.cli.commands`)
    are imported when they run or are listed; ``lazy`` may name a table (``"module:attr"``) to
    load then too."""

    def __init__(self, *args, lazy: dict[str, str] | str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    @property
    def lazy(self) -> dict[str, str]:
        if isinstance(self._lazy, str):
            self._lazy = subcommands(str(self.name), load(self._lazy))
        return self._lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *super().list_commands(ctx)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy:
            return super().get_command(ctx, cmd_name)
        return load(self.lazy[cmd_name])


@click.group(cls=LazyGroup, lazy=subcommands(""))
@click.version_option(__version__, prog_name="selfreflect")
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages and every HTTP request.")
def cli(verbose: bool) -> None:
    """SelfReflect: how well do LLM summaries describe the model's own answer distribution?"""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)
    # the hub prints through a handler of its own: passed on too, each line was printed twice
    logging.getLogger("huggingface_hub").propagate = False
    echo_to_stdout()
    name_job()  # none yet: a command running a job names it


@cli.group("report", cls=LazyGroup, lazy=subcommands("report"))
def report_group() -> None:
    """The paper's tables and figures, and the judge-scored studies behind them."""


@cli.group("bench", cls=LazyGroup, lazy=TOOLS)
def bench_group() -> None:
    """Benchmarks: measure, and record JSON (run from the project's root)."""


@cli.group("docs", cls=LazyGroup, lazy=TOOLS)
def docs_group() -> None:
    """Render the docs from what the benchmarks recorded (run from the project's root)."""


def find_command(command: str) -> click.Command:
    """The click command ``selfreflect COMMAND`` runs (``"answers"``, ``"report main-table"``)."""
    if command in GROUPS:
        return cli.commands[command]
    table = COMMANDS if command in COMMANDS else load(TOOLS)
    if command not in table:
        raise ValueError(f"'selfreflect {command}': no such command")
    return load(table[command])


def command_deps(command: str) -> Deps:
    """What ``selfreflect COMMAND`` depends on (:func:`selfreflect.code_deps.command_deps`),
    its files named as the working directory names the package (``package_dir``)."""
    from selfreflect.code_deps import package_dir

    return _command_deps(command, package_dir())


@cache
def _command_deps(command: str, package: Path) -> Deps:
    """:func:`command_deps` with ``package``, its files' folder, in the key of its cache."""
    from selfreflect.code_deps import command_deps as deps

    return deps(find_command(command), cli)


def main() -> None:
    """Entry point: user errors become one line on stderr and exit status 1."""
    quiet_bars_in_logs()
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as err:
        context = getattr(err, "ctx", None)
        hint = f" (see '{context.command_path} --help')" if context else ""
        click.echo(f"error: {err.format_message()}{hint}", err=True)
        sys.exit(err.exit_code)
    except SelfReflectError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    except OSError as err:  # e.g. an unwritable folder or a full disk, found mid-way
        where = f"{err.filename}: " if err.filename else ""
        click.echo(f"error: {where}{err.strerror or err}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
