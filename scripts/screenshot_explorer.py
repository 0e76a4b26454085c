"""Screenshots of a run's explorer page for the docs, taken in the system's headless Chromium.

    python3 scripts/screenshot_explorer.py results/laptop/explorer.html docs/images

writes ``explorer-questions.png`` (the question table, sorted by the first strategy's score) and
``explorer-question.png`` (the first question's page: answers, summaries, coloured words).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

VIEWPORT = {"width": 1400, "height": 900}


def screenshots(explorer: Path, out_dir: Path) -> list[Path]:
    """Open ``explorer`` offline and save its two views as PNGs in ``out_dir``."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("error: no system Chromium (Debian: apt-get install chromium)")
    out_dir.mkdir(parents=True, exist_ok=True)
    table, question = out_dir / "explorer-questions.png", out_dir / "explorer-question.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(explorer.resolve().as_uri())
        page.click("#questions th[data-key^='score:']")  # sort by the first strategy's score
        page.screenshot(path=table)
        page.click("#questions tbody tr:first-child")
        page.screenshot(path=question)
        browser.close()
    return [table, question]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("explorer", type=Path, help="a run's explorer.html")
    parser.add_argument("out_dir", type=Path, help="folder for the PNG files")
    args = parser.parse_args()
    for path in screenshots(args.explorer, args.out_dir):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
