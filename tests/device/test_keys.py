"""Key sets: UID normalisation, lookups, the default virtual set and validation errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardware.keys import (
    COLOURS,
    Key,
    KeyLearner,
    KeySet,
    KeySetError,
    dump_keyset,
    load_keyset,
    normalise_uid,
    standard_keys,
)
from tests.support.keysets import default_toml

HEADER = 'format = 1\nname = "t"\n'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "keys.toml"
    path.write_text(HEADER + text, encoding="utf-8")
    return path


def _entry(uid: str, kind: str = "vote", colour: str | None = "red", number: int = 1) -> str:
    lines = ["[[key]]", f'uid = "{uid}"', f'kind = "{kind}"']
    if colour is not None:
        lines.append(f'colour = "{colour}"')
    lines.append(f"number = {number}")
    return "\n".join(lines) + "\n"


def test_colours_are_the_eight_secret_identity_colours() -> None:
    """COLOURS holds eight distinct English colour ids, those the rulebook names included."""
    assert len(COLOURS) == 8 == len(set(COLOURS))
    assert {"red", "yellow", "green", "blue", "purple", "white"} <= set(COLOURS)


def test_normalise_uid_strips_separators_and_upcases() -> None:
    """ ":" "-" " " are stripped and hex is upper-cased."""
    assert normalise_uid("04:a1-0b 3c:5d:6e:80") == "04A10B3C5D6E80"
    assert normalise_uid(" deadbeef ") == "DEADBEEF"
    assert len(normalise_uid("00" * 10)) == 20


@pytest.mark.parametrize("bad", ["", "xyz", "DEADBEE", "010203", "0102030405", "G1020304"])
def test_normalise_uid_refuses_bad_uids(bad: str) -> None:
    """Non-hex or a length other than 4, 7 or 10 bytes is a ValueError."""
    with pytest.raises(ValueError):
        normalise_uid(bad)


def test_key_labels() -> None:
    """Labels read "red 3", "mystery 5", "card blue 2"."""
    assert Key("vote", "red", 3).label == "red 3"
    assert Key("mystery", None, 5).label == "mystery 5"
    assert Key("card", "blue", 2).label == "card blue 2"
    assert str(Key("card", None, 4)) == "card 4"


def test_default_set_has_every_vote_and_mystery_key() -> None:
    """The default set: 8 colours x votes 1..8 and mystery keys 1..8, 72 in all."""
    keys = load_keyset()
    assert len(keys) == 72
    for colour in COLOURS:
        for n in range(1, 9):
            assert keys[keys.uid_for("vote", colour, n)] == Key("vote", colour, n)
    for n in range(1, 9):
        assert keys.lookup(keys.uid_for("mystery", None, n)) == Key("mystery", None, n)


def test_default_set_mixes_7_and_4_byte_uids() -> None:
    """About half the UIDs are NTAG-style 7-byte (04 first), the rest valid 4-byte ones."""
    uids = list(load_keyset())
    long = [u for u in uids if len(u) == 14]
    short = [u for u in uids if len(u) == 8]
    assert len(long) == len(short) == 36
    assert all(u.startswith("04") and u[6:8] != "88" for u in long)
    assert all(u[:2] not in ("88", "08") for u in short)
    for colour in COLOURS:  # each colour has both sizes
        sizes = {len(load_keyset().uid_for("vote", colour, n)) for n in range(1, 9)}
        assert sizes == {8, 14}


def test_default_set_file_is_the_deterministic_one() -> None:
    """The packaged default.toml is exactly what the documented generator makes."""
    path = Path(__file__).parents[2] / "hardware" / "keysets" / "default.toml"
    assert path.read_text(encoding="utf-8") == default_toml()


def test_lookup_normalises_and_misses_quietly() -> None:
    """lookup() accepts any case and separators; unknown or malformed UIDs give None."""
    keys = load_keyset()
    uid = keys.uid_for("vote", "blue", 4)
    spaced = ":".join(uid[i : i + 2] for i in range(0, len(uid), 2)).lower()
    assert keys.lookup(spaced) == Key("vote", "blue", 4)
    assert keys.lookup("01020304") is None
    assert keys.lookup("not a uid") is None
    with pytest.raises(KeyError):
        keys["01020304"]


def test_uid_for_missing_key_is_key_error() -> None:
    """Asking for a key the set lacks is a KeyError."""
    keys = load_keyset()
    with pytest.raises(KeyError):
        keys.uid_for("vote", "red", 9)
    with pytest.raises(KeyError):
        keys.uid_for("card", "red", 1)


def test_iteration_yields_uids_in_file_order(tmp_path: Path) -> None:
    """Iterating a set yields its normalised UIDs in file order; items() pairs keys."""
    path = _write(tmp_path, _entry("04:aa:bb:cc:dd:ee:ff") + _entry("01020304", "mystery", None, 2))
    keys = load_keyset(path)
    assert list(keys) == ["04AABBCCDDEEFF", "01020304"]
    assert dict(keys.items())["01020304"] == Key("mystery", None, 2)
    assert keys.name == "t" and keys.colours == COLOURS


def test_duplicate_uid_is_refused(tmp_path: Path) -> None:
    """The same UID twice (even spelt differently) names both entries."""
    path = _write(tmp_path, _entry("DEADBEEF") + _entry("de:ad:be:ef", number=2))
    with pytest.raises(KeySetError, match=r"keys\.toml: key #2: UID DEADBEEF .*key #1 \(red 1\)"):
        load_keyset(path)


def test_duplicate_key_is_refused(tmp_path: Path) -> None:
    """Two UIDs for the same key would make uid_for ambiguous: refused."""
    path = _write(tmp_path, _entry("DEADBEEF") + _entry("01020304"))
    with pytest.raises(KeySetError, match=r"red 1 has two UIDs: DEADBEEF and 01020304"):
        load_keyset(path)


def test_bad_hex_and_bad_length_are_refused(tmp_path: Path) -> None:
    """A UID with non-hex digits or 5 bytes is refused, naming the entry."""
    with pytest.raises(KeySetError, match=r"key #1 \(DEADBEEZ\): .*not hex"):
        load_keyset(_write(tmp_path, _entry("DEADBEEZ")))
    with pytest.raises(KeySetError, match=r"key #1 \(0102030405\): .*5 bytes"):
        load_keyset(_write(tmp_path, _entry("0102030405")))


def test_unknown_kind_is_refused(tmp_path: Path) -> None:
    """A kind other than vote, mystery or card is refused."""
    with pytest.raises(KeySetError, match=r"kind 'coin' is not one of"):
        load_keyset(_write(tmp_path, _entry("DEADBEEF", kind="coin")))


def test_colour_outside_the_set_is_refused(tmp_path: Path) -> None:
    """A colour missing from the set's colours list is refused."""
    with pytest.raises(KeySetError, match=r"colour 'pink' is not in"):
        load_keyset(_write(tmp_path, _entry("DEADBEEF", colour="pink")))
    custom = 'colours = ["pink", "lilac"]\n' + _entry("DEADBEEF", kind="card", colour="pink")
    assert load_keyset(_write(tmp_path, custom)).lookup("DEADBEEF") == Key("card", "pink", 1)


