"""No secret reaches the table display: re-dealt secrets give the same page, and the
spectator user hears nothing but ``public`` and ``hub/status``."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from msgspec.structs import replace

from firmware.display.feed import SPECTATOR_USER as DISPLAY_USER
from firmware.display.feed import Snapshot
from firmware.display.render import page, table_fragment
from firmware.hub.bindings import binding_for
from firmware.hub.brokerconf import SPECTATOR_USER
from firmware.hub.table import Seating, Table
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.tools.simtable import TABLE
from hardware.keys import COLOURS, load_keyset
from rules import get_game
from tests.platform.browser import chromium, new_page
from tests.platform.conftest import TableFactory, director
from tests.rules import test_identiquest as iq_tests
from tests.rules import test_identites_cryptees_playout as ic_tests
from tests.rules import test_incognito as inc_tests
from tests.rules import test_ultra_secret as us_tests

KEYS = load_keyset()
Redeal = Callable[[Any, random.Random], Any]


def redeal_secret_identity(st: Any, r: random.Random) -> Any:
    """Other mystery keys and votes in every safe not opened yet (the rest is public)."""
    if st.mode != "competitive" or st.phase not in ("prepare", "vote", "reveal"):
        return st
    first = st.opened if st.phase == "reveal" else 0
    mystery = [m if t < first or not m else r.randint(1, 8) for t, m in enumerate(st.mystery)]
    votes = []
    for row in st.votes:
        shown = {n for t, n in enumerate(row) if t < first and n}
        free = r.sample([n for n in range(1, 9) if n not in shown], 8 - len(shown))
        votes.append(tuple(n if t < first or not n else free.pop() for t, n in enumerate(row)))
    return replace(st, mystery=tuple(mystery), votes=tuple(votes))


def redeal_incognito(st: Any, r: random.Random) -> Any:
    if st.phase == "draw":
        return inc_tests.redeal_draw(st, 0, r.randrange(1000))
    if st.phase == "vote":
        return inc_tests.redeal_vote(st, 0, r.randrange(1000))
    return st


def redeal_identiquest(st: Any, r: random.Random) -> Any:
    over = get_game("identiquest").is_over(st)
    return st if over else iq_tests.redeal(st, 0, r.randrange(1000))


REDEALS: dict[str, tuple[int, Redeal]] = {
    "secret-identity": (5, redeal_secret_identity),
    "incognito": (4, redeal_incognito),
    "identiquest": (5, redeal_identiquest),
    "ultra-secret": (4, lambda st, r: us_tests.redeal(st, None, r)),
    "identites-cryptees": (12, lambda st, r: ic_tests.redeal(st, None, r)),
}


def playout(game: str, players: int, seed: int) -> Iterator[Any]:
    """The states of a random game (any seat's legal actions), every one of them."""
    if game == "ultra-secret":
        yield from us_tests.SAMPLES
        return
    engine = get_game(game)
    st = engine.setup(players, {}, seed)
    r = random.Random(seed)
    for _ in range(400):
        yield st
        if engine.is_over(st):
            return
        if game == "identites-cryptees":
            action = ic_tests.bot(st, r)
        else:
            actions = [a for seat in range(st.players) for a in engine.legal_actions(st, seat)]
            if not actions:
                return
            action = r.choice(actions)
        st, _ = engine.apply(st, action)


def public_of(game: str, st: Any) -> dict[str, Any]:
    """The ``public`` payload the hub would publish for this engine state."""
    stations = [f"p{i + 1}" for i in range(st.players)]
    table = Table(
        game, st.players, {}, 1, Seating(stations, list(COLOURS) * 2), KEYS, binding_for(game)
    )
    table.state = st
    table.events = st.version + 1  # a fresh view, not the cached one of the first state
    return json.loads(proto.encode(table.public()))


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
    assert compared > 10 and changed > compared // 3, (compared, changed)
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
