"""The station: local feedback before the hub answers, secrets behind the flap."""

from __future__ import annotations

import time

from device.mock import MockDisplay
from firmware.link.render import render
from tests.support.tables import TableFactory, director


def test_every_read_blinks_and_ticks_at_once_even_with_no_hub(make_table: TableFactory) -> None:
    """A tag read gives a blue blink and a tick before (and without) any answer."""
    sim = make_table(3)
    sim.stop_hub()
    controls = sim.controls("p1")
    leds, beeps = len(controls.leds), len(controls.beeps)
    sim.tap("p1", sim.keys.uid_for("mystery", None, 2), settle=False)
    assert controls.beeps[beeps:] == ["tick"]
    assert controls.leds[leds] == (0.0, 0.0, 1.0)
    assert sim.stations["p1"].pending  # kept until a hub answers


def test_secret_drawn_only_while_flap_open_or_peek_held(make_table: TableFactory) -> None:
    """The mystery number shows with the flap open or peek held, and goes when closed."""
    sim = make_table(3)
    bots = director(sim, seed=1, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    station = sim.stations["p1"]
    # The station's own screen for the vote may land just after the public table does.
    deadline = time.monotonic() + 5
    while not (station.screen and station.screen.title.endswith("Vote")):
        assert time.monotonic() < deadline, "p1 never showed the vote"
        time.sleep(0.01)
    time.sleep(0.1)
    screen = station.screen
    assert screen is not None and screen.secret is not None
    display = sim.devices["p1"].display
    assert isinstance(display, MockDisplay)
    public = render(screen, show_secret=False).tobytes()
    secret = render(screen, show_secret=True).tobytes()
    assert public != secret
    assert display.last is not None and display.last.tobytes() == public
    controls = sim.controls("p1")
    for show, hide in (
        (controls.open_flap, controls.close_flap),
        (controls.hold_peek, controls.release_peek),
    ):
        count = sim.frame_count("p1")
        show()
        sim.wait_frames("p1", count + 1)
        assert display.last is not None and display.last.tobytes() == secret
        hide()
        sim.wait_frames("p1", count + 2)
        assert display.last is not None and display.last.tobytes() == public


def test_refusal_shows_a_toast_that_goes_away(make_table: TableFactory) -> None:
    """A refused tap shows its message on the screen, then the screen comes back."""
    sim = make_table(3)
    display = sim.devices["p2"].display
    assert isinstance(display, MockDisplay)
    before = display.last
    ack = sim.tap("p2", "DEADBEEF")
    assert ack is not None and ack.message == "No game: ask the host"
    assert display.last is not None and before is not None
    assert display.last.tobytes() != before.tobytes()
    time.sleep(3.0)
    assert display.last.tobytes() == before.tobytes()
    assert sim.controls("p2").beeps[-1] == "error"
