"""The MQTT protocol: topics, payload validation, size limits."""

from __future__ import annotations

import pytest

from firmware.link import protocol as proto


def test_topics_of_a_table() -> None:
    """Topic builders follow coffre/<table>/..."""
    t = proto.Topics("main")
    assert t.public == "coffre/main/public"
    assert t.station("p1", "input") == "coffre/main/station/p1/input"
    assert t.parse_station_topic("coffre/main/station/p1/input") == ("p1", "input")
    assert t.parse_station_topic("coffre/other/station/p1/input") is None
    assert t.parse_station_topic("coffre/main/station/P!/input") is None


@pytest.mark.parametrize("name", ["", "UPPER", "a" * 33, "sp ace", "x/y", "+", "#"])
def test_bad_names_are_refused(name: str) -> None:
    """Table and station names are [a-z0-9-]{1,32}: no wildcards, no slashes."""
    with pytest.raises(ValueError):
        proto.Topics(name)


def test_a_tag_input_decodes() -> None:
    """A well-formed tag input parses, with its boot id."""
    inp = proto.decode_input(b'{"id":"ab12:7","kind":"tag","uid":"04A1B2C3D4E5F6"}')
    assert inp.kind == "tag" and inp.uid == "04A1B2C3D4E5F6" and inp.boot == "ab12"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"not json", "Bad message: not JSON"),
        (b'{"id":"a:1","kind":"laser"}', "Bad message"),
        (b'{"id":"a:1","kind":"tag","uid":"xyz"}', "Bad message"),
        (b'{"id":"a:1","kind":"knob","step":99}', "Bad message"),
        (b'{"id":"no-seq","kind":"press"}', "Bad message"),
        (b'{"id":"a:1","kind":"press","extra":1}', "Bad message"),
    ],
)
def test_bad_inputs_raise_readable_errors(payload: bytes, message: str) -> None:
    """Malformed or unexpected payloads raise ProtocolError with a short message."""
    with pytest.raises(proto.ProtocolError) as info:
        proto.decode_input(payload)
    assert str(info.value).startswith(message)
    assert len(str(info.value)) <= 63


def test_oversized_payload_is_refused_unread() -> None:
    """A payload over MAX_INPUT_BYTES is refused before parsing, and no id is salvaged."""
    big = b'{"id":"a:1","kind":"press","pad":"' + b"x" * proto.MAX_INPUT_BYTES + b'"}'
    with pytest.raises(proto.ProtocolError, match="Message too big"):
        proto.decode_input(big)
    assert proto.salvage_id(big) is None


def test_salvage_id_addresses_the_ack() -> None:
    """A rejected input's id is recovered when the JSON parses."""
    assert proto.salvage_id(b'{"id":"a:1","kind":"nope"}') == "a:1"
    assert proto.salvage_id(b"[1,2]") is None
    assert proto.salvage_id(b"{") is None


def test_host_command_validation() -> None:
    """Host commands are a closed set, and each carries the id it is answered under."""
    assert proto.decode_host_command(b'{"cmd":"next","id":"h:1"}').cmd == "next"
    with pytest.raises(proto.ProtocolError):
        proto.decode_host_command(b'{"cmd":"reboot","id":"h:1"}')
    with pytest.raises(proto.ProtocolError, match=r"^Host command needs an id$"):
        proto.decode_host_command(b'{"cmd":"next"}')


def test_encoding_is_deterministic() -> None:
    """The same screen always encodes to the same bytes (the hub compares them)."""
    a = proto.Screen(rev=1, title="t", lines=("a", "b"), secret=proto.Secret(big="5"))
    assert proto.encode(a) == proto.encode(
        proto.Screen(rev=1, title="t", lines=("a", "b"), secret=proto.Secret(big="5"))
    )
