"""A card read on a station: the tap is published before the read's blink and tick."""

from __future__ import annotations

from typing import Any

from device.base import StationDevices, TagPresent
from device.mock import MockControls, MockDisplay, MockReader
from firmware.link.mqtt import BrokerConfig
from firmware.station.service import READ_BLINK, Station


class Recorded(MockControls):
    """Mock controls that note each blink and beep in a shared log."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def led(self, colour: Any) -> None:
        super().led(colour)
        self.log.append(f"led {colour}")

    def beep(self, kind: Any) -> None:
        super().beep(kind)
        self.log.append(f"beep {kind}")


def test_a_read_is_published_before_its_blink_and_tick() -> None:
    """The tag's input leaves first; the blue blink and the tick follow at once (on a
    Zero they cost as much as the publish, so doing them first delayed every tap)."""
    log: list[str] = []
    devices = StationDevices(MockReader(), MockDisplay(), Recorded(log))
    st = Station(BrokerConfig(port=1), "t", "p1", devices, show_link=False)
    publish = st.client.publish

    def noted(topic: str, payload: bytes, *args: Any, **kwargs: Any) -> Any:
        log.append(f"publish {topic}")
        return publish(topic, payload, *args, **kwargs)

    st.client.publish = noted  # type: ignore[method-assign]
    st._handle(TagPresent("DEADBEEF"))
    assert log == [f"publish {st.topics.station('p1', 'input')}", f"led {READ_BLINK}", "beep tick"]
    assert len(st.pending) == 1
