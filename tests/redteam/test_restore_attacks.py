"""Red team, ``coffre restore`` run as root on a file from elsewhere (docs/backup.md).

The archive may be hostile: it chooses what the files hold, never where they go, who owns
them nor their modes; the hub's own user may have planted links in the folders restore
writes to. Every bad archive is refused in one line, non-zero, with nothing written.

Stand-ins: ``cron.d`` for /etc/cron.d, ``shadow`` for /etc/shadow, and a hub's three places
(the broker's folder, /etc/coffre, the store's folder) under ``tmp_path``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.hub import backup as bk

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20
#: A bomb's size: 256 MiB of zeros, a quarter of a megabyte once compressed.
BOMB = 256 * MIB
#: What one restore may take, whatever the archive holds (the figures: see the report lines).
RSS_LIMIT = 100 * MIB

#: A provisioned hub's broker folder (brokerconf.configure_broker) and /etc/coffre, as
#: ``coffre backup`` finds them: name -> (bytes, mode).
BROKER_FILES = {
    "passwd": (b"hub:$7$hash\nmain.p1:$7$hash\n", 0o660),
    "acl": (b"user hub\ntopic readwrite coffre/#\n", 0o664),
    "ca.key": (b"-----BEGIN PRIVATE KEY-----\nca\n", 0o600),
    "ca.crt": (b"-----BEGIN CERTIFICATE-----\nca\n", 0o644),
    "broker.key": (b"-----BEGIN PRIVATE KEY-----\nbroker\n", 0o600),
    "broker.crt": (b"-----BEGIN CERTIFICATE-----\nbroker\n", 0o644),
    "mosquitto.conf": (b"listener 8883\n", 0o644),
    "venue.toml": (b'[hubs]\nhub = ["main"]\n', 0o644),
    "credentials/hub.password": (b"hub-password\n", 0o600),
    "credentials/main.p1.password": (b"p1-password\n", 0o600),
}
ETC_FILES = {
    "hub.toml": (b'[store]\npath = "/var/lib/coffre/hub.sqlite3"\n', 0o644),
    "display.toml": (b'tables = ["main"]\n', 0o644),
    "hub.password": (b"hub-password\n", 0o600),
    "spectator.password": (b"spectator-password\n", 0o600),
}


@dataclass
class Hub:
    """A hub's places under one folder, and the stand-ins an attacker aims at."""

    top: Path

    @property
    def broker(self) -> Path:
        return self.top / "etc" / "mosquitto" / "coffre"

    @property
    def etc(self) -> Path:
        return self.top / "etc" / "coffre"

    @property
    def store(self) -> Path:
        return self.top / "var" / "lib" / "coffre" / "hub.sqlite3"

    @property
    def cron(self) -> Path:
        return self.top / "etc" / "cron.d"

    @property
    def shadow(self) -> Path:
        return self.top / "etc" / "shadow"

    def flags(self) -> list[str]:
        return [
            "--store",
            str(self.store),
            "--broker-dir",
            str(self.broker),
            "--etc",
            str(self.etc),
        ]


def _fill(folder: Path, files: dict[str, tuple[bytes, int]]) -> None:
    for name, (data, mode) in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)


def _provisioned(top: Path) -> Hub:
    """A freshly provisioned hub: its broker folder and /etc/coffre written, no store yet
    (the hub never ran), an empty cron.d and a shadow file."""
    hub = Hub(top)
    _fill(hub.broker, {n: (b"fresh " + d, m) for n, (d, m) in BROKER_FILES.items()})
    _fill(hub.etc, {n: (b"fresh " + d, m) for n, (d, m) in ETC_FILES.items()})
    hub.etc.joinpath("hub.toml").write_text(f'[store]\npath = "{hub.store}"\n')
    hub.cron.mkdir(parents=True)
    hub.shadow.write_text("root:$6$secret:19000:0:99999:7:::\n")
    hub.shadow.chmod(0o640)
    return hub


