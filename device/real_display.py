"""The station's screen: an SSD1306 128x64 on I2C through luma.oled's own driver.

``show()`` skips a frame identical to the one on the glass (the station redraws
often; an I2C frame is ~1 KB). An I2C error (a loose wire NACKs: OSError, or luma's
DeviceNotFoundError for commands) drops the luma device; the same ``show()`` tries
once more on a freshly created device (its init sequence re-configures a panel that
may have reset), and if that fails too, the frame stays wanted and the next
``show()`` (even of the same frame) re-creates the device and sends the last wanted
frame, so no frame is lost. ``show()`` does not raise for I2C errors: the station
keeps running and reports ``failures``/``healthy``. Opening raises ``DisplayError``
when the panel is not there at all.

Partial updates: luma's ``ssd1306.display()`` sends the whole 1 KiB GDDRAM every time
(and reads pixels with ``Image.getdata``, which Pillow 14 drops). The device here is
luma's ssd1306 with its ``display()`` replaced: the frame is packed into GDDRAM bytes
with ``tobytes`` (8 pages of 128 columns, one byte per column, LSB on top), compared
with what the panel holds, and only the changed columns of each changed page are sent,
each run a window of its own (two runs of a page closer than a window's cost in bytes
are sent as one). The SSD1306 has no second buffer: it scans GDDRAM about 100 times a
second while a write goes on, so a frame never reached the glass at once (a whole
frame is 20 ms on the bus); fewer bytes make the change land sooner. After luma's init
(or an I2C error: the device is re-created) the whole frame goes.
"""

from __future__ import annotations

import importlib
import logging
import re
from typing import Any

from PIL import Image

from device.base import HEIGHT, WIDTH, Display, DisplayError

log = logging.getLogger(__name__)

DEFAULT_PORT = 1
DEFAULT_ADDRESS = 0x3C
PAGES = HEIGHT // 8

#: A window of GDDRAM to write: first/last column, first/last page, the bytes.
Window = tuple[int, int, int, int, bytes]
#: What a window costs on the bus besides its data: the address byte and control byte of
#: the command write and its six bytes (column and page ranges), and the data write's
#: address and control bytes.
WINDOW_COST = 10
#: A run of changed bytes (non-zero in the XOR of two GDDRAMs) and the runs after it that
#: are fewer than WINDOW_COST unchanged bytes away: one window.
_RUN = re.compile(rb"[^\x00]+(?:\x00{1,%d}[^\x00]+)*" % (WINDOW_COST - 1))


def to_gddram(image: Image.Image) -> bytes:
    """A 128x64 mode-"1" image as SSD1306 GDDRAM: page by page, a byte per column, LSB on top."""
    # Transposed, each column of the screen is a row of 64 pixels: 8 bytes, one per page,
    # bit-reversed so the top pixel is the LSB. Column-major, then read page by page.
    columns = image.transpose(Image.Transpose.TRANSPOSE).tobytes("raw", "1;R")
    return b"".join(columns[page::PAGES] for page in range(PAGES))


def changed_windows(old: bytes | None, new: bytes) -> list[Window]:
    """The GDDRAM windows that turn ``old`` into ``new`` (none: nothing changed).

    A window per run of changed columns in each page; runs closer than
    :data:`WINDOW_COST` bytes are one window, so each window pays for itself.
    """
    if old is None:
        return [(0, WIDTH - 1, 0, PAGES - 1, new)]
    if old == new:
        return []
    # The XOR of the two memories, byte by byte: its non-zero bytes are what changed. The
    # pattern joins the runs close enough in C (a Python loop over every run cost ~4x).
    diff = (int.from_bytes(old, "big") ^ int.from_bytes(new, "big")).to_bytes(len(new), "big")
    windows: list[Window] = []
    for page in range(PAGES):
        at = page * WIDTH
        for run in _RUN.finditer(diff, at, at + WIDTH):
            start, stop = run.span()
            windows.append((start - at, stop - 1 - at, page, page, new[start:stop]))
    return windows


def _partial(base: Any) -> Any:
    """luma's ssd1306 class with a ``display()`` that sends only what changed."""

    class PartialSsd1306(base):  # type: ignore[misc]
        gddram: bytes | None = None  # what the panel holds (None: unknown)
        bytes_sent = 0  # GDDRAM data bytes written

        def display(self, image: Image.Image, *, gddram: bytes | None = None) -> None:
            """Send what changed of ``image`` (``gddram``: its memory, packed already,
            valid only without rotation)."""
            ram = gddram if gddram is not None else to_gddram(self.preprocess(image))
            start = self._colstart
            for c0, c1, p0, p1, data in changed_windows(self.gddram, ram):
                self.gddram = None  # until the last window is written: unknown after an error
                self.command(0x21, start + c0, start + c1, 0x22, p0, p1)  # column, page windows
                self.data(data)  # luma slices it into a list itself
                self.bytes_sent += len(data)
            self.gddram = ram

    return PartialSsd1306


