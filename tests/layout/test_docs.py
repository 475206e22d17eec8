"""The docs stay a short README plus docs/, cite only what exists, and link only to real files."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 200
PAGES = (
    "architecture.md",
    "host-guide.md",
    "running-a-table.md",
    "venue.md",
    "config.md",
    "i18n.md",
    "goldens.md",
    "benchmarks.md",
    "adding-a-game.md",
)
#: A digest the repository does not hold: citations go to rules/docs/<game>.md or the rulebook.
MISSING_DIGEST = "RULES" + ".md"

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)


def tracked(*patterns: str) -> list[Path]:
    """The repository's files matching ``patterns`` (git's list; the tree without git)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", *patterns],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        return [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [
            p
            for pattern in patterns
            for p in ROOT.rglob(pattern)
            if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
        ]


def links(text: str) -> list[str]:
    """Every link target of a Markdown text, outside fenced code blocks."""
    prose = _FENCE.sub("", text)
    return _LINK.findall(prose) + _HTML.findall(prose)


def broken_links(page: Path) -> list[str]:
    """The relative link targets of ``page`` whose file does not exist."""
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # a URL (http:, mailto:) or an anchor on the same page
        path = target.split("#", 1)[0].split("?", 1)[0]
        if not (page.parent / path).exists():
            broken.append(target)
    return broken


def test_readme_is_short() -> None:
    """README.md stays at most 200 lines: the rest lives in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"


def test_docs_pages_exist() -> None:
    """Every page the README points into docs/ for exists."""
    missing = [name for name in PAGES if not (ROOT / "docs" / name).is_file()]
    assert not missing, f"docs/ lacks {', '.join(missing)}"


def test_no_citation_of_a_missing_digest() -> None:
    """No tracked .py or .md file cites RULES.md: the repository has no such file."""
    this = Path(__file__).resolve()
    citing = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in tracked("*.py", "*.md")
        if path.resolve() != this and path.is_file()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if MISSING_DIGEST in line
    ]
    assert not citing, f"cite rules/docs/<game>.md or the rulebook instead: {citing}"


def test_relative_links_point_to_files() -> None:
    """Every relative link in README.md and docs/*.md points to a file that exists."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [f"{page.relative_to(ROOT)}: {b}" for page in pages for b in broken_links(page)]
    assert not broken, f"links to missing files: {broken}"


def test_link_check_sees_a_broken_link(tmp_path: Path) -> None:
    """The link check reports a missing file and ignores URLs, anchors and code blocks."""
    page = tmp_path / "page.md"
    page.write_text(
        "[gone](nowhere.md) [here](page.md#top) [web](https://example.org) [a](#b)\n"
        '<img src="missing.png">\n```\n[in code](absent.md)\n```\n',
        encoding="utf-8",
    )
    assert broken_links(page) == ["nowhere.md", "missing.png"]
