"""The Incognito table binding, driven on a Table directly (no MQTT)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from msgspec.structs import replace

from firmware.hub.bindings.incognito import glass, make_binding
from firmware.hub.table import Seating, Table
from firmware.link.lang import speaking
from firmware.link.protocol import Input, Screen
from hardware.keys import COLOURS, load_keyset
from rules.core import IllegalAction
from rules.incognito import PLACES, WORDS

KEYS = load_keyset()
_seq = 0


def make(players: int = 4, seed: int = 3, **options: Any) -> Table:
    seating = Seating([f"p{i + 1}" for i in range(players)], list(COLOURS[:players]))
    return Table("incognito", players, options, seed, seating, KEYS, make_binding())


def send(table: Table, seat: int, kind: str, **fields: Any) -> dict[str, Any]:
    """One station input through translate -> check -> commit, as the hub does."""
    global _seq
    _seq += 1
    body = table.binding.translate(table, seat, Input(id=f"t:{_seq}", kind=kind, **fields))  # type: ignore[arg-type]
    table.commit(body, table.check(body))
    return body


def refused(table: Table, seat: int, kind: str, **fields: Any) -> str:
    before = (table.state, dict(table.ui), table.events)
    with pytest.raises(IllegalAction) as err:
        send(table, seat, kind, **fields)
    assert (table.state, dict(table.ui), table.events) == before
    assert 0 < len(err.value.message) <= 63
    return err.value.message


def vote_uid(table: Table, voter: int, number: int) -> str:
    return KEYS.uid_for("vote", table.seating.colours[voter], number)


def fire_timer(table: Table) -> None:
    timer = table.binding.timer(table)
    assert timer is not None
    body = timer[1]
    table.commit(body, table.check(body))


def screen_text(screen: Screen) -> str:
    return json.dumps([screen.title, list(screen.lines)], ensure_ascii=False)


def all_done(table: Table) -> None:
    for seat in range(table.players):
        send(table, seat, "press")


def vote_all(table: Table, skip: int | None = None) -> None:
    """Every seat but ``skip`` lays cards 1, 2, ... on the others' drawings."""
    for voter in range(table.players):
        if voter == skip:
            continue
        drawers = [d for d in range(table.players) if d != voter]
        for number, drawer in enumerate(drawers, start=1):
            send(table, drawer, "tag", uid=vote_uid(table, voter, number))


def test_word_only_under_the_flap_place_in_public() -> None:
    """Each station's word is in its secret part only; its place is on the public part."""
    table = make(5)
    words = [table.view(s)["word"] for s in range(5)]
    host = json.dumps(table.binding.host_screen(table), ensure_ascii=False)
    for seat in range(5):
        screen = table.binding.station_screen(table, seat)
        assert screen.secret is not None and words[seat] in screen.secret.lines
        public = screen_text(screen)
        assert all(w not in public for w in words)
        assert all(w not in host for w in words)
        place = table.view(None)["places"][seat]
        assert place.split()[-1] in public


def test_press_is_done_and_a_second_press_is_refused() -> None:
    """A knob press sends done; pressing again says you are already done."""
    table = make(4)
    assert send(table, 2, "press") == {"rules": {"type": "done", "seat": 2}}
    assert table.view(None)["done"] == [False, False, True, False]
    assert refused(table, 2, "press") == "You are already done"


def test_countdown_timer_shown_on_every_screen_and_sends_timeout() -> None:
    """All but one done: the timer sends timeout after `countdown` s; every screen shows it."""
    table = make(4, countdown=9)
    assert table.binding.timer(table) is None
    for seat in range(3):
        send(table, seat, "press")
    assert table.binding.timer(table) == (9.0, {"rules": {"type": "timeout"}})
    table.timer_left = 3.2
    for seat in range(4):
        screen = table.binding.station_screen(table, seat)
        assert screen.title.endswith(" 4s"), screen.title
        assert screen.secret is not None and screen.secret.title.endswith(" 4s")
    assert "STOP in 4s" in " ".join(table.binding.station_screen(table, 3).lines)
    assert table.binding.host_screen(table)[0].endswith("STOP 4s")
    fire_timer(table)
    assert table.view(None)["phase"] == "vote"
    assert table.binding.timer(table) is None


