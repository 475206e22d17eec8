"""An SSD1306 128x64 OLED controller behind a fake I2C bus, and the glass it drives.

Each I2C write starts with a control byte: 0x00 (Co=0, D/C#=0) means the rest are
commands, 0x40 (D/C#=1) means the rest are GDDRAM data; 0x80/0xC0 (Co=1) carry one
byte then another control byte. Multi-byte commands may continue in the next write.

Decoded: memory addressing mode (0x20: horizontal/vertical/page), column and page
windows (0x21, 0x22), page-mode start page/column (0xB0-0xB7, 0x00-0x1F), display
start line (0x40-0x7F), contrast (0x81), display on/off (0xAF/0xAE), entire display
on (0xA5/0xA4), normal/inverse (0xA6/0xA7), segment remap (0xA0/0xA1), COM scan
direction (0xC0/0xC8), display offset (0xD3), multiplex ratio (0xA8), charge pump
(0x8D), clock, precharge, COM pins, VCOMH (kept), scrolling (accepted, not animated).

GDDRAM is 8 pages x 128 columns, each byte a vertical strip of 8 pixels, LSB on top.
``frame()`` is what the glass shows, for the usual module mounting in which luma's
init (segment remap 0xA1, COM scan 0xC8) gives an upright image: blank when the
display is off or the charge pump is off, all lit with 0xA5, inverted with 0xA7.
Contrast is recorded (``contrast``) but a mode-"1" frame cannot show it.

Fault: ``fail_writes(n)`` makes the next ``n`` I2C writes fail with EREMOTEIO (the NACK
of a loose wire) before anything reaches the controller.
"""

from __future__ import annotations

import errno
import threading
from collections import deque
from collections.abc import Callable

from PIL import Image

WIDTH = 128
HEIGHT = 64
PAGES = HEIGHT // 8

# command -> number of argument bytes that follow
_ARGS: dict[int, int] = {
    0x20: 1, 0x21: 2, 0x22: 2, 0x81: 1, 0x8D: 1, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1,
    0xDA: 1, 0xDB: 1, 0xA3: 2, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5,
}  # fmt: skip

HORIZONTAL, VERTICAL, PAGE = 0, 1, 2


