"""Each game option that changes the table, played end to end by the bots at the table.

Secret Identity's options are in ``test_secret_identity_options.py``; here Incognito
(``lang``, ``countdown``), Identiquest (``deck``), Ultra Secret (``dial=free``,
``declare=any``) and Identités cryptées (``first``, ``interrupt_window=0``, ``cards``:
shipped, a group's own set from the table's directory, or unknown; ``legion_loyalty``).
Each test fails if its option is ignored.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import rules
from firmware.link import protocol as proto
from firmware.link.render import glass
from firmware.tools.bots import identiquest, identites_cryptees, incognito, ultra_secret
from firmware.tools.sim import recorded_frames
from firmware.tools.simtable import TABLE, SimTable
from rules.incognito import PLACES, WORDS
from tests.support.golden import frame_problems
from tests.support.tables import (
    TableFactory,
    check_against_piles,
    freeze_countdowns,
    wait_host_title,
)
from tests.support.tables import incognito_scores as expected_scores


def quiet(module: Any, sim: SimTable, seed: int, **kwargs: Any) -> Any:
    """A game's bots for a started table, quiet."""
    return module.Bot(sim, sim.watch, random.Random(seed), say=lambda _: None, **kwargs)


def goldens(sim: SimTable, name: str) -> list[str]:
    return [p for n in sim.names for p in frame_problems(f"{name}/{n}", recorded_frames(sim, n))]


def publics(sim: SimTable) -> list[dict[str, Any]]:
    """Every ``public`` the table's watcher heard, in order."""
    topic = proto.Topics(TABLE).public
    return [json.loads(p) for t, p in list(sim.watch.messages) if t == topic]


# --- Incognito ------------------------------------------------------------------------------


def test_incognito_in_english_with_ten_second_countdowns(make_table: TableFactory) -> None:
    """lang=en countdown=10 set on the panel: English words and places, 10 s countdowns."""
    sim = make_table(3)
    freeze_countdowns(sim)
    players = quiet(incognito, sim, 2, options={"lang": "en", "countdown": 10})
    players.start_game(3)
    assert sim.panel.presses, "both options are on the panel: the host set them there"
    final = players.play()
    time.sleep(0.3)

    view = final["view"]
    assert final["over"] and view["lang"] == "en"
    assert final["scores"] == expected_scores(players.record, 3)
    english = {glass(w) for w in WORDS["en"]}
    for rnd, data in players.record.items():
        assert set(data["word"].values()) <= english, rnd  # what each bot read under its flap
        assert not set(data["word"].values()) & {glass(w) for w in WORDS["fr"]} - english
    seconds = {p["view"]["countdown"]["seconds"] for p in publics(sim) if p.get("view")}
    assert seconds == {10}
    assert any(glass(p) in json.dumps(view) for p in PLACES["en"])
    assert not goldens(sim, "incognito-en"), goldens(sim, "incognito-en")


# --- Identiquest ------------------------------------------------------------------------------


DECK = {"ruby": 7, "jade": 7, "opal": 7, "onyx": 7}


def test_identiquest_with_a_deck_of_the_hosts_own(make_table: TableFactory) -> None:
    """deck={colour: count}: only those gems and identities; piles add up; goldens."""
    sim = make_table(4)
    players = quiet(identiquest, sim, 4, options={"deck": DECK})
    players.start_game(4)
    final = players.play()
    time.sleep(0.3)

    assert final["over"]
    check_against_piles(players, final)
    assert set(players.identity.values()) <= set(DECK)
    gems = [g for pile in players.piles for g in pile]
    assert gems and set(gems) <= set(DECK)
    market = [g for p in publics(sim) for g in (p.get("view") or {}).get("market") or [] if g]
    assert market and set(market) <= set(DECK)
    assert not goldens(sim, "identiquest-deck"), goldens(sim, "identiquest-deck")


# --- Ultra Secret -----------------------------------------------------------------------------


def ultra_winners(view: dict[str, Any]) -> list[int]:
    """Who wins, recounted from the end of the game the public table shows."""
    outcome, fugitive = view["outcome"], view["fugitive"]
    return {
        "caught": [s for s in range(view["players"]) if s != fugitive],
        "escaped": [fugitive],
        "escaped-wrong": [],
    }[outcome]


def test_ultra_secret_free_dial_sits_out_an_impossible_square(make_table: TableFactory) -> None:
    """dial=free: the knob offers every code; an agent dialling its own square sits out."""
    sim = make_table(3)
    players = quiet(
        ultra_secret, sim, 3, options={"dial": "free", "declare": "any"}, misdial_rate=0.7
    )
    players.max_turns = 2
    players.start_game(3)
    final = players.play()
    time.sleep(0.3)

    view = final["view"]
    assert final["over"] and view["options"]["dial"] == "free"
    assert [s for s in range(3) if final["scores"][s]] == ultra_winners(view)
    sat_out = [
        n
        for p in publics(sim)
        for n in (p.get("view") or {}).get("notes") or []
        if n["act"] == "sat-out"
    ]
    assert sat_out, "nobody's impossible dial was taken"
    assert not goldens(sim, "ultra-secret-free"), goldens(sim, "ultra-secret-free")


