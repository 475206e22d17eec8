"""``coffre doctor``: what is wrong with this Pi, one line a check, each FAIL with its fix.

Checks, for the role this machine was provisioned as (``/etc/coffre/station.toml`` or
``hub.toml``; ``--role`` to choose):

- it is a Raspberry Pi (``/proc/device-tree/model``); off a Pi the hardware checks say
  SKIP and why, and the rest still runs;
- SPI on (station) and I2C on (both): ``dtparam`` in ``config.txt`` *and* the ``/dev`` node
  (a reboot since raspi-config), I2C at 400 kHz;
- the ``coffre`` user exists and is in the groups its unit needs (gpio, spi, i2c);
- the config reads, its password file is the coffre user's and 0600 (0640 at most), its
  ``ca.crt`` is there;
- on a hub: every other secret (the display's password, the broker folder's ``passwd``,
  ``ca.key``, ``broker.key`` and ``credentials/``) is closed to others, and the hub's
  group may write what pairing writes (``passwd``, ``acl``, ``credentials/``); a link
  where any of these files should be is a FAIL of its own, looked at with ``lstat``,
  and its fix removes it (a chmod run as root would reach the link's target);
- the chips answer (the MFRC522 and the SSD1306, opened with the real backend) unless
  the station service holds them;
- the broker answers on its port (and it is coffre's broker, not something else holding
  the port), its certificate comes from the table's CA and names the host dialled (IP
  addresses too), and our user and password are accepted;
- the clock is set (synchronised, and not before the table's CA was made);
- on a hub: coffre's own broker config is there, no older coffre snippet sits in the
  distribution's mosquitto, and ``coffre`` is on the PATH.

Each check is one line whatever it meets (an unreadable or non-UTF-8 file, a port that
resets or speaks garbage): what a check did not foresee becomes its own FAIL line, and
the next check still runs.

System paths are looked up under ``root`` (``/`` by default) so tests run it on a fake
tree; paths written in the config files are used as written.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import shutil
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
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
#: Where provisioning puts coffre's broker (hub.toml's [pairing] broker_dir says so too).
BROKER_DIR = "/etc/mosquitto/coffre"
#: The most a secret file may allow: read by its owner's group at most (provisioning
#: gives 0600). ``passwd`` is written by the hub's group when a station pairs
#: (firmware.hub.brokerconf.share_with_hub gives it 0660).
SECRET_MODE = 0o640
PASSWD_MODE = 0o660
#: The Organization every certificate broker-config makes carries (firmware.hub.certs).
COFFRE_ORG = "coffre"
PAIRING_DOC = "docs/pairing.md"
#: OpenSSL's verify codes for a certificate not valid yet (9) or any more (10).
CERT_DATES = (9, 10)


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    status: str
    name: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = f" -> fix: {self.fix}" if self.fix and self.status == FAIL else ""
        # One line, whatever a library's message holds (TLS errors span lines).
        return " ".join(f"{self.status} {self.name}: {self.detail}{fix}".split())


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
    #: The role's config file as TOML (empty when it does not read): the paths it names,
    #: for the fixes.
    raw: dict[str, Any] = field(default_factory=dict, init=False)
    #: The role's settings (HubSettings or StationSettings) once the config reads.
    settings: Any = field(default=None, init=False)

    def path(self, absolute: str | Path) -> Path:
        return self.root / str(absolute).lstrip("/")

    def detect_role(self) -> str | None:
        for role in ("hub", "station"):
            if self.path(f"/etc/coffre/{role}.toml").is_file():
                return role
        return None

    @property
    def toml(self) -> Path:
        return self.path(f"/etc/coffre/{self.role}.toml")

    def run(self) -> Iterator[Check]:
        role = self.role
        if role is None:
            try:
                role = self.detect_role()
            except OSError as exc:
                yield unforeseen("role", exc)
                return
        if role is None:
            yield Check(
                FAIL,
                "role",
                "no /etc/coffre/hub.toml or station.toml",
                "sudo bash deploy/provision-pi.sh hub|station ...",
            )
            yield from self.guard("board", self.is_pi)
            yield Check(SKIP, "the rest", "no role: buses, files, broker and clock not checked")
            return
        self.role = role
        board = list(self.guard("board", self.is_pi))
        yield from board
        on_pi = board[0].status == PASS
        if role == "station":
            yield from self.guard(
                "spi", lambda: self.bus("SPI", "dtparam=spi=on", "/dev/spidev0.0", "do_spi", on_pi)
            )
        yield from self.guard(
            "i2c", lambda: self.bus("I2C", "dtparam=i2c_arm=on", "/dev/i2c-1", "do_i2c", on_pi)
        )
        yield from self.guard("i2c speed", lambda: self.i2c_speed(on_pi))
        yield from self.guard("groups", lambda: self.groups(role))
        yield from self.guard("config", lambda: self.config(role))
        settings = self.settings
        if settings is not None:
            yield from self.guard("password file", self.password_file)
        if role == "hub":
            yield from self.guard("secrets", lambda: self.secrets(settings))
            if settings is not None:
                yield from self.guard("pairing", lambda: self.pairing(settings.pairing_dir))
        if role == "station":
            yield from self.guard("chips", lambda: self.chips(on_pi))
        if settings is not None:
            yield from self.guard("broker", lambda: self.broker(settings.broker))
        ca = settings.broker.tls_ca if settings is not None else None
        yield from self.guard("clock", lambda: self.clock(ca))
        if role == "hub":
            yield from self.guard("hub set-up", self.hub_setup)

    def guard(
        self, name: str, check: Callable[[], Check | Iterable[Check] | None]
    ) -> Iterator[Check]:
        """The check's line(s); what it did not foresee (an unreadable file, a library's
        error) is one FAIL line of its own, never a traceback that hides the other checks."""
        try:
            result = check()
            if isinstance(result, Check):
                yield result
            elif result is not None:
                yield from result
        except Exception as exc:  # every check ends in a line, whatever it meets
            yield unforeseen(name, exc)

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
                text = path.read_text(errors="replace")
                lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
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

    def system_lines(self, name: str) -> list[list[str]]:
        """``/etc/passwd`` or ``/etc/group`` as fields; a name or comment field in another
        encoding than UTF-8 (Latin-1 is common) is read, not refused: the names coffre
        looks for are ASCII."""
        text = self.path(f"/etc/{name}").read_text(errors="replace")
        return [line.split(":") for line in text.splitlines() if line.strip()]

    def groups(self, role: str) -> Check:
        needed = GROUPS[role]
        try:
            group_lines = self.system_lines("group")
            passwd = self.system_lines("passwd")
        except OSError:
            return Check(SKIP, "groups", "no /etc/group to read")
        if not any(parts[0] == "coffre" for parts in passwd):
            return Check(
                FAIL, "groups", "no coffre user", "re-run deploy/provision-pi.sh (it makes it)"
            )
        member = {
            parts[0] for parts in group_lines if len(parts) >= 4 and "coffre" in parts[3].split(",")
        }
        existing = {parts[0] for parts in group_lines}
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

    def coffre_ids(self) -> tuple[int, set[int]] | None:
        """The coffre user's uid and every group it is in (primary and listed), or None."""
        try:
            passwd = self.system_lines("passwd")
            group_lines = self.system_lines("group")
        except OSError:
            return None
        for parts in passwd:
            if parts[0] == "coffre" and len(parts) > 3:
                try:
                    uid, gids = int(parts[2]), {int(parts[3])}
                except ValueError:
                    return None
                for g in group_lines:
                    if len(g) >= 4 and "coffre" in g[3].split(",") and g[2].isdigit():
                        gids.add(int(g[2]))
                return uid, gids
        return None

    def coffre_uid(self) -> int | None:
        ids = self.coffre_ids()
        return ids[0] if ids else None

    def owner(self, info: os.stat_result) -> str:
        """``user:group`` of a file, by the names of this tree's /etc/passwd and group."""

        def name(table: str, number: int) -> str:
            with contextlib.suppress(OSError):
                for parts in self.system_lines(table):
                    if len(parts) > 2 and parts[2] == str(number):
                        return parts[0]
            return str(number)

        return f"{name('passwd', info.st_uid)}:{name('group', info.st_gid)}"

    # --- the config and its files ---------------------------------------------------------

    def config(self, role: str) -> Check:
        from firmware.link.config import ConfigError, MissingFile

        path = self.toml
        try:
            self.raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.raw = {}  # load_* below says what is wrong with it
        try:
            if role == "station":
                from firmware.station.config import load_station

                loaded: Any = load_station(path)
            else:
                from firmware.hub.config import load_hub

                loaded = load_hub(path)
        except MissingFile as exc:
            return Check(FAIL, "config", str(exc), self.missing_fix(exc.path, exc.reason))
        except ConfigError as exc:
            return Check(FAIL, "config", str(exc), f"edit {path}")
        self.settings = loaded
        return Check(PASS, "config", f"{path} reads")

    def broker_key(self, key: str, section: str = "broker") -> str | None:
        """A path the config names (``[broker] password_file``...), as written."""
        table = self.raw.get(section)
        value = table.get(key) if isinstance(table, dict) else None
        return value if isinstance(value, str) else None

    def broker_dir(self, settings: Any = None) -> Path:
        """The hub's broker folder: hub.toml's [pairing] broker_dir, else provisioning's."""
        named = getattr(settings, "pairing_dir", None) or self.broker_key("broker_dir", "pairing")
        return Path(named) if named else self.path(BROKER_DIR)

    def pair_again(self, *files: str | None) -> str:
        """Pairing again, as docs/pairing.md has it: the station's files go, it restarts."""
        gone = " ".join(f for f in files if f)
        rm = f"sudo rm {gone} && " if gone else ""
        return f"pair again: {rm}sudo systemctl restart coffre-station ({PAIRING_DOC})"

    def missing_fix(self, missing: Path, reason: str) -> str:
        """The fix for a file the config names that cannot be read."""
        if missing == self.toml:
            return f"sudo bash deploy/provision-pi.sh {self.role} ... (it writes {missing})"
        if missing.is_symlink():  # chown and chmod would reach what it points at
            return self.unlink_fix(missing)
        if reason.startswith("is not readable"):
            if os.geteuid() != 0:
                return "run it as root (sudo coffre doctor): it reads the service's files"
            return f"sudo chown coffre: {missing} && sudo chmod 0600 {missing}"
        if self.role == "station" and str(missing) in {
            self.broker_key("password_file"),
            self.broker_key("ca_file"),
        }:
            # The station pairs when it starts; one that already runs holds the old files.
            if self._active("coffre-station"):
                return f"sudo systemctl restart coffre-station: it pairs ({PAIRING_DOC})"
            return f"sudo systemctl start coffre-station: it pairs ({PAIRING_DOC})"
        if self.role == "hub" and missing.name.endswith(".password"):
            kept = self.broker_dir() / "credentials" / missing.name
            return f"sudo install -m 0600 -o coffre -g coffre {kept} {missing}"
        return f"put {missing} back, or edit {self.toml}"

    def password_file(self) -> Check | None:
        name = self.broker_key("password_file")
        return self.private(Path(name)) if name else None

    def private(self, path: Path) -> Check:
        """The service's own password: the coffre user's, closed to others."""
        uid = self.coffre_uid()
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return Check(FAIL, "password file", f"{path} is a link", self.unlink_fix(path))
        mode = info.st_mode & 0o777
        fix = f"sudo chown coffre:coffre {path} && sudo chmod 0600 {path}"
        if mode & ~SECRET_MODE:
            return Check(FAIL, "password file", f"{path} is {mode:04o}: {too_open(mode)}", fix)
        if uid is not None and info.st_uid != uid:
            return Check(FAIL, "password file", f"{path} is not the coffre user's", fix)
        return Check(PASS, "password file", f"{path}: {mode:04o}, the coffre user's")

    def unlink_fix(self, *links: Path) -> str:
        """The fix for links where secrets or broker files should be: they go, and what
        writes those files writes them again. Never a chmod: as root it would change the
        file a link points at, whatever that is."""
        if self.role == "station":
            return self.pair_again(*map(str, links))
        kept = self.broker_dir() / "credentials"
        fixes = []
        made: list[str] = []
        for path in links:
            if path.name.endswith(".password") and path.parent != kept:
                # A service's copy of its password: provisioning's copy again.
                fixes.append(
                    f"sudo rm {path} && sudo install -m 0600 -o coffre -g coffre "
                    f"{kept / path.name} {path}"
                )
            else:
                made.append(str(path))
        if made:
            # broker-config refuses to write through a link: the link goes first.
            new_ca = (
                " (a new CA: every station pairs again)" if kept.parent / "ca.key" in links else ""
            )
            fixes.append(
                f"sudo rm {' '.join(made)} && re-run provisioning "
                f"(coffre broker-config ... --apply){new_ca}"
            )
        return "; ".join(fixes)

    def secrets(self, settings: Any) -> Check:
        """Every secret on a hub but its own password (checked above), closed to others:
        the other services' passwords, the broker's password hashes, the CA's and the
        broker's keys, the users' passwords broker-config and pairing keep."""
        own = self.broker_key("password_file")
        found: dict[Path, int] = {}
        for config in ("hub.toml", "display.toml"):
            with contextlib.suppress(OSError, ValueError):
                text = self.path(f"/etc/coffre/{config}").read_text(encoding="utf-8")
                named = tomllib.loads(text).get("broker", {}).get("password_file")
                if isinstance(named, str):
                    found[Path(named)] = SECRET_MODE
        etc = self.path("/etc/coffre")
        for path in sorted(etc.glob("*.password")) if etc.is_dir() else []:
            found[path] = SECRET_MODE
        folder = self.broker_dir(settings)
        found[folder / "passwd"] = PASSWD_MODE
        for name in ("ca.key", "broker.key"):
            found[folder / name] = SECRET_MODE
        credentials = folder / "credentials"
        links: list[Path] = []
        if credentials.is_symlink():
            links.append(credentials)
        elif credentials.is_dir():
            for path in sorted(credentials.iterdir()):
                found[path] = SECRET_MODE
        opened: list[tuple[Path, int, int]] = []
        count = 0
        for path, most in found.items():
            if own and path == Path(own):
                continue
            try:
                info = path.lstat()
            except FileNotFoundError:
                continue
            count += 1
            mode = info.st_mode & 0o777
            if stat.S_ISLNK(info.st_mode):
                links.append(path)
            elif stat.S_ISREG(info.st_mode) and mode & ~most:
                opened.append((path, mode, most))
        if links:
            # Each link its own fix, and no chmod in the line: root would follow it.
            said = ", ".join(f"{p} is a link" for p in links)
            return Check(
                FAIL, "secrets", f"{said}: a secret is a file of its own", self.unlink_fix(*links)
            )
        if not count:
            return Check(SKIP, "secrets", f"no keys or passwords here (none in {folder})")
        if not opened:
            return Check(PASS, "secrets", f"{count} keys and passwords, none open to others")
        said = ", ".join(f"{p} is {m:04o} ({too_open(m, most)})" for p, m, most in opened)
        modes: dict[int, list[str]] = {}
        for path, _mode, most in opened:
            modes.setdefault(0o600 if most == SECRET_MODE else most, []).append(str(path))
        fix = " && ".join(f"sudo chmod {m:04o} {' '.join(ps)}" for m, ps in sorted(modes.items()))
        return Check(FAIL, "secrets", said, fix)

    def pairing(self, folder: Path | None) -> Check:
        """What pairing writes as the hub's user: ``passwd``, ``acl`` and ``credentials/``
        (docs/pairing.md). A restore or a hand copy that leaves them another owner's makes
        every pairing fail while everything else works."""
        if folder is None:
            return Check(
                SKIP,
                "pairing",
                f"no [pairing] broker_dir in {self.toml}: stations cannot pair ({PAIRING_DOC})",
            )
        ids = self.coffre_ids()
        if ids is None:
            return Check(SKIP, "pairing", "no coffre user: nobody to write the broker's users")
        uid, gids = ids
        blocked: list[str] = []
        fixes: list[str] = []
        regroup: list[str] = []  # given the coffre group back, as share_with_hub gives it
        try:
            top = folder.stat()
        except FileNotFoundError:
            return Check(
                FAIL,
                "pairing",
                f"no {folder} ([pairing] broker_dir in {self.toml})",
                "sudo coffre broker-config ... --out /etc/mosquitto/coffre --apply "
                "(re-run provisioning)",
            )
        if not may(top, uid, gids, 0o1):
            blocked.append(f"{folder} ({self.owner(top)} {top.st_mode & 0o777:04o})")
            fixes.append(f"sudo chmod o+x {folder}")
        from firmware.hub.brokerconf import CREDENTIALS, HUB_WRITES

        for name, mode in HUB_WRITES:
            path = folder / name
            try:
                info = path.lstat()
            except FileNotFoundError:
                blocked.append(f"{name} (missing)")
                if name == CREDENTIALS:
                    fixes.append(f"sudo install -d -m {mode:04o} -g coffre {path}")
                else:  # the broker's users and rules: only broker-config knows them all
                    fixes.append("re-run provisioning (coffre broker-config ... --apply)")
                continue
            if stat.S_ISLNK(info.st_mode):  # a chmod or chgrp on it would reach its target
                blocked.append(f"{name} (a link)")
                fixes.append(self.unlink_fix(path))
                continue
            need = 0o3 if name == CREDENTIALS else 0o2
            if not may(info, uid, gids, need):
                blocked.append(f"{name} ({self.owner(info)} {info.st_mode & 0o777:04o})")
                regroup.append(str(path))
                fixes.append(f"sudo chmod {mode:04o} {path}")
        if regroup:
            fixes.insert(0, f"sudo chgrp coffre {' '.join(regroup)}")
        if blocked:
            return Check(
                FAIL,
                "pairing",
                f"the hub's user cannot write {', '.join(blocked)} in {folder}: "
                "no station can pair",
                " && ".join(fixes),
            )
        return Check(
            PASS, "pairing", f"the hub's user may write passwd, acl, credentials/ in {folder}"
        )

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
        try:
            devices = self.open_devices() if self.open_devices else _open_real()
        except Exception as exc:  # the drivers' own errors (lgpio, spidev) are not ours
            return Check(
                FAIL,
                "chips",
                str(exc) or type(exc).__name__,
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
        except (ConnectionResetError, ConnectionAbortedError) as exc:
            # It took the connection, then threw it away: something holds the port.
            yield self.not_coffre(config, tls_failure(exc, self.timeout))
            return
        except OSError as exc:
            yield self.unreached(config, exc)
            return
        if not config.tls_ca:
            sock.close()
            # Only an MQTT answer tells coffre's broker from whatever else took the port.
            login = self.login(config)
            if login.name == "broker":
                yield login
                return
            yield Check(PASS, "broker", f"{where} answers MQTT")
            yield Check(SKIP, "certificate", "no ca_file: plain MQTT, nothing to check")
            yield login
            return
        from firmware.link.mqtt import classify_failure
        from firmware.link.tls import client_context

        try:
            with client_context(config.tls_ca).wrap_socket(
                sock, server_hostname=config.host
            ) as tls:
                tls.getpeercert()
        except ssl.SSLCertVerificationError as exc:
            state = classify_failure(exc, config.host, config.port)
            issuer, names = peer_certificate(config.host, config.port, self.timeout)
            if issuer is not None and issuer.get("organizationName") != COFFRE_ORG:
                who = issuer.get("commonName") or issuer.get("organizationName") or "nobody"
                yield self.not_coffre(config, f"a TLS server whose certificate is {who}'s")
                return
            yield Check(PASS, "broker", f"{where} answers TLS")
            yield self.certificate(config, state.state, exc, names)
            return
        except (ssl.SSLError, OSError) as exc:
            sock.close()
            yield self.not_coffre(config, tls_failure(exc, self.timeout))
            return
        yield Check(PASS, "broker", f"{where} answers TLS")
        yield Check(PASS, "certificate", f"from the table's CA, names {config.host}")
        yield self.login(config)

    def unreached(self, config: Any, exc: OSError) -> Check:
        """Nothing answered at ``host:port``: which of host, port and broker to fix."""
        host, port = config.host, config.port
        where = f"{host}:{port}"
        hub = "the hub's name or address" if self.role == "station" else "127.0.0.1"
        set_host = f"set [broker] host in {self.toml} to {hub} (it tried {host})"
        start = "sudo systemctl start coffre-broker"
        if isinstance(exc, socket.gaierror):
            return Check(FAIL, "broker", f"cannot resolve {host}: {exc.strerror}", set_host)
        if not isinstance(exc, ConnectionRefusedError):
            reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
            detail = f"cannot reach {where}: {reason}"
            if self.role == "station":
                return Check(FAIL, "broker", detail, f"{set_host}, with the hub on this network")
            return Check(FAIL, "broker", detail, set_host)
        detail = f"nothing listens on {where}"
        from firmware.link.mqtt import is_loopback

        here = is_loopback(host)
        if self.role == "station" and here and not self.path("/etc/coffre/hub.toml").is_file():
            # The broker runs on the hub, never on a station.
            return Check(FAIL, "broker", f"{detail}: {host} is this station", set_host)
        if self._active("mosquitto"):
            detail += " (the distribution's mosquitto runs, but coffre's broker is coffre-broker)"
        if not here:
            return Check(
                FAIL,
                "broker",
                detail,
                f"on the hub: {start} (if {host} is not the hub: {set_host})",
            )
        from firmware.hub.brokerconf import BROKER_CONF, listener_ports

        ports = listener_ports(self.broker_dir() / BROKER_CONF)
        if ports and port not in ports:
            said = ", ".join(str(p) for p in ports)
            return Check(
                FAIL,
                "broker",
                f"{detail}: coffre-broker listens on {said}",
                f"set [broker] port = {ports[0]} in {self.toml}",
            )
        if self._active("coffre-broker"):
            return Check(
                FAIL,
                "broker",
                f"{detail}, though coffre-broker runs",
                "see why: sudo journalctl -u coffre-broker -n 20",
            )
        return Check(FAIL, "broker", detail, start)

    def not_coffre(self, config: Any, reason: str) -> Check:
        """Something answers on the broker's port but is not coffre's broker."""
        host, port = config.host, config.port
        detail = f"something that is not coffre's broker answers on {host}:{port} ({reason})"
        holder = f"sudo ss -ltnp 'sport = :{port}'"
        if self.role == "station":
            return Check(
                FAIL,
                "broker",
                detail,
                f"check [broker] host and port in {self.toml}; if {host} is the hub, see "
                f"what holds the port there: {holder}",
            )
        return Check(
            FAIL,
            "broker",
            detail,
            f"see what holds the port: {holder}; stop it, or give coffre-broker another "
            f"port (broker-config --port) and set it in {self.toml}",
        )

    def certificate(
        self, config: Any, state: str, exc: ssl.SSLCertVerificationError, names: list[str]
    ) -> Check:
        """The broker's certificate (from a coffre CA) failed the check: a name it lacks,
        dates this clock does not reach, or another table's CA."""
        host, port, ca = config.host, config.port, config.tls_ca
        if state == "wrong-name":
            said = f" (it names {', '.join(names)})" if names else ""
            return Check(
                FAIL,
                "certificate",
                f"the broker's certificate, from the table's CA, does not name {host}{said}",
                f"set [broker] host in {self.toml} to a name it has, or on the hub add it: "
                f"coffre broker-config ... --hostname {host} --apply, then sudo systemctl "
                "restart coffre-broker (ca.crt stays the same)",
            )
        if exc.verify_code in CERT_DATES:
            now = datetime.datetime.now(datetime.UTC)
            return Check(
                FAIL,
                "certificate",
                f"the broker's certificate {exc.verify_message} "
                f"(this Pi's clock says {now:%Y-%m-%d %H:%M} UTC)",
                "set the clock (sudo timedatectl set-ntp true); if it is right, renew the "
                "certificate on the hub: re-run provisioning (coffre broker-config ... --apply)",
            )
        detail = f"the broker at {host}:{port} has a certificate from another table's CA than {ca}"
        if self.role == "station":
            return Check(
                FAIL, "certificate", detail, self.pair_again(self.broker_key("password_file"), ca)
            )
        own = self.broker_dir() / "ca.crt"
        return Check(
            FAIL,
            "certificate",
            detail,
            f"set [broker] ca_file in {self.toml} to the broker's own {own}"
            if Path(ca) != own
            else "re-run provisioning: it signs the broker's certificate with this CA again",
        )

    def login(self, config: Any) -> Check:
        from firmware.link.mqtt import Client, LinkState

        settled = threading.Event()

        def on_state(state: LinkState) -> None:
            if state.state != "connecting":
                settled.set()

        # The client's own log lines are for a service's journal: here the line below says it.
        client = Client(config, f"coffre-doctor-{os.getpid()}", [], on_state=on_state, quiet=True)
        with _hushed(logging.getLogger("firmware.link.mqtt")):
            client.start()
            try:
                settled.wait(self.timeout * 2)
                state = client.state
                if state.ok and client.wait_connected(self.timeout):
                    return Check(PASS, "login", f"user {config.username} accepted")
            finally:
                client.stop()
        if state.state == "wrong-password":
            return Check(FAIL, "login", state.detail, self.password_fix(config))
        if state.text == "Broker refused us":  # a CONNACK refusal other than the password
            return Check(
                FAIL,
                "login",
                state.detail,
                "see why in the broker's journal: sudo journalctl -u coffre-broker -n 20 "
                "(on the hub)",
            )
        # No CONNACK at all: what took the TCP connection does not speak MQTT.
        reason = state.detail if state.state != "connecting" else ""
        return self.not_coffre(config, reason or f"no MQTT answer in {self.timeout * 2:g} s")

    def password_fix(self, config: Any) -> str:
        password_file = self.broker_key("password_file")
        if password_file is None:
            return f"set [broker] password in {self.toml} to user {config.username}'s"
        if self.role == "station":
            return self.pair_again(password_file)
        kept = self.broker_dir() / "credentials" / f"{config.username}.password"
        return f"sudo install -m 0600 -o coffre -g coffre {kept} {password_file}"

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

        conf = self.broker_dir() / BROKER_CONF
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
            stale = old.read_text(errors="replace").startswith(GENERATED)
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


def unforeseen(name: str, exc: Exception) -> Check:
    """A check that met what it did not foresee, as one FAIL line with what to do."""
    if isinstance(exc, PermissionError):
        where = f" {exc.filename}" if exc.filename else ""
        return Check(
            FAIL,
            name,
            f"cannot read{where}: permission denied",
            "run it as root: sudo coffre doctor",
        )
    if isinstance(exc, UnicodeDecodeError):
        return Check(FAIL, name, "a file it reads is not UTF-8 text", "save it as UTF-8")
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        reason = exc.strerror or str(exc) or type(exc).__name__
        return Check(FAIL, name, f"{where}{reason}", f"check {exc.filename or 'the system'}")
    return Check(
        FAIL,
        name,
        f"could not be checked ({type(exc).__name__}: {exc})",
        "a bug in coffre doctor: report this line",
    )


def too_open(mode: int, most: int = SECRET_MODE) -> str:
    """Who may do what they should not, in words: 'others can read it'."""
    extra = mode & ~most & 0o777
    who = "others" if extra & 0o007 else "its group"
    bits = extra & 0o007 if extra & 0o007 else extra >> 3
    what = "read" if bits & 0o4 else "write" if bits & 0o2 else "run"
    return f"{who} can {what} it"


def may(info: os.stat_result, uid: int, gids: set[int], bits: int) -> bool:
    """Whether ``uid`` (in ``gids``) has ``bits`` (0o1 search/run, 0o2 write, 0o4 read)
    on a file, as the kernel decides: the owner's bits, else the group's, else others'."""
    mode = info.st_mode
    if info.st_uid == uid:
        return (mode >> 6) & bits == bits
    if info.st_gid in gids:
        return (mode >> 3) & bits == bits
    return mode & bits == bits


def tls_failure(exc: BaseException, timeout: float) -> str:
    """Why a TLS handshake failed, short (a reset, a close, garbage, silence)."""
    if isinstance(exc, ConnectionResetError):
        return "it reset the connection"
    if isinstance(exc, ssl.SSLEOFError | BrokenPipeError | EOFError):
        return "it closed the connection"
    if isinstance(exc, TimeoutError):
        return f"no TLS answer in {timeout:g} s"
    if isinstance(exc, ssl.SSLError):
        return f"it does not speak TLS: {exc.reason or exc}"
    return str(getattr(exc, "strerror", None) or exc or type(exc).__name__)


def peer_certificate(
    host: str, port: int, timeout: float
) -> tuple[dict[str, str] | None, list[str]]:
    """The issuer's fields and the names of the certificate at ``host:port``, read without
    checking it (what is wrong with it is known: this says whose it is); (None, [])
    when it cannot be read."""
    from firmware.link.tls import unverified_context

    try:
        with (
            socket.create_connection((host, port), timeout=timeout) as raw,
            unverified_context().wrap_socket(raw) as tls,
        ):
            der = tls.getpeercert(binary_form=True)
        if not der:
            return None, []
        with tempfile.NamedTemporaryFile("w", suffix=".pem") as pem:
            pem.write(ssl.DER_cert_to_PEM_cert(der))
            pem.flush()
            decoded = ssl._ssl._test_decode_cert(pem.name)  # type: ignore[attr-defined]
    except (OSError, ValueError, ssl.SSLError):
        return None, []
    issuer = {key: value for rdn in decoded.get("issuer", ()) for key, value in rdn}
    names = [value for _kind, value in decoded.get("subjectAltName", ())]
    return issuer, names


@contextlib.contextmanager
def _hushed(logger: logging.Logger) -> Iterator[None]:
    """The logger's warnings held back while the doctor says the same in its own line."""
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


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
