"""Fixtures for whole-table tests: a real mosquitto with the table's ACL, hub, stations."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.store import Store
from firmware.link.lang import short_colour
from firmware.tools.bots.secret_identity import Director
from firmware.tools.brokers import find_mosquitto
from firmware.tools.simtable import TABLE, SimTable

TableFactory = Callable[..., SimTable]


@pytest.fixture(scope="session", autouse=True)
def _need_mosquitto() -> None:
    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed: run the README's test command (it installs it)")


@pytest.fixture
def make_table(tmp_path: Path) -> Iterator[TableFactory]:
    """Start tables (mosquitto on a free loopback port + ACL, hub, mock stations)."""
    started: list[SimTable] = []

    def make(players: int = 5, **kwargs: Any) -> SimTable:
        kwargs.setdefault("embedded", False)
        kwargs.setdefault("seed", 7)
        sim = SimTable(players=players, workdir=tmp_path / f"table{len(started)}", **kwargs)
        started.append(sim)
        sim.start()
        return sim

    yield make
    for sim in started:
        sim.stop()


def director(sim: SimTable, seed: int = 1, **kwargs: Any) -> Director:
    """Bots for a started table, quiet."""
    return Director(sim, sim.watch, random.Random(seed), say=lambda _: None, **kwargs)


def expected_scores(record: dict[int, dict[str, Any]], players: int) -> list[int]:
    """Score what the bots physically did, independently of the hub and the engine."""
    scores = [0] * players
    for rnd in record.values():
        for (voter, safe), number in rnd["votes"].items():
            if rnd["mystery"].get(safe) == number:
                scores[safe] += 1
                scores[voter] += 1
    return scores


def wait_host_title(sim: SimTable, title: str, timeout: float = 10) -> dict[str, Any]:
    """Wait until the hub display's title is ``title``; returns the host screen."""
    deadline = time.monotonic() + timeout
    with sim.watch.changed:
        while sim.watch.host.get("title") != title:
            left = deadline - time.monotonic()
            assert left > 0, sim.watch.host
            sim.watch.changed.wait(left)
        return dict(sim.watch.host)


def engine_snapshot(sim: SimTable) -> tuple[int, int, str]:
    """What must not change: the version, the stored engine events, the public table."""
    time.sleep(0.2)
    pub = sim.watch.public
    events = [e for e in Store(sim.store_path).events(TABLE, 1) if "rules" in e]
    return pub["version"], len(events), json.dumps(pub)


def assert_hub_shows_ranking(
    host: dict[str, Any], final: dict[str, Any], colours: list[str]
) -> None:
    """The hub display at game over: the winner first, every seat with its place and score
    (seats by their colours' three-letter forms, as on the score track)."""
    names = [short_colour(c) for c in colours]
    assert len(set(names)) == len(names), names
    assert host["title"] == "Game over"
    assert host["lines"][0].startswith(f"1.{names[final['ranking'][0][0]]} ")
    text = " ".join(host["lines"])
    place = 1
    for group in final["ranking"]:
        for seat in group:
            assert f"{place}.{names[seat]} {final['scores'][seat]}" in text, (seat, text)
        place += len(group)
