"""``coffre backup`` and ``coffre restore``: the command lines of ``firmware/hub/backup.py``.

``backup`` writes the hub's store, CA, broker users and configs into one private file;
``restore`` puts one back; each prints what it did and what to do next. A mistake (a bad
archive, a store in the way, a folder only root may write) raises :class:`UsageError`:
one line, exit 64. ``backup --requested`` makes the sealed backup the host's console
asked for (firmware/hub/backup_request.py); ``restore`` opens a sealed one with its key.
"""

from __future__ import annotations

import datetime
import getpass
import os
import socket
import sys
from pathlib import Path
from typing import Any

from firmware.hub import backup as bk
from firmware.hub import backup_request
from firmware.hub.backup_stamp import record_backup
from firmware.hub.safefiles import UnsafeFile
from firmware.hub.sealed import MAGIC, SealError, read_key
from firmware.link.process import UsageError, version


def main(args: Any) -> int:
    """``coffre backup`` or ``coffre restore`` (``args.command``): the exit status."""
    try:
        if args.command == "restore":
            archive = Path(args.archive)
            key = _key(archive, args.key_file)
            done = bk.restore_backup(
                Path(args.archive),
                store=Path(args.store) if args.store else None,
                broker_dir=Path(args.broker_dir) if args.broker_dir else None,
                etc_dir=Path(args.etc) if args.etc else None,
                config=Path(args.config) if args.config else None,
                force=args.force,
                owners=bk.Owners.of_this_machine() if os.geteuid() == 0 else None,
                key=key,
            )
            where = ", ".join(f"{part} {path}" for part, path in done.folders.items())
            print(f"restored {done.files} files: store {done.store}, {where}")
            if done.replaced is not None:
                print(f"the store that was there: {done.replaced}")
            for note in done.notes:
                print(f"note: {note}")
            print("next: sudo systemctl restart coffre-broker coffre-hub coffre-display")
            return 0
        store = Path(args.store) if args.store else bk.store_of(Path(args.config))
        if args.requested:
            return _requested(args, Path(args.requested), store)
        day = datetime.date.today().isoformat()
        out = Path(args.out or f"coffre-backup-{socket.gethostname()}-{day}.tar.gz")
        manifest = bk.make_backup(
            out,
            store=store,
            broker_dir=Path(args.broker_dir),
            etc_dir=Path(args.etc),
            version=version(),
        )
    except (bk.BackupError, SealError, UnsafeFile) as exc:
        raise UsageError(f"{args.command}: {exc}") from None
    except PermissionError as exc:
        raise UsageError(f"{args.command}: cannot write {exc.filename}: run it with sudo") from None
    parts = ", ".join(f"{p} ({path})" for p, path in manifest.parts.items())
    print(f"wrote {out} (0600, {len(manifest.files)} files): {parts}")
    print("keep it off this SD card: it holds the CA's key and every password (docs/backup.md)")
    try:  # what the console shows as the last backup; the archive is good without it
        record_backup(out, store)
    except OSError as exc:
        print(f"note: when it was made is not recorded: {exc}", file=sys.stderr)
    return 0


def _key(archive: Path, key_file: str | None) -> str | None:
    """A sealed archive's key (from ``key_file``, else asked on the terminal); None for an
    archive that is not sealed (or not there: restore says so)."""
    try:
        with archive.open("rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                return None
    except OSError:
        return None
    if key_file is not None:
        try:
            text = Path(key_file).read_text(encoding="utf-8")
        except (OSError, UnicodeError) as exc:
            raise UsageError(f"restore: cannot read the key file {key_file}: {exc}") from None
    else:
        try:
            text = getpass.getpass("the backup's key (the hub showed it when it was made): ")
        except EOFError:
            raise UsageError("restore: it is sealed: give its key (--key-file)") from None
    return read_key(text)


def _requested(args: Any, request: Path, store: Path) -> int:
    """The sealed backup the hub asked for with its request file (root, from
    coffre-backup.service): the request taken, the archive written beside it, stamped."""
    asked = backup_request.take_request(request)
    out, manifest = backup_request.make_sealed(
        request.parent,
        asked.key,
        store=store,
        broker_dir=Path(args.broker_dir),
        etc_dir=Path(args.etc),
        version=version(),
    )
    print(f"wrote {out} (sealed, 0640, {len(manifest.files)} files), asked by {asked.table}")
    try:
        record_backup(out, store, sealed=True)
    except OSError as exc:
        print(f"note: when it was made is not recorded: {exc}", file=sys.stderr)
    return 0
