"""When the last ``coffre backup`` was made: a stamp beside the store, in every hub status.

``coffre backup`` runs as root while the hub runs as its own user with the store open, so
the stamp is not in the store (a root-owned ``-wal``/``-shm`` would lock the hub out) but
in a small file beside it, ``<store>.last-backup.json``: the time, the archive's name
without its folder, its size. Not a secret (docs/backup.md). The store's folder is the
hub's, and the hub's user may write in it: root writes the stamp new beside its name and
renames it over (:func:`firmware.hub.safefiles.replace`), so a link left there is refused,
never written through; the hub reads it only through a descriptor that followed no link.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import msgspec

from firmware.hub import safefiles
from firmware.link import protocol as proto

#: The stamp's name beside the store (``hub.sqlite3`` -> ``hub.sqlite3.last-backup.json``).
SUFFIX = ".last-backup.json"
#: The largest stamp read (one is under a hundred bytes).
MAX_STAMP = 4096
#: The longest archive name kept (the protocol's short text).
MAX_NAME = 64


def stamp_path(store: Path) -> Path:
    """Where the stamp of ``store``'s backups lives."""
    return store.with_name(store.name + SUFFIX)


def record_backup(
    out: Path, store: Path, *, at: float | None = None, sealed: bool = False
) -> proto.BackupStamp:
    """Note beside ``store`` that the backup ``out`` was just made: 0644, owned as the
    store is (root writes it, the hub reads it). UnsafeFile when a link is in the way.
    ``sealed``: the console asked for it, and may offer it for download."""
    name = out.name
    if len(name) > MAX_NAME:  # its start and its end tell two archives apart
        name = name[: MAX_NAME // 2 - 1] + "…" + name[-(MAX_NAME // 2) :]
    stamp = proto.BackupStamp(
        at=int(time.time() if at is None else at),
        name=name,
        size=out.stat().st_size,
        sealed=sealed,
    )
    owner = os.stat(store)
    ids = (owner.st_uid, owner.st_gid) if os.geteuid() == 0 else None
    safefiles.replace(stamp_path(store), proto.encode(stamp) + b"\n", 0o644, ids=ids)
    return stamp


def last_backup(store: Path) -> proto.BackupStamp | None:
    """The stamp beside ``store``: None when there is none, or it is not one of ours
    (a link, a folder, too big, not a stamp)."""
    try:
        data = safefiles.read(stamp_path(store), MAX_STAMP)
        return None if data is None else msgspec.json.decode(data, type=proto.BackupStamp)
    except (OSError, msgspec.ValidationError, msgspec.DecodeError):
        return None
