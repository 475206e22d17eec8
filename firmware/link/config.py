"""Configuration pieces that hub and station files share: errors and the [broker] section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from firmware.link.mqtt import BrokerConfig


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the key."""


def broker_section(data: dict[str, Any], where: Path) -> BrokerConfig:
    """The ``[broker]`` table of a hub or station file."""
    section = data.get("broker", {})
    password = section.get("password")
    if "password_file" in section:
        password = Path(section["password_file"]).read_text().strip()
    ca_file = section.get("ca_file")
    if ca_file is not None and not Path(str(ca_file)).is_file():
        raise ConfigError(f"{where}: [broker] ca_file {ca_file} is not a file")
    return BrokerConfig(
        host=str(section.get("host", "127.0.0.1")),
        port=int(section.get("port", 8883 if ca_file else 1883)),
        username=section.get("username"),
        password=password,
        tls_ca=str(ca_file) if ca_file is not None else None,
    )
