"""The host's sound command at the hub (no broker): answered once per id, so a late copy of
an old command never undoes a newer one, and a disk that refuses the setting changes
nothing the table hears."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from firmware.hub.hostmenu import sound_key
from firmware.hub.moves import NOT_SAVED
from tests.support.hub import T, deliver, full_at_next_commit, make_hub


def acks(sent: list[tuple[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for t, p in sent if t == T.host_ack}


def public(sent: list[tuple[str, Any]]) -> dict[str, Any]:
    return [p for t, p in sent if t == T.public][-1]


def test_a_late_copy_of_an_old_sound_command_is_answered_not_redone(tmp_path: Path) -> None:
    """narration, then off; the broker delivers the narration command again (QoS 1 after a
    reconnect): it gets its first answer and the table stays off."""
    hub, sent = make_hub(tmp_path)
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "sound", "sound": "narration"})
    deliver(hub, T.host_command, {"id": "cli-2", "cmd": "sound", "sound": "off"})
    assert public(sent)["sound"] == "off"
    sent.clear()
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "sound", "sound": "narration"})
    assert acks(sent)["cli-1"] == {"id": "cli-1", "ok": True, "message": "Sound: cues+speech"}
    assert not [p for t, p in sent if t == T.public]  # nothing changed, nothing published
    assert hub.store.get_setting(sound_key("t")) == "off"
    assert hub.actors["t"].menu.sound == "off"


def test_a_disk_that_refuses_the_setting_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only disk: the command is refused in words, the table keeps what it heard."""
    hub, sent = make_hub(tmp_path)

    def refuse(*_: Any) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(hub.store, "put_setting", refuse)
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "sound", "sound": "off"})
    ack = acks(sent)["cli-1"]
    assert ack == {"id": "cli-1", "ok": False, "message": NOT_SAVED}
    assert all(p["sound"] == "cues" for t, p in sent if t == T.public)
    assert hub.actors["t"].menu.sound == "cues"
    assert hub.store.get_setting(sound_key("t")) is None


def test_a_batch_the_disk_rolls_back_takes_the_setting_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The setting is written but the batch's commit fails (a full card): the answer says
    not saved and the table hears what the store still says, not what was asked."""
    hub, sent = make_hub(tmp_path)
    full_at_next_commit(hub, monkeypatch)
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "sound", "sound": "off"})
    assert acks(sent)["cli-1"]["ok"] is False
    assert hub.actors["t"].menu.sound == "cues"
    assert public(sent)["sound"] == "cues"  # sent again as the store has it
    assert hub.store.get_setting(sound_key("t")) is None
