"""Pairing a station with its table: what station and hub both speak (see docs/pairing.md).

A station with no broker credentials asks the hub to join, over the table's broker, as
the table's ``enrol-<table>`` user, whose password is public (:data:`ENROL_PASSWORD`):
the ACL lets it write only ``enrol/<station>/request`` and read only
``enrol/<station>/reply``. Everyone on the Wi-Fi can be that user, so nothing secret
travels in clear and nothing happens without the host:

1. station -> hub ``hello``: a fresh X25519 public key and a commitment to a nonce
   (``sha256(pub || nonce_s)``);
2. hub -> station ``challenge``: the hub's nonce and the table's CA certificate (public);
3. station -> hub ``reveal``: the station's nonce, checked against its commitment;
4. both sides show :func:`pair_code` of (public key, CA, both nonces): four digits the
   host compares (Bluetooth numeric comparison: the commitment keeps an attacker from
   choosing his key or nonce after seeing the other side's, so a forged pairing matches
   by chance only, 1 in 10,000 per attempt, and every attempt shows on the hub);
5. the host confirms: hub -> station ``granted`` with a box sealed to the station's key
   (its user, a new password, the CA); or ``refused`` with one line (refused, expired).

Crypto, stdlib only (a station installs no crypto package; it runs on 32-bit Pi OS
too): X25519 (RFC 7748, Montgomery ladder) for an ephemeral-static key agreement,
HMAC-SHA256 to derive keys, a keystream (HMAC-SHA256 in counter mode) and an
encrypt-then-MAC tag. Every key is used once (both sides' are fresh per pairing), so the
ladder's timing is not a secret that repeats; the hub's tests check it against the
``cryptography`` package's X25519.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Any, Literal, TypeVar

import msgspec

from firmware.link import protocol as proto

#: The enrol user's password: public on purpose (the ACL, not the password, is the wall).
ENROL_PASSWORD = "coffre-enrol"
#: How long a pairing may wait for the host, from the station's hello (seconds).
PAIR_SECONDS = 120.0
CODE_DIGITS = 4

_P = 2**255 - 19
_A24 = 121665
_BASE = (9).to_bytes(32, "little")


def enrol_user(table: str) -> str:
    """The broker user every station of ``table`` pairs as."""
    return f"enrol-{table}"


def enrol_topic(table: str, station: str, leaf: Literal["request", "reply"]) -> str:
    return f"{proto.ROOT}/{table}/enrol/{station}/{leaf}"


def all_enrol_requests(table: str) -> str:
    return f"{proto.ROOT}/{table}/enrol/+/request"


def parse_enrol_topic(topic: str) -> tuple[str, str, str] | None:
    """``(table, station, leaf)`` of an enrol topic, or None."""
    parts = topic.split("/")
    if len(parts) != 5 or parts[0] != proto.ROOT or parts[2] != "enrol":
        return None
    return parts[1], parts[3], parts[4]


# --- X25519 (RFC 7748) --------------------------------------------------------------


def x25519(scalar: bytes, point: bytes) -> bytes:
    """The X25519 function: ``scalar`` times the u-coordinate ``point``."""
    k = bytearray(scalar)
    k[0] &= 248
    k[31] &= 127
    k[31] |= 64
    n = int.from_bytes(k, "little")
    u = bytearray(point)
    u[31] &= 127
    x1 = int.from_bytes(u, "little") % _P
    x2, z2, x3, z3, swap = 1, 0, x1, 1, 0
    for t in reversed(range(255)):
        bit = (n >> t) & 1
        if swap ^ bit:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b, c, d = x2 + z2, x2 - z2, x3 + z3, x3 - z3
        aa, bb = a * a % _P, b * b % _P
        e = aa - bb
        da, cb = d * a % _P, c * b % _P
        x3, z3 = (da + cb) ** 2 % _P, x1 * (da - cb) ** 2 % _P
        x2, z2 = aa * bb % _P, e * (aa + _A24 * e) % _P
    if swap:
        x2, z2 = x3, z3
    return (x2 * pow(z2, _P - 2, _P) % _P).to_bytes(32, "little")


def keypair() -> tuple[bytes, bytes]:
    """A fresh ``(private, public)`` X25519 key pair."""
    private = os.urandom(32)
    return private, x25519(private, _BASE)


# --- the sealed box -----------------------------------------------------------------


class BoxError(ValueError):
    """A box that is not for this key, or was changed on the way."""


def _keys(shared: bytes, epk: bytes, rpk: bytes) -> tuple[bytes, bytes]:
    if not any(shared):
        raise BoxError("bad public key")
    prk = hmac.digest(b"coffre-pair-v1", shared + epk + rpk, "sha256")
    return hmac.digest(prk, b"enc", "sha256"), hmac.digest(prk, b"mac", "sha256")


def _stream(key: bytes, data: bytes) -> bytes:
    blocks = (len(data) + 31) // 32
    pad = b"".join(hmac.digest(key, i.to_bytes(8, "big"), "sha256") for i in range(blocks))
    return bytes(a ^ b for a, b in zip(data, pad, strict=False))


def seal(recipient: bytes, plaintext: bytes) -> bytes:
    """``plaintext`` readable only with the private key of ``recipient`` (anonymous sender:
    who sent it is vouched for by the pairing code, not by the box)."""
    esk, epk = keypair()
    enc, mac = _keys(x25519(esk, recipient), epk, recipient)
    body = _stream(enc, plaintext)
    return epk + body + hmac.digest(mac, epk + body, "sha256")


def unseal(private: bytes, box: bytes) -> bytes:
    """What :func:`seal` sealed for this key; :class:`BoxError` for anything else."""
    if len(box) < 64:
        raise BoxError("box too short")
    epk, body, tag = box[:32], box[32:-32], box[-32:]
    enc, mac = _keys(x25519(private, epk), epk, x25519(private, _BASE))
    if not hmac.compare_digest(tag, hmac.digest(mac, epk + body, "sha256")):
        raise BoxError("box changed or not ours")
    return _stream(enc, body)


# --- the code both screens show ------------------------------------------------------


def commitment(public: bytes, nonce: bytes) -> str:
    return hashlib.sha256(b"coffre-commit" + public + nonce).hexdigest()


def pair_code(public: bytes, ca_pem: str, station_nonce: bytes, hub_nonce: bytes) -> str:
    """Four digits that match on both screens only if both saw the same key, CA and nonces."""
    ca = hashlib.sha256(ca_pem.strip().encode()).digest()
    digest = hashlib.sha256(b"coffre-pair-code" + public + ca + station_nonce + hub_nonce)
    value = int.from_bytes(digest.digest()[:8], "big") % 10**CODE_DIGITS
    return f"{value:0{CODE_DIGITS}d}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str, size: int | None = None) -> bytes:
    try:
        data = base64.b64decode(text, validate=True)
    except (ValueError, TypeError):
        raise proto.ProtocolError("not base64") from None
    if size is not None and len(data) != size:
        raise proto.ProtocolError(f"want {size} bytes")
    return data


# --- messages -------------------------------------------------------------------------

Session = proto.ShortText


class Request(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Station -> hub: ``hello`` (pub, commit) then ``reveal`` (nonce)."""

    step: Literal["hello", "reveal"]
    session: Session
    pub: str = ""
    commit: str = ""
    nonce: str = ""


