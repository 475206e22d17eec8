"""Ultra Secret at a physical table (table binding; rules in rules/docs/ultra-secret.md).

Every choice is a knob menu shown only under the flap (the ``secret`` part of the
seat's own screen): turn to move the cursor, press to choose. No NFC card is
needed for this game (the box's cards stay in the box; the hub keeps them).

- Hide (setup): pick the suitcase card, then the briefcase card, then where the
  locker card goes (F1 or B1); "< Back" undoes a step.
- Phase 1: pass, declare (offered once the sheet is complete, or always with
  ``declare=any``), or place the bug on a hotel or G square; a complete sheet
  offers only the declaration (a Decision, ultra-secret.md, Actions).
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
  menu. With nothing to choose, the knob turns the sheet's pages directly. Its last
  pages are the key: every short form of the sheet and the screens in words ("s:",
  "P1-6", "H1-6", "-", "*", the hotels' colours).
  Cursor, page, mode and the steps already picked live in ``table.ui``.
- Seats go by the game's colours (red, yellow, green, black, lilac, blue: hotels
  H1-H6), which differ from the key set's seat colours from the fourth seat on.
- Public lines show the phase, who still has to act, the seat's own agent,
  informant and bug, and what happened to its agent; never a card or a dial.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from firmware.hub.bindings.common import ACT_LED, IDLE_LED, phase_label
from firmware.hub.bindings.legend import key_pages, short_form, spaced
from firmware.hub.bindings.menus import KnobMenus, MenuEntry
from firmware.hub.bindings.numbered import numbered
from firmware.hub.table import Table
from firmware.link.lang import N_, _, plural
from firmware.link.protocol import Input, Screen, Secret
from firmware.link.render import CHARS, first_fitting, fit, fit_list, glass, menu_rows, packed
from rules.core import Action, action_to_json
from rules.ultra_secret import INFO

COLOURS = ("red", "yellow", "green", "black", "lilac", "blue")
KINDS = ("identity", "toothbrush", "formula")
KIND_LABEL = {"identity": N_("ID card"), "toothbrush": N_("toothbrush"), "formula": N_("formula")}
BAGS = ("suitcase", "briefcase")
SECRET_PLACES = ("G1", "G2", "G3", "G4", "G5")
PSEUDONYMS = ("P1", "P2", "P3", "P4", "P5", "P6")
#: The game's own colours (hotels H1-H6) and their three-letter forms.
COLOUR_NAMES = {
    "red": N_("Red"),
    "yellow": N_("Yellow"),
    "green": N_("Green"),
    "black": N_("Black"),
    "lilac": N_("Lilac"),
    "blue": N_("Blue"),
}
COLOUR_SHORT = {
    "red": N_("Red|short"),
    "yellow": N_("Yel|short"),
    "green": N_("Grn|short"),
    "black": N_("Blk|short"),
    "lilac": N_("Lil|short"),
    "blue": N_("Blue|short"),
}
#: The secret places of the shipped board data, for the catalogue (a box's own file may differ).
PLACE_WORDS = (N_("lab safe"), N_("bar"), N_("park monument"), N_("embassy files"), N_("library"))
SHEET = N_("Sheet >")
BACK = N_("< Back")
WINDOW = 4


def short(colour: str | None) -> str:
    """A colour in three letters in the table's language ("Blk", "Noi"); "-" for none."""
    if colour in COLOUR_SHORT:
        return _(COLOUR_SHORT[colour])
    return (colour or "-")[:3].capitalize()


