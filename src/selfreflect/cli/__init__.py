"""The ``selfreflect`` command line: one subcommand per workflow stage.

Snakemake rules and DVC stages call these commands; each reads its parameters by key from the
experiment config and names its inputs and outputs explicitly. Each command lives in its own
module of this package, imported only when it runs: a command's code dependencies
(:mod:`selfreflect.code_deps`) are its own module and what that imports, so editing one command
never reruns the jobs of another.
"""

from __future__ import annotations

import importlib
import logging
import sys

import click

from selfreflect.errors import SelfReflectError

# libraries that log every request or lock at INFO: warnings only, unless --verbose
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "openai", "urllib3", "filelock", "huggingface_hub")
COMMANDS = {  # command name: the module under selfreflect.cli and its function
    "tiny-model": "tiny_model:tiny_model",
    "convert-model": "convert_model:convert_model",
    "questions": "questions:questions",
    "answers": "answers:answers",
    "merge": "merge:merge",
    "summarize": "summarize:summarize",
    "score": "score:score",
    "judge": "judge:judge",
    "strategy-scores": "strategy_scores:strategy_scores",
    "report": "report:report",
    "finetune-data": "finetune_data:finetune_data",
    "finetune-train": "finetune_train:finetune_train",
    "explorer": "explorer:explorer",
    "export-answers": "export_answers:export_answers",
    "import-answers": "import_answers:import_answers",
    "dvc-yaml": "dvc_yaml:dvc_yaml",
    "config-docs": "config_docs:config_docs",
    "bench": "bench:bench",  # benchmarks and doc renderers, no workflow stage
}


class LazyGroup(click.Group):
    """A group whose commands (``{name: "module:function"}`` under ``package``) are imported
    when they run or are listed, the lazy loading the click documentation describes."""

    def __init__(self, *args, package: str, lazy: dict[str, str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.package, self.lazy = package, lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*super().list_commands(ctx), *self.lazy]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy:
            return super().get_command(ctx, cmd_name)
        module, _, function = self.lazy[cmd_name].partition(":")
        return getattr(importlib.import_module(f"{self.package}.{module}"), function)


def find_command(words: list[str]) -> tuple[click.Command, list[str]]:
    """The command ``selfreflect WORDS…`` runs, and the leading words that name it."""
    node: click.Command = cli
    named: list[str] = []
    for word in words:
        found = (
            node.get_command(click.Context(node), word) if isinstance(node, click.Group) else None
        )
        if found is None:
            break
        node, named = found, [*named, word]
    return node, named


@click.group(cls=LazyGroup, package=__name__, lazy=COMMANDS)
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages and every HTTP request.")
def cli(verbose: bool) -> None:
    """SelfReflect: how well do LLM summaries describe the model's own answer distribution?"""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)


def main() -> None:
    """Entry point: user errors become one line on stderr and exit status 1."""
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
