"""Red team, random abuse: thousands of random inputs from every station in every phase."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from hardware.keys import COLOURS
from tests.support.hubrig import KEYS, Rig

SCREEN_CHARS = 63
SECRET_KEYS = ("my_mystery", "my_votes", "free_keys", '"secret"')  # history has "answer"


def random_input(rng: random.Random, players: int) -> dict[str, Any]:
    """Any input a station, a careless player or a cheat could send."""
    roll = rng.random()
    if roll < 0.35:
        colour = rng.choice(COLOURS[: players + 1])  # now and then a colour nobody plays
        return {"kind": "tag", "uid": KEYS.uid_for("vote", colour, rng.randint(1, 8))}
    if roll < 0.55:
        return {"kind": "tag", "uid": KEYS.uid_for("mystery", None, rng.randint(1, 8))}
    if roll < 0.6:
        return {"kind": "tag", "uid": rng.choice(["DEADBEEF", "04A1B2C3D4E5F6", "00000000"])}
    if roll < 0.78:
        return {"kind": "knob", "step": rng.choice([-8, -3, -1, 0, 1, 1, 2, 8])}
    if roll < 0.97:
        return {"kind": "press"}
    return {"kind": "button", "button": "peek"}


def fingerprint(rig: Rig) -> tuple[Any, ...]:
    table = rig.hub.actors["t"].table
    state = table.state if table else None
    return state, json.dumps(table.ui if table else {}, sort_keys=True), len(rig.events())


@pytest.mark.parametrize(
    ("options", "players", "seed"),
    [({}, 3, 1), ({}, 5, 2), ({"mode": "coop"}, 4, 3), ({"mystery": "dealt"}, 4, 4)],
)
def test_random_inputs_are_answered_readably_and_refusals_change_nothing(
    tmp_path: Path, options: dict[str, Any], players: int, seed: int
) -> None:
    """Every input gets an ack; a refusal is readable and changes nothing; public stays clean."""
    rng = random.Random(seed)
    stations = tuple(f"p{i + 1}" for i in range(players + 1))  # one station sits out
    rig = Rig(tmp_path, stations)
    rig.connected()
    rig.start(players, seed=seed, options=options)
    messages: set[str] = set()
    steps = restarts = 0
    while not rig.public().get("over") and steps < 4000:
        steps += 1
        if rng.random() < 0.04:
            before_host = fingerprint(rig)
            rig.host(rng.choice(["next", "next", "next", "undo"]))
            note = rig.host_lines()[-1]
            assert len(note) <= 21 * 3, note
            if before_host == fingerprint(rig):
                continue
        station = rng.choice(stations)
        before = fingerprint(rig)
        ack = rig.send(station, **random_input(rng, players))
        if ack["ok"]:
            # One event, or none for a knob turned against its stop (nothing moved).
            after = fingerprint(rig)
            assert len(rig.events()) == before[2] + 1 or after == before
        else:
            message = ack["message"]
            messages.add(message)
            assert message and len(message) <= SCREEN_CHARS, message
            assert not message.startswith("Hub error"), message
            assert fingerprint(rig) == before, message
        text = json.dumps(rig.public())
        assert not any(key in text for key in SECRET_KEYS)
        if rng.random() < 0.01 and not rig.public().get("over"):
            # The hub restarts: the resumed table is the same table, cursors included.
            was = fingerprint(rig)
            rig.close()
            seq, commands, rig = rig.seq, rig.commands, Rig(tmp_path, stations)
            rig.seq = seq  # the stations keep their boot ids and counters
            rig.commands = commands  # and the host its
            rig.connected()
            assert fingerprint(rig) == was
            restarts += 1
    assert rig.public()["over"], f"no end after {steps} steps"
    assert "Not in this game" in messages
    assert restarts > 0
    assert rig.table.state.phase == "over"
    final = rig.public()
    if final["view"]["mode"] == "competitive":
        # The final scores are what the opened safes say, counted independently.
        scores = [0] * players
        for rnd in final["view"]["history"]:
            for safe in rnd["safes"]:
                scores[safe["safe"]] += len(safe["right"])
                for voter in safe["right"]:
                    scores[voter] += 1
                assert safe["points"] == len(safe["right"])
                right = [v["voter"] for v in safe["votes"] if v["number"] == safe["mystery"]]
                assert safe["right"] == right
        assert final["scores"] == scores
        assert len(final["view"]["history"]) == 4
