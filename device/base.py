"""The abstract devices a station (or the hub's panel) is made of.

Each device has a real backend (vendor library, imported only there) and a mock
backend that tests drive. Programs see only these interfaces.

Threading: backends may call the ``on_*`` callbacks from any thread (gpiozero
does); the program that owns the devices only enqueues in them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from PIL import Image

WIDTH = 128
HEIGHT = 64


class DeviceError(Exception):
    """Root of the errors the device layer raises."""


class ReaderError(DeviceError):
    """The NFC reader failed (the backend tries to recover before raising)."""


class DisplayError(DeviceError):
    """The display could not be driven."""


@dataclass(frozen=True)
class TagPresent:
    """A tag entered the reader's field (one event until it is removed)."""

    uid: str  # upper-case hex, no separators: 8 chars (4-byte) or 14 chars (7-byte)


@dataclass(frozen=True)
class TagRemoved:
    """The tag that was lying on the reader left its field."""

    uid: str


ReaderEvent = TagPresent | TagRemoved


class Reader(ABC):
    """An NFC reader polled without blocking."""

    @abstractmethod
    def poll(self) -> ReaderEvent | None:
        """Look at the field once; return what changed since the last poll, if anything."""

    @property
    @abstractmethod
    def current(self) -> str | None:
        """The UID lying on the reader now, as far as the last poll knows."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the hardware."""


class Display(ABC):
    """A 128x64 monochrome screen."""

    width: int = WIDTH
    height: int = HEIGHT

    @abstractmethod
    def show(self, image: Image.Image) -> None:
        """Put a mode-"1" image of the display's size on the glass."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the hardware (and blank the screen)."""

    def leave(self) -> None:
        """Release the hardware but leave the last frame on the glass (a program that
        stops on an error it has just drawn there). By default the same as close()."""
        self.close()


Colour = tuple[float, float, float]
#: "tick": a tag was read; "ok"/"error": the hub's answer; "alert": something needs the
#: host; "turn": the table has just started waiting for this seat.
Beep = Literal["ok", "error", "tick", "alert", "turn"]


class Controls(ABC):
    """Knob with push, flap sensor, peek button, RGB LED and buzzer.

    Set the ``on_*`` attributes to receive input; they may be called from a
    backend thread.
    """

    on_turn: Callable[[int], None] | None = None  # +1 clockwise, -1 anticlockwise
    on_press: Callable[[], None] | None = None  # knob push released
    on_flap: Callable[[bool], None] | None = None  # True: flap opened
    on_peek: Callable[[bool], None] | None = None  # True: peek button held

    @property
    @abstractmethod
    def flap_open(self) -> bool:
        """Whether the flap sensor says open now."""

    @property
    @abstractmethod
    def peek_held(self) -> bool:
        """Whether the peek button is held now."""

    @abstractmethod
    def led(self, colour: Colour) -> None:
        """Set the RGB LED (each channel 0..1; (0, 0, 0) is off)."""

    @abstractmethod
    def beep(self, kind: Beep) -> None:
        """Sound a short, non-blocking beep pattern."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the pins."""


@dataclass
class StationDevices:
    """Everything one station drives."""

    reader: Reader
    display: Display
    controls: Controls

    def close(self) -> None:
        """Release every device."""
        self.reader.close()
        self.display.close()
        self.controls.close()
