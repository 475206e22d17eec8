"""``coffre backup`` / ``coffre restore``: a hub in one private file, and back.

One ``.tar.gz`` (written 0600: it holds the CA's private key and every password) with:

- ``manifest.json``: format, coffre version, when, which machine, where each part came
  from, and every file's size, mode and SHA-256 (checked on restore);
- ``store/<name>``: the event store (every game, every event, the hub's settings), copied
  with SQLite's online backup, so the hub may keep running while it is taken;
- ``broker/…``: the broker-config folder (``/etc/mosquitto/coffre``): ``ca.key`` and
  ``ca.crt``, the broker's certificate and key, ``passwd``, ``acl``, ``venue.toml``,
  ``mosquitto.conf`` and ``credentials/`` (every user's password). Not ``data/``
  (mosquitto's persistence: the hub publishes every screen again when it comes back);
- ``etc/…``: the hub's configs (``/etc/coffre``: ``hub.toml``, ``display.toml``, the
  password files, a key set).

Restoring the same CA and the same passwords on a fresh hub keeps every station paired:
nothing changes on the stations. Restore runs as root on a file from elsewhere: it puts
each part in this hub's places (never where the manifest says), reads every member against
the manifest before writing anything, follows no link, and gives each file the owner and
mode provisioning gives it. See docs/backup.md (and its threat model).
"""

from __future__ import annotations

import contextlib
import datetime
import gzip
import hashlib
import io
import json
import os
import re
import socket
import sqlite3
import tarfile
import tempfile
import tomllib
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol, cast

from firmware.hub import safefiles
from firmware.hub.sealed import MAGIC, Opened, Sealer, SealError, is_sealed

FORMAT = 1
MANIFEST = "manifest.json"
HUB_CONFIG = Path("/etc/coffre/hub.toml")
ETC_DIR = Path("/etc/coffre")
BROKER_DIR = Path("/etc/mosquitto/coffre")
#: The hub unit's working directory: a relative [store] path is relative to it.
HUB_HOME = Path("/var/lib/coffre")
#: Folders of the broker-config folder that are not worth keeping.
SKIP = {"data"}


class BackupError(Exception):
    """A backup or restore that cannot be done; the message is the one line shown."""


@dataclass
class Manifest:
    """What a backup holds."""

    created: str
    host: str
    version: str
    parts: dict[str, str]  # part -> the path it came from
    files: list[dict[str, object]] = field(default_factory=list)

    def to_json(self) -> bytes:
        data = {
            "format": FORMAT,
            "coffre": self.version,
            "created": self.created,
            "host": self.host,
            "parts": self.parts,
            "files": self.files,
        }
        return json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"


def store_of(config: Path) -> Path:
    """The store a hub.toml names (a relative path is under the unit's /var/lib/coffre)."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BackupError(f"cannot read {config}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BackupError(f"{config}: not valid TOML: {exc}") from None
    return _store_path(data)


def _store_path(data: dict[str, object]) -> Path:
    section = data.get("store")
    store = section.get("path") if isinstance(section, dict) else None
    path = Path(store if isinstance(store, str) else "coffre-hub.sqlite3")
    return path if path.is_absolute() else HUB_HOME / path


def _store_named(text: bytes) -> Path | None:
    """The store a hub.toml's text names, or None when it is not readable TOML."""
    try:
        return _store_path(tomllib.loads(text.decode("utf-8")))
    except (UnicodeError, tomllib.TOMLDecodeError):
        return None


def _files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if rel.parts[0] in SKIP or not path.is_file() or path.is_symlink():
            continue
        yield path


