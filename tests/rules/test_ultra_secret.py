"""Ultra Secret rules, one test per rule or Decision (rules/docs/ultra-secret.md).

Map (test -> the rule or Decision it checks; "D" marks a Decision):
- test_colours_by_player_count: "3-6 players (colours; at 5 drop blue, at 4 blue+lilac,
  at 3 blue+lilac+black)".
- test_bad_counts_and_options_are_refused: "3-6 players"; D option `dial: strict|free`.
- test_each_colour_gets_one_card_of_each_kind: "per player at random one identity card
  (pseudonym), one toothbrush, one real formula (X1-X6)".
- test_hide_puts_the_three_cards_where_the_player_says: "they hide the three in their
  suitcase and briefcase (own hotel) and their locker"; D "the player chooses which one
  holds the card".
- test_hide_refuses_a_bad_layout: same sentence (each card once, locker at B1 or F1).
- test_full_lockers_are_public_once_hidden: D "which lockers are full is public".
- test_missing_colours_get_the_leftovers_at_random: D "the leftover cards (3 per missing
  colour) fill the missing colours' suitcase, briefcase and locker at random".
- test_true_formula_is_the_hidden_fake: "One of the 6 fake formula cards is drawn and
  hidden: its code is the true formula. The other 5 fakes lie on G1-G5."
- test_mole_deck_has_six_per_place: "30 mole cards, D: 6 per secret place".
- test_open_squares_before_the_flight: "V3 is closed at 3-4 players; VM squares are
  closed"; "Movement is not adjacent: an agent may go to any open square".
- test_strict_dial_offers_only_open_squares: D `dial: strict` ("the knob offers only
  open squares"); "An agent must move every turn".
- test_free_dial_sits_an_impossible_square_out: D `free` ("an impossible square = sit
  out a turn"), including staying put and a VM square.
- test_free_dial_in_the_flight_sits_out: D `free` in the flight too: a square off the
  flight list leaves the agent off the board (not alone, not catching).
- test_phases_run_in_order_and_wait_for_everyone: "Turn, 5 phases, all players together".
- test_bug_is_placed_once_and_stays: "(1) optionally place your one bug, once per game,
  on a hotel or a G square, permanent".
- test_choices_are_secret_until_the_phase_resolves: "(2) secretly dial"; the bug and
  informant choices are shown when every seat has chosen.
- test_dials_are_secret_until_the_reveal: "(2) secretly dial ... (4) reveal all dials".
- test_informant_goes_on_hotels_f1_b1_and_may_stay: "(3) optionally post or move your
  informant to a hotel, F1 or B1".
- test_crowded_square_does_nothing: "Two or more agents on one square: nothing happens."
- test_hotel_alone_sees_both_bags: "enemy hotel - look at suitcase and briefcase".
- test_hotel_with_an_informant_sees_one_bag: "(only one of them if any informant is
  there)", D: any informant counts, the searcher's own too.
- test_own_hotel_and_empty_places_ask_nothing: "An agent alone may act: enemy hotel".
- test_lockers_two_alone_one_with_an_informant: "F1/B1 - open two lockers there (one if
  an informant is there)".
- test_mole_square_draws_a_card: "V square - draw a mole card".
- test_mole_deck_is_reshuffled_when_it_runs_out: "Used mole cards go to a discard pile,
  reshuffled when the deck runs out."
- test_read_with_the_matching_mole_card: "G square - with the matching mole card ...
  read the fake formula there".
- test_read_with_two_spare_mole_cards: "(or two spare mole cards)".
- test_two_mole_cards_only_if_both_are_useless_seed_3: D « deux cartes Taupe inutiles »:
  both cards' secret places already known to their holder (issue 26).
- test_a_search_may_be_passed: "An agent alone may act" (may, not must).
- test_lone_agent_on_a_g_square_is_always_asked: D: whether one holds mole cards is
  secret, so every lone agent on a G square is asked (and may only pass without cards).
- test_seen_cards_are_shared_with_bugs_and_informants: "Whatever card is seen is also
  shown to the owner of every bug and informant on that square."
- test_sheet_records_what_where_and_when: "The hub keeps each player's investigation
  sheet (what they saw, where)".
- test_sheet_deduces_the_last_pseudonym_and_the_formula: "knows every enemy's pseudonym
  and the formula code" (the sixth pseudonym and the hidden fake follow by elimination).
- test_declaring_needs_a_complete_sheet: "a player who knows every enemy's pseudonym
  and the formula code declares (knob) at phase 1"; D option `declare: known|any`.
- test_bug_or_declare_not_both: D: one phase-1 choice per seat (bug, declare or pass).
- test_several_declare_highest_digit_sum_flees: "highest sum of the digits of their
  agent, informant and bug squares flees".
- test_declaration_tie_is_broken_at_random: "(ties random)".
- test_fugitive_files_secret_answers: "The fugitive files, secretly, a pseudonym for
  each enemy colour and a formula code."
- test_the_formula_card_is_taken_in_front_of_everyone: D (filing) « prend sur le
  plateau la carte formule »: the place is public at once, the pseudonyms stay secret.
- test_filing_names_a_place_where_a_card_lies: D (filing) "they name the place of that card
  (square and container, e.g. G3, or a suitcase, briefcase or locker ...)".
- test_knowing_the_code_is_not_enough: D (filing) "right only if the card at that place is
  the true formula. Knowing the true code is not enough".
- test_sheet_tells_where_the_true_formula_was_seen: the sheet and the best filing follow
  where the true formula card was seen.
- test_complete_sheet_must_declare: D "a player whose investigation sheet is complete may
  no longer pass; their next choice is the declaration".
- test_hide_step_shows_no_flight_square: the public `open` list during the hide step.
- test_flight_squares_by_player_count: "squares by player count: 3p VM1-3 F1; 4p VM1-4
  F1; 5p VM1-5 V1 F1; 6p VM1-5 V1 V2 F1".
- test_flight_is_dial_and_move_only_and_agents_may_stay: "Then only dial+move";
  "agents may stay".
- test_escape_alone_on_f1_once: "escapes when alone on F1 once".
- test_staying_alone_on_f1_escapes: D: in the flight staying on a square counts as
  landing there.
- test_escape_alone_five_times_in_all: "or alone five times in all".
- test_capture_needs_two_enemies: "is caught when two or more enemy agents share his
  square".
- test_outcomes_and_scores: "Outcomes: escaped with everything right - fugitive wins;
  escaped with anything wrong - nobody wins; caught - the others share".
- test_game_over_refuses_actions_and_reveals: the game ends at the outcome.
- test_view_keys: issue 5 view contract ("table", sheet, own cards, moles, own dial).
- test_redeal_really_changes_secrets: the re-deal the no-leak tests use is not a no-op.
- test_no_leak_when_others_are_redealt: a seat's view does not change when everyone
  else's hidden cards, dials, choices and mole cards are re-dealt.
- test_public_view_holds_no_secret: view(None) does not change when every secret is
  re-dealt.
- test_private_events_reach_only_their_seat: events carry visibility.
- test_messages_fit_the_screen: every refusal is a short player message.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from msgspec.structs import replace

from rules import get_game
from rules._ultra_secret_board import (
    COLOURS,
    FORMULAS,
    PSEUDONYMS,
    SECRET_PLACES,
    TOOTHBRUSH,
    Filing,
    Seen,
    knowledge,
)
from rules.core import MESSAGE_MAX, BadOptions, IllegalAction, encode
from rules.ultra_secret import (
    GAME,
    Bug,
    Declare,
    Dial,
    File,
    Hide,
    Informant,
    Open,
    Pass,
    Read,
    Search,
    UltraState,
    open_squares,
)
from tests.support.games.ultra_secret import (
    SAMPLES,
    know_all,
    redeal,
    true_place,
)

# ---------------------------------------------------------------- helpers


def hidden(players: int = 3, seed: int = 1, **options: str) -> UltraState:
    """A game past setup: every seat hid identity/toothbrush/formula, locker at B1."""
    state = GAME.setup(players, options, seed)
    for s in range(players):
        state, _ = GAME.apply(state, Hide(s, "identity", "toothbrush", "formula", "B1"))
    return state


def turn(
    state: UltraState,
    dials: list[str],
    bugs: dict[int, str] | None = None,
    informants: dict[int, str] | None = None,
) -> UltraState:
    """Play phases 1-3 (bugs, dials, informants); return the state after the move."""
    for s in range(state.players):
        square = (bugs or {}).get(s)
        state, _ = GAME.apply(state, Bug(s, square) if square else Pass(s))
    for s in range(state.players):
        state, _ = GAME.apply(state, Dial(s, dials[s]))
    for s in range(state.players):
        square = (informants or {}).get(s)
        state, _ = GAME.apply(state, Informant(s, square) if square else Pass(s))
    return state


def lockers_at(state: UltraState, station: str, **where: str) -> UltraState:
    """Move every colour's locker card to ``station`` (``colour=station`` overrides)."""
    stashes = tuple(
        replace(st, at=where.get(c, station)) for c, st in zip(COLOURS, state.stashes, strict=False)
    )
    return replace(state, stashes=stashes)


