"""A bare mosquitto on a free loopback port: with the users and ACL a test writes itself
(tests that need users the simulated table does not make: several hubs, a flooding station;
every user's password is ``pw-<user>``), or open to anyone, in plain MQTT (tests that read
or hold back the packets themselves)."""

from __future__ import annotations

import os
from pathlib import Path

from firmware.hub.brokerconf import hash_password
from firmware.tools.brokers import Mosquitto, free_port


def acl_mosquitto(folder: Path, acl: dict[str, str]) -> Mosquitto:
    """A started mosquitto whose users are ``acl``'s keys, each with its ACL lines."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "passwd").write_text("".join(f"{u}:{hash_password(f'pw-{u}')}\n" for u in acl))
    (folder / "acl").write_text("".join(f"user {u}\n{rules}\n" for u, rules in acl.items()))
    port = free_port()
    conf = folder / "mosquitto.conf"
    lines = [
        f"listener {port} 127.0.0.1",
        "allow_anonymous false",
        f"password_file {folder / 'passwd'}",
        f"acl_file {folder / 'acl'}",
        "persistence false",
        "log_dest stderr",
        "log_type error",
    ]
    if os.geteuid() == 0:
        lines.append("user root")
    conf.write_text("\n".join(lines) + "\n")
    mosq = Mosquitto(conf, port)
    mosq.start()
    return mosq


def plain_mosquitto(folder: Path) -> Mosquitto:
    """A started mosquitto anyone may use, no TLS (its config in ``folder``)."""
    port = free_port()
    conf = folder / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
    mosq = Mosquitto(conf, port)
    mosq.start()
    return mosq
