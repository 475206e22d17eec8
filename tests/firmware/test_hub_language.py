"""The host's language command at the hub (no broker): answered once per id, kept in the
store beside the hub.toml language it overrode (a restarted hub keeps it; an owner who
edits hub.toml's language wins again), refused in one line for a language the table has
not, and taken back with a batch the disk rolls back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from firmware.hub.hostmenu import language_key
from firmware.hub.moves import NOT_SAVED
from tests.support.hub import T, deliver, full_at_next_commit, make_hub


def acks(sent: list[tuple[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for t, p in sent if t == T.host_ack}


def spoken(sent: list[tuple[str, Any]]) -> str:
    """The language of the hub's last status (what the TV follows)."""
    return str([p for t, p in sent if t == T.hub_status][-1]["language"])


def test_the_command_sets_every_screen_and_a_late_copy_is_answered_not_redone(
    tmp_path: Path,
) -> None:
    """fr, then en; the broker delivers the fr command again: it gets its first answer and
    the table keeps speaking English. The stations' screens and the hub's glass speak each
    language at once."""
    hub, sent = make_hub(tmp_path, language="en")
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "language", "language": "fr"})
    assert acks(sent)["cli-1"] == {
        "id": "cli-1",
        "ok": True,
        "message": "Language: French",
        "msgid": "Language: {name}",  # a console says it in its own language
        "params": {"name": "French"},
    }
    assert spoken(sent) == "fr"
    idle = [p for t, p in sent if t == T.station("p1", "screen")][-1]
    assert idle["lines"] == ["Station p1", "On attend l'hôte"], idle
    assert [p for t, p in sent if t == T.host_screen][-1]["title"] == "Langue : français"
    deliver(hub, T.host_command, {"id": "cli-2", "cmd": "language", "language": "en"})
    assert spoken(sent) == "en"
    sent.clear()
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "language", "language": "fr"})
    assert acks(sent)["cli-1"] == {"id": "cli-1", "ok": True, "message": "Language: French"}
    assert not [p for t, p in sent if t == T.hub_status]  # nothing changed, nothing published
    assert hub.actors["t"].language == "en"
    assert hub.store.get_setting(language_key("t")) == "en over en"


@pytest.mark.parametrize("language", ["de", "", None])
def test_a_language_the_table_has_not_is_refused_in_one_line(
    tmp_path: Path, language: str | None
) -> None:
    hub, sent = make_hub(tmp_path, language="fr")
    command = {"id": "cli-1", "cmd": "language", "language": language}
    deliver(hub, T.host_command, {k: v for k, v in command.items() if v is not None})
    assert acks(sent)["cli-1"] == {
        "id": "cli-1",
        "ok": False,
        "message": "Language: one of en, fr",
        # a console says it in its own language from these
        "msgid": "Language: one of {choices}",
        "params": {"choices": "en, fr"},
    }
    assert hub.actors["t"].language == "fr"
    assert hub.store.get_setting(language_key("t")) is None


def test_a_restarted_hub_keeps_the_choice_until_hub_toml_says_another_language(
    tmp_path: Path,
) -> None:
    """The host turns a French table English: restarted with the same hub.toml, it speaks
    English. The owner edits hub.toml to English and the host picks French: the next
    edit, to French, wins over that choice; a choice counts while hub.toml says the
    language it was made over."""
    hub, _sent = make_hub(tmp_path, language="fr")
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "language", "language": "en"})
    hub.store.close()
    hub, sent = make_hub(tmp_path, language="fr")
    assert hub.actors["t"].language == "en"
    hub.store.close()
    hub, sent = make_hub(tmp_path, language="en")  # the owner edited hub.toml
    assert hub.actors["t"].language == "en"
    deliver(hub, T.host_command, {"id": "cli-2", "cmd": "language", "language": "fr"})
    assert spoken(sent) == "fr"
    hub.store.close()
    hub, sent = make_hub(tmp_path, language="fr")  # edited again: hub.toml's French wins
    assert hub.actors["t"].language == "fr"
    hub.store.close()
    hub, sent = make_hub(tmp_path, language="en")  # the host's French over English again
    assert hub.actors["t"].language == "fr"


def test_a_batch_the_disk_rolls_back_takes_the_language_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The setting is written but the batch's commit fails (a full card): the answer says
    not saved and the table speaks what the store still says, not what was asked."""
    hub, sent = make_hub(tmp_path, language="fr")
    full_at_next_commit(hub, monkeypatch)
    deliver(hub, T.host_command, {"id": "cli-1", "cmd": "language", "language": "en"})
    assert acks(sent)["cli-1"] == {"id": "cli-1", "ok": False, "message": NOT_SAVED}
    assert hub.actors["t"].language == "fr"
    assert spoken(sent) == "fr"  # sent again as the store has it
    assert hub.store.get_setting(language_key("t")) is None
