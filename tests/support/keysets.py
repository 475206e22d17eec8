"""How hardware/keysets/default.toml was made (a test checks the file still matches)."""

from __future__ import annotations

import hashlib

from hardware.keys import COLOURS


def default_entries() -> list[tuple[str, str, str | None, int]]:
    """(uid, kind, colour, number) of the default virtual key set, in file order."""
    labels: list[tuple[str, str | None, int]] = [
        ("vote", c, n) for c in COLOURS for n in range(1, 9)
    ] + [("mystery", None, n) for n in range(1, 9)]
    out = []
    for i, (kind, colour, number) in enumerate(labels):
        seed = f"coffre-default:{kind}:{colour}:{number}".encode()
        digest = bytearray(hashlib.sha256(seed).digest())
        if i % 2 == 0:  # NTAG-style 7-byte UID: NXP manufacturer byte, uid3 not a cascade tag
            uid = bytes([0x04]) + digest[:6]
            if uid[3] == 0x88:
                uid = uid[:3] + b"\x89" + uid[4:]
        else:  # 4-byte UID: not the cascade tag 0x88, not 0x08 (random-ID marker)
            uid = bytes(digest[:4])
            if uid[0] in (0x88, 0x08):
                uid = bytes([uid[0] ^ 0x40]) + uid[1:]
        out.append((uid.hex().upper(), kind, colour, number))
    return out


def default_toml() -> str:
    """The text of hardware/keysets/default.toml (its header still names the generator's
    old path, tests/device/keyset_gen.py: the packaged file must stay byte-identical)."""
    lines = [
        "# coffre default virtual key set: 64 vote keys (8 colours x 1-8) and 8 mystery keys.",
        "# Generated deterministically (tests/device/keyset_gen.py); half the UIDs are 7-byte",
        "# NTAG-style (first byte 04), half 4-byte, so both reader paths get exercised.",
        "# A real table learns its own tags: see hardware/README.md.",
        "format = 1",
        'name = "default"',
        "colours = [" + ", ".join(f'"{c}"' for c in COLOURS) + "]",
    ]
    for uid, kind, colour, number in default_entries():
        lines.append("")
        lines.append("[[key]]")
        lines.append(f'uid = "{uid}"')
        lines.append(f'kind = "{kind}"')
        if colour is not None:
            lines.append(f'colour = "{colour}"')
        lines.append(f"number = {number}")
    return "\n".join(lines) + "\n"
