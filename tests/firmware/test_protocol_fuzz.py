"""Invalid UTF-8 in any string of any payload the hub reads is a ProtocolError, never a crash."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.link import protocol as proto

#: Byte sequences that are not UTF-8: stray continuation bytes, truncated sequences,
#: overlong forms, surrogates, and bytes that never occur in UTF-8.
BROKEN = st.sampled_from(
    [b"\xff", b"\xfe", b"\x80", b"\xc3", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8"]
)
CLEAN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789:-", max_size=12)

#: Well-formed payloads of every kind the hub decodes; each string field gets broken.
INPUT = {"id": "ab12:7", "kind": "button", "uid": "04A1B2C3", "button": "peek"}
HOST = {"cmd": "start", "game": "incognito", "id": "host:3", "options": {"lang": "fr"}}
STATUS = {"state": "online", "fw": "1.0", "boot": "ab12", "tag": "04A1B2C3",
          "hw": {"reader": "mfrc522", "display": "ssd1306", "controls": "gpio"}}  # fmt: skip
DECODERS: list[tuple[str, dict[str, Any], Callable[[bytes], Any]]] = [
    ("input", INPUT, proto.decode_input),
    ("host", HOST, proto.decode_host_command),
    ("status", STATUS, proto.decode_status),
]


def string_paths(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where the strings of a payload are: every value, and every key of an object."""
    if isinstance(data, str):
        return [path]
    if isinstance(data, dict):
        found = [(*path, ("key", k)) for k in data]
        for k, v in data.items():
            found += string_paths(v, (*path, k))
        return found
    return []


def encode_with(data: Any, path: tuple[Any, ...], raw: bytes) -> bytes:
    """The payload's JSON with the string at ``path`` replaced by raw bytes (``raw``)."""
    marker = "\u2603MARK\u2603"
    data = _replace(data, path, marker)
    return proto.encode(data).replace(marker.encode(), raw)


def _replace(data: Any, path: tuple[Any, ...], value: str) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, tuple):  # ("key", k): replace the key itself
        return {(value if k == head[1] else k): v for k, v in data.items()}
    return {k: (_replace(v, rest, value) if k == head else v) for k, v in data.items()}


CASES = [(name, example, decode, path) for name, example, decode in DECODERS
         for path in string_paths(example)]  # fmt: skip


@pytest.mark.parametrize(("name", "example", "decode", "path"), CASES,
                         ids=[f"{c[0]}:{'/'.join(map(str, c[3]))}" for c in CASES])  # fmt: skip
@settings(max_examples=40, deadline=None)
@given(before=CLEAN, broken=BROKEN, after=CLEAN)
def test_invalid_utf8_in_every_string_is_a_protocol_error(
    name: str,
    example: dict[str, Any],
    decode: Callable[[bytes], Any],
    path: tuple[Any, ...],
    before: str,
    broken: bytes,
    after: str,
) -> None:
    """Broken UTF-8 in any field raises ProtocolError; the id is salvaged unless it is broken."""
    payload = encode_with(example, path, before.encode() + broken + after.encode())
    with pytest.raises(proto.ProtocolError) as caught:
        decode(payload)
    assert str(caught.value).startswith("Bad message")
    if "id" in example and path not in {("id",), (("key", "id"),)}:
        assert caught.value.id == example["id"]
    else:
        assert caught.value.id is None


@given(st.binary(max_size=80))
@settings(max_examples=300, deadline=None)
def test_any_bytes_decode_or_raise_a_protocol_error(payload: bytes) -> None:
    """Whatever bytes arrive, the decoders either parse them or raise ProtocolError."""
    for _, _, decode in DECODERS:
        try:
            decode(payload)
        except proto.ProtocolError as exc:
            assert exc.id is None or isinstance(exc.id, str)
