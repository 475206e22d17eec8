"""A ``coffre station`` process loads what a station runs, and nothing of the hub's."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from firmware.hub.brokerconf import HUB_USER
from firmware.link.mqtt import BrokerConfig, Client
from firmware.link.protocol import Topics
from tests.support.tables import TableFactory

#: Runs the real command line, then writes the modules it had loaded.
WRAPPER = """
import json, sys
from firmware.cli import main
rc = main(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    json.dump(sorted(sys.modules), f)
sys.exit(rc)
"""

NEVER_ON_A_STATION = ("firmware.hub", "firmware.tools", "rules", "amqtt", "cryptography")


def station_toml(tmp_path: Path, broker: BrokerConfig, station: str) -> Path:
    path = tmp_path / "station.toml"
    path.write_text(
        "[broker]\n"
        f'host = "{broker.host}"\nport = {broker.port}\n'
        f'username = "{broker.username}"\npassword = "{broker.password}"\n'
        f'ca_file = "{broker.tls_ca}"\n'
        "[station]\n"
        f'table = "sim"\nid = "{station}"\nbackend = "mock"\n'
    )
    return path


def test_station_process_loads_no_hub_rules_or_hub_only_libraries(
    make_table: TableFactory, tmp_path: Path
) -> None:
    """With the mock backend, a station that connected and drew the hub's screen has not
    loaded firmware.hub, firmware.tools, the rules, amqtt or cryptography."""
    sim = make_table(players=2, stations_count=3)
    sim.stations["p3"].stop()
    topics = Topics("sim")
    spy = Client(sim.broker.config(HUB_USER), "spy-layout", [topics.station("p3", "status")])
    spy.start()
    spy.wait_connected()
    modules_file = tmp_path / "modules.json"
    config = station_toml(tmp_path, sim.broker.station_config("p3"), "p3")
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, str(modules_file), "station", "--config", str(config)],
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        online = False
        while time.monotonic() < deadline and not online:
            msg = spy.inbox.get(timeout=deadline - time.monotonic())
            online = msg is not None and json.loads(msg.payload or b"{}").get("state") == "online"
        assert online, "the station process never came online"
        time.sleep(1.0)  # it receives and draws its screen
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
        spy.stop()
    assert proc.returncode == 0, err.decode()
    modules = json.loads(modules_file.read_text())
    assert "firmware.station.service" in modules and "paho.mqtt.client" in modules
    loaded = [
        m for m in modules if any(m == n or m.startswith(n + ".") for n in NEVER_ON_A_STATION)
    ]
    assert loaded == []
