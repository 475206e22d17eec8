"""The sniffer: counts every live message under ``coffre/#`` by kind, in a process of its
own (``python -m firmware.bench.sniffer --port P``), so the counting takes nothing from
the load generator. Every message is delivered once more than on a real venue."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import Counter

from firmware.bench.shared import broker_of, broker_parser, module_command, stop_process
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client

#: Sniffed kinds that are not the hubs' doing.
INPUT_KINDS = frozenset({"station/input", "station/status", "host/command"})


def _kind(topic: str) -> str:
    """``coffre/t1/station/s2/screen`` -> ``station/screen``; ``coffre/t1/public`` -> ``public``."""
    rest = topic.split("/")[2:]
    if rest[:1] == ["station"]:
        rest = [rest[0], *rest[2:]]
    return "/".join(rest)


def sniff(config: BrokerConfig) -> None:
    """Count every live message under ``coffre/#`` by kind until SIGTERM, then print the
    counts as JSON."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    client = Client(config, f"coffre-sniff-{os.getpid()}", [f"{proto.ROOT}/#"])
    client.start()
    if not client.wait_connected(10):
        raise SystemExit("the sniffer cannot reach the broker")
    print("ready", flush=True)
    counts: Counter[str] = Counter()
    while True:
        try:
            msg = client.inbox.get(timeout=0.1)
        except queue.Empty:
            if stop.is_set():
                break
            continue
        if msg is None:
            break
        if not msg.retain:  # a retained message sent on subscribing is not traffic
            counts[_kind(msg.topic)] += 1
    client.stop()
    print(json.dumps(counts), flush=True)


class Sniffer:
    """The sniffer in a process of its own, counting from when it is made."""

    def __init__(self, config: BrokerConfig) -> None:
        self.proc = subprocess.Popen(
            module_command("firmware.bench.sniffer", config), stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            stop_process(self.proc)
            raise RuntimeError("the sniffer did not start")
        time.sleep(0.3)  # its subscription is in place

    def counts(self) -> dict[str, int]:
        """Stop it; what it counted."""
        time.sleep(0.3)  # the last deliveries
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=30)
        counts: dict[str, int] = json.loads(out.strip().splitlines()[-1])
        return counts


if __name__ == "__main__":
    sniff(broker_of(broker_parser("coffre bench's message counter").parse_args()))