def _pins(pins: Any) -> tuple[int | None, int | None, int]:
    """(port, address, rotate) from a StationPins, a DisplayPins, or None."""
    if pins is None:
        return None, None, 0
    display = getattr(pins, "display", pins)
    return (
        getattr(display, "i2c_port", None),
        getattr(display, "i2c_address", None),
        getattr(display, "rotate", 0) or 0,
    )


class Ssd1306Display(Display):
    """An SSD1306 on I2C, driven by luma.oled; recovers from I2C errors."""

    def __init__(
        self,
        pins: Any = None,
        *,
        port: int | None = None,
        address: int | None = None,
        rotate: int | None = None,
        contrast: int | None = None,
    ) -> None:
        p_port, p_address, p_rotate = _pins(pins)
        self.port = port if port is not None else (p_port if p_port is not None else DEFAULT_PORT)
        self.address = address if address is not None else (p_address or DEFAULT_ADDRESS)
        self.rotate = rotate if rotate is not None else p_rotate
        self.contrast = contrast
        self.failures = 0  # I2C errors seen
        self.recreations = 0  # luma devices created after the first
        self.frames_sent = 0
        self._device: Any = None
        self._wanted: Image.Image | None = None
        self._wanted_bytes: bytes | None = None
        self._shown_bytes: bytes | None = None
        self._closed = False
        try:
            self._device = self._create()
        except (OSError, DisplayError) as exc:
            raise DisplayError(
                f"no SSD1306 at I2C {self.port}:0x{self.address:02X}: {exc}"
            ) from exc
        self._shown_bytes = bytes(WIDTH * HEIGHT // 8)  # luma's init clears the panel

    @property
    def healthy(self) -> bool:
        """Whether the last frame wanted is the one on the glass."""
        return self._device is not None and self._shown_bytes == self._wanted_bytes

    @property
    def _luma_error(self) -> type[Exception]:
        error: type[Exception] = importlib.import_module("luma.core.error").Error
        return error

    def _errors(self) -> tuple[type[Exception], ...]:
        return (OSError, self._luma_error)

    def _create(self) -> Any:
        serial_mod = importlib.import_module("luma.core.interface.serial")
        oled = importlib.import_module("luma.oled.device")
        try:
            serial = serial_mod.i2c(port=self.port, address=self.address)
            device = _partial(oled.ssd1306)(serial, width=WIDTH, height=HEIGHT, rotate=self.rotate)
            if self.contrast is not None:
                device.contrast(self.contrast)
        except self._errors() as exc:
            raise DisplayError(str(exc)) from exc
        return device

    def _drop(self) -> None:
        device, self._device = self._device, None
        if device is not None:
            device.persist = True  # its atexit hook must not talk to a broken bus
            try:
                device._serial_interface.cleanup()
            except self._errors():
                pass

    def show(self, image: Image.Image) -> None:
        """Put a 128x64 image on the glass (mode "1"; other modes are converted)."""
        if self._closed:
            raise DisplayError("display is closed")
        if image.size != (WIDTH, HEIGHT):
            raise DisplayError(f"frame is {image.size[0]}x{image.size[1]}, not {WIDTH}x{HEIGHT}")
        frame = image if image.mode == "1" else image.convert("1")
        # The frame as GDDRAM (unrotated) says whether it changed, and is what the panel
        # gets when it is not rotated: one packing a frame, not two (~25 us here each).
        wanted = to_gddram(frame)
        if wanted == self._shown_bytes and self._device is not None:
            self._wanted, self._wanted_bytes = frame.copy(), wanted
            return
        self._wanted, self._wanted_bytes = frame.copy(), wanted
        for attempt in range(2):
            if self._send(attempt):
                return

    def _send(self, attempt: int) -> bool:
        assert self._wanted is not None
        try:
            if self._device is None:
                self._device = self._create()
                self.recreations += 1
                self._shown_bytes = None
            self._device.display(self._wanted, gddram=None if self.rotate else self._wanted_bytes)
        except (DisplayError, OSError, self._luma_error) as exc:
            self.failures += 1
            self._shown_bytes = None
            self._drop()
            log.warning("SSD1306 I2C error (attempt %d): %s", attempt + 1, exc)
            return False
        self._shown_bytes = self._wanted_bytes
        self.frames_sent += 1
        return True

    def leave(self) -> None:
        """Release the bus and keep the frame lit: the SSD1306 holds its GDDRAM while powered."""
        if self._closed:
            return
        self._closed = True
        self._drop()

    def close(self) -> None:
        """Blank the panel (luma's cleanup: display off, clear) and release the bus."""
        if self._closed:
            return
        self._closed = True
        device, self._device = self._device, None
        if device is None:
            return
        try:
            device.cleanup()
        except self._errors() as exc:
            log.warning("closing the SSD1306: %s", exc)
        device.persist = True  # already cleaned: make luma's atexit hook a no-op
