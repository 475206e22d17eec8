"""Ultra Secret at a physical table (RULES.md §4, table binding).

Every choice is a knob menu shown only under the flap (the ``secret`` part of the
seat's own screen): turn to move the cursor, press to choose. No NFC card is
needed for this game (the box's cards stay in the box; the hub keeps them).

- Hide (setup): pick the suitcase card, then the briefcase card, then where the
  locker card goes (F1 or B1); "< Back" undoes a step.
- Phase 1: pass, declare (offered once the sheet is complete, or always with
  ``declare=any``), or place the bug on a hotel or G square; a complete sheet
  offers only the declaration (RULES.md §4 Decision).
- Phase 2 (and each flight turn): the knob IS the coordinate dial: it offers only
  the open squares (strict; every code of the physical dial with ``dial=free``);
  a press locks the square in. The dial shows only under the flap.
- Phase 3: pass (informant stays) or post the informant on a hotel, F1 or B1.
- Search: an agent alone where it can act picks a search (both bags / one bag,
  the lockers to open, the mole cards to spend) or passes.
- File: the fugitive picks a pseudonym for each enemy colour, then the place of
  the formula card it takes unseen (a hotel bag, a full locker at F1/B1, or a G
  square; the cursor starts where the sheet saw the true formula), then confirms.
- The investigation sheet is the seat's secret: the last item of every menu,
  "Sheet >", opens it; the knob then turns its pages and a press goes back to the
  menu. With nothing to choose, the knob turns the sheet's pages directly.
  Cursor, page, mode and the steps already picked live in ``table.ui``.
- Seats go by the game's colours (red, yellow, green, black, lilac, blue: hotels
  H1-H6), which differ from the key set's seat colours from the fourth seat on.
- Public lines show the phase, who still has to act, the seat's own agent,
  informant and bug, and what happened to its agent; never a card or a dial.
"""

from __future__ import annotations

from typing import Any

from firmware.hub.bindings.menus import KnobMenus, Option
from firmware.hub.table import Table
from firmware.link.protocol import Screen, Secret
from rules.core import Action, action_to_json

ACT_LED = (255, 160, 0)
IDLE_LED = (0, 0, 0)
COLOURS = ("red", "yellow", "green", "black", "lilac", "blue")
KINDS = ("identity", "toothbrush", "formula")
KIND_LABEL = {"identity": "ID card", "toothbrush": "toothbrush", "formula": "formula"}
BAGS = ("suitcase", "briefcase")
SECRET_PLACES = ("G1", "G2", "G3", "G4", "G5")
PSEUDONYMS = ("P1", "P2", "P3", "P4", "P5", "P6")
PHASE_LABEL = {
    "hide": "Hide",
    "bug": "Bug",
    "dial": "Dial",
    "informant": "Informant",
    "search": "Search",
    "file": "File",
    "flight": "Flight",
    "over": "Over",
}
OUTCOME = {
    "caught": "Caught! Pursuers win",
    "escaped": "Escaped: he wins",
    "escaped-wrong": "Escaped, filing wrong",
}
SHEET = "Sheet >"
BACK = "< Back"
WINDOW = 4


def short(colour: str | None) -> str:
    return (colour or "-")[:3].capitalize()


def seat_name(seat: int) -> str:
    """A seat goes by its Ultra Secret colour (hotel H1 red ... H6 blue), not the key set's."""
    return COLOURS[seat].capitalize()


def card_code(card: str | None) -> str:
    """A card as the sheet writes it: P3, X4, TB (toothbrush), G2 (mole), ? unknown."""
    if not card:
        return "?"
    return "TB" if card == "toothbrush" else card


