"""A register-level MFRC522 (NXP contactless reader IC) behind a fake SPI bus.

Modelled: the 64-byte FIFO (FIFODataReg, FIFOLevelReg flush, BufferOvfl), the
commands Idle, Transceive (started by BitFramingReg.StartSend, TxLastBits for the
7-bit REQA/WUPA), Transmit, MFAuthent, CalcCRC (preset from ModeReg) and SoftReset;
ComIrqReg/DivIrqReg with their Set1/Set2 write semantics, ErrorReg (CollErr,
CRCErr, ParityErr, BufferOvfl), CollReg, ControlReg.RxLastBits, Status2Reg.MFCrypto1On,
CRCResultReg, TxControlReg (antenna: switching it off powers the cards down),
TxModeReg.TxCRCEn/RxModeReg.RxCRCEn, the timer (TModeReg.TAuto, prescaler, reload)
and VersionReg 0x92. The NRSTPD pin (the driver's "RST") holds the chip in power-down
while low and hard-resets it on the rising edge; the IRQ pin follows ComIEnReg.

With ``timer="instant"`` (fast tests) answers and the timer's interrupt are there at
once; with ``timer="realtime"`` (benchmarks of CPU use while waiting) an answer's
interrupt comes after the frames' air time at 106 kbit/s plus the frame delay time,
and the timer fires after its programmed duration, in wall-clock time.

Chip faults: ``go_silent(level)`` makes the SPI answer ``level`` (0x00: MISO held low,
0xFF: floating) until a hard reset (or for good with ``until_reset=False``);
``spi_errors = n`` makes the next n SPI transfers raise OSError (EIO);
``brownout()`` resets every register as a supply dip does (antenna off, timer
settings lost) while VersionReg still reads fine.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Sequence
from typing import Literal

from device.emulated.iso14443 import Frame, RfField, crc_a

# registers
COMMAND, COM_IEN, DIV_IEN, COM_IRQ, DIV_IRQ, ERROR, STATUS1, STATUS2 = range(1, 9)
FIFO_DATA, FIFO_LEVEL, WATER_LEVEL, CONTROL, BIT_FRAMING, COLL = range(9, 15)
MODE, TX_MODE, RX_MODE, TX_CONTROL = 0x11, 0x12, 0x13, 0x14
CRC_RESULT_M, CRC_RESULT_L = 0x21, 0x22
T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L = 0x2A, 0x2B, 0x2C, 0x2D
VERSION = 0x37

# commands
IDLE, MEM, GEN_RANDOM_ID, CALC_CRC, TRANSMIT, NO_CMD_CHANGE = 0x0, 0x1, 0x2, 0x3, 0x4, 0x7
RECEIVE, TRANSCEIVE, MF_AUTHENT, SOFT_RESET = 0x8, 0xC, 0xE, 0xF

# ComIrqReg bits
TX_IRQ, RX_IRQ, IDLE_IRQ, ERR_IRQ, TIMER_IRQ = 0x40, 0x20, 0x10, 0x02, 0x01
CRC_IRQ = 0x04  # DivIrqReg
# ErrorReg bits
BUFFER_OVFL, COLL_ERR, CRC_ERR, PARITY_ERR = 0x10, 0x08, 0x04, 0x02
CRYPTO1_ON = 0x08  # Status2Reg

FIFO_SIZE = 64

_RESET_VALUES = {
    COMMAND: 0x20,
    COM_IEN: 0x80,
    COM_IRQ: 0x14,
    STATUS1: 0x21,
    WATER_LEVEL: 0x08,
    CONTROL: 0x10,
    COLL: 0xA0,
    MODE: 0x3F,
    TX_CONTROL: 0x80,
    0x16: 0x10,  # TxSelReg
    0x17: 0x84,  # RxSelReg
    0x18: 0x84,  # RxThresholdReg
    0x19: 0x4D,  # DemodReg
    0x1C: 0x62,  # MfTxReg
    0x1F: 0xEB,  # SerialSpeedReg
    CRC_RESULT_M: 0xFF,
    CRC_RESULT_L: 0xFF,
    0x24: 0x26,  # ModWidthReg
    0x26: 0x48,  # RFCfgReg
    0x27: 0x88,  # GsNReg
    0x28: 0x20,  # CWGsPReg
    0x29: 0x20,  # ModGsPReg
}

_CRC_PRESETS = (0x0000, 0x6363, 0xA671, 0xFFFF)
CLOCK_HZ = 13_560_000
BIT_S = 128 / CLOCK_HZ  # 106 kbit/s
FDT_S = 1236 / CLOCK_HZ  # PICC frame delay time after a PCD frame (~91 us)


def _air_time_s(tx_bits: int, rx_bits: int) -> float:
    """Both frames on the air (a parity bit per byte, start and end) plus the delay."""
    return (tx_bits * 9 / 8 + rx_bits * 9 / 8 + 4) * BIT_S + FDT_S


class Mfrc522Chip:
    """One MFRC522 with its antenna's RF field."""

    def __init__(
        self,
        field: RfField | None = None,
        *,
        version: int = 0x92,
        timer: Literal["instant", "realtime"] = "instant",
    ) -> None:
        self.field = field if field is not None else RfField()
        self.version = version
        self.timer = timer
        self.regs = bytearray(64)
        self.fifo = bytearray()
        self.in_reset = False
        self.silent: int | None = None
        self.silent_until_reset = True
        self.spi_errors = 0  # the next N SPI transfers fail (OSError EIO)
        self.hard_resets = 0
        self.soft_resets = 0
        self.spi_transfers = 0
        self._timer_deadline: float | None = None
        self._answer: tuple[float, int] | None = None  # realtime: (when, ComIrq bits)
        #: realtime: when the current SPI frame began (monotonic). A real chip acts on a
        #: write as its last bit comes in: the air time and the timer count from then,
        #: not from the end of this emulation's work on it.
        self._wire_at = 0.0
        self._reset_registers()

    # -- faults ------------------------------------------------------------------------

    def go_silent(self, level: int = 0x00, *, until_reset: bool = True) -> None:
        """Stop answering on SPI: every byte reads ``level`` and writes are lost."""
        self.silent = level & 0xFF
        self.silent_until_reset = until_reset

    def recover(self) -> None:
        """Clear a silent fault (the chip answers again)."""
        self.silent = None

    def brownout(self) -> None:
        """A supply dip: every register back to its reset value, antenna off."""
        self._reset_registers()

    # -- pins --------------------------------------------------------------------------

    def reset_pin(self, level: int) -> None:
        """NRSTPD: low holds the chip powered down; the rising edge hard-resets it."""
        if not level:
            self.in_reset = True
            self.field.set_power(False)
        elif self.in_reset:
            self.in_reset = False
            self.hard_resets += 1
            if self.silent_until_reset:
                self.silent = None
            self.fifo.clear()
            self._reset_registers()

    def irq_pin(self) -> int:
        """The IRQ output level (active high unless ComIEnReg.IRqInv)."""
        active = bool(
            (self.regs[COM_IRQ] & self.regs[COM_IEN] & 0x7F)
            or (self.regs[DIV_IRQ] & self.regs[DIV_IEN] & 0x14)
        )
        inverted = bool(self.regs[COM_IEN] & 0x80)
        return int(active != inverted)

    # -- SPI ---------------------------------------------------------------------------

    def spi_transfer(self, mosi: Sequence[int]) -> list[int]:
        """One chip-select frame: an address byte, then data (write) or addresses (read)."""
        self.spi_transfers += 1
        if self.timer == "realtime":
            self._wire_at = time.monotonic()
        if self.spi_errors:
            self.spi_errors -= 1
            raise OSError(errno.EIO, "Input/output error")
        if self.silent is not None:
            return [self.silent] * len(mosi)
        if self.in_reset or not mosi:
            return [0x00] * len(mosi)
        first = mosi[0]
        addr = (first >> 1) & 0x3F
        if first & 0x80:
            out = [0]
            for nxt in mosi[1:]:
                out.append(self.read(addr))
                addr = (nxt >> 1) & 0x3F
            return out
        for value in mosi[1:]:
            self.write(addr, value)
        return [0] * len(mosi)

    # -- registers ---------------------------------------------------------------------

    def _reset_registers(self) -> None:
        self.regs[:] = bytes(64)
        for reg, value in _RESET_VALUES.items():
            self.regs[reg] = value
        self.regs[VERSION] = self.version
        self._timer_deadline = None
        self.field.set_power(False)

    @property
    def antenna_on(self) -> bool:
        """Whether TX1/TX2 drive the carrier."""
        return bool(self.regs[TX_CONTROL] & 0x03)

    @property
    def command(self) -> int:
        """The command running now."""
        return self.regs[COMMAND] & 0x0F

    def read(self, reg: int) -> int:
        """Read a register (with the side effects the chip has)."""
        if reg == FIFO_DATA:
            if not self.fifo:
                return 0x00
            value = self.fifo[0]
            del self.fifo[0]
            return value
        if reg == FIFO_LEVEL:
            return len(self.fifo) & 0x7F
        if reg == COM_IRQ:
            self._check_timer()
        if reg == VERSION:
            return self.version
        return self.regs[reg]

    def write(self, reg: int, value: int) -> None:
        """Write a register (commands run at once: the chip is faster than SPI)."""
        value &= 0xFF
        if reg == COMMAND:
            self._command(value)
        elif reg == COM_IRQ:
            self._set_or_clear(COM_IRQ, value, 0x7F)
        elif reg == DIV_IRQ:
            self._set_or_clear(DIV_IRQ, value, 0x14)
        elif reg == FIFO_DATA:
            if len(self.fifo) < FIFO_SIZE:
                self.fifo.append(value)
            else:
                self.regs[ERROR] |= BUFFER_OVFL
        elif reg == FIFO_LEVEL:
            if value & 0x80:
                self.fifo.clear()
                self.regs[ERROR] &= ~BUFFER_OVFL & 0xFF
        elif reg == STATUS2:
            crypto = self.regs[STATUS2] & CRYPTO1_ON & value  # software may only clear it
            self.regs[STATUS2] = (value & 0xC0) | crypto | (self.regs[STATUS2] & 0x07)
        elif reg == CONTROL:
            pass  # TStopNow/TStartNow only; RxLastBits is read-only
        elif reg == BIT_FRAMING:
            self.regs[BIT_FRAMING] = value
            if value & 0x80 and self.command == TRANSCEIVE:
                self._transceive()
        elif reg == TX_CONTROL:
            self.regs[TX_CONTROL] = value
            self.field.set_power(self.antenna_on)
        elif reg in (ERROR, STATUS1, COLL, CRC_RESULT_M, CRC_RESULT_L, VERSION):
            pass  # read-only
        else:
            self.regs[reg] = value

    def _set_or_clear(self, reg: int, value: int, mask: int) -> None:
        bits = value & mask
        if value & 0x80:
            self.regs[reg] |= bits
        else:
            self.regs[reg] &= ~bits & 0xFF

    def _check_timer(self) -> None:
        now = time.monotonic()
        if self._timer_deadline is not None and now >= self._timer_deadline:
            self._timer_deadline = None
            self.regs[COM_IRQ] |= TIMER_IRQ
        if self._answer is not None and now >= self._answer[0]:
            self.regs[COM_IRQ] |= self._answer[1]
            self._answer = None

    def _timeout_s(self) -> float:
        prescaler = ((self.regs[T_MODE] & 0x0F) << 8) | self.regs[T_PRESCALER]
        reload = (self.regs[T_RELOAD_H] << 8) | self.regs[T_RELOAD_L]
        return (reload + 1) * (2 * prescaler + 1) / CLOCK_HZ

    def _start_timer(self) -> None:
        """Nobody answered: TAuto's timer runs out (or never, if TAuto is off)."""
        if not self.regs[T_MODE] & 0x80:
            return
        if self.timer == "instant":
            self.regs[COM_IRQ] |= TIMER_IRQ
        else:
            self._timer_deadline = self._wire_at + self._timeout_s()

    # -- commands ----------------------------------------------------------------------

    def _command(self, value: int) -> None:
        cmd = value & 0x0F
        flags = value & 0x30
        if cmd == NO_CMD_CHANGE:
            self.regs[COMMAND] = (self.regs[COMMAND] & 0x0F) | flags
            return
        self.regs[COMMAND] = flags | cmd
        self._timer_deadline = None
        self._answer = None
        if cmd == IDLE:
            return
        if cmd == SOFT_RESET:
            self.soft_resets += 1
            self._reset_registers()
            self.regs[COMMAND] = 0x20
            return
        self.regs[ERROR] &= BUFFER_OVFL
        if cmd == CALC_CRC:
            preset = _CRC_PRESETS[self.regs[MODE] & 0x03]
            crc = crc_a(bytes(self.fifo), preset)
            self.fifo.clear()
            self.regs[CRC_RESULT_L], self.regs[CRC_RESULT_M] = crc[0], crc[1]
            self.regs[DIV_IRQ] |= CRC_IRQ
        elif cmd == TRANSCEIVE:
            if self.regs[BIT_FRAMING] & 0x80:
                self._transceive()
        elif cmd == TRANSMIT:
            self._send()
            self._finish()
        elif cmd == MF_AUTHENT:
            self._authenticate()
        elif cmd in (MEM, GEN_RANDOM_ID):
            self._finish()
        elif cmd == RECEIVE:
            self._start_timer()
        else:
            self._finish()

    def _finish(self) -> None:
        self.regs[COMMAND] &= 0xF0
        self.regs[COM_IRQ] |= IDLE_IRQ

    def _outgoing(self) -> Frame:
        data = bytes(self.fifo)
        self.fifo.clear()
        last = self.regs[BIT_FRAMING] & 0x07
        bits = len(data) * 8 if last == 0 or not data else (len(data) - 1) * 8 + last
        if self.regs[TX_MODE] & 0x80 and bits % 8 == 0:
            data += crc_a(data)
            bits += 16
        return Frame(data, bits)

    def _send(self) -> Frame:
        frame = self._outgoing()
        self.regs[COM_IRQ] |= TX_IRQ
        return frame

    def _transceive(self) -> None:
        frame = self._send()
        encrypted = bool(self.regs[STATUS2] & CRYPTO1_ON)
        got = self.field.transceive(frame, encrypted) if self.antenna_on else None
        if got is None:
            self._start_timer()
            return
        data = got.frame.data
        self.fifo.extend(data[:FIFO_SIZE])
        self.regs[CONTROL] = (self.regs[CONTROL] & 0xF8) | (got.frame.bits % 8)
        irq = RX_IRQ
        errors = 0
        if got.collision_bit is not None:
            errors |= COLL_ERR
            self.regs[COLL] = (self.regs[COLL] & 0x80) | (got.collision_bit % 32)
        else:
            self.regs[COLL] = (self.regs[COLL] & 0x80) | 0x20  # CollPosNotValid
        if got.parity_error:
            errors |= PARITY_ERR
        checks_crc = self.regs[RX_MODE] & 0x80 and got.frame.bits % 8 == 0 and len(data) >= 3
        if checks_crc and crc_a(data[:-2]) != data[-2:]:
            errors |= CRC_ERR
        if errors:
            self.regs[ERROR] |= errors
            irq |= ERR_IRQ
        if self.timer == "instant":
            self.regs[COM_IRQ] |= irq
        else:  # the answer arrives after both frames' air time and the frame delay time
            self._answer = (self._wire_at + _air_time_s(frame.bits, got.frame.bits), irq)

    def _authenticate(self) -> None:
        data = bytes(self.fifo)
        self.fifo.clear()
        self.regs[COM_IRQ] |= TX_IRQ
        ok = (
            len(data) >= 12
            and data[0] in (0x60, 0x61)
            and self.antenna_on
            and self.field.authenticate(data[1], data[2:8], data[8:12], data[0] == 0x61)
        )
        if ok:
            self.regs[STATUS2] |= CRYPTO1_ON
            self._finish()
        else:
            self._start_timer()
