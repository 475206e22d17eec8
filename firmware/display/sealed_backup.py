"""The sealed backup the console hands a signed-in phone: the newest in the backup folder.

The folder (display.toml's ``[console] backups``, the hub's ``[backup] dir``) is the hub's
user's, so a name in it may be a link or a folder someone left there: the file served is
chosen from the folder's own listing (never from a name in the request), must be a plain
file with one name, and is opened without following a link (a link planted there, to
``/etc/coffre/hub.password`` say, which the display's user may read, is skipped).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from firmware.link import protocol as proto

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def newest(folder: Path) -> tuple[str, int] | None:
    """The newest sealed archive in ``folder`` as its name and an open descriptor (the
    caller closes it); None when there is none."""
    prefix, suffix = proto.SEALED_BACKUP
    try:
        at = os.open(folder, _FOLDER)
    except OSError:
        return None
    try:
        found = []
        for name in os.listdir(at):
            if name.startswith(prefix) and name.endswith(suffix):
                info = os.stat(name, dir_fd=at, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    found.append((info.st_mtime_ns, name))
        for _, name in sorted(found, reverse=True):
            try:
                fd = os.open(name, _FILE, dir_fd=at)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOENT, errno.ENXIO):
                    continue  # swapped for a link (or gone) since the listing
                raise
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                return name, fd
            os.close(fd)
        return None
    finally:
        os.close(at)
