"""The slow disk's own floor that ``coffre bench`` prints beside a load on it."""

from __future__ import annotations

import pytest

from firmware.bench.sd_card import disk_floor


def test_a_lone_input_waits_one_commit() -> None:
    """Nothing else waiting: the sync starts at once and lasts a commit."""
    assert disk_floor([3.0], 5, 100, 0) == pytest.approx([5.0])


def test_an_input_sent_during_a_sync_waits_for_the_next() -> None:
    """A sync covers only what was sent before it started."""
    assert disk_floor([0.0, 0.001, 0.002], 5, 0, 0) == pytest.approx([5.0, 9.0, 8.0])


def test_the_first_sync_after_each_period_stalls_and_holds_the_next() -> None:
    """The stall lands on the first sync due after the period; what came during it waits
    for the stall and then a commit of its own."""
    waits = disk_floor([0.0, 1.0, 1.001, 1.5, 2.2], 5, 100, 1.0)
    assert waits == pytest.approx([5.0, 105.0, 109.0, 5.0, 105.0])
