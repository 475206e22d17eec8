"""A venue in small: three ``coffre hub`` processes, each with its own tables and its own
broker user, on one real mosquitto (TLS and the ACL ``coffre broker-config`` writes for
the venue). Every input is answered exactly once (acks counted per input id), and killing
one hub leaves the other two answering all of theirs while its own tables go unanswered
(no other hub picks them up). The latencies are printed, never asserted (tests/bench/
bench_venue.py is the longer run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware.bench.load import LoadResult, Venue

HUBS = 3
TABLES = 6  # two each
SECONDS = 2.0
RATE = 2.0  # knob turns a second per station: 96 inputs a second in all


@pytest.fixture
def venue(tmp_path: Path) -> Iterator[Venue]:
    v = Venue(TABLES, HUBS, workdir=tmp_path, users=True)
    try:
        v.start()
        yield v
    finally:
        v.stop()


def answers(v: Venue, result: LoadResult, hub: str) -> list[int]:
    """How many answers each of ``hub``'s inputs of that load got (in sending order)."""
    tables = v.hub_tables[hub]
    with v.generator.lock:
        return [v.generator.answers[i] for i in result.ids if v.generator.sent[i][0] in tables]


def test_three_hubs_answer_every_input_once_and_survive_one_killed(venue: Venue) -> None:
    assert list(venue.hub_tables) == ["hub1", "hub2", "hub3"]
    assert all(len(t) == 2 for t in venue.hub_tables.values())

    before = venue.run(SECONDS, RATE, "before")
    for hub in venue.hub_tables:
        got = answers(venue, before, hub)
        assert got and set(got) == {1}, (hub, sorted(set(got)))
    assert before.twice == 0 and before.lost == 0

    venue.kill("hub2")
    after = venue.run(SECONDS, RATE, "after")
    for hub in ("hub1", "hub3"):
        got = answers(venue, after, hub)
        assert got and set(got) == {1}, (hub, sorted(set(got)))
    assert set(answers(venue, after, "hub2")) == {0}  # nobody answers for a dead hub
    assert after.twice == 0

    print()
    for hub in venue.hub_tables:
        print(f"{hub} before: {before.hubs[hub].line()}")
        print(f"{hub} after hub2 was killed: {after.hubs[hub].line()}")
