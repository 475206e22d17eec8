"""`coffre host` on the hub finds the broker on the port provisioning gave it (--port)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from firmware.hub.brokerconf import mosquitto_conf
from firmware.tools import host


def _args(**given: object) -> argparse.Namespace:
    base: dict[str, object] = dict.fromkeys(
        ("config", "broker", "port", "username", "password_file", "ca_file", "broker_dir")
    )
    return argparse.Namespace(**{**base, "table": "main", **given})


@pytest.fixture
def broker_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """broker-config's folder on a hub provisioned with --port 8884."""
    folder = tmp_path / "coffre"
    (folder / "credentials").mkdir(parents=True)
    (folder / "credentials" / "host-main.password").write_text("secret\n")
    (folder / "mosquitto.conf").write_text(mosquitto_conf(8884, folder, stay_root=True))
    monkeypatch.setattr(host, "BROKER_DIR", folder)
    return folder


def test_the_port_comes_from_the_brokers_own_config(broker_dir: Path) -> None:
    """`sudo coffre host --table main pair p1` dials the port mosquitto listens on."""
    assert host.load_broker(_args()).port == 8884
    assert host.load_broker(_args(broker_dir=str(broker_dir))).port == 8884


def test_an_explicit_port_or_config_wins(broker_dir: Path, tmp_path: Path) -> None:
    """--port, or a --config file's [broker], say the port; the folder does not."""
    assert host.load_broker(_args(port=9000)).port == 9000
    config = tmp_path / "host.toml"
    config.write_text('[broker]\nhost = "coffre-hub.local"\nport = 8890\npassword = "x"\n')
    assert host.load_broker(_args(config=str(config))).port == 8890


def test_no_broker_folder_leaves_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off the hub (no broker-config folder) the port is the usual default (1883 without a
    CA, as firmware/link/config.py gives it)."""
    monkeypatch.setattr(host, "BROKER_DIR", tmp_path / "absent")
    assert host.listener_port(tmp_path / "absent") is None
    (tmp_path / "p").write_text("secret\n")
    assert host.load_broker(_args(password_file=str(tmp_path / "p"))).port == 1883
