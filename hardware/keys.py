"""Key sets: which NFC tag UID is which physical key or card.

A key set is a TOML file (format in ``hardware/README.md``)::

    name = "my table"
    colours = ["red", "yellow", ...]      # optional, default COLOURS

    [[key]]
    uid = "04:A1:0B:3C:5D:6E:80"          # 4, 7 or 10 bytes, any of ":" "-" " " between
    kind = "vote"                          # vote | mystery | card
    colour = "red"
    number = 1

The registry lives on the hub: stations only send raw UIDs up.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

# The eight Secret Identity colours (the rulebook names rouge, jaune, vert, bleu, violet,
# blanc; the box's other two are black and orange), as English ids.
COLOURS: tuple[str, ...] = (
    "red",
    "yellow",
    "green",
    "blue",
    "black",
    "purple",
    "orange",
    "white",
)
KINDS: tuple[str, ...] = ("vote", "mystery", "card")
UID_LENGTHS: tuple[int, ...] = (4, 7, 10)  # bytes: single, double, triple size (ISO 14443-3)

_SEPARATORS = re.compile(r"[:\- ]")
_HEX = re.compile(r"[0-9A-F]*")


class KeySetError(ValueError):
    """A key set file is malformed or ambiguous."""


def normalise_uid(uid: str) -> str:
    """Upper-case hex without separators; ValueError if not 4, 7 or 10 bytes of hex."""
    text = _SEPARATORS.sub("", uid.strip()).upper()
    if not text or _HEX.fullmatch(text) is None:
        raise ValueError(f"UID {uid!r} is not hex")
    if len(text) % 2 or len(text) // 2 not in UID_LENGTHS:
        raise ValueError(
            f"UID {uid!r} is {len(text) / 2:g} bytes, not {', '.join(map(str, UID_LENGTHS))}"
        )
    return text


@dataclass(frozen=True)
class Key:
    """One tagged object: a vote key (colour + number), a mystery key (number) or a card."""

    kind: str  # "vote" | "mystery" | "card"
    colour: str | None = None
    number: int | None = None

    @property
    def label(self) -> str:
        """Short human name: "red 3", "mystery 5", "card blue 2"."""
        parts: list[str] = []
        if self.kind != "vote":
            parts.append(self.kind)
        if self.colour is not None:
            parts.append(self.colour)
        if self.number is not None:
            parts.append(str(self.number))
        return " ".join(parts)

    def __str__(self) -> str:
        return self.label


class KeySet(Mapping[str, Key]):
    """UID -> Key, read-only. Iterates UIDs (normalised) in file order."""

    def __init__(
        self,
        keys: Mapping[str, Key],
        *,
        name: str = "",
        colours: tuple[str, ...] = COLOURS,
    ) -> None:
        self.name = name
        self.colours = colours
        self._by_uid: dict[str, Key] = {}
        self._by_key: dict[Key, str] = {}
        for raw, key in keys.items():
            uid = normalise_uid(raw)
            _check_key(key, colours)
            if uid in self._by_uid:
                raise KeySetError(f"UID {uid} is listed twice")
            if key in self._by_key:
                raise KeySetError(f"{key.label} has two UIDs: {self._by_key[key]} and {uid}")
            self._by_uid[uid] = key
            self._by_key[key] = uid

    def check_colours(self, colours: Iterable[str], where: str) -> None:
        """Raise KeySetError naming the first of ``colours`` this set has no keys for."""
        for colour in colours:
            if colour not in self.colours:
                raise KeySetError(
                    f"{where}: the key set has no {colour} keys "
                    f"(its colours: {', '.join(self.colours)})"
                )

    def lookup(self, uid: str) -> Key | None:
        """The key with this UID (any case, separators allowed), or None if unknown."""
        try:
            return self._by_uid.get(normalise_uid(uid))
        except ValueError:
            return None

    def uid_for(self, kind: str, colour: str | None = None, number: int | None = None) -> str:
        """The UID of a key; KeyError if the set has no such key."""
        key = Key(kind, colour, number)
        try:
            return self._by_key[key]
        except KeyError:
            raise KeyError(f"no {key.label} in key set {self.name!r}") from None

    def __getitem__(self, uid: str) -> Key:
        key = self.lookup(uid)
        if key is None:
            raise KeyError(uid)
        return key

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_uid)

    def __len__(self) -> int:
        return len(self._by_uid)

    def __repr__(self) -> str:
        return f"<KeySet {self.name!r}: {len(self)} keys>"


def _check_key(key: Key, colours: tuple[str, ...]) -> None:
    if key.kind not in KINDS:
        raise KeySetError(f"kind {key.kind!r} is not one of {', '.join(KINDS)}")
    if key.colour is not None and key.colour not in colours:
        raise KeySetError(f"colour {key.colour!r} is not in the set's colours")
    if key.number is not None and not 0 <= key.number <= 99:
        raise KeySetError(f"number {key.number} is outside 0..99")
    if key.kind == "vote" and (key.colour is None or key.number is None):
        raise KeySetError("a vote key needs a colour and a number")
    if key.kind == "mystery" and (key.colour is not None or key.number is None):
        raise KeySetError("a mystery key has a number and no colour")
    if key.kind == "card" and key.colour is None and key.number is None:
        raise KeySetError("a card needs a colour, a number or both")


def _entry(raw: Any, colours: tuple[str, ...], where: str) -> tuple[str, Key]:
    if not isinstance(raw, dict):
        raise KeySetError(f"{where}: expected a table")
    unknown = set(raw) - {"uid", "kind", "colour", "number"}
    if unknown:
        raise KeySetError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    uid, kind = raw.get("uid"), raw.get("kind")
    colour, number = raw.get("colour"), raw.get("number")
    if not isinstance(uid, str):
        raise KeySetError(f"{where}.uid: missing or not a string")
    if not isinstance(kind, str):
        raise KeySetError(f"{where}.kind: missing or not a string")
    if colour is not None and not isinstance(colour, str):
        raise KeySetError(f"{where}.colour: not a string")
    if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
        raise KeySetError(f"{where}.number: not an integer")
    try:
        key = Key(kind, colour, number)
        _check_key(key, colours)
        return normalise_uid(uid), key
    except ValueError as exc:
        raise KeySetError(f"{where} ({uid}): {exc}") from None


def parse_keyset(data: Mapping[str, Any], source: str = "key set") -> KeySet:
    """Build a KeySet from parsed TOML, with errors naming the entry at fault."""
    try:
        unknown = set(data) - {"name", "colours", "key", "format"}
        if unknown:
            raise KeySetError(f"unknown top-level key {sorted(unknown)[0]!r}")
        if data.get("format", 1) != 1:
            raise KeySetError(f"format {data['format']!r} is not 1")
        name = data.get("name", "")
        if not isinstance(name, str):
            raise KeySetError("name: not a string")
        raw_colours = data.get("colours", list(COLOURS))
        if not isinstance(raw_colours, list) or not all(isinstance(c, str) for c in raw_colours):
            raise KeySetError("colours: expected a list of strings")
        colours = tuple(raw_colours)
        if len(set(colours)) != len(colours):
            raise KeySetError("colours: a colour is listed twice")
        entries = data.get("key", [])
        if not isinstance(entries, list):
            raise KeySetError("key: expected [[key]] entries")
        keys: dict[str, Key] = {}
        where_of: dict[str, str] = {}
        for i, raw in enumerate(entries, start=1):
            where = f"key #{i}"
            uid, key = _entry(raw, colours, where)
            if uid in keys:
                raise KeySetError(f"{where}: UID {uid} already used by {where_of[uid]}")
            keys[uid] = key
            where_of[uid] = f"{where} ({key.label})"
        return KeySet(keys, name=name, colours=colours)
    except KeySetError as exc:
        raise KeySetError(f"{source}: {exc}") from None


def load_keyset(path: str | Path | None = None) -> KeySet:
    """Load a key set file (None: the packaged default virtual set)."""
    if path is None:
        resource = resources.files("hardware") / "keysets" / "default.toml"
        text, source = resource.read_text(encoding="utf-8"), "keysets/default.toml"
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise KeySetError(f"{source}: cannot read ({exc.strerror})") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KeySetError(f"{source}: not valid TOML ({exc})") from exc
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise KeySetError(f"{source}: not valid TOML (nested too deep)") from None
    return parse_keyset(data, source)


def dump_keyset(keys: KeySet) -> str:
    """The TOML text of a key set, readable back by ``load_keyset``."""
    lines = ["format = 1", f"name = {_toml_str(keys.name)}"]
    lines.append("colours = [" + ", ".join(_toml_str(c) for c in keys.colours) + "]")
    for uid, key in keys.items():
        lines += ["", "[[key]]", f'uid = "{uid}"', f'kind = "{key.kind}"']
        if key.colour is not None:
            lines.append(f"colour = {_toml_str(key.colour)}")
        if key.number is not None:
            lines.append(f"number = {key.number}")
    return "\n".join(lines) + "\n"


def _toml_str(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def standard_keys(
    colours: tuple[str, ...] = COLOURS, votes: int = 8, mysteries: int = 8
) -> list[Key]:
    """The physical keys of a Secret Identity box: votes 1..n per colour, then mystery keys."""
    return [Key("vote", c, n) for c in colours for n in range(1, votes + 1)] + [
        Key("mystery", None, n) for n in range(1, mysteries + 1)
    ]


class KeyLearner:
    """Builds a key set by tapping tags one after another (the ``coffre keys learn`` flow).

    Pure bookkeeping: the caller shows ``prompt``, feeds each tapped UID to ``offer`` and
    writes ``dump_keyset(learner.keyset())`` at the end.
    """

    def __init__(
        self, wanted: list[Key], *, name: str = "", colours: tuple[str, ...] = COLOURS
    ) -> None:
        for key in wanted:
            _check_key(key, colours)
        self.wanted = list(wanted)
        self.name = name
        self.colours = colours
        self.learned: dict[str, Key] = {}
        self._index = 0

    @property
    def next(self) -> Key | None:
        """The key to tap now, or None when every wanted key has been handled."""
        return self.wanted[self._index] if self._index < len(self.wanted) else None

    @property
    def prompt(self) -> str:
        """What to show the person tapping."""
        key = self.next
        return "All keys learnt" if key is None else f"Tap {key.label}"

    def offer(self, uid: str) -> tuple[bool, str]:
        """Take ``uid`` for the key asked for; (False, reason) if it cannot be."""
        key = self.next
        if key is None:
            return False, "All keys learnt"
        try:
            uid = normalise_uid(uid)
        except ValueError as exc:
            return False, str(exc)
        if uid in self.learned:
            return False, f"That tag is {self.learned[uid].label}"
        self.learned[uid] = key
        self._index += 1
        return True, f"{key.label}: {uid}"

    def skip(self) -> None:
        """Leave the key asked for out of the set."""
        if self.next is not None:
            self._index += 1

    def undo(self) -> None:
        """Forget the last key learnt (or skipped) and ask for it again."""
        if self._index == 0:
            return
        self._index -= 1
        key = self.wanted[self._index]
        for uid, learnt in list(self.learned.items()):
            if learnt == key:
                del self.learned[uid]

    def resume(self, keys: Mapping[str, Key]) -> int:
        """Take the keys of an earlier, interrupted session; ask for the first one missing.

        Returns how many were taken (keys not wanted now are left out).
        """
        taken = 0
        for uid, key in keys.items():
            if key in self.wanted and key not in self.learned.values():
                self.learned[uid] = key
                taken += 1
        known = set(self.learned.values())
        self._index = next(
            (i for i, key in enumerate(self.wanted) if key not in known), len(self.wanted)
        )
        return taken

    def keyset(self) -> KeySet:
        """The key set learnt so far."""
        return KeySet(self.learned, name=self.name, colours=self.colours)
