"""The host sets what a table hears: ``coffre host ... sound`` and the panel's Sound row,
over a real mosquitto and hub; the hub keeps it in its store (a restarted hub keeps it),
publishes it in ``public["sound"]``, and "off" makes every seat's screen ``quiet`` (no
station buzzes a turn)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from firmware.cli import main
from firmware.hub.hostmenu import sound_key
from firmware.link import protocol as proto
from firmware.tools.simtable import TABLE, SimTable
from tests.support.tables import (
    TableFactory,
    host_lines,
    host_toml,
    run_host,
    spy,
    stored_setting,
    until,
    wait_host_title,
)

GAME = "identites-cryptees"  # one seat to play at a time: its station buzzes


def sound_is(sim: SimTable, level: str) -> None:
    sim.watch.wait(lambda p: p.get("sound") == level)


def stored(sim: SimTable) -> str | None:
    return stored_setting(sim, sound_key(TABLE))


def test_the_command_line_sets_the_sound_and_a_restarted_hub_keeps_it(
    make_table: TableFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new table publishes the default (cues); ``sound narration`` is answered in one
    line, published, noted on the hub's glass, kept in the store and still there after the
    hub restarts."""
    sim = make_table(players=3)
    config = host_toml(sim, tmp_path)
    sound_is(sim, "cues")
    assert run_host(capsys, config, "--table", TABLE, "sound", "narration") == (
        0,
        f"{TABLE}: sound done: Sound: cues+speech",
        "",
    )
    sound_is(sim, "narration")
    wait_host_title(sim, "Sound: cues+speech")  # the note on the hub's glass
    sim.stop_hub()
    assert stored(sim) == "narration"
    with sim.watch.changed:
        sim.watch.public = {}  # what the new hub publishes, not the old one's retained copy
    sim.start_hub()
    sound_is(sim, "narration")
    assert sim.hub is not None and sim.hub.actors[TABLE].menu.sound == "narration"


@pytest.mark.parametrize("words", [["loud"], [], ["cues", "1234"]])
def test_a_sound_that_is_none_of_the_three_is_one_line(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``sound loud`` (or no setting) is the host's mistake: one line, before any broker."""
    status = main(["host", "--table", "t1", "--broker", "127.0.0.1", "sound", *words])
    assert status == 78
    assert capsys.readouterr().err.strip() == (
        "coffre: sound takes one of off, cues, narration: sound cues"
    )


def test_a_raw_sound_command_without_a_setting_is_refused(make_table: TableFactory) -> None:
    """On ``host/command`` itself (no command line to check it), a sound command that names
    no setting is refused in one line and the setting stays."""
    sim = make_table(players=3)
    sound_is(sim, "cues")
    sim.host({"cmd": "sound"})
    wait_host_title(sim, "Sound: off, cues or narration")
    assert sim.watch.public["sound"] == "cues"


def waited_on(sim: SimTable) -> list[str]:
    """The stations whose screen says the table waits on them."""
    return [n for n, st in sim.stations.items() if st.screen is not None and st.screen.turn]


def test_off_makes_every_seat_quiet_and_no_station_buzzes_its_turn(
    make_table: TableFactory,
) -> None:
    """On cues (the default) the seat the table waits on buzzes its turn; set off, every
    station's screen says quiet and the next turn is on the glass only; back on cues, the
    next turn buzzes again."""
    sim = make_table(players=4)
    start = {"cmd": "start", "game": GAME, "players": 4, "seed": 5}
    sim.host(start)
    until(lambda: len(waited_on(sim)) == 1, "a seat to play")
    (seat,) = waited_on(sim)
    until(lambda: sim.controls(seat).beeps.count("turn") == 1, "the turn buzz")
    sim.host({"cmd": "sound", "sound": "off"})
    sound_is(sim, "off")
    until(lambda: all(st.screen and st.screen.quiet for st in sim.stations.values()), "quiet")
    sim.host({"cmd": "abort"})
    until(lambda: not waited_on(sim), "the game's end")
    sim.host(start)
    until(lambda: waited_on(sim) == [seat], "the same seat's turn again")
    screen = sim.stations[seat].screen
    assert screen is not None and screen.quiet
    assert sim.controls(seat).beeps.count("turn") == 1  # decided before the screen shows
    sim.host({"cmd": "abort"})
    until(lambda: not waited_on(sim), "the game's end")
    sim.host({"cmd": "sound", "sound": "cues"})
    sound_is(sim, "cues")
    sim.host(start)
    until(lambda: sim.controls(seat).beeps.count("turn") == 2, "the turn buzz again")
    assert all(sim.controls(n).beeps.count("turn") == 0 for n in sim.names if n != seat)


def test_the_panel_sound_row_sets_it_and_the_glass_shows_it(make_table: TableFactory) -> None:
    """The idle menu's Sound row, in the table's language: ok steps it on (cues ->
    narration -> off), back steps it back; each is kept by the hub before the row shows it."""
    sim = make_table(players=3, language="fr")
    assert sim.hub is not None
    menu = sim.hub.actors[TABLE].menu
    for _ in range(menu.sound_row):  # the panel's presses reach the hub's thread later
        sim.panel.press("next")
    until(lambda: "> Son : signaux" in host_lines(sim), "the row under the cursor")
    sim.panel.press("ok")
    sound_is(sim, "narration")
    until(lambda: "> Son : signaux+voix" in host_lines(sim), "the row says narration")
    assert stored(sim) == "narration"
    sim.panel.press("ok")
    sound_is(sim, "off")
    until(lambda: "> Son : coupé" in host_lines(sim), "the row says off")
    sim.panel.press("back")
    sound_is(sim, "narration")
    assert stored(sim) == "narration"


def test_a_station_cannot_turn_the_sound_off(make_table: TableFactory) -> None:
    """A player with a station's credentials publishing a sound command on host/command
    (to silence a rival's turn buzz) reaches no hub: the broker's ACL drops it."""
    sim = make_table(players=3)
    sound_is(sim, "cues")
    forger = spy(sim, "p1", [])
    command = proto.encode({"id": "forged-1", "cmd": "sound", "sound": "off"})
    forger.publish(proto.Topics(TABLE).host_command, command).wait_for_publish(2)
    forger.stop()
    sim.host({"cmd": "sound", "sound": "narration"})  # a real one, answered after it
    sound_is(sim, "narration")
    assert all(p.get("sound") != "off" for _topic, p in public_messages(sim))
    assert all(st.screen is not None and not st.screen.quiet for st in sim.stations.values())


def public_messages(sim: SimTable) -> list[tuple[str, dict[str, Any]]]:
    """Every ``public`` the watcher heard, decoded."""
    topic = proto.Topics(TABLE).public
    return [(t, json.loads(p)) for t, p in sim.watch.messages if t == topic]
