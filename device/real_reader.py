"""The station's NFC reader on an MFRC522, through the ``mfrc522`` package's low-level class.

Why not the package's high-level calls:
- ``SimpleMFRC522.read()`` busy-loops until a card comes and only knows 4-byte UIDs.
- ``MFRC522.MFRC522_ToCard`` waits for the answer in a loop whose exit test is built
  with ``~`` on booleans: it never stops on the timer interrupt, so every poll with
  no card spins 2000 SPI reads (about 0.1 s of CPU on a Pi Zero, per poll).
- Its constructor in BCM mode picks reset pin 15 (a BOARD number); the station's RST
  is BCM 25, always passed explicitly here.
So this backend keeps the package for SPI register access (``Read_MFRC522``,
``Write_MFRC522``, ``MFRC522_Init``) and does its own short transceive that stops at
the answer, the timer or an error, sleeping (not spinning) while it waits.

One ``poll()`` sends WUPA, resolves cascade levels 1 and 2 (3 too) with anticollision
and SELECT, checks BCC and CRC_A in software, then sends HLTA so the card sleeps until
the next WUPA (a card left READY or ACTIVE ignores the next WUPA and would flicker);
a poll that fails half-way also ends with HLTA, for the same reason. Nothing beyond the
UID is read (no ATS, no block). Each exchange is a handful of SPI transfers (each one
an ioctl and the driver's Python on a Zero): a register is not written again with the
value the reader's last exchange left in it, the FIFO is not flushed when that exchange
left it empty, and each look at the chip reads the interrupt, error, FIFO level and
last-bits registers in one transfer (the MFRC522 datasheet, 8.1.2.1: one read frame may
address a different register in each byte). An empty poll is 7 transfers, a 7-byte
UID's read 45 (11 and 62 without these three savings).

Debounce: a card lying on the reader is one ``TagPresent``; ``TagRemoved`` comes after
``miss_limit`` consecutive polls in which nothing answered (default 3: two dropped
frames do not make a card flicker). A poll that is unsure (collision, bad CRC/BCC, a
card leaving mid-read) counts neither as a sighting nor as a miss.

Recovery: field reports say RC522 readers stop answering after hours (SPI lock-up,
or a supply dip that resets the chip to antenna-off). The reader checks the chip's
health (VersionReg, antenna on, timer mode) every ``health_every`` polls, after
``suspect_after`` unsure polls in a row, on any hung wait, and before declaring a
removal (so a dying chip never turns into a fake TagRemoved/TagPresent pair). An
unhealthy chip is hard-reset through RST and re-initialised; ``ReaderError`` is raised
only when ``max_reinit`` re-initialisations in a row fail.
"""

from __future__ import annotations

import enum
import importlib
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from device.base import Reader, ReaderError, ReaderEvent, TagPresent, TagRemoved

log = logging.getLogger(__name__)

