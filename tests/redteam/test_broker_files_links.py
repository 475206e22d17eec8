"""Red team: links the hub's user plants in broker-config's folder, for root to follow.

``coffre broker-config`` (provisioning) and ``sudo coffre host`` run as root on
``/etc/mosquitto/coffre``, where the hub's user (``coffre``) writes too: ``credentials/``
is its group's (pairing adds a station's password there), and so are ``passwd`` and
``acl``. It can leave ``credentials/main.p1.password -> /etc/shadow`` there, or a link on
any file root writes or reads. Here a file in the test's folder stands for /etc/shadow:
whatever root is asked to do, the stand-in keeps its bytes, mode, owner and ctime (a chown
or chmod to the same value still moves the ctime), the command says one line naming the
link, and nothing in the folder changes.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.cli import EX_CONFIG, main
from firmware.hub import brokerconf
from firmware.hub.brokerconf import read_credentials, repair_modes, share_with_hub
from firmware.hub.certs import write_private
from firmware.link.config import ConfigError
from firmware.tools.brokers import free_port

ROOT = Path(__file__).resolve().parents[2]
SHADOW = b"root:$y$j9T$stand-in-for-a-hash$:19000:0:99999:7:::\n"
FIRST = ("--table", "main", "--stations", "p1,p2", "--hostname", "localhost")
#: A re-run that writes every file: a new station, a new name on the certificate.
AGAIN = ("--table", "main", "--stations", "p1,p2,p3", "--hostname", "localhost",
         "--hostname", "coffre-hub")  # fmt: skip

Look = tuple[bytes, int, int, int, int]


def look(path: Path) -> Look:
    """What a write, a chmod or a chown through a link would change."""
    info = path.stat()
    return path.read_bytes(), stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, info.st_ctime_ns


def snapshot(folder: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every name in the folder: a file's bytes, a link's target, and its mode."""
    seen: dict[str, tuple[str, bytes | str, int]] = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        name = str(path.relative_to(folder))
        if stat.S_ISLNK(info.st_mode):
            seen[name] = ("link", os.readlink(path), 0)
        elif stat.S_ISREG(info.st_mode):
            seen[name] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
        else:
            seen[name] = ("folder", "", stat.S_IMODE(info.st_mode))
    return seen


