"""Pieces shared by the bindings whose choices are knob menus.

A station in such a game is either in a menu (turn to move the cursor, press to
choose) or paging through its secret pages (the investigation sheet, its cards):
turn to page, press to go back to the menu. The bindings say which, and what the
menu and the pages hold; the knob and press handling is the same for all.
"""

from __future__ import annotations

from typing import Any

from firmware.hub.table import Table
from firmware.link.lang import N_
from firmware.link.protocol import Input
from rules.core import IllegalAction


class MenuEntry:
    """One menu entry: a label and the table event a press on it means."""

    __slots__ = ("body", "label")

    def __init__(self, label: str, body: dict[str, Any]) -> None:
        self.label = label
        self.body = body


class KnobMenus:
    """Knob and press handling for a binding made of menus and secret pages."""

    #: The refusal for a tapped tag (these games have no NFC cards).
    tap_refusal = N_("No cards in this game: use the knob")

    # --- what each binding says -------------------------------------------------------

    def paging(self, table: Table, seat: int) -> bool:
        """Whether the knob turns the seat's secret pages rather than a menu."""
        raise NotImplementedError

    def pages(self, table: Table, seat: int) -> list[Any]:
        """The seat's secret pages."""
        raise NotImplementedError

    def menu(self, table: Table, seat: int) -> list[MenuEntry]:
        """The seat's menu now."""
        raise NotImplementedError

    def cursor(self, table: Table, seat: int) -> int:
        """Where the seat's cursor is in its menu."""
        raise NotImplementedError

    def context(self, table: Table, seat: int) -> str:
        """What the menu is about: a cursor is kept only while this stays the same."""
        raise NotImplementedError

    def can_act(self, table: Table, seat: int) -> bool:
        """Whether the seat has anything to choose now."""
        raise NotImplementedError

    def idle_message(self, table: Table, seat: int) -> str:
        """The refusal for a press when the seat has nothing to choose."""
        return N_("Nothing for you to do now")

    # --- shared -------------------------------------------------------------------------

    def translate(self, table: Table, seat: int, inp: Input) -> dict[str, Any]:
        if inp.kind == "tag":
            raise IllegalAction(self.tap_refusal)
        if inp.kind == "knob":
            step = inp.step or 0
            if self.paging(table, seat):
                last = len(self.pages(table, seat)) - 1
                page = max(0, min(last, self.page(table, seat) + step))
                return {"ui": {"seat": seat, "page": page}}
            menu = self.menu(table, seat)
            cur = (self.cursor(table, seat) + step) % len(menu)
            return {"ui": {"seat": seat, "cursor": cur, "ctx": self.context(table, seat)}}
        if inp.kind == "press":
            if not self.can_act(table, seat):
                raise IllegalAction(self.idle_message(table, seat))
            if self.paging(table, seat):
                return {"ui": {"seat": seat, "mode": ""}}
            return self.menu(table, seat)[self.cursor(table, seat)].body
        raise IllegalAction("That button does nothing here")

    def apply_ui(self, table: Table, ui: dict[str, Any]) -> None:
        seat = ui["seat"]
        for key, value in ui.items():
            if key != "seat":
                table.ui[f"{key}:{seat}"] = value

    def page(self, table: Table, seat: int) -> int:
        """The secret page shown now."""
        last = len(self.pages(table, seat)) - 1
        return max(0, min(last, int(table.ui.get(f"page:{seat}", 0))))