# MFRC522 registers and bits used here
COMMAND, COM_IRQ, ERROR, STATUS2 = 0x01, 0x04, 0x06, 0x08
FIFO_DATA, FIFO_LEVEL, CONTROL, BIT_FRAMING = 0x09, 0x0A, 0x0C, 0x0D
TX_CONTROL, T_MODE, T_RELOAD_L, VERSION = 0x14, 0x2A, 0x2D, 0x37
POLL_TIMER_TICKS = 3  # of 0.5 ms (the package's prescaler): 1.5 ms
POLL_TIMER_S = POLL_TIMER_TICKS * 0.0005  # it starts when the frame has been sent
#: ISO/IEC 14443-2/-3 type A at 106 kbit/s: a bit is 128 carrier cycles of 13.56 MHz; a
#: byte goes with its parity bit; a frame has a start and an end; the card answers a
#: frame delay time (n = 9: 1236 cycles) after the end of the reader's.
BIT_S = 128 / 13.56e6
FDT_S = 1236 / 13.56e6
#: What each answer of a poll holds (ISO/IEC 14443-3 6.4): ATQA two bytes; a cascade
#: level's anticollision answer four UID bytes and BCC; SAK one byte and CRC_A.
ATQA_BYTES, UID_PART_BYTES, SAK_BYTES = 2, 5, 3
WAKE_MARGIN_S = 0.0001
CMD_IDLE, CMD_TRANSCEIVE = 0x00, 0x0C
TX_IRQ, RX_IRQ, IDLE_IRQ, ERR_IRQ, TIMER_IRQ = 0x40, 0x20, 0x10, 0x02, 0x01
COLL_ERR, PROTOCOL_ERRORS = 0x08, 0x10 | 0x04 | 0x02 | 0x01
CRYPTO1_ON = 0x08
#: One look at the chip: ComIrqReg, ErrorReg, FIFOLevelReg and ControlReg in one read
#: frame (built once: it is sent at every exchange of every poll; spidev copies it).
LOOK_FRAME = [0x80 | (reg << 1) for reg in (COM_IRQ, ERROR, FIFO_LEVEL, CONTROL)] + [0]
T_MODE_CONFIGURED = 0x8D  # what MFRC522_Init writes: lost when the chip resets itself
# 0x91/0x92: NXP v1/v2; 0x88, 0x12, 0xB2: common clones that work
KNOWN_VERSIONS = frozenset({0x91, 0x92, 0x88, 0x12, 0xB2})

WUPA = 0x52
SEL = (0x93, 0x95, 0x97)
HLTA = 0x50
CASCADE_TAG = 0x88

DEFAULT_BUS = 0
DEFAULT_DEVICE = 0
DEFAULT_RST = 25  # BCM


def crc_a(data: bytes) -> bytes:
    """ISO 14443-A CRC, least significant byte first."""
    crc = 0x6363
    for byte in data:
        b = byte ^ (crc & 0xFF)
        b = (b ^ (b << 4)) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return bytes([crc & 0xFF, crc >> 8])


def air_time_s(sent: int, answer: int) -> float:
    """When an answer of ``answer`` bytes to a frame of ``sent`` bytes is in (after StartSend)."""
    return ((sent + answer) * 9 + 4) * BIT_S + FDT_S


def bcc(data: bytes) -> int:
    """Block check character of an anticollision answer: XOR of the UID bytes."""
    out = 0
    for b in data:
        out ^= b
    return out


class _Status(enum.Enum):
    OK = "ok"
    NO_ANSWER = "no answer"  # the timer ran out: nobody in the field
    COLLISION = "collision"
    ERROR = "error"  # parity, protocol, overflow, or a malformed answer
    HUNG = "hung"  # no interrupt at all before the deadline: the chip is not working


@dataclass(frozen=True)
class _Answer:
    status: _Status
    data: bytes = b""
    bits: int = 0


class _Seen(enum.Enum):
    MISS = "miss"
    UNSURE = "unsure"
    FAULT = "fault"


def _pins(pins: Any) -> tuple[int | None, int | None, int | None, int | None]:
    """(bus, device, rst, speed) from a StationPins, a ReaderPins, or None."""
    if pins is None:
        return None, None, None, None
    reader = getattr(pins, "reader", pins)
    return (
        getattr(reader, "spi_bus", None),
        getattr(reader, "spi_device", None),
        getattr(reader, "rst", None),
        getattr(reader, "spi_speed_hz", None),
    )