def seat_name(seat: int) -> str:
    """A seat goes by its Ultra Secret colour (hotel H1 red ... H6 blue), not the key set's."""
    return _(COLOUR_NAMES[COLOURS[seat]])


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

    def _default_cursor(self, table: Table, seat: int, menu: list[MenuEntry]) -> int:
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

    def menu(self, table: Table, seat: int) -> list[MenuEntry]:
        """The options a press may choose now (never empty)."""
        pub = table.view(None)
        modectx = f"{pub['phase']}/{pub['turn']}"
        opened = {"seat": seat, "mode": "sheet", "page": 0, "modectx": modectx}
        sheet = MenuEntry(_(SHEET), {"ui": opened})
        if not self.can_act(table, seat):
            return [sheet]
        phase = table.view(None)["phase"]
        if phase == "hide":
            options = self._hide_menu(table, seat)
        elif phase == "file":
            options = self._file_menu(table, seat)
        else:
            legal = table.engine.legal_actions(table.state, seat)
            options = [MenuEntry(self.label(table, a), {"rules": action_to_json(a)}) for a in legal]
        return [*options, sheet]

    def _pick(self, table: Table, seat: int, picks: list[str]) -> dict[str, Any]:
        pub = table.view(None)
        return {"ui": {"seat": seat, "pick": picks, "pickctx": f"{pub['phase']}/{pub['turn']}"}}

    def _hide_menu(self, table: Table, seat: int) -> list[MenuEntry]:
        picks = self.picks(table, seat)
        back = [MenuEntry(_(BACK), self._pick(table, seat, picks[:-1]))] if picks else []
        left = [k for k in KINDS if k not in picks]
        if len(picks) < 2:
            # The heading asks "Suitcase?" or "Briefcase?": the options are the cards.
            return [
                MenuEntry(_(KIND_LABEL[k]), self._pick(table, seat, [*picks, k])) for k in left
            ] + back
        action = {
            "type": "hide",
            "seat": seat,
            "suitcase": picks[0],
            "briefcase": picks[1],
            "locker": left[0],
        }
        return [
            MenuEntry(_("Locker at {square}", square=at), {"rules": {**action, "at": at}})
            for at in ("F1", "B1")
        ] + back

    def _enemies(self, table: Table, seat: int) -> list[str]:
        return [c for c in table.view(None)["colours"] if c != COLOURS[seat]]

    def _file_menu(self, table: Table, seat: int) -> list[MenuEntry]:
        picks = self.picks(table, seat)
        enemies = self._enemies(table, seat)
        names = table.view(None)["pseudonyms"]
        back = [MenuEntry(_(BACK), self._pick(table, seat, picks[:-1]))] if picks else []
        if len(picks) < len(enemies):
            return [
                MenuEntry(f"{p} {names[p]}", self._pick(table, seat, [*picks, p]))
                for p in PSEUDONYMS
                if p not in picks
            ] + back
        if len(picks) == len(enemies):
            return [
                MenuEntry(
                    self._place_label(table, sq, box), self._pick(table, seat, [*picks, place])
                )
                for sq, box in self._places(table)
                for place in [f"{sq}/{box}"]
            ] + back
        square, _slash, container = picks[-1].partition("/")
        action = {
            "type": "file",
            "seat": seat,
            "pseudonyms": dict(zip(enemies, picks, strict=False)),
            "square": square,
            "container": container,
        }
        return [MenuEntry(_("File it!"), {"rules": action}), *back]

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
            colour = short(COLOURS[int(square[1:]) - 1])
            bag = _("suitcase") if container == "suitcase" else _("briefcase")
            return f"{square} {colour} {bag}"
        if container:
            return _("{square} {colour} locker", square=square, colour=short(container))
        return self.square_label(table, square)

    def _heading(self, table: Table, seat: int) -> str:
        """The menu's title under the flap."""
        pub = table.view(None)
        phase = pub["phase"]
        if phase == "hide":
            steps = (N_("Suitcase?"), N_("Briefcase?"), N_("Locker at?"))
            return _(steps[len(self.picks(table, seat))])
        if phase == "file":
            picks = self.picks(table, seat)
            enemies = self._enemies(table, seat)
            if len(picks) < len(enemies):
                return _("{colour} is?", colour=short(enemies[len(picks)]))
            return _("Formula card?") if len(picks) == len(enemies) else _("Filing ok?")
        headings = {
            "bug": N_("Bug/declare"),
            "dial": N_("Dial"),
            "flight": N_("Dial"),
            "informant": N_("Informant"),
            "search": N_("Search"),
        }
        return _(headings[phase]) if phase in headings else str(phase)

    @staticmethod
    def square_label(table: Table, square: str) -> str:
        """A square with what it is: H2 yel hotel, F1 airport, G2 bar..."""
        places = table.view(None)["places"]
        if square.startswith("H") and square[1:].isdigit() and 1 <= int(square[1:]) <= 6:
            colour = short(COLOURS[int(square[1:]) - 1])
            return _("{square} {colour} hotel", square=square, colour=colour)
        if square in places:
            return f"{square} {_(places[square])}"
        if square == "F1":
            return _("F1 airport")
        if square == "B1":
            return _("B1 station")
        if square in ("V1", "V2", "V3"):
            return _("{square} moles", square=square)
        return str(square)

    def label(self, table: Table, action: Action) -> str:
        """How an engine action reads in a menu (a label past 19 characters wraps)."""
        a = action_to_json(action)
        kind = a["type"]
        phase = table.view(None)["phase"]
        if kind == "pass":
            if phase == "bug":
                return _("Pass (no bug)")
            return _("Pass (stay)") if phase == "informant" else _("Pass")
        if kind == "declare":
            return _("Declare: I know!")
        if kind == "bug":
            return _("Bug {square}", square=self.square_label(table, a["square"]))
        if kind == "dial":
            return self.square_label(table, a["square"])
        if kind == "informant":
            return _("At {square}", square=self.square_label(table, a["square"]))
        if kind == "search":
            slot = a.get("slot")
            if slot is None:
                return _("Both bags")
            return _("Suitcase only") if slot == "suitcase" else _("Briefcase only")
        if kind == "open":
            return _("Open {lockers}", lockers="+".join(short(c) for c in a["lockers"]))
        if kind == "read":
            return _("Read, spend {moles}", moles="+".join(a["moles"]))
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
            _("Fakes {cards}", cards=fakes),
            _("Formula {code}", code=formula) + (_("  ALL SET") if sheet["complete"] else ""),
        ]
        hidden = me["hidden"]
        name = pub["pseudonyms"].get(hidden["identity"], "")
        suit, brief = card_code(hidden["suitcase"]), card_code(hidden["briefcase"])
        locker = card_code(hidden["locker"])
        mine = [
            _you_are(hidden["identity"], name),
            _("Suit {card} Brief {other}", card=suit, other=brief),
            _(
                "Locker {square}: {card}",
                square=hidden["at"] or "?",
                card=locker,
            ),
            # "Moles G1x2 G3": each mole card once, with its count (six fit a line).
            _first(
                _("Moles {cards}", cards=_counted(me["moles"]) or _("none")),
                fit_list(_("Moles"), _counted(me["moles"]).split()),
            ),
        ]
        grid = sheet["grid"]
        rows = [
            _(
                "{colour} s:{suit} b:{brief} l:{locker}",
                colour=short(c),
                suit=card_code(g["suitcase"]),
                brief=card_code(g["briefcase"]),
                locker=card_code(g["locker"]),
            )
            for c, g in grid.items()
        ]
        found = self.found(table, seat)
        pages: list[tuple[str, list[str]]] = [
            *((_("You found"), found[i : i + WINDOW]) for i in range(0, len(found), WINDOW)),
            (_("Who is who"), summary),
            (_("Your cards"), mine),
            (_("Your pieces"), self._pieces(table, seat)),
            (_("Bags 1"), rows[:3]),
            (_("Bags 2"), rows[3:]),
        ]
        entries = list(reversed(sheet["entries"]))
        for i in range(0, len(entries), WINDOW):
            lines = [self._entry(e) for e in entries[i : i + WINDOW]]
            title = _("Seen {first}-{last}/{n}", first=i + 1, last=i + len(lines), n=len(entries))
            pages.append((title, lines))
        return [*pages, *_legend()]

    def found(self, table: Table, seat: int) -> list[str]:
        """What the seat's own search of this turn found, in words: what the rulebook has
        the searcher look at at once (so it comes before the sheet)."""
        pub = table.view(None)
        if pub["phase"] != "search":
            return []
        entries = table.view(seat)["sheet"]["entries"]
        return [_said(e) for e in entries if e["turn"] == pub["turn"] and e["how"] == "search"]

    def _pieces(self, table: Table, seat: int) -> list[str]:
        """The seat's agent, informant, bug and mole cards, in words."""
        pub = table.view(None)
        none = _("none")
        return [
            _("Agent: {square}", square=pub["agents"][seat] or none),
            _("Informant: {square}", square=pub["informants"][seat] or none),
            _("Bug: {square}", square=pub["bugs"][seat] or none),
            _("Mole cards: {n}", n=pub["moles"][seat]),
        ]

    def page(self, table: Table, seat: int) -> int:
        """The sheet page shown now; a new phase or turn opens the sheet at its first page
        (after a search, what was found)."""
        if table.ui.get(f"pagectx:{seat}") != self._step(table):
            return 0
        return super().page(table, seat)

    @staticmethod
    def _step(table: Table) -> str:
        pub = table.view(None)
        return f"{pub['phase']}/{pub['turn']}"

    def translate(self, table: Table, seat: int, inp: Input) -> dict[str, Any]:
        body = super().translate(table, seat, inp)
        ui = body.get("ui")
        if ui is not None and ("page" in ui):
            ui["pagectx"] = self._step(table)
        return body

    @staticmethod
    def _entry(e: dict[str, Any]) -> str:
        """One sheet line, at most 19 characters ("T13 H2 Yel s:X3 inf")."""
        how = {"search": "", "bug": _(" bug"), "informant": _(" inf"), "draw": ""}[e["how"]]
        where = f"T{e['turn']} {e['square']}"
        if e["slot"] == "mole":
            return _("{where} mole {card}", where=where, card=e["card"])
        if e["slot"] == "fake":
            fake = _("f:")
            return f"{where} {fake}{e['card']}{how}"
        slot = {"suitcase": _("s:"), "briefcase": _("b:"), "locker": _("l:")}[e["slot"]]
        colour = short(e["colour"])
        return f"{where} {colour} {slot}{card_code(e['card'])}{how}"

    @staticmethod
    def _news_entries(table: Table, seat: int) -> list[dict[str, Any]]:
        """What the seat's sheet gained in the last turn it gained anything (its search,
        its bug, its informant, a mole card), while that turn is this one or the last."""
        entries = table.view(seat)["sheet"]["entries"]
        if not entries:
            return []
        latest = entries[-1]["turn"]
        if table.view(None)["turn"] - latest > 1:
            return []
        return [e for e in entries if e["turn"] == latest]

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
        title = f"{name} {phase_label(INFO, phase)}"
        if pub["turn"]:
            n = pub["turn"]
            title = _("{seat} Turn {n} {phase}", seat=name, n=n, phase=phase_label(INFO, phase))
            if len(glass(title)) > CHARS:  # "Red Turn 3 Dial" where it fits
                title = f"{name} T{n} {phase_label(INFO, phase)}"
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
        if phase == "over":
            return self._final_lines(table, seat)
        news = self._news_entries(table, seat)
        note = self._note_line(pub, seat)
        if acting:
            status = _("Your move: lift flap")
        elif news:
            status = plural("{n} new on your sheet", "{n} new on your sheet", len(news))
        elif note:
            status = note  # what happened to your agent, while nothing else is asked
        elif phase in ("hide", "bug", "dial", "informant", "flight") or seat in pub["waiting"]:
            status = _("Done. Waiting...")
        else:
            status = _("Nothing to do now")
        waiting = [short(COLOURS[s]) for s in pub["waiting"]] or ["-"]
        lines = [status, fit_list(_("Waiting:"), waiting)]
        if phase in ("file", "flight"):
            return [*lines, *self._flight_lines(pub, seat)]
        # Your pieces in words (the sheet's "Your pieces" page says them one a line).
        none = "-"
        agent = pub["agents"][seat] or none
        inf = pub["informants"][seat] or none
        bug = pub["bugs"][seat] or none
        lines.append(
            _first(
                _("Agent {agent} Informant {inf}", agent=agent, inf=inf),
                _("Agent {agent} Inform. {inf}", agent=agent, inf=inf),
            )
        )
        lines.append(
            _first(
                _("Bug {bug}, mole cards {n}", bug=bug, n=pub["moles"][seat]),
                _("Bug {bug}, moles {n}", bug=bug, n=pub["moles"][seat]),
            )
        )
        return lines

    @staticmethod
    def _flight_lines(pub: dict[str, Any], seat: int) -> list[str]:
        """The flight as each side needs it: the fugitive runs, the others hunt."""
        fugitive = pub["fugitive"]
        alone = pub["alone"]
        if fugitive == seat:
            return [
                _("You flee: alone {n}/5", n=alone),
                _("Be alone, or on F1"),
            ]
        where = pub["agents"][fugitive] or "?"
        return [
            _("{seat} flees: {n}/5", seat=seat_name(fugitive), n=alone),
            _("At {square}: 2 catch", square=where),
        ]

    @staticmethod
    def _note_line(pub: dict[str, Any], seat: int) -> str:
        for note in pub["notes"]:
            if note["seat"] != seat:
                continue
            act = note["act"]
            if act == "sat-out":
                return _("Bad dial: sat out")
            if act == "crowded":
                return _("Not alone on {square}", square=note["square"])
            if act == "drew":
                return _("Drew a mole card ({n})", n=pub["moles"][seat])
            if act == "deck-empty":
                return _("No mole card left")
        return ""

    def _final_lines(self, table: Table, seat: int) -> list[str]:
        pub = table.view(None)
        outcome = pub["outcome"] or ""
        fugitive = pub["fugitive"]
        scores = table.engine.scores(table.state)
        end = pub.get("end") or {}
        filing = end.get("filing") or {}
        said = INFO.outcome(outcome)
        lines = [_(said.short) if said else outcome]
        if fugitive is not None:
            lines.append(_("Fugitive: {seat}", seat=seat_name(fugitive)))
        formula = end.get("formula", "?")
        if filing:  # what the fugitive filed beside what it had to be, on one line
            took = card_code(filing.get("card"))
            lines.append(_("Formula {code}, took {card}", code=formula, card=took))
        else:
            lines.append(_("Formula was {code}", code=formula))
        lines.append(_("You win!") if scores[seat] else _("You lose"))
        return lines

    def _secret(self, table: Table, seat: int) -> Secret:
        if self.paging(table, seat):
            pages = self.pages(table, seat)
            page = self.page(table, seat)
            title, lines = pages[page]
            return Secret(title=fit(f"{title} {page + 1}/{len(pages)}"), lines=tuple(lines))
        menu = self.menu(table, seat)
        cur = self.cursor(table, seat)
        news = self.news(table, seat)[-1:]
        # The newest thing the sheet learnt tops the menu ("* " marks it: not an option).
        rows = menu_rows([opt.label for opt in menu], cur, WINDOW - len(news))
        heading = f"{self._heading(table, seat)} {cur + 1}/{len(menu)}"
        return Secret(title=heading, lines=(*(f"*{n}" for n in news), *rows))

    def news(self, table: Table, seat: int) -> list[str]:
        """What the seat's sheet gained in the last turn it gained anything, in words."""
        return [_said(e, room=CHARS - 1) for e in self._news_entries(table, seat)]

    def idle_message(self, table: Table, seat: int) -> str:
        pub = table.view(None)
        if pub["phase"] in ("hide", "bug", "dial", "informant", "flight"):
            return N_("Done: wait for the others")
        return N_("Nothing to choose now")

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        lines: list[str] = []
        waiting = [seat_tag(s) for s in pub["waiting"]]
        if waiting and pub["phase"] != "over":
            lines.append(fit_list(_("Waiting:"), waiting))
        # Each square after whose piece it is ("Agents: Red H3 Yel G1"): a bare row of
        # squares ("Ag H3 G1 -") said nothing of whose, nor of what.
        lines += _whose(_("Agents:"), pub["agents"], _("Agents: none"))
        if pub["phase"] in ("file", "flight", "over"):
            fugitive = pub["fugitive"]
            if fugitive is not None:
                flees = _("{seat} flees: {n}/5", seat=seat_tag(fugitive), n=pub["alone"])
                lines.append(flees)
        else:
            lines += _whose(_("Informants:"), pub["informants"], _("Informants: none"))
            lines += _whose(_("Bugs:"), pub["bugs"], _("Bugs: none"))
        # The hub display pages more than three lines (its last is the host's hint), its
        # title then ending "1/2".
        room = CHARS if len(lines) <= 3 else CHARS - 4
        phase = phase_label(INFO, pub["phase"])
        if not pub["turn"]:
            return phase, lines
        said = _("Turn {n}: {phase}", n=pub["turn"], phase=phase)
        return first_fitting([said, f"T{pub['turn']} {phase}"], room), lines


