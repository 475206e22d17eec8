"""Identités cryptées 2.0 at a physical table (RULES.md §5, table binding).

Every choice is a knob menu shown only under the flap (the ``secret`` part of the
seat's own screen): turn to move the cursor, press to choose. NFC cards are not
needed for this game: the hub deals and keeps every card (the key set's tags are
refused with a readable message).

- Your ID, loyalty cards, faction, programs and what you have investigated stay
  under your flap; with nothing to choose the knob turns those pages.
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
- Anytime programs are in every seat's menu at any moment (RULES.md §5 Decision):
  also while a hit, re-aim, ability or discard waits, and for the actor inside its
  own window; the menus simply follow the engine's legal actions.
- The victory check announces only "The game goes on" or the winners.
- Seats go by the table's colours; past the key set's eight, by number (S9...).
"""

from __future__ import annotations

from typing import Any

import msgspec

from firmware.hub.bindings.menus import KnobMenus, Option
from firmware.hub.table import Table
from firmware.link.protocol import Screen, Secret
from firmware.link.render import wrap
from rules.core import Action, action_to_json

ACT_LED = (255, 160, 0)
IDLE_LED = (0, 0, 0)
CARDS = "Cards >"
BACK = "< Back"
WINDOW = 4
TIMEOUT = {"rules": {"type": "timeout"}}


def seat_name(table: Table, seat: int | None) -> str:
    """A seat's colour at this table (``S9``... past the key set's eight colours)."""
    if seat is None:
        return "-"
    colours = table.seating.colours
    return colours[seat].capitalize() if seat < len(colours) else f"S{seat + 1}"


def short(table: Table, seat: int | None) -> str:
    return seat_name(table, seat)[:3]


def plain(action: Action) -> dict[str, Any]:
    """An action's JSON notation as the store keeps it (lists, not tuples)."""
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(action_to_json(action)))
    return out


