"""The Ultra Secret table binding (knob menus, dial, sheet), driven without MQTT."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from firmware.hub.bindings import binding_for
from firmware.hub.bindings.ultra_secret import SHEET, UltraSecretBinding
from firmware.hub.table import Seating, Table
from firmware.link.protocol import Input
from firmware.link.render import render
from hardware.keys import COLOURS, load_keyset
from rules.core import IllegalAction

KEYS = load_keyset()
COLOURS_US = ("red", "yellow", "green", "black", "lilac", "blue")
CARD = re.compile(r"\b[PX][1-6]\b")


def table(players: int = 3, seed: int = 1, **options: Any) -> Table:
    seating = Seating([f"p{i + 1}" for i in range(players)], list(COLOURS[:players]))
    return Table("ultra-secret", players, options, seed, seating, KEYS, binding_for("ultra-secret"))


def binding(t: Table) -> UltraSecretBinding:
    assert isinstance(t.binding, UltraSecretBinding)
    return t.binding


def send(t: Table, seat: int, kind: str, step: int | None = None) -> dict[str, Any]:
    """Translate, check and commit one input as the hub would."""
    body = t.binding.translate(t, seat, Input(id="b:1", kind=kind, step=step))  # type: ignore[arg-type]
    t.commit(body, t.check(body))
    return body


def labels(t: Table, seat: int) -> list[str]:
    return [o.label for o in binding(t).menu(t, seat)]


def choose(t: Table, seat: int, label: str) -> dict[str, Any]:
    """Turn the knob to the option ``label`` and press."""
    b = binding(t)
    target = labels(t, seat).index(label)
    while b.cursor(t, seat) != target:
        send(t, seat, "knob", 1)
    return send(t, seat, "press")


def hidden(players: int = 3, seed: int = 1, **options: Any) -> Table:
    """A table past the hide step (everyone: ID in the suitcase, locker at B1)."""
    t = table(players, seed, **options)
    for seat in range(players):
        choose(t, seat, "ID card")
        choose(t, seat, "toothbrush")
        choose(t, seat, "Locker at B1")
    return t


def secret_text(t: Table, seat: int) -> str:
    screen = t.binding.station_screen(t, seat)
    assert screen.secret is not None
    return " ".join((screen.secret.title, *screen.secret.lines))


def public_part(t: Table, seat: int) -> tuple[Any, ...]:
    screen = t.binding.station_screen(t, seat)
    return screen.title, screen.lines, screen.led


def test_hide_is_three_knob_steps_with_back() -> None:
    """Suitcase, briefcase, then locker station make one hide action; Back undoes a step."""
    t = table()
    choose(t, 0, "toothbrush")
    assert labels(t, 0) == ["ID card", "formula", "< Back", SHEET]
    choose(t, 0, "< Back")
    assert labels(t, 0)[:3] == ["ID card", "toothbrush", "formula"]
    choose(t, 0, "formula")
    choose(t, 0, "ID card")
    body = choose(t, 0, "Locker at F1")
    assert body == {
        "rules": {
            "type": "hide",
            "seat": 0,
            "suitcase": "formula",
            "briefcase": "identity",
            "locker": "toothbrush",
            "at": "F1",
        }
    }
    assert t.view(0)["hidden"]["at"] == "F1"


def test_dial_offers_only_open_squares_and_press_locks_it() -> None:
    """The knob is the dial: open squares only (no V3 at 3p, no VM), a press dials."""
    t = hidden()
    for seat in range(3):
        choose(t, seat, "Pass (no bug)")
    squares = [lb.split()[0] for lb in labels(t, 0)[:-1]]
    assert "V3" not in squares and not any(s.startswith("VM") for s in squares)
    assert squares[:8] == ["H1", "H2", "H3", "H4", "H5", "H6", "F1", "B1"]
    body = choose(t, 0, "G2 bar")
    assert body == {"rules": {"type": "dial", "seat": 0, "square": "G2"}}
    assert t.view(0)["dial"] == "G2"


def test_knob_cursor_wraps_round_the_menu() -> None:
    """Turning back from the first option lands on the last one (the sheet)."""
    t = hidden()
    send(t, 1, "knob", -1)
    assert labels(t, 1)[binding(t).cursor(t, 1)] == SHEET


def test_dial_shows_only_under_the_flap() -> None:
    """The square under the cursor is in the secret part only; nobody else's screen moves."""
    t = hidden()
    for seat in range(3):
        choose(t, seat, "Pass (no bug)")
    before = {s: public_part(t, s) for s in range(3)}
    host = t.binding.host_screen(t)
    choose_to = labels(t, 0).index("G4 embassy files")
    while binding(t).cursor(t, 0) != choose_to:
        send(t, 0, "knob", 1)
    assert "G4" in secret_text(t, 0)
    assert {s: public_part(t, s) for s in range(3)} == before
    assert t.binding.host_screen(t) == host
    assert all("G4" not in line for line in t.binding.station_screen(t, 0).lines)
    assert "G4" not in secret_text(t, 1)


