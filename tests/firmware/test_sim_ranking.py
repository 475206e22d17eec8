"""`coffre sim`'s printed final ranking names each seat by its own colour."""

from __future__ import annotations

import pytest

from firmware.tools.sim import _print_ranking

SEATS = [{"colour": c} for c in ("red", "yellow", "green", "blue")]


def test_identiquest_seats_are_not_named_by_its_gem_colours(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Identiquest's view lists its gem colours: the ranking still names the seats."""
    final = {
        "seats": SEATS,
        "scores": [3, 3, 5, 4],
        "ranking": [[2], [3], [0, 1]],
        "view": {"colours": ["orange", "pink", "purple", "yellow"]},
    }
    _print_ranking("identiquest", final)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("1.", "green", "5"),
        ("2.", "blue", "4"),
        ("3.", "red", "3"),
        ("3.", "yellow", "3"),
    ]


def test_ultra_secret_agents_go_by_their_own_colours(capsys: pytest.CaptureFixture[str]) -> None:
    """The hub names Ultra Secret's seats by the agents' colours in ``public``'s seats
    (tests/firmware/test_table_public.py checks it does); the ranking prints those."""
    final = {
        "seats": [{"colour": c} for c in ("brown", "white", "grey")],
        "scores": [1, 0, 0],
        "ranking": [[0], [1, 2]],
        "view": {"colours": ["brown", "white", "grey"]},
    }
    _print_ranking("ultra-secret", final)
    names = [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:4]]
    assert names == ["brown", "white", "grey"]
