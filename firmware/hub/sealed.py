"""A backup sealed with a key a person writes down: what the host's console downloads.

The console's backup crosses the venue's Wi-Fi, so it travels sealed: libsodium's
``secretstream`` (XChaCha20-Poly1305, through PyNaCl) in chunks of :data:`CHUNK`, so a
store of any size is sealed and opened without holding it in memory, and a chunk is
handed on only once its tag is checked. The key is 100 random bits the hub shows on its
glass as 20 characters (Crockford's base32: no I, L, O or U to misread; a typed O is read
as 0, an I or L as 1), never sent anywhere. BLAKE2b turns it into the stream's 32-byte key
with a salt of the file's own; a 16-byte check beside it tells a mistyped key from a
damaged file (it tells an attacker nothing the 100 bits do not already hide).

A file: :data:`MAGIC`, the salt, the check, the stream's header, then the chunks, the last
one tagged final; anything after it, a chunk missing or changed, is refused.
"""

from __future__ import annotations

import secrets
from typing import BinaryIO

import nacl.encoding
import nacl.exceptions
import nacl.hash
from nacl import bindings as sodium

#: What a sealed file starts with (16 bytes).
MAGIC = b"coffre-sealed-1\n"
SALT = 16
CHECK = 16
CHUNK = 1 << 16
_ABYTES = sodium.crypto_secretstream_xchacha20poly1305_ABYTES
_HEADER = sodium.crypto_secretstream_xchacha20poly1305_HEADERBYTES
_FINAL = sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL
_MESSAGE = sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE
#: Crockford's base32: 32 symbols, none easy to take for another.
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
KEY_BITS = 100
KEY_CHARS = KEY_BITS // 5
_READ_AS = {"O": "0", "I": "1", "L": "1"}


class SealError(ValueError):
    """A key that is not one, or a sealed file that does not open; the message is one line."""


def new_key() -> str:
    """A fresh key: 20 characters of :data:`ALPHABET` (100 bits from ``secrets``)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(KEY_CHARS))


def shown(key: str) -> list[str]:
    """The key as the glass shows it: two lines, groups of four (``KQ7M 3XPA 9TRE``,
    ``WB2N HF4D``)."""
    groups = [key[i : i + 4] for i in range(0, len(key), 4)]
    return [" ".join(groups[:3]), " ".join(groups[3:])]


def read_key(text: str) -> str:
    """A key as a person typed it (any case, spaces and dashes anywhere, O for 0, I or L
    for 1) in its own form; SealError when it is not 20 of the alphabet's characters."""
    key = "".join(_READ_AS.get(c, c) for c in text.upper() if c not in " -\t\r\n")
    if len(key) != KEY_CHARS or any(c not in ALPHABET for c in key):
        raise SealError(f"a backup key is {KEY_CHARS} letters and digits, as the hub showed it")
    return key


def _derive(key: str, salt: bytes) -> tuple[bytes, bytes]:
    """The stream's key and the key's check, for this file's salt."""
    raw = read_key(key).encode()

    def blake(person: bytes, size: int) -> bytes:
        return nacl.hash.blake2b(
            raw, digest_size=size, salt=salt, person=person, encoder=nacl.encoding.RawEncoder
        )

    return blake(b"coffre-backup", 32), blake(b"coffre-check", CHECK)


def is_sealed(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a sealed one."""
    return head.startswith(MAGIC)


class Sealer:
    """A file object that seals what is written into ``out``; :meth:`close` writes the
    final chunk (and does not close ``out``)."""

    def __init__(self, out: BinaryIO, key: str) -> None:
        salt = secrets.token_bytes(SALT)
        stream_key, check = _derive(key, salt)
        self._ad = MAGIC + salt
        self._state = sodium.crypto_secretstream_xchacha20poly1305_state()
        header = sodium.crypto_secretstream_xchacha20poly1305_init_push(self._state, stream_key)
        self._out = out
        self._out.write(MAGIC + salt + check + header)
        self._buffer = bytearray()
        self.closed = False

    def write(self, data: bytes) -> int:
        self._buffer += data
        while len(self._buffer) > CHUNK:  # the last chunk is pushed by close(), as final
            self._push(bytes(self._buffer[:CHUNK]), _MESSAGE)
            del self._buffer[:CHUNK]
        return len(data)

    def _push(self, chunk: bytes, tag: int) -> None:
        self._out.write(
            sodium.crypto_secretstream_xchacha20poly1305_push(self._state, chunk, self._ad, tag)
        )

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self._push(bytes(self._buffer), _FINAL)
            self._buffer.clear()
            self.closed = True


class Opened:
    """A file object reading what a sealed ``raw`` holds, each chunk checked before it is
    handed on; SealError at a wrong key, a chunk changed or missing, or bytes past the end."""

    mode = "rb"

    def __init__(self, raw: BinaryIO, key: str) -> None:
        head = raw.read(len(MAGIC) + SALT + CHECK + _HEADER)
        if not is_sealed(head):
            raise SealError("not a sealed coffre backup")
        if len(head) < len(MAGIC) + SALT + CHECK + _HEADER:
            raise SealError("it is cut short")
        salt = head[len(MAGIC) : len(MAGIC) + SALT]
        check = head[len(MAGIC) + SALT : len(MAGIC) + SALT + CHECK]
        stream_key, expected = _derive(key, salt)
        if not secrets.compare_digest(check, expected):
            raise SealError("this key does not open it (look again at the key the hub showed)")
        self._ad = MAGIC + salt
        self._state = sodium.crypto_secretstream_xchacha20poly1305_state()
        sodium.crypto_secretstream_xchacha20poly1305_init_pull(
            self._state, head[-_HEADER:], stream_key
        )
        self._raw = raw
        self._buffer = b""
        self._done = False

    def _pull(self) -> None:
        sealed = self._raw.read(CHUNK + _ABYTES)
        if len(sealed) < _ABYTES:
            raise SealError("it is cut short")
        try:
            chunk, tag = sodium.crypto_secretstream_xchacha20poly1305_pull(
                self._state, sealed, self._ad
            )
        except (nacl.exceptions.CryptoError, ValueError):
            raise SealError("it was changed since it was sealed (or cut short)") from None
        if tag == _FINAL:
            if self._raw.read(1):
                raise SealError("data follows its end")
            self._done = True
        elif len(sealed) < CHUNK + _ABYTES:
            raise SealError("it is cut short")
        self._buffer += chunk

    def read(self, size: int = -1) -> bytes:
        while not self._done and (size < 0 or len(self._buffer) < size):
            self._pull()
        if size < 0:
            size = len(self._buffer)
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

    def readall(self) -> bytes:
        return self.read()
