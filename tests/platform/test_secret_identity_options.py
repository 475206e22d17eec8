"""Secret Identity's options played at the table: co-op and dealt numbers, end to end."""

from __future__ import annotations

import copy
import json
import re
import time
from typing import Any

from firmware.link import protocol as proto
from firmware.tools.bots.secret_identity import Director
from firmware.tools.sim import recorded_frames
from firmware.tools.simtable import TABLE
from rules.secret_identity import INFO
from tests.support.golden import frame_problems
from tests.support.tables import TableFactory, director, drain, expected_scores, leaves, spy


def team_recount(record: dict[int, dict[str, Any]]) -> int:
    """Right answers, from the key the active bot used and the last answer tapped."""
    return sum(1 for turn in record.values() if turn["answer"] == turn["mystery"])


def band(right: int) -> tuple[int, int]:
    """The rulebook's co-op bands (0-2, 3-5, 6-8, 9-10), written out here on purpose."""
    for lo, hi in ((0, 2), (3, 5), (6, 8), (9, 10)):
        if lo <= right <= hi:
            return lo, hi
    raise AssertionError(right)


def check_coop_game(bots: Director, final: dict[str, Any], players: int) -> None:
    """The team's score, each turn's record and the band equal what the bots did."""
    view = final["view"]
    assert final["over"] and view["mode"] == "coop" and view["rounds"] == 10
    right = team_recount(bots.record)
    assert final["scores"] == [right] * players
    assert view["team"]["score"] == right
    assert [(h["turn"], h["active"], h["mystery"], h["answer"]) for h in view["history"]] == [
        (t, r["active"], r["mystery"], r["answer"]) for t, r in sorted(bots.record.items())
    ]
    assert [h["pictos"] for h in view["history"]] == [
        r["pictos"] for _, r in sorted(bots.record.items())
    ]
    assert view["result"]["right"] == right
    assert tuple(view["result"]["band"]) == band(right)
    # One active player per turn, in seat order: the others only tapped answers.
    assert [r["active"] for _, r in sorted(bots.record.items())] == [
        t % players for t in range(len(bots.record))
    ]
    for turn in bots.record.values():
        assert turn["answers"] and all(s != turn["active"] for s, _ in turn["answers"])


def test_coop_game_scores_the_team_and_matches_the_goldens(make_table: TableFactory) -> None:
    """mode=coop: keys on the active safe, answers tapped there, team score and band, goldens."""
    sim = make_table(4)
    bots = director(sim, seed=4, options={"mode": "coop"})
    bots.start_game(4)
    final = bots.play()
    time.sleep(0.3)  # let the last screens land

    check_coop_game(bots, final, 4)
    assert len(bots.record) == 10
    host = sim.watch.host
    assert host["title"] == "Game over"
    # Every station's last screen gives the team's count, the last turn and the band's words.
    said = INFO.band(final["view"]["result"]["band"][0])  # the declared band, glass wording
    assert said is not None
    band = said.short
    right = team_recount(bots.record)
    for name in sim.names:
        screen = sim.stations[name].screen
        assert screen is not None
        assert screen.lines[0] == f"{right} right answer" + ("" if right == 1 else "s")
        assert screen.lines[1].startswith("Turn 10: ")  # the turn in words where it fits
        assert " ".join(screen.lines[2:]).split() == band.split()
    problems = [
        p for n in sim.names for p in frame_problems(f"si-coop/{n}", recorded_frames(sim, n))
    ]
    assert not problems, problems


def test_coop_with_dealt_numbers_read_under_the_flap(make_table: TableFactory) -> None:
    """mode=coop mystery=dealt: the active bot reads its dealt number; nobody taps a key."""
    sim = make_table(3)
    bots = director(sim, seed=6, options={"mode": "coop", "mystery": "dealt"})
    bots.start_game(3)
    final = bots.play()
    assert final["view"]["mystery"] == "dealt"
    check_coop_game(bots, final, 3)
    assert all(1 <= r["mystery"] <= 8 for r in bots.record.values())


def test_dealt_numbers_competitive_game(make_table: TableFactory) -> None:
    """mystery=dealt: bots read their numbers under the flap; the recount matches public."""
    sim = make_table(3)
    bots = director(sim, seed=9, options={"mystery": "dealt"})
    bots.start_game(3)
    final = bots.play()
    view = final["view"]
    assert final["over"] and view["mystery"] == "dealt"
    assert final["scores"] == expected_scores(bots.record, 3)
    for rnd in view["history"]:
        assert {s["safe"]: s["mystery"] for s in rnd["safes"]} == bots.record[rnd["round"]][
            "mystery"
        ]
    # Each round's numbers are a fresh deal of different numbers.
    for rnd in bots.record.values():
        assert len(set(rnd["mystery"].values())) == 3


