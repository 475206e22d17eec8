"""The backup the host's console asks for: a request the hub writes, a sealed archive root
makes from it (``coffre backup --requested``, run here as the test's user: it stands in for
root), restored with ``coffre restore`` and the key the hub showed on its glass."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from device.mock import MockDisplay
from firmware.cli import main
from firmware.display.sealed_backup import newest
from firmware.hub import backup_request as br
from firmware.hub.backup import BackupError, read_backup
from firmware.hub.backup_stamp import last_backup
from firmware.hub.config import load_hub
from firmware.hub.events import Tick
from firmware.hub.sealed import SealError, new_key, read_key, shown
from firmware.link.render import render_lines
from firmware.tools.host import status as host_status
from tests.support.hubrig import Clock, Rig
from tests.support.hubrig import T as T_HUB
from tests.support.pairing import Rig as PairingRig
from tests.support.pairing import T, drain, latest, rig_fixture

__all__ = ["rig_fixture"]  # the fixture "rig": a real hub on mosquitto, with a panel


def _hub(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A hub's store (with a game's row), broker folder (with a CA key), configs and an
    empty backup folder."""
    store = tmp_path / "lib" / "hub.sqlite3"
    store.parent.mkdir()
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE games (no INTEGER, name TEXT)")
        db.execute("INSERT INTO games VALUES (1, 'incognito'), (2, 'secret-identity')")
    broker = tmp_path / "broker"
    (broker / "credentials").mkdir(parents=True)
    (broker / "ca.key").write_bytes(b"-----BEGIN PRIVATE KEY-----\nsecret\n")
    (broker / "ca.key").chmod(0o600)
    (broker / "credentials" / "main.p1.password").write_text("pw1\n")
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "hub.toml").write_text(f'[store]\npath = "{store}"\n')
    backups = tmp_path / "backups"
    backups.mkdir(mode=0o750)
    return store, broker, etc, backups


def _make(store: Path, broker: Path, etc: Path, request: Path) -> int:
    return main(["backup", "--requested", str(request), "--store", str(store),
                 "--broker-dir", str(broker), "--etc", str(etc)])  # fmt: skip


def _restore(archive: Path, tmp_path: Path, key: str, *more: str) -> int:
    key_file = tmp_path / "key.txt"
    key_file.write_text(key + "\n")
    fresh = tmp_path / "fresh"
    return main(["restore", str(archive), "--key-file", str(key_file),
                 "--store", str(fresh / "hub.sqlite3"), "--broker-dir", str(fresh / "broker"),
                 "--etc", str(fresh / "etc"), *more])  # fmt: skip