@pytest.fixture
def old_hub(tmp_path: Path) -> Hub:
    """The hub a backup comes from: a store with a game in it, and its files."""
    hub = Hub(tmp_path / "old")
    _fill(hub.broker, BROKER_FILES)
    _fill(hub.etc, ETC_FILES)
    hub.store.parent.mkdir(parents=True)
    with sqlite3.connect(hub.store) as db:
        db.execute("CREATE TABLE events (game TEXT, body TEXT)")
        db.execute("INSERT INTO events VALUES ('g1', 'a played game')")
    db.close()
    return hub


@pytest.fixture
def backup(old_hub: Hub, tmp_path: Path) -> Path:
    """A genuine backup of ``old_hub``, as ``coffre backup`` writes it."""
    out = tmp_path / "hub.tar.gz"
    bk.make_backup(out, store=old_hub.store, broker_dir=old_hub.broker, etc_dir=old_hub.etc)
    return out


@pytest.fixture
def hub(tmp_path: Path) -> Hub:
    return _provisioned(tmp_path / "new")


def _members(archive: Path) -> tuple[dict[str, object], dict[str, bytes]]:
    """A genuine backup's manifest and members, to build hostile ones from."""
    with tarfile.open(archive) as tar:
        bodies = {}
        for member in tar.getmembers():
            handle = tar.extractfile(member)
            assert handle is not None
            bodies[member.name] = handle.read()
    return json.loads(bodies.pop(bk.MANIFEST)), bodies


def _entry(name: str, data: bytes, mode: str = "0644") -> dict[str, object]:
    return {
        "name": name,
        "size": len(data),
        "mode": mode,
        "sha256": hashlib.sha256(data).hexdigest(),
    }


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, never all in memory (what a bomb member holds)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        buffer[:] = bytes(len(buffer))
        return len(buffer)


Member = tuple[tarfile.TarInfo, bytes | None]


