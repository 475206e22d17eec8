"""``coffre host --table T console-ok 4721``: the console's yes names the code the phone
shows; a mistake is one line and nothing is sent."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from firmware.link.config import ConfigError
from firmware.tools.host import build_command


def args(action: str, station: str | None = None, code: str | None = None) -> Any:
    return SimpleNamespace(
        action=action,
        station=station,
        code=code,
        option=None,
        game=None,
        players=None,
        seed=None,
    )


def test_console_ok_carries_the_code_and_no_station() -> None:
    cmd = build_command(args("console-ok", "4721"))
    assert (cmd.cmd, cmd.code, cmd.station) == ("console-ok", "4721", None)
    cmd = build_command(args("console-refuse"))
    assert (cmd.cmd, cmd.code, cmd.station) == ("console-refuse", None, None)


def test_the_hubs_list_of_phones_and_ending_one() -> None:
    cmd = build_command(args("console-sessions"))
    assert (cmd.cmd, cmd.station) == ("console-sessions", None)
    cmd = build_command(args("console-end", "a1b2c3d4"))
    assert (cmd.cmd, cmd.station) == ("console-end", "a1b2c3d4")
    assert build_command(args("console-end", "all")).station == "all"


def test_a_backup_is_asked_with_nothing_more() -> None:
    cmd = build_command(args("backup"))
    assert (cmd.cmd, cmd.station, cmd.code) == ("backup", None, None)


@pytest.mark.parametrize(
    ("given", "line"),
    [
        (args("console-ok"), "console-ok needs the code on the phone: console-ok 4721"),
        (args("console-ok", "p6", "4721"), "console-ok takes no station: console-ok 4721"),
        (args("console-ok", "47a1"), "'47a1' is not a code: four digits, as on the phone"),
        (args("console-refuse", "4721"), "console-refuse takes no station: console-ok 4721"),
        (args("next", "4721", "1234"), "a code goes with pair or console-ok, not next"),
        (
            args("console-end"),
            "console-end needs the phone's id (console-sessions lists them) or all",
        ),
        (args("console-sessions", "a1b2c3d4"), "console-sessions takes nothing more"),
        (args("backup", "now"), "backup takes nothing more"),
    ],
)
def test_a_mistake_is_one_line(given: Any, line: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_command(given)
    assert str(err.value) == line
