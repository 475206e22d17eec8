"""A station acts only on answers to inputs it is waiting for; any other answer is counted,
logged now and then, and never beeped, lit or drawn."""

from __future__ import annotations

import logging

import paho.mqtt.client as paho
import pytest

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Message
from firmware.station.service import Station

T = proto.Topics("t")


def station() -> tuple[Station, MockDisplay, MockControls]:
    display, controls = MockDisplay(), MockControls()
    st = Station(BrokerConfig(port=1), "t", "p1", StationDevices(MockReader(), display, controls))
    screen = proto.Screen(rev=1, title="Red R1/3", lines=("Vote",), phase="1/vote")
    st._handle(Message(T.station("p1", "screen"), proto.encode(screen)))
    return st, display, controls


def answer(st: Station, input_id: str | None, ok: bool = False, message: str = "No") -> None:
    """An answer as it reaches the station: through paho's callback, then its mailbox."""
    payload = proto.encode(proto.Ack(input_id, ok, message))
    msg = paho.MQTTMessage(topic=T.station("p1", "ack").encode())
    msg.payload = payload
    st.client._on_message(st.client._paho, None, msg)
    while not st.queue.empty():
        st._handle(st.queue.get_nowait())


def press(st: Station) -> str:
    st._send({"kind": "press"})
    return f"{st.boot}:{st.seq}"


def test_an_answer_to_an_input_never_sent_changes_nothing() -> None:
    """Refusals and oks with a message for ids the station never sent: no beep, no LED, no
    toast, no frame; none even reaches the station's mailbox; each is counted."""
    st, display, controls = station()
    shows, beeps, leds = display.shows, list(controls.beeps), list(controls.leds)
    for n in range(50):
        answer(st, f"other:{n}")
        answer(st, f"{st.boot}:{n + 100}", ok=True, message="Hello")
    answer(st, None)
    assert (display.shows, controls.beeps, controls.leds) == (shows, beeps, leds)
    assert st.toast is None and st.last_ack is None and st.acks == 0
    assert st.unasked == 101


def test_a_malformed_answer_is_dropped_before_the_mailbox() -> None:
    st, _display, _controls = station()
    msg = paho.MQTTMessage(topic=T.station("p1", "ack").encode())
    msg.payload = b'{"id": 3'
    st.client._on_message(st.client._paho, None, msg)
    assert st.queue.empty() and st.unasked == 1


def test_the_answer_to_a_pending_input_acts_once() -> None:
    """Its own press refused: one error beep, the red LED, the toast; the same answer again
    (a resend answered twice) is only counted."""
    st, display, controls = station()
    input_id = press(st)
    answer(st, input_id, message="Not now")
    assert controls.beeps[-1] == "error" and st.toast is not None
    assert st.toast[0] == "Not now" and not st.pending and st.acks == 1
    beeps, shows = len(controls.beeps), display.shows
    answer(st, input_id, message="Not now")
    assert (len(controls.beeps), display.shows, st.acks, st.unasked) == (beeps, shows, 1, 1)


def test_unasked_answers_are_logged_one_line_at_a_time(caplog: pytest.LogCaptureFixture) -> None:
    """A thousand unasked answers: one warning line (throttled), naming the station."""
    caplog.set_level(logging.INFO, logger="firmware")
    st, _display, _controls = station()
    for n in range(1000):
        answer(st, f"x:{n}\nforged line")
    lines = [r.getMessage() for r in caplog.records if r.name == "firmware.station.service"]
    assert len(lines) == 1 and lines[0].startswith("p1: dropped an answer to"), lines
    assert "\n" not in lines[0]
