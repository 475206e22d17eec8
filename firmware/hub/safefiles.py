"""Files root writes, reads and hands over in folders another user may write in.

``coffre restore``, ``coffre broker-config`` and ``coffre host`` run as root on files in
``/etc/mosquitto/coffre``, where the hub's user writes too (pairing adds a station's
password to ``credentials/``): it could leave a symbolic link there, say
``credentials/main.p1.password -> /etc/shadow``. So nothing here follows a link at the
end of a path: a file is written new beside its destination (``O_EXCL``, ``O_NOFOLLOW``,
its mode and owner set on the open file) and renamed over it, a file is read or given a
mode or an owner only through a descriptor opened with ``O_NOFOLLOW``, and a name that
is a link, a hard link to something else, or not the kind expected is refused with
:class:`UnsafeFile`, whose message is the one line to show.

The folder a caller names is taken as it is (root chose it); what is inside is not.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

#: A folder opened to work in, without following a link.
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: A file made new: never one that was there, never through a link.
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: An existing name opened to read it or to change its mode: no link followed, and a
#: fifo someone left there does not block the open.
LOOK_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeFile(OSError):
    """A name that is a symbolic link, a hard link, or not the kind expected: refused.
    An OSError, so a caller that handles a failed write handles this too."""


def refused_link(path: Path) -> UnsafeFile:
    return UnsafeFile(f"{path} is a symbolic link: refused (who put it there?)")


def check_kind(path: Path, *, folder: bool, at: int | None = None) -> bool:
    """Whether ``path`` exists (its last step looked at, not followed); UnsafeFile when
    it is a symbolic link, or a file where a folder should be (and the other way).
    ``at``: a folder's descriptor, ``path.name`` is looked up in it."""
    try:
        if at is None:
            mode = os.lstat(path).st_mode
        else:
            mode = os.stat(path.name, dir_fd=at, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise refused_link(path)
    if folder and not stat.S_ISDIR(mode):
        raise UnsafeFile(f"{path} is not a folder")
    if not folder and not stat.S_ISREG(mode):
        raise UnsafeFile(f"{path} is not a plain file")
    return True


def exists_at(name: str, folder: int) -> bool:
    """Whether ``name`` is in the folder (a link counts: it is not followed)."""
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def open_folder(path: Path, parent: int, *, make: int | None = None) -> int | None:
    """A descriptor of the folder ``path.name`` in ``parent``, not following a link;
    None when it is missing, unless ``make`` is the mode to make it with."""
    try:
        return os.open(path.name, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if make is None:
            return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeFile(f"{path} is a symbolic link or not a folder: refused") from None
        raise
    os.mkdir(path.name, make, dir_fd=parent)
    return open_folder(path, parent)


@contextlib.contextmanager
def opened_folder(path: Path) -> Iterator[int]:
    """A descriptor of a folder the caller names (followed as it is: root chose it)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def create_beside(folder: int, name: str, tag: str = "new") -> tuple[int, str]:
    """A new file (0600, empty) in ``folder`` under a fresh name beside ``name``: its
    descriptor and that name. Never a file that was there, never through a link."""
    temp = f".{name}.{tag}-{secrets.token_hex(4)}"
    return os.open(temp, NEW_FLAGS, 0o600, dir_fd=folder), temp


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def settle(fd: int, mode: int, ids: tuple[int, int] | None = None) -> None:
    """Owner (if ``ids``), mode, then on disk: the file is right before it has its name."""
    if ids is not None:
        os.fchown(fd, *ids)
    os.fchmod(fd, mode)
    os.fsync(fd)


def replace(
    path: Path,
    data: bytes,
    mode: int,
    *,
    ids: tuple[int, int] | None = None,
    at: int | None = None,
) -> None:
    """Put ``data`` in ``path`` with ``mode`` (and owner ``ids``) from its first byte:
    written new beside it and renamed over it, so whatever was there (a link included) is
    replaced, never written through. UnsafeFile when ``path`` is a link or a folder.
    ``at``: the descriptor of ``path``'s folder (else the folder is opened as named)."""
    with contextlib.ExitStack() as stack:
        parent = at if at is not None else stack.enter_context(opened_folder(path.parent))
        check_kind(path, folder=False, at=parent)
        fd, temp = create_beside(parent, path.name)
        try:
            try:
                write_all(fd, data)
                settle(fd, mode, ids)
            finally:
                os.close(fd)
            os.rename(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise


def open_existing(path: Path, *, at: int | None = None) -> int | None:
    """A descriptor of a file or folder that is there (None: missing), to read it or to
    change its mode or owner: never through a link (UnsafeFile), never a second name of a
    file (a hard link: it may be somebody else's), never a device or a fifo."""
    try:
        fd = os.open(path.name if at is not None else path, LOOK_FLAGS, dir_fd=at)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise refused_link(path) from None
        if exc.errno == errno.ENXIO:  # a socket
            raise UnsafeFile(f"{path} is not a plain file") from None
        raise
    try:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            raise UnsafeFile(f"{path} is not a plain file")
        if stat.S_ISREG(info.st_mode) and info.st_nlink != 1:
            raise UnsafeFile(f"{path} has another name (a hard link): refused")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read(path: Path, limit: int, *, at: int | None = None) -> bytes | None:
    """A plain file's bytes, at most ``limit`` (UnsafeFile beyond), never through a link:
    None when it is missing."""
    fd = open_existing(path, at=at)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        if stat.S_ISDIR(os.fstat(f.fileno()).st_mode):
            raise UnsafeFile(f"{path} is a folder, not a file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFile(f"{path} is bigger than {limit} bytes: not one of ours")
    return data


def change(
    path: Path,
    *,
    mode: int | None = None,
    strip: int = 0,
    ids: tuple[int, int] | None = None,
    at: int | None = None,
) -> bool:
    """Give a file or folder that is there ``mode`` (or take ``strip``'s bits away) and
    owner ``ids``, on its descriptor: never through a link. False when it is missing."""
    fd = open_existing(path, at=at)
    if fd is None:
        return False
    try:
        if ids is not None:
            os.fchown(fd, *ids)
        current = stat.S_IMODE(os.fstat(fd).st_mode)
        wanted = current & ~strip if mode is None else mode
        if wanted != current:
            os.fchmod(fd, wanted)
    finally:
        os.close(fd)
    return True