def test_a_requested_backup_is_sealed_and_restores_with_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hub's request -> root's sealed archive beside it (0640, the request gone, the
    stamp says sealed) -> restore with the key as the glass showed it (lower case, with
    spaces) gives back the store's games and the CA key byte for byte. Without the key or
    from the bytes alone, nothing of the CA key shows."""
    store, broker, etc, backups = _hub(tmp_path)
    key = new_key()
    br.ask(backups, br.Request(key=key, table="main"))
    request = backups / br.REQUEST
    assert request.stat().st_mode & 0o777 == 0o600
    assert _make(store, broker, etc, request) == 0
    assert not request.exists(), "the request is taken"
    (archive,) = backups.glob("coffre-backup-*.sealed")
    assert archive.stat().st_mode & 0o777 == 0o640
    raw = archive.read_bytes()
    assert b"secret" not in raw and b"BEGIN PRIVATE KEY" not in raw and b"pw1" not in raw
    stamp = last_backup(store)
    assert stamp is not None and stamp.sealed and stamp.name == archive.name
    with pytest.raises(BackupError, match="sealed: give the key"):
        read_backup(archive)
    typed = " ".join(shown(key)).lower()
    assert {str(e["name"]) for e in read_backup(archive, read_key(typed)).files} >= {
        "store/hub.sqlite3",
        "broker/ca.key",
        "etc/hub.toml",
    }
    capsys.readouterr()
    assert _restore(archive, tmp_path, typed) == 0
    assert "restored" in capsys.readouterr().out
    fresh = tmp_path / "fresh"
    assert (fresh / "broker" / "ca.key").read_bytes() == (broker / "ca.key").read_bytes()
    with sqlite3.connect(fresh / "hub.sqlite3") as db:
        games = db.execute("SELECT no, name FROM games ORDER BY no").fetchall()
    assert games == [(1, "incognito"), (2, "secret-identity")]


def test_a_wrong_key_or_a_changed_byte_is_one_line_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, broker, etc, backups = _hub(tmp_path)
    key = new_key()
    br.ask(backups, br.Request(key=key, table="main"))
    assert _make(store, broker, etc, backups / br.REQUEST) == 0
    (archive,) = backups.glob("*.sealed")
    capsys.readouterr()
    fresh = tmp_path / "fresh"
    assert _restore(archive, tmp_path, new_key()) == 64
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "this key does not open it" in err
    assert not fresh.exists()
    good = archive.read_bytes()
    for where in (100, len(good) // 2, len(good) - 1):
        flipped = bytearray(good)
        flipped[where] ^= 0x01
        archive.write_bytes(bytes(flipped))
        assert _restore(archive, tmp_path, key) == 64
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "changed since it was sealed" in err, err
        assert not fresh.exists()
    archive.write_bytes(good[:-40])
    assert _restore(archive, tmp_path, key) == 64
    assert "cut short" in capsys.readouterr().err
    archive.write_bytes(good + b"\0")  # its last chunk, a byte longer: changed
    assert _restore(archive, tmp_path, key) == 64
    assert "changed since it was sealed" in capsys.readouterr().err
    assert _restore(archive, tmp_path, "not a key") == 64
    assert "20 letters and digits" in capsys.readouterr().err
    assert not fresh.exists()


def test_a_sealed_stream_opens_whole_at_every_size_and_only_with_its_key() -> None:
    """Chunk boundaries (empty, one byte, a chunk, a chunk and one) round-trip; the key
    typed with O for 0 and I/L for 1 still opens."""
    import io

    from firmware.hub.sealed import CHUNK, Opened, Sealer

    key = new_key()
    for size in (0, 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5):
        data = os.urandom(size)
        out = io.BytesIO()
        sealer = Sealer(out, key)
        sealer.write(data)
        sealer.close()
        assert Opened(io.BytesIO(out.getvalue()), key).read() == data
        blob = out.getvalue()
        if size > CHUNK:  # the last chunk dropped whole
            with pytest.raises(SealError, match="cut short"):
                Opened(io.BytesIO(blob[: -(size - 1) % CHUNK - 1 - 17]), key).read()
        if size == CHUNK:  # a whole final chunk, then a byte
            with pytest.raises(SealError, match="data follows its end"):
                Opened(io.BytesIO(blob + b"\0"), key).read()
    assert read_key(key.replace("0", "o").replace("1", "l")) == key
    with pytest.raises(SealError):
        read_key(key[:-1])


def test_a_link_at_the_request_is_refused_by_both_sides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hub's user owns the folder: a link it leaves at the request's name (to a file
    only root reads, say) is neither written through by the hub nor read by root, and
    root removes it (the path unit would start it again and again)."""
    store, broker, etc, backups = _hub(tmp_path)
    secret = tmp_path / "shadow"
    secret.write_text('{"key": "00000000000000000000", "table": "main"}')
    request = backups / br.REQUEST
    request.symlink_to(secret)
    with pytest.raises(OSError, match="symbolic link: refused"):
        br.ask(backups, br.Request(key=new_key(), table="main"))
    assert secret.read_text().startswith('{"key": "0000')
    assert _make(store, broker, etc, request) == 64
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "symbolic link" in err
    assert not request.is_symlink() and secret.exists()
    assert list(backups.glob("*.sealed")) == []
    # A hard link to another file, a folder, a big or a malformed request: refused too.
    for bad, why in (
        (b'{"key": "' + b"A" * 20 + b'", "table": "main", "extra": 1}', "not a backup request"),
        (b'{"key": "ABC", "table": "main"}', "not a backup request"),
        (b" " * 600, "bigger than 512"),
    ):
        request.write_bytes(bad)
        assert _make(store, broker, etc, request) == 64
        assert why in capsys.readouterr().err
        assert not request.exists()
    other = tmp_path / "other"
    other.write_text("{}")
    os.link(other, request)
    assert _make(store, broker, etc, request) == 64
    assert "hard link" in capsys.readouterr().err
    if os.geteuid() == 0:  # a request someone else owns (an id no account has): as root
        br.ask(backups, br.Request(key=new_key(), table="main"))
        os.chown(request, 40002, 40012)
        assert _make(store, broker, etc, request) == 64
        assert "not its folder owner's" in capsys.readouterr().err
        assert not request.exists()
    os.mkfifo(request)  # a fifo: refused, not waited on
    assert _make(store, broker, etc, request) == 64
    assert "not a plain file" in capsys.readouterr().err
    assert list(backups.glob("*.sealed")) == []