def seat_tag(seat: int) -> str:
    """A seat on the hub display: its short colour and its number ("Red1", "Blk4"), so a
    host who cannot tell red from green still finds it (seat N is hotel HN's colour)."""
    return numbered(short(COLOURS[seat]), seat)


def _whose(head: str, squares: list[str | None], none: str) -> list[str]:
    """``head`` then each seat (colour and number) and its square, as many a row as fit
    whole; ``none`` when no seat has one (its own words: "aucun" agrees with its noun in
    French)."""
    items = [f"{seat_tag(s)} {sq}" for s, sq in enumerate(squares) if sq]
    return packed(head, items) if items else [none]


def _counted(cards: list[str]) -> str:
    """Cards with their counts ("G1x2 G3"), in the order first held."""
    counts = Counter(cards)
    return " ".join(c if counts[c] == 1 else f"{c}x{counts[c]}" for c in dict.fromkeys(cards))


def _first(*lines: str) -> str:
    """The first of ``lines`` that fits the glass (the last one, cut, if none does)."""
    for line in lines:
        if len(glass(line)) <= CHARS:
            return line
    return fit(lines[-1])


_SLOT_WORDS = {
    "suitcase": N_("suitcase"),
    "briefcase": N_("briefcase"),
    "locker": N_("locker"),
}