def _copy_store(store: Path) -> bytes:
    """A consistent copy of a live SQLite store (WAL included)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "store.sqlite3"
        source = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
        return copy.read_bytes()


def make_backup(
    out: Path,
    *,
    store: Path | None,
    broker_dir: Path | None = BROKER_DIR,
    etc_dir: Path | None = ETC_DIR,
    version: str = "unknown",
) -> Manifest:
    """Write the backup file ``out`` (0600); the parts that are None or absent are skipped,
    except the store: a backup without the games is refused."""
    manifest, entries = collect(
        store=store, broker_dir=broker_dir, etc_dir=etc_dir, version=version
    )
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as raw:
        write_archive(raw, manifest, entries)
    out.chmod(0o600)
    return manifest


#: One file of a backup: its entry name, its bytes, its mode.
Member = tuple[str, bytes, int]


def collect(
    *,
    store: Path | None,
    broker_dir: Path | None = BROKER_DIR,
    etc_dir: Path | None = ETC_DIR,
    version: str = "unknown",
) -> tuple[Manifest, list[Member]]:
    """What a backup holds: its manifest and its files (see :func:`make_backup`)."""
    if store is None or not store.is_file():
        raise BackupError(f"no store at {store}: nothing to back up (see [store] in hub.toml)")
    entries: list[Member] = [(f"store/{store.name}", _copy_store(store), 0o600)]
    parts = {"store": str(store)}
    for part, folder in (("broker", broker_dir), ("etc", etc_dir)):
        if folder is None or not folder.is_dir():
            continue
        parts[part] = str(folder)
        for path in _files(folder):
            try:
                data = path.read_bytes()
            except PermissionError:
                raise BackupError(f"cannot read {path}: run it with sudo") from None
            name = f"{part}/{path.relative_to(folder).as_posix()}"
            try:
                check_name(name)  # what restore would refuse is not backed up
            except BackupError as exc:
                raise BackupError(f"cannot back up {path}: {exc}") from None
            entries.append((name, data, path.stat().st_mode & 0o777))
    manifest = Manifest(
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        host=socket.gethostname(),
        version=version,
        parts=parts,
        files=[
            {"name": n, "size": len(d), "mode": f"{m:04o}", "sha256": hashlib.sha256(d).hexdigest()}
            for n, d, m in entries
        ],
    )
    return manifest, entries


def write_archive(raw: BinaryIO | Sealer, manifest: Manifest, entries: list[Member]) -> None:
    """The gzip'd tar of a backup, into ``raw`` (a file, or a :class:`Sealer` over one)."""
    # ustar: plain headers only (restore refuses extended ones, see _Tar)
    fileobj = cast(BinaryIO, raw)  # a Sealer writes as a file does
    with tarfile.open(fileobj=fileobj, mode="w:gz", format=tarfile.USTAR_FORMAT) as tar:
        for name, data, mode in [(MANIFEST, manifest.to_json(), 0o600), *entries]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            info.mtime = int(datetime.datetime.now().timestamp())
            try:
                tar.addfile(info, io.BytesIO(data))
            except ValueError as exc:
                raise BackupError(f"cannot back up {name}: {exc}") from None


# --- restore ------------------------------------------------------------------------------
# Run as root on a file that came from elsewhere: the archive decides what the files hold,
# never where they go, who owns them, nor their modes (docs/backup.md: what restore trusts).

