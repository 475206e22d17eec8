"""English words on a French screen: the texts a table speaks, word by word.

A word "leaks" when it is written in English somewhere (a catalogue text, a card of the
generic Identités cryptées set) and in no French text at all (so "ID", "Laser" or
"Incognito", the same in both, never count), and is not the start of a French word (a
name cut to fit the glass: "Pistol" for "Pistolet").
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po

from firmware.link.lang import LOCALE_DIR

CARDS = Path(__file__).parents[2] / "rules" / "data" / "identites-cryptees" / "generic.json"
WORD = re.compile(r"[^\W\d_]{3,}")


def _texts(language: str) -> Iterator[str]:
    with (LOCALE_DIR / language / "LC_MESSAGES" / "coffre.po").open("rb") as f:
        for message in read_po(f):
            if message.id:
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                yield from (s for s in strings if s)
    data = json.loads(CARDS.read_text(encoding="utf-8"))
    for pile in ("ids", "loyalty", "programs", "weapons"):
        for card in data[pile]:
            for field in ("name", "text"):
                words: Any = card.get(field)
                if isinstance(words, dict) and language in words:
                    yield words[language]


def _words(texts: Iterator[str]) -> set[str]:
    # Fields ({seat}) are not words; "|context" suffixes are not shown.
    return {w.lower() for t in texts for w in WORD.findall(re.sub(r"\{\w*\}", " ", t))}


@functools.cache
def french_words() -> frozenset[str]:
    return frozenset(_words(_texts("fr")))


@functools.cache
def english_only() -> frozenset[str]:
    return frozenset(_words(_texts("en")) - french_words())


def leaks(text: str) -> set[str]:
    """The English-only words in ``text`` (a French screen or page)."""
    found = {w.lower() for w in WORD.findall(text)} & english_only()
    return {w for w in found if not any(f.startswith(w) for f in french_words())}
