"""Red team, a station's answer topic flooded (real mosquitto + ACL, hub, mock stations).

Only the hub's broker user may write a station's ``ack`` topic (firmware/hub/brokerconf.py),
but whoever holds a station's credentials (copied off its card) makes the hub write there
as fast as it likes: every input it sends under that name is refused, and each refusal goes
to the real station, under an id that station never sent. Here the refusals are published
with the hub's own credentials, at the QoS the hub answers with, so the figure is the
station's alone (not the hub's handling of the inputs that would cause them).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from device.mock import MockReader
from firmware.hub.brokerconf import HUB_USER
from firmware.link import protocol as proto
from firmware.link.mqtt import Client
from firmware.tools.simtable import TABLE
from tests.support.tables import TableFactory

T = proto.Topics(TABLE)

#: Answers p1 never asked for.
FLOOD = 50_000
#: Published between two looks at how far p1's network thread has read (the broker keeps
#: at most 10,000 messages queued for a client: more would be dropped on the way).
CHUNK = 2_500
FLOOD_TEXT = "Flooded refusal"


def test_answers_never_asked_for_do_not_reach_the_glass_nor_hold_up_a_tap(
    make_table: TableFactory,
) -> None:
    """50,000 refusals on p1's answer topic for ids p1 never sent (and one it had answered):
    p1 draws, beeps and lights nothing for them, and its own tap laid right after the
    flood is answered within a few seconds."""
    sim = make_table(3)
    station = sim.stations["p1"]
    controls = sim.controls("p1")
    ack_topic = T.station("p1", "ack")

    answered = sim.tap("p1", "04a1b2c3d4e5f6")  # no game yet: refused, but answered
    assert answered is not None and answered.id is not None
    old_id = answered.id

    # How many answers p1's network thread has been handed (however the station treats them).
    received = 0
    paho_client = station.client._paho
    handler = paho_client.on_message
    assert handler is not None

    def counting(client: Any, userdata: Any, msg: Any) -> None:
        nonlocal received
        if msg.topic == ack_topic:
            received += 1
        handler(client, userdata, msg)

    paho_client.on_message = counting
    beeps, leds = len(controls.beeps), len(controls.leds)
    screens_before = len(sim.screen_log)

    hub = Client(sim.broker.config(HUB_USER), "flood-as-hub", [], inflight=0)
    hub.start()
    assert hub.wait_connected()
    try:
        sent = 0
        while sent < FLOOD:
            with hub.burst():
                for n in range(sent, sent + CHUNK):
                    forged = old_id if n % 1000 == 0 else f"f00d{n % 97:02x}:{n}"
                    payload = proto.encode(proto.Ack(forged, False, f"{FLOOD_TEXT} {n % 7}"))
                    info = hub.publish(ack_topic, payload, qos=proto.ANSWER_QOS)
            info.wait_for_publish(30)
            sent += CHUNK
            deadline = time.monotonic() + 30
            while received < sent - 2 * CHUNK and time.monotonic() < deadline:
                time.sleep(0.005)
    finally:
        hub.stop()

    # p1's own tap, laid as soon as the broker has taken the whole flood.
    reader = sim.devices["p1"].reader
    assert isinstance(reader, MockReader)
    before = station.sent
    laid = time.monotonic()
    reader.present_tag("04a1b2c3d4e5f7")
    done = threading.Event()
    took: list[float] = []

    def settle() -> None:
        if station.wait_settled(before, 60):
            took.append(time.monotonic() - laid)
        done.set()

    threading.Thread(target=settle, daemon=True).start()
    done.wait(65)
    reader.remove_tag()
    print(
        f"\np1 answered its own tap {took[0] if took else float('nan'):.2f} s after "
        f"{received} answers it never asked for"
    )
    assert took, "p1's own tap got no answer within 60 s"
    assert took[0] < 10.0, f"p1's own tap waited {took[0]:.1f} s behind the flood"

    deadline = time.monotonic() + 30
    while received < FLOOD and time.monotonic() < deadline:
        time.sleep(0.01)
    assert received >= FLOOD, f"only {received} of {FLOOD} answers reached p1"
    # Its own tap: one tick when laid, one error beep for its refusal; nothing for the flood.
    assert controls.beeps[beeps:] == ["tick", "error"], controls.beeps[beeps:][:10]
    assert len(controls.leds) - leds <= 4  # the read's blink and the refusal's red, each undone
    frames = sim.screen_log[screens_before:]
    assert not any(FLOOD_TEXT in line for f in frames for line in f["lines"]), frames[:3]
    assert station.last_ack is not None and station.last_ack.id != old_id
    assert FLOOD_TEXT not in station.last_ack.message
