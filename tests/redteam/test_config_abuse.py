"""Red team, the host's hub.toml: a typo must be refused at start, not found mid-game."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from firmware.hub.config import load_hub
from firmware.hub.service import Hub
from hardware.keys import load_keyset

HEAD = '[broker]\nhost = "127.0.0.1"\nport = 1883\n[[table]]\nname = "main"\n'

#: What each typo would do if the hub started with it.
TYPOS = {
    "upper-case station": (
        'stations = ["P1", "p2", "p3"]',
        "the hub never publishes a screen or 'ready' (ValueError on every publish)",
    ),
    "station listed twice": (
        'stations = ["p1", "p1", "p2"]',
        "seat 1 is unreachable: the game never leaves prepare",
    ),
    "colour the key set lacks": (
        'stations = ["p1", "p2", "p3"]\ncolours = ["rouge", "jaune", "vert"]',
        "every vote key says 'Nobody plays red': the game never leaves the vote",
    ),
    "colour listed twice": (
        'stations = ["p1", "p2", "p3"]\ncolours = ["red", "red", "green"]',
        "seat 1 can never vote",
    ),
    "fewer colours than stations": (
        'stations = ["p1", "p2", "p3"]\ncolours = ["red", "yellow"]',
        "IndexError on every publish: no screens, no 'ready'",
    ),
    "seed that is not an integer": (
        'stations = ["p1", "p2", "p3"]\nseed = "abc"',
        "the game starts, then the hub cannot restart: int('abc') in the store",
    ),
}


def write(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "hub.toml"
    path.write_text(HEAD + table + "\n")
    return path


def test_a_good_table_loads(tmp_path: Path) -> None:
    """The docs' example table (docs/config.md) loads as written."""
    settings = load_hub(write(tmp_path, 'stations = ["p1", "p2", "p3", "p4", "p5"]'))
    assert settings.tables[0].stations == ["p1", "p2", "p3", "p4", "p5"]


@pytest.mark.parametrize("typo", list(TYPOS))
def test_hub_config_typo_is_refused_at_start(tmp_path: Path, typo: str) -> None:
    """A hub.toml typo that would break the table mid-game is refused when the hub starts."""
    with pytest.raises(ValueError):  # ConfigError is one; from loading or from Hub()
        settings = load_hub(write(tmp_path, TYPOS[typo][0]))
        hub = Hub(settings.broker, settings.tables, tmp_path / "hub.db", keys=load_keyset())
        hub.store.close()


def _tls_files(folder: Path) -> dict[str, Path]:
    """An empty file, a DER CA certificate and a PEM private key (none is a ca.crt), and a
    key set nested too deep."""
    from cryptography.hazmat.primitives import serialization

    from firmware.hub.certs import _private_pem, make_ca

    key, cert = make_ca()
    files = {"empty": folder / "empty.crt", "der": folder / "ca.der", "key": folder / "ca.key"}
    files["empty"].write_bytes(b"")
    files["der"].write_bytes(cert.public_bytes(serialization.Encoding.DER))
    files["key"].write_bytes(_private_pem(key))
    (folder / "deep-keys.toml").write_text(DEEP)
    return files


STATION = '[station]\ntable = "main"\nid = "p1"\nbackend = "mock"\n'
TABLE = '[[table]]\nname = "main"\nstations = ["p1", "p2", "p3"]\n'
DEEP = "x = " + "[" * 5000 + "]" * 5000 + "\n"

#: Mistake -> (command, the file's text; {tls} names a folder of bad CA files, {store} a
#: store path in an existing folder). Each used to end in a traceback, an exit 1 or 2
#: (which systemd restarts forever) or, for reveal_delay = inf, a dead table thread.
MISTAKES = {
    "hub: empty ca_file": ("hub", '[broker]\nca_file = "{tls}/empty.crt"\n' + TABLE),
    "hub: DER ca_file": ("hub", '[broker]\nca_file = "{tls}/ca.der"\n' + TABLE),
    "hub: key file as ca_file": ("hub", '[broker]\nca_file = "{tls}/ca.key"\n' + TABLE),
    "hub: keepalive = -5": ("hub", "[broker]\nkeepalive = -5\n" + TABLE),
    'hub: host = ""': ("hub", '[broker]\nhost = ""\n' + TABLE),
    "hub: deep TOML": ("hub", DEEP + TABLE),
    "hub: missing store folder": ("hub", '[store]\npath = "{tls}/no/such/hub.db"\n' + TABLE),
    "hub: deep TOML key set": ("hub", 'keyset = "{tls}/deep-keys.toml"\n' + TABLE),
    "hub: key set lacks a colour": ("hub", TABLE + 'colours = ["red", "yellow", "mauve"]\n'),
    "hub: reveal_delay = inf": ("hub", TABLE + "reveal_delay = inf\n"),
    "hub: reveal_delay = nan": ("hub", TABLE + "reveal_delay = nan\n"),
    "station: empty ca_file": ("station", '[broker]\nca_file = "{tls}/empty.crt"\n' + STATION),
    "station: DER ca_file": ("station", '[broker]\nca_file = "{tls}/ca.der"\n' + STATION),
    "station: key file as ca_file": ("station", '[broker]\nca_file = "{tls}/ca.key"\n' + STATION),
    "station: keepalive = -5": ("station", "[broker]\nkeepalive = -5\n" + STATION),
    'station: host = ""': ("station", '[broker]\nhost = ""\n' + STATION),
    "station: deep TOML": ("station", DEEP + STATION),
}


#: What the one line must name, by mistake.
WHAT = {
    "empty ca_file": "ca_file",
    "DER ca_file": "ca_file",
    "key file as ca_file": "ca_file",
    "keepalive = -5": "keepalive",
    'host = ""': "host",
    "deep TOML": "nested too deep",
    "deep TOML key set": "nested too deep",
    "missing store folder": "does not exist",
    "key set lacks a colour": "no mauve keys",
    "reveal_delay = inf": "reveal_delay",
    "reveal_delay = nan": "reveal_delay",
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_config_mistake_is_one_line_and_exit_78(tmp_path: Path, mistake: str) -> None:
    """A config mistake stops `coffre hub`/`coffre station` with one `coffre:` line, exit 78."""
    _tls_files(tmp_path)
    command, text = MISTAKES[mistake]
    config = tmp_path / f"{command}.toml"
    if command == "hub" and "[store]" not in text:  # the store in a folder that exists
        text = text.replace("[[table]]", f'[store]\npath = "{tmp_path / "hub.db"}"\n[[table]]', 1)
    config.write_text(text.replace("{tls}", str(tmp_path)))
    run = subprocess.run(
        [sys.executable, "-m", "firmware.cli", command, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 78, run.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("coffre: "), run.stderr[-2000:]
    assert str(tmp_path) in lines[0], "the line names the file (the config or the key set)"
    assert "Traceback" not in run.stderr
    assert WHAT[mistake.split(": ", 1)[1]] in lines[0], lines[0]
