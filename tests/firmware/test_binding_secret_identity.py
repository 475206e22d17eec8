"""The Secret Identity table binding, driven without MQTT."""

from __future__ import annotations

import random
from typing import Any

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.table import Seating, Table
from firmware.link.lang import _ as say
from firmware.link.lang import short_colour, speaking
from firmware.link.protocol import Input
from hardware.keys import COLOURS, load_keyset
from rules.core import IllegalAction
from tests.support.screens import new_table, random_move

KEYS = load_keyset()


def table(players: int = 3, **options: Any) -> Table:
    seating = Seating([f"p{i + 1}" for i in range(players)], list(COLOURS[:players]))
    return Table(
        "secret-identity", players, options, 1, seating, KEYS, binding_for("secret-identity")
    )


def send(t: Table, seat: int, **fields: Any) -> dict[str, Any]:
    """Translate, check and commit one input as the hub would."""
    body = t.binding.translate(t, seat, Input(id="b:1", **fields))
    t.commit(body, t.check(body))
    return body


def tag(kind: str, colour: str | None, number: int) -> str:
    return KEYS.uid_for(kind, colour, number)


def prepared(players: int = 3) -> Table:
    t = table(players)
    for seat in range(players):
        send(t, seat, kind="tag", uid=tag("mystery", None, seat + 1))
        send(t, seat, kind="press")
    assert t.view(None)["phase"] == "vote"
    return t


def test_mystery_key_on_own_station_locks_it() -> None:
    """A mystery key tapped on a station is that seat's mystery key."""
    t = table()
    body = send(t, 1, kind="tag", uid=tag("mystery", None, 6))
    assert body == {"rules": {"type": "mystery", "seat": 1, "number": 6}}
    assert t.view(1)["my_mystery"] == 6


def test_vote_key_colour_says_who_votes_station_says_whose_safe() -> None:
    """Yellow's key 4 tapped on red's station is yellow's vote on red's safe."""
    t = prepared()
    body = send(t, 0, kind="tag", uid=tag("vote", COLOURS[1], 4))
    assert body == {"rules": {"type": "vote", "seat": 1, "safe": 0, "number": 4}}


def test_knob_sets_picto_count_within_range_and_press_confirms() -> None:
    """Turning moves the count within 1..3; a press confirms that many pictos."""
    t = table()
    for step in (1, 1, 1, 1):
        send(t, 0, kind="knob", step=step)
    assert t.binding.cursor(t, 0) == 3  # type: ignore[attr-defined]
    send(t, 0, kind="knob", step=-1)
    body = send(t, 0, kind="press")
    assert body == {"rules": {"type": "pictos", "seat": 0, "count": 2}}
    assert t.view(0)["pictos_left"] == 8


@pytest.mark.parametrize(
    ("seat", "fields", "message"),
    [
        (0, {"kind": "tag", "uid": "DEADBEEF"}, "Unknown tag"),
        (0, {"kind": "tag", "uid": tag("vote", COLOURS[0], 2)}, "That's your own safe"),
        (0, {"kind": "tag", "uid": tag("vote", COLOURS[6], 2)}, f"Nobody plays {COLOURS[6]}"),
        (0, {"kind": "knob", "step": 1}, "Nothing to choose now"),
        (0, {"kind": "press"}, "Nothing to confirm now"),
    ],
)
def test_refusals_change_nothing(seat: int, fields: dict[str, Any], message: str) -> None:
    """Refused inputs raise a readable message and leave the table as it was."""
    t = prepared()
    version, events = t.state.version, t.events
    with pytest.raises(IllegalAction) as info:
        body = t.binding.translate(t, seat, Input(id="b:9", **fields))
        t.check(body)
    assert info.value.message == message
    assert (t.state.version, t.events) == (version, events)


def test_secret_is_only_in_the_secret_part() -> None:
    """A seat's mystery number and votes are in its screen's secret, never in its lines."""
    t = prepared()
    send(t, 0, kind="tag", uid=tag("vote", COLOURS[1], 7))
    screen = t.binding.station_screen(t, 1)
    assert screen.secret is not None
    assert "2" in (screen.secret.title + screen.secret.big)  # yellow's key is 2
    assert any("7" in line for line in screen.secret.lines)  # yellow's vote on red
    for seat in range(3):
        text = " ".join(t.binding.station_screen(t, seat).lines)
        assert "7" not in text


def test_undo_takes_back_the_last_action() -> None:
    """An undo event rebuilds the state without the last engine action."""
    t = prepared()
    send(t, 0, kind="tag", uid=tag("vote", COLOURS[1], 7))
    assert t.view(None)["seats"][0]["votes_in"] == 1
    t.commit({"undo": True}, t.check({"undo": True}))
    assert t.view(None)["seats"][0]["votes_in"] == 0


def test_replaying_stored_events_rebuilds_the_same_table() -> None:
    """A resumed table (replay of its events) equals the live one."""
    t = table()
    bodies = []
    for seat, fields in [
        (0, {"kind": "knob", "step": 1}),
        (0, {"kind": "press"}),
        (1, {"kind": "tag", "uid": tag("mystery", None, 3)}),
    ]:
        bodies.append(send(t, seat, **fields))
    again = table()
    again.replay_events(bodies)
    assert again.state == t.state and again.ui == t.ui


