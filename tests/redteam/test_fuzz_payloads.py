"""Red team: broken station payloads (the 300k run of tests.support.fuzz.py, small)."""

from __future__ import annotations

from tests.support.fuzz import run


def test_broken_payloads_are_answered_by_id_and_change_nothing() -> None:
    """Every payload whose id can be read is answered with that id; none is accepted and
    the table is as it was (the script's 300k run prints the same figures)."""
    out = run(3000, seed=7)
    assert out["owed"] > 1000
    assert out["unanswered"] == []
    assert out["accepted"] == 0
    assert out["changed"] is False
