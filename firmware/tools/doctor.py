"""``coffre doctor``: what is wrong with this Pi, one line a check, each FAIL with its fix.

Checks, for the role this machine was provisioned as (``/etc/coffre/station.toml`` or
``hub.toml``; ``--role`` to choose):

- it is a Raspberry Pi (``/proc/device-tree/model``); off a Pi the hardware checks say
  SKIP and why, and the rest still runs;
- SPI on (station) and I2C on (both): ``dtparam`` in ``config.txt`` *and* the ``/dev`` node
  (a reboot since raspi-config), I2C at 400 kHz;
- the ``coffre`` user exists and is in the groups its unit needs (gpio, spi, i2c);
- the config reads, its password file is the coffre user's and 0600, its ``ca.crt`` is there;
- the chips answer (the MFRC522 and the SSD1306, opened with the real backend) unless
  the station service holds them;
- the broker answers on its port, its certificate comes from the table's CA and names the
  host dialled (IP addresses too), and our user and password are accepted;
- the clock is set (synchronised, and not before the table's CA was made);
- on a hub: coffre's own broker config is there, no older coffre snippet sits in the
  distribution's mosquitto, and ``coffre`` is on the PATH.

Every path is looked up under ``root`` (``/`` by default) so tests run it on a fake tree.
"""

from __future__ import annotations

import datetime
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
#: The SSD1306's rated I2C clock (datasheet: 2.5 us a cycle), and a whole frame's time at
#: the Pi's default 100 kHz (1,024 bytes and the overhead, 9 clocks a byte).
SSD1306_RATED_HZ = 400_000
FULL_FRAME_MS_AT_100K = 93.0
#: The groups each role's unit runs with (deploy/systemd).
GROUPS = {"station": ("gpio", "spi", "i2c"), "hub": ("gpio", "i2c")}
#: broker-config backdates the CA this long (firmware.hub.certs.BACKDATE).
CA_BACKDATE = datetime.timedelta(days=365)


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    status: str
    name: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = f" -> fix: {self.fix}" if self.fix and self.status == FAIL else ""
        return f"{self.status} {self.name}: {self.detail}{fix}"


