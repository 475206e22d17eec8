"""The host sets what a table speaks: ``coffre host ... language`` and the panel's Language
row, over a real mosquitto and hub; the hub keeps it in its store (a restarted hub keeps
it), says it in its status (the TV follows that) and every station's screen and the hub's
glass speak it at once. A station's credentials cannot send it."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.cli import main
from firmware.hub.hostmenu import language_key
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

WAITING = {"en": "Waiting for the host", "fr": "On attend l'hôte"}


def speaks(sim: SimTable, language: str) -> None:
    """The hub's status says ``language`` and every idle station's screen speaks it."""
    sim.watch.wait_hub(lambda s: s.get("language") == language, f"the status says {language}")
    until(
        lambda: all(
            st.screen is not None and WAITING[language] in st.screen.lines
            for st in sim.stations.values()
        ),
        f"every station in {language}",
    )


def stored(sim: SimTable) -> str | None:
    return stored_setting(sim, language_key(TABLE))


def test_the_command_line_sets_the_language_and_a_restarted_hub_keeps_it(
    make_table: TableFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A French table; ``language en`` is answered in one line, said in the hub's status,
    on every station and on the hub's glass, kept in the store and still spoken after the
    hub restarts."""
    sim = make_table(players=3, language="fr")
    config = host_toml(sim, tmp_path)
    speaks(sim, "fr")
    assert run_host(capsys, config, "--table", TABLE, "language", "en") == (
        0,
        f"{TABLE}: language done: Language: English",
        "",
    )
    speaks(sim, "en")
    wait_host_title(sim, "Language: English")  # the note on the hub's glass
    sim.stop_hub()
    assert stored(sim) == "en over fr"
    sim.start_hub()
    speaks(sim, "en")
    assert sim.hub is not None and sim.hub.actors[TABLE].language == "en"


@pytest.mark.parametrize("words", [["de"], [], ["fr", "1234"]])
def test_a_language_the_table_has_not_is_one_line(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``language de`` (or none) is the host's mistake: one line, before any broker."""
    status = main(["host", "--table", "t1", "--broker", "127.0.0.1", "language", *words])
    assert status == 78
    assert capsys.readouterr().err.strip() == "coffre: language takes one of en, fr: language en"


def test_the_panel_language_row_asks_the_hub_which_keeps_it(make_table: TableFactory) -> None:
    """The idle menu's Language row: ok asks the hub for the other language, which keeps
    it (a restarted hub would speak it), says it in its status and on every station, and
    the row shows it in that language."""
    sim = make_table(players=3, language="fr")
    assert sim.hub is not None
    menu = sim.hub.actors[TABLE].menu
    for _ in range(menu.language_row):  # the panel's presses reach the hub's thread later
        sim.panel.press("next")
    until(lambda: "> Langue : français" in host_lines(sim), "the row under the cursor")
    sim.panel.press("ok")
    speaks(sim, "en")
    until(lambda: "> Language: English" in host_lines(sim), "the row says English")
    assert stored(sim) == "en over fr"
    sim.panel.press("back")
    speaks(sim, "fr")
    until(lambda: "> Langue : français" in host_lines(sim), "the row says French")
    assert stored(sim) == "fr over fr"


def test_a_station_cannot_change_the_table_s_language(make_table: TableFactory) -> None:
    """A player with a station's credentials publishing a language command on host/command
    reaches no hub: the broker's ACL drops it."""
    sim = make_table(players=3, language="fr")
    speaks(sim, "fr")
    forger = spy(sim, "p1", [])
    command = proto.encode({"id": "forged-1", "cmd": "language", "language": "en"})
    forger.publish(proto.Topics(TABLE).host_command, command).wait_for_publish(2)
    forger.stop()
    sim.host({"cmd": "sound", "sound": "narration"})  # a real command, answered after it
    sim.watch.wait(lambda p: p.get("sound") == "narration")
    assert sim.watch.hub_status.get("language") == "fr"
    assert stored(sim) is None