class UltraSecretBinding(KnobMenus):
    """Knob menus and the investigation sheet for Ultra Secret."""

    # --- state of a seat's station ------------------------------------------------

    def can_act(self, table: Table, seat: int) -> bool:
        pub = table.view(None)
        return pub["phase"] != "over" and seat in pub["waiting"]

    def paging(self, table: Table, seat: int) -> bool:
        """The knob turns the sheet: nothing to choose, or opened from this step's menu."""
        if not self.can_act(table, seat):
            return True
        pub = table.view(None)
        return (table.ui.get(f"mode:{seat}"), table.ui.get(f"modectx:{seat}")) == (
            "sheet",
            f"{pub['phase']}/{pub['turn']}",
        )

    def picks(self, table: Table, seat: int) -> list[str]:
        """Steps already chosen in a multi-step menu (hide, file), for this phase only."""
        pub = table.view(None)
        if table.ui.get(f"pickctx:{seat}") != f"{pub['phase']}/{pub['turn']}":
            return []
        return list(table.ui.get(f"pick:{seat}", []))

    def context(self, table: Table, seat: int) -> str:
        """What the menu is about: a cursor is kept only while this stays the same."""
        pub = table.view(None)
        return f"{pub['phase']}/{pub['turn']}/{len(self.picks(table, seat))}"

    def cursor(self, table: Table, seat: int) -> int:
        menu = self.menu(table, seat)
        if table.ui.get(f"ctx:{seat}") == self.context(table, seat):
            return int(table.ui.get(f"cursor:{seat}", 0)) % len(menu)
        return self._default_cursor(table, seat, menu)

    def _default_cursor(self, table: Table, seat: int, menu: list[Option]) -> int:
        """Where the cursor starts: the sheet's answer while filing, else the top."""
        if table.view(None)["phase"] != "file":
            return 0
        me = table.view(seat)
        sheet = me["sheet"]
        enemies = self._enemies(table, seat)
        step = len(self.picks(table, seat))
        want = None
        if step < len(enemies):
            want = sheet["pseudonyms"].get(enemies[step])
        elif step == len(enemies):
            at = sheet["formula_at"]
            want = self._place_label(table, at["square"], at["container"]) if at else None
        for i, opt in enumerate(menu):
            if want and opt.label.startswith(want):
                return i
        return 0

    # --- menus -------------------------------------------------------------------

    def menu(self, table: Table, seat: int) -> list[Option]:
        """The options a press may choose now (never empty)."""
        pub = table.view(None)
        modectx = f"{pub['phase']}/{pub['turn']}"
        opened = {"seat": seat, "mode": "sheet", "page": 0, "modectx": modectx}
        sheet = Option(SHEET, {"ui": opened})
        if not self.can_act(table, seat):
            return [sheet]
        phase = table.view(None)["phase"]
        if phase == "hide":
            options = self._hide_menu(table, seat)
        elif phase == "file":
            options = self._file_menu(table, seat)
        else:
            legal = table.engine.legal_actions(table.state, seat)
            options = [Option(self.label(table, a), {"rules": action_to_json(a)}) for a in legal]
        return [*options, sheet]

    def _pick(self, table: Table, seat: int, picks: list[str]) -> dict[str, Any]:
        pub = table.view(None)
        return {"ui": {"seat": seat, "pick": picks, "pickctx": f"{pub['phase']}/{pub['turn']}"}}

    def _hide_menu(self, table: Table, seat: int) -> list[Option]:
        picks = self.picks(table, seat)
        back = [Option(BACK, self._pick(table, seat, picks[:-1]))] if picks else []
        left = [k for k in KINDS if k not in picks]
        if len(picks) < 2:
            where = "Suit" if not picks else "Brief"
            return [
                Option(f"{where}: {KIND_LABEL[k]}", self._pick(table, seat, [*picks, k]))
                for k in left
            ] + back
        action = {
            "type": "hide",
            "seat": seat,
            "suitcase": picks[0],
            "briefcase": picks[1],
            "locker": left[0],
        }
        return [
            Option(f"Locker at {at}", {"rules": {**action, "at": at}}) for at in ("F1", "B1")
        ] + back

    def _enemies(self, table: Table, seat: int) -> list[str]:
        return [c for c in table.view(None)["colours"] if c != COLOURS[seat]]

    def _file_menu(self, table: Table, seat: int) -> list[Option]:
        picks = self.picks(table, seat)
        enemies = self._enemies(table, seat)
        names = table.view(None)["pseudonyms"]
        back = [Option(BACK, self._pick(table, seat, picks[:-1]))] if picks else []
        if len(picks) < len(enemies):
            return [
                Option(f"{p} {names[p]}", self._pick(table, seat, [*picks, p]))
                for p in PSEUDONYMS
                if p not in picks
            ] + back
        if len(picks) == len(enemies):
            return [
                Option(self._place_label(table, sq, box), self._pick(table, seat, [*picks, place]))
                for sq, box in self._places(table)
                for place in [f"{sq}/{box}"]
            ] + back
        square, _, container = picks[-1].partition("/")
        action = {
            "type": "file",
            "seat": seat,
            "pseudonyms": dict(zip(enemies, picks, strict=False)),
            "square": square,
            "container": container,
        }
        return [Option("File it!", {"rules": action}), *back]

    @staticmethod
    def _places(table: Table) -> list[tuple[str, str]]:
        """Where a formula card may be taken from: hotel bags, full lockers, G squares."""
        lockers = table.view(None)["lockers"]
        bags = [(f"H{i + 1}", bag) for i in range(len(COLOURS)) for bag in BAGS]
        full = [(lockers[c], c) for c in COLOURS if c in lockers]
        return bags + sorted(full) + [(g, "") for g in SECRET_PLACES]

    def _place_label(self, table: Table, square: str, container: str) -> str:
        """A filing place in a menu: H3 Gre suitcase, B1 Red locker, G3 park..."""
        if container in BAGS:
            return f"{square} {short(COLOURS[int(square[1:]) - 1])} {container}"
        if container:
            return f"{square} {short(container)} locker"
        return self.square_label(table, square)

    def _heading(self, table: Table, seat: int) -> str:
        """The menu's title under the flap."""
        pub = table.view(None)
        phase = pub["phase"]
        if phase == "hide":
            return ("Suitcase?", "Briefcase?", "Locker at?")[len(self.picks(table, seat))]
        if phase == "file":
            picks = self.picks(table, seat)
            enemies = self._enemies(table, seat)
            if len(picks) < len(enemies):
                return f"{short(enemies[len(picks)])} is?"
            return "Formula card?" if len(picks) == len(enemies) else "Filing ok?"
        return {
            "bug": "Bug/declare",
            "dial": "Dial",
            "flight": "Dial",
            "informant": "Informant",
            "search": "Search",
        }.get(phase, str(phase))

    @staticmethod
    def square_label(table: Table, square: str) -> str:
        """A square with what it is: H2 yel hotel, F1 airport, G2 bar..."""
        places = table.view(None)["places"]
        if square.startswith("H") and square[1:].isdigit() and 1 <= int(square[1:]) <= 6:
            return f"{square} {short(COLOURS[int(square[1:]) - 1])} hotel"
        if square in places:
            return f"{square} {places[square]}"
        return {
            "F1": "F1 airport",
            "B1": "B1 station",
            "V1": "V1 moles",
            "V2": "V2 moles",
            "V3": "V3 moles",
        }.get(square, square)

    def label(self, table: Table, action: Action) -> str:
        """How an engine action reads in a menu (at most 19 characters)."""
        a = action_to_json(action)
        kind = a["type"]
        phase = table.view(None)["phase"]
        if kind == "pass":
            return {"bug": "Pass (no bug)", "informant": "Pass (stay)"}.get(phase, "Pass")
        if kind == "declare":
            return "Declare: I know!"
        if kind == "bug":
            return f"Bug {self.square_label(table, a['square'])}"
        if kind == "dial":
            return self.square_label(table, a["square"])
        if kind == "informant":
            return f"Inf {self.square_label(table, a['square'])}"
        if kind == "search":
            slot = a.get("slot")
            return "Both bags" if slot is None else f"{slot.capitalize()} only"
        if kind == "open":
            return "Open " + "+".join(short(c) for c in a["lockers"])
        if kind == "read":
            return "Read, spend " + "+".join(a["moles"])
        return str(kind)

    # --- the investigation sheet -----------------------------------------------------

    def pages(self, table: Table, seat: int) -> list[tuple[str, list[str]]]:
        """The seat's sheet as screen pages: (title, up to 4 lines)."""
        me = table.view(seat)
        sheet = me["sheet"]
        pub = me["table"]
        idents = sheet["pseudonyms"]
        cells = [f"{short(c)} {card_code(idents.get(c)):<2}" for c in COLOURS]
        fakes = " ".join(card_code(x) for x in sheet["fakes"].values())
        formula = sheet["formula"] or "?"
        summary = [
            " ".join(cells[:3]).rstrip(),
            " ".join(cells[3:]).rstrip(),
            f"Fakes {fakes}",
            f"Formula {formula}" + ("  ALL SET" if sheet["complete"] else ""),
        ]
        hidden = me["hidden"]
        name = pub["pseudonyms"].get(hidden["identity"], "")
        mine = [
            f"You are {hidden['identity']} {name}",
            f"Suit {card_code(hidden['suitcase'])} Brief {card_code(hidden['briefcase'])}",
            f"Locker {hidden['at'] or '?'}: {card_code(hidden['locker'])}",
            "Moles " + (" ".join(me["moles"]) or "none"),
        ]
        grid = sheet["grid"]
        rows = [
            f"{short(c)} s:{card_code(g['suitcase'])} b:{card_code(g['briefcase'])}"
            f" l:{card_code(g['locker'])}"
            for c, g in grid.items()
        ]
        pages: list[tuple[str, list[str]]] = [
            ("Who is who", summary),
            ("Your cards", mine),
            ("Bags 1", rows[:3]),
            ("Bags 2", rows[3:]),
        ]
        entries = list(reversed(sheet["entries"]))
        for i in range(0, len(entries), WINDOW):
            lines = [self._entry(e) for e in entries[i : i + WINDOW]]
            pages.append((f"Seen {i + 1}-{i + len(lines)}/{len(entries)}", lines))
        return pages

    @staticmethod
    def _entry(e: dict[str, Any]) -> str:
        how = {"search": "", "bug": " bug", "informant": " inf", "draw": ""}[e["how"]]
        if e["slot"] == "mole":
            return f"T{e['turn']} {e['square']} mole {e['card']}"
        if e["slot"] == "fake":
            return f"T{e['turn']} {e['square']} fake {e['card']}{how}"
        colour, slot = short(e["colour"]), e["slot"][:4]
        return f"T{e['turn']} {e['square']} {colour} {slot} {card_code(e['card'])}{how}"

    # --- host --------------------------------------------------------------------

    def advance(self, table: Table) -> dict[str, Any] | None:
        return None  # nothing in Ultra Secret waits for the host

    def timer(self, table: Table) -> tuple[float, dict[str, Any]] | None:
        return None  # nothing is timed

    # --- screens -------------------------------------------------------------------

    def station_screen(self, table: Table, seat: int) -> Screen:
        pub = table.view(None)
        phase = pub["phase"]
        name = seat_name(seat)
        turn = f" T{pub['turn']}" if pub["turn"] else ""
        title = f"{name}{turn} {PHASE_LABEL.get(phase, phase)}"
        acting = self.can_act(table, seat)
        lines = self._public_lines(table, seat, acting)
        return Screen(
            rev=0,
            title=title,
            lines=tuple(lines),
            secret=self._secret(table, seat),
            led=ACT_LED if acting else IDLE_LED,
        )

    def _public_lines(self, table: Table, seat: int, acting: bool) -> list[str]:
        pub = table.view(None)
        phase = pub["phase"]
        name = seat_name
        if phase == "over":
            return self._final_lines(table, seat)
        waiting = " ".join(name(s)[:3] for s in pub["waiting"]) or "-"
        if acting:
            status = "Your move: lift flap"
        elif phase in ("hide", "bug", "dial", "informant", "flight") or seat in pub["waiting"]:
            status = "Done. Waiting..."
        else:
            status = "Nothing to do now"
        lines = [status, f"Waiting: {waiting}"]
        agent = pub["agents"][seat] or "-"
        if phase in ("file", "flight"):
            fugitive = pub["fugitive"]
            who = "You flee" if fugitive == seat else f"{name(fugitive)[:3]} flees"
            lines.append(f"{who}, alone {pub['alone']}/5")
            lines.append(f"Your agent: {agent}")
            return lines
        inf = pub["informants"][seat] or "-"
        bug = pub["bugs"][seat] or "-"
        lines.append(f"Agt {agent} Inf {inf} Bug {bug}")
        lines.append(self._note_line(pub, seat))
        return lines

    @staticmethod
    def _note_line(pub: dict[str, Any], seat: int) -> str:
        for note in pub["notes"]:
            if note["seat"] != seat:
                continue
            act = note["act"]
            if act == "sat-out":
                return "Bad dial: sat out"
            if act == "crowded":
                return f"Not alone on {note['square']}"
            if act == "drew":
                return f"Drew a mole card ({pub['moles'][seat]})"
            if act == "deck-empty":
                return "No mole card left"
        return f"Mole cards: {pub['moles'][seat]}"

    def _final_lines(self, table: Table, seat: int) -> list[str]:
        pub = table.view(None)
        outcome = pub["outcome"] or ""
        fugitive = pub["fugitive"]
        scores = table.engine.scores(table.state)
        end = pub.get("end") or {}
        filing = end.get("filing") or {}
        lines = [OUTCOME.get(outcome, outcome)]
        if fugitive is not None:
            lines.append(f"Fugitive: {seat_name(fugitive)}")
        lines.append(f"Formula was {end.get('formula', '?')}")
        if filing:
            lines.append(f"Took {card_code(filing.get('card'))} at {filing.get('square', '?')}")
        lines.append("You win!" if scores[seat] else "You lose")
        return [*lines[:3], lines[-1]]

    def _secret(self, table: Table, seat: int) -> Secret:
        if self.paging(table, seat):
            pages = self.pages(table, seat)
            page = self.page(table, seat)
            title, lines = pages[page]
            return Secret(title=f"{title} {page + 1}/{len(pages)}"[:21], lines=tuple(lines))
        menu = self.menu(table, seat)
        cur = self.cursor(table, seat)
        start = min(max(0, cur - 1), max(0, len(menu) - WINDOW))
        rows = tuple(
            ("> " if i == cur else "  ") + opt.label[:19]
            for i, opt in enumerate(menu[start : start + WINDOW], start=start)
        )
        return Secret(title=f"{self._heading(table, seat)} {cur + 1}/{len(menu)}", lines=rows)

    def idle_message(self, table: Table, seat: int) -> str:
        pub = table.view(None)
        if pub["phase"] in ("hide", "bug", "dial", "informant", "flight"):
            return "Done: wait for the others"
        return "Nothing to choose now"

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        name = seat_name
        turn = f"T{pub['turn']} " if pub["turn"] else ""
        title = f"{turn}{PHASE_LABEL.get(pub['phase'], pub['phase'])}"
        agents = " ".join(a or "-" for a in pub["agents"])
        lines = [f"Ag {agents}"]
        if pub["phase"] in ("file", "flight", "over"):
            fugitive = pub["fugitive"]
            if fugitive is not None:
                lines.append(f"{name(fugitive)} flees, alone {pub['alone']}/5")
        else:
            lines.append("In " + " ".join(i or "-" for i in pub["informants"]))
            lines.append("Bg " + " ".join(b or "-" for b in pub["bugs"]))
        waiting = " ".join(name(s)[:3] for s in pub["waiting"])
        if waiting and pub["phase"] != "over":
            lines.append(f"Wait {waiting}")
        return title, lines[:4]


def make_binding(**settings: Any) -> UltraSecretBinding:
    """The binding (no table settings apply to this game)."""
    return UltraSecretBinding()
