"""deploy/provision-pi.sh: it checks what it was given before it installs anything, and the
configs it writes carry the port and language it was given (or had)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "provision-pi.sh"


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The script with every system tool it would call replaced by a recorder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    for tool in ("apt-get", "raspi-config", "useradd", "usermod", "hostnamectl", "systemctl"):
        fake = bin_dir / tool
        fake.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\n')
        fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    run = subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60
    )
    return run, calls


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "provision-pi.sh hub"),
        (("gateway",), "role must be hub or station"),
        (("station",), "station needs its id"),
        (("station", "P 1"), "station id 'P 1'"),
        (("station", "p1", "--table", "Main"), "table 'Main'"),
        (("hub", "--stations", "p1,P2"), "station id 'P2'"),
        (("station", "p1", "--colour", "red"), "unknown option '--colour'"),
    ],
)
def test_bad_arguments_stop_before_any_install(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    """A wrong role, id, table or option: exit 64 with the reason, and no tool was run."""
    run, calls = _run(tmp_path, *args)
    assert run.returncode == 64, run.stderr
    assert says in run.stderr
    assert not calls.exists(), calls.read_text()


def test_the_script_names_the_pi_and_sets_the_i2c_clock() -> None:
    """Provisioning renames the Pi (coffre-hub, coffre-<id>) and sets I2C to 400 kHz."""
    text = SCRIPT.read_text()
    assert "dtparam=i2c_arm_baudrate=400000" in text
    assert "echo coffre-hub" in text and 'echo "coffre-$station_id"' in text
    assert "bash -n" not in text
    check = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


# The system tools provisioning calls, as recorders; the venv it makes holds a pip that does
# nothing and a coffre that writes what broker-config would hand the hub.
_STUBS = {
    "apt-get": "",
    "raspi-config": "",
    "useradd": "",
    "usermod": "",
    "hostnamectl": "",
    "systemctl": 'case "$1" in is-active) exit 3 ;; esac',
    # The coffre user does not exist here: install without -o/-g.
    "install": (
        'args=(); while [ $# -gt 0 ]; do case "$1" in -o|-g) shift 2 ;; '
        '*) args+=("$1"); shift ;; esac; done\n'
        'exec /usr/bin/install "${args[@]}"'
    ),
    "ss": 'cat "$FAKE_SS"',
    "python3": (
        'if [ "$1 $2" = "-m venv" ]; then\n'
        '  mkdir -p "$3/bin"; printf "#!/bin/sh\\n" > "$3/bin/pip"; chmod +x "$3/bin/pip"\n'
        '  cp "$FAKE_COFFRE" "$3/bin/coffre"; chmod +x "$3/bin/coffre"\n'
        '  cp "$FAKE_HAND_OVER" "$3/bin/python"; chmod +x "$3/bin/python"; exit 0\n'
        "fi\n"
        f'exec {sys.executable} "$@"'
    ),
}
_FAKE_COFFRE = """#!/bin/bash
echo "coffre $*" >> "$CALLS"
[ "$1" = broker-config ] || exit 0
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
mkdir -p "$out/credentials"
echo secret > "$out/credentials/hub.password"; echo secret > "$out/credentials/spectator.password"
"""
# The venv's python runs brokerconf.hand_over(conf_dir, user, dest): here a copy, as the
# coffre user it hands the file to does not exist.
_FAKE_HAND_OVER = """#!/bin/bash
echo "hand_over $3 $4 $5" >> "$CALLS"
cp "$3/credentials/$4.password" "$5"
"""


def _provision(
    root: Path, *args: str, listening: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The whole script, as root, in a mount namespace whose /etc, /opt, /usr/local and /boot
    are overlays kept in ``root`` (so a second call is a re-run on the same Pi). ``listening``
    is what ``ss -ltnp`` shows for the broker's port."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool, body in _STUBS.items():
        fake = bin_dir / tool
        fake.write_text(f'#!/bin/bash\necho "{tool} $*" >> "$CALLS"\n{body}\n')
        fake.chmod(0o755)
    (root / "coffre").write_text(_FAKE_COFFRE)
    (root / "hand_over").write_text(_FAKE_HAND_OVER)
    (root / "ss.txt").write_text(listening)
    mounts = []
    for top in ("etc", "opt", "usr/local", "boot"):
        up, work = root / "up" / top, root / "work" / top
        up.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        mounts.append(
            f"mount -t overlay overlay -o lowerdir=/{top},upperdir={up},workdir={work} /{top}"
        )
    path = f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin"
    clean = {"PATH": path, "CALLS": str(root / "calls"), "HOME": "/root"}
    clean |= {"FAKE_SS": str(root / "ss.txt"), "FAKE_COFFRE": str(root / "coffre")}
    clean |= {"FAKE_HAND_OVER": str(root / "hand_over")}
    script = " && ".join([*mounts, 'exec bash "$0" "$@"'])
    return subprocess.run(
        ["unshare", "--mount", "bash", "-c", script, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        timeout=120,
    )


def _etc(root: Path, name: str) -> str:
    return (root / "up" / "etc" / "coffre" / name).read_text()


def test_hub_port_goes_into_every_config_and_stays_on_a_rerun(tmp_path: Path) -> None:
    """--port 8884: hub.toml, display.toml and broker-config get it; a re-run without
    --port keeps it; a station given --port dials it."""
    run = _provision(tmp_path, "hub", "--stations", "p1,p2", "--port", "8884", "--keep-hostname")
    assert run.returncode == 0, run.stderr
    for name in ("hub.toml", "display.toml"):
        assert re.search(r"^\[broker\]\nhost = .*\nport = 8884$", _etc(tmp_path, name), re.M)
    assert "--port 8884" in (tmp_path / "calls").read_text()
    for user in ("hub", "spectator"):  # the services are handed their passwords
        assert (
            f"hand_over /etc/mosquitto/coffre {user} /etc/coffre/{user}.password"
            in (tmp_path / "calls").read_text()
        )
    assert "--port 8884" in run.stdout  # the stations are told to dial it
    rerun = _provision(tmp_path, "hub", "--stations", "p1,p2,p3", "--keep-hostname")
    assert rerun.returncode == 0, rerun.stderr
    assert "port = 8884" in _etc(tmp_path, "hub.toml") and "8883" not in _etc(tmp_path, "hub.toml")
    assert (tmp_path / "calls").read_text().count("--port 8884") == 2
    station = tmp_path / "station"
    run = _provision(station, "station", "p1", "--port", "9000", "--keep-hostname")
    assert run.returncode == 0, run.stderr
    assert "port = 9000" in _etc(station, "station.toml")
    assert _provision(station, "station", "p2", "--keep-hostname").returncode == 0
    assert "port = 9000" in _etc(station, "station.toml")


@pytest.mark.parametrize(
    ("listening", "says"),
    [
        (
            'LISTEN 0 100 0.0.0.0:8883 0.0.0.0:* users:(("mosquitto",pid=4242,fd=5))\n',
            "port 8883 is taken by mosquitto (pid 4242): choose another with --port",
        ),
        ("LISTEN 0 100 0.0.0.0:8883 0.0.0.0:*\n", "port 8883 is taken by a program ss -ltnp"),
    ],
)
def test_a_taken_port_stops_the_hub_before_it_installs(
    tmp_path: Path, listening: str, says: str
) -> None:
    """Another broker on 8883: one line naming it and --port, exit 75, nothing installed."""
    run = _provision(tmp_path, "hub", "--keep-hostname", listening=listening)
    assert run.returncode == 75, run.stderr
    [line] = run.stderr.splitlines()
    assert line.startswith(f"provision-pi: {says}") and "--port 8884" in line, line
    assert "apt-get" not in (tmp_path / "calls").read_text()
    assert not (tmp_path / "up" / "etc" / "coffre").exists()


def test_the_port_coffre_broker_holds_is_not_taken(tmp_path: Path) -> None:
    """A re-run while coffre-broker listens on the port goes on: that listener is ours."""
    # What ss would name: a process started with coffre-broker's config path.
    config = "/etc/mosquitto/coffre/mosquitto.conf"
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", config])
    try:
        line = f'LISTEN 0 100 0.0.0.0:8883 0.0.0.0:* users:(("mosquitto",pid={ours.pid},fd=5))\n'
        run = _provision(tmp_path, "hub", "--keep-hostname", listening=line)
    finally:
        ours.kill()
        ours.wait()
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    ("args", "env", "spoken"),
    [
        (("--language", "en"), {"LANG": "fr_FR.UTF-8"}, "en"),
        (("--language", "fr"), {}, "fr"),
        ((), {"LANG": "fr_FR.UTF-8"}, "fr"),
        ((), {"LANG": "en_GB.UTF-8"}, "en"),
        ((), {"LANG": "de_DE.UTF-8"}, "en"),
        ((), {}, "en"),
    ],
)
def test_the_table_speaks_the_language_given_or_the_systems(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], spoken: str
) -> None:
    """--language, else the locale where it is French or English, else English; the next
    steps show the hub's pairing question in that language."""
    run = _provision(tmp_path, "hub", "--keep-hostname", *args, env=env)
    assert run.returncode == 0, run.stderr
    assert f'language = "{spoken}"' in _etc(tmp_path, "hub.toml")
    assert f'language = "{spoken}"' in _etc(tmp_path, "display.toml")
    ask = "Appairer p1 ? 4721" if spoken == "fr" else "Pair p1? 4721"
    assert f'shows "{ask}"' in run.stdout
    rerun = _provision(tmp_path, "hub", "--keep-hostname", env={"LANG": "de_DE.UTF-8"})
    assert f'language = "{spoken}"' in _etc(tmp_path, "hub.toml")  # kept, not the locale's
    assert rerun.returncode == 0, rerun.stderr