class Ssd1306Chip:
    """The controller's state: GDDRAM, pointers, and the display settings."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.fail_next = 0
        self.failures = 0
        self.on_write: Callable[[], None] | None = None  # after each accepted transaction
        self.writes = 0
        self.bytes_written = 0  # every byte of every accepted I2C write (control bytes too)
        self.data_bytes = 0
        self._pending: list[int] = []  # a command waiting for its arguments
        self.power_on_reset()

    def power_on_reset(self) -> None:
        """The state after power-up (RAM cleared here; on a real panel it is random)."""
        self.ram = bytearray(WIDTH * PAGES)
        self.mode = PAGE
        self.col = 0
        self.page = 0
        self.col_start, self.col_end = 0, WIDTH - 1
        self.page_start, self.page_end = 0, PAGES - 1
        self.page_mode_col = 0
        self.start_line = 0
        self.offset = 0
        self.multiplex = 63
        self.contrast = 0x7F
        self.display_on = False
        self.entire_on = False
        self.inverse = False
        self.seg_remap = False
        self.com_reverse = False
        self.charge_pump = False
        self.scrolling = False
        self.clock_div = 0x80
        self.precharge = 0x22
        self.com_pins = 0x12
        self.vcomh = 0x20
        self.commands: deque[int] = deque(maxlen=4096)  # the last command bytes seen

    def fail_writes(self, count: int = 1) -> None:
        """The next ``count`` I2C writes are NACKed (OSError EREMOTEIO)."""
        with self._lock:
            self.fail_next += count

    # -- I2C -----------------------------------------------------------------------------

    def i2c_write(self, data: bytes) -> None:
        """One I2C write transaction addressed to this chip."""
        with self._lock:
            if self.fail_next:
                self.fail_next -= 1
                self.failures += 1
                raise OSError(errno.EREMOTEIO, "Remote I/O error")
            self.writes += 1
            self.bytes_written += len(data)
            i = 0
            while i < len(data):
                control = data[i]
                i += 1
                is_data = bool(control & 0x40)
                if control & 0x80:  # Co=1: one byte, then another control byte
                    if i < len(data):
                        self._byte(data[i], is_data)
                    i += 1
                    continue
                for b in data[i:]:
                    self._byte(b, is_data)
                break
        if self.on_write is not None:
            self.on_write()

    def _byte(self, b: int, is_data: bool) -> None:
        if is_data:
            self._data(b)
        else:
            self._command_byte(b)

    # -- data ----------------------------------------------------------------------------

    def _data(self, b: int) -> None:
        self.data_bytes += 1
        self.ram[self.page * WIDTH + self.col] = b
        if self.mode == PAGE:
            self.col = self.col + 1 if self.col < WIDTH - 1 else self.page_mode_col
        elif self.mode == HORIZONTAL:
            if self.col < self.col_end:
                self.col += 1
            else:
                self.col = self.col_start
                self.page = self.page + 1 if self.page < self.page_end else self.page_start
        else:
            if self.page < self.page_end:
                self.page += 1
            else:
                self.page = self.page_start
                self.col = self.col + 1 if self.col < self.col_end else self.col_start

    # -- commands ------------------------------------------------------------------------

    def _command_byte(self, b: int) -> None:
        self.commands.append(b)
        if self._pending:
            self._pending.append(b)
            if len(self._pending) == _ARGS[self._pending[0]] + 1:
                cmd, *args = self._pending
                self._pending = []
                self._command(cmd, args)
            return
        if b in _ARGS:
            self._pending = [b]
            return
        self._command(b, [])

    def _command(self, cmd: int, args: list[int]) -> None:
        if cmd <= 0x0F:
            self.page_mode_col = (self.page_mode_col & 0xF0) | cmd
            self.col = self.page_mode_col
        elif cmd <= 0x1F:
            self.page_mode_col = ((cmd & 0x07) << 4) | (self.page_mode_col & 0x0F)
            self.col = self.page_mode_col
        elif cmd == 0x20:
            self.mode = args[0] & 0x03 if args[0] & 0x03 != 3 else self.mode
        elif cmd == 0x21:
            self.col_start, self.col_end = args[0] & 0x7F, args[1] & 0x7F
            self.col = self.col_start
        elif cmd == 0x22:
            self.page_start, self.page_end = args[0] & 0x07, args[1] & 0x07
            self.page = self.page_start
        elif 0x40 <= cmd <= 0x7F:
            self.start_line = cmd & 0x3F
        elif 0xB0 <= cmd <= 0xB7:
            self.page = cmd & 0x07
        else:
            self._setting(cmd, args)

    def _setting(self, cmd: int, args: list[int]) -> None:
        simple = {
            0xAE: ("display_on", False), 0xAF: ("display_on", True),
            0xA4: ("entire_on", False), 0xA5: ("entire_on", True),
            0xA6: ("inverse", False), 0xA7: ("inverse", True),
            0xA0: ("seg_remap", False), 0xA1: ("seg_remap", True),
            0xC0: ("com_reverse", False), 0xC8: ("com_reverse", True),
            0x2E: ("scrolling", False), 0x2F: ("scrolling", True),
        }  # fmt: skip
        if cmd in simple:
            name, value = simple[cmd]
            setattr(self, name, value)
        elif cmd == 0x81:
            self.contrast = args[0]
        elif cmd == 0x8D:
            self.charge_pump = bool(args[0] & 0x04)
        elif cmd == 0xA8:
            self.multiplex = max(15, args[0] & 0x3F)
        elif cmd == 0xD3:
            self.offset = args[0] & 0x3F
        elif cmd == 0xD5:
            self.clock_div = args[0]
        elif cmd == 0xD9:
            self.precharge = args[0]
        elif cmd == 0xDA:
            self.com_pins = args[0]
        elif cmd == 0xDB:
            self.vcomh = args[0]
        # 0xE3 NOP, scroll set-ups (0x26, 0x27, 0x29, 0x2A, 0xA3): accepted, not animated

    # -- glass ---------------------------------------------------------------------------

    def pixel(self, column: int, row: int) -> bool:
        """A GDDRAM bit: column 0..127, row 0..63 (page = row // 8, LSB on top)."""
        return bool(self.ram[(row // 8) * WIDTH + column] >> (row % 8) & 1)

    def lit(self) -> bool:
        """Whether the panel emits at all (on, with its charge pump running)."""
        return self.display_on and self.charge_pump

    def ram_image(self) -> Image.Image:
        """GDDRAM as an image: x = column, y = row (no display settings applied)."""
        with self._lock:
            ram = bytes(self.ram)
        img = Image.new("1", (WIDTH, HEIGHT), 0)
        for page in range(PAGES):
            # one byte per column, LSB = top row: rows of an 8-wide LSB-first strip
            strip = Image.frombytes("1", (8, WIDTH), ram[page * WIDTH : (page + 1) * WIDTH],
                                    "raw", "1;R")  # fmt: skip
            img.paste(strip.transpose(Image.Transpose.TRANSPOSE), (0, page * 8))
        return img

    def frame(self) -> Image.Image:
        """What the glass shows now, as a mode-"1" 128x64 image (white = lit)."""
        if not self.lit():
            return Image.new("1", (WIDTH, HEIGHT), 0)
        src = Image.new("1", (WIDTH, HEIGHT), 1) if self.entire_on else self.ram_image()
        if not self.seg_remap:
            src = src.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        if self.inverse:
            src = src.convert("L").point(lambda v: 255 - v).convert("1")
        identity = self.start_line == 0 and self.offset == 0 and self.multiplex == HEIGHT - 1
        if identity and self.com_reverse:
            return src
        out = Image.new("1", (WIDTH, HEIGHT), 0)
        for line in range(self.multiplex + 1):
            row = (line + self.start_line) % HEIGHT
            com = (line + self.offset) % HEIGHT
            y = com if self.com_reverse else HEIGHT - 1 - com
            out.paste(src.crop((0, row, WIDTH, row + 1)), (0, y))
        return out