@dataclass
class Doctor:
    """The checks, on a machine rooted at ``root``."""

    root: Path = Path("/")
    role: str | None = None
    #: Opens the station's real parts (tests pass a fake); None: device.factory's.
    open_devices: Callable[[], Any] | None = None
    #: Whether a systemd unit is active (tests pass a fake).
    unit_active: Callable[[str], bool] | None = None
    timeout: float = 3.0

    def path(self, absolute: str | Path) -> Path:
        return self.root / str(absolute).lstrip("/")

    def detect_role(self) -> str | None:
        for role in ("hub", "station"):
            if self.path(f"/etc/coffre/{role}.toml").is_file():
                return role
        return None

    def run(self) -> Iterator[Check]:
        role = self.role or self.detect_role()
        if role is None:
            yield Check(
                FAIL,
                "role",
                "no /etc/coffre/hub.toml or station.toml",
                "sudo bash deploy/provision-pi.sh hub|station ...",
            )
            yield self.is_pi()
            yield Check(SKIP, "the rest", "no role: buses, files, broker and clock not checked")
            return
        self.role = role
        pi = self.is_pi()
        yield pi
        on_pi = pi.status == PASS
        if role == "station":
            yield self.bus("SPI", "dtparam=spi=on", "/dev/spidev0.0", "do_spi", on_pi)
        yield self.bus("I2C", "dtparam=i2c_arm=on", "/dev/i2c-1", "do_i2c", on_pi)
        yield self.i2c_speed(on_pi)
        yield self.groups(role)
        settings, checks = self.config(role)
        yield from checks
        if role == "station":
            yield self.chips(on_pi)
        if settings is not None:
            yield from self.broker(settings.broker)
        yield self.clock(settings.broker.tls_ca if settings is not None else None)
        if role == "hub":
            yield from self.hub_setup()

    # --- the machine ----------------------------------------------------------------

    def is_pi(self) -> Check:
        try:
            model = self.path("/proc/device-tree/model").read_text(errors="replace")
        except OSError:
            model = ""
        model = model.strip("\x00\n ")
        if "Raspberry Pi" in model:
            return Check(PASS, "board", model)
        return Check(SKIP, "board", "not a Raspberry Pi: SPI, I2C and chip checks skipped")

    def boot_config(self) -> tuple[Path | None, list[str]]:
        for name in ("/boot/firmware/config.txt", "/boot/config.txt"):
            path = self.path(name)
            if path.is_file():
                lines = [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()]
                return path, [line for line in lines if line]
        return None, []

    def bus(self, name: str, line: str, node: str, raspi: str, on_pi: bool) -> Check:
        key = name.lower()
        if not on_pi:
            return Check(SKIP, key, f"{name}: not a Raspberry Pi")
        config, lines = self.boot_config()
        fix = f"sudo raspi-config nonint {raspi} 0 && sudo reboot"
        if line not in lines:
            where = config or "config.txt"
            return Check(FAIL, key, f"{name} is off ({line} not in {where})", fix)
        if not self.path(node).exists():
            return Check(FAIL, key, f"{name} is on in config.txt but {node} is missing", fix)
        return Check(PASS, key, f"{name} on ({node})")

    def i2c_speed(self, on_pi: bool) -> Check:
        if not on_pi:
            return Check(SKIP, "i2c speed", "not a Raspberry Pi")
        config, lines = self.boot_config()
        hz = i2c_baudrate(lines) or 100_000  # the Pi's default
        fix = f"set dtparam=i2c_arm_baudrate=400000 in {config or 'config.txt'} and reboot"
        frame = f"a full OLED frame takes {FULL_FRAME_MS_AT_100K * 100_000 / hz:.0f} ms"
        if hz < SSD1306_RATED_HZ:
            said = f"{hz // 1000} kHz" if i2c_baudrate(lines) else "the default 100 kHz"
            return Check(FAIL, "i2c speed", f"I2C at {said}: {frame} instead of 23 ms", fix)
        if hz > SSD1306_RATED_HZ:
            return Check(
                PASS,
                "i2c speed",
                f"{hz // 1000} kHz ({frame}): beyond the SSD1306's rated 400 kHz, yours to "
                "try (a panel that garbles or a bus error in the journal: go back to 400 kHz)",
            )
        return Check(PASS, "i2c speed", "400 kHz")

    def groups(self, role: str) -> Check:
        needed = GROUPS[role]
        try:
            group_lines = self.path("/etc/group").read_text().splitlines()
            passwd = self.path("/etc/passwd").read_text().splitlines()
        except OSError:
            return Check(SKIP, "groups", "no /etc/group to read")
        if not any(line.startswith("coffre:") for line in passwd):
            return Check(
                FAIL, "groups", "no coffre user", "re-run deploy/provision-pi.sh (it makes it)"
            )
        member = {
            parts[0]
            for parts in (line.split(":") for line in group_lines)
            if len(parts) >= 4 and "coffre" in parts[3].split(",")
        }
        existing = {line.split(":")[0] for line in group_lines}
        missing = [g for g in needed if g in existing and g not in member]
        if missing:
            return Check(
                FAIL,
                "groups",
                f"coffre is not in {', '.join(missing)}",
                f"sudo usermod -aG {','.join(missing)} coffre",
            )
        absent = [g for g in needed if g not in existing]
        joined = [g for g in needed if g in member]
        if not joined:  # plain Debian (no gpio, spi, i2c): nothing to be in
            return Check(PASS, "groups", f"no {', '.join(absent)} group here: nothing to join")
        more = f" ({', '.join(absent)}: no such group here)" if absent else ""
        return Check(PASS, "groups", f"coffre in {', '.join(joined)}{more}")

    # --- the config and its files ---------------------------------------------------------

    def config(self, role: str) -> tuple[Any, list[Check]]:
        from firmware.link.config import ConfigError, MissingFile

        path = self.path(f"/etc/coffre/{role}.toml")
        try:
            if role == "station":
                from firmware.station.config import load_station

                settings: Any = load_station(path)
            else:
                from firmware.hub.config import load_hub

                settings = load_hub(path)
        except ConfigError as exc:
            pairs = role == "station" and isinstance(exc, MissingFile)
            fix = "start coffre-station: it pairs (docs/pairing.md)" if pairs else f"edit {path}"
            return None, [Check(FAIL, "config", str(exc), fix)]
        checks = [Check(PASS, "config", f"{path} reads")]
        checks += self.secret_files(path)
        return settings, checks

    def secret_files(self, config: Path) -> list[Check]:
        import tomllib

        broker = tomllib.loads(config.read_text()).get("broker", {})
        checks = []
        password = broker.get("password_file")
        if isinstance(password, str):
            checks.append(self.private(Path(password)))
        return checks

    def private(self, path: Path) -> Check:
        uid = self.coffre_uid()
        info = path.stat()
        mode = info.st_mode & 0o777
        fix = f"sudo chown coffre:coffre {path} && sudo chmod 0600 {path}"
        if mode & 0o077:
            return Check(FAIL, "password file", f"{path} is {mode:04o}: others can read it", fix)
        if uid is not None and info.st_uid != uid:
            return Check(FAIL, "password file", f"{path} is not the coffre user's", fix)
        return Check(PASS, "password file", f"{path}: 0600, the coffre user's")

    def coffre_uid(self) -> int | None:
        try:
            for line in self.path("/etc/passwd").read_text().splitlines():
                parts = line.split(":")
                if parts[0] == "coffre" and len(parts) > 2:
                    return int(parts[2])
        except (OSError, ValueError):
            pass
        return None

    # --- the parts ------------------------------------------------------------------

    def chips(self, on_pi: bool) -> Check:
        if not on_pi and self.open_devices is None:
            return Check(SKIP, "chips", "not a Raspberry Pi: the reader and display not tried")
        if self._active("coffre-station"):
            return Check(
                SKIP,
                "chips",
                "coffre-station holds them: its screen shows any fault "
                "(sudo systemctl stop coffre-station to test them here)",
            )
        from device.base import DeviceError

        try:
            devices = self.open_devices() if self.open_devices else _open_real()
        except (DeviceError, OSError, ImportError) as exc:
            return Check(
                FAIL,
                "chips",
                str(exc),
                "check the wiring (hardware/wiring), then: coffre selftest",
            )
        devices.close()
        return Check(PASS, "chips", "the MFRC522 and the SSD1306 answer")

    def _active(self, unit: str) -> bool:
        if self.unit_active is not None:
            return self.unit_active(unit)
        systemctl = shutil.which("systemctl")
        if systemctl is None or self.root != Path("/"):
            return False
        done = subprocess.run([systemctl, "is-active", "--quiet", unit], check=False)
        return done.returncode == 0

    # --- the broker -------------------------------------------------------------------

    def broker(self, config: Any) -> Iterator[Check]:
        where = f"{config.host}:{config.port}"
        try:
            sock = socket.create_connection((config.host, config.port), timeout=self.timeout)
        except OSError as exc:
            from firmware.link.mqtt import classify_failure

            state = classify_failure(exc, config.host, config.port)
            yield Check(FAIL, "broker", state.detail, "start it on the hub: coffre-broker")
            return
        yield Check(PASS, "broker", f"{where} answers")
        if config.tls_ca:
            from firmware.link.mqtt import classify_failure
            from firmware.link.tls import client_context

            try:
                with client_context(config.tls_ca).wrap_socket(
                    sock, server_hostname=config.host
                ) as tls:
                    tls.getpeercert()
            except ssl.SSLError as exc:
                state = classify_failure(exc, config.host, config.port)
                yield Check(FAIL, "certificate", state.detail)
                return
            yield Check(PASS, "certificate", f"from the table's CA, names {config.host}")
        else:
            sock.close()
            yield Check(SKIP, "certificate", "no ca_file: plain MQTT, nothing to check")
        yield self.login(config)

    def login(self, config: Any) -> Check:
        from firmware.link.mqtt import Client

        client = Client(config, f"coffre-doctor-{os.getpid()}", [])
        client.start()
        try:
            if client.wait_connected(self.timeout * 2):
                return Check(PASS, "login", f"user {config.username} accepted")
            return Check(FAIL, "login", client.state.detail or client.state.text)
        finally:
            client.stop()

    # --- the clock ------------------------------------------------------------------

    def clock(self, ca_file: str | None) -> Check:
        now = datetime.datetime.now(datetime.UTC)
        made = _ca_made(ca_file) if ca_file else None
        if made is not None and now < made - datetime.timedelta(hours=1):
            return Check(
                FAIL,
                "clock",
                f"the clock says {now:%Y-%m-%d %H:%M}, before the table's CA was made "
                f"({made:%Y-%m-%d})",
                "sudo timedatectl set-ntp true (or set the date: sudo date -s ...)",
            )
        synced = _ntp_synchronised() if self.root == Path("/") else None
        if synced is False:
            return Check(
                FAIL,
                "clock",
                f"not synchronised (now {now:%Y-%m-%d %H:%M} UTC)",
                "sudo timedatectl set-ntp true, and let the Pi reach an NTP server",
            )
        said = "synchronised" if synced else "not checked against NTP"
        return Check(PASS, "clock", f"{now:%Y-%m-%d %H:%M} UTC, {said}")

    # --- the hub's own set-up ----------------------------------------------------------

    def hub_setup(self) -> Iterator[Check]:
        from firmware.hub.brokerconf import BROKER_CONF, CONF_D_FILE, GENERATED

        conf = self.path(f"/etc/mosquitto/coffre/{BROKER_CONF}")
        if conf.is_file():
            yield Check(PASS, "broker config", f"{conf} (coffre-broker's)")
        else:
            yield Check(
                FAIL,
                "broker config",
                f"no {conf}",
                "sudo coffre broker-config --out /etc/mosquitto/coffre ... --apply",
            )
        old = self.path(f"/etc/mosquitto/conf.d/{CONF_D_FILE}")
        try:
            stale = old.read_text().startswith(GENERATED)
        except OSError:
            stale = False
        if stale:
            yield Check(
                FAIL,
                "mosquitto",
                f"an older coffre's {old} is in the distribution's mosquitto",
                f"sudo rm {old} && sudo systemctl restart mosquitto",
            )
        if self.root == Path("/"):  # a fake tree has no PATH of its own
            where = shutil.which("coffre")
            if where:
                yield Check(PASS, "PATH", f"coffre is {where}")
            else:
                yield Check(
                    FAIL,
                    "PATH",
                    "coffre is not on the PATH",
                    "sudo ln -s /opt/coffre/venv/bin/coffre /usr/local/bin/coffre",
                )