def broker_config(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``coffre broker-config --out out args`` in a process of its own, as the test runs."""
    command = [sys.executable, "-m", "firmware.cli", "broker-config", "--out", str(out), *args]
    return subprocess.run(command, capture_output=True, cwd=ROOT, text=True, check=False)


@pytest.fixture(scope="module")
def provisioned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as provisioning leaves it (TLS, two stations), copied by each test."""
    out = tmp_path_factory.mktemp("provisioned") / "coffre"
    done = broker_config(out, *FIRST)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def folder(provisioned: Path, tmp_path: Path) -> Path:
    out = tmp_path / "coffre"
    shutil.copytree(provisioned, out, symlinks=True)
    return out


@pytest.fixture
def shadow(tmp_path: Path) -> Path:
    """The stand-in for /etc/shadow: root's, 0640, a line like a real one."""
    path = tmp_path / "shadow"
    path.write_bytes(SHADOW)
    path.chmod(0o640)
    return path


def plant(link: Path, target: Path) -> None:
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(target)


def one_line(stderr: str, *words: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "planted",
    [
        "credentials/main.p1.password",  # a user's password, read and kept
        "credentials/main.p3.password",  # the user this run adds
        "passwd",
        "acl",
        "venue.toml",
        "mosquitto.conf",
        "ca.key",
        "ca.crt",
        "broker.crt",
        "broker.key",
    ],
)
def test_broker_config_refuses_a_planted_link(folder: Path, shadow: Path, planted: str) -> None:
    """A link where broker-config reads or writes a file: one line naming it, exit 78;
    the file it points at keeps its bytes, mode, owner and ctime; nothing changes."""
    link = folder / planted
    plant(link, shadow)
    before, files = look(shadow), snapshot(folder)
    done = broker_config(folder, *AGAIN)
    assert look(shadow) == before, "written, chmod-ed or chown-ed through the link"
    assert done.returncode == EX_CONFIG, done.stdout + done.stderr
    one_line(done.stderr, str(link), "symbolic link")
    assert done.stdout == ""
    assert snapshot(folder) == files, "a refused run wrote something"


def test_broker_config_refuses_credentials_that_is_a_link(folder: Path, tmp_path: Path) -> None:
    """credentials/ itself a link to another folder: neither read nor written into."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "main.p1.password").write_bytes(SHADOW)
    shutil.rmtree(folder / "credentials")
    (folder / "credentials").symlink_to(elsewhere)
    before, files = snapshot(elsewhere), snapshot(folder)
    done = broker_config(folder, *AGAIN)
    assert snapshot(elsewhere) == before, "written into through the link"
    assert done.returncode == EX_CONFIG, done.stdout + done.stderr
    one_line(done.stderr, str(folder / "credentials"), "symbolic link")
    assert snapshot(folder) == files


def test_broker_config_refuses_a_second_name_of_another_file(folder: Path, shadow: Path) -> None:
    """A hard link in credentials/ (a machine without fs.protected_hardlinks lets any user
    make one to /etc/shadow): never read as a password, never given mode 0600."""
    link = folder / "credentials" / "main.p2.password"
    link.unlink()
    os.link(shadow, link)
    before = look(shadow)
    done = broker_config(folder, *AGAIN)
    assert look(shadow)[:4] == before[:4]  # the link itself moved its ctime
    assert done.returncode == EX_CONFIG, done.stdout + done.stderr
    one_line(done.stderr, str(link), "hard link")


# --- the functions, one at a time ------------------------------------------------------


def test_write_private_refuses_a_link_and_replaces_a_file(tmp_path: Path, shadow: Path) -> None:
    """write_private never writes through a link; a file that is there is replaced by a
    new one, 0600 from its first byte (what pairing and broker-config rely on)."""
    link = tmp_path / "main.p1.password"
    link.symlink_to(shadow)
    before = look(shadow)
    with pytest.raises(OSError, match="symbolic link"):
        write_private(link, b"attacker-chosen\n")
    assert look(shadow) == before
    assert link.is_symlink()
    plain = tmp_path / "hub.password"
    plain.write_bytes(b"old\n")
    plain.chmod(0o644)
    inode = plain.stat().st_ino
    write_private(plain, b"new\n")
    assert (plain.read_bytes(), stat.S_IMODE(plain.stat().st_mode)) == (b"new\n", 0o600)
    assert plain.stat().st_ino != inode, "written in place, not made new and renamed"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_give_key_to_mosquitto_never_chowns_through_a_link(
    tmp_path: Path, shadow: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key handed to mosquitto's user is chowned on its own descriptor: a link there
    is refused and its target keeps its owner (and its ctime: no chown at all)."""
    import pwd

    monkeypatch.setattr(brokerconf.os, "geteuid", lambda: 0)  # as root (chown to ourself)
    link = tmp_path / "broker.key"
    link.symlink_to(shadow)
    before = look(shadow)
    me = pwd.getpwuid(os.getuid()).pw_name
    with pytest.raises(OSError, match="symbolic link"):
        brokerconf.give_key_to_mosquitto(link, me)
    assert look(shadow) == before


@pytest.mark.parametrize("planted", ["passwd", "acl"])
def test_share_with_hub_never_chmods_through_a_link(
    folder: Path, shadow: Path, planted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handing passwd and acl to the hub's group: a link there is refused, its target
    keeps its group and mode (0640, not 0660)."""
    import grp

    monkeypatch.setattr(brokerconf.os, "geteuid", lambda: 0)
    plant(folder / planted, shadow)
    before = look(shadow)
    with pytest.raises(OSError, match="symbolic link"):
        share_with_hub(folder, grp.getgrgid(os.getgid()).gr_name)
    assert look(shadow) == before


def test_repair_modes_never_chmods_a_file_swapped_for_a_link(
    folder: Path, shadow: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A password file swapped for a link between the look and the chmod (the look made
    to miss it here): the mode is set on a descriptor opened without following a link,
    so the target keeps 0640 and the link is left alone."""
    link = folder / "credentials" / "main.p1.password"
    plant(link, shadow)
    monkeypatch.setattr(Path, "is_symlink", lambda self: False)
    before = look(shadow)
    repair_modes(folder)
    assert look(shadow) == before
    assert os.path.islink(link)


def test_read_credentials_never_reads_through_a_link(folder: Path, shadow: Path) -> None:
    """Root reading the passwords back never reads a file the hub's user pointed at."""
    link = folder / "credentials" / "main.p1.password"
    plant(link, shadow)
    with pytest.raises(ConfigError, match="symbolic link") as refused:
        read_credentials(folder)
    assert str(link) in str(refused.value) and "stand-in" not in str(refused.value)


@pytest.mark.parametrize("planted", ["credentials/host-main.password", "ca.crt"])
def test_coffre_host_never_reads_through_a_link(
    folder: Path, shadow: Path, planted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sudo coffre host`` takes the host's password and ca.crt from broker-config's
    folder: a link there is one line and no connection (the stand-in's line never
    leaves as a password)."""
    link = folder / planted
    plant(link, shadow)
    before = look(shadow)
    port = str(free_port())
    args = ["host", "--broker-dir", str(folder), "--port", port, "--timeout", "1"]
    status = main([*args, "--table", "main", "next"])
    err = capsys.readouterr().err
    assert status == EX_CONFIG, err
    one_line(err, str(link), "symbolic link")
    assert look(shadow) == before


def test_provisioning_hands_over_no_file_the_hub_s_user_linked(folder: Path, shadow: Path) -> None:
    """Provisioning copies hub.password and spectator.password to /etc/coffre for their
    services, as root, right after broker-config: a link swapped in meanwhile is refused
    (install(1) would copy the stand-in to a file the hub's user owns), a real one lands
    0600 and its owner's."""
    import pwd

    me = pwd.getpwuid(os.getuid()).pw_name
    etc = folder.parent / "etc"
    etc.mkdir()
    brokerconf.hand_over(folder, "spectator", etc / "spectator.password", me)
    copied = etc / "spectator.password"
    assert copied.read_text() == (folder / "credentials" / "spectator.password").read_text()
    assert (stat.S_IMODE(copied.stat().st_mode), copied.stat().st_uid) == (0o600, os.getuid())
    plant(folder / "credentials" / "hub.password", shadow)
    with pytest.raises(ConfigError, match="symbolic link"):
        brokerconf.hand_over(folder, "hub", etc / "hub.password", me)
    assert not (etc / "hub.password").exists()
    # The script's own copy, run on the planted link.
    script = (ROOT / "deploy" / "provision-pi.sh").read_text()
    found = re.search(r"python -c '(.*?)' /etc/mosquitto/coffre \"\$user\"", script, re.S)
    assert found is not None, "provisioning copies the services' passwords another way"
    command = [sys.executable, "-c", found.group(1), str(folder), "hub", str(etc / "hub.password")]
    done = subprocess.run(command, capture_output=True, cwd=ROOT, text=True, check=False)
    assert done.returncode == 1
    one_line(done.stderr, "coffre: ", "symbolic link")
    assert not (etc / "hub.password").exists()
