"""Learning a key set by tapping tags on a station's reader."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

from device.base import StationDevices
from device.mock import MockControls, MockDisplay, MockReader
from firmware.station.keylearn import learn_keys
from hardware.keys import Key, KeyLearner, dump_keyset, load_keyset


def test_tapping_tags_in_order_builds_the_key_set(tmp_path: Path) -> None:
    """Each tag becomes the key asked for; a repeated tag is refused; knob press skips."""
    reader, controls = MockReader(), MockControls()
    devices = StationDevices(reader, MockDisplay(), controls)
    wanted = [Key("vote", "red", 1), Key("vote", "red", 2), Key("mystery", None, 1)]
    learner = KeyLearner(wanted)

    def hands() -> None:
        for uid in ("04AABBCCDDEEFF", "04AABBCCDDEEFF", "11223344"):
            reader.present_tag(uid)
            time.sleep(0.06)
            reader.remove_tag()
            time.sleep(0.06)
        controls.press()  # skip mystery 1

    thread = threading.Thread(target=hands)
    thread.start()
    out = io.StringIO()
    assert learn_keys(devices, learner, out, poll_interval=0.005, timeout=10)
    thread.join()
    keys = learner.keyset()
    assert keys.lookup("04AABBCCDDEEFF") == Key("vote", "red", 1)
    assert keys.lookup("11223344") == Key("vote", "red", 2)
    assert len(keys) == 2
    assert "That tag is red 1" in out.getvalue()
    assert controls.beeps.count("error") == 1
    path = tmp_path / "keys.toml"
    path.write_text(dump_keyset(keys))
    assert load_keyset(path).lookup("11223344") == Key("vote", "red", 2)
