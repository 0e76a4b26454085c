"""The docs renderer: ``selfreflect docs NAME`` writes a page of ``docs/`` (or a rendered span of
README.md) from what a benchmark recorded as JSON.

One module per page builds the page's context from its JSON; its prose is a jinja2 template
under ``templates/``; its tables come from :mod:`selfreflect.docs.tables`. ``--check`` renders
and compares without writing. No workflow command imports this package, so editing a page
reruns no job. Run from the project's root (the paths are relative to it).
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import click

TEMPLATES = Path(__file__).parent / "templates"
SPAN = re.compile(r"(<!-- rendered: ([\w-]+) -->\n).*?(<!-- /rendered -->)", re.DOTALL)


def fmt(value: Any, spec: str) -> str:
    """The template filter ``{{ x | fmt(".2f") }}``: Python's ``format(x, spec)``."""
    return format(value, spec)


@cache
def environment():
    """The templates' jinja2 environment: text, not HTML (nothing escaped), a name missing
    from the context an error, a block tag's line left out of the page."""
    import jinja2

    from selfreflect.docs.tables import frame_table, table

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["fmt"] = fmt
    env.globals.update(table=table, frame_table=frame_table)
    return env


def render(template: str, **context: Any) -> str:
    """The text of ``templates/<template>`` filled with ``context``."""
    return environment().get_template(template).render(**context)


def publish(page: str | os.PathLike, text: str, check: bool, command: str) -> None:
    """Write ``text`` to ``page``; with ``check``, write nothing and fail with one line naming
    the page and ``command`` (the ``selfreflect`` command that renders it) if it differs."""
    from selfreflect.fileio import write_text

    page = Path(page)
    if check:
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            raise click.ClickException(f"{page}: stale; run selfreflect {command}")
        return
    write_text(page, text)


def fill(text: str, rendered: dict[str, str]) -> str:
    """``text`` with each rendered span named in ``rendered`` replaced by its text there (the
    spans other commands render left as they are)."""
    return SPAN.sub(lambda m: m[1] + rendered[m[2]] + m[3] if m[2] in rendered else m[0], text)