def test_vote_card_tapped_on_the_drawers_station() -> None:
    """Yellow's card 4 on blue's station lays 4 on blue's drawing for yellow."""
    table = make(4)
    all_done(table)
    body = send(table, 3, "tag", uid=KEYS.uid_for("vote", "yellow", 4))
    assert body == {"rules": {"type": "vote", "seat": 1, "drawer": 3, "number": 4}}
    assert table.view(1)["votes"] == [None, None, None, 4]
    assert table.view(None)["voted"][1] == [3]


@pytest.mark.parametrize(
    ("uid", "message"),
    [
        (KEYS.uid_for("vote", "red", 2), "That's your own drawing"),
        (KEYS.uid_for("vote", "yellow", 7), "Vote cards go 1 to 6"),
        (KEYS.uid_for("mystery", None, 3), "That card is not for this game"),
        (KEYS.uid_for("vote", "white", 1), "Nobody plays white"),
        ("DEADBEEF", "Unknown tag"),
    ],
)
def test_bad_taps_are_refused_and_change_nothing(uid: str, message: str) -> None:
    """Own drawing, card 7, a mystery key, an absent colour, an unknown tag: refused."""
    table = make(4)
    all_done(table)
    assert refused(table, 0, "tag", uid=uid) == message


def test_inputs_out_of_their_phase_are_refused() -> None:
    """A card while drawing, the knob while drawing, a press while voting or after."""
    table = make(3)
    assert refused(table, 1, "tag", uid=vote_uid(table, 0, 1)) == "Not voting time"
    assert refused(table, 1, "knob", step=1) == "Nothing to choose now"
    all_done(table)
    assert refused(table, 1, "press") == "Tap your vote cards on drawings"
    send(table, 1, "tag", uid=vote_uid(table, 0, 5))
    assert refused(table, 1, "tag", uid=vote_uid(table, 0, 5)) == "That card is already there"
    vote_all(table)
    assert table.view(None)["phase"] == "reveal"
    assert refused(table, 0, "press") == "The host starts the next round"


def test_knob_scrolls_the_list_within_bounds_and_resets_each_round() -> None:
    """Two words and where to lay cards (a marker says which of the 6 show); the knob
    scrolls 0..4 and a new round starts at the top."""
    table = make(3)
    all_done(table)
    words = table.view(None)["list"]
    screen = table.binding.station_screen(table, 0)
    assert screen.lines[0] == "Laid 0/2      1-2/6 ▼"
    assert list(screen.lines[1:3]) == [f"{i + 1} {w}" for i, w in enumerate(words[:2])]
    assert screen.lines[3] == "Tap cards on others"
    send(table, 0, "knob", step=8)
    lines = table.binding.station_screen(table, 0).lines
    assert lines[1:3] == tuple(f"{i + 5} {w}" for i, w in enumerate(words[4:]))
    assert lines[0].endswith("5-6/6 ▲")
    send(table, 0, "knob", step=-1)
    assert table.binding.station_screen(table, 0).lines[1] == f"4 {words[3]}"
    assert table.binding.station_screen(table, 1).lines[1] == f"1 {words[0]}"
    vote_all(table)
    send_next(table)
    all_done(table)
    assert table.binding.station_screen(table, 0).lines[1].startswith("1 ")


def test_vote_list_in_french_fits_and_pages() -> None:
    """In French the vote screen speaks French, fits 21 columns and shows its marker."""
    table = make(6)
    all_done(table)
    with speaking("fr"):
        lines = table.binding.station_screen(table, 0).lines
    assert lines[0] == "Posées 0/5    1-2/6 ▼"
    assert lines[3] == "Pose chez les autres"
    assert all(len(line) <= 21 for line in lines)


def send_next(table: Table) -> None:
    body = table.binding.advance(table)
    assert body == {"rules": {"type": "next"}}
    table.commit(body, table.check(body))


