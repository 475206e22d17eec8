"""The shared rules core: RNG, errors, JSON helpers, ranking."""

from __future__ import annotations

import pytest

from rules import GAMES, BadOptions, get_game
from rules.core import MESSAGE_MAX, Event, IllegalAction, Rng, encode, shared_ranking


def test_rng_is_deterministic_and_advances() -> None:
    """The same seed and counter give the same draws; each draw moves the stream."""
    a, a2 = Rng(7).shuffle(range(10))
    b, b2 = Rng(7).shuffle(range(10))
    assert a == b and a2 == b2 == Rng(7, 1)
    c, _ = a2.shuffle(range(10))
    assert sorted(c) == list(range(10))
    assert c != a  # the next draw of the stream is another permutation


def test_rng_round_trips_through_json() -> None:
    """The RNG state is plain data that serialises."""
    assert encode(Rng(3, 9)) == b'{"seed":3,"n":9}'


def test_rng_sample_and_choice_stay_in_range() -> None:
    """Sample gives distinct items and choice one of the items."""
    picked, _ = Rng(1).sample(list(range(8)), 5)
    assert len(set(picked)) == 5 and set(picked) <= set(range(8))
    item, _ = Rng(1).choice(["a", "b"])
    assert item in {"a", "b"}
    with pytest.raises(ValueError):
        Rng(1).randrange(0)


def test_illegal_action_must_fit_the_screen() -> None:
    """A player-facing message longer than three screen lines is a bug."""
    assert IllegalAction("Not your turn").message == "Not your turn"
    with pytest.raises(ValueError):
        IllegalAction("x" * (MESSAGE_MAX + 1))


def test_event_visibility() -> None:
    """Public events reach everyone; private ones only their seats."""
    assert Event("x").visible_to(None)
    secret = Event("x", to=(2,))
    assert secret.visible_to(2)
    assert not secret.visible_to(1)
    assert not secret.visible_to(None)


def test_shared_ranking_groups_ties() -> None:
    """Equal scores share a place; a tie-break splits them."""
    assert shared_ranking([3, 5, 3]) == [[1], [0, 2]]
    assert shared_ranking([3, 5, 3], [1, 0, 2]) == [[1], [2], [0]]


def test_unknown_game_is_refused() -> None:
    """get_game names the bad id."""
    with pytest.raises(BadOptions, match="Unknown game"):
        get_game("chess")
    assert "secret-identity" in GAMES


def test_check_options_names_the_unknown_option() -> None:
    """A misspelt option is refused by name; known ones pass."""
    from rules.core import check_options

    check_options({"mode": "coop"}, {"mode", "mystery"})
    with pytest.raises(BadOptions, match="Unknown option: mod"):
        check_options({"mod": "coop"}, {"mode", "mystery"})


@pytest.mark.parametrize("game_id", GAMES)
def test_pinned_options_set_up_the_same_game(game_id: str) -> None:
    """Every engine's pin_options keeps the game: same views from the same seed."""
    game = get_game(game_id)
    players = game.min_players + 1
    pinned = game.pin_options({})
    assert encode(pinned) == encode(game.pin_options(pinned))  # pinning is idempotent
    a, b = game.setup(players, {}, 4), game.setup(players, pinned, 4)
    for seat in (None, *range(players)):
        assert game.view(a, seat) == game.view(b, seat)
