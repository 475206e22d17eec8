"""Identiquest at a physical table (table binding; rules in rules/docs/identiquest.md).

- Your identity colour (and your loot's top gems, by name) only under the flap. While
  it is not your turn the knob turns the pages under the flap: your identity, then
  the key, which spells out every short form of the screens (seat letters, "!" and
  "^", gem codes).
- On your turn the knob menu offers "Steal 2 gems" or "Accuse a player".
  Steal: pick a market slot, then a second one (pressing a picked slot again
  puts it back); Accuse: pick a player, then a colour. Every submenu ends with
  "Back". Turn the knob to move, press to choose.
- Option ``give: choose``: the giver picks each gem from a menu of the colours in
  their loot. That menu shows under the flap (a loot's content is private); the
  public part says to lift the flap.
- The public part of every station shows the market, your loot's size and top and
  a summary of the suspect rows (per seat its colour letter and the "?" left, or
  "!" unmasked / "^" escaped: signs, never read as a second letter);
  the hub display shows every loot too.
- There are no tags in this game: a tap is refused.

Menu cursors live in ``table.ui`` (``{"ui": ...}`` events), stamped with the state
version they belong to: after any move every menu starts afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from firmware.hub.bindings import ranking
from firmware.hub.bindings.common import ACT_LED, IDLE_LED
from firmware.hub.bindings.legend import key_pages, short_form, spaced
from firmware.hub.bindings.menus import KnobMenus
from firmware.hub.bindings.numbered import numbered
from firmware.hub.table import Table
from firmware.link import lang
from firmware.link.lang import N_, _, plural
from firmware.link.protocol import Input, Screen, Secret
from firmware.link.render import (
    BODY_LINES,
    CHARS,
    first_fitting,
    fit,
    fit_list,
    glass,
    scroll_marker,
    shrink,
    shrink_names,
)
from rules.core import IllegalAction, action_to_json

#: Menu items shown at once under a header line.
WINDOW = 3
BACK = N_("Back")
#: One letter per seat colour on the summary lines, in the table's language (English black
#: is K, as in CMYK). Where two seats at a table share a letter (French Vert and Violet),
#: both go by the first two letters of their colour's name instead ("Ve", "Vi").
SEAT_LETTER = {
    "red": N_("R|seat letter"),
    "yellow": N_("Y|seat letter"),
    "green": N_("G|seat letter"),
    "blue": N_("B|seat letter"),
    "black": N_("K|seat letter"),
    "purple": N_("P|seat letter"),
    "orange": N_("O|seat letter"),
    "white": N_("W|seat letter"),
}
#: A seat's mark on the suspects summary once it is out of the guessing.
#: A seat out of the suspects' list, after its letter ("R!", "B^"): signs, not letters,
#: so a mark never reads as a second letter of the seat; the key page says them.
UNMASKED_MARK = N_("!|unmasked mark")
ESCAPED_MARK = N_("^|escaped mark")


@dataclass(frozen=True)
class Menu:
    """A seat's knob menu: which one, where the cursor is, what was picked so far."""

    name: str = "main"
    cursor: int = 0
    pick: int | None = None  # steal: the first slot picked
    target: int | None = None  # accuse: the player picked


