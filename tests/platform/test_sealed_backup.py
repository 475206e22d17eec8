"""The backup the host's console asks for: a request the hub writes, a sealed archive root
makes from it (``coffre backup --requested``, run here as the test's user: it stands in for
root), restored with ``coffre restore`` and the key the hub showed on its glass."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.hub import backup_request as br
from firmware.hub.backup import BackupError, read_backup
from firmware.hub.backup_stamp import last_backup
from firmware.hub.sealed import SealError, new_key, read_key, shown


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
    names = iter(f"coffre-backup-h-{n}.sealed" for n in range(5))
    monkeypatch.setattr(br, "archive_name", lambda: next(names))
    for n in range(5):
        br.ask(backups, br.Request(key=new_key(), table="main"))
        assert _make(store, broker, etc, backups / br.REQUEST) == 0
        os.utime(backups / f"coffre-backup-h-{n}.sealed", ns=(n * 10**9, n * 10**9))
        newest = br.newest(backups)
        assert newest is not None
        os.close(newest[1])
        assert newest[0] == f"coffre-backup-h-{n}.sealed"
    kept = sorted(p.name for p in backups.glob("*.sealed") if not p.is_symlink())
    assert kept == [f"coffre-backup-h-{n}.sealed" for n in (2, 3, 4)]
    assert target.read_text() == "mine" and planted.is_symlink()
