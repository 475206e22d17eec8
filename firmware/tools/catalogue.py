"""Keep the message catalogues in step with the code (a developer tool; needs Babel).

    python -m firmware.tools.catalogue update    # extract, merge into each coffre.po, compile
    python -m firmware.tools.catalogue check     # what is missing, untranslated or unused

Message ids are extracted from ``rules/`` and ``firmware/`` wherever the code writes
``_("...")``, ``N_("...")``, ``plural("...", "...", n)`` or ``IllegalAction("...")``.
The English catalogue's texts start as their ids (less a ``|context`` suffix that
tells two uses of one English word apart, as in ``Red|short``) and may then be reworded by hand
without touching the code; the French ones are written by hand. ``update`` keeps
every text already written, adds new ids (untranslated in French: ``check`` then
fails), drops unused ones and compiles each ``coffre.po`` to the ``coffre.mo`` the
package ships.

``update`` on code and catalogues that already agree changes no file, whatever Babel runs
it: the plural rules are the project's (:data:`PLURAL_FORMS`), not the ones Babel's CLDR
data suggests, and a catalogue is written only when its texts or rules changed.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

from firmware.link.lang import DOMAIN, LANGUAGES, LOCALE_DIR

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("rules", "firmware")
KEYWORDS = {"_": None, "N_": None, "plural": (1, 2), "IllegalAction": None}

MsgId = str | tuple[str, ...]

#: Each language's plural rule, as gettext reads it from the compiled catalogue. Two forms,
#: singular and plural, are what ``plural()`` and the catalogues give; Babel 2.19's CLDR
#: data adds a third French form (exact millions: "1 000 000 de gemmes"), which no count at
#: a table reaches and which would leave every French plural with an empty third text.
PLURAL_FORMS = {"en": "nplurals=2; plural=(n != 1);", "fr": "nplurals=2; plural=(n > 1);"}


def extracted() -> dict[MsgId, list[str]]:
    """Every message id the code uses, with where it is used."""
    found: dict[MsgId, list[str]] = {}
    for folder in SOURCES:
        for path, line, msgid, _comments, _context in extract_from_dir(
            ROOT / folder, method_map=[("**.py", "python")], keywords=KEYWORDS
        ):
            found.setdefault(msgid, []).append(f"{folder}/{path}:{line}")
    return found


def dynamic_refusals() -> Iterator[str]:
    """Refusals written as f-strings: their text cannot be in a catalogue."""
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", None) in ("IllegalAction", "_")
                    and node.args
                    and isinstance(node.args[0], ast.JoinedStr)
                ):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}"


def po_path(code: str) -> Path:
    return LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"


def load(code: str) -> Catalog:
    path = po_path(code)
    if not path.exists():
        return Catalog(locale=code, domain=DOMAIN)
    with path.open("rb") as f:
        return read_po(f, locale=code, domain=DOMAIN)


def key(msgid: MsgId) -> str:
    return msgid if isinstance(msgid, str) else msgid[0]


def problems() -> list[str]:
    """What keeps the catalogues from matching the code (empty when all is well)."""
    used = {key(m) for m in extracted()}
    out = [f"{where}: refusal text built at run time" for where in dynamic_refusals()]
    for code in LANGUAGES:
        cat = load(code)
        have = {m.id if isinstance(m.id, str) else m.id[0]: m for m in cat if m.id}
        for msgid in sorted(used - set(have)):
            out.append(f"{code}: no text for {msgid!r}")
        for msgid in sorted(set(have) - used):
            out.append(f"{code}: unused {msgid!r}")
        for msgid, msg in sorted(have.items()):
            texts = msg.string if isinstance(msg.string, tuple) else (msg.string,)
            if msgid in used and not all(texts):
                out.append(f"{code}: {msgid!r} is not translated")
    return out


def update() -> None:
    """Merge the code's ids into every catalogue and compile them."""
    found = extracted()
    for code in LANGUAGES:
        old = load(code)
        new = Catalog(locale=code, domain=DOMAIN, project="coffre", fuzzy=False)
        new.mime_headers = [("Plural-Forms", PLURAL_FORMS[code])]
        for msgid, where in sorted(found.items(), key=lambda kv: key(kv[0])):
            prior = old.get(msgid if isinstance(msgid, str) else msgid[0])
            same_form = prior is not None and isinstance(prior.id, tuple) == isinstance(
                msgid, tuple
            )
            string: Any = prior.string if prior is not None and same_form else ""
            if code == "en" and not (string if isinstance(string, str) else all(string)):
                string = english(msgid)
            new.add(
                msgid,
                string,
                locations=[(w.rsplit(":", 1)[0], int(w.rsplit(":", 1)[1])) for w in where],
            )
        path = po_path(code)
        if not path.exists() or texts(new) != texts(old):
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as f:
                write_po(f, new, width=100, omit_header=False, no_location=True, sort_output=True)
        compile_one(code)


def texts(cat: Catalog) -> tuple[str, list[tuple[Any, ...]]]:
    """What a catalogue says: its plural rule and each id's text and flags (not the dates
    and Babel version of its header)."""
    rows = [(_plain(m.id), _plain(m.string), sorted(m.flags), m.context) for m in cat if m.id]
    return cat.plural_forms, sorted(rows, key=lambda row: (key(row[0]), repr(row)))


def _plain(text: Any) -> Any:
    return tuple(text) if isinstance(text, list | tuple) else text


def english(msgid: MsgId) -> MsgId:
    """The English text an id starts with: itself, less any ``|context`` suffix."""
    if isinstance(msgid, tuple):
        return tuple(english(m) for m in msgid)  # type: ignore[misc]
    return msgid.split("|", 1)[0]


def compile_one(code: str) -> None:
    """Compile ``code``'s catalogue, unless its ``.mo`` already says the same."""
    cat = load(code)
    mo = po_path(code).with_suffix(".mo")
    if mo.exists():
        with mo.open("rb") as f:
            compiled = read_mo(f)
        if _compiled(compiled) == _compiled(cat):
            return
    with mo.open("wb") as f:
        write_mo(f, cat, use_fuzzy=False)


def _compiled(cat: Catalog) -> tuple[str, dict[Any, Any]]:
    """What gettext reads from a compiled catalogue: the plural rule, each id's text."""
    return cat.plural_forms, {_plain(m.id): _plain(m.string) for m in cat if m.id}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m firmware.tools.catalogue")
    parser.add_argument("command", choices=["update", "compile", "check"])
    args = parser.parse_args(argv)
    if args.command == "update":
        update()
    elif args.command == "compile":
        for code in LANGUAGES:
            compile_one(code)
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
