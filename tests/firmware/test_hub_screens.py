"""What the hub sends the stations (issue 25): the game step on every screen, and the
interrupt window's seconds counting down on the stations."""

from __future__ import annotations

from pathlib import Path

from tests.support.hub import Clock, T, deliver, four_seat_hub, host, screens


def test_every_station_screen_names_the_game_step(tmp_path: Path) -> None:
    """Each screen carries its round and phase ("1/draw"), so a station ends a toast when
    the step changes; the step moves with the game."""
    hub, sent = four_seat_hub(tmp_path, Clock())
    host(hub, {"cmd": "start", "game": "incognito", "players": 4, "seed": 3})
    assert screens(sent, "p1")[-1]["phase"] == "1/draw"
    for n, station in enumerate(["p1", "p2", "p3", "p4"]):
        deliver(hub, T.station(station, "input"), {"id": f"b{n}:1", "kind": "press"})
    assert screens(sent, "p1")[-1]["phase"] == "1/vote"


def test_the_interrupt_window_counts_down_on_the_stations(tmp_path: Path) -> None:
    """Identités cryptées: once an action is declared, the other stations' status line and
    the menu's title tick 5s, 4s, 3s... as the hub's clock runs."""
    clock = Clock()
    hub, sent = four_seat_hub(tmp_path, clock)
    host(hub, {"cmd": "start", "game": "identites-cryptees", "players": 4, "seed": 5})
    table = hub.actors["t"].table
    assert table is not None
    seat = table.view(None)["table"]["active"]
    menu = table.binding.menu(table, seat)  # type: ignore[attr-defined]
    draw = next(i for i, o in enumerate(menu) if o.label == "Draw a program")
    station = f"p{seat + 1}"
    deliver(hub, T.station(station, "input"), {"id": "a:1", "kind": "knob", "step": draw})
    deliver(hub, T.station(station, "input"), {"id": "a:2", "kind": "press"})
    other = f"p{(seat + 1) % 4 + 1}"
    shown = [screens(sent, other)[-1]["lines"][0]]
    for _second in range(3):
        clock.now += 1.0
        hub._tick()
        shown.append(screens(sent, other)[-1]["lines"][0])
    assert [line.split(":")[0] for line in shown] == [
        "Window 5s",
        "Window 4s",
        "Window 3s",
        "Window 2s",
    ]
