"""The pairing's crypto is PyNaCl's (libsodium), not ours: the key pair and the box are
libsodium's, a sealed box opens only with its key and unchanged, a key no box can be
sealed to is refused, and the code changes with any of its inputs."""

from __future__ import annotations

import os

import pytest
from nacl.public import PrivateKey, PublicKey, SealedBox

from firmware.link import pairing as pair


def test_the_key_pair_and_the_box_are_libsodiums() -> None:
    """The public key is libsodium's for the private one, and the box is a plain
    ``crypto_box_seal``: PyNaCl's own SealedBox opens ours and ours opens PyNaCl's."""
    private, public = pair.keypair()
    assert bytes(PrivateKey(private).public_key) == public
    assert SealedBox(PrivateKey(private)).decrypt(pair.seal(public, b"pw")) == b"pw"
    theirs = SealedBox(PublicKey(public)).encrypt(b"ca and password")
    assert pair.unseal(private, theirs) == b"ca and password"


def test_a_sealed_box_opens_only_with_its_key_and_unchanged() -> None:
    """The right key opens it; another key, a flipped bit or a cut box is refused."""
    private, public = pair.keypair()
    other, _ = pair.keypair()
    box = pair.seal(public, b"the station's password")
    assert pair.unseal(private, box) == b"the station's password"
    assert b"password" not in box
    with pytest.raises(pair.BoxError):
        pair.unseal(other, box)
    for index in (0, 40, len(box) - 1):  # the ephemeral key, the MAC, the ciphertext
        changed = bytearray(box)
        changed[index] ^= 1
        with pytest.raises(pair.BoxError):
            pair.unseal(private, bytes(changed))
    with pytest.raises(pair.BoxError):
        pair.unseal(private, box[:50])
    with pytest.raises(pair.BoxError):
        pair.unseal(private, b"")


def test_a_key_no_box_can_be_sealed_to_is_refused() -> None:
    """A low-order point (all zeros) or a key of the wrong size is refused, never sealed to."""
    with pytest.raises(pair.BoxError):
        pair.seal(bytes(32), b"pw")
    with pytest.raises(pair.BoxError):
        pair.seal(b"short", b"pw")


def test_the_code_depends_on_the_key_the_ca_and_both_nonces() -> None:
    """Four digits; another key, CA or nonce gives (almost always) another code."""
    _, pub = pair.keypair()
    ns, nh = os.urandom(16), os.urandom(16)
    code = pair.pair_code(pub, "CA", ns, nh)
    assert len(code) == 4 and code.isdigit()
    assert pair.pair_code(pub, "CA\n", ns, nh) == code  # the same PEM, either ending
    others = [
        pair.pair_code(pair.keypair()[1], "CA", ns, nh),
        pair.pair_code(pub, "another CA", ns, nh),
        pair.pair_code(pub, "CA", os.urandom(16), nh),
        pair.pair_code(pub, "CA", ns, os.urandom(16)),
    ]
    assert sum(o == code for o in others) <= 1