def _said(e: dict[str, Any], room: int = CHARS) -> str:
    """A sheet line in words ("Green locker: TB", "Mole card G2"), as short as it must be
    to fit ``room`` (then the sheet's own shorthand, explained on its key page)."""
    card = card_code(e["card"])
    if e["slot"] == "mole":
        return _("Mole card {card}", card=card)
    if e["slot"] == "fake":
        forms = [_("{square}: fake {card}", square=e["square"], card=card)]
    else:
        word, name = _SLOT_WORDS[e["slot"]], COLOUR_NAMES[e["colour"]]
        slot = _(word)
        forms = [
            _("{colour} {slot}: {card}", colour=_(name), slot=slot, card=card),
            _("{colour} {slot}: {card}", colour=short(e["colour"]), slot=slot, card=card),
        ]
    for form in forms:
        if len(glass(form)) <= room:
            return form
    return UltraSecretBinding._entry(e)


def _legend() -> list[tuple[str, list[str]]]:
    """The short forms of the sheet and the station's screens in words: the last pages
    the knob turns (the letters are the ones the screens write, in the table's language)."""
    s, b, lk, f = _("s:"), _("b:"), _("l:"), _("f:")
    suitcase, briefcase, locker, fake = _("suitcase"), _("briefcase"), _("locker"), _("fake")
    bug, inf = _(" bug").strip(), _(" inf").strip()
    by_bug, by_inf = _("your bug saw it"), _("informant saw it")
    colours = [
        short_form(short(c), _(COLOUR_NAMES[c])) for c in COLOURS if short(c) != _(COLOUR_NAMES[c])
    ]
    rows = [
        f"{s} {suitcase}",
        f"{b} {briefcase}",
        *spaced([f"{lk} {locker}", f"{f} {fake}"]),
        _("TB: toothbrush"),
        _("?: not seen yet"),
        _("-: none, or not yet"),
        _("*: new this turn"),
        _("T8: seen in turn 8"),
        short_form(bug, by_bug),
        short_form(inf, by_inf),
        _("P1-6: ID cards"),
        _("X1-6: formula cards"),
        _("H1-6: hotels"),
        _("G1-5: secret places"),
        *spaced([_("F1: airport"), _("B1: station")]),
        _("V1-3: mole squares"),
        _("VM1-5: flight squares"),
        *spaced(colours),
    ]
    return key_pages(rows)


def _you_are(code: str, name: str) -> str:
    """ "You are P4 Anne Callisto"; just "P4 Anne Callisto" for a name too long for that."""
    line = _("You are {code} {name}", code=code, name=name)
    return line if len(glass(line)) <= CHARS else fit(f"{code} {name}")


def make_binding(**settings: Any) -> UltraSecretBinding:
    """The binding (no table settings apply to this game)."""
    return UltraSecretBinding()
