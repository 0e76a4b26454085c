"""The README is a front page and the documentation's links hold: the README is at most 200
lines, its Quick start is two commands, every page under docs/ is reachable from it, and every
relative link of the README and the docs pages names a file that exists (and, into a Markdown
file, a heading it has)."""

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md")), REPO / "docs" / "science" / "README.md"]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.DOTALL | re.MULTILINE)
CODE = re.compile(r"`[^`]+`")


def prose(text: str) -> str:
    """The text without its fenced code blocks and code spans (no links there)."""
    return CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading (a code span's text kept, its backticks dropped)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file."""
    found: set[str] = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            base = slug(match[1])
            anchor, k = base, 0
            while anchor in found:
                k += 1
                anchor = f"{base}-{k}"
            found.add(anchor)
    return found


def links(path: Path) -> list[str]:
    """The relative links and images of a Markdown file (web and mail addresses left out)."""
    found = LINK.findall(prose(path.read_text(encoding="utf-8")))
    return [link for link in found if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def target(page: Path, link: str) -> tuple[Path, str]:
    """The file and anchor a relative link of `page` points to."""
    name, _, anchor = link.partition("#")
    return ((page.parent / name).resolve() if name else page), anchor


def test_the_readme_is_a_front_page_of_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail into docs/"


def test_the_quick_start_is_two_commands():
    text = README.read_text(encoding="utf-8")
    after = text[text.index("\n## Quick start\n") :]
    block = re.search(r"^```[^\n]*\n(.*?)^```", after, re.DOTALL | re.MULTILINE)
    commands = [line for line in block[1].splitlines() if line.strip() and not line.startswith("#")]
    assert commands == [
        "bash scripts/install.sh && snakemake --configfile config/laptop.yaml --cores all"
        " --resources gpu=1",
        "bash scripts/install.sh && python3 -m pytest",
    ]


def test_the_rendered_spans_stay_in_the_readme():
    """`selfreflect docs performance`, `docs paper-run` and `docs configs` rewrite these spans
    of README.md."""
    text = README.read_text(encoding="utf-8")
    for name in ("real-model-run", "readme", "paper-run", "configs"):
        assert f"<!-- rendered: {name} -->\n" in text, name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_names_an_existing_file_and_heading(page: Path):
    broken = []
    for link in links(page):
        path, anchor = target(page, link)
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{link}: no heading #{anchor} in {path.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_every_docs_page_is_reachable_from_the_readme():
    """Every Markdown page under docs/ (the science records' own folders aside) is linked from
    the README, directly or through pages it links."""
    seen, todo = {README.resolve()}, [README.resolve()]
    while todo:
        page = todo.pop()
        for link in links(page):
            path, _ = target(page, link)
            if path.suffix == ".md" and path.is_file() and path not in seen:
                seen.add(path)
                todo.append(path)
    pages = {path.resolve() for path in PAGES}
    assert not sorted(str(p.relative_to(REPO)) for p in pages - seen)


def test_every_section_of_a_moved_page_is_linked_from_the_readme():
    """Each page holding sections that were the README's is linked from it, and so is every
    section heading of those pages below the page's title."""
    readme = set(links(README))
    moved = ["layout", "configuration", "strategies", "scoring", "explorer", "reports", "dvc"]
    moved += ["answer-sets", "scaling"]
    for name in moved:
        page = REPO / "docs" / f"{name}.md"
        assert f"docs/{name}.md" in readme, name
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for heading in re.findall(r"^## (.+)$", text, re.MULTILINE):
            assert f"docs/{name}.md#{slug(heading)}" in readme, (name, heading)
    assert "docs/science/README.md" in readme