def test_vote_countdown_fills_the_late_cards_and_results_show_everywhere() -> None:
    """A late voter's missing cards are filled at the timeout; every screen shows results."""
    table = make(4)
    all_done(table)
    vote_all(table, skip=2)
    send(table, 0, "tag", uid=vote_uid(table, 2, 6))
    assert table.binding.timer(table) is not None
    fire_timer(table)
    pub = table.view(None)
    assert pub["phase"] == "reveal" and pub["reveal"]["late"] == 2
    assert sorted(pub["reveal"]["filled"]) == [1, 3]
    for seat in range(4):
        lines = table.binding.station_screen(table, seat).lines
        drawing = pub["reveal"]["drawings"][seat]
        assert lines[0] == f"Round +{pub['reveal']['points'][seat]}, total {pub['scores'][seat]}"
        assert lines[1] == f"#{drawing['number']} {drawing['word']}"
        # Who found the seat's own drawing, in words ("Found by 1 of 3", not "1/3, you 2/3").
        assert lines[2] == f"Found by {len(drawing['finders'])} of 3"
        assert lines[3] == "Knob: each drawing"
    with speaking("fr"):
        found = table.binding.station_screen(table, 0).lines[2]
    assert found == f"Trouvé par {len(pub['reveal']['drawings'][0]['finders'])} sur 3"
    _title, rows = table.binding.host_screen(table)
    for seat in range(4):
        name = f"{table.seating.short(seat)}{seat + 1}"  # colour and number, not colour alone
        gain, total = pub["reveal"]["points"][seat], pub["scores"][seat]
        assert rows[seat].startswith(f"{name} +{gain}, total {total} pt"), rows


def test_host_next_skips_a_countdown_and_deals_after_results() -> None:
    """Host next: nothing to skip at first, ends a running countdown, then deals round 2."""
    table = make(3)
    assert table.binding.advance(table) is None
    send(table, 0, "press")
    send(table, 1, "press")
    body = table.binding.advance(table)
    assert body == {"rules": {"type": "timeout"}}
    table.commit(body, table.check(body))
    assert table.view(None)["phase"] == "vote"
    vote_all(table)
    send_next(table)
    assert table.view(None)["round"] == 2 and table.view(None)["phase"] == "draw"


def test_replaying_the_events_rebuilds_table_and_cursors() -> None:
    """A restarted hub replays rules and ui events to the same state and screens."""
    table = make(3)
    bodies = [send(table, s, "press") for s in range(3)]
    bodies.append(send(table, 1, "knob", step=2))
    bodies.append(send(table, 2, "tag", uid=vote_uid(table, 0, 3)))
    again = make(3)
    again.replay_events(bodies)
    assert again.state == table.state
    for seat in range(3):
        assert again.binding.station_screen(again, seat) == table.binding.station_screen(
            table, seat
        )


def host(table: Table) -> tuple[str, list[str], list[str]]:
    """The hub display's screen, and the words of the list it should show while voting."""
    title, rows = table.binding.host_screen(table)
    return title, rows, [f"{i + 1} {w}" for i, w in enumerate(table.view(None)["list"])]