def test_coop_answer_is_tapped_on_the_active_station() -> None:
    """Co-op: the team's key goes on the active safe; elsewhere it is refused."""
    t = table(3, mode="coop")
    send(t, 0, kind="tag", uid=tag("mystery", None, 5))
    send(t, 0, kind="press")
    with pytest.raises(IllegalAction, match="active safe"):
        t.binding.translate(t, 1, Input(id="b:1", kind="tag", uid=tag("vote", COLOURS[1], 5)))
    send(t, 0, kind="tag", uid=tag("vote", COLOURS[1], 5))
    send(t, 0, kind="press")
    assert t.view(None)["team"]["score"] == 1


def test_coop_answer_is_credited_to_the_guesser_whose_key_it_is() -> None:
    """Co-op: a guesser's key tapped on the active safe names that guesser on public."""
    t = table(3, mode="coop")
    send(t, 0, kind="tag", uid=tag("mystery", None, 5))
    send(t, 0, kind="press")
    send(t, 0, kind="tag", uid=tag("vote", COLOURS[2], 4))
    assert t.view(None)["answered_by"] == 2
    send(t, 0, kind="tag", uid=tag("vote", COLOURS[0], 6))  # the active seat's colour
    assert t.view(None)["answered_by"] == 1  # falls back to the seat after the active one


def test_picto_cursor_starts_at_one_each_round() -> None:
    """The knob's picto count does not carry over from the last round."""
    t = table(3)
    send(t, 0, kind="knob", step=1)
    send(t, 0, kind="knob", step=1)
    for seat in range(3):
        send(t, seat, kind="tag", uid=tag("mystery", None, seat + 1))
        if seat:
            send(t, seat, kind="press")
    send(t, 0, kind="press")
    assert t.view(None)["history"] == [] and t.view(0)["pictos_placed"] == 3
    t.commit({"rules": {"type": "advance"}}, t.check({"rules": {"type": "advance"}}))
    while t.view(None)["phase"] != "prepare":
        t.commit({"rules": {"type": "advance"}}, t.check({"rules": {"type": "advance"}}))
    assert t.view(None)["round"] == 2
    assert t.binding.cursor(t, 0) == 1  # type: ignore[attr-defined]
    body = send(t, 0, kind="press")
    assert body["rules"]["count"] == 1


@pytest.mark.parametrize("mystery", ["keys", "dealt"])
def test_a_tap_or_press_in_prepare_changes_lines_in_place(mystery: str) -> None:
    """Through the prepare phase (key tapped, then ready) a seat's screen keeps its lines
    where they are: each changes in place, none moves up or down, and the first line says
    the key is in (keys) or where the number is (dealt)."""
    t = table(3, mystery=mystery)
    screens = [t.binding.station_screen(t, 0).lines]
    if mystery == "keys":
        send(t, 0, kind="tag", uid=tag("mystery", None, 2))
        screens.append(t.binding.station_screen(t, 0).lines)
    send(t, 0, kind="press")
    screens.append(t.binding.station_screen(t, 0).lines)
    assert len({len(lines) for lines in screens}) == 1
    assert all(lines[-1].startswith("Pictos in hand") for lines in screens)
    firsts = [lines[0] for lines in screens]
    if mystery == "keys":
        assert firsts == ["Tap a mystery key", "Mystery key locked", "Mystery key locked"]
    else:
        assert firsts == ["Lift flap: your number"] * 2


def played_until(players: int, done: Any, seed: int = 2) -> Table:
    """A table of ``players`` played at random (the engine's legal moves) until
    ``done(table)`` holds."""
    t = new_table("secret-identity", players, seed)
    rng = random.Random(seed)
    for _step in range(3000):
        if done(t):
            return t
        body = random_move(t, rng)
        t.commit(body, t.check(body))
    raise AssertionError("never happened")


def test_the_title_keeps_one_shape_all_round_in_french() -> None:
    """Rouge's title says the round the same way in every phase ("Rouge M1/4 Prépa",
    "Rouge M1/4 Vote", "Rouge M1/4 Révél."), never "Manche 1/4" in one and "M1/4" in
    another."""
    titles: dict[str, str] = {}

    def seen(t: Table) -> bool:
        with speaking("fr"):
            titles.setdefault(t.view(None)["phase"], t.binding.station_screen(t, 0).title)
        return t.view(None)["phase"] == "reveal" and bool(t.view(None)["revealed"])

    played_until(5, seen)
    assert {"prepare", "vote", "reveal"} <= set(titles), titles
    heads = {title.split()[1] for title in titles.values()}
    assert len(heads) == 1, titles


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_vote_says_what_to_do_and_the_seat_itself_is_you(language: str) -> None:
    """In the vote the instruction names the safes, and the waiting list says "you" for
    the seat reading it, first, never its own colour."""
    t = played_until(5, lambda t: t.view(None)["phase"] == "vote")
    with speaking(language):
        lines = t.binding.station_screen(t, 0).lines
        own = short_colour(COLOURS[0])
        you = say("you|in a list of seats")
        do = say("Vote on others' safes")
    waiting = lines[2].split()
    assert you in waiting and own not in waiting, lines
    assert waiting[waiting.index(you) - 1].endswith(":"), lines
    assert lines[3] == do and len(do) <= 21


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_points_of_every_opened_safe_stay_in_sight(language: str) -> None:
    """Once a second safe opens, a station shows its points and the first safe's too."""
    t = played_until(4, lambda t: len(t.view(None)["revealed"]) >= 2)
    first, second = t.view(None)["revealed"][:2]
    with speaking(language):
        text = " | ".join(t.binding.station_screen(t, 0).lines)
        names = (short_colour(COLOURS[first["safe"]]), t.seating.name(second["safe"]))
    assert f"{names[0]} {first['points']}" in text, text
    assert names[1] in text and f" {second['points']} pt" in text, text
