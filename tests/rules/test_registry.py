"""Every registered game, through the same generic checks (OpenSpiel's random_sim_test):
random playouts with invariants at every step, replay, the shared public keys, and its
declared options. A new game is covered by registering it; nothing here names a game."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rules import GAMES, BadOptions, get_game, get_info
from rules.core import Action, decode_action, decode_state, encode, replay
from rules.declare import GameInfo

MAX_STEPS = 1500


def _sizes(info: GameInfo) -> list[int]:
    return sorted({info.min_players, info.max_players})


CASES = [(g, n, seed) for g in GAMES for n in _sizes(get_info(g)) for seed in (1, 2)]


def _context_ok(game_id: str, players: int, public: dict[str, Any]) -> None:
    """The shared keys every game's public view yields (the table display reads these)."""
    info = get_info(game_id)
    ctx = get_game(game_id).context(public)
    assert set(ctx) == {"phase", "round", "rounds", "to_play", "colours"}
    assert ctx["phase"] in info.phases, f"{game_id}: phase {ctx['phase']!r} is not declared"
    assert ctx["to_play"] is None or 0 <= ctx["to_play"] < players
    if ctx["round"] is not None and ctx["rounds"] is not None:
        assert 0 <= ctx["round"] <= ctx["rounds"]
    if ctx["colours"] is not None:
        assert len(ctx["colours"]) >= players
    outcome = public.get("outcome")
    if outcome:
        assert info.outcome(outcome), f"{game_id}: outcome {outcome!r} has no declared wording"


def _moves(game: Any, state: Any, players: int) -> list[Action]:
    moves: list[Action] = list(game.legal_actions(state, None))
    for seat in range(players):
        moves += game.legal_actions(state, seat)
    return moves


@pytest.mark.parametrize(("game_id", "players", "seed"), CASES)
def test_random_playout_keeps_every_invariant(game_id: str, players: int, seed: int) -> None:
    """Random legal moves: each is accepted and bumps the version, states round-trip
    through JSON, every view serialises, the shared keys hold, and replay rebuilds it."""
    game = get_game(game_id)
    rnd = random.Random(f"{game_id}:{players}:{seed}")
    state = game.setup(players, {}, seed)
    played: list[Action] = []
    for _step in range(MAX_STEPS):
        _context_ok(game_id, players, game.view(state, None))
        for seat in [None, *range(players)]:
            json.dumps(game.view(state, seat))
        assert decode_state(game, encode(state)) == state
        if game.is_over(state):
            break
        moves = _moves(game, state, players)
        assert moves, f"{game_id}: no legal move in a game that is not over"
        action = rnd.choice(moves)
        again = decode_action(game, encode(action))
        new, _events = game.apply(state, again)
        assert new.version == state.version + 1
        state = new
        played.append(action)
    assert encode(replay(game, players, {}, seed, played)) == encode(state)
    if game.is_over(state):
        ranked = sorted(s for group in game.ranking(state) for s in group)
        assert ranked == list(range(players))
        assert len(game.scores(state)) == players


@pytest.mark.parametrize("game_id", GAMES)
def test_declared_outcome_and_side_wordings_fit_a_glass(game_id: str) -> None:
    """Each declared end and side has its words, and the glass forms fit 21 columns."""
    info = get_info(game_id)
    for key, outcome in info.outcomes.items():
        assert outcome.long and outcome.short, f"{game_id}: outcome {key} lacks a wording"
        assert len(outcome.short) <= 21, f"{game_id}: outcome {key}'s short form is too long"
    for key, side in info.side_words.items():
        assert side.name and side.wins, f"{game_id}: side {key} lacks a wording"
        assert len(side.wins) <= 21, f"{game_id}: side {key}'s victory is too long"
        assert len(side.letter.split("|")[0]) <= 2, f"{game_id}: side {key}'s letter is long"
    if info.side_words:
        assert info.sides, f"{game_id}: side wordings for a game that is not won by sides"


@pytest.mark.parametrize("game_id", GAMES)
def test_every_declared_option_value_sets_up_a_game(game_id: str) -> None:
    """Each option's default and every value the host panel offers is accepted."""
    info = get_info(game_id)
    game = get_game(game_id)
    players = info.max_players
    parsed = info.parse({}, players)
    assert set(parsed) == {o.name for o in info.options}
    game.setup(players, {}, 1)
    for option in info.options:
        for value in option.menu:
            game.setup(players, {option.name: value}, 1)


@pytest.mark.parametrize("game_id", GAMES)
def test_an_unknown_or_mistyped_option_is_refused_by_name(game_id: str) -> None:
    """A typo in an option's name, or a value of the wrong type, is refused before play."""
    info = get_info(game_id)
    game = get_game(game_id)
    with pytest.raises(BadOptions, match="Unknown option: no_such_option"):
        game.setup(info.min_players, {"no_such_option": 1}, 1)
    for option in info.options:
        if option.kind == "cards":
            continue  # a card set is the engine's to read (its own tests)
        with pytest.raises(BadOptions, match=option.name):
            game.setup(info.min_players, {option.name: [object]}, 1)


@pytest.mark.parametrize("game_id", GAMES)
def test_command_line_values_take_the_declared_type(game_id: str) -> None:
    """``-o name=value`` gives the value its declared type (what the engine then checks)."""
    info = get_info(game_id)
    for option in info.options:
        for value in option.menu:
            text = json.dumps(value) if not isinstance(value, str) else value
            assert option.from_text(text) == value


@pytest.mark.parametrize("game_id", GAMES)
def test_a_flag_takes_the_words_a_host_types(game_id: str) -> None:
    """``-o legion_loyalty=yes`` (or on, no, off) is a flag's true or false; other words
    stay as typed, for the engine to refuse by name."""
    for option in get_info(game_id).options:
        if option.kind != "flag":
            continue
        said = [option.from_text(w) for w in ("yes", "On", "no", "OFF")]
        assert said == [True, True, False, False]
        assert option.from_text("maybe") == "maybe"
        with pytest.raises(BadOptions, match=option.name):
            get_game(game_id).setup(get_info(game_id).max_players, {option.name: "maybe"}, 1)