def test_simultaneous_phase_shows_who_has_acted() -> None:
    """The waiting line drops a seat once it has chosen; its own screen says done."""
    t = hidden()
    assert "Waiting: Red Yel Grn" in t.binding.station_screen(t, 2).lines
    choose(t, 1, "Pass (no bug)")
    assert "Waiting: Red Grn" in t.binding.station_screen(t, 2).lines
    assert t.binding.station_screen(t, 1).lines[0] == "Done. Waiting..."
    assert t.binding.station_screen(t, 1).led == (0, 0, 0)
    assert t.binding.station_screen(t, 0).led != (0, 0, 0)


def test_press_when_done_is_refused_readably() -> None:
    """A seat that has chosen gets 'Done: wait for the others' and nothing changes."""
    t = hidden()
    choose(t, 1, "Pass (no bug)")
    version = t.state.version
    with pytest.raises(IllegalAction) as err:
        t.binding.translate(t, 1, Input(id="b:2", kind="press"))
    assert err.value.message == "Done: wait for the others"
    assert t.state.version == version


def test_tags_are_refused() -> None:
    """This game needs no card: a tag on a reader is refused with a readable message."""
    t = hidden()
    uid = KEYS.uid_for("vote", "red", 1)
    with pytest.raises(IllegalAction) as err:
        t.binding.translate(t, 0, Input(id="b:3", kind="tag", uid=uid))
    assert "knob" in err.value.message and len(err.value.message) <= 63


def test_sheet_opens_from_the_menu_and_the_knob_turns_its_pages() -> None:
    """'Sheet >' shows page 1 under the flap, the knob turns pages, a press goes back."""
    t = hidden()
    choose(t, 0, SHEET)
    assert binding(t).paging(t, 0)
    n = len(binding(t).pages(t, 0))  # the sheet, your pieces, its key (issue 25)
    assert secret_text(t, 0).startswith(f"Who is who 1/{n}")
    mine = t.view(0)["hidden"]["identity"]
    assert f"Red {mine}" in secret_text(t, 0)
    send(t, 0, "knob", 1)
    assert t.ui["page:0"] == 1
    assert secret_text(t, 0).startswith(f"Your cards 2/{n}")
    send(t, 0, "knob", n)  # stops at the last page
    assert t.ui["page:0"] == n - 1
    send(t, 0, "press")
    assert not binding(t).paging(t, 0)
    assert secret_text(t, 0).startswith("Bug/declare")
    assert t.view(0)["table"]["acted"][0] is False


def test_idle_knob_browses_the_sheet_and_press_is_refused() -> None:
    """With nothing to choose, the knob turns the sheet's pages directly."""
    t = hidden()
    choose(t, 0, "Pass (no bug)")
    send(t, 0, "knob", 1)
    assert secret_text(t, 0).startswith("Your cards")
    with pytest.raises(IllegalAction):
        t.binding.translate(t, 0, Input(id="b:4", kind="press"))


def test_cursor_resets_when_the_phase_changes() -> None:
    """A cursor left in phase 1 does not carry over into the dial menu."""
    t = hidden()
    send(t, 0, "knob", 3)
    choose(t, 0, "Pass (no bug)")
    for seat in (1, 2):
        choose(t, seat, "Pass (no bug)")
    assert binding(t).cursor(t, 0) == 0