#: The largest manifest read (one for a hundred files is about 15 kB).
MAX_MANIFEST = 1 << 20
#: The most files one backup may list.
MAX_FILES = 10_000
#: The longest entry name (what a ustar header holds).
MAX_NAME = 255
#: Members are read, checked and written this much at a time.
CHUNK = 1 << 16
#: What may follow the end-of-archive block: tar's zeros up to its 10 kB record.
MAX_TAIL = 1 << 16
PARTS = ("store", "broker", "etc")
_OCTAL = re.compile(r"[0-7]{3,4}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _show(value: object) -> str:
    """Something read from an archive, as a short printable piece of one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_name(name: str) -> tuple[str, tuple[str, ...]]:
    """The part (store, broker, etc) and the path inside it of an entry, or BackupError:
    only plain relative names, each step a real name (no "..", no "/x", no control
    characters)."""
    steps = tuple(name.split("/"))
    if (
        len(name) > MAX_NAME
        or any(step in ("", ".", "..") for step in steps)
        or any(ord(c) < 32 or ord(c) == 127 for c in name)
    ):
        raise BackupError(f"unsafe name {_show(name)}")
    part, rel = steps[0], steps[1:]
    if part not in PARTS or not rel or (part == "store" and len(rel) != 1):
        raise BackupError(f"{_show(name)} is in no part (store/, broker/, etc/)")
    return part, rel


@dataclass(frozen=True)
class Entry:
    """One file a manifest lists, checked: a safe name, a size, an octal mode, a SHA-256."""

    name: str
    part: str
    rel: tuple[str, ...]
    size: int
    mode: int
    sha256: str


def _entry(item: object, number: int) -> Entry:
    if not isinstance(item, dict):
        raise BackupError(f"manifest entry {number} is not an object")
    name = item.get("name")
    if not isinstance(name, str):
        raise BackupError(f"manifest entry {number} has no name")
    size, mode, digest = item.get("size"), item.get("mode"), item.get("sha256")
    if type(size) is not int or size < 0:
        raise BackupError(f"{_show(name)}: size {_show(size)} is not a byte count")
    if not isinstance(mode, str) or not _OCTAL.fullmatch(mode):
        raise BackupError(f"{_show(name)}: mode {_show(mode)} is not octal")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise BackupError(f"{_show(name)}: {_show(digest)} is not a SHA-256")
    part, rel = check_name(name)
    return Entry(name, part, rel, size, int(mode, 8), digest)


def _parse_manifest(raw: bytes) -> tuple[Manifest, list[Entry]]:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: brackets nested too deep
        raise BackupError("its manifest is not JSON") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BackupError(f"its manifest is not in coffre's format {FORMAT}")
    files = data.get("files")
    if not isinstance(files, list):
        raise BackupError("its manifest lists no files")
    if len(files) > MAX_FILES:
        raise BackupError(f"its manifest lists {len(files)} files (at most {MAX_FILES})")
    entries = [_entry(item, number) for number, item in enumerate(files, 1)]
    names: set[str] = set()
    for entry in entries:
        if entry.name in names:
            raise BackupError(f"its manifest lists {_show(entry.name)} twice")
        names.add(entry.name)
    folders = {"/".join(e.name.split("/")[:i]) for e in entries for i in range(2, len(e.rel) + 1)}
    clashes = sorted(names & folders)
    if clashes:
        raise BackupError(f"{_show(clashes[0])} is both a file and a folder in its manifest")
    stores = sum(1 for e in entries if e.part == "store")
    if stores != 1:
        raise BackupError(f"its manifest lists {stores} stores (a backup holds one)")
    parts = data.get("parts")
    manifest = Manifest(
        created=str(data.get("created", "")),
        host=str(data.get("host", "")),
        version=str(data.get("coffre", "")),
        parts={str(k): str(v) for k, v in parts.items()} if isinstance(parts, dict) else {},
        files=[
            {"name": e.name, "size": e.size, "mode": f"{e.mode:04o}", "sha256": e.sha256}
            for e in entries
        ],
    )
    return manifest, entries


class _Tar:
    """The members of a gzip'd tar, one header at a time, never more read than asked for.

    tarfile reads an extended header or a long name whole, whatever size it declares, and
    hands over links and devices: a backup holds plain files with ustar names only, so
    this reads those (tarfile parses each header block) and refuses every other kind.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self._left = 0
        self._pad = 0

    def _exact(self, size: int) -> bytes:
        data = self._gz.read(size)
        if len(data) != size:
            raise EOFError
        return data

    def next(self) -> tuple[str, int] | None:
        """The next member's name and size; None at the end of the archive."""
        if self._left:
            raise BackupError("a member was not read to its end")
        if self._pad:
            self._exact(self._pad)
            self._pad = 0
        block = self._exact(tarfile.BLOCKSIZE)
        if not block.strip(b"\0"):
            tail = self._gz.read(MAX_TAIL + 1)  # to the end: gzip checks its CRC there
            if len(tail) > MAX_TAIL or tail.strip(b"\0"):
                raise BackupError("data follows the end of the archive")
            return None
        try:
            info = tarfile.TarInfo.frombuf(block, "utf-8", "strict")
        except (tarfile.HeaderError, UnicodeError, ValueError):
            raise BackupError("a member's tar header is damaged") from None
        if info.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
            kind = _KINDS.get(info.type, f"type {_show(info.type)}")
            raise BackupError(f"{_show(info.name)} is a {kind}, not a plain file")
        if info.size < 0:
            raise BackupError(f"{_show(info.name)}: a negative size")
        self._left, self._pad = info.size, -info.size % tarfile.BLOCKSIZE
        return info.name, info.size

    def chunks(self) -> Iterator[bytes]:
        """The current member's bytes, CHUNK at a time."""
        while self._left:
            data = self._exact(min(CHUNK, self._left))
            self._left -= len(data)
            yield data


_KINDS = {
    tarfile.SYMTYPE: "symbolic link",
    tarfile.LNKTYPE: "hard link",
    tarfile.CHRTYPE: "character device",
    tarfile.BLKTYPE: "block device",
    tarfile.FIFOTYPE: "fifo",
    tarfile.DIRTYPE: "folder",
    tarfile.XHDTYPE: "pax extended header",
    tarfile.XGLTYPE: "pax global header",
    tarfile.GNUTYPE_LONGNAME: "GNU long name",
    tarfile.GNUTYPE_LONGLINK: "GNU long link",
    tarfile.GNUTYPE_SPARSE: "sparse file",
    tarfile.CONTTYPE: "contiguous file",
}


class _Sink(Protocol):
    def write(self, data: bytes) -> None: ...
    def done(self) -> None: ...


class _Discard:
    def write(self, data: bytes) -> None:
        pass

    def done(self) -> None:
        pass


def _scan(
    archive: Path,
    check: Callable[[list[Entry]], None],
    sink: Callable[[Entry], _Sink],
    key: str | None = None,
) -> Manifest:
    """Read ``archive`` once: its manifest (first), ``check`` on it, then each member into
    ``sink`` with its size and checksum checked against the manifest. Any fault: BackupError
    naming the archive; a member the manifest does not list is refused unread."""
    try:
        with archive.open("rb") as raw:
            sealed = is_sealed(raw.read(len(MAGIC)))
            raw.seek(0)
            if sealed and key is None:
                raise BackupError("it is sealed: give the key the hub showed when it was made")
            if key is not None and not sealed:
                raise BackupError("it is not sealed: restore it without a key")
            # A sealed one is opened as it is read, each chunk checked before it is used.
            tar = _Tar(cast(BinaryIO, Opened(raw, key)) if key is not None else raw)
            first = tar.next()
            if first is None or first[0] != MANIFEST:
                raise BackupError(f"{MANIFEST} is not its first member")
            if first[1] > MAX_MANIFEST:
                raise BackupError(f"its manifest is too big ({first[1]} bytes)")
            manifest, entries = _parse_manifest(b"".join(tar.chunks()))
            check(entries)
            listed = {e.name: e for e in entries}
            seen: set[str] = set()
            while (member := tar.next()) is not None:
                name, size = member
                entry = listed.get(name)
                if name in seen:
                    raise BackupError(f"{_show(name)} appears twice")
                if entry is None:
                    raise BackupError(f"{_show(name)} is not in its manifest")
                if size != entry.size:
                    raise BackupError(f"{name} is {size} bytes, its manifest says {entry.size}")
                seen.add(name)
                out, digest = sink(entry), hashlib.sha256()
                for chunk in tar.chunks():
                    digest.update(chunk)
                    out.write(chunk)
                if digest.hexdigest() != entry.sha256:
                    raise BackupError(f"{name} is damaged (not its manifest's checksum)")
                out.done()
            missing = [n for n in listed if n not in seen]
            if missing:
                raise BackupError(f"{missing[0]} is missing ({len(missing)} of {len(listed)})")
            return manifest
    except FileNotFoundError:
        raise BackupError(f"{archive} does not exist") from None
    except _DestinationError as exc:
        raise BackupError(str(exc)) from None
    except (BackupError, SealError) as exc:
        raise BackupError(f"{archive}: {exc}") from None
    except EOFError:
        raise BackupError(f"{archive} is cut short") from None
    except (gzip.BadGzipFile, zlib.error):
        raise BackupError(f"{archive} is not a coffre backup (not a gzip'd tar)") from None
    except OSError as exc:
        raise BackupError(f"cannot read {archive}: {exc.strerror}") from None


def read_backup(archive: Path, key: str | None = None) -> Manifest:
    """The manifest of a backup (sealed: opened with ``key``), every member read and
    checked, nothing written."""
    return _scan(archive, lambda entries: None, lambda entry: _Discard(), key)


class _DestinationError(BackupError):
    """A fault of this hub's folders, not of the archive: its message names the path."""


@dataclass(frozen=True)
class Owners:
    """The ids behind the names provisioning gives files to (``root``, ``coffre``,
    ``mosquitto``); a name this machine lacks leaves the file to whoever restores."""

    users: Mapping[str, int]
    groups: Mapping[str, int]

    @classmethod
    def of_this_machine(cls) -> Owners:
        import grp
        import pwd

        users: dict[str, int] = {}
        groups: dict[str, int] = {}
        for name in ("root", "coffre", "mosquitto"):
            with contextlib.suppress(KeyError):
                users[name] = pwd.getpwnam(name).pw_uid
            with contextlib.suppress(KeyError):
                groups[name] = grp.getgrnam(name).gr_gid
        return cls(users, groups)

    def ids(self, user: str, group: str) -> tuple[int, int]:
        return self.users.get(user, -1), self.groups.get(group, -1)


#: (user, group, mode): what provisioning gives a file or a folder.
Ownership = tuple[str, str, int]
PUBLIC_DIR: Ownership = ("root", "root", 0o755)


def provisioned(part: str, rel: tuple[str, ...], archived_mode: int) -> Ownership:
    """The owner, group and mode provisioning gives a file (deploy/provision-pi.sh,
    brokerconf.configure_broker and share_with_hub, the hub unit's StateDirectory): the
    store and the hub's password files the hub's user's; passwd mosquitto's and writable by
    the hub's group (pairing adds users to it), acl too; broker.key mosquitto's; ca.key and
    the credentials root's, 0600. Anything else root's, with the archive's mode at most
    0644 (never executable, never writable by others)."""
    from firmware.hub.brokerconf import CREDENTIALS, HUB_WRITES
    from firmware.hub.certs import CA_KEY_FILE
    from firmware.link.tls import KEY_FILE

    if part == "store":
        return ("coffre", "coffre", 0o600)
    if part == "broker":
        shared = dict(HUB_WRITES)
        if rel == ("passwd",):
            return ("mosquitto", "coffre", shared["passwd"])
        if rel == ("acl",):
            return ("root", "coffre", shared["acl"])
        if rel == (KEY_FILE,):
            return ("mosquitto", "mosquitto", 0o600)
        if rel == (CA_KEY_FILE,) or rel[0] == CREDENTIALS:
            return ("root", "root", 0o600)
    if part == "etc" and len(rel) == 1 and rel[0].endswith(".password"):
        return ("coffre", "coffre", 0o600)
    return ("root", "root", archived_mode & 0o644)


def provisioned_folder(part: str, rel: tuple[str, ...]) -> Ownership:
    """The owner, group and mode provisioning gives a folder: the store's is the hub's
    (0700, as its unit's StateDirectory makes it), credentials/ root's and writable by the
    hub's group (pairing writes a station's password there), the rest root's, 0755."""
    from firmware.hub.brokerconf import CREDENTIALS, HUB_WRITES

    if part == "store":
        return ("coffre", "coffre", 0o700)
    if part == "broker" and rel == (CREDENTIALS,):
        return ("root", "coffre", dict(HUB_WRITES)[CREDENTIALS])
    return PUBLIC_DIR


@dataclass(frozen=True)
class Places:
    """Where a restore puts each part: this hub's, never the archive's."""

    store: Path
    broker: Path
    etc: Path

    def root(self, part: str) -> Path:
        return {"store": self.store.parent, "broker": self.broker, "etc": self.etc}[part]

    def rel(self, entry: Entry) -> tuple[str, ...]:
        return (self.store.name,) if entry.part == "store" else entry.rel


class _Stage:
    """A restore's files, written beside their destinations under new names (created, never
    opened if there) and renamed over them only once every member has been read and checked:
    nothing is followed through a symbolic link, and a refusal leaves nothing behind.

    The folders above each part's folder (/etc, /var/lib) are root's; each part's folder and
    everything in it is reached one step at a time without following a link, since the
    hub's user may write in some of them (the store's folder, credentials/)."""

    def __init__(self, places: Places, owners: Owners | None, force: bool) -> None:
        self.places, self.owners, self.force = places, owners, force
        self.notes: list[str] = []
        self.replaced: Path | None = None
        self.hub_toml: bytes | None = None
        self._fds: dict[Path, int] = {}
        self._made: list[tuple[Path, int | None, Ownership | None]] = []
        self._staged: list[tuple[int, str, str, Path]] = []
        self._open: list[_StagedFile] = []
        self._missing: set[str] = set()

    # -- before anything is written ----------------------------------------------------------
    def check(self, entries: list[Entry]) -> None:
        """Refuse a destination that is a link or not what it should be, an existing store
        without --force, and a backup bigger than the room left, before writing anything."""
        for part in sorted({e.part for e in entries}):
            _expect(self.places.root(part), folder=True)
        for entry in entries:
            path = self.places.root(entry.part)
            rel = self.places.rel(entry)
            for step in rel[:-1]:
                path = path / step
                _expect(path, folder=True)
            _expect(path / rel[-1], folder=False)
        store = self.places.store
        if os.path.lexists(store) and not self.force:
            raise _DestinationError(
                f"{store} exists (it may hold newer games): --force keeps it beside, renamed"
            )
        for suffix in ("-wal", "-shm"):
            _expect(Path(f"{store}{suffix}"), folder=False)
        need: dict[int, tuple[Path, int]] = {}
        for entry in entries:
            where = _existing(self.places.root(entry.part))
            device = os.stat(where).st_dev
            had = need.get(device, (where, 0))[1]
            need[device] = (where, had + entry.size + 4096)
        for where, size in need.values():
            vfs = os.statvfs(where)
            free = vfs.f_bavail * vfs.f_frsize
            if size > free:
                raise _DestinationError(
                    f"{where}: {free >> 20} MiB free, the backup needs {(size >> 20) + 1} MiB"
                )

    # -- while reading ---------------------------------------------------------------------
    def sink(self, entry: Entry) -> _StagedFile:
        rel = self.places.rel(entry)
        folder = self._folder(entry.part, rel[:-1])
        path = self.places.root(entry.part).joinpath(*rel)
        try:
            fd, temp = safefiles.create_beside(folder, rel[-1], "restoring")
        except OSError as exc:
            raise _cannot(path, exc) from None
        self._staged.append((folder, temp, rel[-1], path))
        user, group, mode = provisioned(entry.part, entry.rel, entry.mode)
        ids = self._ids(user, group)
        keep = entry.part == "etc" and entry.rel == ("hub.toml",) and entry.size <= MAX_MANIFEST
        staged = _StagedFile(fd, path, ids, mode, self if keep else None)
        self._open.append(staged)
        return staged

    def _ids(self, user: str, group: str) -> tuple[int, int] | None:
        if self.owners is None:
            return None
        uid, gid = self.owners.ids(user, group)
        self._missing |= {n for n, i in ((f"user {user}", uid), (f"group {group}", gid)) if i < 0}
        return uid, gid

    def _folder(self, part: str, rel: tuple[str, ...]) -> int:
        def own(rel: tuple[str, ...]) -> Ownership:
            return provisioned_folder(part, rel)

        root = self.places.root(part)
        fd = self._fds.get(root)
        if fd is None:
            fd = self._step(self._above(root.parent), root, own(()))
        path = root
        for number, step in enumerate(rel, 1):
            path = path / step
            known = self._fds.get(path)
            fd = known if known is not None else self._step(fd, path, own(rel[:number]))
        return fd

    def _above(self, folder: Path) -> int:
        """A folder above a part's (root's: followed as it is), made if missing."""
        if folder in self._fds:
            return self._fds[folder]
        missing = []
        probe = folder
        while not probe.exists():
            missing.append(probe)
            probe = probe.parent
        for path in reversed(missing):
            try:
                os.mkdir(path, 0o755)
            except OSError as exc:
                raise _cannot(path, exc) from None
            self._made.append((path, None, None))
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._fds[folder] = fd
        return fd

    def _step(self, parent: int, path: Path, ownership: Ownership) -> int:
        """Open (or make, private until the end) one folder inside a part, not following a
        link."""
        try:
            fd = safefiles.open_folder(path, parent)
            if fd is None:
                fd = safefiles.open_folder(path, parent, make=0o700)
                self._made.append((path, parent, ownership))
        except safefiles.UnsafeFile as exc:
            raise _DestinationError(str(exc)) from None
        except OSError as exc:
            raise _cannot(path, exc) from None
        assert fd is not None  # made if missing
        self._fds[path] = fd
        return fd

    # -- once everything was read and checked --------------------------------------------------
    def commit(self) -> None:
        """Put every staged file in place (the store there before kept beside, renamed), then
        give the folders made, and credentials/, what provisioning gives them."""
        from firmware.hub.brokerconf import CREDENTIALS

        store = self.places.store
        folder = self._fds[store.parent]
        try:
            if safefiles.exists_at(store.name, folder):
                stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
                aside = f"{store.name}.replaced-{stamp}"
                while safefiles.exists_at(aside, folder):
                    aside += "+"
                for suffix in ("", "-wal", "-shm"):
                    if safefiles.exists_at(store.name + suffix, folder):
                        os.rename(store.name + suffix, aside + suffix, src_dir_fd=folder,
                                  dst_dir_fd=folder)  # fmt: skip
                self.replaced = store.parent / aside
            for suffix in ("-wal", "-shm"):  # a stale journal would be replayed into it
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(store.name + suffix, dir_fd=folder)
            for fd, temp, final, _path in self._staged:
                os.rename(temp, final, src_dir_fd=fd, dst_dir_fd=fd)
            self._staged.clear()
            credentials = self.places.broker / CREDENTIALS
            settled = [(p, o) for p, parent, o in self._made if parent is not None and o]
            if credentials in self._fds and credentials not in {p for p, _ in settled}:
                settled.append((credentials, provisioned_folder("broker", (CREDENTIALS,))))
            for path, (user, group, mode) in settled:
                ids = self._ids(user, group)
                if ids is not None:
                    os.fchown(self._fds[path], *ids)
                os.fchmod(self._fds[path], mode)
            self._made.clear()
        except OSError as exc:
            raise BackupError(f"restore stopped half-way: {exc}") from None
        if self._missing:
            names = ", ".join(sorted(self._missing, reverse=True))
            self.notes.append(f"this machine has no {names}: their files stay root's")

    def abandon(self) -> None:
        """Remove every staged file and every folder made: as if nothing had happened."""
        for staged in self._open:
            staged.close()
        for fd, temp, _final, _path in self._staged:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=fd)
        self._staged.clear()
        for path, parent, _ownership in reversed(self._made):
            with contextlib.suppress(OSError):
                if parent is None:
                    os.rmdir(path)
                else:
                    os.rmdir(path.name, dir_fd=parent)
        self._made.clear()

    def close(self) -> None:
        for staged in self._open:
            staged.close()
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