def _info(
    name: str, size: int = 0, kind: bytes = tarfile.REGTYPE, mode: int = 0o600
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.type, info.mode = size, kind, mode
    if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        info.linkname = "/etc/shadow"
    return info


def _write(out: Path, members: list[Member], fmt: int = tarfile.USTAR_FORMAT) -> Path:
    """A gzip'd tar of ``members`` in this order (None: ``size`` zeros, streamed)."""
    with tarfile.open(out, "w:gz", format=fmt) as tar:
        for info, data in members:
            if data is None:
                tar.addfile(info, io.BufferedReader(_Zeros(), 1 << 20))
            elif info.type != tarfile.REGTYPE:
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out


def _rebuild(
    backup: Path,
    out: Path,
    *,
    manifest: Callable[[dict[str, object]], object] | None = None,
    extra: list[Member] | None = None,
    drop: str | None = None,
) -> Path:
    """``backup`` again with its manifest changed, members added at the end or dropped."""
    data, bodies = _members(backup)
    text = manifest(data) if manifest else data
    raw = text if isinstance(text, bytes) else json.dumps(text).encode()
    members: list[Member] = [(_info(bk.MANIFEST), raw)]
    members += [(_info(n), b) for n, b in bodies.items() if n != drop]
    return _write(out, members + (extra or []))


def _tree(top: Path) -> dict[str, tuple[str, bytes | str, int, int, int]]:
    """Everything under ``top``: kind, content or link target, mode, owner and group."""
    seen = {}
    for path in sorted(top.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            what: tuple[str, bytes | str] = ("link", os.readlink(path))
        elif path.is_dir():
            what = ("dir", "")
        else:
            what = ("file", path.read_bytes())
        seen[str(path.relative_to(top))] = (*what, st.st_mode, st.st_uid, st.st_gid)
    return seen


def _refused(capsys: pytest.CaptureFixture[str], top: Path, argv: list[str], *, match: str) -> str:
    """Run ``argv``: non-zero, one line on stderr matching ``match``, nothing written."""
    before = _tree(top)
    status = main(argv)
    err = capsys.readouterr().err
    assert status != 0, f"accepted: {argv}"
    assert len(err.splitlines()) == 1, err
    assert match in err, err
    assert _tree(top) == before, "a refused restore wrote something"
    return err.strip()


# --- 35.6: the archive chooses where files go -------------------------------------------------


def test_a_manifest_s_paths_are_never_destinations(
    backup: Path, hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive whose manifest says its parts came from cron.d: without --store,
    --broker-dir or --etc, every part goes to this hub's places (its hub.toml's store,
    the broker's folder, /etc/coffre), and nothing reaches cron.d."""
    hostile = _rebuild(
        backup,
        tmp_path / "hostile.tar.gz",
        manifest=lambda m: {
            **m,
            "parts": {p: str(hub.cron / p) for p in ("store", "broker", "etc")},
        },
    )
    monkeypatch.setattr(bk, "HUB_CONFIG", hub.etc / "hub.toml")
    monkeypatch.setattr(bk, "BROKER_DIR", hub.broker)
    monkeypatch.setattr(bk, "ETC_DIR", hub.etc)
    assert main(["restore", str(hostile)]) == 0
    assert list(hub.cron.iterdir()) == []
    assert hub.broker.joinpath("ca.key").read_bytes() == BROKER_FILES["ca.key"][0]
    assert hub.etc.joinpath("display.toml").read_bytes() == ETC_FILES["display.toml"][0]
    with sqlite3.connect(hub.store) as db:
        assert db.execute("SELECT body FROM events").fetchall() == [("a played game",)]
    db.close()


# --- 35.7: restore writes through symlinks --------------------------------------------------


@pytest.mark.parametrize(
    "planted",
    ["credentials/main.p1.password", "passwd", "store", "store-wal", "credentials", "folder"],
)
def test_a_planted_link_is_refused_and_its_target_untouched(
    backup: Path, hub: Hub, planted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hub's user may write in credentials/ (pairing) and owns the store's folder: a
    link it plants where restore writes (a file, the store or its journal, a folder, the
    broker's folder itself) is refused; the file it points at keeps its bytes and mode."""
    shadow = hub.shadow.read_bytes()
    if planted == "folder":
        real = hub.top / "elsewhere"
        hub.broker.rename(real)
        hub.broker.symlink_to(real)
    elif planted.startswith("store"):
        hub.store.parent.mkdir(parents=True)
        link = Path(str(hub.store) + planted.removeprefix("store"))
        link.symlink_to(hub.shadow)
    else:
        target = hub.broker / planted
        if target.is_dir():
            for child in target.iterdir():
                child.unlink()
            target.rmdir()
            (hub.top / "dir").mkdir()
            target.symlink_to(hub.top / "dir")
        else:
            target.unlink()
            target.symlink_to(hub.shadow)
    _refused(
        capsys, hub.top, ["restore", str(backup), "--force", *hub.flags()], match="symbolic link"
    )
    assert hub.shadow.read_bytes() == shadow
    assert hub.shadow.stat().st_mode & 0o777 == 0o640


def test_a_link_planted_after_the_check_is_replaced_never_followed(
    backup: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link planted between the check and the write (the check skipped here): each file
    is written under a new name beside it and renamed over the link, so the link goes and
    its target keeps its bytes."""
    shadow = hub.shadow.read_bytes()
    monkeypatch.setattr(bk, "_expect", lambda path, *, folder: None)
    credentials = hub.broker / "credentials" / "main.p1.password"
    credentials.unlink()
    credentials.symlink_to(hub.shadow)
    assert main(["restore", str(backup), *hub.flags()]) == 0
    assert not credentials.is_symlink()
    assert credentials.read_bytes() == BROKER_FILES["credentials/main.p1.password"][0]
    assert hub.shadow.read_bytes() == shadow
    assert hub.shadow.stat().st_mode & 0o777 == 0o640


# --- 35.8: unbounded and unlisted members -----------------------------------------------------


def _peak_rss(argv: list[str]) -> tuple[int, str, int]:
    """Run ``coffre`` ``argv`` in a process of its own: exit status, stderr, its peak RSS.

    The peak is the process's own high-water mark (``VmHWM``), not ``ru_maxrss``: Linux
    carries a forked child's ``ru_maxrss`` over from its parent, so a test process grown
    big would be charged to the restore."""
    script = (
        "import re, sys\n"
        "from firmware.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "status_file = open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s+(\\d+) kB', status_file)[1], file=sys.stdout)\n"
        "sys.exit(status)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, env=env, timeout=300
    )
    return done.returncode, done.stderr, int(done.stdout.split()[-1]) * 1024


@pytest.mark.parametrize("bomb", ["unlisted", "bigger than listed", "extended header"])
def test_a_bomb_is_refused_in_bounded_memory(
    backup: Path, hub: Hub, tmp_path: Path, bomb: str
) -> None:
    """256 MiB of zeros in a quarter-megabyte archive, as a member the manifest does not
    list, as a listed member whose header is bigger than the manifest says, or as a pax
    extended header: refused in one line, nothing written, the restore's peak RSS under
    100 MiB (printed: pytest -s)."""
    data, bodies = _members(backup)
    members: list[Member] = [(_info(bk.MANIFEST), json.dumps(data).encode())]
    if bomb == "unlisted":
        members += [(_info(n), b) for n, b in bodies.items()]
        members.append((_info("etc/zeros", BOMB), None))
    elif bomb == "bigger than listed":
        members += [(_info(n), b) for n, b in bodies.items() if n != "etc/display.toml"]
        members.append((_info("etc/display.toml", BOMB), None))
    else:
        members += [(_info(n), b) for n, b in bodies.items()]
        members.append((_info("etc/x", BOMB, tarfile.XHDTYPE), None))
    archive = _write(tmp_path / "bomb.tar.gz", members)
    assert archive.stat().st_size < 2 * MIB
    before = _tree(hub.top)
    status, err, rss = _peak_rss(["restore", str(archive), *hub.flags()])
    print(f"\n{bomb}: archive {archive.stat().st_size} B, peak RSS {rss / MIB:.1f} MiB")
    assert status != 0
    assert len(err.splitlines()) == 1, err
    assert _tree(hub.top) == before
    assert rss < RSS_LIMIT, f"{bomb}: peak RSS {rss / MIB:.0f} MiB"


def test_a_genuine_restore_s_peak_rss(backup: Path, hub: Hub) -> None:
    """The figure to compare the bombs with: a genuine restore (printed: pytest -s)."""
    status, err, rss = _peak_rss(["restore", str(backup), *hub.flags()])
    print(f"\ngenuine: peak RSS {rss / MIB:.1f} MiB")
    assert status == 0, err
    assert rss < RSS_LIMIT


def test_a_member_the_manifest_does_not_list_is_refused(
    backup: Path, hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A member beside the listed ones (no checksum vouches for it) is not written: the
    whole archive is refused, naming it."""
    hostile = _rebuild(
        backup, tmp_path / "extra.tar.gz", extra=[(_info("etc/hub.d/evil.toml"), b"evil")]
    )
    _refused(capsys, hub.top, ["restore", str(hostile), *hub.flags()], match="not in its manifest")


# --- 35.9: every bad archive is one line, non-zero, nothing written ----------------------------


def _bad_archives() -> Iterator[tuple[str, Callable[[Path, Path], Path], str]]:
    """(what, build(backup, out) -> archive, a piece of the line it must give)."""

    def truncated(backup: Path, out: Path) -> Path:
        out.write_bytes(backup.read_bytes()[: backup.stat().st_size // 2])
        return out

    def raw(data: bytes) -> Callable[[Path, Path], Path]:
        def build(backup: Path, out: Path) -> Path:
            out.write_bytes(data)
            return out

        return build

    def gz_of(data: bytes) -> Callable[[Path, Path], Path]:
        import gzip

        return raw(gzip.compress(data))

    def manifest(change: Callable[[dict[str, object]], object]) -> Callable[[Path, Path], Path]:
        return lambda backup, out: _rebuild(backup, out, manifest=change)

    def files(change: Callable[[list[dict[str, object]]], None]) -> Callable[[Path, Path], Path]:
        def edit(m: dict[str, object]) -> dict[str, object]:
            listed = m["files"]
            assert isinstance(listed, list)
            change(listed)
            return m

        return manifest(edit)

    def add(name: str, data: bytes, kind: bytes = tarfile.REGTYPE) -> Callable[[Path, Path], Path]:
        def build(backup: Path, out: Path) -> Path:
            entry = _entry(name, data)

            def listed(m: dict[str, object]) -> dict[str, object]:
                assert isinstance(m["files"], list)
                return {**m, "files": [*m["files"], entry]}

            info = _info(name, len(data), kind)
            return _rebuild(backup, out, manifest=listed, extra=[(info, data)])

        return build

    def swap(name: str, data: bytes) -> Callable[[Path, Path], Path]:
        return lambda backup, out: _rebuild(backup, out, drop=name, extra=[(_info(name), data)])

    def trailing(backup: Path, out: Path) -> Path:
        import gzip

        with gzip.open(backup) as tar:
            body = tar.read()
        return raw(gzip.compress(body + b"* * * * * root sh /tmp/x\n"))(backup, out)

    def no_manifest(backup: Path, out: Path) -> Path:
        _, bodies = _members(backup)
        return _write(out, [(_info(n), b) for n, b in bodies.items()])

    def twice(backup: Path, out: Path) -> Path:
        _, bodies = _members(backup)
        return _rebuild(backup, out, extra=[(_info("etc/hub.toml"), bodies["etc/hub.toml"])])

    def listed_twice(entries: list[dict[str, object]]) -> None:
        entries.append(dict(entries[-1]))

    def mode(value: object) -> Callable[[list[dict[str, object]]], None]:
        return lambda entries: entries[-1].update(mode=value)

    yield "an empty file", raw(b""), "cut short"
    yield "not gzip", raw(b"PK\x03\x04 a zip, say" * 10), "not a gzip'd tar"
    yield "gzip, not a tar", gz_of(b"hello " * 200), "damaged"
    yield "truncated", truncated, "cut short"
    yield "data after the end", trailing, "data follows the end"
    yield "no manifest", no_manifest, "manifest.json is not its first member"
    yield "manifest not JSON", manifest(lambda m: b"{not json"), "not JSON"
    yield "manifest a list", manifest(lambda m: [m]), "format"
    yield "manifest nested deep", manifest(lambda m: b"[" * 100_000 + b"]" * 100_000), "not JSON"
    yield "another format", manifest(lambda m: {**m, "format": 2}), "format"
    yield "oversized manifest", manifest(lambda m: {**m, "pad": " " * (2 * MIB)}), "too"
    yield "mode not octal", files(mode("0o7x7")), "not octal"
    yield "mode a number", files(mode(420)), "not octal"
    yield "entry without name", files(lambda e: e[-1].pop("name")), "has no name"
    yield "size not a count", files(lambda e: e[-1].update(size=True)), "byte count"
    yield "sha256 missing", files(lambda e: e[-1].pop("sha256")), "SHA-256"
    yield "listed twice", files(listed_twice), "twice"
    yield "member twice", twice, "twice"
    yield "listed, missing", files(lambda e: e.append(_entry("etc/keys.toml", b"k"))), "missing"
    yield "path traversal", add("broker/../../cron.d/job", b"* * * * * root sh\n"), "unsafe"
    yield "absolute name", add("/etc/cron.d/job", b"* * * * * root sh\n"), "unsafe"
    yield "in no part", add("cron.d/job", b"* * * * * root sh\n"), "no part"
    yield "two stores", add("store/other.sqlite3", b"x"), "2 stores"
    yield "file and folder", add("etc/hub.toml/x", b"x"), "both a file and a folder"
    yield "size mismatch", swap("etc/hub.toml", b"[store]\n"), "its manifest says"
    yield "checksum mismatch", swap("etc/display.toml", b"tables = ['evil']\n"), "damaged"
    yield "symlink member", add("etc/link", b"", tarfile.SYMTYPE), "symbolic link"
    yield "hard link member", add("etc/hard", b"", tarfile.LNKTYPE), "hard link"
    yield "device member", add("etc/dev", b"", tarfile.CHRTYPE), "character device"
    yield "fifo member", add("etc/pipe", b"", tarfile.FIFOTYPE), "fifo"


BAD = list(_bad_archives())


@pytest.mark.parametrize(("what", "build", "line"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_archive_is_one_line_and_writes_nothing(
    backup: Path,
    hub: Hub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    what: str,
    build: Callable[[Path, Path], Path],
    line: str,
) -> None:
    """Each kind of bad archive: one line naming the fault, a non-zero exit, and this hub's
    places (and the stand-ins) as they were: nothing is written before all is checked."""
    archive = build(backup, tmp_path / "bad.tar.gz")
    shown = _refused(capsys, hub.top, ["restore", str(archive), *hub.flags()], match=line)
    assert "Traceback" not in shown


def test_a_backup_bigger_than_the_room_left_is_refused_before_writing(
    old_hub: Hub,
    hub: Hub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The manifest's sizes are held against the free space of each destination's disk
    before anything is written: a 256 kB file, a disk with 64 kB left."""
    old_hub.etc.joinpath("big.bin").write_bytes(os.urandom(256 * 1024))
    archive = tmp_path / "big.tar.gz"
    bk.make_backup(archive, store=old_hub.store, broker_dir=old_hub.broker, etc_dir=old_hub.etc)
    real = os.statvfs

    def nearly_full(path: str) -> os.statvfs_result:
        fields = list(real(path))
        fields[1], fields[4] = 4096, 16  # f_frsize, f_bavail: 64 kB left
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", nearly_full)
    _refused(capsys, hub.top, ["restore", str(archive), *hub.flags()], match="MiB free")


# --- 36.1: owners, groups and modes as provisioning gives them ---------------------------------


def test_each_file_gets_provisioning_s_owner_group_and_mode(
    backup: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root, each file gets what deploy/provision-pi.sh and broker-config give it,
    whatever the archive's modes: passwd stays writable by the hub's group (pairing adds
    users to it), so does credentials/. The names are looked up through Owners: here ids
    no other account has (as root: real chowns); not as root, this user's own ids."""
    if os.geteuid() == 0:
        users = {"root": 0, "coffre": 40002, "mosquitto": 40001}
        groups = {"root": 0, "coffre": 40012, "mosquitto": 40011}
    else:
        users = dict.fromkeys(("root", "coffre", "mosquitto"), os.getuid())
        groups = dict.fromkeys(("root", "coffre", "mosquitto"), os.getgid())
    owners = bk.Owners(users, groups)
    monkeypatch.setattr(bk.Owners, "of_this_machine", classmethod(lambda cls: owners))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert main(["restore", str(backup), *hub.flags()]) == 0, capsys.readouterr().err

    def has(path: Path, user: str, group: str, mode: int) -> None:
        st = path.stat()
        got = (st.st_uid, st.st_gid, st.st_mode & 0o7777)
        assert got == (users[user], groups[group], mode), path

    broker, etc = hub.broker, hub.etc
    has(broker / "passwd", "mosquitto", "coffre", 0o660)
    has(broker / "acl", "root", "coffre", 0o664)
    has(broker / "credentials", "root", "coffre", 0o770)
    has(broker / "credentials" / "main.p1.password", "root", "root", 0o600)
    has(broker / "ca.key", "root", "root", 0o600)
    has(broker / "broker.key", "mosquitto", "mosquitto", 0o600)
    for public in ("ca.crt", "broker.crt", "mosquitto.conf", "venue.toml"):
        has(broker / public, "root", "root", 0o644)
    has(etc / "hub.password", "coffre", "coffre", 0o600)
    has(etc / "spectator.password", "coffre", "coffre", 0o600)
    has(etc / "hub.toml", "root", "root", 0o644)
    has(hub.store, "coffre", "coffre", 0o600)
    has(hub.store.parent, "coffre", "coffre", 0o700)


def test_after_a_restore_the_hub_s_user_can_pair_and_mosquitto_read(
    backup: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What pairing does on a restored hub, as the hub's own user (a shell as its uid and
    group): add a line to passwd and acl, write a station's password in credentials/; and
    mosquitto reads passwd and broker.key; the hub's user cannot read ca.key. As root the
    users are ids no account has (real setuid); not as root, this user plays all three."""
    root = os.geteuid() == 0
    users = {"root": 0, "coffre": 40002, "mosquitto": 40001} if root else {}
    groups = {"root": 0, "coffre": 40012, "mosquitto": 40011} if root else {}
    for name in ("root", "coffre", "mosquitto"):
        users.setdefault(name, os.getuid())
        groups.setdefault(name, os.getgid())
    monkeypatch.setattr(
        bk.Owners, "of_this_machine", classmethod(lambda cls: bk.Owners(users, groups))
    )
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    top = Path(tempfile.mkdtemp(prefix="coffre-restore-"))  # pytest's own folder is 0700
    try:
        top.chmod(0o755)
        hub = _provisioned(top / "hub")
        assert main(["restore", str(backup), *hub.flags()]) == 0, capsys.readouterr().err

        def as_(user: str, command: str) -> int:
            ids = {"user": users[user], "group": groups[user], "extra_groups": []} if root else {}
            done = subprocess.run(["sh", "-c", command], cwd=hub.broker, check=False, **ids)  # type: ignore[call-overload]
            return done.returncode

        pair = "echo main.p9:x >> passwd && echo 'user main.p9' >> acl"
        pair += " && echo pw > credentials/main.p9.password"
        assert as_("coffre", pair) == 0, "the hub's user cannot pair a station"
        assert as_("mosquitto", "cat passwd broker.key > /dev/null") == 0
        if root:
            assert as_("coffre", "cat ca.key > /dev/null 2>&1") != 0
    finally:
        shutil.rmtree(top)


def test_the_archive_s_modes_never_widen_a_file(
    old_hub: Hub, hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Modes from the archive are at most 0644 (no setuid, no execute, nobody else
    writing); the secrets' are provisioning's whatever the archive says."""
    old_hub.etc.joinpath("display.toml").chmod(0o6777)
    old_hub.broker.joinpath("ca.key").chmod(0o644)
    archive = tmp_path / "wide.tar.gz"
    bk.make_backup(archive, store=old_hub.store, broker_dir=old_hub.broker, etc_dir=old_hub.etc)
    assert main(["restore", str(archive), *hub.flags()]) == 0, capsys.readouterr().err
    assert hub.etc.joinpath("display.toml").stat().st_mode & 0o7777 == 0o644
    assert hub.broker.joinpath("ca.key").stat().st_mode & 0o7777 == 0o600


# --- 36.7: docs/backup.md's steps, on a fresh hub and on one that has played -----------------


def test_the_documented_restore_works_on_a_fresh_hub_and_a_used_one(
    backup: Path, hub: Hub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/backup.md: ``sudo coffre restore FILE`` on a hub that never ran (no store, no
    store folder yet); on a hub that has played, the same line says its store is in the
    way, and with --force keeps that store beside, renamed, with its journal."""
    monkeypatch.setattr(bk, "HUB_CONFIG", hub.etc / "hub.toml")
    monkeypatch.setattr(bk, "BROKER_DIR", hub.broker)
    monkeypatch.setattr(bk, "ETC_DIR", hub.etc)
    assert not hub.store.parent.exists()
    assert main(["restore", str(backup)]) == 0, capsys.readouterr().err
    assert hub.store.is_file()
    # The same hub, used since: its own store and journal are in the way.
    hub.etc.joinpath("hub.toml").write_text(f'[store]\npath = "{hub.store}"\n')
    hub.store.write_bytes(b"newer games")
    Path(f"{hub.store}-wal").write_bytes(b"their journal")
    _refused(capsys, hub.top, ["restore", str(backup)], match="--force")
    assert main(["restore", str(backup), "--force"]) == 0
    out = capsys.readouterr().out
    kept = [p for p in hub.store.parent.iterdir() if ".replaced-" in p.name]
    assert sorted(p.read_bytes() for p in kept) == [b"newer games", b"their journal"]
    assert str(min(kept)) in out
    assert not Path(f"{hub.store}-wal").exists()
    with sqlite3.connect(hub.store) as db:
        assert db.execute("SELECT body FROM events").fetchall() == [("a played game",)]
    db.close()
