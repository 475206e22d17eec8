"""The Identiquest table binding, driven on a Table directly (no MQTT)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from msgspec.structs import replace

from firmware.hub.bindings.identiquest import (
    IdentiquestBinding,
    Menu,
    gem_codes,
    gem_name,
    make_binding,
    seat_letters,
    suspect_summary,
)
from firmware.hub.table import Seating, Table
from firmware.link.lang import _ as say
from firmware.link.lang import refusal, speaking
from firmware.link.protocol import Input, Screen
from hardware.keys import COLOURS, load_keyset
from rules.core import IllegalAction

KEYS = load_keyset()
_seq = 0


def make(players: int = 4, seed: int = 3, **options: Any) -> Table:
    seating = Seating([f"p{i + 1}" for i in range(players)], list(COLOURS[:players]))
    return Table("identiquest", players, options, seed, seating, KEYS, make_binding())


def send(table: Table, seat: int, kind: str, **fields: Any) -> dict[str, Any]:
    """One station input through translate -> check -> commit, as the hub does."""
    global _seq
    _seq += 1
    inp = Input(id=f"t:{_seq}", kind=kind, **fields)  # type: ignore[arg-type]
    body = table.binding.translate(table, seat, inp)
    table.commit(body, table.check(body))
    return body


def refused(table: Table, seat: int, kind: str, **fields: Any) -> str:
    before = (table.state, dict(table.ui), table.events)
    with pytest.raises(IllegalAction) as err:
        send(table, seat, kind, **fields)
    assert (table.state, dict(table.ui), table.events) == before
    spoken = refusal(err.value.msgid, err.value.params)  # what the station shows
    assert 0 < len(spoken) <= 63
    return spoken


def menus(table: Table) -> IdentiquestBinding:
    binding = table.binding
    assert isinstance(binding, IdentiquestBinding)
    return binding


def menu_of(table: Table, seat: int) -> Menu:
    menu = menus(table).menu(table, seat)
    assert menu is not None
    return menu


def choose(table: Table, seat: int, index: int) -> dict[str, Any]:
    """Turn the knob from where the cursor is to item ``index``, then press."""
    menu = menu_of(table, seat)
    if index != menu.cursor:
        send(table, seat, "knob", step=index - menu.cursor)
    return send(table, seat, "press")


def turn(table: Table) -> int:
    return int(table.view(None)["turn"])


def steal(table: Table, a: int, b: int) -> dict[str, Any]:
    seat = turn(table)
    choose(table, seat, 0)
    choose(table, seat, a)
    return choose(table, seat, b)


def line_of(table: Table, seat: int, other: int) -> int:
    """Where ``other`` is in ``seat``'s "who" menu (clockwise from the next seat)."""
    return (other - seat - 1) % table.players


def accuse(table: Table, target: int, colour: str) -> dict[str, Any]:
    seat = turn(table)
    choose(table, seat, 1)
    choose(table, seat, line_of(table, seat, target))
    return choose(table, seat, table.view(None)["colours"].index(colour))


def public_part(screen: Screen) -> tuple[str, tuple[str, ...]]:
    return screen.title, screen.lines


def test_steal_picks_two_market_slots_one_after_the_other() -> None:
    """Steal, slot 2, slot 4: the engine's steal of slots [1, 3] onto the loot."""
    table = make()
    seat = turn(table)
    market = table.view(None)["market"]
    assert choose(table, seat, 0)["ui"]["menu"] == "steal"
    assert choose(table, seat, 1)["ui"]["pick"] == 1
    screen = table.binding.station_screen(table, seat)
    assert screen.lines[0] == f"1st 2 {market[1]}; 1 more"
    assert choose(table, seat, 3) == {"rules": {"type": "steal", "seat": seat, "slots": [1, 3]}}
    assert table.view(seat)["loot"] == [market[1], market[3]]
    assert turn(table) == (seat + 1) % 4


def test_pressing_a_picked_gem_puts_it_back_and_back_leaves() -> None:
    """A second press on the picked slot un-picks it; Back returns to the turn menu."""
    table = make()
    seat = turn(table)
    choose(table, seat, 0)
    choose(table, seat, 2)
    assert choose(table, seat, 2)["ui"]["pick"] is None
    assert choose(table, seat, 5)["ui"]["menu"] == "main"  # slots 0-4, then Back
    lines = table.binding.station_screen(table, seat).lines
    assert lines[2:] == ("> Steal 2 gems", "  Accuse a player")
    assert table.state.version == 0