class IdentitesCrypteesBinding(KnobMenus):
    """Knob menus, hidden cards under the flap, the interrupt window's timer."""

    tap_refusal = "No cards to tap in this game: use the knob"

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
        """The sub-menu open now ("" for the top menu), for this decision only."""
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
        menu = self.menu(table, seat)
        if table.ui.get(f"ctx:{seat}") == self.context(table, seat):
            return int(table.ui.get(f"cursor:{seat}", 0)) % len(menu)
        return 0

    # --- menus -------------------------------------------------------------------

    def menu(self, table: Table, seat: int) -> list[Option]:
        """The options a press may choose now (never empty)."""
        opened = {"seat": seat, "mode": "cards", "page": 0, "modectx": self._decision(table)}
        cards = Option(CARDS, {"ui": opened})
        legal = self.legal(table, seat)
        if not legal:
            return [cards]
        groups: dict[str, list[tuple[str, Action]]] = {}
        for action in legal:
            group, label = self.label(table, seat, action)
            if group.endswith(">") and len(group) > 19:  # the screen must show the ">"
                group = group[:16].rstrip() + " >"
            groups.setdefault(group, []).append((label, action))
        current = self.group(table, seat)
        decision = self._decision(table)
        if current and current in groups:
            back = {"ui": {"seat": seat, "group": "", "groupctx": decision}}
            subs = [Option(lb, {"rules": plain(a)}) for lb, a in groups[current]]
            return [*subs, Option(BACK, back)]
        top: list[Option] = []
        for group, items in groups.items():
            if len(items) == 1 or not group.endswith(">"):
                for lb, a in items:
                    top.append(Option(lb, {"rules": plain(a)}))
            else:
                enter = {"ui": {"seat": seat, "group": group, "groupctx": decision}}
                top.append(Option(group, enter))
        return [*top, cards]

    def _program_name(self, table: Table, seat: int, card: int) -> str:
        for prog in table.view(seat)["you"]["programs"]:
            if prog["card"] == card:
                return str(prog["name"])
        return f"program {card}"

    def _weapon_name(self, table: Table, key: str) -> str:
        for w in table.view(None)["table"]["weapons"]:
            if w["key"] == key:
                return str(w["name"])
        return key

    def label(self, table: Table, seat: int, action: Action) -> tuple[str, str]:
        """(group, label) of an action; a group ending in ">" opens a sub-menu."""
        a = action_to_json(action)
        kind = a["type"]
        who = short(table, a.get("target"))
        if kind == "investigate":
            card = "ID" if a["card"] == "id" else a["card"]
            return "Investigate >", f"Look {who} {card}"
        if kind == "equip":
            weapon = self._weapon_name(table, a["weapon"])
            group = f"Take {weapon} >"
            targets = a["targets"]
            if not targets:
                return group, f"Take {weapon}"
            return group, f"{weapon[:6]} at " + "+".join(short(table, t) for t in targets)
        if kind == "draw":
            return "Draw a program", "Draw a program"
        if kind == "drop":
            return "Drop weapon", "Drop weapon"
        if kind == "aim":
            return "Aim >", "Aim at " + "+".join(short(table, t) for t in a["targets"])
        if kind == "fire":
            if a.get("target") is not None:
                return "Fire >", f"Fire at {who}"
            return "Fire!", "Fire!"
        if kind == "heal":
            return "Heal target", "Heal target"
        if kind == "pass":
            return "Pass", "Pass"
        if kind == "reveal":
            card = "ID" if a["card"] == "id" else f"{a['card']} card"
            return f"Reveal {card}", f"Reveal {card}"
        if kind == "take":
            return "Take the hit", "Take the hit"
        if kind == "discard":
            name = self._program_name(table, seat, a["card"])
            return "Discard >", f"Drop {name}"
        if kind in ("program", "ability"):
            parts = []
            if a.get("target") is not None:
                parts.append(who)
            if a.get("slot"):
                parts.append("ID" if a["slot"] == "id" else a["slot"])
            if a.get("own_slot"):
                parts.append(f"my {a['own_slot']}")
            detail = " ".join(parts)
            if kind == "ability":
                return "ID ability >", f"Ability {detail}".strip()
            name = self._program_name(table, seat, a["card"])
            return f"Play {name} >", (f"{name[:10]} {detail}".strip() if detail else name)
        return kind, kind

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
        state = f"{me['hp']}HP" if me["alive"] else "out"
        title = f"{seat_name(table, seat)} {state}"
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
        left = table.timer_left
        return "" if left is None else f" {int(left + 0.999)}s"

    def _status(self, table: Table, seat: int) -> str:
        pub = table.view(None)["table"]
        pending = pub["pending"]
        kind, who = pending["kind"], pending.get("seat")
        if kind == "turn":
            return "Your turn: lift flap" if who == seat else f"{seat_name(table, who)}'s turn"
        if kind == "window":
            waiting = (pub["window"] or {}).get("waiting", [])
            note = "pass or play" if seat in waiting else "wait"
            return f"Window{self._countdown(table)}: {note}"
        if kind == "respond":
            if who == seat:
                return f"Hit! reveal or -{pending['damage']}HP"
            return f"{seat_name(table, who)} is hit"
        if kind == "reaim":
            return "Re-aim your weapon" if who == seat else f"{seat_name(table, who)} re-aims"
        if kind == "ability":
            return "Use your ID ability" if who == seat else f"{seat_name(table, who)}: ability"
        if kind == "discard":
            return "Discard a program" if who == seat else f"{seat_name(table, who)} discards"
        return "Game over"

    def _declared_line(self, table: Table) -> str:
        pub = table.view(None)["table"]
        d = pub["declared"]
        if not d:
            return ""
        actor = short(table, d.get("seat"))
        kind = d["type"]
        if kind == "investigate":
            return f"{actor} looks at {short(table, d['target'])}"
        if kind == "equip":
            targets = "+".join(short(table, t) for t in d.get("targets", []))
            return f"{actor}: {d['weapon'][:6]}" + (f">{targets}" if targets else "")
        if kind == "fire":
            target = d.get("target")
            return f"{actor} fires" + (f" at {short(table, target)}" if target is not None else "")
        if kind == "aim":
            return f"{actor} aims at " + "+".join(short(table, t) for t in d["targets"])
        return f"{actor}: {kind}"

    def _public_lines(self, table: Table, seat: int) -> list[str]:
        pub = table.view(None)["table"]
        if pub["over"]:
            winners = pub["winners"]
            names = " ".join(short(table, s) for s in winners) or "nobody"
            message = (pub["check"] or {}).get("message", "")
            return [
                *wrap(message, 1),
                *wrap(f"Won: {names}", 2),
                "You win!" if seat in winners else "You lose",
            ]
        lines = [self._status(table, seat)]
        declared = self._declared_line(table)
        if declared:
            lines.append(declared)
        me = pub["seats"][seat]
        weapon = me["weapon"]
        if weapon:
            w = next(x for x in pub["weapons"] if x["key"] == weapon)
            targets = "+".join(short(table, t) for t in w["targets"]) or "-"
            lines.append(f"You: {w['key'][:6]}>{targets}")
        aimed = [
            short(table, w["holder"])
            for w in pub["weapons"]
            if w["holder"] is not None and seat in w["targets"]
        ]
        if aimed:
            lines.append("Aimed by: " + " ".join(aimed[:3]))
        check = pub["check"]
        if check:
            lines.append(check["message"][:21])
        return lines[:4]

    # --- under the flap ----------------------------------------------------------------

    def pages(self, table: Table, seat: int) -> list[tuple[str, list[str]]]:
        """The seat's own cards and what it has seen, as screen pages."""
        you = table.view(seat)["you"]

        def card(c: dict[str, Any] | None) -> str:
            if not c:
                return "-"
            weight = " x2" if c.get("weight", 1) == 2 and "x2" not in c["name"] else ""
            return f"{c['name']} ({c['colour'][:1].upper()}){weight}"

        ident = you["id"]
        pages: list[tuple[str, list[str]]] = [
            (
                "Your cards",
                [
                    f"ID {card(ident)}",
                    f"L {card(you['loyalty']['left'])}",
                    f"R {card(you['loyalty']['right'])}",
                    f"You are {you['faction']}",
                ],
            )
        ]
        if ident and ident.get("text"):
            pages.append((f"ID: {ident['name']}", wrap(ident["text"], 4)))
        for prog in you["programs"]:
            pages.append((f"{prog['name']} ({prog['timing'][:4]})", wrap(prog["text"], 4)))
        seen = []
        for s in you["seen"]:
            if s["kind"] == "id":
                seen.append(f"{short(table, s['seat'])} ID {card(s['card'])}")
            else:
                owners = "/".join(f"{short(table, o)} {sl[:1].upper()}" for o, sl in s["owners"])
                seen.append(f"{owners} {card(s['card'])}")
        for i in range(0, len(seen), WINDOW):
            pages.append((f"Seen {i + 1}-{min(len(seen), i + WINDOW)}", seen[i : i + WINDOW]))
        return pages

    def _secret(self, table: Table, seat: int) -> Secret:
        if self.paging(table, seat):
            pages = self.pages(table, seat)
            page = self.page(table, seat)
            title, lines = pages[page]
            return Secret(title=f"{title[:16]} {page + 1}/{len(pages)}", lines=tuple(lines))
        menu = self.menu(table, seat)
        cur = self.cursor(table, seat)
        start = min(max(0, cur - 1), max(0, len(menu) - WINDOW))
        rows = tuple(
            ("> " if i == cur else "  ") + opt.label[:19]
            for i, opt in enumerate(menu[start : start + WINDOW], start=start)
        )
        heading = self.group(table, seat).rstrip(" >") or "Choose"
        return Secret(title=f"{heading[:15]} {cur + 1}/{len(menu)}", lines=rows)

    def host_screen(self, table: Table) -> tuple[str, list[str]]:
        pub = table.view(None)["table"]
        title = self._status(table, -1)
        cells = [f"{short(table, s['seat'])}{s['hp'] if s['alive'] else 'x'}" for s in pub["seats"]]
        rows = [" ".join(cells[i : i + 4]) for i in range(0, len(cells), 4)]
        held = [
            f"{w['key'][:1].upper()}:{short(table, w['holder'])}>"
            + "+".join(short(table, t) for t in w["targets"])
            for w in pub["weapons"]
            if w["holder"] is not None
        ]
        check = pub["check"]
        tail = [check["message"]] if check else []
        # Every seat and weapon: the hub pages a screen longer than the glass.
        return title, [*rows, *held, *tail]


def make_binding(**settings: Any) -> IdentitesCrypteesBinding:
    """The binding (the window's length is the game option ``interrupt_window``)."""
    return IdentitesCrypteesBinding()
