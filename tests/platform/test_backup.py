"""coffre backup / restore: a hub lost mid-game comes back from one file, and plays on."""

from __future__ import annotations

import json
import os
import tarfile
import time
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.hub.backup import BackupError, read_backup
from firmware.hub.backup_stamp import last_backup, record_backup, stamp_path
from firmware.hub.brokerconf import HOST_USER
from firmware.hub.events import Tick
from firmware.tools.host import status as host_status
from firmware.tools.simtable import TABLE
from tests.support.hubrig import Rig, T
from tests.support.tables import TableFactory, director, expected_scores


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).parts[0] != "data"
    }


def test_a_game_resumes_from_a_backup_restored_on_a_fresh_hub(
    make_table: TableFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Back up mid-game, lose the store, restore into fresh folders: the CA, passwords and
    configs come back byte for byte (stations stay paired) and the game plays to the end."""
    sim = make_table(3)
    bots = director(sim, seed=4, stop_at=(1, "vote"))
    bots.start_game(3)
    bots.play()
    sim.stop_hub()
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "hub.toml").write_text(sim.hub_toml())
    (etc / "hub.password").write_text("pw\n")
    (etc / "hub.password").chmod(0o600)
    archive = tmp_path / "hub.tar.gz"
    broker = sim.broker.conf_dir
    assert broker is not None
    args = ["--store", str(sim.store_path), "--broker-dir", str(broker), "--etc", str(etc)]
    assert main(["backup", "--out", str(archive), *args]) == 0
    assert archive.stat().st_mode & 0o777 == 0o600
    names = {str(e["name"]) for e in read_backup(archive).files}
    assert {"store/hub.sqlite3", "broker/ca.crt", "broker/passwd", "etc/hub.toml"} <= names
    # The SD card is lost: no store any more.
    for suffix in ("", "-wal", "-shm"):
        Path(f"{sim.store_path}{suffix}").unlink(missing_ok=True)
    fresh = tmp_path / "fresh"
    restore = ["restore", str(archive), "--store", str(sim.store_path)]
    restore += ["--broker-dir", str(fresh / "broker"), "--etc", str(fresh / "etc")]
    assert main(restore) == 0
    assert "restored" in capsys.readouterr().out
    assert _tree(fresh / "broker") == _tree(broker), "same CA, same users and passwords"
    assert _tree(fresh / "etc") == _tree(etc)
    assert (fresh / "etc" / "hub.password").stat().st_mode & 0o777 == 0o600
    assert main(restore) != 0, "an existing store is not overwritten without --force"
    sim.start_hub()
    bots.stop_at = None
    final = bots.play()
    assert final["over"]
    assert final["scores"] == expected_scores(bots.record, 3)


def test_a_damaged_backup_is_refused(tmp_path: Path) -> None:
    """A file whose checksum does not match its manifest is refused, naming the file."""
    store = tmp_path / "hub.sqlite3"
    import sqlite3

    sqlite3.connect(store).execute("CREATE TABLE t (x)").connection.commit()
    archive = tmp_path / "b.tar.gz"
    assert main(["backup", "--out", str(archive), "--store", str(store), "--etc", "/nonexistent",
                 "--broker-dir", "/nonexistent"]) == 0  # fmt: skip
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(archive) as src, tarfile.open(bad, "w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member)
            assert data is not None
            body = data.read()
            if member.name.startswith("store/"):
                body = body[:-1] + bytes([body[-1] ^ 1])
            member.size = len(body)
            import io

            dst.addfile(member, io.BytesIO(body))
    with pytest.raises(BackupError, match=r"store/hub\.sqlite3 is damaged"):
        read_backup(bad)


def test_the_hub_tells_when_the_last_backup_was_made(
    make_table: TableFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``coffre backup`` leaves a stamp beside the store (a time, the archive's name and
    size; 0644, the hub's user reads it) and the hub's status carries it: at the next
    publish, and from its start."""
    sim = make_table(3)
    sim.watch.wait_hub(lambda s: "backup" in s and s["backup"] is None, "no backup yet")
    assert host_status(sim.broker.config(HOST_USER), TABLE, 10) == 0
    assert "  last backup: none yet\n" in capsys.readouterr().out
    archive = tmp_path / "usb" / "coffre-hub.tar.gz"
    archive.parent.mkdir()
    before = int(time.time())
    args = ["--store", str(sim.store_path), "--broker-dir", "/nonexistent", "--etc", "/nonexistent"]
    assert main(["backup", "--out", str(archive), *args]) == 0
    assert "not recorded" not in capsys.readouterr().err
    stamp = stamp_path(sim.store_path)
    assert stamp.parent == sim.store_path.parent
    assert stamp.stat().st_mode & 0o777 == 0o644
    assert stamp.stat().st_uid == os.getuid()
    said = json.loads(stamp.read_text())
    assert said["name"] == "coffre-hub.tar.gz", "the name only, never the folder"
    assert said["size"] == archive.stat().st_size
    assert before <= said["at"] <= time.time()
    sim.host({"cmd": "sound", "sound": "off"})  # anything the hub publishes again
    sim.watch.wait_hub(lambda s: s.get("backup") == said, "the backup in the hub's status")
    assert archive.read_bytes() not in json.dumps(sim.watch.hub_status).encode()
    assert host_status(sim.broker.config(HOST_USER), TABLE, 10) == 0
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(said["at"]))
    size = archive.stat().st_size
    assert f"  last backup: {when} (coffre-hub.tar.gz, {size} bytes)\n" in capsys.readouterr().out
    sim.stop_hub()
    sim.start_hub()
    sim.watch.wait_hub(lambda s: s.get("backup") == said, "the backup, after a restart")


