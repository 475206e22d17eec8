"""The hub tells a station when the table waits on its seat (``Screen.turn``): the seat
the engine says is to play, and no other."""

from __future__ import annotations

from pathlib import Path

from tests.support.hub import Clock, four_seat_hub, host, screens

STATIONS = ["p1", "p2", "p3", "p4"]


def turns(sent: list[tuple[str, object]]) -> list[bool]:
    """Whether each station's last screen says the table waits on it."""
    return [bool(screens(sent, s)[-1].get("turn")) for s in STATIONS]  # type: ignore[arg-type]


def test_the_turn_is_on_the_seat_to_play(tmp_path: Path) -> None:
    """Identités cryptées: the active seat's screen says turn, the others' do not; the
    game's end takes it off."""
    hub, sent = four_seat_hub(tmp_path, Clock())
    host(hub, {"cmd": "start", "game": "identites-cryptees", "players": 4, "seed": 5})
    table = hub.actors["t"].table
    assert table is not None
    seat = table.view(None)["table"]["active"]
    assert turns(sent) == [s == seat for s in range(4)]
    host(hub, {"cmd": "abort"})
    assert not any(bool(screens(sent, s)[-1].get("turn")) for s in STATIONS)


def test_a_game_with_everyone_at_once_buzzes_nobody(tmp_path: Path) -> None:
    """Incognito's drawing is everyone's at once: no seat's screen says turn."""
    hub, sent = four_seat_hub(tmp_path, Clock())
    host(hub, {"cmd": "start", "game": "incognito", "players": 4, "seed": 3})
    assert turns(sent) == [False] * 4
