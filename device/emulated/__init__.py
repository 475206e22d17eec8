"""Emulated station hardware: the real vendor drivers over emulated chips.

``open_emulated_station()`` gives a station whose reader is ``Mfrc522Reader`` (the
unmodified ``mfrc522`` package over an emulated MFRC522 with a virtual RF field) and
whose display is ``Ssd1306Display`` (the unmodified ``luma.oled`` ssd1306 driver over an
emulated SSD1306); the controls are ``device.mock.MockControls``.

Several stations in one process (the simulator runs 5-8): each station is a virtual
board k = 1, 2, ... and the rack wires board k's parts at numbers offset by 1000*k:
the pin map's SPI bus 0 / RST GPIO 25 / I2C port 1 become SPI bus 1000k, GPIO 1000k+25
and I2C port 1000k+1 (I2C address and SPI chip select unchanged). The drivers open
hardware by number, so each driver instance reaches its own chip with no shared
"current station" state; closing a station frees its board number.

``frames`` (also ``devices.display.frames``) keeps every distinct picture the glass
showed, sampled at the end of each ``show()`` that wrote GDDRAM while the panel was lit
(as ``MockDisplay.frames`` keeps the distinct frames shown), so golden-screen tests
can use either. At the end of a show, not after each I2C transaction: a frame is sent
as a window per changed run of each page, and what the glass shows between two of
them (a real panel shows it too, for a few milliseconds) is no frame of the station's.

The fake ``RPi.GPIO``/``spidev``/``smbus2`` modules stay in ``sys.modules`` while at
least one emulated station is open (see ``device.emulated.rack``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

from PIL import Image

from device.base import StationDevices
from device.emulated import rack
from device.emulated.iso14443 import CardKind, FaultKind, RfField, VirtualCard
from device.emulated.mfrc522_chip import Mfrc522Chip
from device.emulated.ssd1306_chip import Ssd1306Chip
from device.real_display import Ssd1306Display

BOARD_STRIDE = 1000

__all__ = [
    "EmulatedSsd1306Display",
    "EmulatedStation",
    "EmulatedStationDevices",
    "Mfrc522Chip",
    "RfField",
    "Ssd1306Chip",
    "VirtualCard",
    "VirtualField",
    "open_emulated_station",
]

_boards_lock = threading.Lock()
_boards: set[int] = set()


class VirtualField:
    """The RF field over one station's reader, by UID: place and remove cards.

    A UID always means the same virtual card (its memory survives being removed).
    """

    def __init__(self, rf: RfField) -> None:
        self.rf = rf
        self._cards: dict[str, VirtualCard] = {}

    def card(self, uid_hex: str, kind: CardKind | None = None) -> VirtualCard:
        """The virtual card with that UID (made on first use)."""
        key = uid_hex.upper()
        if key not in self._cards:
            self._cards[key] = VirtualCard(key, kind)
        return self._cards[key]

    def place(self, uid_hex: str, kind: CardKind | None = None) -> VirtualCard:
        """Lay a card on the reader (others already there stay)."""
        return self.rf.place(self.card(uid_hex, kind))

    def remove(self, uid_hex: str | None = None) -> None:
        """Take that card (or every card) off the reader."""
        self.rf.remove(None if uid_hex is None else self.card(uid_hex))

    def inject(self, kind: FaultKind, count: int = 1) -> None:
        """Arm an RF fault on the next answers (see ``RfField.inject``)."""
        self.rf.inject(kind, count)

    def pull_after(self, frames: int, uid_hex: str | None = None) -> None:
        """Pull the card out once it has answered ``frames`` more frames (mid-read)."""
        self.rf.pull_after(frames, None if uid_hex is None else self.card(uid_hex))

    @property
    def uids(self) -> list[str]:
        """UIDs in the field now."""
        return [c.uid_hex for c in self.rf.cards]


class EmulatedSsd1306Display(Ssd1306Display):
    """The real Ssd1306Display, plus a view of what the emulated glass showed.

    Only inspection is added (``frames``, ``last``, like ``MockDisplay``): showing a
    frame runs exactly the parent's code, through luma, over the emulated panel, and
    then samples the glass.
    """

    def __init__(self, station: EmulatedStation, **kwargs: Any) -> None:
        self._station = station
        super().__init__(**kwargs)

    def show(self, image: Image.Image) -> None:
        """Show as the parent does, then sample the glass (see the module's docstring)."""
        try:
            super().show(image)
        finally:
            self._station.glass_written()

    @property
    def frames(self) -> list[Image.Image]:
        """Each distinct picture the glass showed, read back from GDDRAM."""
        return self._station.frames

    @property
    def last(self) -> Image.Image | None:
        """What the glass shows now (None before the first frame)."""
        frames = self._station.frames
        return frames[-1] if frames else None


@dataclass
class EmulatedStationDevices(StationDevices):
    """StationDevices whose close() also unwires the emulated board."""

    emulated: EmulatedStation | None = None

    def close(self) -> None:
        """Release every device, then the emulated chips."""
        try:
            super().close()
        finally:
            if self.emulated is not None:
                self.emulated.release()


class EmulatedStation:
    """One station's emulated chips, wired on its own virtual board."""

    def __init__(
        self, board: int, pins: Any, timer: Literal["instant", "realtime"] = "instant"
    ) -> None:
        from device.real_reader import Mfrc522Reader

        self.board = board
        base = board * BOARD_STRIDE
        reader_pins = getattr(pins, "reader", None)
        display_pins = getattr(pins, "display", None)
        self.spi_bus = base + getattr(reader_pins, "spi_bus", 0)
        self.spi_device = getattr(reader_pins, "spi_device", 0)
        self.rst_pin = base + getattr(reader_pins, "rst", 25)
        irq = getattr(reader_pins, "irq", None)
        self.irq_pin = None if irq is None else base + irq
        self.i2c_port = base + getattr(display_pins, "i2c_port", 1)
        self.i2c_address = getattr(display_pins, "i2c_address", 0x3C)
        self.chip = Mfrc522Chip(timer=timer)
        self.panel = Ssd1306Chip()
        self.field = VirtualField(self.chip.field)
        self.frames: list[Image.Image] = []
        self._frames_lock = threading.Lock()
        self._data_seen = 0
        self._released = False
        rk = rack.RACK
        rack.install()
        try:
            rk.wire_spi(self.spi_bus, self.spi_device, self.chip)
            rk.wire_pin(self.rst_pin, on_output=self.chip.reset_pin)
            if self.irq_pin is not None:
                rk.wire_pin(self.irq_pin, read=self.chip.irq_pin)
            rk.wire_i2c(self.i2c_port, self.i2c_address, self.panel)
            reader = Mfrc522Reader(
                bus=self.spi_bus,
                device=self.spi_device,
                rst=self.rst_pin,
                reset_hold_s=0.0,
                reset_settle_s=0.0,
            )
            try:
                display = EmulatedSsd1306Display(
                    self,
                    port=self.i2c_port,
                    address=self.i2c_address,
                    rotate=getattr(display_pins, "rotate", 0),
                )
            except BaseException:
                reader.close()
                raise
        except BaseException:
            self._unwire()
            raise
        from device.mock import MockControls

        self.devices = EmulatedStationDevices(reader, display, MockControls(), self)

    @property
    def reader(self) -> Any:
        """The Mfrc522Reader."""
        return self.devices.reader

    @property
    def display(self) -> Any:
        """The Ssd1306Display."""
        return self.devices.display

    @property
    def controls(self) -> Any:
        """The MockControls."""
        return self.devices.controls

    def screen(self) -> Image.Image:
        """What the glass shows, decoded from the emulated GDDRAM."""
        return self.panel.frame()

    def glass_written(self) -> None:
        """Sample the glass after a frame was sent, if GDDRAM was written and it is lit."""
        panel = self.panel
        if panel.data_bytes == self._data_seen:
            return
        self._data_seen = panel.data_bytes
        if not panel.lit():
            return  # luma's clear() during init and close(): nobody sees it
        frame = panel.frame()
        with self._frames_lock:
            if not self.frames or self.frames[-1].tobytes() != frame.tobytes():
                self.frames.append(frame)

    def close(self) -> None:
        """Close the devices (the panel is blanked) and free the board."""
        self.devices.close()

    def release(self) -> None:
        """Unwire the chips and free the board number (devices already closed)."""
        if self._released:
            return
        self._released = True
        self._unwire()

    def _unwire(self) -> None:
        rk = rack.RACK
        rk.unwire(self.chip)
        rk.unwire(self.panel)
        rk.unwire_pin(self.rst_pin)
        if self.irq_pin is not None:
            rk.unwire_pin(self.irq_pin)
        rack.uninstall()
        with _boards_lock:
            _boards.discard(self.board)

    def __enter__(self) -> EmulatedStation:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _take_board() -> int:
    with _boards_lock:
        board = 1
        while board in _boards:
            board += 1
        _boards.add(board)
        return board


def open_emulated_station(
    pins: Any = None, *, timer: Literal["instant", "realtime"] = "instant"
) -> EmulatedStation:
    """A station on emulated chips (its own virtual board); ``close()`` it when done.

    ``pins`` is a ``hardware.pins.StationPins`` (None: the DESIGN defaults, SPI 0.0,
    RST GPIO 25, I2C port 1 at 0x3C); its numbers are offset onto the station's board.
    """
    board = _take_board()
    try:
        return EmulatedStation(board, pins, timer)
    except BaseException:
        with _boards_lock:
            _boards.discard(board)
        raise