def refused(state: UltraState, action: object, message: str) -> None:
    """The action is refused with ``message`` and nothing changes."""
    before = encode(state)
    with pytest.raises(IllegalAction, match=message):
        GAME.apply(state, action)  # type: ignore[arg-type]
    assert encode(state) == before


def sheet(state: UltraState, seat: int) -> list[tuple[str, str, str, str, str]]:
    """(square, colour, slot, card, how) of each sheet line, drawn mole cards aside."""
    return [
        (e.square, e.colour, e.slot, e.card, e.how) for e in state.sheets[seat] if e.how != "draw"
    ]


def flight(players: int = 3, fugitive: int = 0, right: bool = True, **options: str) -> UltraState:
    """A game in its flight, ``fugitive`` having filed right (or named a fake's place)."""
    state = know_all(hidden(players, **options), fugitive)
    for s in range(players):
        state, _ = GAME.apply(state, Declare(s) if s == fugitive else Pass(s))
    names = {c: state.stashes[i].identity for i, c in enumerate(COLOURS[:players]) if i != fugitive}
    square, container = true_place(state) if right else ("G1", "")
    state, _ = GAME.apply(state, File(fugitive, names, square, container))
    assert state.phase == "flight"
    return state


def fly(state: UltraState, dials: list[str]) -> UltraState:
    """One flight turn."""
    for s in range(state.players):
        state, _ = GAME.apply(state, Dial(s, dials[s]))
    return state


# ---------------------------------------------------------------- setup


def test_colours_by_player_count() -> None:
    """Seats take red, yellow, green, black, lilac, blue; fewer players drop from the end."""
    assert get_game("ultra-secret") is GAME
    expected = {
        6: COLOURS,
        5: ("red", "yellow", "green", "black", "lilac"),
        4: ("red", "yellow", "green", "black"),
        3: ("red", "yellow", "green"),
    }
    for n, colours in expected.items():
        state = GAME.setup(n, {}, 0)
        assert GAME.view(state, None)["colours"] == list(colours)
        assert [GAME.view(state, s)["colour"] for s in range(n)] == list(colours)


def test_bad_counts_and_options_are_refused() -> None:
    """2 or 7 players, an unknown option or a bad option value is refused at setup."""
    for n in (2, 7):
        with pytest.raises(BadOptions):
            GAME.setup(n, {}, 0)
    for options in ({"dial": "loose"}, {"declare": "maybe"}, {"colour": "red"}):
        with pytest.raises(BadOptions):
            GAME.setup(3, options, 0)
    assert GAME.setup(3, {"dial": "free", "declare": "any"}, 0).options.dial == "free"


def test_each_colour_gets_one_card_of_each_kind() -> None:
    """All six colours hold one distinct pseudonym and one distinct real formula."""
    idents, formulas = set(), set()
    for seed in range(30):
        state = GAME.setup(4, {}, seed)
        assert sorted(st.identity for st in state.stashes) == list(PSEUDONYMS)
        assert sorted(st.formula for st in state.stashes) == list(FORMULAS)
        idents.add(state.stashes[0].identity)
        formulas.add(state.stashes[0].formula)
    assert len(idents) > 3 and len(formulas) > 3  # dealt at random


def test_hide_puts_the_three_cards_where_the_player_says() -> None:
    """Hide maps identity/toothbrush/formula to suitcase, briefcase, locker at F1 or B1."""
    state = GAME.setup(3, {}, 4)
    state, _ = GAME.apply(state, Hide(0, "formula", "identity", "toothbrush", "F1"))
    st = state.stashes[0]
    assert (st.suitcase, st.briefcase, st.locker, st.at) == (
        st.formula,
        st.identity,
        TOOTHBRUSH,
        "F1",
    )
    mine = GAME.view(state, 0)["hidden"]
    assert mine["suitcase"] == st.formula and mine["at"] == "F1"
    assert GAME.view(state, 1)["hidden"]["suitcase"] is None
    assert state.phase == "hide"
    for s in (1, 2):
        state, _ = GAME.apply(state, Hide(s, "identity", "toothbrush", "formula", "B1"))
    assert (state.phase, state.turn) == ("bug", 1)


