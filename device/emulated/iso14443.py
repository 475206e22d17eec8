"""Virtual ISO/IEC 14443-A cards in a virtual RF field, with faults on demand.

The cards follow the ISO 14443-3 state machine (POWER-OFF, IDLE, READY, ACTIVE,
HALT, and the READY*/ACTIVE* variants of a card woken from HALT by WUPA):
REQA/WUPA answer ATQA; anticollision (NVB 0x20) and SELECT (NVB 0x70) at cascade
levels 1 and 2 (4- and 7-byte UIDs, cascade tag 0x88, BCC, SAK with the cascade
bit); HLTA; any unexpected frame sends a READY/ACTIVE card back to IDLE (or HALT).

Two memories: MIFARE Classic 1K (64 blocks of 16 bytes, keys in the sector
trailers) and an NTAG213-like Ultralight (4-byte pages, READ returns 4 pages).

Simplifications (documented, invisible to a reader driver):
- MIFARE authentication checks the key and the UID but there is no Crypto1 on the
  virtual RF link: the MFRC522 would cipher and decipher frames transparently, so the
  driver sees the same plaintext in the FIFO. What is modelled is the *state*: an
  authenticated card only understands frames sent with the chip's MFCrypto1On set,
  and a card not authenticated does not understand them (the classic bug of
  forgetting ``StopCrypto1`` before the next card).
- Access bits in sector trailers are not enforced (key A or key B grants read and
  write of the sector's data blocks; block 0 is read-only).
- Bit-oriented anticollision (partial NVB) is not answered: with two cards in the
  field the reader sees the collision (CollErr) and cannot single one out.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

REQA = 0x26
WUPA = 0x52
SEL_CL = (0x93, 0x95, 0x97)
HLTA = 0x50
MF_READ = 0x30
MF_WRITE = 0xA0
UL_WRITE = 0xA2
MF_AUTH_A = 0x60
MF_AUTH_B = 0x61
CASCADE_TAG = 0x88
ACK = 0x0A
NAK = 0x04

CardKind = Literal["classic1k", "ultralight"]
DEFAULT_KEY = bytes([0xFF] * 6)


def crc_a(data: bytes | bytearray, preset: int = 0x6363) -> bytes:
    """ISO 14443-A CRC (CRC_A): two bytes, least significant first."""
    crc = preset
    for byte in data:
        b = byte ^ (crc & 0xFF)
        b = (b ^ (b << 4)) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return bytes([crc & 0xFF, (crc >> 8) & 0xFF])


def with_crc(data: bytes | bytearray) -> bytes:
    """The frame followed by its CRC_A."""
    return bytes(data) + crc_a(data)


def crc_ok(data: bytes | bytearray) -> bool:
    """Whether the last two bytes are the CRC_A of the others."""
    return len(data) >= 3 and crc_a(data[:-2]) == bytes(data[-2:])


def bcc(data: bytes | bytearray) -> int:
    """Block check character of an anticollision answer: XOR of the bytes."""
    out = 0
    for b in data:
        out ^= b
    return out


@dataclass(frozen=True)
class Frame:
    """Bits on the RF link: ``data`` holds ``bits`` valid bits (last byte LSB first)."""

    data: bytes
    bits: int

    @classmethod
    def of(cls, data: bytes | bytearray, bits: int | None = None) -> Frame:
        """A frame of whole bytes unless ``bits`` says otherwise."""
        return cls(bytes(data), len(data) * 8 if bits is None else bits)


@dataclass(frozen=True)
class Reception:
    """What the reader's receiver got back: combined answers plus line errors."""

    frame: Frame
    collision_bit: int | None = None  # 1-based position of the first collided bit
    parity_error: bool = False


class CardState(Enum):
    """ISO 14443-3 type A card states (POWER-OFF folded into IDLE at power-up)."""

    IDLE = "idle"
    READY = "ready"
    ACTIVE = "active"
    HALT = "halt"