def test_incomplete_keys_are_refused(tmp_path: Path) -> None:
    """A vote key without colour, or a mystery key with one, is refused."""
    with pytest.raises(KeySetError, match="vote key needs a colour"):
        load_keyset(_write(tmp_path, _entry("DEADBEEF", colour=None)))
    with pytest.raises(KeySetError, match="mystery key has a number and no colour"):
        load_keyset(_write(tmp_path, _entry("DEADBEEF", kind="mystery")))


def test_malformed_entries_are_refused(tmp_path: Path) -> None:
    """Missing uid, wrong types, unknown fields and unknown top-level keys are refused."""
    with pytest.raises(KeySetError, match=r"key #1\.uid: missing"):
        load_keyset(_write(tmp_path, '[[key]]\nkind = "vote"\n'))
    with pytest.raises(KeySetError, match=r"key #1\.number: not an integer"):
        load_keyset(_write(tmp_path, '[[key]]\nuid = "DEADBEEF"\nkind = "mystery"\nnumber = "5"\n'))
    with pytest.raises(KeySetError, match=r"unknown key 'color'"):
        load_keyset(_write(tmp_path, '[[key]]\nuid = "DEADBEEF"\nkind = "vote"\ncolor = "red"\n'))
    with pytest.raises(KeySetError, match=r"unknown top-level key 'keys'"):
        load_keyset(_write(tmp_path, "[[keys]]\n"))


