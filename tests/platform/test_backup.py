"""coffre backup / restore: a hub lost mid-game comes back from one file, and plays on."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.hub.backup import BackupError, read_backup
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
