"""Red team, secrets: what the whole table can see must not depend on anyone's secret.

Everything a person at the table can read without lifting a flap: ``public``, the hub
display, the hub status, every station's screen outside its ``secret`` part, and every
ack (a refusal shows on that station's glass). Two games played with the same gestures
but other numbers (mystery keys, vote keys) must produce exactly the same such traffic,
message for message and in the same order, until a safe opens.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from firmware.link import protocol as proto
from hardware.keys import COLOURS
from tests.support.hubrig import KEYS, TABLE, Rig, T

Script = Callable[[Rig, list[int], list[list[int]]], None]

#: Mystery numbers per seat, and each voter's own order of vote-key numbers, per deal.
DEALS = [
    ([1, 2, 3, 4], [[1, 2, 3, 4, 5, 6, 7, 8]] * 4),
    (
        [7, 4, 8, 2],
        [
            [8, 6, 1, 3, 2, 4, 5, 7],
            [3, 5, 7, 1, 6, 2, 8, 4],
            [2, 8, 4, 6, 1, 7, 3, 5],
            [5, 1, 2, 8, 7, 3, 4, 6],
        ],
    ),
]


def visible(rig: Rig) -> list[tuple[str, Any]]:
    """What anyone at the table can read: all traffic with the secret parts cut out."""
    out: list[tuple[str, Any]] = []
    for topic, payload, _ in rig.sent:
        parsed = T.parse_station_topic(topic)
        if parsed is not None and parsed[1] == "screen":
            payload = {k: v for k, v in payload.items() if k != "secret"}
        out.append((topic, payload))
    return out


def play(tmp_path: Path, script: Script, deal: int, **start: Any) -> list[tuple[str, Any]]:
    mystery, keys = DEALS[deal]
    folder = tmp_path / f"deal{deal}"
    folder.mkdir()
    rig = Rig(folder, ("p1", "p2", "p3", "p4"))
    rig.connected()
    rig.start(4, seed=11, **start)
    script(rig, mystery, keys)
    assert rig.public()["view"]["revealed"] == []
    return visible(rig)


def first_difference(a: list[Any], b: list[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"message {i}: {x} != {y}"
    return f"lengths {len(a)} != {len(b)}"


def vote_key(voter: int, number: int) -> str:
    return KEYS.uid_for("vote", COLOURS[voter], number)


def clumsy_round(rig: Rig, mystery: list[int], keys: list[list[int]]) -> None:
    """Prepare and vote with the ordinary mistakes of a real table, up to the reveal."""
    for seat, station in enumerate(rig.stations):
        rig.mystery(station, mystery[seat])
        # Taps again (a different mystery key) and presses the wrong way: refused.
        rig.mystery(station, mystery[(seat + 1) % 4])
        rig.tap(station, vote_key((seat + 1) % 4, keys[(seat + 1) % 4][0]))
        rig.knob(station, 2)
        rig.knob(station, -1)
        rig.press(station)
        rig.press(station)
    assert rig.public()["view"]["phase"] == "vote"
    for voter in range(4):
        targets = [s for s in range(4) if s != voter]
        # Own safe, a mystery key in a safe: refused. Then one key lands on the
        # wrong safe and moves, and one key is replaced by another.
        rig.tap(rig.stations[voter], vote_key(voter, keys[voter][5]))
        rig.mystery(rig.stations[targets[0]], mystery[voter])
        rig.tap(rig.stations[targets[0]], vote_key(voter, keys[voter][1]))
        rig.tap(rig.stations[targets[1]], vote_key(voter, keys[voter][1]))
        rig.tap(rig.stations[targets[0]], vote_key(voter, keys[voter][6]))
        rig.tap(rig.stations[targets[0]], vote_key(voter, keys[voter][0]))
        rig.tap(rig.stations[targets[2]], vote_key(voter, keys[voter][2]))
    assert rig.public()["view"]["phase"] == "reveal"


def double_tap_round(rig: Rig, mystery: list[int], keys: list[list[int]]) -> None:
    """A plain round where red, unsure the tap took, taps its key on yellow twice."""
    for seat, station in enumerate(rig.stations):
        rig.mystery(station, mystery[seat])
        rig.press(station)
    rig.tap("p2", vote_key(0, keys[0][0]))
    rig.tap("p2", vote_key(0, keys[0][0]))  # the same key again, on the same safe


def test_table_visible_traffic_does_not_depend_on_secrets(tmp_path: Path) -> None:
    """Same gestures, other numbers: public, hub display, screens and acks are identical."""
    a, b = (play(tmp_path, clumsy_round, deal) for deal in (0, 1))
    assert len(a) > 100
    assert a == b, first_difference(a, b)


def test_public_never_carries_a_number_before_its_safe_opens(tmp_path: Path) -> None:
    """No public message, hub display or status holds a key number of an unopened safe."""
    traffic = play(tmp_path, clumsy_round, 1)
    for topic, payload in traffic:
        if topic in (T.public, T.host_screen, T.hub_status):
            text = proto.encode(payload).decode()
            assert "my_mystery" not in text and "my_votes" not in text, topic
            if topic == T.public and payload.get("view"):
                assert payload["view"]["revealed"] == []
                assert all(
                    set(s) >= {"voters", "votes_in"} and "votes" not in s
                    for s in payload["view"]["seats"]
                )


def test_double_tapped_vote_does_not_show_its_number(tmp_path: Path) -> None:
    """Red taps its key twice on yellow: yellow's station must not learn red's number."""
    a, b = (play(tmp_path, double_tap_round, deal) for deal in (0, 1))
    assert a == b, first_difference(a, b)


def test_coop_double_tapped_answer_stays_hidden_from_the_active_player(tmp_path: Path) -> None:
    """Co-op: the team's answer tapped twice must not appear on the active station's glass."""

    def coop_turn(rig: Rig, mystery: list[int], keys: list[list[int]]) -> None:
        rig.mystery("p1", mystery[0])
        rig.press("p1")
        assert rig.public()["view"]["phase"] == "answer"
        answer = vote_key(1, keys[1][0])
        rig.tap("p1", answer)
        rig.tap("p1", answer)  # tapped again by a teammate, to be sure

    a, b = (play(tmp_path, coop_turn, deal, options={"mode": "coop"}) for deal in (0, 1))
    active = [(t, p) for t, p in a if t in (T.station("p1", "ack"), T.station("p1", "screen"))]
    other = [(t, p) for t, p in b if t in (T.station("p1", "ack"), T.station("p1", "screen"))]
    assert active == other, first_difference(active, other)


def test_secret_reaches_only_its_own_station_topic(tmp_path: Path) -> None:
    """Every mystery number travels only in its owner's screen, under ``secret``."""
    mystery = DEALS[1][0]
    rig = Rig(tmp_path, ("p1", "p2", "p3", "p4"))
    rig.connected()
    rig.start(4, seed=3)
    clumsy_round(rig, mystery, DEALS[1][1])
    for topic, payload, _ in rig.sent:
        parsed = T.parse_station_topic(topic)
        if parsed is None or parsed[1] != "screen" or "secret" not in payload:
            continue
        seat = rig.stations.index(parsed[0])
        secret = payload["secret"]
        text = f"{secret.get('title', '')} {secret.get('big', '')}"
        numbers = {int(c) for c in text if c.isdigit()}
        assert numbers <= {mystery[seat]}, (topic, secret)
    assert rig.hub.actors[TABLE].table is not None


