"""``coffre keys learn``: register your own NFC tags by tapping them on a station.

The station's screen (and the terminal) asks for one key after another — "Tap red 1",
"Tap red 2"… "Tap mystery 8" — and each tag laid on the reader becomes that key.
Press the knob to skip a key, turn it back to redo the last one. The key set is written
as TOML (ready for the hub's ``keyset`` setting) after every tag, so Ctrl-C or a power
cut loses nothing; running the command again on the same file resumes where it stopped.
"""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from device.base import StationDevices, TagPresent
from firmware.link.render import render_lines
from hardware.keys import COLOURS, KeyLearner, dump_keyset, load_keyset, standard_keys


def learn_keys(
    devices: StationDevices,
    learner: KeyLearner,
    out: TextIO,
    *,
    poll_interval: float = 0.02,
    timeout: float | None = None,
    on_change: Callable[[], None] | None = None,
) -> bool:
    """Run the learning loop until every key is handled; False if ``timeout`` ran out.

    ``on_change`` runs after every key learnt, skipped or redone (to save the set).
    """
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
            if on_change is not None:
                on_change()
        event = devices.reader.poll()
        if isinstance(event, TagPresent) and event.uid != last:
            ok, message = learner.offer(event.uid)
            controls.beep("ok" if ok else "error")
            controls.led((0.0, 1.0, 0.0) if ok else (1.0, 0.0, 0.0))
            show(message)
            if ok and on_change is not None:
                on_change()
        if event is not None:
            last = event.uid if isinstance(event, TagPresent) else ""
        time.sleep(poll_interval)
    show("done")
    return True


def save(learner: KeyLearner, target: Path) -> None:
    """Write the key set so far; a crash mid-write leaves the previous file whole."""
    temp = target.with_name(f".{target.name}.tmp")
    temp.write_text(dump_keyset(learner.keyset()))
    os.replace(temp, target)


def main(args: object) -> int:
    """Entry point of ``coffre keys learn``."""
    import sys

    from firmware.link.config import ConfigError
    from firmware.station.selftest import hardware_choice, open_parts

    target = Path(str(getattr(args, "out", "keys.toml")))
    colours_arg = getattr(args, "colours", None)
    colours = tuple(c.strip() for c in str(colours_arg).split(",")) if colours_arg else COLOURS
    wanted = standard_keys(
        colours, int(getattr(args, "votes", 8)), int(getattr(args, "mysteries", 8))
    )
    learner = KeyLearner(wanted, name=target.stem, colours=colours)
    if target.exists():
        try:
            taken = learner.resume(load_keyset(target))
        except ValueError as exc:
            raise ConfigError(f"{exc} (move it away to start afresh)") from None
        print(f"resuming {target}: {taken} keys already learnt")
    choice = hardware_choice(args)
    print(f"coffre keys learn: {choice.backend} hardware ({choice.source})")
    devices, broken = open_parts(choice)
    if "reader" in broken:
        devices.close()
        raise ConfigError(f"reader: {broken['reader']}")
    try:
        learn_keys(devices, learner, sys.stdout, on_change=lambda: save(learner, target))
    except KeyboardInterrupt:
        print(f"\nstopped: {len(learner.learned)} keys saved in {target}; run again to resume")
        return 130
    finally:
        devices.close()
    save(learner, target)
    print(f"wrote {len(learner.learned)} keys to {target}")
    return 0