def test_accuse_needs_two_gems_and_walks_player_then_colour() -> None:
    """No gems: refused at the menu; later a wrong accusation crosses that colour out."""
    table = make(3, seed=5)
    first = turn(table)
    send(table, first, "knob", step=1)
    assert refused(table, first, "press") == "You need 2 gems to accuse"
    for _ in range(3):
        steal(table, 0, 1)
    seat = turn(table)
    target = (seat + 2) % 3
    truth = table.engine.view(table.state, target)["identity"]
    wrong = next(c for c in table.view(None)["colours"] if c != truth)
    body = accuse(table, target, wrong)
    assert body == {"rules": {"type": "accuse", "seat": seat, "target": target, "colour": wrong}}
    colours = table.view(None)["colours"]
    assert table.view(None)["suspects"][target][colours.index(wrong)] == "x"


def test_back_from_colours_returns_to_the_accused_line() -> None:
    """Back in the colour menu goes to the player menu with the cursor on that player."""
    table = make(4, seed=5)
    for _ in range(4):
        steal(table, 0, 1)
    seat = turn(table)
    target = (seat + 3) % 4
    choose(table, seat, 1)
    choose(table, seat, line_of(table, seat, target))
    n_colours = len(table.view(None)["colours"])
    body = choose(table, seat, n_colours)
    assert body["ui"]["menu"] == "who" and body["ui"]["cursor"] == line_of(table, seat, target)
    assert table.binding.station_screen(table, seat).title.endswith("accuse who?")


def test_unmasked_and_escaped_players_are_refused_in_the_player_menu() -> None:
    """A right accusation unmasks; that player, and an escaped one, cannot be picked."""
    table = make(3, seed=5)
    for _ in range(3):
        steal(table, 0, 1)
    seat = turn(table)
    target = (seat + 1) % 3
    truth = table.engine.view(table.state, target)["identity"]
    accuse(table, target, truth)
    assert table.view(None)["unmasked"][target] == truth
    while turn(table) != seat:
        steal(table, 0, 1)
    choose(table, seat, 1)
    send(table, seat, "knob", step=line_of(table, seat, target))
    assert refused(table, seat, "press") == "Already unmasked"
    escaped = replace(table.state, escaped=tuple(s != seat and s != target for s in range(3)))
    table.state = escaped
    table.events += 1  # new state: views are recomputed
    other = 3 - seat - target
    send(table, seat, "knob", step=line_of(table, seat, other) - line_of(table, seat, target))
    assert refused(table, seat, "press") == "That player escaped"


def test_inputs_from_a_waiting_seat_and_taps_are_refused() -> None:
    """Not your turn: a press refused with whose turn it is; any tap refused."""
    table = make()
    waiting = (turn(table) + 1) % 4
    who = table.seating.name(turn(table))
    assert refused(table, waiting, "press") == f"Wait: it's {who}'s turn"
    uid = KEYS.uid_for("vote", "red", 1)
    assert refused(table, turn(table), "tag", uid=uid) == "No cards in this game: use the knob"


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_waiting_seats_knob_turns_to_the_key(language: str) -> None:
    """Not your turn: the knob turns the pages under the flap from the seat's identity to
    the key, which spells out the suspects' letters, the marks and the gem codes."""
    table = make(6, seed=5)
    waiting = (turn(table) + 1) % 6
    with speaking(language):
        assert (
            table.binding.station_screen(table, waiting)
            .secret.lines[0]
            .startswith(say("You are {colour}", colour="")[:4])
        )
        send(table, waiting, "knob", step=1)
        secret = table.binding.station_screen(table, waiting).secret
        assert secret is not None and secret.title.startswith(say("Key|legend page"))
        key = " ".join(row for _t, rows in table.binding.pages(table, waiting) for row in rows)
        for seat, letter in enumerate(seat_letters(table)):
            assert say("{short}: {words}", short=letter, words=table.seating.name(seat)) in key
        assert say("!: unmasked") in key and say("^: escaped") in key
        send(table, waiting, "knob", step=-1)
        assert table.binding.station_screen(table, waiting).secret.title == say("Your identity")


