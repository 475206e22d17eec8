"""The echo server: every figure's baseline.

A minimal MQTT client on the same broker as the hub that answers each station input with
a new screen and an ack, at the QoS the hub answers at, and does nothing else; a figure
then reads as "coffre costs X times the bare trip". It runs as a process of its own
(``python -m firmware.bench.echo --port P``), as the hub does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess

from firmware.bench.shared import broker_of, broker_parser, module_command
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, Client


def echo(config: BrokerConfig, client_id: str = "coffre-echo") -> None:
    """Answer every station input with a new screen and an ack, forever (the baseline)."""
    client = Client(
        config,
        f"{client_id}-{os.getpid()}",
        ["coffre/+/station/+/input", "coffre/+/station/+/status"],
    )
    client.start()
    n = 0
    while (msg := client.inbox.get()) is not None:
        root, table, _, station, leaf = (msg.topic.split("/") + [""] * 5)[:5]
        base = f"{root}/{table}/station/{station}"
        n += 1
        screen = proto.encode(proto.Screen(rev=n, title="echo", lines=(f"input {n}",)))
        if leaf == "status":
            client.publish(f"{base}/screen", screen, retain=True, qos=proto.ANSWER_QOS)
            continue
        try:
            input_id = json.loads(msg.payload).get("id")
        except (ValueError, AttributeError):
            continue
        # At the QoS the hub answers at: the baseline sends what the hub sends.
        client.publish(f"{base}/screen", screen, retain=True, qos=proto.ANSWER_QOS)
        client.publish(
            f"{base}/ack", proto.encode(proto.Ack(input_id, True, "")), qos=proto.ANSWER_QOS
        )


def command_line(config: BrokerConfig) -> list[str]:
    """The echo server's command line, on ``config``'s broker."""
    return module_command("firmware.bench.echo", config)


def parser() -> argparse.ArgumentParser:
    """The echo server's command line (:func:`command_line`)."""
    return broker_parser("coffre bench's echo server")


def start(config: BrokerConfig) -> subprocess.Popen[bytes]:
    """The echo server, started in a process of its own."""
    return subprocess.Popen(
        command_line(config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


if __name__ == "__main__":
    echo(broker_of(parser().parse_args()))
