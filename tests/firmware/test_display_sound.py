"""The display's cue sheet (firmware/display/sound.py): which move gets which cue and what
is said of it, from the public table alone."""

from __future__ import annotations

from typing import Any

from firmware.display.parts import Names
from firmware.display.render import table_fragment
from firmware.display.sound import MOVES, cue_sheet, moves, plain, remember
from firmware.display.spectator import Snapshot
from firmware.link.lang import speaking

SEATS = [{"seat": i, "station": f"p{i + 1}", "colour": c} for i, c in enumerate(["red", "blue"])]


def public(v: int, *, phase: str = "play", to_play: int | None = 0, **more: Any) -> dict[str, Any]:
    return {
        "game": "identiquest",
        "version": v,
        "seats": SEATS,
        "phase": phase,
        "round": 1,
        "to_play": to_play,
        "over": False,
        "view": {},
        "feed": [],
        **more,
    }


def said(publics: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    moments: list[dict[str, Any]] = []
    for p in publics:
        remember(moments, p)
    last = publics[-1]
    with speaking("en"):
        return [(m["v"], m["cue"], m["say"]) for m in moves(last, moments, Names(last))]


def test_a_new_phase_a_new_turn_and_the_end_each_have_their_cue() -> None:
    """The first move of a game is a new phase waiting on a seat; the turn passing is a
    wait named in words; the phase changing with nobody new to wait on is a phase; the end
    is game over and waits on nobody."""
    script = said(
        [
            public(0),
            public(1, to_play=1),
            public(2, phase="vote", to_play=1),
            public(3, phase="over", to_play=None, over=True),
        ]
    )
    assert script == [
        (0, "wait", "Waiting for Red."),
        (1, "wait", "Waiting for Blue."),
        (2, "phase", ""),
        (3, "over", ""),
    ]


def test_the_feed_is_said_move_by_move_and_a_turn_event_needs_no_waiting_line() -> None:
    """Each move says its own feed lines (not its neighbours'); a move whose feed says whose
    turn it is does not add "Waiting for"."""
    feed = [
        {"kind": "turn", "data": {"seat": 1}, "version": 1},
        {"kind": "unmasked", "data": {"seat": 0, "colour": "red"}, "version": 2},
    ]
    script = said(
        [
            public(0, feed=feed[:0]),
            public(1, to_play=1, feed=feed[:1]),
            public(2, to_play=1, feed=feed),
        ]
    )
    assert script[1] == (1, "wait", "Blue's turn.")
    assert script[2][:2] == (2, "out") and script[2][2].startswith("Red was unmasked")


def test_the_same_move_again_is_no_new_move_and_a_new_game_starts_over() -> None:
    """A countdown's republished second keeps one move; a new game (or an undo to an earlier
    version) starts the list again; the list keeps the last MOVES moves."""
    moments: list[dict[str, Any]] = []
    for p in [public(0), public(1, timer=5), public(1, timer=4)]:
        remember(moments, p)
    assert [m["v"] for m in moments] == [0, 1]
    remember(moments, {**public(0), "game": "incognito"})
    assert [(m["v"], m["cues"]) for m in moments] == [(0, ["phase", "wait"])]
    remember(moments, public(0))
    for v in range(1, 3 * MOVES):
        remember(moments, public(v, to_play=v % 2))
    assert len(moments) == MOVES
    remember(moments, public(2))
    assert [m["v"] for m in moments] == [2]
    remember(moments, {"game": None, "version": 0})
    assert moments == []


def test_words_are_said_without_markup() -> None:
    """A chip's number swatch and its "station offline" note are not said; entities are."""
    line = (
        '<span class="chip c-seat9"><i>9</i>Seat 9</span> <em class="off">station offline</em>'
        " takes &amp; <b>wins</b>"
    )
    assert plain(line) == "Seat 9 takes & wins"


def test_the_sheet_is_in_the_fragment_with_the_tables_setting_and_voice() -> None:
    """The table's fragment carries the cue sheet: its setting (the default when the hub
    does not say one, "cues"), the voice of the table's language, the button's words."""
    snap = Snapshot("t", public(0), {"state": "ready", "language": "fr"}, broker=True)
    remember(snap.moments, snap.public)
    fragment = table_fragment(snap)
    assert 'data-sound="cues"' in fragment and 'data-voice="fr-FR"' in fragment
    assert "Touchez pour activer le son" in fragment
    assert '<li data-v="0" data-cue="wait">On attend Rouge.</li>' in fragment
    with speaking("en"):
        sheet = cue_sheet({**public(0), "sound": "narration"}, [], Names(public(0)), "en")
        off = cue_sheet({**public(0), "sound": "loud"}, [], Names(public(0)), "en")
    assert 'data-sound="narration"' in sheet and 'data-voice="en-GB"' in sheet
    assert 'data-sound="cues"' in off  # a setting the page does not know is the default


def test_every_move_keeps_its_words_after_the_feed_let_them_go() -> None:
    """The hub's feed holds its last events only: a move's words stay with the move the
    display remembered; moves the hub published together are said once, with the later."""
    steal = {"kind": "give", "data": {"from": 0, "to": 1, "gems": ["red"]}}
    turn = {"kind": "turn", "data": {"seat": 1}}
    first = [{**steal, "version": 1}]
    later = [{**turn, "version": 2}, {**turn, "version": 3}, {**steal, "version": 4}]
    script = said([public(0), public(1, feed=first), public(4, to_play=1, feed=later)])
    assert [v for v, _cue, _say in script] == [0, 1, 4]
    assert script[1][2] == "Red gives Blue 1 gem."
    assert script[2][2] == "Blue's turn. Blue's turn. Red gives Blue 1 gem."
