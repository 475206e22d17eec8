"""The table display's feed: every public event kind of every registered game has a line in
words (English and French), runs of passes read as one line, and the hub's feed survives an
undo and a replay. The games come from the registry, never a hand-kept list."""

from __future__ import annotations

import random
import re
from functools import cache
from typing import Any

import pytest

from firmware.display.boards import board_module, feed_lines
from firmware.display.parts import Names
from firmware.hub.bindings import binding_for
from firmware.hub.table import Seating, Table
from firmware.link.lang import speaking
from rules import GAMES, get_game, get_info
from rules.core import action_to_json
from tests.support.display_samples import KEYS, _move, hub_colours, variants

Example = tuple[dict[str, Any], dict[str, Any]]  # an event's data, the public view after it


@cache
def examples(game: str) -> dict[str, list[Example]]:
    """Public events seen in random games (every mode, smallest and largest table), by kind."""
    engine, info = get_game(game), get_info(game)
    seen: dict[str, list[Example]] = {}
    for options in variants(game):
        for players in sorted({info.min_players, info.max_players}):
            for seed in range(3):
                state, r = engine.setup(players, options, seed), random.Random(seed)
                for _step in range(3000):
                    if engine.is_over(state):
                        break
                    action = _move(game, state, r)
                    if action is None:
                        break
                    state, events = engine.apply(state, action)
                    view = engine.view(state, None)
                    for event in events:
                        if event.to is None:
                            seen.setdefault(event.kind, [])
                            if len(seen[event.kind]) < 4:
                                seen[event.kind].append((event.data, view))
    return seen


def names_for(view: dict[str, Any], players: int) -> Names:
    return Names({"seats": [{"colour": c} for c in hub_colours(players)]})


def plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.mark.parametrize("game", GAMES)
def test_every_public_event_kind_has_a_line_in_words(game: str) -> None:
    """Each public event kind a game emits is said by its board, in English and French,
    with every field filled (a new kind without a line is named here)."""
    module = board_module(game)
    assert module is not None
    kinds = examples(game)
    assert kinds, f"{game}: no public event in random games"
    missing = sorted(set(kinds) - set(module.NARRATE))
    assert not missing, f"{game}: no feed line for {missing}"
    for kind, cases in kinds.items():
        for data, view in cases:
            names = names_for(view, 16)
            for language in ("en", "fr"):
                with speaking(language):
                    lines = module.NARRATE[kind](data, view, names)
                assert lines and all(plain(line).strip() for line in lines), (kind, data)
                text = plain(" ".join(lines))
                assert "{" not in text and text.strip() != kind, (kind, language, text)


def _line(game: str, kind: str, data: dict[str, Any], view: dict[str, Any] | None = None) -> str:
    module = board_module(game)
    assert module is not None
    return plain(" ".join(module.NARRATE[kind](data, view or {}, names_for({}, 8))))


def test_identiquest_says_steals_and_whether_an_accusation_was_right() -> None:
    """A steal names its gems; an accusation says right or wrong."""
    steal = _line("identiquest", "steal", {"seat": 0, "gems": ["red", "blue"], "refill": ["pink"]})
    assert "Red steals" in steal and "Blue" in steal and "refills with" in steal
    right = {"seat": 1, "target": 2, "colour": "red", "right": True}
    assert _line("identiquest", "accuse", right).endswith("right!")
    assert _line("identiquest", "accuse", dict(right, right=False)).endswith("wrong")


def test_identites_cryptees_says_shots_hits_and_hp() -> None:
    """A shot names the weapon and targets; a hit the HP lost and left; a program its name."""
    view = {"table": {"weapons": [{"key": "rifle", "name": {"en": "Rifle", "fr": "Fusil"}}]}}
    fire = _line("identites-cryptees", "fire", {"seat": 0, "weapon": "rifle", "targets": [3]}, view)
    assert fire == "Red fires the Rifle at Blue"
    hit = {"seat": 3, "amount": 1, "hp": 1, "source": "rifle"}
    assert _line("identites-cryptees", "damage", hit) == "Blue loses 1 HP (1 left)"
    program = {"seat": 2, "key": "jammer", "name": {"en": "Jammer"}, "target": 1}
    assert _line("identites-cryptees", "program", program) == "Green plays Jammer on Yellow"


def test_secret_identity_says_who_scored_for_each_safe() -> None:
    """An opened safe names who was right and the points it gave."""
    safe = {"safe": 0, "mystery": 4, "votes": [], "right": [1, 2], "points": 2}
    line = _line("secret-identity", "safe_opened", safe)
    assert "Yellow, Green were right" in line and "+2 for Red" in line


def test_a_run_of_passes_reads_as_one_line() -> None:
    """Fifteen seats letting a shot go is one line naming them, not fifteen."""
    module = board_module("identites-cryptees")
    assert module is not None
    feed = [{"kind": "pass", "data": {"seat": s}} for s in (1, 2, 3)]
    feed.append({"kind": "window_closed", "data": {"by": "passes"}})
    lines = feed_lines(feed, module.NARRATE, module.MERGE, {}, names_for({}, 4))
    assert [plain(x) for x in lines] == [
        "Yellow, Green, Blue let it go",
        "The interrupt window closes",
    ]


def test_a_seat_acting_again_starts_a_new_line() -> None:
    """Ultra Secret's agents acting through two phases: one line per phase, never a seat
    named twice in one line ("Red, Red have acted")."""
    module = board_module("ultra-secret")
    assert module is not None
    feed = [{"kind": "acted", "data": {"seat": s}} for s in (0, 1, 2, 0, 2)]
    lines = feed_lines(feed, module.NARRATE, module.MERGE, {}, names_for({}, 3))
    assert [plain(x) for x in lines] == [
        "Red, Yellow, Green have acted",
        "Red, Green have acted",
    ]


def test_the_hubs_feed_survives_undo_and_replay() -> None:
    """Undo takes the undone move's events off the feed; a replayed table has the same feed."""
    game = "identiquest"
    players = 4
    stations = [f"p{i + 1}" for i in range(players)]

    def table() -> Table:
        seating = Seating(stations, hub_colours(players))
        return Table(game, players, {}, 1, seating, KEYS, binding_for(game))

    live, r = table(), random.Random(1)
    bodies = []
    for _ in range(12):
        body = {"rules": action_to_json(_move(game, live.state, r))}
        live.commit(body, live.check(body))
        bodies.append(body)
    before = list(live.feed)
    assert before and live.public()["feed"] == before
    body = {"rules": action_to_json(_move(game, live.state, r))}
    live.commit(body, live.check(body))
    assert live.feed != before
    live.commit({"undo": True}, live.check({"undo": True}))
    assert live.feed == before
    again = table()
    again.replay_events([*bodies, body, {"undo": True}])
    assert again.feed == before and again.state == live.state