def test_hide_refuses_a_bad_layout() -> None:
    """Each card is hidden once, the locker is at F1 or B1, and a seat hides once."""
    state = GAME.setup(3, {}, 4)
    refused(state, Hide(0, "identity", "identity", "formula", "B1"), "once each")
    refused(state, Hide(0, "identity", "toothbrush", "formula", "G1"), "F1 or B1")
    refused(state, Hide(5, "identity", "toothbrush", "formula", "B1"), "No such seat")
    state, _ = GAME.apply(state, Hide(0, "identity", "toothbrush", "formula", "B1"))
    refused(state, Hide(0, "identity", "toothbrush", "formula", "B1"), "already")
    refused(state, Dial(1, "H1"), "Not the time")


def test_full_lockers_are_public_once_hidden() -> None:
    """Where each colour's locker is full is public after hiding, secret while hiding."""
    state = GAME.setup(3, {}, 4)
    state, _ = GAME.apply(state, Hide(0, "identity", "toothbrush", "formula", "F1"))
    assert "red" not in GAME.view(state, None)["lockers"]
    assert "red" not in GAME.view(state, 1)["table"]["lockers"]
    for s in (1, 2):
        state, events = GAME.apply(state, Hide(s, "identity", "toothbrush", "formula", "B1"))
    lockers = GAME.view(state, None)["lockers"]
    assert lockers["red"] == "F1" and lockers["yellow"] == "B1" and set(lockers) == set(COLOURS)
    assert any(e.kind == "lockers" and e.to is None for e in events)


def test_missing_colours_get_the_leftovers_at_random() -> None:
    """A missing colour's suitcase, briefcase, locker hold its three cards in random order."""
    layouts, stations = set(), set()
    for seed in range(40):
        state = GAME.setup(3, {}, seed)
        for st in state.stashes[3:]:
            cards = (st.suitcase, st.briefcase, st.locker)
            assert sorted(cards) == sorted((st.identity, st.formula, TOOTHBRUSH))
            layouts.add(tuple("P" if c.startswith("P") else c[0] for c in cards))
            stations.add(st.at)
        for st in state.stashes[:3]:
            assert st.suitcase == st.briefcase == st.locker == st.at == ""
    assert len(layouts) == 6 and stations == {"F1", "B1"}


def test_true_formula_is_the_hidden_fake() -> None:
    """G1-G5 hold five distinct fakes; the sixth fake code is the true formula."""
    seen = set()
    for seed in range(30):
        state = GAME.setup(5, {}, seed)
        assert len(state.fakes) == 5
        assert sorted((*state.fakes, state.formula)) == list(FORMULAS)
        seen.add(state.formula)
    assert len(seen) > 3


def test_mole_deck_has_six_per_place() -> None:
    """The mole deck holds 30 cards, 6 for each secret place, shuffled."""
    state = GAME.setup(3, {}, 2)
    assert Counter(state.deck) == {g: 6 for g in SECRET_PLACES}
    assert state.deck != GAME.setup(3, {}, 3).deck
    assert GAME.view(state, None)["deck"] == 30


# ---------------------------------------------------------------- squares and dials


def test_open_squares_before_the_flight() -> None:
    """Hotels, F1, B1, V1, V2, G1-G5 are open; V3 only at 5-6 players; VM never."""
    base = {f"H{i}" for i in range(1, 7)} | {"F1", "B1", "V1", "V2"} | set(SECRET_PLACES)
    for n in (3, 4, 5, 6):
        state = hidden(n)
        expected = base | ({"V3"} if n >= 5 else set())
        assert set(open_squares(state, 0)) == expected
        assert set(GAME.view(state, None)["open"]) == expected


def test_hide_step_shows_no_flight_square() -> None:
    """While hiding, the public open list is the investigation board, not the flight's."""
    for n in (3, 4, 5, 6):
        state = GAME.setup(n, {}, 2)
        assert state.phase == "hide"
        opened = GAME.view(state, None)["open"]
        assert not any(sq.startswith("VM") for sq in opened)
        assert set(opened) == set(open_squares(hidden(n), 0))


def test_strict_dial_offers_only_open_squares() -> None:
    """Strict mode refuses closed squares, codes off the dial, and the agent's own square."""
    state = _skip_searches(turn(hidden(3), ["H2", "V1", "G1"]))
    for s in range(3):
        state, _ = GAME.apply(state, Pass(s))
    refused(state, Dial(0, "VM1"), "closed")
    refused(state, Dial(0, "V3"), "closed")
    refused(state, Dial(0, "B2"), "closed")  # on the dial, but no such square
    refused(state, Dial(0, "H7"), "not on the dial")
    refused(state, Dial(0, state.agents[0]), "must move")
    dials = [a.square for a in GAME.legal_actions(state, 0) if isinstance(a, Dial)]
    assert state.agents[0] not in dials and "V3" not in dials and "VM1" not in dials


def _skip_searches(state: UltraState) -> UltraState:
    while state.phase == "search":
        seat = state.pending.index("")
        state, _ = GAME.apply(state, Pass(seat))
    return state


def test_free_dial_sits_an_impossible_square_out() -> None:
    """Free mode takes any dial code; an impossible one leaves the agent off the board."""
    state = hidden(3, dial="free")
    state = _skip_searches(turn(state, ["H2", "B2", "VM1"]))
    assert state.agents == ("H2", "", "")
    notes = GAME.view(state, None)["notes"]
    assert {n["seat"] for n in notes if n["act"] == "sat-out"} == {1, 2}
    state = _skip_searches(turn(state, ["H2", "H1", "V3"]))
    assert state.agents == ("", "H1", "")  # staying put and a closed V3 both sit out
    state = _skip_searches(turn(state, ["H3", "B1", "F1"]))
    assert state.agents == ("H3", "B1", "F1")  # back on the board next turn
    refused(replace(state, phase="dial"), Dial(0, "Z9"), "not on the dial")


def test_free_dial_in_the_flight_sits_out() -> None:
    """In free mode a flight dial off the list (H1, V1 at 3p) leaves the agent off the board."""
    state = flight(3, dial="free")
    state = fly(state, ["H1", "VM1", "VM1"])
    assert state.agents == ("", "VM1", "VM1") and state.alone == 0
    state = fly(state, ["VM2", "V1", "VM2"])
    assert state.agents == ("VM2", "", "VM2") and state.phase == "flight"
    state = fly(state, ["VM3", "VM3", "VM3"])
    assert state.outcome == "caught"


def test_phases_run_in_order_and_wait_for_everyone() -> None:
    """bug -> dial -> informant -> move; each phase waits for every seat, then the next."""
    state = hidden(3)
    seen = [state.phase]
    for phase, make in (
        ("bug", Pass),
        ("dial", lambda s: Dial(s, ["V1", "V2", "H3"][s])),
        ("informant", Pass),
    ):
        assert state.phase == phase
        for s in range(3):
            assert state.phase == phase
            assert GAME.view(state, None)["waiting"] == list(range(s, 3))
            state, _ = GAME.apply(state, make(s))
            assert GAME.view(state, None)["acted"][s] or state.phase != phase
        seen.append(state.phase)
    assert seen == ["bug", "dial", "informant", "bug"]
    assert state.turn == 2 and state.agents == ("V1", "V2", "H3")