def test_a_link_at_the_stamp_is_refused_never_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hub's user may write in the store's folder: a link it leaves where the stamp
    goes (to /etc/shadow, say) is refused in one line, its target untouched, and the
    backup is made all the same; the hub does not read a stamp through a link either."""
    store = tmp_path / "hub.sqlite3"
    import sqlite3

    sqlite3.connect(store).execute("CREATE TABLE t (x)").connection.commit()
    shadow = tmp_path / "shadow"
    shadow.write_bytes(b"root:$6$secret\n")
    shadow.chmod(0o600)
    stamp_path(store).symlink_to(shadow)
    archive = tmp_path / "b.tar.gz"
    assert main(["backup", "--out", str(archive), "--store", str(store), "--etc", "/nonexistent",
                 "--broker-dir", "/nonexistent"]) == 0  # fmt: skip
    assert read_backup(archive).parts == {"store": str(store)}
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "symbolic link: refused" in err
    assert shadow.read_bytes() == b"root:$6$secret\n"
    assert shadow.stat().st_mode & 0o777 == 0o600
    assert stamp_path(store).is_symlink()
    shadow.write_text(json.dumps({"at": 1, "name": "planted.tar.gz", "size": 1}))
    assert last_backup(store) is None


def test_a_backup_made_while_the_hub_idles_reaches_its_status_at_the_next_tick(
    tmp_path: Path,
) -> None:
    """Nothing moves at the table: the hub's next tick (a pairing's expiry, a countdown)
    or host command (a console's report of its phones) looks at the stamp and publishes
    the table's status again."""
    rig = Rig(tmp_path)
    rig.connected()
    assert rig.last(T.hub_status)["backup"] is None
    archive = tmp_path / "coffre-hub.tar.gz"
    archive.write_bytes(b"x" * 1234)
    record_backup(archive, rig.hub.store.path, at=1_800_000_000)
    rig.hub.submit(Tick())
    said = rig.last(T.hub_status)["backup"]
    assert said == {"at": 1_800_000_000, "name": "coffre-hub.tar.gz", "size": 1234}
    statuses = len([t for t, _p, _r in rig.sent if t == T.hub_status])
    rig.hub.submit(Tick())
    assert len([t for t, _p, _r in rig.sent if t == T.hub_status]) == statuses, "once"
    # A host command that redraws only the host screen (as a console's report does) looks too.
    record_backup(archive, rig.hub.store.path, at=1_800_000_600)
    rig.host("console-sessions")
    assert rig.last(T.hub_status)["backup"]["at"] == 1_800_000_600
    rig.close()


def test_the_stamp_is_owned_as_the_store_is_so_the_hub_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root writes the stamp for the hub's user: 0644, owner and group the store's (as
    root: ids no other account has, real chowns; not as root, this user's own)."""
    store = tmp_path / "hub.sqlite3"
    store.write_bytes(b"")
    ids = (40002, 40012) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(store, *ids)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    archive = tmp_path / "b.tar.gz"
    archive.write_bytes(b"x")
    record_backup(archive, store)
    info = stamp_path(store).stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (*ids, 0o644)
    assert last_backup(store) is not None