class IdentiquestBinding:
    """Inputs to Identiquest actions through knob menus; views to screens."""

    # --- menus -----------------------------------------------------------------

    def menu(self, table: Table, seat: int) -> Menu | None:
        """The seat's menu now (None: nothing for this seat to choose)."""
        pub = table.view(None)
        if pub["phase"] == "give":
            if pub["pending"]["giver"] != seat:
                return None
            menu = self._stored(table, seat) or Menu("give")
        elif pub["phase"] == "play" and pub["turn"] == seat:
            menu = self._stored(table, seat) or Menu()
        else:
            return None
        items = self.items(table, seat, menu)
        return Menu(menu.name, max(0, min(len(items) - 1, menu.cursor)), menu.pick, menu.target)

    def _stored(self, table: Table, seat: int) -> Menu | None:
        raw = table.ui.get(f"menu:{seat}")
        if not raw or raw["v"] != table.state.version:
            return None
        return Menu(raw["menu"], raw["cursor"], raw.get("pick"), raw.get("target"))

    def items(self, table: Table, seat: int, menu: Menu) -> list[tuple[str, Any]]:
        """``(label, value)`` of each line of a menu; ``value`` None is Back."""
        pub = table.view(None)
        name = table.seating.name
        back = (_(BACK), None)
        if menu.name == "main":
            return [(_("Steal 2 gems"), "steal"), (_("Accuse a player"), "who")]
        if menu.name == "steal":
            slots = [
                (f"{i + 1} {gem_name(gem)}{' *' if i == menu.pick else ''}", i)
                for i, gem in enumerate(pub["market"])
            ]
            return [*slots, back]
        if menu.name == "who":
            others = [(seat + k) % table.players for k in range(1, table.players)]
            return [(f"{name(p):<7}{_status(pub, p)}", p) for p in others] + [back]
        if menu.name == "colour":
            assert menu.target is not None
            row = pub["suspects"][menu.target]
            colours = [
                (f"{gem_name(c)}{'  x' if row[i] == 'x' else ''}", c)
                for i, c in enumerate(pub["colours"])
            ]
            return [*colours, back]
        # give: the colours in the giver's loot, topmost first, with counts
        loot = table.view(seat)["loot"]
        order = list(dict.fromkeys(reversed(loot)))
        return [(f"{gem_name(c)} ({loot.count(c)})", c) for c in order]

    # --- inputs ----------------------------------------------------------------

    def translate(self, table: Table, seat: int, inp: Input) -> dict[str, Any]:
        if inp.kind == "tag":
            raise IllegalAction(KnobMenus.tap_refusal)
        if inp.kind not in ("knob", "press"):
            raise IllegalAction("That button does nothing here")
        menu = self.menu(table, seat)
        if menu is None and inp.kind == "knob" and table.view(None)["phase"] == "over":
            rows = len(_ranking_rows(table, table.view(None)))  # the knob scrolls the ranking
            return ranking.scroll(table, seat, rows, inp.step)
        if menu is None and inp.kind == "knob":
            # Nothing to choose: the knob turns the pages under the flap (the key's).
            count = len(self.pages(table, seat))
            page = (self.page(table, seat) + (inp.step or 0)) % count
            return {"ui": {"seat": seat, "keypage": page}}
        if menu is None:
            msgid, params = self._wait_message(table)
            raise IllegalAction(msgid, **params)
        items = self.items(table, seat, menu)
        if inp.kind == "knob":
            cursor = max(0, min(len(items) - 1, menu.cursor + (inp.step or 0)))
            return self._ui(table, seat, Menu(menu.name, cursor, menu.pick, menu.target))
        value = items[menu.cursor][1]
        if menu.name == "main":
            if value == "who" and len(table.view(seat)["loot"]) < 2:
                raise IllegalAction("You need 2 gems to accuse")
            return self._ui(table, seat, Menu(value))
        if menu.name == "steal":
            if value is None:
                return self._ui(table, seat, Menu("main", 0))
            if menu.pick is None:
                return self._ui(table, seat, Menu("steal", menu.cursor, pick=value))
            if menu.pick == value:
                return self._ui(table, seat, Menu("steal", menu.cursor))
            return {"rules": {"type": "steal", "seat": seat, "slots": [menu.pick, value]}}
        if menu.name == "who":
            if value is None:
                return self._ui(table, seat, Menu("main", 1))
            pub = table.view(None)
            if pub["unmasked"][value] is not None:
                raise IllegalAction("Already unmasked")
            if pub["escaped"][value]:
                raise IllegalAction("That player escaped")
            return self._ui(table, seat, Menu("colour", 0, target=value))
        if menu.name == "colour":
            if value is None:
                back = (menu.target or 0) - seat - 1  # the target's line in "who"
                return self._ui(table, seat, Menu("who", back % table.players))
            return {
                "rules": {"type": "accuse", "seat": seat, "target": menu.target, "colour": value}
            }
        return {"rules": {"type": "give", "seat": seat, "colour": value}}

    def _ui(self, table: Table, seat: int, menu: Menu) -> dict[str, Any]:
        return {
            "ui": {
                "seat": seat,
                "v": table.state.version,
                "menu": menu.name,
                "cursor": menu.cursor,
                "pick": menu.pick,
                "target": menu.target,
            }
        }

    def apply_ui(self, table: Table, ui: dict[str, Any]) -> None:
        if ranking.apply(table, ui):  # the final ranking's first row shown
            return
        if "keypage" in ui:
            table.ui[f"keypage:{ui['seat']}"] = ui["keypage"]
            return
        table.ui[f"menu:{ui['seat']}"] = {k: v for k, v in ui.items() if k != "seat"}

    def _wait_message(self, table: Table) -> tuple[str, dict[str, Any]]:
        """The refusal for a seat whose turn it is not (the hub speaks the seat's colour)."""
        pub = table.view(None)
        colours = table.seating.colours
        if pub["phase"] == "give":
            return N_("Wait: {seat} gives gems"), {"seat": colours[pub["pending"]["giver"]]}
        return N_("Wait: it's {seat}'s turn"), {"seat": colours[pub["turn"]]}

    # --- host and timers ---------------------------------------------------------

    def advance(self, table: Table) -> dict[str, Any] | None:
        return None  # the game has no table moves: turns follow the players

    def timer(self, table: Table) -> tuple[float, dict[str, Any]] | None:
        return None

    # --- screens ----------------------------------------------------------------

    def station_screen(self, table: Table, seat: int) -> Screen:
        me = table.view(seat)
        pub = me["table"]
        name = table.seating.name
        menu = self.menu(table, seat)
        market = market_line(pub)
        loot = pub["loot"][seat]
        own = plural("Loot {n} gem", "Loot {n} gems", loot["size"])
        if loot["top"]:
            own = _("Loot {n}, top {gem}", n=loot["size"], gem=gem_name(loot["top"]))
        suspects = self.suspects_rows(table, pub)
        secret = self._secret(me)
        if menu is None and self.page(table, seat):
            head, rows = self.pages(table, seat)[self.page(table, seat)]
            count = len(self.pages(table, seat))
            secret = Secret(title=f"{head} {self.page(table, seat) + 1}/{count}", lines=tuple(rows))
        led = ACT_LED if menu is not None else IDLE_LED
        if pub["phase"] == "over":
            title, lines = self._final_screen(table, pub, seat)
        elif menu is None:
            if pub["phase"] == "give":
                p = pub["pending"]
                gives = _(
                    "{giver} gives {n} to {receiver}",
                    giver=table.seating.short(p["giver"]),
                    n=p["left"],
                    receiver=table.seating.short(p["receiver"]),
                )
                status = [own, gives]
            elif len(suspects) == 1:
                status = [own, *suspects]  # the title says whose turn it is
            else:
                # Five or six seats: the list takes two rows, the loot stays under the flap.
                status = suspects
            title = _("{seat}: {turn}'s turn", seat=name(seat), turn=name(pub["turn"]))
            lines = [_("Market, deck {n}:", n=pub["deck"]), market, *status]
        elif menu.name == "give":
            p = pub["pending"]
            title = plural(
                "{seat}: give {n} gem", "{seat}: give {n} gems", p["left"], seat=name(seat)
            )
            owe = _("You owe {seat} {n}", seat=name(p["receiver"]), n=p["left"])
            lines = [owe, _("Lift the flap to"), _("choose each gem"), market]
            secret = Secret(
                title=_("Give {n} to {seat}", n=p["left"], seat=name(p["receiver"])),
                lines=(_you_are(me), *self._window(table, seat, menu)),
            )
        elif menu.name == "main":
            title = _("{seat}: YOUR TURN", seat=name(seat))
            lines = [market, own, *self._window(table, seat, menu, size=2)]
        elif menu.name == "steal":
            title = _("{seat}: steal 2 gems", seat=name(seat))
            if menu.pick is None:
                head = _("Pick 2 of 5 (deck {n})", n=pub["deck"])
            else:
                gem = gem_name(pub["market"][menu.pick])
                head = _("1st {n} {gem}; 1 more", n=menu.pick + 1, gem=gem)
            lines = [head, *self._window(table, seat, menu)]
        elif menu.name == "who":
            title = _("{seat}: accuse who?", seat=name(seat))
            lines = [_("Wrong costs you 2"), *self._window(table, seat, menu)]
        else:
            assert menu.target is not None
            left = pub["suspects"][menu.target].count("?")
            title = _("{seat}: {target} is..?", seat=name(seat), target=name(menu.target))
            head = _("{target}: {n} ? left", target=name(menu.target), n=left)
            lines = [head, *self._window(table, seat, menu)]
        last = _last_event(table, pub, seat)
        if last and menu is None and pub["phase"] == "play":
            lines[2:] = [own, last]  # what just happened beats the suspects summary
        title = shrink_names(title, [name(s) for s in range(table.players)])
        return Screen(rev=0, title=fit(title), lines=tuple(lines), secret=secret, led=led)

    @staticmethod
    def suspects_rows(table: Table, pub: dict[str, Any]) -> list[str]:
        """ "Suspects R7 Y7 G7 B7": each seat's letter and how many colours it may still be
        (a word, not a bare "?", says what the list is). Where the list does not fit after
        the word (five or six seats), it goes on over a second row, under its start:
        "Suspects R7 Y6 G6 B7" / "         K7 P7" (never "Susp. R7Y6G6B7K7P7")."""
        cells = suspect_cells(table, pub)
        word = _("Suspects {summary}", summary="")
        rows = [word]
        for cell in cells:
            row = f"{rows[-1]}{cell} "
            if len(glass(row.rstrip())) > CHARS:
                rows.append(" " * len(glass(word)) + f"{cell} ")
            else:
                rows[-1] = row
        return [row.rstrip() for row in rows]

    def _window(self, table: Table, seat: int, menu: Menu, size: int = WINDOW) -> list[str]:
        items = self.items(table, seat, menu)
        start = max(0, min(menu.cursor - 1, len(items) - size))
        shown = [
            ("> " if i == menu.cursor else "  ") + label
            for i, (label, _value) in enumerate(items)
            if start <= i < start + size
        ]
        marker = scroll_marker(start, size, len(items))
        if marker and shown:
            # The arrow at the end of the last row says more lies below (or above).
            arrow = marker[-1]
            shown[-1] = f"{shown[-1][: CHARS - 2]:<{CHARS - 2}} {arrow}"
        return shown

    def page(self, table: Table, seat: int) -> int:
        """The page under the flap shown while the seat has nothing to choose (0: its
        identity)."""
        return int(table.ui.get(f"keypage:{seat}", 0)) % len(self.pages(table, seat))

    def pages(self, table: Table, seat: int) -> list[tuple[str, list[str]]]:
        """The pages the knob turns under the flap: the seat's identity, then the key."""
        secret = self._secret(table.view(seat))
        return [(secret.title, list(secret.lines)), *key_pages(self.key_rows(table))]

    def key_rows(self, table: Table) -> list[str]:
        """The short forms of this game's screens in words."""
        pub = table.view(None)
        letters = seat_letters(table)
        names = [table.seating.name(s) for s in range(table.players)]
        shorts = [
            short_form(table.seating.short(s), names[s])
            for s in range(table.players)
            if table.seating.short(s) != names[s]
        ]
        codes = gem_codes(pub["colours"])
        gems = [short_form(code, gem_name(c)) for c, code in codes.items() if code != gem_name(c)]
        first = letters[0]
        return [
            _("Suspects {code}7:", code=first),
            _("  {seat} may still be", seat=names[0]),
            _("  one of 7 colours"),
            *spaced([short_form(code, name) for code, name in zip(letters, names, strict=True)]),
            *spaced([_("!: unmasked"), _("^: escaped")]),
            *spaced(shorts),
            *spaced(gems),
        ]

    def _secret(self, me: dict[str, Any]) -> Secret:
        loot = me["loot"]
        top = fit_list(_("Top:"), [gem_name(g) for g in reversed(loot[-4:])])
        identity = gem_name(me["identity"])
        return Secret(
            title=_("Your identity"),
            lines=(
                _you_are(me),
                plural("{colour} gem: {n}", "{colour} gems: {n}", me["score"], colour=identity),
                plural("Loot: {n} gem", "Loot: {n} gems", len(loot)),
                top if loot else _("Top: -"),
            ),
        )

    def _final_screen(self, table: Table, pub: dict[str, Any], seat: int) -> tuple[str, list[str]]:
        """The seat's own rank, then the ranking, which the knob scrolls ("1-3/6 ▼")."""
        ranks = lang.ranks(pub["ranking"] or [])
        score = pub["scores"][seat]
        me = plural("You: #{rank}, {n} gem", "You: #{rank}, {n} gems", score, rank=ranks[seat])
        title = shrink(lambda who: f"{who} {_('Over')}", table.seating.name(seat))
        return ranking.screen(title, me, _ranking_rows(table, pub), table, seat)

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        if pub["phase"] == "over":
            end = _("deck empty") if pub["end"] == "deck" else _("all out")
            return _("Over ({end})", end=end), _ranking_rows(table, pub)  # the hub pages it
        # A seat by its colour and number, its whole colour where the title holds it.
        forms = []
        for name in (table.seating.name, table.seating.short):
            if pub["phase"] == "give":
                p = pub["pending"]
                giver = numbered(name(p["giver"]), p["giver"])
                receiver = numbered(name(p["receiver"]), p["receiver"])
                forms.append(
                    _("{giver} gives {n} {receiver}", giver=giver, n=p["left"], receiver=receiver)
                )
            else:
                forms.append(_("Turn: {seat}", seat=numbered(name(pub["turn"]), pub["turn"])))
        # The deck is on the market's row: the title leaves room for the hub's "1/4".
        title = fit(first_fitting(forms, CHARS - len(" 1/4")))
        return title, [*self._loot_page(table, pub), *self._suspects_page(table, pub)]

    @staticmethod
    def _loot_page(table: Table, pub: dict[str, Any]) -> list[str]:
        """The market and the deck, then a row per seat under a sentence: "Red 4, top green" (the
        loot's size and its top gem); the page is filled so the suspects start a page."""
        gems = gem_codes(pub["colours"])
        rows = [_("Market, deck {n}:", n=pub["deck"]), market_line(pub), _("Loot, top gem:")]
        for s, loot in enumerate(pub["loot"]):
            seat = numbered(table.seating.short(s), s)  # "Red1": never colour alone
            if not loot["top"]:
                rows.append(_("{seat}: no gems", seat=seat))
                continue
            row = _("{seat} {n}, top {gem}", seat=seat, n=loot["size"], gem=gem_name(loot["top"]))
            if len(glass(row)) > CHARS:
                row = _("{seat} {n}, top {gem}", seat=seat, n=loot["size"], gem=gems[loot["top"]])
            rows.append(fit(row))
        # The hub's last line is the host's hint: a page holds one line fewer.
        return rows + [""] * (-len(rows) % (BODY_LINES - 1))

    @staticmethod
    def _suspects_page(table: Table, pub: dict[str, Any]) -> list[str]:
        """A sentence, then each seat and how many colours it may still be, three a row
        ("Red 7  Yel 6  Grn 6"); a seat unmasked or escaped says so on a row of its own
        ("Blu is green", "Blk escaped")."""
        cells, out = [], []
        for s, suspects in enumerate(pub["suspects"]):
            seat = numbered(table.seating.short(s), s)
            if pub["unmasked"][s] is not None:
                colour = gem_name(pub["unmasked"][s])
                out.append(fit(_("{seat} is {colour}", seat=seat, colour=colour)))
            elif pub["escaped"][s]:
                out.append(_("{seat} escaped", seat=seat))
            else:
                cells.append(f"{seat} {suspects.count('?')}")
        rows = _columns(cells, 3)
        if any(len(glass(row)) > CHARS for row in rows):
            rows = _columns(cells, 2)
        return [_("Colours each may be:"), *rows, *out]


