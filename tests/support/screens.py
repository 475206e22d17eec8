"""Whole games played on a Table in this process, with every screen they show.

No broker and no stations: random legal moves (the engine's own) mixed with random
knob turns and presses through the game's binding, so menus, pages and lists are
scrolled too. Each step yields what every station and the hub display would show,
in the language spoken. Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from firmware.hub.bindings import binding_for
from firmware.hub.config import TableConfig
from firmware.hub.table import Table
from firmware.link.lang import speaking
from firmware.link.protocol import Input, Screen
from hardware.keys import load_keyset
from rules import all_info, get_info
from rules.core import IllegalAction, action_to_json

KEYS = load_keyset()
#: Every registered game, with its smallest and largest table.
GAMES = {info.id: (info.min_players, info.max_players) for info in all_info()}
MAX_STEPS = 6000


@dataclass
class Shown:
    """One glass at one step: a station (public or under the flap) or the hub."""

    where: str
    title: str
    lines: tuple[str, ...]
    big: str = ""


def new_table(game: str, players: int, seed: int, options: dict[str, Any] | None = None) -> Table:
    stations = [f"p{i + 1}" for i in range(players)]
    seating = TableConfig("t", stations).seating()
    binding = binding_for(game, reveal_delay=0.0)
    return Table(game, players, dict(options or {}), seed, seating, KEYS, binding)


def glasses(table: Table) -> list[Shown]:
    """What every glass shows now: each station with the flap down and up, the hub."""
    out: list[Shown] = []
    for seat in range(table.players):
        screen: Screen = table.binding.station_screen(table, seat)
        out.append(Shown(f"p{seat + 1}", screen.title, screen.lines))
        if screen.secret is not None:
            secret = screen.secret
            title = secret.title or screen.title
            out.append(Shown(f"p{seat + 1}+flap", title, secret.lines, secret.big))
    title, lines = table.binding.host_screen(table)
    out.append(Shown("hub", title, tuple(lines)))
    return out


def play(
    game: str, players: int, language: str, seed: int = 1, options: dict[str, Any] | None = None
) -> Iterator[list[Shown]]:
    """Play a whole game at random; yield every glass after each accepted step. The table
    speaks ``language``: what follows it (Incognito's words) does unless ``options`` say."""
    given = {**get_info(game).table_defaults(language), **(options or {})}
    for table in tables(game, players, seed, given):
        with speaking(language):
            shown = glasses(table)
        yield shown


def tables(
    game: str, players: int, seed: int = 1, options: dict[str, Any] | None = None
) -> Iterator[Table]:
    """Play a whole game at random; yield the table after each accepted step."""
    table = new_table(game, players, seed, options)
    rng = random.Random(seed)
    yield table
    for _step in range(MAX_STEPS):
        if table.over:
            return
        body = _knob_or_press(table, rng) if rng.random() < 0.4 else None
        body = body or random_move(table, rng)
        try:
            checked = table.check(body)
        except IllegalAction:
            continue
        table.commit(body, checked)
        yield table
    raise AssertionError(f"{game} {players}p did not end in {MAX_STEPS} steps")


def random_move(table: Table, rng: random.Random) -> dict[str, Any]:
    """A legal move of a seat, now and then one of the table's own (a timeout, the host's
    next): players who may change their minds forever would otherwise never end a phase."""
    engine = table.engine
    actions = engine.legal_actions(table.state, None)
    if not actions or rng.random() > 0.08:
        seats = range(table.players)
        actions = [a for s in seats for a in engine.legal_actions(table.state, s)]
        actions = actions or engine.legal_actions(table.state, None)
    return {"rules": _pick(table, [action_to_json(a) for a in actions], rng)}


def _pick(table: Table, actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """A kind of move at random, then one of that kind (so passing, one kind among many,
    does not drown the game); a vote card is laid once per drawing (no endless changes)."""
    if table.game_id == "incognito":
        voted = table.view(None).get("voted") or []
        fresh = [a for a in actions if a["type"] != "vote" or a["drawer"] not in voted[a["seat"]]]
        actions = fresh or actions
    kinds = sorted({a["type"] for a in actions})
    kind = rng.choice(kinds)
    return rng.choice([a for a in actions if a["type"] == kind])


def _knob_or_press(table: Table, rng: random.Random) -> dict[str, Any] | None:
    """A random knob turn or press on a random station, as the binding reads it."""
    seat = rng.randrange(table.players)
    if rng.random() < 0.7:
        inp = Input(id="b:1", kind="knob", step=rng.choice([-1, 1, 1, 2, 3]))
    else:
        inp = Input(id="b:1", kind="press")
    try:
        return table.binding.translate(table, seat, inp)
    except IllegalAction:
        return None