@pytest.mark.parametrize(("players", "lang"), [(3, "fr"), (6, "fr"), (6, "en")])
def test_a_whole_game_keeps_every_line_on_the_glass(players: int, lang: str) -> None:
    """Three rounds with random cards: lines fit 21 chars, at most 4; ranking at the end."""
    rng = random.Random(players)
    table = make(players, seed=players, lang=lang)
    longest = max(PLACES[lang], key=len)
    assert len(longest) > 21 and max(len(w) for w in WORDS[lang]) <= 19
    screens: list[Screen] = []
    hosts = [host(table)]
    for _ in range(3):
        for seat in range(players):
            send(table, seat, "press")
            hosts.append(host(table))
        for voter in range(players):
            drawers = [d for d in range(players) if d != voter]
            for drawer, number in zip(drawers, rng.sample(range(1, 7), players - 1), strict=True):
                send(table, drawer, "tag", uid=vote_uid(table, voter, number))
        screens += [table.binding.station_screen(table, s) for s in range(players)]
        hosts.append(host(table))
        if table.view(None)["phase"] == "reveal":
            for _ in range(players - 1):
                send(table, 0, "knob", step=1)
                screens.append(table.binding.station_screen(table, 0))
            send_next(table)
        screens += [table.binding.station_screen(table, s) for s in range(players)]
    assert table.over
    for screen in screens:
        assert len(screen.title) <= 21 and len(screen.lines) <= 4
        assert all(len(line) <= 21 for line in screen.lines), screen.lines
    for title, rows, words in hosts:
        # The hub display pages more than four lines by itself; no word of the list is cut.
        assert len(title) <= 21 and len(rows) <= 7
        assert all(len(row) <= 21 for row in rows), rows
        if "Vote" in title:
            assert all(any(w in row for row in rows) for w in words), (words, rows)
    final = table.binding.station_screen(table, 0).lines
    assert final[0].startswith("You: #")
    best = table.engine.ranking(table.state)[0][0]
    assert final[1].startswith(f"1. {table.seating.name(best)}")


def test_screens_spell_words_the_latin1_font_lacks() -> None:
    """A word like "cœur" reaches the glass as "coeur": every screen string is Latin-1
    (but for the scroll arrows, which the renderer draws itself)."""
    assert glass("cœur d’or…") == "coeur d'or..."
    seed = next(
        s for s in range(500) if any("œ" in make(3, seed=s).view(p)["word"] for p in range(3))
    )
    table = make(3, seed=seed)
    all_done(table)
    for seat in range(3):
        screen = table.binding.station_screen(table, seat)
        assert screen.secret is not None
        text = screen.title + "".join(screen.lines) + "".join(screen.secret.lines)
        text.replace("▼", "").replace("▲", "").encode("latin-1")
        assert "oe" in "".join(screen.secret.lines) or seat != _seat_with_oe(table)
    "".join(table.binding.host_screen(table)[1]).encode("latin-1")


def _seat_with_oe(table: Table) -> int:
    return next(s for s in range(table.players) if "œ" in table.view(s)["word"])


def test_knob_browses_each_drawing_after_the_round() -> None:
    """Results: page 0 is yours; the knob shows each other drawing, then a new round resets."""
    table = make(4)
    all_done(table)
    vote_all(table)
    reveal = table.view(None)["reveal"]
    send(table, 1, "knob", step=2)
    drawing = reveal["drawings"][3]
    lines = table.binding.station_screen(table, 1).lines
    assert lines[:2] == (f"Blue drew #{drawing['number']}    3/4 ▼", drawing["word"])
    assert lines[3] == f"Blue +{reveal['points'][3]}, total {table.view(None)['scores'][3]}"
    send(table, 1, "knob", step=8)
    assert table.binding.station_screen(table, 1).lines[0].startswith("Red drew #")
    assert table.binding.station_screen(table, 0).lines[3] == "Knob: each drawing"
    send_next(table)
    all_done(table)
    assert table.binding.station_screen(table, 1).lines[1].startswith("1 ")


def test_redealt_words_change_only_the_secret_parts() -> None:
    """Words swapped between seats: public parts and hub display are unchanged till results."""
    for phase in ("draw", "vote"):
        table = make(4, seed=11)
        send(table, 0, "press")
        if phase == "vote":
            for seat in range(1, 4):
                send(table, seat, "press")
            send(table, 2, "tag", uid=vote_uid(table, 0, 4))
        before = [table.binding.station_screen(table, s) for s in range(4)]
        host = table.binding.host_screen(table)
        word_at = table.state.word_at
        table.state = replace(table.state, word_at=word_at[1:] + word_at[:1])
        table.events += 1  # a new state: views are recomputed
        assert table.binding.host_screen(table) == host
        for seat in range(4):
            after = table.binding.station_screen(table, seat)
            assert (after.title, after.lines, after.led) == (
                before[seat].title,
                before[seat].lines,
                before[seat].led,
            )
            assert after.secret != before[seat].secret