def test_bug_is_placed_once_and_stays() -> None:
    """A bug goes on a hotel or G square, once per game, and never moves."""
    state = hidden(3)
    refused(state, Bug(0, "F1"), "hotel or a G square")
    refused(state, Bug(0, "V1"), "hotel or a G square")
    state = turn(state, ["V1", "V2", "H3"], bugs={0: "G2", 1: "H3"})
    assert state.bugs == ("G2", "H3", "")
    refused(state, Bug(0, "G3"), "already placed")
    assert Bug(0, "G3") not in GAME.legal_actions(state, 0)
    state = turn(state, ["H4", "H5", "H6"], bugs={2: "G2"})
    state = _skip_searches(state)
    assert state.bugs == ("G2", "H3", "G2")  # several bugs may share a square


def test_choices_are_secret_until_the_phase_resolves() -> None:
    """A pending bug or informant choice shows only to its seat until all have chosen."""
    state = hidden(3)
    state, _ = GAME.apply(state, Bug(0, "G4"))
    assert GAME.view(state, None)["bugs"] == [None, None, None]
    assert GAME.view(state, 0)["choice"] == "G4"
    assert GAME.view(state, 1)["choice"] is None
    state, _ = GAME.apply(state, Pass(1))
    state, _ = GAME.apply(state, Pass(2))
    assert GAME.view(state, None)["bugs"] == ["G4", None, None]
    for s in range(3):
        state, _ = GAME.apply(state, Dial(s, ["V1", "V2", "H1"][s]))
    state, _ = GAME.apply(state, Informant(1, "F1"))
    assert GAME.view(state, None)["informants"] == [None, None, None]
    assert GAME.view(state, 1)["choice"] == "F1"


def test_dials_are_secret_until_the_reveal() -> None:
    """A dial shows only on its own station until every dial is revealed together."""
    state = hidden(3)
    for s in range(3):
        state, _ = GAME.apply(state, Pass(s))
    state, _ = GAME.apply(state, Dial(0, "G5"))
    assert GAME.view(state, 0)["dial"] == "G5"
    assert GAME.view(state, 1)["dial"] is None
    for s in (1, 2):
        state, _ = GAME.apply(state, Dial(s, ["H4", "G3", "H5"][s]))
    assert state.phase == "informant"
    assert GAME.view(state, 0)["dial"] == "G5"
    assert GAME.view(state, 1)["dial"] == "G3"  # each station shows its own dial only
    assert "G5" not in GAME.view(state, None)["revealed"]
    for s in range(3):
        state, events = GAME.apply(state, Pass(s))
    assert GAME.view(state, None)["revealed"] == ["G5", "G3", "H5"]
    assert GAME.view(state, 0)["dial"] is None
    assert any(e.kind == "revealed" and e.to is None for e in events)


def test_informant_goes_on_hotels_f1_b1_and_may_stay() -> None:
    """Informants go on H1-H6, F1 or B1 (several may share); passing keeps them put."""
    state = turn(hidden(3), ["V1", "V2", "H3"])
    for s in range(3):
        state, _ = GAME.apply(state, Pass(s))
    for s in range(3):
        state, _ = GAME.apply(state, Dial(s, ["H4", "H5", "H6"][s]))
    refused(state, Informant(0, "G1"), "hotel, F1 or B1")
    refused(state, Informant(0, "V1"), "hotel, F1 or B1")
    state, _ = GAME.apply(state, Informant(0, "B1"))
    state, _ = GAME.apply(state, Informant(1, "B1"))
    state, _ = GAME.apply(state, Informant(2, "H2"))
    state = _skip_searches(state)
    assert state.informants == ("B1", "B1", "H2")
    for s in range(3):
        state, _ = GAME.apply(state, Pass(s))
    for s in range(3):
        state, _ = GAME.apply(state, Dial(s, ["G1", "G2", "G3"][s]))
    refused(state, Informant(0, "B1"), "already there")
    state, _ = GAME.apply(state, Pass(0))
    state, _ = GAME.apply(state, Informant(1, "F1"))
    state, _ = GAME.apply(state, Pass(2))
    assert state.informants == ("B1", "F1", "H2")


def test_crowded_square_does_nothing() -> None:
    """Two agents on one square neutralise each other: no search, no mole card."""
    state = turn(hidden(3), ["V1", "V1", "H3"])
    assert state.hands == ((), (), ())
    assert state.phase == "bug"  # green on its own hotel: nothing to do either
    notes = GAME.view(state, None)["notes"]
    assert [(n["seat"], n["act"]) for n in notes] == [(0, "crowded"), (1, "crowded")]
    state = turn(hidden(3), ["H2", "H2", "G1"])
    assert state.pending == ("-", "-", "")  # only the lone agent may act


# ---------------------------------------------------------------- searches


def test_hotel_alone_sees_both_bags() -> None:
    """Alone in an enemy hotel with no informant: suitcase and briefcase are both seen."""
    state = turn(hidden(3), ["H2", "V1", "V2"])
    assert state.phase == "search" and state.pending == ("", "-", "-")
    state, events = GAME.apply(state, Search(0))
    yellow = state.stashes[1]
    assert sheet(state, 0) == [
        ("H2", "yellow", "suitcase", yellow.suitcase, "search"),
        ("H2", "yellow", "briefcase", yellow.briefcase, "search"),
    ]
    assert state.phase == "bug"
    assert [e.to for e in events if e.kind == "seen"] == [(0,)]


def test_hotel_with_an_informant_sees_one_bag() -> None:
    """Any informant in the hotel (even the searcher's own) allows one bag only."""
    for owner in (1, 0):
        state = turn(hidden(3), ["H2", "V1", "V2"], informants={owner: "H2"})
        refused(state, Search(0), "pick one bag")
        refused(state, Search(0, "locker"), "suitcase or the briefcase")
        assert Search(0) not in GAME.legal_actions(state, 0)
        state, _ = GAME.apply(state, Search(0, "briefcase"))
        assert sheet(state, 0) == [
            ("H2", "yellow", "briefcase", state.stashes[1].briefcase, "search")
        ]


def test_own_hotel_and_empty_places_ask_nothing() -> None:
    """Alone on your own hotel, on a V square or with no enemy locker there: no search."""
    state = turn(lockers_at(hidden(3), "B1"), ["H1", "V1", "F1"])
    assert state.phase == "bug" and state.pending == ("", "", "")
    refused(replace(state, phase="search", pending=("", "-", "-")), Search(0), "no luggage")


