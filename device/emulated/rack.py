"""A virtual rack of buses and pins, and the fake vendor modules wired to it.

The unmodified vendor drivers open hardware by number: ``spidev.SpiDev().open(bus,
device)``, ``smbus2.SMBus(port)`` then an I2C address, ``RPi.GPIO.output(pin, level)``.
The rack maps those numbers to emulated chips, exactly as the wiring of a real board
does. Several emulated stations live in one process (the simulator runs 5-8) by
being wired to *different numbers*: station k gets its own SPI bus, I2C port and
reset pin (see ``device.emulated.open_emulated_station``). Nothing is keyed by
thread or by "the current station", so construction order and threads do not matter.

``vendor_fakes()`` puts fake ``RPi``/``RPi.GPIO``, ``spidev`` and ``smbus2`` modules
in ``sys.modules`` (reference-counted, so stations opened and closed in any order
share one installation) and restores the previous entries when the last user leaves.
The ``mfrc522`` package captures ``GPIO`` and ``spidev`` as module globals at import,
so its cached modules are dropped on install (it re-imports over the fakes) and put
back on restore; driver objects created meanwhile keep working on the fakes.
"""

from __future__ import annotations

import errno
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol


class SpiChip(Protocol):
    """A chip on an SPI bus: one full-duplex transfer with chip select held."""

    def spi_transfer(self, mosi: Sequence[int]) -> list[int]: ...


class I2cChip(Protocol):
    """A chip on an I2C bus (write-only devices are enough here)."""

    def i2c_write(self, data: bytes) -> None: ...


