"""Identiquest at a physical table (RULES.md §3, table binding).

- Your identity colour (and your loot, bottom to top) only under the flap.
- On your turn the knob menu offers "Steal 2 gems" or "Accuse a player".
  Steal: pick a market slot, then a second one (pressing a picked slot again
  puts it back); Accuse: pick a player, then a colour. Every submenu ends with
  "Back". Turn the knob to move, press to choose.
- Option ``give: choose``: the giver picks each gem from a menu of the colours in
  their loot. That menu shows under the flap (a loot's content is private); the
  public part says to lift the flap.
- The public part of every station shows the market, your loot's size and top and
  a summary of the suspect rows ("?" left per player, u = unmasked, e = escaped);
  the hub display shows every loot too.
- There are no tags in this game: a tap is refused.

Menu cursors live in ``table.ui`` (``{"ui": ...}`` events), stamped with the state
version they belong to: after any move every menu starts afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from firmware.hub.table import Table
from firmware.link.protocol import Input, Screen, Secret
from rules.core import IllegalAction

IDLE_LED = (0, 0, 0)
ACT_LED = (255, 160, 0)
WIDTH = 21
#: Menu items shown at once under a header line.
WINDOW = 3
BACK = "Back"
#: One letter per seat colour on the summary lines (black is K, as in CMYK).
SEAT_LETTER = {
    "red": "R",
    "yellow": "Y",
    "green": "G",
    "blue": "B",
    "black": "K",
    "purple": "P",
    "orange": "O",
    "white": "W",
}


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
        if menu.name == "main":
            return [("Steal 2 gems", "steal"), ("Accuse a player", "who")]
        if menu.name == "steal":
            slots = [
                (f"{i + 1} {gem}{' *' if i == menu.pick else ''}", i)
                for i, gem in enumerate(pub["market"])
            ]
            return [*slots, (BACK, None)]
        if menu.name == "who":
            others = [(seat + k) % table.players for k in range(1, table.players)]
            return [(f"{name(p):<7}{_status(pub, p)}", p) for p in others] + [(BACK, None)]
        if menu.name == "colour":
            assert menu.target is not None
            row = pub["suspects"][menu.target]
            colours = [
                (f"{c}{'  x' if row[i] == 'x' else ''}", c) for i, c in enumerate(pub["colours"])
            ]
            return [*colours, (BACK, None)]
        # give: the colours in the giver's loot, topmost first, with counts
        loot = table.view(seat)["loot"]
        order = list(dict.fromkeys(reversed(loot)))
        return [(f"{c} ({loot.count(c)})", c) for c in order]

    # --- inputs ----------------------------------------------------------------

    def translate(self, table: Table, seat: int, inp: Input) -> dict[str, Any]:
        if inp.kind == "tag":
            raise IllegalAction("No cards in this game: use the knob")
        if inp.kind not in ("knob", "press"):
            raise IllegalAction("That button does nothing here")
        menu = self.menu(table, seat)
        if menu is None:
            raise IllegalAction(self._wait_message(table))
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
        table.ui[f"menu:{ui['seat']}"] = {k: v for k, v in ui.items() if k != "seat"}

    def _wait_message(self, table: Table) -> str:
        pub = table.view(None)
        name = table.seating.name
        if pub["phase"] == "give":
            return f"Wait: {name(pub['pending']['giver'])} gives gems"
        return f"Wait: it's {name(pub['turn'])}'s turn"

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
        gems = gem_codes(pub["colours"])
        menu = self.menu(table, seat)
        market = f"Mkt {' '.join(gems[g] for g in pub['market'])} {pub['deck']}"
        loot = pub["loot"][seat]
        own = f"Loot {loot['size']}" + (f", top {loot['top']}" if loot["top"] else "")
        suspects = "Sus " + _suspect_summary(table, pub)
        secret = self._secret(me)
        led = ACT_LED if menu is not None else IDLE_LED
        if pub["phase"] == "over":
            title = f"{name(seat)}: game over"
            lines = self._final_lines(table, pub, seat)
        elif menu is None:
            if pub["phase"] == "give":
                p = pub["pending"]
                status = f"{name(p['giver'])} gives {p['left']} to {name(p['receiver'])}"
            else:
                status = "Wait for your turn"
            title = f"{name(seat)}: {name(pub['turn'])}'s turn"
            lines = [market, own, suspects, status]
        elif menu.name == "give":
            p = pub["pending"]
            title = f"{name(seat)}: give {p['left']} gems"
            owe = f"You owe {name(p['receiver'])} {p['left']}"
            lines = [owe, "Lift the flap to", "choose each gem", market]
            secret = Secret(
                title=f"Give {p['left']} to {name(p['receiver'])}",
                lines=(f"You are {me['identity']}", *self._window(table, seat, menu)),
            )
        elif menu.name == "main":
            title = f"{name(seat)}: YOUR TURN"
            lines = [market, own, *self._window(table, seat, menu, size=2)]
        elif menu.name == "steal":
            title = f"{name(seat)}: steal 2 gems"
            if menu.pick is None:
                head = f"Pick 2 of 5 (deck {pub['deck']})"
            else:
                head = f"1st {menu.pick + 1} {pub['market'][menu.pick]}; 1 more"
            lines = [head, *self._window(table, seat, menu)]
        elif menu.name == "who":
            title = f"{name(seat)}: accuse who?"
            lines = ["Wrong costs you 2", *self._window(table, seat, menu)]
        else:
            assert menu.target is not None
            left = pub["suspects"][menu.target].count("?")
            title = f"{name(seat)}: {name(menu.target)} is..?"
            lines = [f"{name(menu.target)}: {left} ? left", *self._window(table, seat, menu)]
        return Screen(rev=0, title=title[:WIDTH], lines=tuple(lines), secret=secret, led=led)

    def _window(self, table: Table, seat: int, menu: Menu, size: int = WINDOW) -> list[str]:
        items = self.items(table, seat, menu)
        start = max(0, min(menu.cursor - 1, len(items) - size))
        return [
            ("> " if i == menu.cursor else "  ") + label
            for i, (label, _) in enumerate(items)
            if start <= i < start + size
        ]

    def _secret(self, me: dict[str, Any]) -> Secret:
        loot = me["loot"]
        top = " ".join(g[:3] for g in reversed(loot[-4:]))
        return Secret(
            title="Your identity",
            lines=(
                f"You are {me['identity']}",
                f"{me['identity']} gems: {me['score']}",
                f"Loot: {len(loot)} gems",
                f"Top: {top}" if loot else "Top: -",
            ),
        )

    def _final_lines(self, table: Table, pub: dict[str, Any], seat: int) -> list[str]:
        ranking = pub["ranking"] or []
        mine = next(i for i, g in enumerate(ranking, start=1) if seat in g)
        lines = [f"You: #{mine}, {pub['scores'][seat]} gems"]
        for place, group in enumerate(ranking, start=1):
            for s in group:
                who = f"{place}. {table.seating.name(s):<7}{pub['scores'][s]:>2}"
                lines.append(f"{who} {pub['identities'][s]}")
        return [line[:WIDTH] for line in lines[:4]]

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)
        name = table.seating.name
        gems = gem_codes(pub["colours"])
        if pub["phase"] == "over":
            ranking = pub["ranking"] or []
            rows = [
                f"{place}. {name(s):<7}{pub['scores'][s]:>2} {pub['identities'][s]}"[:WIDTH]
                for place, group in enumerate(ranking, start=1)
                for s in group
            ]
            return f"Over ({pub['end']})", rows[:4]
        if pub["phase"] == "give":
            p = pub["pending"]
            title = f"{name(p['giver'])} gives {p['left']} {name(p['receiver'])}"
        else:
            title = f"Turn: {name(pub['turn'])}"
        market = f"Mkt {' '.join(gems[g] for g in pub['market'])} {pub['deck']}"
        cells = []
        for s, loot in enumerate(pub["loot"]):
            top = gems[loot["top"]] if loot["top"] else "--"
            cells.append(f"{_letter(table, s)}{loot['size']:>2}{top}")
        rows = [" ".join(cells[i : i + 3]) for i in range(0, len(cells), 3)]
        return title[:WIDTH], [market, *rows, "?" + _suspect_summary(table, pub)][:4]


def _status(pub: dict[str, Any], seat: int) -> str:
    if pub["unmasked"][seat] is not None:
        return f"is {pub['unmasked'][seat]}"
    if pub["escaped"][seat]:
        return "escaped"
    return f"{pub['suspects'][seat].count('?')}?"


def _letter(table: Table, seat: int) -> str:
    colour = table.seating.colours[seat]
    return SEAT_LETTER.get(colour, colour[:1].upper())


def _suspect_summary(table: Table, pub: dict[str, Any]) -> str:
    """Per seat: its letter and the "?" left, or u (unmasked) / e (escaped)."""
    cells = []
    for s in range(table.players):
        if pub["unmasked"][s] is not None:
            mark = "u"
        elif pub["escaped"][s]:
            mark = "e"
        else:
            mark = str(pub["suspects"][s].count("?"))
        cells.append(f"{_letter(table, s)}{mark}")
    return " ".join(cells)


def gem_codes(colours: list[str]) -> dict[str, str]:
    """A distinct two-letter code per gem colour ("re", "or", ... for the default deck)."""
    codes: dict[str, str] = {}
    for colour in colours:
        for code in (colour[:2], colour[0] + colour[-1], *(colour[0] + str(i) for i in range(10))):
            if code not in codes.values():
                codes[colour] = code
                break
    return codes


def make_binding(**settings: Any) -> IdentiquestBinding:
    """The binding (no table settings; both ``give`` modes are supported)."""
    return IdentiquestBinding()