def play_random(seed: int, players: int = 3, cap: int = 6) -> Table:
    """Random menu choices through knob and press (declaring after ``cap`` turns)."""
    rng = random.Random(seed)
    t = table(players, seed, declare="any")
    b = binding(t)
    for _ in range(5000):
        if t.over:
            return t
        pub = t.view(None)
        seat = rng.choice(pub["waiting"])
        menu = labels(t, seat)
        good = [i for i, lb in enumerate(menu) if lb != SHEET and not lb.startswith("Declare")]
        declare = [i for i, lb in enumerate(menu) if lb.startswith("Declare")]
        target = rng.choice(declare if declare and pub["turn"] > cap else good)
        send(t, seat, "knob", ((target - b.cursor(t, seat)) % len(menu)) or len(menu))
        assert b.cursor(t, seat) == target
        version = t.state.version
        body = send(t, seat, "press")  # never refused: menus offer legal choices only
        if "rules" in body:
            assert t.state.version == version + 1
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("players", [3, 6])
def test_random_menu_games_end_and_screens_fit(players: int) -> None:
    """Random knob games end; every option pressed is accepted; lines fit; no card in public."""
    for seed in range(8):
        t = play_random(seed, players)
        assert t.over
        for seat in range(players):
            screen = t.binding.station_screen(t, seat)
            assert len(screen.title) <= 21 and all(len(ln) <= 21 for ln in screen.lines)
            render(screen, show_secret=True)


def test_public_screens_never_show_a_card_before_the_end() -> None:
    """Titles, public lines and the host screen carry no pseudonym or formula code."""
    rng = random.Random(4)
    t = table(4, 4, declare="any")
    b = binding(t)
    while not t.over:
        for seat in range(4):
            screen = b.station_screen(t, seat)
            text = " ".join((screen.title, *screen.lines))
            assert not CARD.search(text), text
            assert screen.secret is not None
            for line in screen.secret.lines:
                assert len(line) <= 21, line
        title, lines = b.host_screen(t)
        assert not CARD.search(" ".join((title, *lines)))
        pub = t.view(None)
        seat = rng.choice(pub["waiting"])
        menu = labels(t, seat)
        pick = [i for i, lb in enumerate(menu) if lb != SHEET]
        if pub["turn"] > 5:
            pick = [i for i in pick if menu[i].startswith("Declare")] or pick
        else:
            pick = [i for i in pick if not menu[i].startswith("Declare")]
        target = rng.choice(pick)
        while b.cursor(t, seat) != target:
            send(t, seat, "knob", 1)
        send(t, seat, "press")
    final = b.station_screen(t, 0)
    assert final.title.endswith("Over")


def test_file_cursor_starts_on_the_sheet_answer() -> None:
    """The fugitive's filing menu starts on what the sheet says; pressing through files it."""
    t = hidden(3, 2, declare="any")
    choose(t, 0, "Declare: I know!")
    for seat in (1, 2):
        choose(t, seat, "Pass (no bug)")
    assert t.view(None)["phase"] == "file"
    sheet = t.view(0)["sheet"]
    red_is = t.view(0)["hidden"]["identity"]
    assert "Yel is?" in secret_text(t, 0)
    send(t, 0, "press")
    send(t, 0, "press")
    assert "Formula card?" in secret_text(t, 0)
    send(t, 0, "press")
    body = send(t, 0, "press")
    assert body["rules"]["type"] == "file"
    named = body["rules"]["pseudonyms"]
    assert set(named) == {"yellow", "green"} and red_is not in named.values()
    for colour, code in sheet["pseudonyms"].items():
        if code and colour in named:
            assert named[colour] == code
    assert t.view(None)["phase"] == "flight"


def test_filing_names_the_formula_card_by_its_place() -> None:
    """D (filing): after the names come the places (bags, full lockers, G squares); the
    cursor starts where the sheet saw the true formula card, and the filing names it."""
    from msgspec.structs import replace

    from rules._ultra_secret_board import Seen
    from tests.support.games.ultra_secret import know_all, true_place

    t = hidden(3, 2)
    square, container = true_place(t.state)
    colour = container if square in ("F1", "B1") else COLOURS_US[int(square[1]) - 1]
    slot = "locker" if square in ("F1", "B1") else container
    state = know_all(t.state, 0)
    line = Seen(1, square, colour, slot, state.formula, "search", 0)
    t.state = replace(state, sheets=(state.sheets[0] + (line,), *state.sheets[1:]))
    t._views_at = -1  # the state was edited behind the table's back
    assert labels(t, 0)[0] == "Declare: I know!" and len(labels(t, 0)) == 2
    choose(t, 0, "Declare: I know!")
    for seat in (1, 2):
        choose(t, seat, "Pass (no bug)")
    send(t, 0, "press")
    send(t, 0, "press")
    assert "Formula card?" in secret_text(t, 0)
    places = labels(t, 0)
    assert {"H2 Yel suitcase", "H1 Red briefcase", "B1 Red locker"} <= set(places)
    assert any(p.startswith("G3 ") for p in places) and len(places) == 12 + 6 + 5 + 2
    send(t, 0, "press")
    body = send(t, 0, "press")
    assert (body["rules"]["square"], body["rules"]["container"]) == (square, container)
    assert t.view(None)["phase"] == "flight"