def test_hub_chosen_seeds_cannot_be_brute_forced(tmp_path: Path) -> None:
    """With ``mystery: dealt`` the seed is every secret: the hub must draw it from > 32 bits."""
    rig = Rig(tmp_path)
    seeds = []
    for _ in range(24):
        rig.host("start", game="secret-identity", players=3, options={"mystery": "dealt"})
        record = rig.hub.actors[TABLE].record
        assert record is not None
        seeds.append(record.seed)
    # 24 draws from 63 bits all below 2**32: odds 2**-744. From 32 bits: certain.
    assert max(seeds) >= 2**32, max(seeds)


def test_coop_active_player_sees_nothing_of_the_answer(tmp_path: Path) -> None:
    """Co-op: the active station (secret part too), public and hub see no answer number."""
    runs = []
    for answer in (3, 6):
        folder = tmp_path / f"answer{answer}"
        folder.mkdir()
        rig = Rig(folder, ("p1", "p2", "p3", "p4"))
        rig.connected()
        rig.start(4, seed=11, options={"mode": "coop"})
        assert rig.mystery("p1", 5)["ok"] and rig.press("p1")["ok"]
        assert rig.tap("p1", vote_key(1, answer))["ok"]
        assert rig.tap("p1", vote_key(2, 8 - answer))["ok"]  # changed their mind
        assert rig.tap("p1", vote_key(3, answer))["ok"]  # and back
        assert rig.press("p2")["ok"] is False  # a guesser cannot open
        seen = [
            (t, p)
            for t, p, _ in rig.sent
            if t in (T.public, T.host_screen, T.hub_status)
            or t in (T.station("p1", "screen"), T.station("p1", "ack"))
        ]
        runs.append(seen)
    assert runs[0] == runs[1], first_difference(runs[0], runs[1])
