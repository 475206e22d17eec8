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
nothing changes on the stations. See docs/backup.md.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import socket
import sqlite3
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

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
    store = data.get("store", {}).get("path", "coffre-hub.sqlite3")
    path = Path(store)
    return path if path.is_absolute() else HUB_HOME / path


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
    if store is None or not store.is_file():
        raise BackupError(f"no store at {store}: nothing to back up (see [store] in hub.toml)")
    entries: list[tuple[str, bytes, int]] = [(f"store/{store.name}", _copy_store(store), 0o600)]
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
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data, mode in [(MANIFEST, manifest.to_json(), 0o600), *entries]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            info.mtime = int(datetime.datetime.now().timestamp())
            tar.addfile(info, io.BytesIO(data))
    out.chmod(0o600)
    return manifest


def read_backup(archive: Path) -> tuple[Manifest, dict[str, bytes]]:
    """The manifest and the files of a backup, every checksum checked."""
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            contents: dict[str, bytes] = {}
            for member in tar.getmembers():
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None:
                    contents[member.name] = handle.read()
    except FileNotFoundError:
        raise BackupError(f"{archive} does not exist") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BackupError(f"{archive} is not a coffre backup ({exc})") from None
    try:
        data = json.loads(contents.pop(MANIFEST))
        assert data["format"] == FORMAT
        manifest = Manifest(data["created"], data["host"], data["coffre"], data["parts"])
        manifest.files = list(data["files"])
    except (KeyError, ValueError, AssertionError, TypeError):
        raise BackupError(f"{archive} is not a coffre backup (no readable manifest)") from None
    for entry in manifest.files:
        name = str(entry["name"])
        body = contents.get(name)
        if body is None or hashlib.sha256(body).hexdigest() != entry["sha256"]:
            raise BackupError(f"{archive}: {name} is missing or damaged")
    return manifest, contents


@dataclass
class Restored:
    """Where a restore put each part."""

    store: Path
    folders: dict[str, Path]
    files: int


def restore_backup(
    archive: Path,
    *,
    store: Path | None = None,
    broker_dir: Path | None = None,
    etc_dir: Path | None = None,
    force: bool = False,
) -> Restored:
    """Put a backup's files back: each part where it came from, unless told elsewhere.

    An existing store is not overwritten without ``force`` (it may hold newer games).
    """
    manifest, contents = read_backup(archive)
    modes = {str(e["name"]): int(str(e["mode"]), 8) for e in manifest.files}
    target_store = store or Path(manifest.parts["store"])
    if target_store.exists() and not force:
        raise BackupError(
            f"{target_store} exists (it may hold newer games): move it away, or --force"
        )
    folders = {
        part: Path(chosen or manifest.parts[part])
        for part, chosen in (("broker", broker_dir), ("etc", etc_dir))
        if part in manifest.parts
    }
    written = 0
    for name, body in contents.items():
        part, _, rest = name.partition("/")
        rel = PurePosixPath(rest)
        if not rest or rel.is_absolute() or ".." in rel.parts:
            raise BackupError(f"{archive}: unsafe name {name}")
        if part == "store":
            path = target_store
            for stale in (Path(f"{path}-wal"), Path(f"{path}-shm")):
                stale.unlink(missing_ok=True)
        elif part in folders:
            path = folders[part] / rel
        else:
            continue
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700 if part == "store" else 0o755)
        _write(path, body, modes.get(name, 0o600))
        written += 1
    _hand_over(folders.get("broker"), folders.get("etc"), target_store)
    return Restored(target_store, folders, written)


def _write(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode & 0o777)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    path.chmod(mode & 0o777)


def _hand_over(broker: Path | None, etc: Path | None, store: Path) -> None:
    """As root: mosquitto reads its passwd and key, the coffre user its passwords and
    store (what broker-config and provisioning set up)."""
    from firmware.hub.brokerconf import give_key_to_mosquitto
    from firmware.link.tls import KEY_FILE

    if broker is not None:
        for name in ("passwd", KEY_FILE):
            if (broker / name).is_file():
                give_key_to_mosquitto(broker / name)
    if os.geteuid() != 0:
        return
    import pwd

    try:
        coffre = pwd.getpwnam("coffre")
    except KeyError:
        return
    owned = [store, store.parent] if store.parent == HUB_HOME else [store]
    if etc is not None:
        owned += list(etc.glob("*.password"))
    for path in owned:
        os.chown(path, coffre.pw_uid, coffre.pw_gid)
