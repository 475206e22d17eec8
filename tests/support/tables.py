"""Whole tables on a real mosquitto (the table's ACL, hub, mock stations): the fixtures the
conftests register, bots, spies on the broker, and checks of scores, screens and refusals."""

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
from firmware.link.mqtt import Client
from firmware.tools.bots.identiquest import Bot as IdentiquestBot
from firmware.tools.bots.secret_identity import Director
from firmware.tools.brokers import find_mosquitto
from firmware.tools.simtable import TABLE, SimTable

TableFactory = Callable[..., SimTable]


@pytest.fixture(scope="session", autouse=True)
def _need_mosquitto() -> None:
    if find_mosquitto() is None:
        pytest.fail("mosquitto is not installed: run the README's test command (it installs it)")


def table_factory(tmp_path: Path, **defaults: Any) -> Iterator[TableFactory]:
    """What a table fixture yields: a function that starts tables (mosquitto on a free
    loopback port with the table's ACL, hub, stations; ``defaults`` for every one), and
    stops them all afterwards."""
    started: list[SimTable] = []

    def make(players: int = 5, **kwargs: Any) -> SimTable:
        kwargs = {"embedded": False, "seed": 7, **defaults, **kwargs}
        sim = SimTable(players=players, workdir=tmp_path / f"table{len(started)}", **kwargs)
        started.append(sim)
        sim.start()
        return sim

    yield make
    for sim in started:
        sim.stop()


@pytest.fixture
def make_table(tmp_path: Path) -> Iterator[TableFactory]:
    """Start tables (mosquitto on a free loopback port + ACL, hub, mock stations)."""
    yield from table_factory(tmp_path)


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
    (seats by their colours' three-letter forms and their numbers, as on the score track:
    "Red1", never colour alone)."""
    names = [f"{short_colour(c)}{seat + 1}" for seat, c in enumerate(colours)]
    assert len(set(names)) == len(names), names
    assert host["title"] == "Game over"
    assert host["lines"][0].startswith(f"1.{names[final['ranking'][0][0]]} ")
    text = " ".join(host["lines"])
    place = 1
    for group in final["ranking"]:
        for seat in group:
            assert f"{place}.{names[seat]} {final['scores'][seat]}" in text, (seat, text)
        place += len(group)


def spy(sim: SimTable, station: str, topics: list[str]) -> Client:
    """A client logged in with a station's credentials, subscribed to ``topics``."""
    config = sim.broker.station_config(station)
    client = Client(config, f"spy-{station}", topics)
    client.start()
    assert client.wait_connected()
    return client


def drain(client: Client) -> list[tuple[str, bytes]]:
    """Every (topic, payload) the client has received so far."""
    out = []
    while not client.inbox.empty():
        msg = client.inbox.get()
        if msg is not None:
            out.append((msg.topic, msg.payload))
    return out


def leaves(data: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """(path, value) of every leaf of a JSON document."""
    if isinstance(data, dict):
        return [leaf for k, v in data.items() for leaf in leaves(v, (*path, str(k)))]
    if isinstance(data, list):
        return [leaf for i, v in enumerate(data) for leaf in leaves(v, (*path, str(i)))]
    return [(path, data)]


#: What a station's glass shows of a message (a refusal longer than this is unreadable).
SCREEN_CHARS = 63


def snapshot(sim: SimTable) -> tuple[int, int, str]:
    """What must not change: the table version, the stored events, the public view."""
    time.sleep(0.2)
    pub = sim.watch.public
    return pub["version"], len(Store(sim.store_path).events(TABLE, 1)), json.dumps(pub)


def assert_readable(message: str) -> None:
    """A message a player can read on the glass: short, not empty, no traceback."""
    assert message and len(message) <= SCREEN_CHARS and "Traceback" not in message


def tap_refused(sim: SimTable, station: str, uid: str) -> str:
    """Tap ``uid`` at ``station``: refused, readable, an error beep; returns the message."""
    ack = sim.tap(station, uid)
    assert ack is not None and not ack.ok
    assert_readable(ack.message)
    # The station shows it and beeps the error.
    assert sim.controls(station).beeps[-1] == "error"
    return ack.message


def check_against_piles(players: IdentiquestBot, final: dict[str, Any]) -> None:
    """Identities read under the flaps and loot piles followed in the open give the result."""
    view = final["view"]
    n = view["players"]
    assert [players.identity[s] for s in range(n)] == view["identities"]
    want = [players.piles[s].count(players.identity[s]) for s in range(n)]
    assert final["scores"] == want
    for seat, loot in enumerate(view["loot"]):
        pile = players.piles[seat]
        assert loot == {"size": len(pile), "top": pile[-1] if pile else None}, seat


def freeze_countdowns(sim: SimTable) -> None:
    """Slow the hub's clock 1000-fold: countdowns show but never tick (repeatable screens)."""
    assert sim.hub is not None
    start = time.monotonic()
    sim.hub.clock = lambda: start + (time.monotonic() - start) / 1000


def incognito_scores(record: dict[int, dict[str, Any]], players: int) -> list[int]:
    """Score what the bots knew and laid, independently of the hub and the engine.

    Cards the countdown filled for a late voter are taken from the public results.
    """
    scores = [0] * players
    for rnd in record.values():
        votes = dict(rnd["votes"])
        reveal = rnd["reveal"]
        late = reveal["late"]
        if late is not None:
            for drawer in reveal["filled"]:
                assert (late, drawer) not in votes
                votes[(late, drawer)] = reveal["drawings"][drawer]["votes"][late]
        assert len(votes) == players * (players - 1)
        for drawer in range(players):
            right = rnd["number"][drawer]
            finders = [v for (v, d), n in votes.items() if d == drawer and n == right]
            for v in finders:
                scores[v] += 1
            if 0 < len(finders) < players - 1:
                scores[drawer] += 2
    return scores


def host_toml(sim: SimTable, tmp_path: Path, password: str | None = None) -> Path:
    """A host's config file for the table's broker, as the venue would hand it out."""
    from firmware.hub.brokerconf import HOST_USER

    broker = sim.broker.config(HOST_USER)
    secret = tmp_path / "host.password"
    secret.write_text((password or broker.password or "") + "\n")
    path = tmp_path / "host.toml"
    path.write_text(
        f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nusername = "{HOST_USER}"\n'
        f'password_file = "{secret}"\nca_file = "{broker.tls_ca}"\n'
    )
    return path


def run_host(capsys: pytest.CaptureFixture[str], config: Path, *args: str) -> tuple[int, str, str]:
    """``coffre host --config config args``: its status, stdout and stderr."""
    from firmware.cli import main

    status = main(["host", "--config", str(config), *args])
    out, err = capsys.readouterr()
    return status, out.strip(), err.strip()


def until(ready: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    """Wait until ``ready()`` is true (asked every 20 ms); fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def host_lines(sim: SimTable) -> list[str]:
    """The hub display's lines as its host screen last said them."""
    return list(sim.watch.host.get("lines") or [])


def stored_setting(sim: SimTable, key: str) -> str | None:
    """A table setting as the hub's store holds it (the hub may be stopped)."""
    store = Store(sim.store_path)
    try:
        return store.get_setting(key)
    finally:
        store.close()
