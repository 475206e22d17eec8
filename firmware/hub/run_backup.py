"""``coffre backup`` and ``coffre restore``: the command lines of ``firmware/hub/backup.py``.

``backup`` writes the hub's store, CA, broker users and configs into one private file;
``restore`` puts one back; each prints what it did and what to do next. A mistake (a bad
archive, a store in the way, a folder only root may write) raises :class:`UsageError`:
one line, exit 64.
"""

from __future__ import annotations

import datetime
import os
import socket
import sys
from pathlib import Path
from typing import Any

from firmware.hub import backup as bk
from firmware.hub.backup_stamp import record_backup
from firmware.link.process import UsageError, version


def main(args: Any) -> int:
    """``coffre backup`` or ``coffre restore`` (``args.command``): the exit status."""
    try:
        if args.command == "restore":
            done = bk.restore_backup(
                Path(args.archive),
                store=Path(args.store) if args.store else None,
                broker_dir=Path(args.broker_dir) if args.broker_dir else None,
                etc_dir=Path(args.etc) if args.etc else None,
                config=Path(args.config) if args.config else None,
                force=args.force,
                owners=bk.Owners.of_this_machine() if os.geteuid() == 0 else None,
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
        day = datetime.date.today().isoformat()
        out = Path(args.out or f"coffre-backup-{socket.gethostname()}-{day}.tar.gz")
        manifest = bk.make_backup(
            out,
            store=store,
            broker_dir=Path(args.broker_dir),
            etc_dir=Path(args.etc),
            version=version(),
        )
    except bk.BackupError as exc:
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
