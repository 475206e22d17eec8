#!/usr/bin/env python3
"""A stand-in for systemd inside the clean-table chroots (deploy/e2e/clean-table.sh).

A debootstrap chroot has no systemd, so clean-table.sh installs this file as
``/usr/bin/systemctl`` in each machine. It runs every unit *as the unit file says*,
reading ``/etc/systemd/system/<unit>``: ``User=``, ``Group=``, ``SupplementaryGroups=``
(a group this system lacks, like a Pi's gpio/spi/i2c, is left out and said),
``Environment=``, ``StateDirectory=`` (+ ``Mode``, owned by the unit's user),
``WorkingDirectory=``, ``UMask=``, ``ExecStart=``, ``ExecReload=`` (``$MAINPID``),
``Type=notify`` (``start`` waits for ``READY=1`` on ``NOTIFY_SOCKET``), ``WatchdogSec=``
(no ``WATCHDOG=1`` in time: killed and restarted), ``Restart=``, ``RestartSec=``,
``RestartPreventExitStatus=``, ``ConditionPathExists=``, and ``.path`` units'
``PathChanged=`` (polled). It does not sandbox (``ProtectSystem=`` and the like are
ignored): what runs may write more than under systemd, never less.

Commands: ``start``, ``stop``, ``restart``, ``reload``, ``is-active [--quiet]``,
``enable [--now]``, ``disable``, ``daemon-reload``, ``status``. Each unit's output goes
to ``/var/log/e2e/<unit>.log`` (its "journal"); its state lives in ``/run/e2e/``.
Standard library only: it runs on the chroot's own python3.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

UNITS = Path("/etc/systemd/system")
RUN = Path("/run/e2e")
LOG = Path("/var/log/e2e")
START_TIMEOUT = 120.0


def parse(unit: str) -> dict[str, list[str]]:
    """Every ``Key=value`` of a unit file (all sections), values in order."""
    keys: dict[str, list[str]] = {}
    for raw in (UNITS / unit).read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;[" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        keys.setdefault(key.strip(), []).append(value.strip())
    return keys


def full(name: str) -> str:
    return name if "." in name else f"{name}.service"


def one(keys: dict[str, list[str]], key: str, default: str = "") -> str:
    return keys.get(key, [default])[-1]


def pid_of(unit: str, what: str = "pid") -> int | None:
    try:
        pid = int((RUN / f"{unit}.{what}").read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def say(text: str) -> None:
    print(f"systemctl(e2e): {text}", file=sys.stderr)


# --- the commands ------------------------------------------------------------------------


def start(unit: str) -> int:
    if pid_of(unit) is not None:
        return 0
    keys = parse(unit)
    for path in keys.get("ConditionPathExists", []):
        if not Path(path).exists():
            say(f"{unit}: condition failed, {path} does not exist: not started")
            return 0
    RUN.mkdir(parents=True, exist_ok=True)
    LOG.mkdir(parents=True, exist_ok=True)
    for leftover in ("ready", "mainpid", "failed"):
        (RUN / f"{unit}.{leftover}").unlink(missing_ok=True)
    log = (LOG / f"{unit}.log").open("ab")
    subprocess.Popen(
        [sys.executable, __file__, "--supervise", unit],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    notify = unit.endswith(".service") and one(keys, "Type", "simple") == "notify"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if (RUN / f"{unit}.failed").exists():
            say(f"{unit}: failed: {(RUN / f'{unit}.failed').read_text().strip()}")
            return 1
        if (RUN / f"{unit}.ready").exists() or (not notify and pid_of(unit) is not None):
            return 0
        time.sleep(0.1)
    say(f"{unit}: no READY=1 within {START_TIMEOUT:.0f} s")
    return 1


def stop(unit: str) -> int:
    pid = pid_of(unit)
    if pid is None:
        return 0
    os.kill(pid, signal.SIGTERM)
    for _ in range(200):
        if pid_of(unit) is None:
            return 0
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return 0


def reload(unit: str) -> int:
    main = pid_of(unit, "mainpid")
    reloads = parse(unit).get("ExecReload", [])
    if main is None or not reloads:
        say(f"{unit}: not running or cannot reload")
        return 1
    for command in reloads:
        argv = [a.replace("$MAINPID", str(main)) for a in shlex.split(command)]
        subprocess.run(argv, check=False)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--supervise"]:
        return supervise(argv[1])
    args = [a for a in argv if not a.startswith("-")]
    quiet, now = "--quiet" in argv or "-q" in argv, "--now" in argv
    if not args:
        say("which command?")
        return 1
    command, units = args[0], [full(u) for u in args[1:]]
    missing = [u for u in units if not (UNITS / u).is_file()]
    if missing and command not in ("is-active", "stop", "disable"):
        say(f"unit {missing[0]} not found")
        return 5
    status = 0
    for unit in units:
        if command == "start" or (command == "enable" and now):
            status |= start(unit)
        elif command == "stop" or (command == "disable" and now):
            status |= stop(unit)
        elif command == "restart":
            stop(unit)
            status |= start(unit)
        elif command == "reload":
            status |= reload(unit)
        elif command == "is-active":
            active = pid_of(unit) is not None
            if not quiet:
                print("active" if active else "inactive")
            status |= 0 if active else 3
        elif command == "status":
            state = "active" if pid_of(unit) else "inactive"
            print(f"{unit}: {state}, main pid {pid_of(unit, 'mainpid')}")
            with contextlib.suppress(OSError):
                print("".join((LOG / f"{unit}.log").read_text().splitlines(True)[-10:]), end="")
        elif command not in ("enable", "disable", "daemon-reload"):
            say(f"unknown command {command}")
            return 1
    return status


# --- the supervisor (one per running unit) ---------------------------------------------------


def supervise(unit: str) -> int:
    (RUN / f"{unit}.pid").write_text(str(os.getpid()))
    stopping = False

    def on_term(_sig: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_term)
    try:
        if unit.endswith(".path"):
            return watch_path(unit, lambda: stopping)
        return run_service(unit, lambda: stopping)
    finally:
        for leftover in ("pid", "mainpid", "ready"):
            (RUN / f"{unit}.{leftover}").unlink(missing_ok=True)


def watch_path(unit: str, stopping: object) -> int:
    keys = parse(unit)
    target = one(keys, "Unit", unit.removesuffix(".path") + ".service")
    paths = [Path(p) for p in keys.get("PathChanged", []) + keys.get("PathModified", [])]

    def stamp() -> list[float]:
        return [p.stat().st_mtime if p.exists() else 0.0 for p in paths]

    seen = stamp()
    (RUN / f"{unit}.ready").touch()
    while not stopping():  # type: ignore[operator]
        time.sleep(0.5)
        now = stamp()
        if now != seen:
            seen = now
            print(f"{time.strftime('%H:%M:%S')} {unit}: changed, starting {target}", flush=True)
            for command in parse(target).get("ExecStart", []):
                subprocess.run(shlex.split(command), check=False)
    return 0


def run_service(unit: str, stopping: object) -> int:
    keys = parse(unit)
    user = one(keys, "User", "root")
    pw = pwd.getpwnam(user)
    gid = grp.getgrnam(one(keys, "Group", user)).gr_gid
    groups = [gid]
    for name in " ".join(keys.get("SupplementaryGroups", [])).split():
        try:
            groups.append(grp.getgrnam(name).gr_gid)
        except KeyError:
            print(
                f"{unit}: SupplementaryGroups: no group {name} on this system: left out", flush=True
            )
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
    }
    env |= {"USER": user, "LOGNAME": user, "HOME": pw.pw_dir}
    for line in keys.get("Environment", []):
        for item in shlex.split(line):
            name, _, value = item.partition("=")
            env[name] = value
    mode = int(one(keys, "StateDirectoryMode", "0755"), 8)
    for name in " ".join(keys.get("StateDirectory", [])).split():
        folder = Path("/var/lib") / name
        folder.mkdir(parents=True, exist_ok=True)
        os.chown(folder, pw.pw_uid, gid)
        folder.chmod(mode)
        env["STATE_DIRECTORY"] = str(folder)
    workdir = one(keys, "WorkingDirectory", "/")
    umask = int(one(keys, "UMask", "0022"), 8)
    argv = shlex.split(one(keys, "ExecStart"))
    notify = one(keys, "Type", "simple") == "notify"
    watchdog = float(one(keys, "WatchdogSec", "0") or 0)
    restart = one(keys, "Restart", "no")
    restart_sec = float(one(keys, "RestartSec", "0.1") or 0.1)
    prevent = {int(s) for s in " ".join(keys.get("RestartPreventExitStatus", [])).split()}
    sock_path = RUN / f"{unit}.notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock_path.unlink(missing_ok=True)
    sock.bind(str(sock_path))
    sock_path.chmod(0o666)
    sock.settimeout(0.5)
    while True:
        env_run = dict(env, NOTIFY_SOCKET=str(sock_path))
        if watchdog:  # systemd also sets WATCHDOG_PID; the child's pid is not known yet
            env_run["WATCHDOG_USEC"] = str(int(watchdog * 1_000_000))
        child = subprocess.Popen(
            argv,
            env=env_run,
            cwd=workdir,
            user=pw.pw_uid,
            group=gid,
            extra_groups=groups,
            umask=umask,
            stdin=subprocess.DEVNULL,
        )
        (RUN / f"{unit}.mainpid").write_text(str(child.pid))
        print(
            f"{time.strftime('%H:%M:%S')} {unit}: started {shlex.join(argv)} "
            f"as {user}, pid {child.pid}",
            flush=True,
        )
        last_ping = time.monotonic()
        ready = not notify
        if ready:
            (RUN / f"{unit}.ready").touch()
        killed_by_watchdog = False
        while child.poll() is None:
            if stopping():  # type: ignore[operator]
                child.terminate()
                try:
                    child.wait(10)
                except subprocess.TimeoutExpired:
                    child.kill()
                return 0
            try:
                data = sock.recv(4096).decode(errors="replace")
            except TimeoutError:
                data = ""
            for item in data.split("\n"):
                if item == "READY=1" and not ready:
                    ready = True
                    (RUN / f"{unit}.ready").touch()
                if item == "WATCHDOG=1":
                    last_ping = time.monotonic()
            if watchdog and ready and time.monotonic() - last_ping > watchdog:
                print(
                    f"{unit}: watchdog timeout ({watchdog:g} s): killing pid {child.pid}",
                    flush=True,
                )
                child.send_signal(signal.SIGABRT)
                killed_by_watchdog = True
                child.wait()
        status = child.returncode
        print(f"{time.strftime('%H:%M:%S')} {unit}: exited with status {status}", flush=True)
        if not ready:
            (RUN / f"{unit}.failed").write_text(f"exited with status {status} before READY=1\n")
        again = restart == "always" or (
            restart == "on-failure" and (status != 0 or killed_by_watchdog)
        )
        if stopping() or not again or status in prevent:  # type: ignore[operator]
            return status
        time.sleep(restart_sec)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
