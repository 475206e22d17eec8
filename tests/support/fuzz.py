"""Red team: malformed station payloads by the hundred thousand, through the hub's public door.

Every payload is broken in some way (cut short, a number JSON cannot hold, a lone
surrogate, an id far in the future, oversized, not an object, random bytes...). The hub
must answer each one that carries an id it can read, with that id, and change nothing.

    .venv/bin/python -m tests.support.fuzz 300000     # prints the figures
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from firmware.link.mqtt import Message
from tests.support.hubrig import KEYS, Rig, T

STATIONS = ("p1", "p2", "p3")


def _valid(rng: random.Random, boot: str, seq: int) -> dict[str, Any]:
    kind = rng.choice(["tag", "knob", "press"])
    body: dict[str, Any] = {"id": f"{boot}:{seq}", "kind": kind}
    if kind == "tag":
        body["uid"] = KEYS.uid_for("mystery", None, rng.randint(1, 8))
    elif kind == "knob":
        body["step"] = rng.choice([-1, 1])
    return body


def broken(rng: random.Random, boot: str, seq: int) -> tuple[bytes, str | None, str]:
    """A broken payload, the id a station would match its answer by (None: none readable),
    and the kind of damage."""
    body = _valid(rng, boot, seq)
    good = json.dumps(body)
    how = rng.choice(
        ["cut", "inf", "surrogate", "future", "oversized", "array", "bytes", "type", "noid"]
    )
    ident: str | None = body["id"]
    if how == "cut":
        raw = good[: rng.randrange(1, len(good) - 1)].encode()
        ident = None  # the id may be cut too: an answer is welcome, not owed
    elif how == "inf":
        raw = good[:-1].encode() + b', "x": 1e999}'
    elif how == "surrogate":
        raw = good[:-1].encode() + b', "x": "\\ud800"}'
    elif how == "future":
        raw = json.dumps({**body, "id": f"{boot}:{10**9 + seq}"}).encode()
        ident = f"{boot}:{10**9 + seq}"
    elif how == "oversized":
        raw = json.dumps({**body, "pad": "x" * rng.randint(600, 5000)}).encode()
        ident = None  # refused unread (an existing promise)
    elif how == "array":
        raw = json.dumps([body]).encode()
        ident = None
    elif how == "bytes":
        raw = rng.randbytes(rng.randint(1, 200))
        ident = None
    elif how == "type":
        raw = json.dumps({**body, "kind": rng.choice([1, None, [], "warp"])}).encode()
    else:
        raw = json.dumps({k: v for k, v in body.items() if k != "id"}).encode()
        ident = None
    return raw, ident, how


def fingerprint(rig: Rig) -> tuple[Any, ...]:
    table = rig.table
    return table.state, json.dumps(table.ui, sort_keys=True), len(rig.events())


def run(count: int, seed: int = 1, batch: int = 200) -> dict[str, Any]:
    """Send ``count`` broken payloads; the figures, and what went wrong (empty lists)."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        rig = Rig(Path(tmp), STATIONS)
        rig.start(players=3)
        before = fingerprint(rig)
        kinds: Counter[str] = Counter()
        owed: list[tuple[str, str]] = []
        started = time.perf_counter()
        for first in range(0, count, batch):
            messages = []
            for n in range(first, min(count, first + batch)):
                station = rng.choice(STATIONS)
                raw, ident, how = broken(rng, f"fz{n % 97}", n + 1)
                kinds[how] += 1
                if ident is not None:
                    owed.append((station, ident))
                messages.append(Message(T.station(station, "input"), raw, False))
            rig.hub.submit(*messages)
        took = time.perf_counter() - started
        answered = {
            (t.split("/")[-2], p.get("id")) for t, p, _ in rig.sent if t.endswith("/ack") and p
        }
        unanswered = [o for o in owed if o not in answered]
        acks = [p for t, p, _ in rig.sent if "/station/" in t and t.endswith("/ack") and p]
        oks = [p for p in acks if p.get("ok")]
        changed = fingerprint(rig) != before
        rig.close()
    return {
        "payloads": count,
        "kinds": dict(kinds),
        "owed": len(owed),
        "unanswered": unanswered[:10],
        "accepted": len(oks),
        "changed": changed,
        "seconds": took,
    }


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 300_000
    out = run(count)
    print(
        f"payloads={out['payloads']} owed_answers={out['owed']} "
        f"unanswered={len(out['unanswered'])} accepted={out['accepted']} "
        f"state_changed={out['changed']} seconds={out['seconds']:.1f} "
        f"per_s={out['payloads'] / out['seconds']:.0f}"
    )
    print("kinds:", json.dumps(out["kinds"], sort_keys=True))
    return 0 if not out["unanswered"] and not out["accepted"] and not out["changed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
