"""The ``coffre`` command line: one clear line for every user mistake, never a traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware.cli import EX_CONFIG, main
from firmware.tools.sim import MANIFEST, claim_out

ROOT = Path(__file__).resolve().parents[2]
STATION = '[broker]\nhost = "127.0.0.1"\nport = {port}\n[station]\ntable = "main"\nid = "p1"\n'


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("coffre: "), err
    return lines[0]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``coffre --version`` prints the package's version and exits 0."""
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("coffre 0.")


def test_log_level_takes_only_known_levels(capsys: pytest.CaptureFixture[str]) -> None:
    """``--log-level`` is checked by argparse (choices), like every option with a set."""
    with pytest.raises(SystemExit) as exit_:
        main(["--log-level", "loud", "station", "--config", "x"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "text", "expect"),
    [
        ("typo", '[broker]\nhots = "hub"\n[station]\ntable = "main"\nid = "p1"\n', "hots"),
        ("toml", "[broker\n", "not valid TOML"),
        ("backend", '[station]\ntable = "main"\nid = "p1"\nbackend = "rael"\n', "choose real"),
        ("table", '[station]\ntable = "Main"\nid = "p1"\n', "bad table 'Main'"),
        ("no id", '[station]\ntable = "main"\n', "[station] needs id"),
        ("port", '[broker]\nport = "x"\n[station]\ntable = "main"\nid = "p1"\n', "port"),
    ],
)
def test_station_config_mistakes_are_one_line_and_exit_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, expect: str
) -> None:
    """Every station.toml mistake: one ``coffre: <file>: <what>`` line, exit 78."""
    path = tmp_path / "station.toml"
    path.write_text(text)
    assert main(["station", "--config", str(path)]) == EX_CONFIG
    line = _one_line(capsys)
    assert str(path) in line and expect in line, name


def test_missing_files_are_one_line_and_exit_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing config, password file, CA file or pin map names the file; exit 78."""
    assert main(["station", "--config", str(tmp_path / "nope.toml")]) == EX_CONFIG
    assert "nope.toml does not exist" in _one_line(capsys)
    path = tmp_path / "station.toml"
    for key, value in (("password_file", "pw"), ("ca_file", "ca.crt")):
        path.write_text(f'[broker]\n{key} = "{tmp_path / value}"\n' + STATION.split("\n", 3)[3])
        assert main(["station", "--config", str(path)]) == EX_CONFIG
        assert value in _one_line(capsys)
    path.write_text(STATION.format(port=1883))
    pins = tmp_path / "pins.toml"
    assert main(["station", "--config", str(path), "--pins", str(pins)]) == EX_CONFIG
    assert "pins.toml" in _one_line(capsys)
    path.write_text(f'[broker]\npassword_file = "{tmp_path}"\n' + STATION.split("\n", 3)[3])
    assert main(["station", "--config", str(path)]) == EX_CONFIG
    assert "is a folder" in _one_line(capsys)


def test_unknown_backend_in_the_environment_exits_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """COFFRE_DEVICE_BACKEND=bogus is a configuration error, not a traceback."""
    monkeypatch.setenv("COFFRE_DEVICE_BACKEND", "bogus")
    path = tmp_path / "station.toml"
    path.write_text(STATION.format(port=1883))
    assert main(["station", "--config", str(path)]) == EX_CONFIG
    assert "COFFRE_DEVICE_BACKEND" in _one_line(capsys)


def test_hub_keyset_under_a_table_is_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``keyset`` written after ``[[table]]`` (a key of that table) is refused, not ignored."""
    path = tmp_path / "hub.toml"
    path.write_text('[[table]]\nname = "main"\nstations = ["p1", "p2", "p3"]\nkeyset = "k.toml"\n')
    assert main(["hub", "--config", str(path)]) == EX_CONFIG
    line = _one_line(capsys)
    assert "unknown key keyset in [[table]] 1" in line and "top-level" in line


def test_hub_duplicate_table_name_is_refused_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two ``[[table]]`` with one name stop the hub with one line naming the name and both."""
    path = tmp_path / "hub.toml"
    table = '[[table]]\nname = "{}"\nstations = ["p1", "p2", "p3"]\n'
    path.write_text(table.format("main") + table.format("bar") + table.format("main"))
    assert main(["hub", "--config", str(path)]) == EX_CONFIG
    line = _one_line(capsys)
    assert "[[table]] 3" in line and "'main'" in line and "[[table]] 1" in line


@pytest.mark.parametrize("name", ["Main", "table one", "", "x" * 33])
def test_hub_invalid_table_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A table name that cannot be a topic level stops the hub with one line naming it."""
    path = tmp_path / "hub.toml"
    path.write_text(f'[[table]]\nname = "{name}"\nstations = ["p1", "p2", "p3"]\n')
    assert main(["hub", "--config", str(path)]) == EX_CONFIG
    line = _one_line(capsys)
    assert "[[table]] 1" in line and f"bad table {name!r}" in line