def test_lockers_two_alone_one_with_an_informant() -> None:
    """Alone at B1: open one or two full enemy lockers; with an informant there, one."""
    state = turn(lockers_at(hidden(4), "B1", lilac="F1"), ["B1", "V1", "V2", "H1"])
    refused(state, Open(0, ("yellow", "green", "black")), "one or two")
    refused(state, Open(0, ("red",)), "full enemy lockers")
    refused(state, Open(0, ("yellow", "yellow")), "one or two")
    refused(state, Open(0, ("lilac",)), "full enemy lockers")  # lilac's locker is at F1
    state2, _ = GAME.apply(state, Open(0, ("yellow", "black")))
    assert sheet(state2, 0) == [
        ("B1", "yellow", "locker", state.stashes[1].locker, "search"),
        ("B1", "black", "locker", state.stashes[3].locker, "search"),
    ]
    state = turn(hidden(4), ["B1", "V1", "V2", "H1"], informants={3: "B1"})
    refused(state, Open(0, ("yellow", "black")), "Open one locker")
    assert all(len(a.lockers) == 1 for a in GAME.legal_actions(state, 0) if isinstance(a, Open))
    state, _ = GAME.apply(state, Open(0, ("green",)))
    assert [line[1] for line in sheet(state, 0)] == ["green"]


def test_mole_square_draws_a_card() -> None:
    """Alone on a V square: the top mole card goes to the agent, face down."""
    state = hidden(3)
    top = state.deck[0]
    state = turn(state, ["V1", "V2", "V2"])
    assert state.hands == ((top,), (), ())
    assert len(state.deck) == 29
    assert GAME.view(state, 0)["moles"] == [top]
    assert state.sheets[0] == (Seen(1, "V1", "", "mole", top, "draw", 0),)
    assert GAME.view(state, None)["moles"] == [1, 0, 0]
    assert GAME.view(state, 1)["moles"] == []


def test_mole_deck_is_reshuffled_when_it_runs_out() -> None:
    """An empty deck is remade from the shuffled discards; with none left, no card."""
    state = replace(hidden(3), deck=(), discard=("G1", "G2", "G3"))
    state = turn(state, ["V1", "H1", "H2"])
    assert len(state.hands[0]) == 1 and len(state.deck) == 2 and state.discard == ()
    assert Counter((*state.hands[0], *state.deck)) == Counter(("G1", "G2", "G3"))
    empty = replace(hidden(3), deck=(), discard=())
    empty = turn(empty, ["V1", "H1", "H2"])
    assert empty.hands[0] == ()
    assert any(n["act"] == "deck-empty" for n in GAME.view(empty, None)["notes"])


def test_read_with_the_matching_mole_card() -> None:
    """Alone on G3 with a G3 mole card: the fake there is read, the card discarded."""
    state = replace(hidden(3), hands=(("G1", "G3"), (), ()))
    state = turn(state, ["G3", "V1", "V2"])
    refused(state, Read(0, ("G1",)), "must be the G3 card")
    refused(state, Read(0, ("G4",)), "must be the G3 card")
    state, _ = GAME.apply(state, Read(0, ("G3",)))
    assert state.hands[0] == ("G1",) and state.discard == ("G3",)
    assert sheet(state, 0) == [("G3", "", "fake", state.fakes[2], "search")]
    assert GAME.view(state, 0)["sheet"]["fakes"]["G3"] == state.fakes[2]


def knows_fakes(state: UltraState, seat: int, *places: str) -> UltraState:
    """Add the fakes of ``places`` to a seat's sheet, as if it had read them."""
    lines = tuple(
        Seen(1, g, "", "fake", state.fakes[SECRET_PLACES.index(g)], "search", seat) for g in places
    )
    sheets = list(state.sheets)
    sheets[seat] = sheets[seat] + lines
    return replace(state, sheets=tuple(sheets))


def test_read_with_two_spare_mole_cards() -> None:
    """Two useless mole cards replace the matching one; cards not held are refused."""
    state = knows_fakes(replace(hidden(3), hands=(("G1", "G1", "G5"), (), ())), 0, "G1", "G5")
    state = turn(state, ["G2", "V1", "V2"])
    refused(state, Read(0, ("G2", "G2")), "do not hold")
    refused(state, Read(0, ("G1", "G1", "G5")), "matching mole card or two")
    assert Read(0, ("G1", "G5")) in GAME.legal_actions(state, 0)
    state, _ = GAME.apply(state, Read(0, ("G1", "G5")))
    assert state.hands[0] == ("G1",) and sorted(state.discard) == ["G1", "G5"]
    assert ("G2", "", "fake", state.fakes[1], "search") in sheet(state, 0)


def test_two_mole_cards_only_if_both_are_useless_seed_3() -> None:
    """Seed 3: Red draws G4 and G3, knows no fake, and may not read G1 with them."""
    state = hidden(3, seed=3)
    state = _skip_searches(turn(state, ["V1", "H2", "H3"]))
    state = _skip_searches(turn(state, ["V2", "H3", "H2"]))
    assert state.hands[0] == ("G3", "G4") and knowledge(state, 0).fakes == {}
    at_g1 = turn(state, ["G1", "H2", "H3"])
    assert GAME.legal_actions(at_g1, 0) == [Pass(0)]
    refused(at_g1, Read(0, ("G3", "G4")), "already know")
    half = turn(knows_fakes(state, 0, "G3"), ["G1", "H2", "H3"])
    assert GAME.legal_actions(half, 0) == [Pass(0)]
    refused(half, Read(0, ("G3", "G4")), "already know")
    both = turn(knows_fakes(state, 0, "G3", "G4"), ["G1", "H2", "H3"])
    assert Read(0, ("G3", "G4")) in GAME.legal_actions(both, 0)
    both, _ = GAME.apply(both, Read(0, ("G3", "G4")))
    assert knowledge(both, 0).fakes["G1"] == both.fakes[0] and both.hands[0] == ()


def test_a_search_may_be_passed() -> None:
    """A lone agent may decline to act; nothing is seen and the turn goes on."""
    state = turn(hidden(3), ["H2", "V1", "V2"])
    assert Pass(0) in GAME.legal_actions(state, 0)
    state, _ = GAME.apply(state, Pass(0))
    assert state.sheets[0] == () and state.phase == "bug"


def test_lone_agent_on_a_g_square_is_always_asked() -> None:
    """Alone on a G square with no mole card: still asked (secret hand), may only pass."""
    state = turn(hidden(3), ["G1", "V1", "V2"])
    assert state.phase == "search" and state.pending[0] == ""
    assert GAME.legal_actions(state, 0) == [Pass(0)]
    refused(state, Read(0, ("G1",)), "do not hold")