class _StagedFile:
    """One member being written under its temporary name."""

    def __init__(
        self, fd: int, path: Path, ids: tuple[int, int] | None, mode: int, keep: _Stage | None
    ) -> None:
        self.fd: int | None = fd
        self.path, self.ids, self.mode, self.keep = path, ids, mode, keep
        self.kept = bytearray()

    def write(self, data: bytes) -> None:
        assert self.fd is not None
        try:
            safefiles.write_all(self.fd, data)
        except OSError as exc:
            raise _cannot(self.path, exc) from None
        if self.keep is not None:
            self.kept += data

    def done(self) -> None:
        """Owner and mode first, then on disk: the file is right before it has its name."""
        assert self.fd is not None
        try:
            safefiles.settle(self.fd, self.mode, self.ids)
        except OSError as exc:
            raise _cannot(self.path, exc) from None
        if self.keep is not None:
            self.keep.hub_toml = bytes(self.kept)
        self.close()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _expect(path: Path, *, folder: bool) -> None:
    """Refuse a symbolic link, or a file where a folder should be (and the other way)."""
    try:
        safefiles.check_kind(path, folder=folder)
    except safefiles.UnsafeFile as exc:
        raise _DestinationError(str(exc)) from None
    except OSError as exc:
        raise _cannot(path, exc) from None