class Mfrc522Reader(Reader):
    """An MFRC522 on SPI, polled without blocking; debounced; recovers by re-init."""

    def __init__(
        self,
        pins: Any = None,
        *,
        bus: int | None = None,
        device: int | None = None,
        rst: int | None = None,
        speed_hz: int | None = None,
        miss_limit: int = 3,
        health_every: int = 40,
        suspect_after: int = 3,
        max_reinit: int = 3,
        answer_wait_s: float = 0.040,
        reset_hold_s: float = 0.001,
        reset_settle_s: float = 0.050,
    ) -> None:
        p_bus, p_dev, p_rst, p_speed = _pins(pins)
        self.bus = bus if bus is not None else (p_bus if p_bus is not None else DEFAULT_BUS)
        self.device = device if device is not None else (p_dev if p_dev is not None else 0)
        self.rst = rst if rst is not None else (p_rst if p_rst is not None else DEFAULT_RST)
        self.speed_hz = speed_hz or p_speed or 1_000_000
        self.miss_limit = max(1, miss_limit)
        self.health_every = health_every
        self.suspect_after = suspect_after
        self.max_reinit = max_reinit
        self.answer_wait_s = answer_wait_s
        self.reset_hold_s = reset_hold_s
        self.reset_settle_s = reset_settle_s
        # statistics, for the station's status and for tests
        self.polls = 0
        self.health_checks = 0
        self.recoveries = 0
        self._current: str | None = None
        self._misses = 0
        self._unsure = 0
        self._since_health = 0
        self._failed_reinits = 0
        self._pending: deque[ReaderEvent] = deque()
        self._closed = False
        #: What the reader's own writes left in CommandReg (Idle) and BitFramingReg, from
        #: one exchange to the next and one poll to the next; None when unknown. An
        #: exchange clears each before the transfer that may change it and sets it after
        #: the one that makes it so, so a failed transfer leaves it unknown. Nothing else
        #: writes these registers but a re-init, which forgets them (a reset leaves Idle,
        #: BitFramingReg 0 and an empty FIFO, but the package's init is not ours); a
        #: health check only reads.
        self._left_idle = False
        self._left_framing: int | None = None
        self._left_empty = False  # whether the FIFO is empty (False: unknown)
        self._dev, self._gpio = self._open()
        for _ in range(max(1, max_reinit)):
            if self._healthy():
                break
            self._recover()  # raises once max_reinit attempts have failed

    # -- opening -----------------------------------------------------------------------

    def _open(self) -> tuple[Any, Any]:
        try:
            driver = importlib.import_module("mfrc522.MFRC522")
        except ImportError as exc:
            raise ReaderError(f"mfrc522 not installed: {exc.name or exc}") from exc
        except RuntimeError as exc:  # RPi.GPIO's "can only be run on a Raspberry Pi"
            raise ReaderError("no Raspberry Pi GPIO here") from exc
        gpio = driver.GPIO  # the very module the driver captured at its import
        mode = gpio.getmode()
        if mode is not None and mode != gpio.BCM:
            raise ReaderError("GPIO numbering is BOARD; the station uses BCM")
        try:
            dev = driver.MFRC522(
                bus=self.bus,
                device=self.device,
                spd=self.speed_hz,
                pin_mode=gpio.BCM,
                pin_rst=self.rst,
            )
        except OSError as exc:
            raise ReaderError(f"cannot open SPI {self.bus}.{self.device}: {exc}") from exc
        # each MFRC522() adds a StreamHandler to the same logger: keep one
        vendor_log = logging.getLogger("mfrc522Logger")
        while len(vendor_log.handlers) > 1:
            vendor_log.removeHandler(vendor_log.handlers[-1])
        self._configure(dev)
        return dev, gpio

    @staticmethod
    def _configure(dev: Any) -> None:
        """After the package's init: Crypto1 off, and a 1.5 ms answer timer.

        A card authenticated earlier leaves MFCrypto1On set and the next card would
        fail. The package's timer (31 ticks of 0.5 ms = 15.5 ms) suits MIFARE writes;
        a poll sends only WUPA, anticollision, SELECT and HLTA, which a card answers a
        fixed frame delay (~90 us, ISO 14443-3) after the end of the frame, in at most
        0.45 ms more (a cascade level's five bytes). The timer starts at the end of the
        frame, so 3 ticks (1.5 ms) leave three times that; an empty poll waits for the
        whole timer, so a longer one (11 ticks, 5.5 ms) would slow every empty poll.
        """
        dev.ClearBitMask(STATUS2, CRYPTO1_ON)
        dev.Write_MFRC522(T_RELOAD_L, POLL_TIMER_TICKS - 1)

    # -- Reader ------------------------------------------------------------------------

    @property
    def current(self) -> str | None:
        """The UID lying on the reader now, as far as the last poll knows."""
        return self._current

    def poll(self) -> ReaderEvent | None:
        """Look at the field once (a few SPI transfers); return what changed, if anything."""
        if self._closed:
            raise ReaderError("reader is closed")
        if self._pending:
            return self._pending.popleft()
        self.polls += 1
        self._since_health += 1
        if self.health_every and self._since_health >= self.health_every:
            self._check_health()
        try:
            seen = self._read_uid()
            if seen is _Seen.UNSURE:
                self._halt()  # cards left READY/ACTIVE would ignore the next WUPA
        except OSError as exc:  # the SPI transfer itself failed
            log.warning("MFRC522 SPI error: %s", exc)
            seen = _Seen.FAULT
        if isinstance(seen, str):
            return self._sighted(seen)
        if seen is _Seen.MISS:
            return self._missed()
        self._unsure += 1
        if seen is _Seen.FAULT or self._unsure >= self.suspect_after:
            self._check_health()
        return None

    def close(self) -> None:
        """Switch the antenna off, release SPI and the reset pin (only that pin)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._dev.AntennaOff()
            self._dev.spi.close()
            self._gpio.cleanup(self.rst)
        except (OSError, RuntimeError) as exc:  # closing must not fail the station
            log.warning("closing the MFRC522: %s", exc)

    # -- debounce ----------------------------------------------------------------------

    def _sighted(self, uid: str) -> ReaderEvent | None:
        self._misses = 0
        self._unsure = 0
        if uid == self._current:
            return None
        previous, self._current = self._current, uid
        if previous is None:
            return TagPresent(uid)
        self._pending.append(TagPresent(uid))  # a swap faster than miss_limit polls
        return TagRemoved(previous)

    def _missed(self) -> ReaderEvent | None:
        self._unsure = 0
        if self._current is None:
            return None
        self._misses += 1
        if self._misses < self.miss_limit:
            return None
        if not self._check_health():
            self._misses = 0  # the chip failed, not the card: say nothing
            return None
        gone, self._current, self._misses = self._current, None, 0
        return TagRemoved(gone)

    # -- health ------------------------------------------------------------------------

    def version(self) -> int | None:
        """The chip's VersionReg (0x92 for an MFRC522 v2), or None if SPI fails."""
        try:
            value: int = self._dev.Read_MFRC522(VERSION)
        except OSError:
            return None
        return value

    def healthy(self) -> bool:
        """Whether the chip answers and keeps its configuration (antenna on, timer)."""
        read = self._dev.Read_MFRC522
        try:
            return bool(
                read(VERSION) in KNOWN_VERSIONS
                and read(TX_CONTROL) & 0x03 == 0x03
                and read(T_MODE) == T_MODE_CONFIGURED
            )
        except OSError:
            return False

    def _healthy(self) -> bool:
        return self.healthy()

    def _check_health(self) -> bool:
        """True when the chip was fine; otherwise recover it (or raise) and return False."""
        self.health_checks += 1
        self._since_health = 0
        if self._healthy():
            self._failed_reinits = 0
            return True
        self._recover()
        return False

    def _recover(self) -> None:
        """Hard reset through RST, then the package's init; raise if it keeps failing."""
        self.recoveries += 1
        log.warning("MFRC522 unhealthy (VersionReg=%s): re-initialising", self._version_text())
        self._gpio.output(self.rst, self._gpio.LOW)
        time.sleep(self.reset_hold_s)
        self._gpio.output(self.rst, self._gpio.HIGH)
        time.sleep(self.reset_settle_s)
        self._forget_registers()
        try:
            self._dev.MFRC522_Init()
            self._configure(self._dev)
        except OSError as exc:
            log.warning("MFRC522 re-init: SPI error: %s", exc)
        self._misses = 0
        self._unsure = 0
        if self._healthy():
            self._failed_reinits = 0
            return
        self._failed_reinits += 1
        if self._failed_reinits >= self.max_reinit:
            raise ReaderError(
                f"MFRC522 on SPI {self.bus}.{self.device} not answering after "
                f"{self._failed_reinits} re-inits (VersionReg={self._version_text()})"
            )

    def _forget_registers(self) -> None:
        self._left_idle, self._left_framing, self._left_empty = False, None, False

    def _version_text(self) -> str:
        version = self.version()
        return "no answer" if version is None else f"0x{version:02X}"

    # -- ISO 14443-A -------------------------------------------------------------------

    def _read_uid(self) -> str | _Seen:
        """WUPA, anticollision and select at each cascade level, then HLTA."""
        # Most polls find nobody: look once, when the timer has run out (an ATQA is in by
        # then too), not also when it would be due.
        atqa = self._transceive(bytes([WUPA]), last_bits=7, answer=ATQA_BYTES, early=False)
        if atqa.status is _Status.NO_ANSWER:
            return _Seen.MISS
        if atqa.status is _Status.HUNG:
            return _Seen.FAULT
        if atqa.status is not _Status.OK or atqa.bits != 16:
            return _Seen.UNSURE
        uid = b""
        for sel in SEL:
            part = self._transceive(bytes([sel, 0x20]), answer=UID_PART_BYTES)
            if part.status is _Status.HUNG:
                return _Seen.FAULT
            d = part.data
            if part.status is not _Status.OK or part.bits != 40 or bcc(d[:4]) != d[4]:
                return _Seen.UNSURE
            frame = bytes([sel, 0x70]) + d[:5]
            sak = self._transceive(frame + crc_a(frame), answer=SAK_BYTES)
            if sak.status is _Status.HUNG:
                return _Seen.FAULT
            s = sak.data
            if sak.status is not _Status.OK or sak.bits != 24 or crc_a(s[:1]) != s[1:3]:
                return _Seen.UNSURE
            if not s[0] & 0x04:
                uid += d[:4]
                break
            if d[0] != CASCADE_TAG:
                return _Seen.UNSURE
            uid += d[1:4]
        else:
            return _Seen.UNSURE
        self._halt()
        return uid.hex().upper()

    def _halt(self) -> None:
        frame = bytes([HLTA, 0x00])
        self._transceive(frame + crc_a(frame), expect_answer=False)

    def _transceive(
        self,
        data: bytes,
        last_bits: int = 0,
        expect_answer: bool = True,
        *,
        answer: int = UID_PART_BYTES,
        early: bool = True,
    ) -> _Answer:
        """Send one frame and collect the answer (``answer`` bytes long when it comes),
        sleeping (not spinning) while waiting (``early``: look when the answer is due
        before the timer runs out, see ``_wait``).

        The register writes are the package's sequence (Idle, clear the interrupts, flush
        and fill the FIFO, TxLastBits, Transceive, StartSend), less those the reader's
        previous exchange, in this poll or the last, made needless: Idle and
        BitFramingReg when it left them so (an exchange ends with Idle and its own
        TxLastBits, StartSend cleared), the flush when it left the FIFO empty (it read the
        whole answer, or nothing came and the FIFO level read 0). An anticollision or
        SELECT after another skips all three, and so does an empty poll's WUPA after the
        last one's.
        """
        dev = self._dev
        write, xfer = dev.Write_MFRC522, dev.spi.xfer2
        if not self._left_idle:
            write(COMMAND, CMD_IDLE)
        self._left_idle = False
        write(COM_IRQ, 0x7F)  # Set1=0: clear every interrupt request
        if not self._left_empty:
            write(FIFO_LEVEL, 0x80)  # flush
        self._left_empty = False
        xfer([(FIFO_DATA << 1) & 0x7E, *data])  # burst into the FIFO
        if self._left_framing != last_bits:  # StartSend must be clear before Transceive
            write(BIT_FRAMING, last_bits)
        self._left_framing = None
        write(COMMAND, CMD_TRANSCEIVE)
        sent = time.monotonic()  # the frame goes on the air as this write ends
        write(BIT_FRAMING, 0x80 | last_bits)  # StartSend
        if not expect_answer:
            # HLTA: nothing comes back. The frame goes out by itself (~0.4 ms) and the next
            # transceive, a poll later, starts with Idle; waiting for its end would cost a
            # sleep and three transfers before the poll could report the card.
            return _Answer(_Status.OK)
        done = RX_IRQ | IDLE_IRQ | ERR_IRQ | TIMER_IRQ
        due = air_time_s(len(data), answer)
        timer = air_time_s(len(data), 0) + POLL_TIMER_S
        look = self._wait(sent, done, due if early else None, timer)
        write(BIT_FRAMING, last_bits)  # StartSend cleared, TxLastBits kept for the next
        self._left_framing = last_bits
        if look is None:
            write(COMMAND, CMD_IDLE)
            self._left_idle = True
            return _Answer(_Status.HUNG)
        try:
            irq, error, n, control = look
            if not irq & (RX_IRQ | ERR_IRQ):
                self._left_empty = n == 0
                return _Answer(_Status.NO_ANSWER)
            if error & COLL_ERR:
                return _Answer(_Status.COLLISION)
            if error & PROTOCOL_ERRORS:
                return _Answer(_Status.ERROR)
            if not 0 < n <= 64:
                return _Answer(_Status.ERROR)
            last = control & 0x07
            got = xfer([0x80 | (FIFO_DATA << 1)] * n + [0])[1:]
            self._left_empty = True  # all it held
            bits = (n - 1) * 8 + last if last else n * 8
            return _Answer(_Status.OK, bytes(got), bits)
        finally:
            write(COMMAND, CMD_IDLE)
            self._left_idle = True

    def _wait(
        self, start: float, done: int, answer_s: float | None, timer_s: float
    ) -> list[int] | None:
        """ComIrqReg, ErrorReg, FIFOLevelReg and ControlReg, read in one frame (the
        MFRC522 datasheet, 8.1.2.1: one read frame may address a different register in
        each byte), once ComIrqReg has one of ``done`` set; None when the deadline passes
        first.

        It looks when the answer is due (``answer_s`` after ``start``, when StartSend was
        written: both frames on the air and the card's frame delay; None: skip this
        look), then when the chip's timer has surely run out (``timer_s``), then at
        doubling steps until ``answer_wait_s``. A look whose moment has passed (the
        thread was slow, or the StartSend write was: on a Pi the frame goes out while the
        ioctl returns) is made at once, without a sleep. Each look is one SPI read and
        each sleep a wake-up: an empty poll takes one of each, ~1.8 ms in all; a look
        before the answer is due, or the status read in a transfer of its own, would
        be one more SPI read on every poll for nothing.
        """
        xfer = self._dev.spi.xfer2
        deadline = start + self.answer_wait_s
        looks = [start + timer_s + WAKE_MARGIN_S]  # the timer's interrupt, at the latest
        if answer_s is not None:
            looks.insert(0, start + answer_s + WAKE_MARGIN_S)
        step = 0.004
        now = time.monotonic()
        while True:
            if looks:
                at = looks.pop(0)
            else:  # neither came: a slow chip, or a hung one
                at, step = now + step, min(step * 2, 0.016)
            if at > now:
                time.sleep(min(at, deadline) - now)
            look: list[int] = xfer(LOOK_FRAME)[1:]
            if look[0] & done:
                return look
            if (now := time.monotonic()) >= deadline:
                return None