@dataclass
class VirtualRack:
    """What is wired where: SPI (bus, device) and I2C (port, address) to chips, pins."""

    spi: dict[tuple[int, int], SpiChip] = field(default_factory=dict)
    i2c: dict[tuple[int, int], I2cChip] = field(default_factory=dict)
    pin_outputs: dict[int, Callable[[int], None]] = field(default_factory=dict)
    pin_inputs: dict[int, Callable[[], int]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def wire_spi(self, bus: int, device: int, chip: SpiChip) -> None:
        """Connect a chip to /dev/spidev<bus>.<device>."""
        with self.lock:
            if (bus, device) in self.spi:
                raise ValueError(f"SPI {bus}.{device} is already wired")
            self.spi[(bus, device)] = chip

    def wire_i2c(self, port: int, address: int, chip: I2cChip) -> None:
        """Connect a chip to address ``address`` on /dev/i2c-<port>."""
        with self.lock:
            if (port, address) in self.i2c:
                raise ValueError(f"I2C {port}:0x{address:02X} is already wired")
            self.i2c[(port, address)] = chip

    def wire_pin(
        self,
        pin: int,
        on_output: Callable[[int], None] | None = None,
        read: Callable[[], int] | None = None,
    ) -> None:
        """Connect a GPIO to a chip's input (reset) or output (IRQ)."""
        with self.lock:
            if pin in self.pin_outputs or pin in self.pin_inputs:
                raise ValueError(f"GPIO {pin} is already wired")
            if on_output is not None:
                self.pin_outputs[pin] = on_output
            if read is not None:
                self.pin_inputs[pin] = read

    def unwire(self, chip: object) -> None:
        """Disconnect everything of one chip (its pins are unwired by number)."""
        with self.lock:
            for key in [k for k, c in self.spi.items() if c is chip]:
                del self.spi[key]
            for key2 in [k for k, c in self.i2c.items() if c is chip]:
                del self.i2c[key2]

    def unwire_pin(self, pin: int) -> None:
        """Disconnect one GPIO."""
        with self.lock:
            self.pin_outputs.pop(pin, None)
            self.pin_inputs.pop(pin, None)

    def spi_chip(self, bus: int, device: int) -> SpiChip:
        """The chip at (bus, device), or the OSError Linux gives for a missing node."""
        with self.lock:
            chip = self.spi.get((bus, device))
        if chip is None:
            path = f"/dev/spidev{bus}.{device}"
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return chip

    def i2c_port_exists(self, port: int) -> bool:
        """Whether anything is wired on that I2C port."""
        with self.lock:
            return any(p == port for p, _ in self.i2c)

    def i2c_chip(self, port: int, address: int) -> I2cChip:
        """The chip at that address, or the NACK error (EREMOTEIO) of an empty address."""
        with self.lock:
            chip = self.i2c.get((port, address))
        if chip is None:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        return chip


RACK = VirtualRack()


# -- fake spidev --------------------------------------------------------------------------


class FakeSpiDev:
    """``spidev.SpiDev`` over the rack: open(bus, device) binds this instance to a chip."""

    def __init__(self, bus: int | None = None, device: int | None = None) -> None:
        self._chip: SpiChip | None = None
        self.max_speed_hz = 500000
        self.mode = 0
        self.bits_per_word = 8
        self.lsbfirst = False
        self.cshigh = False
        self.no_cs = False
        self.threewire = False
        self.loop = False
        if bus is not None and device is not None:
            self.open(bus, device)

    def open(self, bus: int, device: int) -> None:
        """Bind to the chip wired at /dev/spidev<bus>.<device>."""
        self._chip = RACK.spi_chip(bus, device)

    def close(self) -> None:
        """Release the device node."""
        self._chip = None

    def _transfer(self, values: Sequence[int]) -> list[int]:
        if self._chip is None:
            raise OSError(errno.EBADF, "Bad file descriptor")
        return self._chip.spi_transfer([v & 0xFF for v in values])

    def xfer(self, values: Sequence[int], *_: Any) -> list[int]:
        """Full-duplex transfer (chip select toggled between bytes on real spidev)."""
        return self._transfer(values)

    def xfer2(self, values: Sequence[int], *_: Any) -> list[int]:
        """Full-duplex transfer with chip select held for the whole block."""
        return self._transfer(values)

    def xfer3(self, values: Sequence[int], *_: Any) -> list[int]:
        """Like xfer2 for long blocks."""
        return self._transfer(values)

    def writebytes(self, values: Sequence[int]) -> None:
        """Write only."""
        self._transfer(values)

    def writebytes2(self, values: Sequence[int]) -> None:
        """Write only, long blocks."""
        self._transfer(values)

    def readbytes(self, n: int) -> list[int]:
        """Read ``n`` bytes while sending zeros."""
        return self._transfer([0] * n)


# -- fake smbus2 --------------------------------------------------------------------------


class FakeI2cMsg:
    """``smbus2.i2c_msg``: one message of an ``i2c_rdwr`` transaction."""

    def __init__(self, addr: int, flags: int, buf: bytes) -> None:
        self.addr = addr
        self.flags = flags
        self.buf = buf
        self.len = len(buf)

    @staticmethod
    def write(address: int, buf: Sequence[int] | bytes | str) -> FakeI2cMsg:
        """A write message."""
        data = buf.encode() if isinstance(buf, str) else bytes(buf)
        return FakeI2cMsg(address, 0, data)

    @staticmethod
    def read(address: int, length: int) -> FakeI2cMsg:
        """A read message (answered with zeros: the emulated chips are write-only)."""
        return FakeI2cMsg(address, 1, bytes(length))

    def __iter__(self) -> Iterator[int]:
        return iter(self.buf)

    def __bytes__(self) -> bytes:
        return self.buf


class FakeSMBus:
    """``smbus2.SMBus`` over the rack: the port selects the bus, the address the chip."""

    def __init__(self, bus: int | str | None = None, force: bool = False) -> None:
        self.fd: int | None = None
        self.port: int | None = None
        if bus is not None:
            self.open(bus)

    def open(self, bus: int | str) -> None:
        """Open /dev/i2c-<bus>; ENOENT when nothing is wired on it."""
        port = int(str(bus).rsplit("-", 1)[-1])
        if not RACK.i2c_port_exists(port):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", f"/dev/i2c-{port}")
        self.port = port
        self.fd = 1000 + port

    def close(self) -> None:
        """Close the bus."""
        self.fd = None

    def __enter__(self) -> FakeSMBus:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _write(self, address: int, data: bytes) -> None:
        if self.port is None or self.fd is None:
            raise OSError(errno.EBADF, "Bad file descriptor")
        RACK.i2c_chip(self.port, address).i2c_write(data)

    def write_i2c_block_data(
        self, i2c_addr: int, register: int, data: Sequence[int], force: bool | None = None
    ) -> None:
        """SMBus block write: register (the control byte for SSD1306) then data."""
        if len(data) > 32:
            raise ValueError("Data length cannot exceed 32 bytes")
        self._write(i2c_addr, bytes([register & 0xFF, *data]))

    def write_byte_data(
        self, i2c_addr: int, register: int, value: int, force: bool | None = None
    ) -> None:
        """Two bytes: register then value."""
        self._write(i2c_addr, bytes([register & 0xFF, value & 0xFF]))

    def write_byte(self, i2c_addr: int, value: int, force: bool | None = None) -> None:
        """One byte."""
        self._write(i2c_addr, bytes([value & 0xFF]))

    def i2c_rdwr(self, *messages: FakeI2cMsg) -> None:
        """Combined transaction: each write message goes to its address."""
        for msg in messages:
            if not msg.flags & 1:
                self._write(msg.addr, msg.buf)


# -- fake RPi.GPIO ------------------------------------------------------------------------


class FakeGpio:
    """The subset of ``RPi.GPIO`` the drivers use, over the rack's pins (numbers as given)."""

    BOARD = 10
    BCM = 11
    OUT = 0
    IN = 1
    HIGH = 1
    LOW = 0
    PUD_OFF = 20
    PUD_DOWN = 21
    PUD_UP = 22
    RISING = 31
    FALLING = 32
    BOTH = 33
    VERSION = "0.7.1-emulated"
    RPI_INFO: ClassVar[dict[str, Any]] = {"P1_REVISION": 3, "TYPE": "Emulated", "RAM": "512M"}

    def __init__(self) -> None:
        self._mode: int | None = None
        self._directions: dict[int, int] = {}
        self._levels: dict[int, int] = {}
        self._lock = threading.Lock()

    def setwarnings(self, flag: bool) -> None:
        """Ignored."""

    def setmode(self, mode: int) -> None:
        """Choose the numbering; like RPi.GPIO, changing it once set is an error."""
        with self._lock:
            if self._mode is not None and mode != self._mode:
                raise ValueError("A different mode has already been set!")
            self._mode = mode

    def getmode(self) -> int | None:
        """The numbering in force, or None."""
        return self._mode

    def _channels(self, channel: int | Sequence[int]) -> list[int]:
        if self._mode is None:
            raise RuntimeError("Please set pin numbering mode using GPIO.setmode")
        return [channel] if isinstance(channel, int) else list(channel)

    def setup(
        self,
        channel: int | Sequence[int],
        direction: int,
        pull_up_down: int = PUD_OFF,
        initial: int = -1,
    ) -> None:
        """Configure pins; an output with ``initial`` drives that level at once."""
        for ch in self._channels(channel):
            self._directions[ch] = direction
            if direction == self.OUT and initial in (0, 1):
                self.output(ch, initial)

    def output(self, channel: int | Sequence[int], value: int | bool) -> None:
        """Drive pins; the wired chip sees every level written."""
        for ch in self._channels(channel):
            if self._directions.get(ch) != self.OUT:
                raise RuntimeError("The GPIO channel has not been set up as an OUTPUT")
            level = 1 if value else 0
            self._levels[ch] = level
            listener = RACK.pin_outputs.get(ch)
            if listener is not None:
                listener(level)

    def input(self, channel: int) -> int:
        """Read a pin: the wired chip's output, else the last level driven (default low)."""
        (ch,) = self._channels(channel)
        if ch not in self._directions:
            raise RuntimeError("You must setup() the GPIO channel first")
        reader = RACK.pin_inputs.get(ch)
        return reader() if reader is not None else self._levels.get(ch, 0)

    def cleanup(self, channel: int | Sequence[int] | None = None) -> None:
        """Release pins (all of them, and the numbering mode, when no channel is given)."""
        if channel is None:
            self._directions.clear()
            self._levels.clear()
            self._mode = None
            return
        for ch in [channel] if isinstance(channel, int) else channel:
            self._directions.pop(ch, None)
            self._levels.pop(ch, None)

    def add_event_detect(self, channel: int, edge: int, **_: Any) -> None:
        """Accepted and ignored (the emulated station polls)."""

    def remove_event_detect(self, channel: int) -> None:
        """Accepted and ignored."""

    def event_detected(self, channel: int) -> bool:
        """Never."""
        return False

    def gpio_function(self, channel: int) -> int:
        """The configured direction."""
        return self._directions.get(channel, self.IN)


# -- installation -------------------------------------------------------------------------

_FAKED = ("RPi", "RPi.GPIO", "spidev", "smbus2")
_CAPTURING = ("mfrc522", "mfrc522.MFRC522", "mfrc522.SimpleMFRC522")
_install_lock = threading.Lock()
_users = 0
_saved: dict[str, types.ModuleType | None] = {}
GPIO_STATE = FakeGpio()


def _module(name: str, attrs: dict[str, Any], package: bool = False) -> types.ModuleType:
    mod = types.ModuleType(name, f"Emulated {name} (coffre device.emulated.rack)")
    mod.__dict__.update(attrs)
    if package:
        mod.__path__ = []
    return mod


def _gpio_module() -> types.ModuleType:
    attrs: dict[str, Any] = {
        name: getattr(GPIO_STATE, name) for name in dir(FakeGpio) if not name.startswith("_")
    }
    return _module("RPi.GPIO", attrs)


def _build_fakes() -> dict[str, types.ModuleType]:
    gpio = _gpio_module()
    rpi = _module("RPi", {"GPIO": gpio}, package=True)
    spidev = _module("spidev", {"SpiDev": FakeSpiDev})
    smbus2 = _module("smbus2", {"SMBus": FakeSMBus, "i2c_msg": FakeI2cMsg})
    return {"RPi": rpi, "RPi.GPIO": gpio, "spidev": spidev, "smbus2": smbus2}


def install() -> None:
    """Take one reference on the fake vendor modules (installing them on the first)."""
    global _users
    with _install_lock:
        if _users == 0:
            _saved.clear()
            for name in (*_FAKED, *_CAPTURING):
                _saved[name] = sys.modules.pop(name, None)
            sys.modules.update(_build_fakes())
        _users += 1


def uninstall() -> None:
    """Drop one reference; the last one puts the previous modules back."""
    global _users
    with _install_lock:
        if _users == 0:
            return
        _users -= 1
        if _users:
            return
        for name, previous in _saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
        _saved.clear()


def installed() -> bool:
    """Whether the fakes are in ``sys.modules`` now."""
    return _users > 0


@contextmanager
def vendor_fakes() -> Iterator[VirtualRack]:
    """Fake RPi.GPIO, spidev and smbus2 in ``sys.modules`` for the duration."""
    install()
    try:
        yield RACK
    finally:
        uninstall()