def test_root_keeps_the_newest_three_and_leaves_the_hub_users_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rotation: the newest three sealed archives stay; a link planted among them, named
    as an archive, is neither counted, removed nor followed, and never the newest served."""
    store, broker, etc, backups = _hub(tmp_path)
    target = tmp_path / "keep-me"
    target.write_text("mine")
    planted = backups / "coffre-backup-zzz-9999.sealed"
    planted.symlink_to(target)
    theirs = backups / "coffre-backup-hub-user.sealed"  # a plain file, not root's
    theirs.write_bytes(b"the hub user's")
    os.chown(theirs, 40002 if os.geteuid() == 0 else os.getuid(), -1)
    os.utime(theirs, (0, 0))
    names = iter(f"coffre-backup-h-{n}.sealed" for n in range(5))
    monkeypatch.setattr(br, "archive_name", lambda: next(names))
    for n in range(5):
        br.ask(backups, br.Request(key=new_key(), table="main"))
        assert _make(store, broker, etc, backups / br.REQUEST) == 0
        when = (n + 1) * 10**9  # their order, by time; the hub user's file is older
        os.utime(backups / f"coffre-backup-h-{n}.sealed", ns=(when, when))
        served = newest(backups)  # what the display would serve
        assert served is not None
        os.close(served[1])
        assert served[0] == f"coffre-backup-h-{n}.sealed"
    kept = sorted(p.name for p in backups.glob("coffre-backup-h-*.sealed"))
    assert kept == [f"coffre-backup-h-{n}.sealed" for n in (2, 3, 4)]
    assert target.read_text() == "mine" and planted.is_symlink()
    if os.geteuid() == 0:  # root removes only its own archives
        assert theirs.read_bytes() == b"the hub user's"


# --- the whole flow on a real hub and broker ----------------------------------------------


def _glass(rig: PairingRig) -> Image.Image:
    """What the hub display shows once the hub has handled everything so far."""
    time.sleep(0.3)
    painter = rig.hub.out.painter
    assert painter is not None and painter.wait_idle(5)
    display = rig.panel.display
    assert isinstance(display, MockDisplay) and display.last is not None
    return display.last.copy()


def _wait(what: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.05)


def test_the_host_asks_root_makes_the_glass_shows_the_key_and_no_topic_carries_it(
    rig: PairingRig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``backup`` from a host user: the hub writes the request, root (here: this user) makes
    the sealed archive, the hub's status says so at once and the panel's glass shows the key
    until ok. A host user reading every topic of the table (host/screen, public,
    hub/status, host/ack) never sees the key in any form; a second ask is refused for
    ten minutes; the key restores the store the hub was running."""
    backups = tmp_path / "backups"
    backups.mkdir()
    spy = rig.watch("coffre/#")  # read at the end: everything a host user heard
    statuses = rig.watch(T.hub_status)
    said = rig.host("backup")
    assert not said.ok and said.message == "No backup folder: see [backup] in hub.toml"
    rig.hub.out.backups.folder = backups  # as hub.toml's [backup] dir
    said = rig.host("backup")
    assert said.ok and said.message == "Backup asked: the key shows on the hub"
    request = backups / br.REQUEST
    assert request.is_file()
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "hub.toml").write_text("[store]\npath = 'hub.sqlite3'\n")
    assert rig.broker.conf_dir is not None
    args = ["--store", str(rig.hub.store.path), "--broker-dir", str(rig.broker.conf_dir)]
    assert main(["backup", "--requested", str(request), *args, "--etc", str(etc)]) == 0
    latest(statuses, T.hub_status, '"sealed":true')
    capsys.readouterr()
    assert host_status(rig.broker.config("host"), T.table, 10) == 0  # coffre host status
    (archive,) = backups.glob("*.sealed")
    size = archive.stat().st_size
    said = f"({archive.name}, {size} bytes, sealed: its key was on the hub's glass)\n"
    assert said in capsys.readouterr().out
    asked = rig.hub.out.backups.asked
    assert asked is not None
    key = asked.key
    on_glass = render_lines("Backup key", [*shown(key), "ok: written down"])
    _wait(lambda: _glass(rig).tobytes() == on_glass.tobytes())
    refused = rig.host("backup")
    assert not refused.ok and refused.message == "Next backup in 10 min"
    assert refused.msgid == "Next backup in {minutes} min"
    rig.panel.press("ok")  # on the glass for less than 1.5 s? then held; again later
    time.sleep(1.6)
    rig.panel.press("ok")
    _wait(lambda: _glass(rig).tobytes() != on_glass.tobytes())
    assert rig.hub.out.backups.asked is None, "forgotten once written down"
    time.sleep(0.3)
    heard = b"".join(m.topic.encode() + m.payload for m in drain(spy))
    assert b"sealed" in heard and b"Backup asked" in heard
    for form in (key, *shown(key), " ".join(shown(key)), key.lower()):
        assert form.encode() not in heard, f"{form} went over the broker"
    assert _restore(archive, tmp_path, " ".join(shown(key))) == 0
    with sqlite3.connect(tmp_path / "fresh" / "hub.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0


def test_asks_are_limited_resent_ones_answered_once_and_a_silent_root_forgets_the_key(
    tmp_path: Path,
) -> None:
    """The hub's side, its clock moved by hand: one ask per ten minutes whoever asks (a
    console session cannot fill the card), a command sent again with its id answered again
    and not asked twice, and a key forgotten when root never makes the backup (the glass
    says it failed). hub.toml's [backup] dir names the folder."""
    hub_toml = tmp_path / "hub.toml"
    hub_toml.write_text('[backup]\ndir = "/var/lib/coffre/backups"\n[[table]]\nname = "t"\n'
                        'stations = ["p1", "p2", "p3"]\n')  # fmt: skip
    assert load_hub(hub_toml).backup_dir == Path("/var/lib/coffre/backups")
    clock = Clock()
    rig = Rig(tmp_path, clock=clock)
    rig.connected()
    backups = tmp_path / "backups"
    backups.mkdir()
    rig.hub.out.backups.folder = backups

    def ask(cmd_id: str) -> dict[str, object]:
        rig.deliver(T_HUB.host_command, {"cmd": "backup", "id": cmd_id})
        answer: dict[str, object] = rig.last(T_HUB.host_ack)
        assert answer["id"] == cmd_id
        return answer

    assert ask("a")["message"] == "Backup asked: the key shows on the hub"
    first = (backups / br.REQUEST).read_bytes()
    asked = rig.hub.out.backups.asked
    assert asked is not None and asked.key.encode() in first
    assert asked.key not in repr(asked)
    assert ask("a")["ok"] is True, "the same command again: the same answer"
    assert (backups / br.REQUEST).read_bytes() == first, "and no second request"
    clock.now += 9 * 60
    later = ask("b")
    assert later["ok"] is False and later["message"] == "Next backup in 1 min"
    assert (backups / br.REQUEST).read_bytes() == first
    clock.now += 61  # ten minutes on, root never made it: the key is gone
    rig.hub.submit(Tick())
    assert rig.hub.out.backups.asked is None
    assert rig.last(T_HUB.host_screen)["title"] == "Backup failed"
    (backups / br.REQUEST).unlink()
    assert ask("c")["ok"] is True
    assert (backups / br.REQUEST).read_bytes() != first, "a new key"
    rig.close()