def test_flight_dial_offers_the_flight_squares() -> None:
    """In the flight the dial offers VM1-VM3 and F1 at 3 players."""
    t = hidden(3, 2, declare="any")
    choose(t, 0, "Declare: I know!")
    for seat in (1, 2):
        choose(t, seat, "Pass (no bug)")
    for _ in range(4):
        send(t, 0, "press")
    assert [lb.split()[0] for lb in labels(t, 1)] == ["VM1", "VM2", "VM3", "F1", "Sheet"]
    assert "You flee" in " ".join(t.binding.station_screen(t, 0).lines)
    assert "Red flees" in " ".join(t.binding.station_screen(t, 1).lines)


def test_host_screen_shows_the_board_not_the_cards() -> None:
    """The hub display lists who still has to act, then agents, informants and bugs, each
    square after whose it is ("none" before any is placed); a seat is its colour and its
    number, as many as fit ("+1" for the rest)."""
    t = hidden()
    title, lines = t.binding.host_screen(t)
    assert title == "Turn 1: Bug"
    assert lines[0] == "Waiting: Red1 Yel2 +1" and lines[1] == "Agents: none"
    assert [line.split(":")[0] for line in lines[1:]] == ["Agents", "Informants", "Bugs"]


def test_advance_and_timer_do_nothing() -> None:
    """Nothing in Ultra Secret is timed or waits for the host."""
    t = hidden()
    assert t.binding.advance(t) is None and t.binding.timer(t) is None


def test_seats_go_by_the_game_colours() -> None:
    """At 6 players seat 3 is Black (hotel H4) and seat 5 Blue, whatever the key set says."""
    t = table(6)
    assert t.binding.station_screen(t, 3).title.startswith("Black ")
    assert t.binding.station_screen(t, 5).title.startswith("Blue ")
    assert "Bug H4 Blk hotel" in labels(hidden(6), 0)


def test_free_dial_offers_every_code_and_a_closed_square_sits_out() -> None:
    """With dial=free the knob offers all 36 dial codes; dialling VM1 sits the agent out."""
    t = hidden(3, 1, dial="free")
    for seat in range(3):
        choose(t, seat, "Pass (no bug)")
    codes = [lb.split()[0] for lb in labels(t, 0)[:-1]]
    assert len(codes) == 36 and "VM6" in codes and "V3" in codes
    choose(t, 0, "VM1")
    choose(t, 1, "H1 Red hotel")
    choose(t, 2, "H2 Yel hotel")
    for seat in range(3):
        choose(t, seat, "Pass (stay)")
    assert "Bad dial: sat out" in t.binding.station_screen(t, 0).lines


def test_host_screen_at_six_players_keeps_every_line() -> None:
    """Six agents on two rows, informants, bugs and who must act: nothing is cut (pages)."""
    from msgspec.structs import replace

    t = hidden(6)
    t.state = replace(
        t.state,
        agents=("VM1", "VM2", "VM3", "VM4", "VM5", "F1"),
        informants=("H3", "H4", "H5", "H6", "G1", "G2"),
        bugs=("G3", "G4", "G5", "V1", "F1", "B1"),
    )
    title, lines = t.binding.host_screen(t)
    assert lines[0].startswith("Waiting:") and "Yel2" in lines[0]
    text = " ".join(lines)
    for head, squares in (
        ("Agents:", t.state.agents),
        ("Informants:", t.state.informants),
        ("Bugs:", t.state.bugs),
    ):
        said = text[text.index(head) + len(head) :].split()
        colours = ["Red1", "Yel2", "Grn3", "Blk4", "Lil5", "Blue6"]
        assert [w for pair in zip(colours, squares, strict=True) for w in pair] == said[:12]
    assert all(len(line) <= 21 for line in lines)
    assert len(title) <= 17  # paged: the display adds " 1/3"