def test_give_choose_menu_is_under_the_flap_of_the_giver_only() -> None:
    """give=choose: the giver picks colours in a secret menu; others wait; gems move."""
    table = make(3, seed=5, give="choose")
    for _ in range(6):
        steal(table, 0, 1)
    seat = turn(table)
    target = (seat + 1) % 3
    truth = table.engine.view(table.state, target)["identity"]
    wrong = next(c for c in table.view(None)["colours"] if c != truth)
    accuse(table, target, wrong)
    pub = table.view(None)
    assert pub["phase"] == "give" and pub["pending"]["giver"] == seat
    loot = table.view(seat)["loot"]
    screen = table.binding.station_screen(table, seat)
    assert screen.secret is not None and screen.secret.title.startswith("Give 2 to ")
    assert any(f"{loot[-1]} (" in line for line in screen.secret.lines)
    assert screen.lines[1:3] == ("Lift the flap to", "choose each gem")
    assert all("(" not in line for line in screen.lines)
    other = 3 - seat - target
    assert refused(table, other, "press") == f"Wait: {table.seating.name(seat)} gives gems"
    items = menus(table).items(table, seat, menu_of(table, seat))
    colour = items[-1][1]
    assert choose(table, seat, len(items) - 1) == {
        "rules": {"type": "give", "seat": seat, "colour": colour}
    }
    assert table.view(target)["loot"][-1] == colour


def test_identity_and_loot_only_under_the_flap() -> None:
    """Re-dealing identities and loot contents changes only that seat's secret part."""
    table = make(4, seed=2)
    for _ in range(6):
        steal(table, 0, 1)
    before = [table.binding.station_screen(table, s) for s in range(4)]
    host = table.binding.host_screen(table)
    state = table.state
    loot = tuple((*pile[:-1][::-1], *pile[-1:]) if len(pile) > 2 else pile for pile in state.loot)
    identity = state.identity[1:] + state.identity[:1]
    table.state = replace(state, identity=identity, loot=loot)
    table.events += 1
    assert table.binding.host_screen(table) == host
    changed = 0
    for seat in range(4):
        after = table.binding.station_screen(table, seat)
        assert public_part(after) == public_part(before[seat])
        changed += after.secret != before[seat].secret
        assert after.secret is not None and after.secret.lines[0] == (
            f"You are {table.view(seat)['identity']}"
        )
    assert changed == 4


def test_replaying_the_events_rebuilds_menus() -> None:
    """A restarted hub replays rules and ui events to the same state and screens."""
    table = make(3)
    bodies = []
    seat = turn(table)
    bodies.append(send(table, seat, "press"))
    bodies.append(send(table, seat, "knob", step=2))
    bodies.append(send(table, seat, "press"))
    bodies.append(send(table, seat, "knob", step=1))
    again = make(3)
    again.replay_events(bodies)
    assert again.state == table.state
    for s in range(3):
        assert again.binding.station_screen(again, s) == table.binding.station_screen(table, s)


def test_gem_codes_are_distinct() -> None:
    """Three-letter gem codes (two letters read as nothing, issue 25): red/ora/yel/gre/blu/
    pur/pin by default, still distinct if names clash."""
    default = ["red", "orange", "yellow", "green", "blue", "purple", "pink"]
    codes = ["red", "ora", "yel", "gre", "blu", "pur", "pin"]
    assert list(gem_codes(default).values()) == codes
    clash = gem_codes(["blue", "black", "blond", "bl"])
    assert len(set(clash.values())) == 4