def _existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def _cannot(path: Path, exc: OSError) -> _DestinationError:
    hint = ": run it with sudo" if isinstance(exc, PermissionError) else ""
    return _DestinationError(f"cannot write {path}: {exc.strerror}{hint}")


@dataclass
class Restored:
    """Where a restore put each part, and what the host should know."""

    store: Path
    folders: dict[str, Path]
    files: int
    replaced: Path | None = None
    notes: list[str] = field(default_factory=list)


def restore_backup(
    archive: Path,
    *,
    store: Path | None = None,
    broker_dir: Path | None = None,
    etc_dir: Path | None = None,
    config: Path | None = None,
    force: bool = False,
    owners: Owners | None = None,
    key: str | None = None,
) -> Restored:
    """Put a backup's files in this hub's places: the store where this hub's ``config``
    (hub.toml) says, the broker's and the hub's configs in BROKER_DIR and ETC_DIR, unless
    the arguments say elsewhere. A manifest's paths are never used.

    Every member is read and checked before any file takes its name; a refusal writes
    nothing. An existing store is only replaced with ``force``, and kept beside, renamed.
    ``owners``: give each file the owner provisioning gives it (as root); None leaves them
    to whoever runs this, with provisioning's modes. ``key``: a sealed archive's (the
    console's, firmware/hub/sealed.py), opened chunk by chunk as it is read.
    """
    if store is None:
        try:
            store = store_of(config or HUB_CONFIG)
        except BackupError as exc:
            raise BackupError(f"{exc} (--store says where the store goes)") from None
    places = Places(store, broker_dir or BROKER_DIR, etc_dir or ETC_DIR)
    stage = _Stage(places, owners, force)
    try:
        manifest = _scan(archive, stage.check, stage.sink, key)
        stage.commit()
    except BaseException:
        stage.abandon()
        raise
    finally:
        stage.close()
    notes = list(stage.notes)
    if stage.hub_toml is not None:
        named = _store_named(stage.hub_toml)
        if named is not None and named != store:
            notes.append(f"the restored hub.toml's store is {named}; the store went to {store}")
    parts = {str(e["name"]).split("/")[0] for e in manifest.files}
    folders: dict[str, Path] = {p: places.root(p) for p in ("broker", "etc") if p in parts}
    return Restored(store, folders, len(manifest.files), stage.replaced, notes)
