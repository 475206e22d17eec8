"""``coffre keys learn``: register your own NFC tags by tapping them on a station.

The station's screen (and the terminal) asks for one key after another — "Tap red 1",
"Tap red 2"… "Tap mystery 8" — and each tag laid on the reader becomes that key.
Press the knob to skip a key, turn it back to redo the last one. At the end the key set
is written as TOML, ready for the hub's ``keyset`` setting.
"""

from __future__ import annotations

import queue
import time
from pathlib import Path
from typing import TextIO

from device.base import StationDevices, TagPresent
from firmware.link.render import render_lines
from hardware.keys import COLOURS, KeyLearner, dump_keyset, standard_keys


def learn_keys(
    devices: StationDevices,
    learner: KeyLearner,
    out: TextIO,
    *,
    poll_interval: float = 0.02,
    timeout: float | None = None,
) -> bool:
    """Run the learning loop until every key is handled; False if ``timeout`` ran out."""
    controls = devices.controls
    gestures: queue.Queue[str] = queue.Queue()
    controls.on_press = lambda: gestures.put("skip")
    controls.on_turn = lambda step: gestures.put("undo" if step < 0 else "none")
    deadline = None if timeout is None else time.monotonic() + timeout
    last = ""

    def show(message: str) -> None:
        done = len(learner.learned)
        lines = [message, f"{done} learnt", "press: skip", "turn back: redo"]
        devices.display.show(render_lines(learner.prompt, lines))
        print(f"{learner.prompt:<20} {message}", file=out)

    show("")
    while learner.next is not None:
        if deadline is not None and time.monotonic() > deadline:
            return False
        while not gestures.empty():
            gesture = gestures.get()
            if gesture == "skip":
                skipped = learner.next
                learner.skip()
                show(f"skipped {skipped.label}" if skipped else "")
            elif gesture == "undo":
                learner.undo()
                show("again")
        event = devices.reader.poll()
        if isinstance(event, TagPresent) and event.uid != last:
            ok, message = learner.offer(event.uid)
            controls.beep("ok" if ok else "error")
            controls.led((0.0, 1.0, 0.0) if ok else (1.0, 0.0, 0.0))
            show(message)
        if event is not None:
            last = event.uid if isinstance(event, TagPresent) else ""
        time.sleep(poll_interval)
    show("done")
    return True


def main(args: object) -> int:
    """Entry point of ``coffre keys learn``."""
    import sys

    from device.factory import open_station

    backend = getattr(args, "backend", None)
    target = Path(str(getattr(args, "out", "keys.toml")))
    devices = open_station(backend=backend)
    colours_arg = getattr(args, "colours", None)
    colours = tuple(c.strip() for c in str(colours_arg).split(",")) if colours_arg else COLOURS
    wanted = standard_keys(
        colours, int(getattr(args, "votes", 8)), int(getattr(args, "mysteries", 8))
    )
    learner = KeyLearner(wanted, name=target.stem, colours=colours)
    try:
        learn_keys(devices, learner, sys.stdout)
    finally:
        devices.close()
    target.write_text(dump_keyset(learner.keyset()))
    print(f"wrote {len(learner.learned)} keys to {target}")
    return 0