@pytest.mark.parametrize(("players", "give"), [(3, "top"), (6, "top"), (5, "choose")])
def test_random_knob_play_finishes_games_with_lines_on_the_glass(players: int, give: str) -> None:
    """Random turns and presses only: the game ends; every line fits 21 chars, 4 lines."""
    rng = random.Random(players)
    table = make(players, seed=players, give=give)
    inputs = 0
    kinds: set[str] = set()
    while not table.over:
        pub = table.view(None)
        seat = pub["pending"]["giver"] if pub["phase"] == "give" else pub["turn"]
        try:
            if rng.random() < 0.5:
                send(table, seat, "knob", step=rng.choice([-2, -1, 1, 1, 2, 3]))
            else:
                kinds.add(send(table, seat, "press").get("rules", {}).get("type", "ui"))
        except IllegalAction:
            pass
        inputs += 1
        assert inputs < 20_000
        if inputs % 7 == 0 or table.over:
            screens = [table.binding.station_screen(table, s) for s in range(players)]
            for screen in screens:
                assert len(screen.title) <= 21 and len(screen.lines) <= 4, screen
                assert all(len(line) <= 21 for line in screen.lines), screen.lines
                assert screen.secret is not None and len(screen.secret.lines) <= 4
                assert all(len(line) <= 21 for line in screen.secret.lines), screen.secret
            title, rows = table.binding.host_screen(table)
            # A row per seat (the ranking; the loots, the suspects): the hub display pages
            # them, its "1/4" beside the title.
            most = players if table.over else -(-(3 + players) // 4) * 4 + 1 + players
            paged = len(rows) > 4 and not table.over
            assert len(title) <= (17 if paged else 21) and len(rows) <= most
            assert all(len(row) <= 21 for row in rows), rows
    assert {"steal", "accuse"} <= kinds and ("give" in kinds) == (give == "choose")
    final = table.binding.station_screen(table, 0)
    assert final.lines[0].startswith("You: #")


@pytest.mark.parametrize(
    ("language", "codes", "unmasked", "escaped"),
    [
        ("en", ["R", "Y", "G", "B", "K", "P"], "!", "^"),
        ("fr", ["R", "J", "Ve", "B", "N", "Vi"], "!", "^"),
    ],
)
def test_suspect_summary_speaks_the_table_language_and_fits(
    language: str, codes: list[str], unmasked: str, escaped: str
) -> None:
    """Six seats: each by its colour's letter in the table's language (French Vert and
    Violet share V, so both go by two letters); out seats by a mark; one glass line."""
    table = make(6, seed=5)
    for _ in range(6):  # a round: every seat has gems to accuse with
        steal(table, 0, 1)
    seat = turn(table)
    target = (seat + 1) % 6
    accuse(table, target, table.engine.view(table.state, target)["identity"])
    runaway = next(s for s in range(6) if s not in (seat, target))
    table.state = replace(table.state, escaped=tuple(s == runaway for s in range(6)))
    table.events += 1
    with speaking(language):
        assert seat_letters(table) == codes
        summary = suspect_summary(table, table.view(None), 21 - len("Sus "))
        _title, host_lines = table.binding.host_screen(table)
    cells = summary.split() if " " in summary else re.findall(r"[A-Z][a-z]?[0-9!^]", summary)
    assert len(cells) == 6 and len(summary) <= 17, summary
    assert cells[target] == codes[target] + unmasked
    assert cells[runaway] == codes[runaway] + escaped
    assert all(cells[s][len(codes[s]) :].isdigit() for s in range(6) if s not in (target, runaway))
    # The hub says the same in words: a count after each seat, the out seats by name
    # (a seat on the hub is its colour and its number: "Red1").
    with speaking(language):
        short = [f"{table.seating.short(s)}{s + 1}" for s in range(6)]
        out = [
            say(
                "{seat} is {colour}",
                seat=short[target],
                colour=gem_name(table.view(target)["identity"]),
            ),
            say("{seat} escaped", seat=short[runaway]),
        ]
    assert sorted(host_lines[-2:]) == sorted(out), host_lines
    counts = " ".join(host_lines[-4:-2]).split()
    assert counts[0::2] == [short[s] for s in range(6) if s not in (target, runaway)]
    assert counts[1::2] == [
        cells[s][len(codes[s]) :] for s in range(6) if s not in (target, runaway)
    ]


def test_an_accusation_reads_in_whole_names_where_they_fit() -> None:
    """ "Green: Blue not green", not "Grn: Blue not green": a seat's short form only where
    the whole names do not fit the glass."""
    table = make(4, seed=5)
    for _ in range(4):  # a round: every seat has gems to accuse with
        steal(table, 0, 1)
    seat = turn(table)
    target = (seat + 1) % 4
    wrong = next(
        c
        for c in table.view(None)["colours"]
        if c != table.engine.view(table.state, target)["identity"]
    )
    accuse(table, target, wrong)
    with speaking("en"):
        lines = table.binding.station_screen(table, (seat + 2) % 4).lines
        said = f"{table.seating.name(seat)}: {table.seating.name(target)} not"
    assert any(line.startswith(said) for line in lines), lines