def test_unreadable_or_invalid_file(tmp_path: Path) -> None:
    """A missing file or broken TOML is a KeySetError naming the file."""
    with pytest.raises(KeySetError, match=r"nope\.toml: cannot read"):
        load_keyset(tmp_path / "nope.toml")
    with pytest.raises(KeySetError, match="not valid TOML"):
        load_keyset(_write(tmp_path, "[[key]\n"))


def test_keyset_built_in_code_validates_too() -> None:
    """KeySet() from a dict normalises UIDs and refuses a bad key."""
    keys = KeySet({"de:ad:be:ef": Key("mystery", None, 1)}, name="x")
    assert list(keys) == ["DEADBEEF"]
    with pytest.raises(KeySetError):
        KeySet({"DEADBEEF": Key("vote", "red", None)})


def test_dump_keyset_round_trips(tmp_path: Path) -> None:
    """dump_keyset writes a file load_keyset reads back to an equal set."""
    keys = load_keyset()
    path = tmp_path / "copy.toml"
    path.write_text(dump_keyset(keys), encoding="utf-8")
    again = load_keyset(path)
    assert dict(again.items()) == dict(keys.items())
    assert again.name == keys.name and again.colours == keys.colours


def test_standard_keys_are_a_full_box() -> None:
    """standard_keys() lists 64 vote keys then 8 mystery keys, in the default set's order."""
    wanted = standard_keys()
    assert len(wanted) == 72 and wanted[0] == Key("vote", "red", 1)
    assert wanted == list(load_keyset().values())


def test_learner_walks_the_wanted_keys() -> None:
    """Each tapped tag becomes the key asked for; the result is a valid KeySet."""
    learner = KeyLearner(standard_keys(votes=2, mysteries=1), name="mine")
    assert learner.prompt == "Tap red 1"
    assert learner.offer("04:11:22:33:44:55:66") == (True, "red 1: 04112233445566")
    assert learner.prompt == "Tap red 2"
    assert learner.offer("01020304")[0]
    while learner.next is not None:
        assert learner.offer(f"{len(learner.learned) + 1:08X}")[0]
    assert learner.prompt == "All keys learnt"
    keys = learner.keyset()
    assert len(keys) == 17 and keys.name == "mine"
    assert keys.uid_for("vote", "red", 1) == "04112233445566"


def test_learner_refuses_a_tag_already_learnt() -> None:
    """Tapping a tag twice is refused with what it already is; bad UIDs too."""
    learner = KeyLearner(standard_keys(votes=2, mysteries=0))
    learner.offer("01020304")
    assert learner.offer("01:02:03:04") == (False, "That tag is red 1")
    assert not learner.offer("0102")[0]
    assert learner.next == Key("vote", "red", 2)


def test_learner_skip_and_undo() -> None:
    """skip() leaves a key out; undo() asks for the previous key again."""
    learner = KeyLearner([Key("mystery", None, 1), Key("mystery", None, 2)])
    learner.offer("01020304")
    learner.undo()
    assert learner.next == Key("mystery", None, 1) and not learner.learned
    learner.skip()
    learner.offer("0A0B0C0D")
    assert dict(learner.keyset().items()) == {"0A0B0C0D": Key("mystery", None, 2)}
    assert learner.offer("0E0B0C0D") == (False, "All keys learnt")