class Reply(msgspec.Struct, frozen=True, omit_defaults=True):
    """Hub -> station: ``challenge`` (nonce, ca, expires_in), ``granted`` (box) or
    ``refused`` (reason, one line)."""

    step: Literal["challenge", "granted", "refused"]
    session: Session
    nonce: str = ""
    ca: str = ""
    expires_in: float = 0.0
    box: str = ""
    reason: str = ""


class Grant(msgspec.Struct, frozen=True):
    """What the sealed box holds."""

    username: str
    password: str
    ca: str


#: Largest pairing message (a reply carries the CA certificate: ~700 bytes).
MAX_MESSAGE = 8192
_T = TypeVar("_T")


def _decode(payload: bytes, kind: type[_T]) -> _T:
    if len(payload) > MAX_MESSAGE:
        raise proto.ProtocolError("Message too big")
    try:
        return msgspec.json.decode(payload, type=kind)
    except msgspec.MsgspecError as exc:
        raise proto.ProtocolError(f"Bad pairing message: {exc}"[:64]) from None


def decode_request(payload: bytes) -> Request:
    return _decode(payload, Request)


def decode_reply(payload: bytes) -> Reply:
    return _decode(payload, Reply)


def encode(obj: Any) -> bytes:
    return proto.encode(obj)