def test_ultra_secret_declare_any_lets_an_unsure_agent_declare(make_table: TableFactory) -> None:
    """declare=any: an agent whose sheet is not complete may declare, and the game ends."""
    sim = make_table(3)
    players = quiet(ultra_secret, sim, 5, options={"declare": "any"})
    players.max_turns = 2
    players.start_game(3)
    final = players.play()
    view = final["view"]
    assert final["over"] and view["options"]["declare"] == "any"
    assert [s for s in range(3) if final["scores"][s]] == ultra_winners(view)
    _, turn, complete = players.declared[0]
    assert not complete and turn == 2
    assert view["fugitive"] in {s for s, _, _ in players.declared}


# --- Identités cryptées -----------------------------------------------------------------------


def ic_check(players: Any, final: dict[str, Any]) -> dict[str, Any]:
    """The game ended with winners, and the scores say exactly who they are."""
    table = final["view"]["table"]
    assert final["over"] and table["phase"] == "over"
    assert table["check"]["result"] == "won" and table["check"]["winners"] == table["winners"]
    n = table["players"]
    assert final["scores"] == [1 if s in table["winners"] else 0 for s in range(n)]
    # Each bot read its cards under its own flap (factions may change later: swaps).
    assert sorted(players.cards) == list(range(n))
    assert all(any(line.startswith("You are ") for line in c) for c in players.cards.values())
    return table


def test_identites_cryptees_first_player_no_window_named_cards(make_table: TableFactory) -> None:
    """first=2, interrupt_window=0, cards=generic: seat 2 opens, no window ever; goldens."""
    sim = make_table(4, seed=3)
    options = {"first": 2, "interrupt_window": 0, "cards": "generic"}
    players = quiet(identites_cryptees, sim, 3, options=options)
    players.start_game(4)
    start = sim.watch.public["view"]["table"]
    assert start["first"] == 2 and start["active"] == 2 and start["interrupt_window"] == 0
    final = players.play()
    time.sleep(0.3)

    table = ic_check(players, final)
    assert table["cards"]["set"] == "generic"
    phases = {p["view"]["table"]["phase"] for p in publics(sim) if p.get("view")}
    assert "window" not in phases and "turn" in phases
    assert not goldens(sim, "identites-cryptees-first"), goldens(sim, "identites-cryptees-first")


def test_identites_cryptees_with_the_groups_own_card_set(
    make_table: TableFactory, tmp_path: Path
) -> None:
    """cards=<a set in the table's card_sets directory>: its cards are dealt and read."""
    shipped = Path(rules.__file__).parent / "data" / "identites-cryptees" / "generic.json"
    generic = json.loads(shipped.read_text(encoding="utf-8"))
    own = {**generic, "name": "ourbox", "label": "Our own box", "generic": False}
    # A group's own set may be in one language: plain strings, shown as they are.
    own["ids"] = [{**card, "name": card["name"]["en"].upper()} for card in generic["ids"]]
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets" / "ourbox.json").write_text(json.dumps(own), encoding="utf-8")
    sim = make_table(4, seed=3, card_sets=tmp_path / "sets")
    players = quiet(identites_cryptees, sim, 3, options={"cards": "ourbox", "interrupt_window": 0})
    players.start_game(4)
    final = players.play()

    table = ic_check(players, final)
    assert table["cards"]["set"] == "ourbox" and table["cards"]["generic"] is False
    upper = {card["name"] for card in own["ids"]}
    for seat, lines in players.cards.items():
        id_line = next(line for line in lines if line.startswith("ID "))
        assert id_line[3:].split(") ", 1)[-1] in upper, (seat, id_line)


def test_identites_cryptees_unknown_card_set_is_refused_at_the_table(
    make_table: TableFactory,
) -> None:
    """cards=<unknown>: the host is told on the hub display and no game starts."""
    sim = make_table(4)
    sim.host(
        {"cmd": "start", "game": "identites-cryptees", "players": 4, "options": {"cards": "x"}}
    )
    host = wait_host_title(sim, sim.watch.host.get("title", ""), 5)
    deadline = time.monotonic() + 5
    while "Unknown card set: x" not in json.dumps(sim.watch.host) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Unknown card set: x" in json.dumps(sim.watch.host), host
    assert sim.watch.public.get("game") is None


def test_identites_cryptees_legion_loyalty_at_six(make_table: TableFactory) -> None:
    """legion_loyalty=true, 6 players: a Legion loyalty card is dealt; the game ends."""
    sim = make_table(6, seed=4)
    players = quiet(
        identites_cryptees, sim, 6, options={"legion_loyalty": True, "interrupt_window": 0}
    )
    players.start_game(6)
    final = players.play()
    table = ic_check(players, final)
    cards = json.dumps([s for s in table["seats"]], ensure_ascii=False)
    assert "legion" in cards.lower(), cards[:400]
