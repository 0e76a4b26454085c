"""Screenshots of a run's explorer page for the docs, taken in the system's headless Chromium.

    selfreflect bench explorer-screenshots results/laptop/explorer docs/images

writes ``explorer-questions.png`` (the question table, sorted by the first strategy's score) and
``explorer-question.png`` (the first question's page: answers, summaries, coloured words).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click

VIEWPORT = {"width": 1400, "height": 900}


def screenshots(explorer: Path, out_dir: Path) -> list[Path]:
    """Open the explorer folder ``explorer`` offline and save its two views as PNGs in
    ``out_dir``."""
    from selfreflect.errors import InputError

    if not (explorer / "index.html").is_file():
        raise InputError(f"{explorer}: no index.html (not an explorer folder)")
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise click.ClickException("no system Chromium (Debian: apt-get install chromium)")
    out_dir.mkdir(parents=True, exist_ok=True)
    table, question = out_dir / "explorer-questions.png", out_dir / "explorer-question.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto((explorer / "index.html").resolve().as_uri())
        page.click("#questions th[data-key^='score:']")  # sort by the first strategy's score
        page.screenshot(path=table)
        page.click("#questions tbody tr:first-child")
        page.wait_for_selector("#detail .word")  # its data file loaded, the page drawn
        page.screenshot(path=question)
        browser.close()
    return [table, question]


@click.command()
@click.argument("explorer", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
def explorer_screenshots(explorer: Path, out_dir: Path) -> None:
    """Screenshots of a run's explorer (EXPLORER: its explorer folder) for the docs, taken
    in the system's headless Chromium: explorer-questions.png and explorer-question.png in
    OUT_DIR."""
    for path in screenshots(explorer, out_dir):
        print(f"wrote {path}")