def test_seen_cards_are_shared_with_bugs_and_informants() -> None:
    """Bug and informant owners on the square see the same cards; nobody else does."""
    state = hidden(5)
    state = turn(state, ["G4", "V1", "V2", "V3", "H1"], bugs={1: "H3", 2: "G4"})
    state = _skip_searches(state)
    state = turn(state, ["H3", "G1", "G2", "F1", "H2"], informants={3: "H3", 4: "B1"})
    state, events = GAME.apply(state, Search(0, "suitcase"))
    card = state.stashes[2].suitcase
    assert sheet(state, 0) == [("H3", "green", "suitcase", card, "search")]
    assert sheet(state, 1) == [("H3", "green", "suitcase", card, "bug")]
    assert sheet(state, 3) == [("H3", "green", "suitcase", card, "informant")]
    assert sheet(state, 2) == [] and sheet(state, 4) == []
    assert sorted(e.to for e in events if e.kind == "seen") == [(0,), (1,), (3,)]
    # a fake read on G4 reaches the bug there
    state = _skip_searches(state)
    state = replace(state, hands=((), (), (), (), ("G4",)))
    state = turn(state, ["V1", "V2", "H1", "H2", "G4"])
    state, _ = GAME.apply(state, Read(4, ("G4",)))
    assert sheet(state, 2)[-1] == ("G4", "", "fake", state.fakes[3], "bug")


def test_sheet_records_what_where_and_when() -> None:
    """Each sheet line has the turn, square, whose container, the card and how it came."""
    state = hidden(3)
    state = _skip_searches(turn(state, ["V1", "V2", "H1"]))
    state = turn(state, ["H2", "V1", "V2"])
    state, _ = GAME.apply(state, Search(0))
    entries = GAME.view(state, 0)["sheet"]["entries"]
    assert [
        (e["turn"], e["square"], e["colour"], e["slot"], e["how"], e["by"]) for e in entries
    ] == [
        (1, "V1", None, "mole", "draw", 0),
        (2, "H2", "yellow", "suitcase", "search", 0),
        (2, "H2", "yellow", "briefcase", "search", 0),
    ]
    grid = GAME.view(state, 0)["sheet"]["grid"]
    assert grid["yellow"]["suitcase"] == state.stashes[1].suitcase
    assert grid["red"]["locker"] == state.stashes[0].locker  # own cards are on the sheet


def test_sheet_deduces_the_last_pseudonym_and_the_formula() -> None:
    """Five known identities give the sixth; five fakes give the true formula."""
    state = hidden(3)
    lines = [
        Seen(1, "H2", c, "suitcase", state.stashes[i].identity, "search", 0)
        for i, c in enumerate(COLOURS)
        if i not in (0, 5)
    ]
    fakes = [
        Seen(1, g, "", "fake", f, "search", 0)
        for g, f in zip(SECRET_PLACES, state.fakes, strict=False)
    ]
    state = replace(state, sheets=(tuple(lines + fakes[:4]), (), ()))
    know = knowledge(state, 0)
    assert know.pseudonyms["blue"] == state.stashes[5].identity
    assert know.formula == "" and not know.complete
    state = replace(state, sheets=(tuple(lines + fakes), (), ()))
    know = knowledge(state, 0)
    assert know.formula == state.formula and know.complete
    view = GAME.view(state, 0)["sheet"]
    assert view["formula"] == state.formula and view["complete"] is True


def test_declaring_needs_a_complete_sheet() -> None:
    """With `declare: known` only a complete sheet may declare; `any` lets anyone."""
    state = hidden(3)
    refused(state, Declare(0), "not complete")
    assert Declare(0) not in GAME.legal_actions(state, 0)
    state = know_all(state, 0)
    assert Declare(0) in GAME.legal_actions(state, 0)
    state, _ = GAME.apply(state, Declare(0))
    assert state.pending[0] == "declare"
    loose = hidden(3, declare="any")
    assert Declare(1) in GAME.legal_actions(loose, 1)
    loose, _ = GAME.apply(loose, Declare(1))
    for s in (0, 2):
        loose, _ = GAME.apply(loose, Pass(s))
    assert (loose.phase, loose.fugitive) == ("file", 1)


def test_bug_or_declare_not_both() -> None:
    """A seat makes one phase-1 choice: after its bug it cannot also declare."""
    state = hidden(3, declare="any")
    state, _ = GAME.apply(state, Bug(0, "G1"))
    refused(state, Declare(0), "already chosen")
    assert GAME.legal_actions(state, 0) == []


def test_complete_sheet_must_declare() -> None:
    """D: a seat whose sheet is complete may no longer pass (or bug): it declares."""
    for declare in ("known", "any"):
        state = know_all(hidden(3, declare=declare), 0)
        assert GAME.legal_actions(state, 0) == [Declare(0)]
        refused(state, Pass(0), "complete")
        refused(state, Bug(0, "G1"), "complete")
        assert Pass(1) in GAME.legal_actions(state, 1)
        state, _ = GAME.apply(state, Declare(0))
        assert state.pending[0] == "declare"


def test_several_declare_highest_digit_sum_flees() -> None:
    """Digit sum of agent + informant + bug squares decides who flees; no square = 0."""
    state = replace(
        hidden(3, declare="any"),
        agents=("B1", "G2", "V1"),
        informants=("H3", "", "H1"),
        bugs=("G3", "H6", ""),
    )
    for s in range(3):
        state, events = GAME.apply(state, Declare(s))
    # red 1+3+3 = 7, yellow 2+0+6 = 8, green 1+1+0 = 2
    assert state.fugitive == 1 and state.declared == (0, 1, 2)
    (ev,) = [e for e in events if e.kind == "fugitive"]
    assert ev.data["sums"] == {"0": 7, "1": 8, "2": 2} and ev.to is None
    assert GAME.view(state, None)["fugitive"] == 1
    assert state.pending == ("-", "", "-")


def test_public_view_keeps_the_digit_sums_that_chose_the_fugitive() -> None:
    """The table sees each declarer's digit sum after the agents have moved on."""
    state = replace(
        hidden(3, declare="any"),
        agents=("B1", "G2", "V1"),
        informants=("H3", "", "H1"),
        bugs=("G3", "H6", ""),
    )
    assert GAME.view(state, None)["sums"] == {}
    for s in (0, 1):
        state, _ = GAME.apply(state, Declare(s))
    state, _ = GAME.apply(state, Pass(2))
    public = GAME.view(state, None)
    assert public["declared"] == [0, 1] and public["sums"] == {"0": 7, "1": 8}
    assert GAME.view(replace(state, agents=("VM1", "VM2", "VM3")), None)["sums"] == public["sums"]


def test_declaration_tie_is_broken_at_random() -> None:
    """Equal sums: the fugitive is drawn from the tied seats, reproducibly per seed."""
    winners = set()
    for seed in range(20):
        state = replace(hidden(4, seed=seed, declare="any"), agents=("H1", "H2", "H1", "H3"))
        state, _ = GAME.apply(state, Declare(0))
        state, _ = GAME.apply(state, Declare(2))
        state, _ = GAME.apply(state, Pass(1))
        again = state
        state, _ = GAME.apply(state, Pass(3))
        assert state.fugitive in (0, 2)
        assert GAME.apply(again, Pass(3))[0].fugitive == state.fugitive
        winners.add(state.fugitive)
    assert winners == {0, 2}