def gem_name(colour: str) -> str:
    """A gem colour in the table's language, lower case ("red" -> "rouge")."""
    return lang.colour(colour).lower()


def _you_are(me: dict[str, Any]) -> str:
    return _("You are {colour}", colour=gem_name(me["identity"]))


def market_line(pub: dict[str, Any]) -> str:
    """The market's five gems: their names where they fit on a line, else three letters
    each ("jau rou ble jau ora")."""
    words = " ".join(gem_name(g) for g in pub["market"])
    if len(glass(words)) <= CHARS:
        return words
    gems = gem_codes(pub["colours"])
    return " ".join(gems[g] for g in pub["market"])


def _columns(cells: list[str], per_row: int) -> list[str]:
    """Cells ``per_row`` a row, in aligned columns."""
    width = max((len(glass(c)) for c in cells), default=0) + 1
    rows = [cells[i : i + per_row] for i in range(0, len(cells), per_row)]
    return ["".join(f"{c:<{width}}" for c in row).rstrip() for row in rows]


def _ranking_rows(table: Table, pub: dict[str, Any]) -> list[str]:
    ranks = lang.ranks(pub["ranking"] or [])
    return [
        f"{ranks[s]}. {table.seating.name(s):<7}{pub['scores'][s]:>2} "
        f"{gem_name(pub['identities'][s])}"
        for group in pub["ranking"] or []
        for s in group
    ]