class VirtualCard:
    """One ISO 14443-A card: a MIFARE Classic 1K (4-byte UID) or an NTAG (7-byte)."""

    def __init__(self, uid: bytes | str, kind: CardKind | None = None) -> None:
        self.uid = bytes.fromhex(uid) if isinstance(uid, str) else bytes(uid)
        if len(self.uid) not in (4, 7):
            raise ValueError("a virtual card has a 4- or 7-byte UID")
        self.kind: CardKind = kind or ("classic1k" if len(self.uid) == 4 else "ultralight")
        double = len(self.uid) == 7
        if self.kind == "classic1k":
            self.atqa = bytes([0x44 if double else 0x04, 0x00])
            self.sak = 0x08
        else:
            self.atqa = bytes([0x44, 0x00])
            self.sak = 0x00
        self.blocks = self._blank_memory()
        self.state = CardState.IDLE
        self.from_halt = False  # READY*/ACTIVE*: fall back to HALT, not IDLE
        self.level = 0  # cascade level being resolved while READY
        self.auth_sector: int | None = None
        self.pending_write: int | None = None

    @property
    def uid_hex(self) -> str:
        """The UID as the station reports it: upper-case hex, no separators."""
        return self.uid.hex().upper()

    def cascade_parts(self) -> list[bytes]:
        """The 4 UID bytes sent at each cascade level (with the cascade tag)."""
        if len(self.uid) == 4:
            return [self.uid]
        return [bytes([CASCADE_TAG]) + self.uid[:3], self.uid[3:]]

    def _blank_memory(self) -> list[bytearray]:
        if self.kind == "classic1k":
            blocks = [bytearray(16) for _ in range(64)]
            head = self.uid + bytes([bcc(self.uid), self.sak]) + self.atqa
            blocks[0][: len(head)] = head
            trailer = DEFAULT_KEY + bytes([0xFF, 0x07, 0x80, 0x69]) + DEFAULT_KEY
            for sector in range(16):
                blocks[sector * 4 + 3][:] = trailer
            return blocks
        pages = [bytearray(4) for _ in range(45)]
        u = self.uid
        pages[0][:] = bytes([u[0], u[1], u[2], CASCADE_TAG ^ u[0] ^ u[1] ^ u[2]])
        pages[1][:] = u[3:7]
        pages[2][:] = bytes([bcc(u[3:7]), 0x48, 0x00, 0x00])
        pages[3][:] = bytes([0xE1, 0x10, 0x12, 0x00])
        return pages

    # -- state machine ---------------------------------------------------------------

    def power_off(self) -> None:
        """The field went away: the card forgets everything but its memory."""
        self.state = CardState.IDLE
        self.from_halt = False
        self.level = 0
        self.auth_sector = None
        self.pending_write = None

    def _fail(self) -> None:
        """An unexpected frame: back to IDLE, or to HALT for a card woken by WUPA."""
        self.state = CardState.HALT if self.from_halt else CardState.IDLE
        self.level = 0
        self.auth_sector = None
        self.pending_write = None

    def receive(self, frame: Frame, encrypted: bool) -> Frame | None:
        """Handle one frame from the reader; return the answer, or None (silence)."""
        if self.state in (CardState.IDLE, CardState.HALT):
            return self._wake(frame)
        if encrypted != (self.auth_sector is not None):
            self._fail()  # ciphered frame to a plain card, or the reverse: garbage
            return None
        if self.state is CardState.READY:
            return self._anticollision(frame)
        return self._command(frame)

    def _wake(self, frame: Frame) -> Frame | None:
        if frame.bits != 7:
            return None
        cmd = frame.data[0] & 0x7F
        if cmd == WUPA or (cmd == REQA and self.state is CardState.IDLE):
            self.from_halt = self.state is CardState.HALT
            self.state = CardState.READY
            self.level = 0
            return Frame.of(self.atqa)
        return None

    def _anticollision(self, frame: Frame) -> Frame | None:
        data = frame.data
        parts = self.cascade_parts()
        if frame.bits == 7 or len(data) < 2:
            self._fail()
            return None
        if data[0] != SEL_CL[self.level]:
            self._fail()
            return None
        part = parts[self.level]
        check = part + bytes([bcc(part)])
        if frame.bits == 16 and data[1] == 0x20:
            return Frame.of(check)
        if frame.bits == 72 and data[1] == 0x70 and crc_ok(data):
            if data[2:7] != check:
                return None  # another card is being selected: stay READY
            if self.level + 1 < len(parts):
                self.level += 1
                return Frame.of(with_crc(bytes([0x04])))
            self.state = CardState.ACTIVE
            return Frame.of(with_crc(bytes([self.sak])))
        return None  # partial NVB (bit-oriented anticollision): not modelled

    def _command(self, frame: Frame) -> Frame | None:
        data = frame.data
        if frame.bits % 8 or not crc_ok(data):
            self._fail()
            return None
        body = data[:-2]
        if self.pending_write is not None:
            return self._write_data(body)
        cmd = body[0]
        if cmd == HLTA and len(body) == 2 and body[1] == 0x00:
            self.state = CardState.HALT
            self.from_halt = False
            self.auth_sector = None
            return None
        if cmd == MF_READ and len(body) == 2:
            return self._read(body[1])
        if cmd == MF_WRITE and len(body) == 2:
            if not self._writable(body[1]):
                return self._nak()
            self.pending_write = body[1]
            return Frame(bytes([ACK]), 4)
        if cmd == UL_WRITE and len(body) == 6 and self.kind == "ultralight":
            page = body[1]
            if not 4 <= page < len(self.blocks):
                return self._nak()
            self.blocks[page][:] = body[2:6]
            return Frame(bytes([ACK]), 4)
        self._fail()
        return None

    def _nak(self) -> Frame:
        self._fail()
        return Frame(bytes([NAK]), 4)

    def _read(self, addr: int) -> Frame | None:
        if self.kind == "ultralight":
            if addr >= len(self.blocks):
                return self._nak()
            n = len(self.blocks)
            out = b"".join(bytes(self.blocks[(addr + i) % n]) for i in range(4))
            return Frame.of(with_crc(out))
        if addr >= 64 or self.auth_sector != addr // 4:
            return self._nak()
        return Frame.of(with_crc(bytes(self.blocks[addr])))

    def _writable(self, addr: int) -> bool:
        if self.kind == "ultralight":
            return 4 <= addr < len(self.blocks)
        return 0 < addr < 64 and self.auth_sector == addr // 4

    def _write_data(self, body: bytes) -> Frame | None:
        addr = self.pending_write
        self.pending_write = None
        if addr is None or len(body) != 16:
            return self._nak()
        if self.kind == "ultralight":
            self.blocks[addr][:] = body[:4]  # COMPATIBILITY_WRITE keeps the first page
        else:
            self.blocks[addr][:] = body
        return Frame(bytes([ACK]), 4)

    def authenticate(self, block: int, key: bytes, uid4: bytes, key_b: bool) -> bool:
        """MIFARE Classic three-pass auth, decided on key and UID (no Crypto1 stream)."""
        if self.state is not CardState.ACTIVE or self.kind != "classic1k" or block >= 64:
            self._fail()
            return False
        trailer = self.blocks[(block // 4) * 4 + 3]
        expected = bytes(trailer[10:16]) if key_b else bytes(trailer[0:6])
        cuid = self.uid[-4:]
        if key != expected or uid4 != cuid:
            self._fail()
            return False
        self.auth_sector = block // 4
        return True


FaultKind = Literal["crc", "parity", "collision", "silent"]


@dataclass
class _Pull:
    after: int
    card: VirtualCard | None


@dataclass
class RfField:
    """The RF field of one reader: cards come and go, faults are armed on demand.

    Thread-safe: a test or simulator thread places and removes cards while the
    station thread talks to the chip.
    """

    cards: list[VirtualCard] = field(default_factory=list)
    powered: bool = False
    frames: int = 0  # frames sent by the reader so far
    _faults: dict[str, int] = field(default_factory=dict)
    _pulls: list[_Pull] = field(default_factory=list)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def place(self, card: VirtualCard) -> VirtualCard:
        """Put a card in the field (a powered field wakes it up in IDLE)."""
        with self._lock:
            card.power_off()
            if card not in self.cards:
                self.cards.append(card)
            return card

    def remove(self, card: VirtualCard | None = None) -> None:
        """Take a card (or every card) out of the field."""
        with self._lock:
            gone = list(self.cards) if card is None else [card]
            for c in gone:
                if c in self.cards:
                    self.cards.remove(c)
                    c.power_off()

    def set_power(self, on: bool) -> None:
        """The reader's antenna switched on or off; off resets every card."""
        with self._lock:
            if not on:
                for c in self.cards:
                    c.power_off()
            self.powered = on

    def inject(self, kind: FaultKind, count: int = 1) -> None:
        """Arm a fault on the next ``count`` answers (or frames, for ``silent``).

        ``crc``: answers carrying a CRC_A get a wrong one, anticollision answers a
        wrong BCC. ``parity``: the receiver flags a parity error. ``collision``: the
        receiver flags a bit collision. ``silent``: the cards miss the frame (a wobble).
        """
        with self._lock:
            self._faults[kind] = self._faults.get(kind, 0) + count

    def pull_after(self, frames: int, card: VirtualCard | None = None) -> None:
        """Remove the card (or every card) once it has seen ``frames`` more frames (0: now)."""
        with self._lock:
            if frames <= 0:
                self.remove(card)
            else:
                self._pulls.append(_Pull(frames, card))

    def pending_faults(self) -> dict[str, int]:
        """Faults armed and not yet consumed."""
        with self._lock:
            return {k: v for k, v in self._faults.items() if v}

    def _take(self, kind: str) -> bool:
        left = self._faults.get(kind, 0)
        if left:
            self._faults[kind] = left - 1
            return True
        return False

    def _after_frame(self) -> None:
        self.frames += 1
        for p in self._pulls:
            p.after -= 1
        due = [p for p in self._pulls if p.after <= 0]
        self._pulls = [p for p in self._pulls if p.after > 0]
        for p in due:
            self.remove(p.card)

    def transceive(self, frame: Frame, encrypted: bool) -> Reception | None:
        """Send a frame to every powered card; combine the answers as the receiver would."""
        with self._lock:
            try:
                if not self.powered or self._take("silent"):
                    return None
                answers = [a for c in list(self.cards) if (a := c.receive(frame, encrypted))]
                if not answers:
                    return None
                return self._receive(answers)
            finally:
                self._after_frame()

    def _receive(self, answers: list[Frame]) -> Reception:
        bits = max(a.bits for a in answers)
        combined = bytearray(max(len(a.data) for a in answers))
        collision: int | None = None
        for i in range(bits):
            values = {(a.data[i // 8] >> (i % 8)) & 1 for a in answers if i < a.bits}
            if len(values) > 1 and collision is None:
                collision = i + 1
            if 1 in values:
                combined[i // 8] |= 1 << (i % 8)
        out = Frame(bytes(combined), bits)
        if self._corruptible(out) and self._take("crc"):
            out = Frame(out.data[:-1] + bytes([out.data[-1] ^ 0x5A]), out.bits)
        if self._take("collision") and collision is None:
            collision = 1
        return Reception(out, collision, parity_error=self._take("parity"))

    @staticmethod
    def _corruptible(frame: Frame) -> bool:
        return frame.bits == 40 or (frame.bits >= 24 and frame.bits % 8 == 0)

    def authenticate(self, block: int, key: bytes, uid4: bytes, key_b: bool) -> bool:
        """MFAuthent against the selected card; False when nobody answers right."""
        with self._lock:
            try:
                if not self.powered or self._take("silent"):
                    return False
                active = [c for c in self.cards if c.state is CardState.ACTIVE]
                return len(active) == 1 and active[0].authenticate(block, key, uid4, key_b)
            finally:
                self._after_frame()
