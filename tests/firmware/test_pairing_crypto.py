"""The pairing's crypto (stdlib only, on the station): X25519 agrees with the
``cryptography`` package, a sealed box opens only with its key and unchanged, and the
code changes with any of its inputs."""

from __future__ import annotations

import os

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from firmware.link import pairing as pair


def test_x25519_matches_the_cryptography_package() -> None:
    """Public keys and shared secrets are the same as cryptography's X25519."""
    for _ in range(5):
        a, b = os.urandom(32), os.urandom(32)
        ref_a = X25519PrivateKey.from_private_bytes(a)
        pub_b = X25519PrivateKey.from_private_bytes(b).public_key()
        raw_b = pub_b.public_bytes(Encoding.Raw, PublicFormat.Raw)
        assert pair.x25519(b, (9).to_bytes(32, "little")) == raw_b
        assert pair.x25519(a, raw_b) == ref_a.exchange(X25519PublicKey.from_public_bytes(raw_b))


def test_rfc7748_vector() -> None:
    """RFC 7748 section 5.2, first test vector."""
    k = bytes.fromhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4")
    u = bytes.fromhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c")
    want = "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"
    assert pair.x25519(k, u).hex() == want


def test_a_sealed_box_opens_only_with_its_key_and_unchanged() -> None:
    """The right key opens it; another key, a flipped bit or a cut box is refused."""
    private, public = pair.keypair()
    other, _ = pair.keypair()
    box = pair.seal(public, b"the station's password")
    assert pair.unseal(private, box) == b"the station's password"
    assert b"password" not in box
    with pytest.raises(pair.BoxError):
        pair.unseal(other, box)
    changed = bytearray(box)
    changed[40] ^= 1
    with pytest.raises(pair.BoxError):
        pair.unseal(private, bytes(changed))
    with pytest.raises(pair.BoxError):
        pair.unseal(private, box[:50])


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
