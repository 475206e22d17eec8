"""Identités cryptées 2.0 at a physical table (binding; rules/docs/identites-cryptees.md).

Every choice is a knob menu shown only under the flap (the ``secret`` part of the
seat's own screen): turn to move the cursor, press to choose. NFC cards are not
needed for this game: the hub deals and keeps every card (the key set's tags are
refused with a readable message).

- Your ID, loyalty cards, faction, programs and what you have investigated stay
  under your flap; with nothing to choose the knob turns those pages. A card's page
  has a short title ("Program 3/6") and its name and text whole below, over two pages
  when they need it: nothing on the glass is cut (a sub-menu's title falls back to
  the card's name, then to the verb, where its words do not fit).
- The last pages the knob turns are the key: "ID", "L"/"R" (French "G"/"D"), the sides'
  letters ("(M)"), "x2", "HP", "prog." and the seats' short forms, in words.
- HP, weapons and their targets, face-up cards and the last victory check are
  public: on every station (your own part) and on the hub display.
- On your turn the menu lists what you may do: investigate, take a weapon, draw,
  drop, re-aim, fire, heal, play a program. Choices that need a target open a
  sub-menu ("Investigate >"); "< Back" leaves it. Hits, re-aims, ID abilities and
  discards are menus for the seat they wait on.
- After an action is declared the interrupt window opens: every other living
  seat sees the declared action and a countdown (``table.timer_left``), and may
  pass or play an anytime program; the window closes when all passed or when the
  hub's timer sends ``timeout`` (``interrupt_window`` seconds, default 5).
- Anytime programs are in every seat's menu at any moment (a Decision, docs' Turn flow):
  also while a hit, re-aim, ability or discard waits, and for the actor inside its
  own window; the menus simply follow the engine's legal actions.
- The victory check announces only "The game goes on" or the winners.
- Seats go by the table's colours; past the key set's eight, by number ("Seat 9",
  "S9" in lists; French "Place 9", "P9": :func:`firmware.link.lang.seat_label`). The hub
  display adds each coloured seat's number ("Blk4's turn", "Red1: Pistol at Yel2").
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable
from typing import Any

import msgspec

from firmware.hub.bindings.common import ACT_LED, IDLE_LED, seconds_shown
from firmware.hub.bindings.legend import key_pages, seat_rows, spaced
from firmware.hub.bindings.menus import KnobMenus, MenuEntry
from firmware.hub.bindings.numbered import numbered
from firmware.hub.table import Table
from firmware.link.lang import N_, _, in_language, label, seat_label
from firmware.link.protocol import Screen, Secret
from firmware.link.render import (
    BODY_LINES,
    CHARS,
    first_fitting,
    fit,
    fit_list,
    glass,
    menu_rows,
    shrink,
    titled,
    wrap,
)
from rules._identites_cryptees_cards import FACTIONS
from rules.core import Action, action_to_json
from rules.identites_cryptees import INFO

CARDS = N_("Cards >")
BACK = N_("< Back")
WINDOW = 4
TIMEOUT = {"rules": {"type": "timeout"}}


def seat_name(table: Table, seat: int | None) -> str:
    """A seat's colour at this table ("Seat 9" / "Place 9" past the key set's colours)."""
    if seat is None:
        return "-"
    return seat_label(seat, table.seating.colours)


def short(table: Table, seat: int | None) -> str:
    """A seat's short form for lists ("Blue", "Blk"; "S9" / "P9" past the box's colours)."""
    if seat is None:
        return "-"
    return seat_label(seat, table.seating.colours, short=True)


def tag(table: Table, seat: int | None) -> str:
    """A seat on the hub display: its short form and its number ("Blk4", "Blue2"; "S9"
    already has one), so a host who cannot tell red from green still finds the seat."""
    if seat is None:
        return "-"
    return numbered(short(table, seat), seat)


def namer(hub: bool) -> Callable[[Table, int | None], str]:
    """How a line names a seat: by :func:`tag` on the hub display, by :func:`short` on the
    stations (whose own lines stay short)."""
    return tag if hub else short


def plain(action: Action) -> dict[str, Any]:
    """An action's JSON notation as the store keeps it (lists, not tuples)."""
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(action_to_json(action)))
    return out


