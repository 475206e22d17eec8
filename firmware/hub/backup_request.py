"""A backup asked from the host's console: the hub's request, root's sealed archive.

The hub runs as its own user and never reads ``ca.key``; a backup holds it, so root makes
it. The hub writes a small request file in the backup folder (hub.toml's ``[backup]
dir``): the key it will show on its glass and the table that asked. systemd's
``coffre-backup.path`` sees it and starts ``coffre-backup.service``, which runs ``coffre
backup --requested`` as root: :func:`take_request` reads and removes it, :func:`make_sealed`
writes the archive sealed with that key (firmware/hub/sealed.py) beside it, 0640 and in
the folder's group (the display serves it to a signed-in phone), and keeps the newest
:data:`KEEP`.

Root reads a file the hub's user writes, in a folder that user owns: the request is
opened without following a link, must be a plain file with one name, owned by the
folder's owner and at most :data:`MAX_REQUEST` bytes, and parses as exactly a key and a
table name or not at all. It is removed whatever it holds (a refused one included), so
systemd does not start the service again and again for it. The archive is written new
beside its name (``O_EXCL``, ``O_NOFOLLOW``) and renamed into place; rotation removes only
plain files of root's own.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
import stat
from pathlib import Path
from typing import Annotated

import msgspec

from firmware.hub import backup as bk
from firmware.hub import safefiles
from firmware.hub.sealed import Sealer
from firmware.link import protocol as proto

#: The request's name in the backup folder (coffre-backup.path watches it).
REQUEST = "request"
#: The largest request read (one is about 60 bytes).
MAX_REQUEST = 512
#: How many sealed archives the folder keeps (the newest).
KEEP = 3
PREFIX, SUFFIX = proto.SEALED_BACKUP


class Request(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the hub asks root for: the key to seal with, the table whose console asked."""

    key: Annotated[str, msgspec.Meta(pattern=r"^[0-9A-HJKMNP-TV-Z]{20}$")]
    table: proto.Name


def ask(folder: Path, request: Request) -> None:
    """The hub's side: the request written 0600 beside its name and renamed into place (a
    link there is refused, never written through: safefiles.replace)."""
    safefiles.replace(folder / REQUEST, proto.encode(request), 0o600)


def take_request(path: Path) -> Request:
    """Root's side: the request at ``path``, read safely and removed (see the module's
    docstring); BackupError, with one line, when it is missing or not one."""
    with safefiles.opened_folder(path.parent) as folder:
        owner = os.fstat(folder).st_uid
        try:
            fd = safefiles.open_existing(path, at=folder)
        except OSError as exc:
            _remove(path, folder)
            raise bk.BackupError(f"{exc}") from None
        if fd is None:
            raise bk.BackupError(f"no request at {path}")
        try:
            info = os.fstat(fd)
            _remove(path, folder)
            if not stat.S_ISREG(info.st_mode):
                raise bk.BackupError(f"{path} is not a plain file: refused")
            if info.st_uid != owner:
                raise bk.BackupError(f"{path} is not its folder owner's: refused")
            data = os.read(fd, MAX_REQUEST + 1)
        finally:
            os.close(fd)
    if len(data) > MAX_REQUEST:
        raise bk.BackupError(f"{path} is bigger than {MAX_REQUEST} bytes: not a request")
    try:
        return msgspec.json.decode(data, type=Request)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise bk.BackupError(f"{path} is not a backup request: refused") from None


def _remove(path: Path, folder: int) -> None:
    with contextlib.suppress(OSError):  # a link goes, never what it points to
        os.unlink(path.name, dir_fd=folder)


def make_sealed(
    folder: Path,
    key: str,
    *,
    store: Path | None,
    broker_dir: Path | None,
    etc_dir: Path | None,
    version: str,
    keep: int = KEEP,
) -> tuple[Path, bk.Manifest]:
    """The backup, sealed with ``key``, as a new file in ``folder`` (0640, the folder's
    group when run as root); the older ones beyond ``keep`` removed. Its path and manifest."""
    manifest, entries = bk.collect(
        store=store, broker_dir=broker_dir, etc_dir=etc_dir, version=version
    )
    name = archive_name()
    with safefiles.opened_folder(folder) as at:
        ids = (0, os.fstat(at).st_gid) if os.geteuid() == 0 else None
        safefiles.check_kind(folder / name, folder=False, at=at)
        fd, temp = safefiles.create_beside(at, name)
        try:
            try:
                with os.fdopen(os.dup(fd), "wb") as raw:
                    sealer = Sealer(raw, key)
                    bk.write_archive(sealer, manifest, entries)
                    sealer.close()
                safefiles.settle(fd, 0o640, ids)
            finally:
                os.close(fd)
            os.rename(temp, name, src_dir_fd=at, dst_dir_fd=at)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=at)
            raise
        rotate(at, keep)
    return folder / name, manifest


def archive_name(now: datetime.datetime | None = None) -> str:
    """``coffre-backup-<host>-<date>-<time>.sealed``: names sort as their times do."""
    when = (now or datetime.datetime.now()).strftime("%Y-%m-%d-%H%M%S")
    return f"{PREFIX}{socket.gethostname()}-{when}{SUFFIX}"


def rotate(at: int, keep: int) -> list[str]:
    """Remove the sealed archives beyond the newest ``keep`` in the folder ``at``: plain
    files of this user's only (one the hub's user left there is neither counted nor
    removed). The names removed."""
    mine = []
    for name in os.listdir(at):
        if not (name.startswith(PREFIX) and name.endswith(SUFFIX)):
            continue
        info = os.stat(name, dir_fd=at, follow_symlinks=False)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid():
            mine.append((info.st_mtime_ns, name))
    gone = [name for _, name in sorted(mine, reverse=True)[keep:]]
    for name in gone:
        os.unlink(name, dir_fd=at)
    return gone
