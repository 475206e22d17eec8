"""Mock backends: devices that tests (and the simulator) drive and that record what they did.

Every driving method is thread-safe: a test may present a tag or turn the knob from
another thread than the one polling. Callbacks run in the thread of the driving call,
as gpiozero's ``when_pressed`` does with its mock pins.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from PIL import Image

from device.base import (
    Beep,
    Colour,
    Controls,
    Display,
    DisplayError,
    Reader,
    ReaderEvent,
    TagPresent,
    TagRemoved,
)
from hardware.keys import normalise_uid

BEEPS: tuple[Beep, ...] = ("ok", "error", "tick", "alert", "turn")


class MockReader(Reader):
    """A virtual NFC field: ``present_tag`` lays a tag on it, ``remove_tag`` lifts it.

    Each change is queued and ``poll`` returns the changes one at a time in order, so
    a tap between two polls is never lost (a real reader may miss a very short one).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._field: str | None = None  # what lies on the reader now
        self._pending: deque[ReaderEvent] = deque()
        self._current: str | None = None  # what the polls have reported
        self.polls = 0
        self.closed = False

    def present_tag(self, uid: str) -> None:
        """Lay the tag ``uid`` on the reader (lifting any other tag first)."""
        uid = normalise_uid(uid)
        with self._lock:
            if self._field == uid:
                return
            if self._field is not None:
                self._pending.append(TagRemoved(self._field))
            self._field = uid
            self._pending.append(TagPresent(uid))

    def remove_tag(self) -> None:
        """Lift the tag lying on the reader, if any."""
        with self._lock:
            if self._field is not None:
                self._pending.append(TagRemoved(self._field))
                self._field = None

    def tap(self, uid: str) -> None:
        """Lay the tag on the reader and lift it again."""
        self.present_tag(uid)
        self.remove_tag()

    @property
    def field(self) -> str | None:
        """The UID physically lying on the reader (whatever the polls have seen)."""
        with self._lock:
            return self._field

    def poll(self) -> ReaderEvent | None:
        """The oldest change not yet reported, or None."""
        with self._lock:
            self.polls += 1
            if not self._pending:
                return None
            event = self._pending.popleft()
            self._current = event.uid if isinstance(event, TagPresent) else None
            return event

    @property
    def current(self) -> str | None:
        with self._lock:
            return self._current

    def close(self) -> None:
        self.closed = True


class MockDisplay(Display):
    """Keeps every frame that differs from the one before, as the real glass would show."""

    def __init__(self, on_frame: Callable[[Image.Image], None] | None = None) -> None:
        self._lock = threading.Lock()
        self.frames: list[Image.Image] = []
        self.on_frame = on_frame
        self.shows = 0  # calls to show(), frames or not
        self.closed = False
        self.left = False  # closed by leave(): the last frame stays lit

    @property
    def last(self) -> Image.Image | None:
        """The frame on the glass now (None before the first one)."""
        with self._lock:
            return self.frames[-1] if self.frames else None

    def show(self, image: Image.Image) -> None:
        """Record the image if it changes the glass; same checks as the real driver."""
        if self.closed:
            raise DisplayError("display is closed")
        if image.mode != "1":
            raise DisplayError(f'image mode is {image.mode!r}, not "1"')
        if image.size != (self.width, self.height):
            raise DisplayError(f"image is {image.size}, not {(self.width, self.height)}")
        frame = image.copy()
        with self._lock:
            self.shows += 1
            previous = self.frames[-1] if self.frames else None
            if previous is not None and previous.tobytes() == frame.tobytes():
                return
            self.frames.append(frame)
            callback = self.on_frame
        if callback is not None:
            callback(frame)

    def close(self) -> None:
        self.closed = True

    def leave(self) -> None:
        """Closed, the last frame still the one on the glass."""
        self.closed = True
        self.left = True


class MockControls(Controls):
    """Knob, flap, peek button driven by method calls; LED and buzzer recorded."""

    def __init__(self, *, flap_open: bool = False) -> None:
        self._lock = threading.Lock()
        self._flap_open = flap_open
        self._peek_held = False
        self.leds: list[Colour] = []
        self.beeps: list[Beep] = []
        self.closed = False

    # --- driving (what a player does) ---

    def turn(self, steps: int = 1) -> None:
        """Turn the knob ``steps`` detents (negative: anticlockwise), one on_turn per detent."""
        direction = 1 if steps > 0 else -1
        for _ in range(abs(steps)):
            callback = self.on_turn
            if callback is not None:
                callback(direction)

    def press(self) -> None:
        """Push and release the knob."""
        callback = self.on_press
        if callback is not None:
            callback()

    def open_flap(self) -> None:
        """Lift the flap (no event if it is already open)."""
        self._set_flap(True)

    def close_flap(self) -> None:
        """Lower the flap (no event if it is already closed)."""
        self._set_flap(False)

    def hold_peek(self) -> None:
        """Hold the peek button down (no event if already held)."""
        self._set_peek(True)

    def release_peek(self) -> None:
        """Let go of the peek button (no event if not held)."""
        self._set_peek(False)

    def _set_flap(self, is_open: bool) -> None:
        with self._lock:
            if self._flap_open == is_open:
                return
            self._flap_open = is_open
        callback = self.on_flap
        if callback is not None:
            callback(is_open)

    def _set_peek(self, held: bool) -> None:
        with self._lock:
            if self._peek_held == held:
                return
            self._peek_held = held
        callback = self.on_peek
        if callback is not None:
            callback(held)

    # --- the Controls interface ---

    @property
    def flap_open(self) -> bool:
        with self._lock:
            return self._flap_open

    @property
    def peek_held(self) -> bool:
        with self._lock:
            return self._peek_held

    @property
    def led_colour(self) -> Colour:
        """The LED's colour now ((0, 0, 0) before any call)."""
        with self._lock:
            return self.leds[-1] if self.leds else (0.0, 0.0, 0.0)

    def led(self, colour: Colour) -> None:
        check_colour(colour)
        with self._lock:
            self.leds.append(colour)

    def beep(self, kind: Beep) -> None:
        if kind not in BEEPS:
            raise ValueError(f"unknown beep {kind!r}")
        with self._lock:
            self.beeps.append(kind)

    def close(self) -> None:
        self.closed = True


def check_colour(colour: Colour) -> None:
    """ValueError unless ``colour`` is three channels each within 0..1."""
    if len(colour) != 3 or not all(0.0 <= c <= 1.0 for c in colour):
        raise ValueError(f"LED colour {colour!r} is not three channels in 0..1")
