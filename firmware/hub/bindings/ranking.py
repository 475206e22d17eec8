"""The final ranking a station's knob scrolls under its own line (Secret Identity,
Identiquest): the first row shown is table ui (``top:<seat>``), stored like a cursor."""

from __future__ import annotations

from typing import Any

from firmware.hub.table import Table
from firmware.link.render import scroll_room, scrolled


def top(table: Table, seat: int) -> int:
    """The first row of the final ranking the seat's glass shows."""
    return int(table.ui.get(f"top:{seat}", 0))


def scroll(table: Table, seat: int, rows: int, step: int | None) -> dict[str, Any]:
    """The ui event of a knob turn over a ranking of ``rows`` rows (kept within it)."""
    new = max(0, min(scroll_room(1, rows), top(table, seat) + (step or 0)))
    return {"ui": {"seat": seat, "top": new}}


def apply(table: Table, ui: dict[str, Any]) -> bool:
    """Apply a ranking scroll; False for any other ui event (the binding's own)."""
    if "top" not in ui:
        return False
    table.ui[f"top:{ui['seat']}"] = int(ui["top"])
    return True


def screen(title: str, me: str, rows: list[str], table: Table, seat: int) -> tuple[str, list[str]]:
    """The seat's own line, then the ranking from where its knob left it ("1-3/8 ▼")."""
    return scrolled(title, [me], rows, top(table, seat))
