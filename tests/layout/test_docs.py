"""The docs stay a short README plus docs/, cite only what exists, and link only to real files.

A path a page names in backticks (``rules/docs/<id>.md``) must be a tracked file or folder:
``<name>`` stands for one path segment, ``*`` for part of one, ``{a,b}`` for either word,
``[-fr]`` for an optional piece and ``NNNN`` for a number, and such a pattern must match at
least one tracked path.
"""

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
_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
#: A pattern's pieces in a named path, and what each matches (see the module docstring).
_PIECES = re.compile(r"<[^<>/]+>|\{[^{}/]+\}|\[[^\[\]/]+\]|\*|N{2,}")


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


def doc_pages() -> list[Path]:
    """The pages whose named paths are checked: README.md, docs/, the rules pages and the
    hardware notes."""
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "rules" / "docs").glob("*.md")),
        *sorted((ROOT / "hardware").glob("*.md")),
    ]


def named_paths(text: str, roots: set[str]) -> list[str]:
    """The repository paths a Markdown text names in backticks, outside fenced code blocks:
    each word of a code span with a ``/`` whose first segment is one of ``roots`` (a command
    such as ``bash deploy/dev.sh test tests/layout`` names two)."""
    found = []
    for span in _SPAN.finditer(_FENCE.sub("", text)):
        for word in span.group(2).split():
            word = word.split("=", 1)[-1].strip("\"'(),;:")
            word = re.sub(r"(::\w+|:\d+)$", "", word)
            if "/" in word and word.split("/", 1)[0] in roots:
                found.append(word)
    return found


def _path_regex(named: str) -> re.Pattern[str]:
    """A named path as a regular expression over repository paths (its folders' too)."""
    out, at = [], 0
    for piece in _PIECES.finditer(named):
        out.append(re.escape(named[at : piece.start()]))
        p = piece.group()
        if p.startswith("<"):
            out.append(r"[^/]+")
        elif p.startswith("{"):
            out.append("(?:" + "|".join(re.escape(w) for w in p[1:-1].split(",")) + ")")
        elif p.startswith("["):
            out.append("(?:" + re.escape(p[1:-1]) + ")?")
        elif p == "*":
            out.append(r"[^/]*")
        else:
            out.append(r"[0-9]+")
        at = piece.end()
    out.append(re.escape(named[at:].rstrip("/")))
    return re.compile("".join(out))


def missing_paths(text: str, folder: str, files: list[str]) -> list[str]:
    """The paths ``text`` (a page in ``folder``) names that match no file or folder of
    ``files`` (repository paths), read from the repository's root or from ``folder``."""
    known = set(files) | {f.rsplit("/", k)[0] for f in files for k in range(1, f.count("/") + 1)}
    prefix = f"{folder}/" if folder else ""
    local = {f[len(prefix) :] for f in known if prefix and f.startswith(prefix)}
    roots = {f.split("/", 1)[0] for f in known | local}
    missing = []
    for named in named_paths(text, roots):
        pattern = _path_regex(named)
        if not any(pattern.fullmatch(p) for p in known | local):
            missing.append(named)
    return missing


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
    """Every relative link in README.md, docs/, rules/docs/ and hardware/ points to a file
    that exists."""
    pages = doc_pages()
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


def test_every_repository_path_a_doc_names_exists() -> None:
    """Every repository path README.md, docs/, rules/docs/ and hardware/ name in backticks
    is a tracked file or folder (a pattern matches one)."""
    files = [p.relative_to(ROOT).as_posix() for p in tracked("*")]
    missing = []
    for page in doc_pages():
        folder = page.parent.relative_to(ROOT).as_posix().strip(".")
        named = missing_paths(page.read_text(encoding="utf-8"), folder, files)
        missing += [f"{page.relative_to(ROOT)}: {m}" for m in named]
    assert not missing, "paths named in docs that the repository lacks:\n" + "\n".join(missing)


def test_the_path_check_sees_a_missing_path() -> None:
    """A named path the repository lacks is reported; patterns, commands, a test's
    ``::name``, paths from the page's own folder and words that are not paths pass."""
    files = [
        "rules/docs/incognito.md",
        "tests/support/golden.py",
        "tests/platform/golden/display/incognito-fr-start.png",
        "tests/platform/golden/si-5p/p1/0003.png",
        "hardware/keysets/default.toml",
        "deploy/build.sh",
    ]
    text = (
        "`rules/docs/<id>.md` `rules/docs/{incognito,gone}.md` `tests/support/golden.py::x`\n"
        "`bash deploy/dev.sh test tests/support` `keysets/default.toml` `a/b` `3/4` `/etc/x`\n"
        "`tests/platform/golden/display/<game>[-fr]-{start,final}.png` `tests/platform/`\n"
        "`tests/platform/golden/<run>/p<N>/NNNN.png` `tests/platform/golden.py`\n"
        "`rules/docs/secret-identity.md` `rules/docs/<id>.txt` `tests/*/golden.py`\n"
        "```\n`tests/in/a/fence.py`\n```\n"
    )
    assert missing_paths(text, "hardware", files) == [
        "deploy/dev.sh",
        "tests/platform/golden.py",
        "rules/docs/secret-identity.md",
        "rules/docs/<id>.txt",
    ]
    assert missing_paths(text, "", files) == [
        "deploy/dev.sh",
        "tests/platform/golden.py",
        "rules/docs/secret-identity.md",
        "rules/docs/<id>.txt",
    ]