def _last_event(table: Table, pub: dict[str, Any], seat: int) -> str:
    """The last accusation, said to everyone: who accused whom, and how it went
    (an accusation is made out loud at the table: nothing here is secret)."""
    if not table.actions:
        return ""
    last = action_to_json(table.actions[-1])
    if last.get("type") != "accuse":
        return ""
    right = pub["unmasked"][last["target"]] == last["colour"]
    said = N_("{who}: {target} is {colour}!") if right else N_("{who}: {target} not {colour}")
    colour = gem_name(last["colour"])
    # The seats' names whole where the line holds them, else their short forms.
    forms = [
        _(said, who=names(last["seat"]), target=names(last["target"]), colour=colour)
        for names in (table.seating.name, table.seating.short)
    ]
    return first_fitting(forms)


def _status(pub: dict[str, Any], seat: int) -> str:
    if pub["unmasked"][seat] is not None:
        return _("is {colour}", colour=gem_name(pub["unmasked"][seat]))
    if pub["escaped"][seat]:
        return _("escaped")
    return f"{pub['suspects'][seat].count('?')}?"


def seat_letters(table: Table) -> list[str]:
    """Each seat's code on the summary lines: its colour's letter in the table's language,
    or, where two seats share one, the first two letters of its colour's name."""
    colours = table.seating.colours
    letters = [
        _(SEAT_LETTER[c]) if c in SEAT_LETTER else glass(lang.colour(c))[:1].upper()
        for c in colours
    ]
    codes = list(letters)
    for s, letter in enumerate(letters):
        if letters.count(letter) > 1:
            name = glass(lang.colour(colours[s]))
            taken = set(codes) - {letter}
            codes[s] = next(
                code
                for code in (name[:2], name[0] + name[-1], *(name[0] + str(i) for i in range(10)))
                if code not in taken
            )
    return codes