class IdentitesCrypteesBinding(KnobMenus):
    """Knob menus, hidden cards under the flap, the interrupt window's timer."""

    tap_refusal = N_("No cards to tap in this game: use the knob")

    # --- a seat's station state ---------------------------------------------------

    def legal(self, table: Table, seat: int) -> list[Action]:
        if table.over:
            return []
        return table.engine.legal_actions(table.state, seat)

    def can_act(self, table: Table, seat: int) -> bool:
        return bool(self.legal(table, seat))

    def paging(self, table: Table, seat: int) -> bool:
        """The knob turns the card pages: nothing to choose, or opened from this menu."""
        if not self.legal(table, seat):
            return True
        mode = (table.ui.get(f"mode:{seat}"), table.ui.get(f"modectx:{seat}"))
        return mode == ("cards", self._decision(table))

    def group(self, table: Table, seat: int) -> str:
        """The sub-menu open now, by its key ("" for the top menu), for this decision only.

        A key, not the sub-menu's words: the record keeps it, and a table may change its
        language mid-game."""
        if table.ui.get(f"groupctx:{seat}") != self._decision(table):
            return ""
        return str(table.ui.get(f"group:{seat}", ""))

    def _decision(self, table: Table) -> str:
        """What is being decided: a sub-menu or cursor is kept only while it lasts.

        Any accepted action ends a decision, except the others' passes in a window
        (a seat choosing its answer keeps its place while the others pass).
        """
        pub = table.view(None)["table"]
        if pub["phase"] == "window":
            declared = msgspec.json.encode(pub["declared"]).decode()
            return f"w/{pub['active']}/{declared}/{pub['may_change']}"
        return f"v/{pub['version']}"

    def context(self, table: Table, seat: int) -> str:
        return f"{self._decision(table)}/{self.group(table, seat)}"

    def cursor(self, table: Table, seat: int) -> int:
        return self._cursor_in(table, seat, len(self.menu(table, seat)))

    def _cursor_in(self, table: Table, seat: int, size: int) -> int:
        """The cursor in a menu of ``size`` options (the one shown now)."""
        if table.ui.get(f"ctx:{seat}") == self.context(table, seat):
            return int(table.ui.get(f"cursor:{seat}", 0)) % size
        return 0

    # --- menus -------------------------------------------------------------------

    def menu(self, table: Table, seat: int) -> list[MenuEntry]:
        """The options a press may choose now (never empty)."""
        return self._menu_of(table, seat, self.groups(table, seat, self.legal(table, seat)))

    def _menu_of(
        self, table: Table, seat: int, groups: dict[str, tuple[str, list[tuple[str, Action]]]]
    ) -> list[MenuEntry]:
        """The menu of the legal actions ``groups`` (see :meth:`groups`)."""
        opened = {"seat": seat, "mode": "cards", "page": 0, "modectx": self._decision(table)}
        cards = MenuEntry(_(CARDS), {"ui": opened})
        if not groups:
            return [cards]
        current = self.group(table, seat)
        decision = self._decision(table)
        if current and current in groups:
            back = {"ui": {"seat": seat, "group": "", "groupctx": decision}}
            subs = [MenuEntry(lb, {"rules": plain(a)}) for lb, a in groups[current][1]]
            return [*subs, MenuEntry(_(BACK), back)]
        top: list[MenuEntry] = []
        for key, (group, items) in groups.items():
            if len(items) == 1 or not group.endswith(">"):
                for lb, a in items:
                    top.append(MenuEntry(lb, {"rules": plain(a)}))
            else:
                enter = {"ui": {"seat": seat, "group": key, "groupctx": decision}}
                top.append(MenuEntry(group, enter))
        return [*top, cards]

    def groups(
        self, table: Table, seat: int, legal: list[Action]
    ) -> dict[str, tuple[str, list[tuple[str, Action]]]]:
        """The legal actions by sub-menu: key -> (its words, [(label, action)])."""
        groups: dict[str, tuple[str, list[tuple[str, Action]]]] = {}
        for action in legal:
            key, group, label = self.label(table, seat, action)
            groups.setdefault(key, (group, []))[1].append((label, action))
        return groups

    def _program_name(self, table: Table, seat: int, card: int) -> str:
        for prog in table.view(seat)["you"]["programs"]:
            if prog["card"] == card:
                return in_language(prog["name"])
        return _("program {n}", n=card)

    def _weapon_name(self, table: Table, key: str) -> str:
        for w in table.view(None)["table"]["weapons"]:
            if w["key"] == key:
                return in_language(w["name"])
        return key

    def label(self, table: Table, seat: int, action: Action) -> tuple[str, str, str]:
        """(group key, group, label) of an action; a group ending in ">" opens a sub-menu."""
        a = action_to_json(action)
        kind = a["type"]
        who = short(table, a.get("target"))
        if kind == "investigate":
            card = _card_slot(a["card"])
            return kind, _("Investigate >"), _("Look {seat} {card}", seat=who, card=card)
        if kind == "equip":
            weapon = self._weapon_name(table, a["weapon"])
            group = _("Take {weapon} >", weapon=weapon)
            key = f"equip:{a['weapon']}"
            targets = a["targets"]
            if not targets:
                return key, group, _("Take {weapon}", weapon=weapon)
            aimed = "+".join(short(table, t) for t in targets)
            return key, group, _("{weapon} at {targets}", weapon=weapon, targets=aimed)
        if kind in _SIMPLE:
            text = _(_SIMPLE[kind])
            return kind, text, text
        if kind == "aim":
            aimed = "+".join(short(table, t) for t in a["targets"])
            return kind, _("Aim >"), _("Aim at {targets}", targets=aimed)
        if kind == "fire":
            if a.get("target") is not None:
                return kind, _("Fire >"), _("Fire at {seat}", seat=who)
            return "fire!", _("Fire!"), _("Fire!")
        if kind == "reveal":
            text = _("Reveal {card}", card=_card_slot(a["card"], long=True))
            return f"reveal:{a['card']}", text, text
        if kind == "discard":
            name = self._program_name(table, seat, a["card"])
            return kind, _("Discard >"), _("Drop {card}", card=name)
        if kind in ("program", "ability"):
            parts = []
            if a.get("target") is not None:
                parts.append(who)
            if a.get("slot"):
                parts.append(_card_slot(a["slot"]))
            if a.get("own_slot"):
                parts.append(_("my {card}", card=_card_slot(a["own_slot"])))
            detail = " ".join(parts)
            if kind == "ability":
                return kind, _("ID ability >"), _("Ability {detail}", detail=detail).strip()
            name = self._program_name(table, seat, a["card"])
            group = _("Play {card} >", card=name)
            label = f"{name} {detail}".strip() if detail else name
            return f"program:{a['card']}", group, label
        return kind, kind, kind

    # --- host and timer --------------------------------------------------------------

    def advance(self, table: Table) -> dict[str, Any] | None:
        """The host's "next" closes an open interrupt window at once."""
        if table.view(None)["table"]["phase"] == "window":
            return dict(TIMEOUT)
        return None

    def timer(self, table: Table) -> tuple[float, dict[str, Any]] | None:
        """While an interrupt window is open: its seconds, then the table's timeout."""
        pub = table.view(None)["table"]
        if pub["phase"] == "window" and pub["window"]:
            return float(pub["window"]["seconds"]), dict(TIMEOUT)
        return None

    # --- screens -------------------------------------------------------------------

    def station_screen(self, table: Table, seat: int) -> Screen:
        pub = table.view(None)["table"]
        me = pub["seats"][seat]
        state = _("{n}HP", n=me["hp"]) if me["alive"] else _("out")
        title = shrink(lambda who: f"{who} {state}", seat_name(table, seat))
        acting = bool(self.legal(table, seat)) and self._asked(pub, seat)
        return Screen(
            rev=0,
            title=title,
            lines=tuple(self._public_lines(table, seat)),
            secret=self._secret(table, seat),
            led=ACT_LED if acting else IDLE_LED,
        )

    @staticmethod
    def _asked(pub: dict[str, Any], seat: int) -> bool:
        """The table waits on this seat (turn, window, hit, re-aim, ability, discard)."""
        if pub["phase"] == "window":
            return seat in (pub["window"] or {}).get("waiting", [])
        return bool(pub["pending"].get("seat") == seat)

    def _countdown(self, table: Table) -> str:
        """The interrupt window's seconds left (" 4s"), or "" when none runs."""
        pub = table.view(None)["table"]
        if pub["phase"] != "window" or not pub["window"]:
            return ""
        return f" {seconds_shown(table.timer_left, float(pub['window']['seconds']))}s"

    def _host_status(self, table: Table, lines: int) -> str:
        """The hub display's title: whose turn, or the window's seconds, short enough to
        leave room for the page count of its ``lines`` ("Window 4s 1/3")."""
        pub = table.view(None)["table"]
        if pub["phase"] == "window":
            return _("Window{clock}", clock=self._countdown(table))
        status = self._status(table, -1, hub=True)
        pages = -(-lines // (BODY_LINES - 1))  # the hub's last line is the host's hint
        room = CHARS - len(f" {pages}/{pages}") if pages > 1 else CHARS
        said = INFO.phase(pub["phase"])
        if len(glass(status)) <= room or said is None:
            return status
        compact = f"{tag(table, pub['pending'].get('seat'))}: {_(said.short)}"
        return first_fitting([compact, _(said.short)], room)

    def face_up(self, table: Table, *, hub: bool = False) -> list[str]:
        """Every face-up card at the table, a line each ("Yel left: Blue Badge"): an ID or a
        loyalty card shown, a permanent program in play. Public: the table sees them.
        ``hub``: for the hub display, the living seats' only (its pages stay few), each
        seat with its number ("Yel2 left: Blue Badge")."""
        # The same on every station's pages: made once a state, not once a station.
        lines = table.per_state(("face up", hub), lambda: self._face_up(table, hub))
        return list(lines)

    @staticmethod
    def _face_up(table: Table, hub: bool) -> tuple[str, ...]:
        pub = table.view(None)["table"]
        lines = []
        for s in pub["seats"]:
            if hub and not s["alive"]:
                continue  # an eliminated seat's cards all turn over: on the stations' page
            who = namer(hub)(table, s["seat"])
            shown = [("id", s["id"]), *((slot, s["loyalty"][slot]) for slot in ("left", "right"))]
            for slot, card in shown:
                if card:
                    lines.append(_face_line(who, _card_slot(slot), card))
            for prog in s["permanent"]:
                lines.append(_face_line(who, _("prog."), prog))
        return tuple(lines)

    def _status(self, table: Table, seat: int, *, hub: bool = False) -> str:
        """What the table waits for, the seat by name ("Place 11"), or by its short form
        ("P11") where the name leaves the line too long for the glass; on the hub display
        by its short form and number ("Blk4's turn")."""
        pub = table.view(None)["table"]
        who = pub["pending"].get("seat")
        if hub:
            return self._status_as(table, seat, tag(table, who))
        said = self._status_as(table, seat, seat_name(table, who))
        if len(glass(said)) <= CHARS:
            return said
        return self._status_as(table, seat, short(table, who))

    def _status_as(self, table: Table, seat: int, name: str) -> str:
        pub = table.view(None)["table"]
        pending = pub["pending"]
        kind, who = pending["kind"], pending.get("seat")
        if kind == "turn":
            return _("Your turn: lift flap") if who == seat else _("{seat}'s turn", seat=name)
        if kind == "window":
            waiting = (pub["window"] or {}).get("waiting", [])
            clock = self._countdown(table)
            if seat in waiting:
                return _("Window{clock}: pass/play", clock=clock)
            return _("Window{clock}: wait", clock=clock)
        if kind == "respond":
            if who == seat:
                return _("Hit! reveal or -{n}HP", n=pending["damage"])
            return _("{seat} is hit", seat=name)
        if kind == "reaim":
            return _("Re-aim your weapon") if who == seat else _("{seat} re-aims", seat=name)
        if kind == "ability":
            return _("Use your ID ability") if who == seat else _("{seat}: ability", seat=name)
        if kind == "discard":
            return _("Discard a program") if who == seat else _("{seat} discards", seat=name)
        return _("Game over")

    def _declared_rows(self, table: Table) -> list[str]:
        """The declared action as the hub says a weapon ("Blu: Pistol at Jau", the
        targets on a row of their own where the line would cut the weapon's name)."""
        d = table.view(None)["table"]["declared"]
        if d and d["type"] == "equip":
            actor = short(table, d.get("seat"))
            weapon = self._weapon_name(table, d["weapon"])
            targets = "+".join(short(table, t) for t in d.get("targets", []))
            if not targets:
                return [shrink(lambda w: _("{seat}: {weapon}", seat=actor, weapon=w), weapon)]
            return _held(actor, targets, weapon)
        line = self._declared_line(table)
        return [line] if line else []

    def _declared_line(self, table: Table) -> str:
        pub = table.view(None)["table"]
        d = pub["declared"]
        if not d:
            return ""
        actor = short(table, d.get("seat"))
        kind = d["type"]
        if kind == "investigate":
            return _("{who} looks at {seat}", who=actor, seat=short(table, d["target"]))
        if kind == "fire":
            target = d.get("target")
            if target is None:
                return _("{who} fires", who=actor)
            return _("{who} fires at {seat}", who=actor, seat=short(table, target))
        if kind == "aim":
            aimed = "+".join(short(table, t) for t in d["targets"])
            return _("{who} aims at {targets}", who=actor, targets=aimed)
        if kind == "draw":
            return _("{who} draws", who=actor)
        what = _(_SIMPLE[kind]) if kind in _SIMPLE else kind
        line = _("{who}: {action}", who=actor, action=what)  # French "Blu : Lâcher l'arme"
        return line if len(glass(line)) <= CHARS else f"{actor} {what}"

    def news_line(self, table: Table, *, hub: bool = False) -> str:
        """What just happened, from the last action's public events (the most telling);
        ``hub``: each seat with its number, for the hub display."""
        by_kind = {e.kind: e.data for e in table.news}
        for kind in _NEWS_ORDER:
            data = by_kind.get(kind)
            if data is not None:
                return self._news(table, kind, data, namer(hub))
        return ""

    def _news(
        self,
        table: Table,
        kind: str,
        data: dict[str, Any],
        name: Callable[[Table, int | None], str],
    ) -> str:
        who = name(table, data.get("seat"))
        if kind == "eliminated":
            return _("{who} is out", who=who)
        if kind == "damage":
            return _("{who} -{n}HP, {hp} left", who=who, n=data["amount"], hp=data["hp"])
        if kind == "program":
            target = data.get("target")
            card = in_language(data.get("name"))
            # The card whole where the line holds it: with its target, then "played", then
            # the bare "Blue4: Override Code"; a card cut (marked ".") only when nothing fits.
            forms = [_("{who} played {card}", who=who, card=card)]
            if target is not None:
                seat = name(table, target)
                forms.insert(0, _("{who}: {card} on {seat}", who=who, card=card, seat=seat))
            forms.append(_("{who}: {card}", who=who, card=card))
            fitting = [f for f in forms if len(glass(f)) <= CHARS]
            if fitting:
                return fitting[0]
            return shrink(lambda c: _("{who}: {card}", who=who, card=c), card)
        if kind in ("skip", "skip_next"):
            return _("{who} loses a turn", who=who)
        if kind == "heal":
            return _("{who} healed: {hp}HP", who=who, hp=data["hp"])
        if kind == "reveal":
            seat = table.view(None)["table"]["seats"][data["seat"]]
            up = seat["id"] if data["card"] == "id" else seat["loyalty"].get(data["card"])
            if not up:
                return _("{who} shows a card", who=who)
            slot = _card_slot(data["card"])
            card = in_language(up["name"])
            # The card whole where it fits: without its place ("Red shows Medic") before a cut.
            whole = _shown(who, slot, card)
            if len(glass(whole)) <= CHARS:
                return whole
            bare = _("{who} shows {card}", who=who, card=card)
            if len(glass(bare)) <= CHARS:
                return bare
            return shrink(lambda c: _("{who} shows {card}", who=who, card=c), card)
        if kind == "window_closed" and data.get("by") not in ("timeout", "passes"):
            return _("Window closed")
        return ""

    def _public_lines(self, table: Table, seat: int) -> list[str]:
        pub = table.view(None)["table"]
        if pub["over"]:
            winners = pub["winners"]
            names = " ".join(short(table, s) for s in winners) or _("nobody")
            return [
                self._check_message(pub),
                *wrap(_("Won: {who}", who=names), 2),
                _("You win!") if seat in winners else _("You lose"),
            ]
        lines = [self._status(table, seat)]
        news = self.news_line(table)
        lines += self._declared_rows(table) or ([news] if news else [])
        me = pub["seats"][seat]
        weapon = me["weapon"]
        if weapon:
            w = next(x for x in pub["weapons"] if x["key"] == weapon)
            targets = "+".join(short(table, t) for t in w["targets"]) or _("nobody")
            lines += _held(_(YOU), targets, self._weapon_name(table, w["key"]))
        aimed = [
            short(table, w["holder"])
            for w in pub["weapons"]
            if w["holder"] is not None and seat in w["targets"]
        ]
        if aimed:
            lines.append(fit_list(_("Aimed by:"), aimed))
        if pub["check"]:
            lines.append(self._check_message(pub))
        return lines[:4]

    @staticmethod
    def _check_message(pub: dict[str, Any]) -> str:
        check = pub["check"] or {}
        if check.get("result") == "continues":
            return _("The game goes on")
        side = INFO.side(check.get("side") or "nobody")
        return _(side.wins) if side else str(check.get("message", ""))

    # --- under the flap ----------------------------------------------------------------

    def pages(self, table: Table, seat: int) -> list[tuple[str, list[str]]]:
        """The seat's own cards and what it has seen, as screen pages."""
        you = table.view(seat)["you"]

        def card(c: dict[str, Any] | None) -> str:
            if not c:
                return "-"
            # The side's letter first: a name too long for the glass loses its end, not it.
            name = in_language(c["name"])
            weight = "x2" if c.get("weight", 1) == 2 and "x2" not in name else ""
            side = INFO.side(c["colour"])
            letter = _(side.letter) if side and side.letter else str(c["colour"])
            return f"({letter}{weight}) {name}"

        ident = you["id"]
        side = INFO.side(you["faction"])
        faction = _(side.word) if side and side.word else str(you["faction"])
        pages: list[tuple[str, list[str]]] = [
            (
                _("Your cards"),
                [
                    _("ID {card}", card=card(ident)),
                    _("L {card}", card=card(you["loyalty"]["left"])),
                    _("R {card}", card=card(you["loyalty"]["right"])),
                    _("You are {side}", side=faction),
                ],
            )
        ]
        faced = self.face_up(table)
        for i in range(0, len(faced), WINDOW):
            pages.append((_("Face up"), faced[i : i + WINDOW]))
        if ident and in_language(ident.get("text")):
            name = in_language(ident["name"])
            pages += card_pages(_("ID card|page"), name, in_language(ident["text"]))
        for prog in you["programs"]:
            name = f"{in_language(prog['name'])} ({label(_TIMINGS, prog['timing'])})"
            pages += card_pages(_("Program|page"), name, in_language(prog["text"]))
        # Each card seen: an ID on a row; a loyalty card says whose it is in words on one
        # row ("Between Blu and Blk:", not letters a new player cannot read), the card on
        # the next.
        seen: list[list[str]] = []
        for s in you["seen"]:
            if s["kind"] == "id":
                who = short(table, s["seat"])
                line = functools.partial(_seen_id, who)
                seen.append([shrink(line, card(s["card"]))])
            else:
                seen.append([fit(_whose(table, s["owners"])), fit(card(s["card"]))])
        first = 0
        while first < len(seen):
            last = first + 1
            while last < len(seen) and sum(len(e) for e in seen[first : last + 1]) <= WINDOW:
                last += 1
            rows = [row for entry in seen[first:last] for row in entry]
            pages.append((_("Seen {first}-{last}", first=first + 1, last=last), rows))
            first = last
        return [*pages, *key_pages(self.key_rows(table))]

    def key_rows(self, table: Table) -> list[str]:
        """The short forms of this game's screens in words (the last pages the knob turns)."""
        sides = [
            f"({_(side.letter)}) {_(side.word)}"
            for key in FACTIONS
            if (side := INFO.side(key)) is not None and side.letter and side.word
        ]
        return [
            _("ID: identity card"),
            _("L: left loyalty card"),
            _("R: right loyalty card"),
            *spaced(sides),
            _("x2: counts twice"),
            _("HP: hit points"),
            _("prog.: program"),
            *seat_rows(table),
        ]

    def _secret(self, table: Table, seat: int) -> Secret:
        clock = self._countdown(table)  # the window's seconds stay in sight under the flap
        if self.paging(table, seat):
            pages = self.pages(table, seat)
            page = self.page(table, seat)
            title, lines = pages[page]
            return Secret(
                title=titled([title], f"{clock} {page + 1}/{len(pages)}"), lines=tuple(lines)
            )
        groups = self.groups(table, seat, self.legal(table, seat))  # once per screen
        menu = self._menu_of(table, seat, groups)
        cur = self._cursor_in(table, seat, len(menu))
        # A long label wraps whole onto an indented row rather than being cut.
        rows = tuple(menu_rows([opt.label for opt in menu], cur, WINDOW))
        group = self.group(table, seat)
        current = groups.get(group)
        # The sub-menu's words; where they do not fit, the card alone, then the verb alone.
        headings = [current[0].rstrip(" >")] if current else [_("Choose")]
        if current and group and group.startswith(("program:", "equip:")):
            kind, _sep, which = group.partition(":")
            if kind == "program":
                headings += [self._program_name(table, seat, int(which)), _("Play|verb")]
            else:
                headings += [self._weapon_name(table, which), _("Take|verb")]
        return Secret(title=titled(headings, f"{clock} {cur + 1}/{len(menu)}"), lines=rows)

    def next_hint(self, table: Table) -> str | None:
        """What the host's next press does now, for the hub display's last line."""
        return _("end window") if self.advance(table) is not None else None

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)["table"]
        # Hit points in words ("Red1 3HP", "S10 out"), two seats a row, in columns; a seat
        # is its colour and number, never colour alone.
        cells = [
            f"{numbered(short(table, s['seat']), s['seat'])} "
            + (_("{n}HP", n=s["hp"]) if s["alive"] else _("out|hp"))
            for s in pub["seats"]
        ]
        # Two a row where the widest pair fits the glass, else one a row.
        left = max((len(c) for c in cells[::2]), default=0)
        right = max((len(c) for c in cells[1::2]), default=0)
        if left + 2 + right <= CHARS:
            rows = [
                f"{a:<{left}}  {b}".rstrip() for a, b in zip(cells[::2], cells[1::2], strict=False)
            ]
            rows += cells[len(cells) // 2 * 2 :]
        else:
            rows = list(cells)
        rows += self.face_up(table, hub=True)
        # Each weapon in play as "Red1: Pistol at Blue2" (its targets on a row of their own
        # where the line would not hold the name whole), not "Pis:Red>Blu".
        held = [
            row
            for w in pub["weapons"]
            if w["holder"] is not None
            for row in _held(
                tag(table, w["holder"]),
                "+".join(tag(table, t) for t in w["targets"]) or _("nobody"),
                self._weapon_name(table, w["key"]),
            )
        ]
        news = self.news_line(table, hub=True)
        tail = [self._check_message(pub)] if pub["check"] else ([news] if news else [])
        # Every seat and weapon: the hub pages a screen longer than the glass.
        lines = [*rows, *held, *tail]
        return self._host_status(table, len(lines)), lines


_SIMPLE = {
    "draw": N_("Draw a program"),
    "drop": N_("Drop weapon"),
    "heal": N_("Heal target"),
    "pass": N_("Pass"),
    "take": N_("Take the hit"),
}
_NEWS_ORDER = (
    "eliminated",
    "damage",
    "skip",
    "skip_next",
    "program",
    "heal",
    "reveal",
    "window_closed",
)


def card_pages(title: str, name: str, text: str) -> list[tuple[str, list[str]]]:
    """A card under the flap: a short title, then its name and its text whole, on as many
    pages as they need (the knob turns them)."""
    rows = _wrapped(name, text)
    return [(title, list(rows[i : i + BODY_LINES])) for i in range(0, len(rows) or 1, BODY_LINES)]


@functools.lru_cache(maxsize=1024)
def _wrapped(name: str, text: str) -> tuple[str, ...]:
    """A card's name and text cut to the glass's width: the same cards' texts are wrapped
    at every repaint of every station (wrapping was about a sixth of a 16-seat one)."""
    return (*textwrap.wrap(glass(name), CHARS), *textwrap.wrap(glass(text), CHARS))


#: When a program may be played, short, after its name: "Jammer (any)".
_TIMINGS = {
    "anytime": N_("any|timing"),
    "turn": N_("turn|timing"),
    "permanent": N_("perm|timing"),
}


YOU = N_("You|the seat itself, before its weapon")


def _held(holder: str, targets: str, weapon: str) -> list[str]:
    line = _("{seat}: {weapon} at {targets}", seat=holder, weapon=weapon, targets=targets)
    if len(glass(line)) <= CHARS:
        return [line]
    named = shrink(lambda w: _("{seat}: {weapon}", seat=holder, weapon=w), weapon)
    return [named, "  " + _("at {targets}", targets=targets)]


def _seen_id(seat: str, card: str) -> str:
    return _("{seat} ID {card}", seat=seat, card=card)


def _shown(who: str, slot: str, card: str) -> str:
    return _("{who} shows {slot}: {card}", who=who, slot=slot, card=card)


def _face_line(who: str, slot: str, card: dict[str, Any]) -> str:
    """A face-up card on one line: whose, which, its name; its side in words where they fit."""
    name = in_language(card["name"])
    line = f"{who} {slot}: {name}"
    if len(glass(line)) > CHARS:  # the name whole rather than its place
        line = shrink(lambda c: f"{who}: {c}", name)
    side = INFO.side(card.get("colour", ""))
    word = _(side.word) if side and side.word else ""
    if word and len(glass(f"{line} ({word})")) <= CHARS:
        line = f"{line} ({word})"
    return line


def _whose(table: Table, owners: list[Any]) -> str:
    """Whose a loyalty card is, in words: "Between Blu and Blk:" (the card two
    neighbours share), or "Blu's right card:"."""
    if len(owners) == 2:
        a, b = (short(table, o) for o, _slot in owners)
        return _("Between {a} and {b}:", a=a, b=b)
    return "  ".join(
        _("{seat}'s left card:", seat=short(table, o))
        if sl == "left"
        else _("{seat}'s right card:", seat=short(table, o))
        for o, sl in owners
    )


def _card_slot(slot: str, *, long: bool = False) -> str:
    """A card place: ID, or the left/right loyalty card ("left", "left card" when long)."""
    if slot == "id":
        return "ID"
    if long:
        return _("left card") if slot == "left" else _("right card")
    return _("left") if slot == "left" else _("right")


def make_binding(**settings: Any) -> IdentitesCrypteesBinding:
    """The binding (the window's length is the game option ``interrupt_window``)."""
    return IdentitesCrypteesBinding()