# --- the re-deal spy ---------------------------------------------------------------------


def spied_coop_game(
    make_table: TableFactory, relabel: Any
) -> tuple[Director, dict[str, list[tuple[str, Any]]]]:
    """A 3-seat co-op game with a spy on each station's credentials listening to '#'."""
    sim = make_table(3)
    t = proto.Topics(TABLE)
    spies = {n: spy(sim, n, ["#"]) for n in sim.names}
    bots = director(sim, seed=2, options={"mode": "coop"}, relabel=relabel)
    bots.start_game(3)
    bots.play()
    time.sleep(0.4)
    heard: dict[str, list[tuple[str, Any]]] = {}
    for name, client in spies.items():
        messages = drain(client)
        client.stop()
        own = {t.station(name, k) for k in ("screen", "ack", "status")}
        topics = {topic for topic, _ in messages}
        assert topics <= own | {t.public, t.hub_status}, topics
        heard[name] = [
            (topic, json.loads(payload))
            for topic, payload in messages
            if topic != t.station(name, "status")  # its own boot id and reader: not the game's
        ]
    return bots, heard


def seen_by(heard: list[tuple[str, Any]]) -> list[str]:
    """What one station received, with what may differ between two deals taken out.

    A station's own secret (its key, shown while it is active), ack ids (its boot id) and
    the numbers of safes already opened (public history, and the screens' line saying how
    the last turn went: "T3: was 5, not 2") may differ, and so may the hub's claim on
    hub/status (each deal had a hub of its own); nothing else may.
    """
    out: list[str] = []
    for topic, data in heard:
        data = copy.deepcopy(data)  # the checks below read the messages as heard
        if topic.endswith("/screen"):
            data.pop("rev", None)
            data.pop("secret", None)
            data["lines"] = [
                re.sub(r"^(T(?:urn )?\d+: ).*", r"\1#", ln) for ln in data.get("lines", [])
            ]
        elif topic.endswith("/ack"):
            data.pop("id", None)
        elif topic.endswith("/hub/status"):
            data.pop("claim", None)
        elif topic.endswith("/public"):
            view = data.get("view") or {}
            for turn in view.get("history") or []:
                turn["mystery"] = turn["answer"] = None
            # The feed says the same opened safes as the history (public once opened).
            for event in data.get("feed") or []:
                if event.get("kind") == "safe_opened":
                    event["data"]["mystery"] = event["data"]["answer"] = None
        text = json.dumps([topic, data], sort_keys=True)
        if not out or out[-1] != text:
            out.append(text)
    return out


def test_coop_redeal_changes_nothing_a_foreign_station_hears(make_table: TableFactory) -> None:
    """Co-op: relabel every key and answer; no station hears a difference but its own secret."""
    first, heard_a = spied_coop_game(make_table, lambda n: n)
    second, heard_b = spied_coop_game(make_table, lambda n: 9 - n)
    # The deal really differs, turn by turn, and right answers stay right.
    for turn, rec in first.record.items():
        other = second.record[turn]
        assert other["mystery"] == 9 - rec["mystery"] and other["answer"] == 9 - rec["answer"]
    for name in heard_a:
        assert seen_by(heard_a[name]) == seen_by(heard_b[name]), name
    # The active number is on its own station only, and only while that station is active.
    for name, messages in heard_a.items():
        seat = int(name[1:]) - 1
        for topic, data in messages:
            secret = data.get("secret") or {}
            if topic.endswith("/screen") and secret.get("title") == "Your mystery key":
                turn = int(re.search(r" T(?:urn )?(\d+)/", data["title"])[1])  # type: ignore[index]
                assert first.record[turn]["active"] == seat, (name, data)
                assert data["secret"]["big"] == str(first.record[turn]["mystery"])
            if topic.endswith("/public"):
                for path, _ in leaves(data):
                    # The option's name ("mystery": "keys") is public; numbers only in history.
                    if path[-1] not in ("mystery", "answer") or path == ("view", "mystery"):
                        continue
                    if path[0] == "feed":  # the feed tells an opened safe the history shows
                        said = data["feed"][int(path[1])]
                        shown = {(t["turn"], t["mystery"]) for t in data["view"]["history"]}
                        assert said["kind"] == "safe_opened", path
                        assert (said["data"]["turn"], said["data"]["mystery"]) in shown, path
                    else:
                        assert "history" in path, path