def _filing_state(players: int = 3) -> UltraState:
    """Seat 0 knows every pseudonym and the true code, declares, and must file."""
    state = know_all(hidden(players), 0)
    for s in range(players):
        state, _ = GAME.apply(state, Declare(s) if s == 0 else Pass(s))
    assert state.phase == "file"
    return state


def test_fugitive_files_secret_answers() -> None:
    """Only the fugitive files: one pseudonym per enemy colour and a formula card's place."""
    state = _filing_state()
    good = {"yellow": "P1", "green": "P2"}
    refused(state, File(1, good, "G1"), "Nothing for you")
    refused(state, File(0, {"yellow": "P1"}, "G1"), "each enemy colour")
    refused(state, File(0, {"yellow": "P1", "green": "P1"}, "G1"), "only once")
    refused(state, File(0, {"yellow": "P1", "green": "Q7"}, "G1"), "P1 to P6")
    refused(state, Dial(0, "F1"), "Not the time")
    state, _ = GAME.apply(state, File(0, good, "B1", "green"))
    assert state.filing == Filing((("green", "P2"), ("yellow", "P1")), "B1", "green")
    assert GAME.view(state, 0)["filing"] == {
        "pseudonyms": good,
        "square": "B1",
        "container": "green",
    }
    assert GAME.view(state, 1)["filing"] is None
    assert "filing" not in GAME.view(state, None) and "end" not in GAME.view(state, None)


def test_the_formula_card_is_taken_in_front_of_everyone() -> None:
    """D (filing): the place the card was taken from is public at once; the names are not."""
    state = _filing_state()
    assert GAME.view(state, None)["taken"] is None
    views = {}
    for square, container in (("B1", "green"), ("H2", "suitcase"), ("G3", "")):
        for names in ({"yellow": "P1", "green": "P2"}, {"yellow": "P3", "green": "P4"}):
            filed, _ = GAME.apply(state, File(0, names, square, container))
            public = GAME.view(filed, None)
            assert public["taken"] == {"square": square, "container": container or None}
            assert GAME.view(filed, 1)["table"] == public
            views.setdefault(square, []).append(public)
    assert all(a == b for a, b in views.values())  # the pseudonyms leave no trace
    assert views["B1"][0] != views["H2"][0]


def test_filing_names_a_place_where_a_card_lies() -> None:
    """D (filing): a hotel bag, a full locker at F1/B1 (by colour) or a G square."""
    state = _filing_state()
    good = {"yellow": "P1", "green": "P2"}
    state = lockers_at(state, "B1", green="F1")
    refused(state, File(0, good, "H2"), "suitcase or the briefcase")
    refused(state, File(0, good, "H2", "locker"), "suitcase or the briefcase")
    refused(state, File(0, good, "B1"), "locker")
    refused(state, File(0, good, "B1", "green"), "locker")
    refused(state, File(0, good, "G3", "suitcase"), "G square")
    refused(state, File(0, good, "V1"), "formula card")
    refused(state, File(0, good, "VM1"), "formula card")
    for square, container in (("H2", "suitcase"), ("F1", "green"), ("B1", "red"), ("G3", "")):
        GAME.apply(state, File(0, good, square, container))


def test_knowing_the_code_is_not_enough() -> None:
    """D (filing): right only if the named card is the true formula, not by its code."""
    state = _filing_state()
    assert knowledge(state, 0).formula == state.formula
    names = {c: state.stashes[i].identity for i, c in enumerate(COLOURS[:3]) if i != 0}
    square, container = true_place(state)
    others = [(f"H{i + 1}", "briefcase") for i in range(6)] + [("G1", ""), ("G4", "")]
    for place in [p for p in others if p != (square, container)]:
        filed, _ = GAME.apply(state, File(0, names, *place))
        assert fly(filed, ["F1", "VM1", "VM2"]).outcome == "escaped-wrong", place
    filed, _ = GAME.apply(state, File(0, names, square, container))
    end = fly(filed, ["F1", "VM1", "VM2"])
    assert end.outcome == "escaped"
    assert GAME.view(end, None)["end"]["filing"] == {
        "pseudonyms": names,
        "square": square,
        "container": container,
        "card": state.formula,
    }


def test_sheet_tells_where_the_true_formula_was_seen() -> None:
    """The sheet knows the true formula card's place once seen; the best filing names it."""
    state = _filing_state()
    square, container = true_place(state)
    colour = container if square in ("F1", "B1") else COLOURS[int(square[1]) - 1]
    slot = "locker" if square in ("F1", "B1") else container
    assert knowledge(state, 0).formula_at is None or colour == "red"
    line = Seen(2, square, colour, slot, state.formula, "search", 0)
    state = replace(state, sheets=(state.sheets[0] + (line,), *state.sheets[1:]))
    assert knowledge(state, 0).formula_at == (square, container)
    assert GAME.view(state, 0)["sheet"]["formula_at"] == {"square": square, "container": container}
    best = GAME.legal_actions(state, 0)[0]
    assert isinstance(best, File) and (best.square, best.container) == (square, container)


# ---------------------------------------------------------------- flight


def test_flight_squares_by_player_count() -> None:
    """3p VM1-3 F1; 4p VM1-4 F1; 5p VM1-5 V1 F1; 6p VM1-5 V1 V2 F1."""
    vm = [f"VM{i}" for i in range(1, 6)]
    expected = {
        3: {*vm[:3], "F1"},
        4: {*vm[:4], "F1"},
        5: {*vm, "V1", "F1"},
        6: {*vm, "V1", "V2", "F1"},
    }
    for n, squares in expected.items():
        state = flight(n)
        assert set(open_squares(state, 1)) == squares
        assert {a.square for a in GAME.legal_actions(state, 1)} == squares
        refused(state, Dial(1, "H1"), "closed")
        assert set(GAME.view(state, None)["open"]) == squares


def test_flight_is_dial_and_move_only_and_agents_may_stay() -> None:
    """In the flight there is no bug or informant step, and an agent may stay put."""
    state = flight(3)
    refused(state, Bug(1, "H1"), "Not the time")
    refused(state, Informant(1, "H1"), "Not the time")
    state = fly(state, ["VM1", "VM2", "VM2"])
    assert state.phase == "flight" and state.alone == 1
    state = fly(state, ["VM1", "VM2", "VM3"])
    assert state.agents == ("VM1", "VM2", "VM3") and state.alone == 2


