"""The station's reader loop polls at a fixed rate, on a fake clock (no timing asserts);
poll starts are counted from the clock's start."""

from __future__ import annotations

import types

import pytest

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.link.mqtt import BrokerConfig
from firmware.station import service
from firmware.station.service import Station
from tests.support.hub import Clock

INTERVAL = 0.02
START = Clock().now


class Stop:
    """The loop's stop event: each wait passes the fake time; set after ``polls`` polls."""

    def __init__(self, clock: Clock, polls: int) -> None:
        self.clock = clock
        self.polls = polls
        self.waited = 0

    def wait(self, timeout: float) -> bool:
        self.clock.now += timeout
        self.waited += 1
        return self.waited > self.polls


class TimedReader(MockReader):
    """A reader whose polls take ``costs`` seconds in turn (an empty poll, a card read...)."""

    def __init__(self, clock: Clock, costs: list[float]) -> None:
        super().__init__()
        self.clock = clock
        self.costs = costs
        self.starts: list[float] = []

    def poll(self) -> None:
        self.starts.append(round(self.clock.now - START, 6))
        self.clock.now += self.costs[len(self.starts) - 1]


def run(monkeypatch: pytest.MonkeyPatch, costs: list[float]) -> list[float]:
    clock = Clock()
    monkeypatch.setattr(service, "time", types.SimpleNamespace(monotonic=clock))
    reader = TimedReader(clock, costs)
    devices = StationDevices(reader, MockDisplay(), MockControls())
    st = Station(BrokerConfig(port=1), "t", "p1", devices, poll_interval=INTERVAL)
    st._stop = Stop(clock, len(costs))  # type: ignore[assignment]
    st._reader_loop()
    return reader.starts


def test_polls_start_every_interval_whatever_a_poll_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty polls (1.8 ms) and a card read (8 ms): a poll starts every 20 ms, not 20 ms
    after the last one ended."""
    starts = run(monkeypatch, [0.0018, 0.0018, 0.008, 0.0018, 0.0018])
    assert starts == [0.02, 0.04, 0.06, 0.08, 0.1]


def test_a_poll_longer_than_the_interval_is_followed_at_once_without_catching_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 50 ms poll: the next starts as it ends, and the rate resumes from there (no burst
    of polls to make up for the ones it covered)."""
    starts = run(monkeypatch, [0.0018, 0.05, 0.0018, 0.0018])
    assert starts == [0.02, 0.04, 0.09, 0.11]