def test_hub_missing_keyset_file_exits_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A keyset path that does not exist stops the hub with one line."""
    path = tmp_path / "hub.toml"
    path.write_text(
        f'keyset = "{tmp_path / "keys.toml"}"\n[[table]]\nname = "main"\nstations = ["p1"]\n'
    )
    assert main(["hub", "--config", str(path)]) == EX_CONFIG
    assert "keys.toml" in _one_line(capsys)


def test_broker_config_bad_table_name_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``broker-config --table 'My Table'`` is a usage error line, not a ValueError."""
    args = ["broker-config", "--table", "My Table", "--stations", "p1", "--out", str(tmp_path)]
    assert main([*args, "--no-tls"]) == 64
    assert "bad table 'My Table'" in _one_line(capsys)


def test_sim_refuses_impossible_player_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """``sim --players 9 --game incognito`` is refused at once (Incognito seats 3 to 6)."""
    assert main(["sim", "--game", "incognito", "--players", "9"]) == 2
    assert "incognito is for 3 to 6 players, not 9" in capsys.readouterr().err


def test_sim_out_refuses_a_folder_it_did_not_write(tmp_path: Path) -> None:
    """``sim --out`` on someone's folder refuses it and deletes nothing."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    assert claim_out(mine) is not None
    assert (mine / "thesis.tex").read_text() == "years of work"


def test_sim_out_removes_only_what_it_wrote(tmp_path: Path) -> None:
    """Re-running into the sim's own folder removes the files it listed, nothing else."""
    out = tmp_path / "sim-out"
    assert claim_out(out) is None
    (out / "p1").mkdir()
    (out / "p1" / "0000.png").write_bytes(b"png")
    (out / MANIFEST).write_text("p1/0000.png\n")
    (out / "notes.txt").write_text("mine")
    assert claim_out(out) is None
    assert not (out / "p1").exists()
    assert (out / "notes.txt").read_text() == "mine"


def run_until_ready(tmp_path: Path, command: str, config: str) -> tuple[int, str]:
    """Run ``coffre COMMAND`` on a config whose broker port refuses connections, wait for
    its sd_notify READY, then SIGTERM it: (exit status, stderr)."""
    # A bound socket that never listens: the port stays ours, and connecting is refused.
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(30)
    path = tmp_path / f"{command}.toml"
    path.write_text(config.format(port=closed.getsockname()[1], tmp=tmp_path))
    with closed, notify:
        proc = subprocess.Popen(
            [sys.executable, "-m", "firmware.cli", command, "--config", str(path)],
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify")},
        )
        try:
            assert notify.recv(64) == b"READY=1"
            time.sleep(1.5)  # a refused connection and a retry
        finally:
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=30)
    return proc.returncode, err


def test_sigterm_while_disconnected_exits_0(tmp_path: Path) -> None:
    """A station that never reached its broker stops on SIGTERM with status 0, no traceback."""
    status, err = run_until_ready(tmp_path, "station", STATION + 'backend = "mock"\n')
    assert status == 0, err
    assert "Traceback" not in err and "nothing listens" in err


def test_hub_panel_pins_come_from_its_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``[panel] pins`` is the panel's pin map: a pin map with a bad pin stops the hub."""
    pins = tmp_path / "panel.toml"
    pins.write_text("[buttons]\nprev = 40\n")
    path = tmp_path / "hub.toml"
    path.write_text(
        f'[panel]\nbackend = "emulated"\npins = "{pins}"\n'
        '[[table]]\nname = "main"\nstations = ["p1", "p2", "p3"]\n'
    )
    assert main(["hub", "--config", str(path)]) == EX_CONFIG
    line = _one_line(capsys)
    assert "panel.toml" in line and "prev" in line


def test_unreadable_password_file_says_whose_it_must_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A password file the service user cannot read: one line with the chown to run."""
    secret = tmp_path / "station.password"
    secret.write_text("pw\n")
    real_read = Path.read_text

    def read_text(self: Path, *args: object, **kwargs: object) -> str:
        if self == secret:  # what a root-owned 0600 file does to the coffre user
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", read_text)
    path = tmp_path / "station.toml"
    path.write_text(f'[broker]\npassword_file = "{secret}"\n' + STATION.split("\n", 3)[3])
    assert main(["station", "--config", str(path)]) == EX_CONFIG
    assert f"sudo chown coffre: {secret}" in _one_line(capsys)


def test_signal_handlers_come_back_after_the_station_returns(tmp_path: Path) -> None:
    """``coffre station`` run in-process leaves SIGINT and SIGTERM as it found them."""
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    path = tmp_path / "station.toml"
    path.write_text("[broker\n")
    assert main(["station", "--config", str(path)]) == EX_CONFIG
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


@pytest.mark.skipif(Path("/dev/i2c-1").exists(), reason="a real I2C bus: the panel may open")
def test_hub_without_its_panel_referees_anyway(tmp_path: Path) -> None:
    """A panel that cannot be opened is one ERROR line; the hub still comes up (no restart loop)."""
    status, err = run_until_ready(
        tmp_path,
        "hub",
        '[broker]\nhost = "127.0.0.1"\nport = {port}\n[store]\npath = "{tmp}/hub.sqlite3"\n'
        '[panel]\nbackend = "real"\n[[table]]\nname = "main"\nstations = ["p1", "p2", "p3"]\n',
    )
    assert status == 0, err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if "panel:" in x]
    assert "ERROR" in line and "runs without it" in line and 'backend = "none"' in line
