"""Comments and docs say why the code is as it is now, not how it came to be.

A reader of the product has no issue tracker and no memory of earlier versions: a line
that names an issue, a pass of work on it, or what the code used to do ("(was 11)",
"as before") tells them nothing they can check. Each phrase below is one that only
history uses; ordinary English ("what was played", "no longer listed") is left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The product's code, scripts and docs (translations are players' words, not comments).
SCANNED = ("firmware", "rules", "device", "deploy", "docs", "hardware", "README.md")
TEXT = {".py", ".md", ".sh", ".service", ".path", ".toml", ".txt", ".js", ".css", ".html"}

_ORDINAL = (
    r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))"
)
HISTORY = {
    "names an issue": re.compile(r"\bissues? #?\d+", re.I),
    "names a pass of work": re.compile(rf"\b{_ORDINAL} pass\b|\bpass(?:es)? of issue", re.I),
    "until a change": re.compile(r"\buntil (?:issue|its \w+ pass|the fix|the change)\b", re.I),
    "'as before'": re.compile(r"\bas before\b", re.I),
    "what it was: '(was ...)'": re.compile(r"[(;] ?was [\"'\d]", re.I),
    "what it was: 'was \"...\"'": re.compile(r"\bwas [\"'“][^\"'”]*[\"'”]\)", re.I),
    "'used to'": re.compile(r"\bused to (?:be|do|say|send|draw|cost|take|read|write|run)\b", re.I),
    "'previously' / 'formerly'": re.compile(r"\b(?:previously|formerly)\b", re.I),
    "an earlier version": re.compile(
        r"\b(?:the|an?) (?:old|earlier|previous) (?:code|version|implementation)\b", re.I
    ),
}


def product_files() -> list[Path]:
    found = []
    for name in SCANNED:
        top = ROOT / name
        found += [top] if top.is_file() else sorted(top.rglob("*"))
    return [p for p in found if p.suffix in TEXT and p.is_file()]


def history_lines(path: Path) -> list[str]:
    """Each line of ``path`` that tells history, with its number and what it does."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for what, pattern in HISTORY.items():
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()}")
    return found


def test_comments_and_docs_tell_no_history() -> None:
    files = product_files()
    assert len(files) > 100, "the product's files were not found"
    hits = [hit for path in files for hit in history_lines(path)]
    assert not hits, "say why the code is as it is now:\n" + "\n".join(hits)


def test_each_pattern_catches_the_history_it_is_for() -> None:
    """Each pattern finds a line of the kind it is for, and none of plain English."""
    told = {
        "names an issue": "Starting a thread (until issue 27's sixth pass) cost 260 us",
        "names a pass of work": "11 and 62 before the sixth pass",
        "until a change": "it also looked twice, until its sixth pass",
        "'as before'": "every connection checks the certificate, as before.",
        "what it was: '(was ...)'": "the timer is 3 ticks (was 11)",
        "what it was: 'was \"...\"'": 'its points said ("Grn +2, total 6"; was "Grn +2=6")',
        "'used to'": "the hub used to send one message per table",
        "'previously' / 'formerly'": "previously the poll slept four times",
        "an earlier version": "the old code flushed the FIFO each time",
    }
    plain = [
        "what was played last is shown",
        "tables no longer listed lose their users",
        "Turn {n}: was {key}, not {answer}",
        "a key is used to sign the broker's certificate",
        "the store that was there is kept beside it",
    ]
    assert told.keys() == HISTORY.keys()
    for what, line in told.items():
        assert HISTORY[what].search(line), what
    for line in plain:
        assert not any(p.search(line) for p in HISTORY.values()), line