def suspect_summary(table: Table, pub: dict[str, Any], room: int) -> str:
    """Per seat: its code and the "?" left, or a mark (unmasked / escaped); the cells
    go without spaces between them where spaced they would not fit in ``room``."""
    cells = suspect_cells(table, pub)
    spaced = " ".join(cells)
    return spaced if len(glass(spaced)) <= room else "".join(cells)


def suspect_cells(table: Table, pub: dict[str, Any]) -> list[str]:
    """Per seat: its code and the "?" left, or a mark (unmasked / escaped): "R7", "B="."""
    cells = []
    for s, letter in enumerate(seat_letters(table)):
        if pub["unmasked"][s] is not None:
            mark = _(UNMASKED_MARK)
        elif pub["escaped"][s]:
            mark = _(ESCAPED_MARK)
        else:
            mark = str(pub["suspects"][s].count("?"))
        cells.append(f"{letter}{mark}")
    return cells


def gem_codes(colours: list[str]) -> dict[str, str]:
    """A distinct three-letter code per gem colour ("red", "ora", ... for the default deck):
    the start of the name the table reads."""
    codes: dict[str, str] = {}
    for colour in colours:
        word = gem_name(colour)  # the code comes from the name the table reads
        tries = (word[:3], word[:2] + word[-1], *(word[:2] + str(i) for i in range(10)))
        for code in tries:
            if code not in codes.values():
                codes[colour] = code
                break
    return codes


def make_binding(**settings: Any) -> IdentiquestBinding:
    """The binding (no table settings; both ``give`` modes are supported)."""
    return IdentiquestBinding()