def _open_real() -> Any:
    from device.factory import open_station

    return open_station(backend="real")


def _ca_made(ca_file: str) -> datetime.datetime | None:
    """When broker-config made the CA (its notBefore plus the backdating), if readable."""
    try:
        decoded = ssl._ssl._test_decode_cert(ca_file)  # type: ignore[attr-defined]
        start = datetime.datetime.fromtimestamp(
            ssl.cert_time_to_seconds(decoded["notBefore"]), datetime.UTC
        )
    except (OSError, ValueError, KeyError, ssl.SSLError):
        return None
    return start + CA_BACKDATE


def _ntp_synchronised() -> bool | None:
    tool = shutil.which("timedatectl")
    if tool is None:
        return None
    try:
        done = subprocess.run(
            [tool, "show", "-p", "NTPSynchronized", "--value"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip()
    return {"yes": True, "no": False}.get(value)


def report(doctor: Doctor, out: TextIO = sys.stdout) -> int:
    """Print every check; 1 if any failed."""
    failed = False
    started = time.monotonic()
    for check in doctor.run():
        print(check.line(), file=out, flush=True)
        failed = failed or check.status == FAIL
    took = time.monotonic() - started
    print(f"{'some checks failed' if failed else 'all good'} ({took:.1f} s)", file=out)
    return 1 if failed else 0


def main(args: Any) -> int:
    return report(Doctor(root=Path(args.root), role=args.role))


def i2c_baudrate(lines: list[str]) -> int | None:
    """The I2C clock config.txt sets (``dtparam=i2c_arm_baudrate=N``, also inside a comma
    list, or its ``i2c_baudrate`` alias); the last one wins, as the firmware reads it."""
    found = None
    for line in lines:
        if not line.startswith("dtparam="):
            continue
        for part in line.removeprefix("dtparam=").split(","):
            key, _, value = part.strip().partition("=")
            if key in ("i2c_arm_baudrate", "i2c_baudrate") and value.strip().isdigit():
                found = int(value.strip())
    return found
