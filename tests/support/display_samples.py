"""Public tables to lay out: every registered game at its largest table, mid-game, at its
busiest moment and at game over, as the hub would publish them.

The games come from the registry (``rules.GAMES``, ``rules.get_info``), never a hand-kept
list; a ``mode`` option (Secret Identity's co-op) gives one more table per value. Seats past
a box's eight colours go by number as the hub's own seating does (``seat9``..``seat16``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from firmware.display.render import table_fragment
from firmware.display.spectator import Snapshot
from firmware.hub.bindings import binding_for, bound_games
from firmware.hub.publish import game_menu
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from hardware.keys import COLOURS, load_keyset
from rules import GAMES, get_game, get_info
from rules.core import action_to_json
from tests.support.games import game_support

KEYS = load_keyset()
MAX_STEPS = 3000


def hub_colours(players: int) -> list[str]:
    """The hub's default seating colours (firmware/hub/config.py): the box's, then by number."""
    return [*COLOURS, *(f"seat{i + 1}" for i in range(len(COLOURS), players))][:players]


@dataclass(frozen=True)
class Sample:
    """One public table to lay out, with a name for messages and file names."""

    name: str
    game: str
    moment: str  # "mid", "busiest" or "over"
    public: dict[str, Any]


def variants(game: str) -> list[dict[str, Any]]:
    """The default options, and one table per other value of a ``mode`` option."""
    out: list[dict[str, Any]] = [{}]
    for option in get_info(game).options:
        if option.name == "mode":
            out += [{"mode": v} for v in option.choices if v != option.default]
    return out


def _public(table: Table) -> dict[str, Any]:
    table.events += 1  # a fresh view each time, not a cached one
    return dict(json.loads(proto.encode(table.public())))


def _move(game: str, state: Any, r: random.Random) -> Any:
    """A random move, or the one the game's test helpers choose (``playout_move``), among
    the moves they keep (``sample_actions``)."""
    support = game_support(game)
    if hasattr(support, "playout_move"):
        return support.playout_move(state, r)
    engine = get_game(game)
    actions = list(engine.legal_actions(state, None))
    for seat in range(state.players):
        actions += engine.legal_actions(state, seat)
    if hasattr(support, "sample_actions"):
        actions = support.sample_actions(state, actions)
    return r.choice(actions) if actions else None


def fragment(public: dict[str, Any], language: str = "en") -> str:
    status = {"state": "ready", "language": language}
    return table_fragment(Snapshot("main", public, status, broker=True))


@cache
def samples_of(game: str, options_json: str = "{}", seed: int = 5) -> tuple[Sample, ...]:
    """Mid-game, busiest (the longest page) and game-over tables of one game at its largest."""
    options = json.loads(options_json)
    players = get_info(game).max_players
    stations = [f"p{i + 1}" for i in range(players)]
    table = Table(
        game,
        players,
        options,
        seed,
        Seating(stations, hub_colours(players)),
        KEYS,
        binding_for(game),
    )
    r = random.Random(seed)
    publics = [_public(table)]
    for _step in range(MAX_STEPS):
        if table.over:
            break
        action = _move(game, table.state, r)
        if action is None:
            break
        body = {"rules": action_to_json(action)}  # as the hub commits it: the feed follows
        table.commit(body, table.check(body))
        publics.append(_public(table))
    tag = game + "".join(f"-{v}" for v in options.values())
    middle = publics[len(publics) // 2]
    live = publics[:-1] if table.over else publics
    busiest = max(live, key=lambda p: len(fragment(p)))
    out = [Sample(f"{tag}-mid", game, "mid", middle)]
    out.append(Sample(f"{tag}-busiest", game, "busiest", busiest))
    if table.over:
        out.append(Sample(f"{tag}-over", game, "over", publics[-1]))
    return tuple(out)


def samples() -> Iterator[Sample]:
    """Every registered game (and mode) at its largest table: mid, busiest, over."""
    for game in GAMES:
        for options in variants(game):
            yield from samples_of(game, json.dumps(options, sort_keys=True))


def idle_snapshot(language: str, picked: str | None, players: int = 5) -> Snapshot:
    """An idle table as the hub publishes it: its game menu (from the declarations) in
    ``public``, the panel's pick in ``hub/status``."""
    public = {"game": None, "version": 0, "over": False, "menu": game_menu(bound_games())}
    status: dict[str, Any] = {"state": "ready", "language": language}
    if picked:
        status.update(selected=picked, selected_players=players)
    return Snapshot("main", public, status, broker=True)
