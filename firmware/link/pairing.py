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
   by chance only, 1 in 10,000 per challenge; the hub keeps challenges scarce, see
   :mod:`firmware.hub.pairing`);
5. the host confirms: hub -> station ``granted`` with a box sealed to the station's key
   (its user, a new password, the CA); or ``refused`` with one line (refused, expired).

Crypto from a library, not written here: PyNaCl (libsodium) on both sides, an X25519
key pair fresh for each pairing on the station and libsodium's sealed box
(``crypto_box_seal``) for the grant. The hello names the box (:data:`SUITE`): a hub that
does not know it refuses with one line. PyNaCl is in the station and hub extras (wheels
for x86-64 and aarch64 on PyPI; 32-bit Pi OS takes it and cffi from piwheels).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Literal, TypeVar

import msgspec

from firmware.link import protocol as proto

#: The enrol user's password: public on purpose (the ACL, not the password, is the wall).
ENROL_PASSWORD = "coffre-enrol"
#: How long a pairing may wait for the host, from the station's hello (seconds).
PAIR_SECONDS = 120.0
CODE_DIGITS = 4


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


# --- keys and the sealed box (PyNaCl: libsodium) ------------------------------------

#: The box both sides use, named in the station's hello: a hub that does not know it
#: refuses with one line instead of sealing something the station cannot open.
SUITE = "nacl-sealedbox"


class BoxError(ValueError):
    """A box that is not for this key, or was changed on the way (or a bad public key)."""


def keypair() -> tuple[bytes, bytes]:
    """A fresh ``(private, public)`` X25519 key pair (libsodium's)."""
    from nacl.public import PrivateKey

    private = PrivateKey.generate()
    return bytes(private), bytes(private.public_key)


def seal(recipient: bytes, plaintext: bytes) -> bytes:
    """``plaintext`` readable only with the private key of ``recipient`` (libsodium's
    ``crypto_box_seal``: an ephemeral X25519 key, XSalsa20-Poly1305; anonymous sender: who
    sent it is vouched for by the pairing code, not by the box)."""
    from nacl.exceptions import CryptoError
    from nacl.public import PublicKey, SealedBox

    try:
        return bytes(SealedBox(PublicKey(recipient)).encrypt(plaintext))
    except (CryptoError, TypeError, ValueError) as exc:  # a low-order or malformed key
        raise BoxError("bad public key") from exc


def unseal(private: bytes, box: bytes) -> bytes:
    """What :func:`seal` sealed for this key; :class:`BoxError` for anything else."""
    from nacl.exceptions import CryptoError
    from nacl.public import PrivateKey, SealedBox

    try:
        return bytes(SealedBox(PrivateKey(private)).decrypt(box))
    except (CryptoError, TypeError, ValueError) as exc:
        raise BoxError("box changed or not ours") from exc


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
    """Station -> hub: ``hello`` (pub, commit, suite) then ``reveal`` (nonce).

    ``suite``: the box the station can open (:data:`SUITE`); "" is the first version's
    hand-written box, which no hub seals any more."""

    step: Literal["hello", "reveal"]
    session: Session
    pub: str = ""
    commit: str = ""
    nonce: str = ""
    suite: str = ""


def hello(session: str, public: bytes, nonce: bytes) -> Request:
    """A station's ``hello``: its key, its commitment to ``nonce``, the box it opens."""
    return Request("hello", session, pub=b64(public), commit=commitment(public, nonce), suite=SUITE)


def reveal(session: str, nonce: bytes) -> Request:
    """A station's ``reveal``: the nonce its hello committed to."""
    return Request("reveal", session, nonce=b64(nonce))


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