def test_escape_alone_on_f1_once() -> None:
    """The fugitive alone on F1 once escapes at once."""
    state = fly(flight(3), ["F1", "VM1", "VM2"])
    assert state.phase == "over" and state.outcome == "escaped"


def test_staying_alone_on_f1_escapes() -> None:
    """Staying on F1 counts: once the enemy there leaves, the fugitive escapes."""
    state = fly(flight(3), ["F1", "F1", "VM2"])
    assert state.phase == "flight"
    state = fly(state, ["F1", "VM1", "VM2"])
    assert state.outcome == "escaped"


def test_escape_alone_five_times_in_all() -> None:
    """Five turns alone in all, not in a row, make an escape."""
    state = flight(3)
    for dials in (
        ["VM1", "VM2", "VM2"],
        ["VM1", "VM1", "VM2"],  # one enemy: not alone, not caught
        ["VM2", "VM1", "VM1"],
        ["VM3", "VM1", "VM1"],
        ["VM1", "VM2", "VM2"],
    ):
        state = fly(state, dials)
        assert state.phase == "flight"
    assert state.alone == 4
    state = fly(state, ["VM2", "VM1", "VM3"])
    assert state.outcome == "escaped" and state.alone == 5


def test_capture_needs_two_enemies() -> None:
    """One enemy on the fugitive's square is nothing; two or more catch him."""
    state = fly(flight(4), ["VM1", "VM1", "VM2", "VM3"])
    assert state.phase == "flight" and state.alone == 0
    state = fly(state, ["F1", "F1", "F1", "VM3"])
    assert state.outcome == "caught"
    assert GAME.scores(state) == [0, 1, 1, 1]


def test_outcomes_and_scores() -> None:
    """Escaped and right: fugitive wins; escaped but wrong: nobody; caught: others share."""
    won = fly(flight(3, fugitive=1), ["VM1", "F1", "VM2"])
    assert won.outcome == "escaped"
    assert GAME.scores(won) == [0, 1, 0] and GAME.ranking(won) == [[1], [0, 2]]
    wrong = fly(flight(3, fugitive=1, right=False), ["VM1", "F1", "VM2"])
    assert wrong.outcome == "escaped-wrong"
    assert GAME.scores(wrong) == [0, 0, 0] and GAME.ranking(wrong) == [[0, 1, 2]]
    caught = fly(flight(3, fugitive=1), ["VM1", "VM1", "VM1"])
    assert caught.outcome == "caught"
    assert GAME.scores(caught) == [1, 0, 1] and GAME.ranking(caught) == [[0, 2], [1]]
    state = flight(3, fugitive=1)
    names = dict(state.filing.pseudonyms) if state.filing else {}
    names["green"], names["red"] = names["red"], names["green"]
    swapped = replace(state, filing=Filing(tuple(sorted(names.items())), *true_place(state)))
    assert fly(swapped, ["VM1", "F1", "VM2"]).outcome == "escaped-wrong"


def test_game_over_refuses_actions_and_reveals() -> None:
    """Once over nothing more is accepted, and the public table shows every card."""
    state = fly(flight(3), ["F1", "VM1", "VM2"])
    assert GAME.is_over(state) and GAME.legal_actions(state, 0) == []
    refused(state, Dial(0, "F1"), "over")
    end = GAME.view(state, None)["end"]
    assert end["formula"] == state.formula
    assert end["stashes"]["yellow"]["suitcase"] == state.stashes[1].suitcase
    assert end["filing"]["card"] == state.formula
    assert GAME.view(state, None)["outcome"] == "escaped"


# ---------------------------------------------------------------- views and secrets


def test_view_keys() -> None:
    """A seat's view holds the table, its sheet, own cards, moles, own dial and choices."""
    state = hidden(3)
    view = GAME.view(state, 0)
    assert set(view) == {
        "game", "seat", "colour", "table", "hidden", "moles", "dial", "choice", "sheet", "filing",
    }  # fmt: skip
    assert view["table"] == GAME.view(state, None)
    assert set(view["sheet"]) == {
        "entries", "grid", "fakes", "formula", "pseudonyms", "complete", "formula_at",
    }  # fmt: skip
    assert set(GAME.view(state, None)) >= {
        "phase", "turn", "agents", "informants", "bugs", "lockers", "moles", "revealed", "waiting",
    }  # fmt: skip
    with pytest.raises(IllegalAction):
        GAME.view(state, 3)
    assert GAME.legal_actions(state, None) == []


def test_no_leak_when_others_are_redealt() -> None:
    """A seat's view is unchanged when every other seat's secrets are re-dealt."""
    rng = random.Random(5)
    phases = set()
    for state in SAMPLES:
        phases.add(state.phase)
        for seat in range(state.players):
            view = GAME.view(state, seat)
            for _ in range(2):
                other = redeal(state, seat, rng)
                assert GAME.view(other, seat) == view, (state.phase, seat)
    assert phases >= {"hide", "bug", "dial", "informant", "search", "flight"}


def test_redeal_really_changes_secrets() -> None:
    """The re-deal used by the no-leak tests does change what the others hold."""
    rng = random.Random(1)
    changed = sum(redeal(s, 0, rng).stashes[1:] != s.stashes[1:] for s in SAMPLES)
    assert changed > len(SAMPLES) // 2
    dialling = [s for s in SAMPLES if s.phase == "informant"]
    assert any(redeal(s, 0, rng).dials[1:] != s.dials[1:] for s in dialling)


def test_public_view_holds_no_secret() -> None:
    """The public table is unchanged when every seat's secrets are re-dealt."""
    rng = random.Random(9)
    for state in SAMPLES:
        public = GAME.view(state, None)
        for _ in range(2):
            assert GAME.view(redeal(state, None, rng), None) == public


def test_private_events_reach_only_their_seat() -> None:
    """Seen cards and drawn mole cards are events for their seat; moves are public."""
    state = hidden(3)
    state, _ = GAME.apply(state, Pass(0))
    state, _ = GAME.apply(state, Pass(1))
    state, _ = GAME.apply(state, Pass(2))
    for s in range(3):
        state, events = GAME.apply(state, Dial(s, ["V1", "H3", "G1"][s]))
        assert all(e.to is None for e in events) and "V1" not in str(events)
    events = []
    for s in range(3):
        state, more = GAME.apply(state, Pass(s))
        events += more
    assert [e.to for e in events if e.kind == "mole"] == [(0,)]
    state, more = GAME.apply(state, Search(1))
    assert [e.to for e in more if e.kind == "seen"] == [(1,)]


def test_messages_fit_the_screen() -> None:
    """Refusals are short plain messages."""
    state = hidden(3)
    for action in (Dial(0, "VM1"), Bug(0, "F1"), Open(0, ("red",)), Declare(9), Read(0, ())):
        with pytest.raises(IllegalAction) as err:
            GAME.apply(state, action)
        assert len(err.value.message) <= MESSAGE_MAX
