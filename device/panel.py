"""The hub's host panel: five buttons and a display."""

from __future__ import annotations

from abc import ABC
from collections.abc import Callable

from device.base import Display
from device.mock import MockDisplay
from hardware.pins import HUB_BUTTONS

BUTTONS: tuple[str, ...] = HUB_BUTTONS  # "prev", "next", "ok", "back", "stop"


class Panel(ABC):
    """Host panel: set ``on_button`` to receive button names (from any thread)."""

    on_button: Callable[[str], None] | None = None
    display: Display

    def close(self) -> None:
        """Release the buttons and the display."""
        self.display.close()


class MockPanel(Panel):
    """A panel whose buttons tests press, over a MockDisplay unless given another display."""

    def __init__(self, display: Display | None = None) -> None:
        self.display = display if display is not None else MockDisplay()
        self.presses: list[str] = []

    def press(self, name: str) -> None:
        """Press and release the button ``name`` (one of BUTTONS)."""
        if name not in BUTTONS:
            raise ValueError(f"no panel button {name!r} (buttons: {', '.join(BUTTONS)})")
        self.presses.append(name)
        callback = self.on_button
        if callback is not None:
            callback(name)