def test_a_bad_port_or_language_is_refused(tmp_path: Path) -> None:
    """--port 0, --port http, --language de, --language on a station: exit 64, nothing run."""
    for args, says in (
        (("hub", "--port", "0"), "port '0': a number from 1 to 65535"),
        (("hub", "--port", "http"), "port 'http'"),
        (("hub", "--port", "70000"), "port '70000'"),
        (("hub", "--language", "de"), "language 'de': fr or en"),
        (("station", "p1", "--language", "fr"), "--language is the table's"),
    ):
        run, calls = _run(tmp_path, *args)
        assert run.returncode == 64 and says in run.stderr, (args, run.stderr)
        assert not calls.exists()


def test_a_rerun_marks_the_old_and_new_lines(tmp_path: Path) -> None:
    """The change listing says which line went (-) and which came (+)."""
    assert _provision(tmp_path, "station", "p1", "--keep-hostname").returncode == 0
    run = _provision(tmp_path, "station", "p2", "--table", "side", "--keep-hostname")
    assert run.returncode == 0, run.stderr
    listing = run.stdout.split("station.toml: updated", 1)[1].split("[", 1)[0]
    assert '    - username = "main.p1"' in listing
    assert '    + username = "side.p2"' in listing
    assert '    - id = "p1"' in listing and '    + id = "p2"' in listing


def test_a_hub_asks_root_for_backups_in_its_own_folder(tmp_path: Path) -> None:
    """The console's backups: hub.toml names the folder the hub's unit makes, the backup
    path and service units are installed, and the path unit is enabled and started."""
    import tomllib

    run = _provision(tmp_path, "hub", "--stations", "p1,p2", "--keep-hostname")
    assert run.returncode == 0, run.stderr
    hub_toml = tmp_path / "up" / "etc" / "coffre" / "hub.toml"
    assert tomllib.loads(hub_toml.read_text())["backup"] == {"dir": "/var/lib/coffre/backups"}
    units = tmp_path / "up" / "etc" / "systemd" / "system"
    for name in ("coffre-backup.path", "coffre-backup.service"):
        assert (units / name).read_bytes() == (ROOT / "deploy" / "systemd" / name).read_bytes()
    assert "systemctl enable --now coffre-backup.path" in (tmp_path / "calls").read_text()
