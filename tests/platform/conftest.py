"""Fixtures for whole-table tests: a real mosquitto with the table's ACL, hub, stations."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.broker import find_mosquitto
from firmware.sim import Director, SimTable

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
