"""No secret reaches the table display: re-dealt secrets give the same page, and the
spectator user hears nothing but ``public`` and ``hub/status``."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from firmware.display.render import page, table_fragment
from firmware.display.spectator import SPECTATOR_USER as DISPLAY_USER
from firmware.display.spectator import Snapshot
from firmware.hub.brokerconf import SPECTATOR_USER
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.tools.simtable import TABLE
from rules import stem
from tests.support.browser import chromium, new_page
from tests.support.playouts import (
    REDEALS,
    playout,
    public_of,
)
from tests.support.tables import TableFactory, director


def fragment(public: dict[str, Any]) -> str:
    snap = Snapshot(TABLE, public, {"state": "ready"}, broker=True)
    return table_fragment(snap)


@pytest.mark.parametrize("game", list(REDEALS))
def test_redealt_secrets_give_byte_identical_display_payloads_and_dom(game: str) -> None:
    """Same public moves, other hidden deal: the pushed fragment and the page's DOM are equal."""
    players, redeal = REDEALS[game]
    r = random.Random(11)
    compared = changed = 0
    pairs = []
    for i, st in enumerate(playout(game, players, 5)):
        other = redeal(st, r)
        if other is st:
            continue
        changed += other != st
        mine, theirs = fragment(public_of(game, st)), fragment(public_of(game, other))
        assert theirs == mine, (game, i)
        compared += 1
        if i % 25 == 0:
            pairs.append((mine, theirs))
    assert compared > 10 and changed > compared // 3, (
        f"{game}: {compared} states with something hidden to re-deal ({changed} re-dealt "
        "differently); the test needs more than 10, a third of them changed: a longer game at "
        "PUBLIC_PLAYERS, sample states (PLAYOUT_SAMPLES) or a chosen move (playout_move) in "
        f"tests/support/games/{stem(game)}.py"
    )
    with chromium() as browser:
        tab = new_page(browser)
        for mine, theirs in pairs[:6]:
            doms = []
            for frag in (mine, theirs):
                tab.set_content(page("t", frag))
                doms.append(tab.evaluate("document.documentElement.outerHTML"))
            assert doms[0] == doms[1]


def test_the_display_user_is_the_brokers_spectator() -> None:
    """The display logs in as the user broker-config creates for it."""
    assert DISPLAY_USER == SPECTATOR_USER


def test_spectator_subscribed_to_everything_hears_only_public_and_hub_status(
    make_table: TableFactory,
) -> None:
    """Over a whole game the spectator user gets public and hub/status, nothing else; it can
    neither forge public nor command the host."""
    sim = make_table(3)
    t = proto.Topics(TABLE)
    spectator = Client(sim.broker.config(SPECTATOR_USER), "spectator-spy", ["#", f"{t.base}/#"])
    spectator.start()
    assert spectator.wait_connected()
    bots = director(sim, seed=5)
    bots.start_game(3)
    bots.play()
    before = sim.watch.public["version"]
    for topic, payload in ((t.public, b'{"game":"forged"}'), (t.host_command, b'{"cmd":"abort"}')):
        spectator.publish(topic, payload, retain=True).wait_for_publish(2)
    time.sleep(0.5)
    spectator.stop()
    topics = []
    while not spectator.inbox.empty():
        msg = spectator.inbox.get()
        if msg is not None:
            topics.append(msg.topic)
    assert topics.count(t.public) > 20
    assert set(topics) == {t.public, t.hub_status}
    assert sim.watch.public["version"] == before and sim.watch.public["game"] == "secret-identity"
