"""The hub's retained status changes between moves, not with them: a move sends the
stations their screens and answers, and no status."""

from __future__ import annotations

from pathlib import Path

from tests.support.hubrig import TABLE, Rig, T


def test_a_move_sends_no_hub_status_and_public_carries_its_version(tmp_path: Path) -> None:
    """After the game has started, each mystery key tap moves ``public``'s version and
    sends the tapping station its screen and answer, and not one ``hub/status``: every
    station, the display and the hub itself hear each status."""
    rig = Rig(tmp_path)
    try:
        rig.connected()
        rig.start(players=3)
        status = rig.last(T.hub_status)
        assert status["state"] == "ready" and status["game"] == "secret-identity"
        assert "version" not in status and "phase" not in status
        for seat, station in enumerate(rig.stations):
            version = rig.public()["version"]
            before = len(rig.sent)
            assert rig.mystery(station, 1 + seat)["ok"]
            topics = [topic for topic, _, _ in rig.sent[before:]]
            assert rig.public()["version"] > version
            assert T.station(station, "screen") in topics
            assert T.station(station, "ack") in topics
            assert T.hub_status not in topics, topics
        assert rig.hub.actors[TABLE].table is not None
    finally:
        rig.close()
