"""The hub's event store: SQLite, append-only, committed before any ack.

A game is its setup (game id, players, options, seed, seating) plus the list of
table events applied to it. Nothing is ever updated in place except a game's
status; undo is an event like any other.

The hub writes in batches: one SQLite transaction (one fsync) for every input waiting
in its mailbox, acked after it is durable. With ``deferred_sync`` (the running hub's
store), a batch's commit does not wait for the disk: SQLite runs ``synchronous=NORMAL``
(in WAL mode a commit is then a write to the log, no fsync) and :meth:`Store.sync`,
called by the hub's writer thread, fsyncs the log: everything committed before it
started is then as durable as ``synchronous=FULL`` makes it (FULL is that same fsync of
the log at every commit; a checkpoint syncs the log before it copies it into the
database in both modes). The hub answers a batch only once a sync covers it, and meanwhile
works on what came next: a slow or stalled card delays the answers, not the work, and
one fsync then covers every batch committed during it (a group commit).

Refusals are remembered so a late copy of an input gets the same answer, but only the
newest :data:`REFUSALS_KEPT` per table and game. Ids are ``<stream>:<n>`` with ``n``
growing along a stream (a station's boot), so what is forgotten is summed up as a
floor per stream: a late copy at or under its stream's floor that is not an event was
refused, and is refused again (:data:`TOO_LATE`) rather than applied.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

log = logging.getLogger(__name__)

#: Refusals remembered word for word, per table and game (older ones become a floor).
REFUSALS_KEPT = 512
#: Streams (station boots) whose floor is kept, per table.
FLOORS_KEPT = 64
#: The answer to a late copy of a refusal that was forgotten.
TOO_LATE = "Too late: tap again"

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    table_id TEXT NOT NULL,
    game_no INTEGER NOT NULL,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,
    options TEXT NOT NULL,
    seed INTEGER NOT NULL,
    seating TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'playing',
    PRIMARY KEY (table_id, game_no)
);
CREATE TABLE IF NOT EXISTS answered (
    source_id TEXT PRIMARY KEY,
    ok INTEGER NOT NULL,
    message TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS floors (
    stream TEXT PRIMARY KEY,
    table_id TEXT NOT NULL,
    n INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL,
    game_no INTEGER NOT NULL,
    n INTEGER NOT NULL,
    body TEXT NOT NULL,
    source_id TEXT UNIQUE,
    PRIMARY KEY (table_id, game_no, n)
);
"""


#: The answer already given to an id (see :meth:`Store.answer`), in this order: a refusal
#: or command answer kept word for word; an event that came from it (answered yes); a
#: forgotten refusal under its stream's floor (a NULL message: TOO_LATE).
_ANSWER_SQL = """
SELECT ok, message FROM (
    SELECT 0 AS rank, ok, message FROM answered WHERE source_id = ?1
    UNION ALL SELECT 1, 1, '' FROM events WHERE source_id = ?1
    UNION ALL SELECT 2, 0, NULL FROM floors WHERE stream = ?2 AND ?3 <= n
) ORDER BY rank LIMIT 1
"""

#: An event, numbered after the game's last one (a game with none yet: 1).
_APPEND_SQL = """
INSERT INTO events
SELECT ?1, ?2, COALESCE(MAX(n), 0) + 1, ?3, ?4 FROM events WHERE table_id = ?1 AND game_no = ?2
"""


@dataclass(frozen=True)
class GameRecord:
    """A stored game's setup."""

    table_id: str
    game_no: int
    game: str
    players: int
    options: dict[str, Any]
    seed: int
    seating: list[str]
    status: str


class StoreError(RuntimeError):
    """The store cannot be trusted to keep what it is given."""


class Store:
    """One SQLite file for every table a hub process runs (and one hub per file)."""

    def __init__(
        self,
        path: str | Path,
        *,
        exclusive: bool = False,
        commit_delay: Callable[[], float] | None = None,
        deferred_sync: bool = False,
    ) -> None:
        """Open (or create) the store; ``exclusive``: the hub's, refusing a second hub.

        ``commit_delay`` (seconds, asked at each commit, or at each sync with
        ``deferred_sync``) simulates a slow disk for benchmarks; nothing else uses it.
        ``deferred_sync``: a batch's :meth:`commit` is durable only after a :meth:`sync`
        (see the module's docstring); a :meth:`transaction` of its own still syncs.
        """
        self.path = Path(path)
        self._lock = threading.RLock()
        self._batch = False
        self.commit_delay = commit_delay
        self.deferred_sync = deferred_sync
        self.commits = 0
        #: Commits that wrote something, and how many of them are known durable.
        self.written = 0
        self.synced = 0
        self._sync_lock = threading.Lock()  # one fsync at a time: ``synced`` only grows
        self._changes = 0  # the connection's total_changes when the batch began
        self._wal_fd: int | None = None
        self._lock_file: IO[str] | None = None
        if exclusive:
            # One hub per store: a second one (systemd plus a manual run) would split the table.
            # 0600 whatever the unit's UMask: the lock and the store are the hub's alone.
            lock_fd = os.open(f"{self.path}.lock", os.O_WRONLY | os.O_CREAT, 0o600)
            self._lock_file = os.fdopen(lock_fd, "w")
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self._lock_file.close()
                raise StoreError(f"another hub is using {self.path}") from None
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))  # SQLite's -wal/-shm copy it
        _keep_private(self.path)
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # A few inputs a minute: durability is worth an fsync each (with deferred_sync, the
        # writer thread's fsync of the log, see sync()).
        self._db.execute(f"PRAGMA synchronous={'NORMAL' if deferred_sync else 'FULL'}")
        self._db.executescript(SCHEMA)
        columns = [r[1] for r in self._db.execute("PRAGMA table_info(answered)")]
        if "scope" not in columns:  # a store from before refusals were bounded
            self._db.execute("ALTER TABLE answered ADD COLUMN scope TEXT NOT NULL DEFAULT ''")
        self._db.execute("CREATE INDEX IF NOT EXISTS answered_scope ON answered (scope)")
        self._inode = self.path.stat().st_ino

    def begin(self) -> None:
        """Open a batch: writes join one transaction until :meth:`commit` or :meth:`rollback`."""
        self._lock.acquire()
        try:
            self.check()  # once for the batch, not at each write
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise
        self._batch = True
        self._changes = self._db.total_changes  # to tell a batch that wrote nothing

    def commit(self) -> None:
        """Commit the batch (one fsync; with ``deferred_sync``, durable at the next
        :meth:`sync`); on an error it is rolled back and the error raised."""
        try:
            if self.commit_delay is not None and not self.deferred_sync:
                time.sleep(self.commit_delay())
            self._db.execute("COMMIT")
            self.commits += 1
            if self._db.total_changes != self._changes or not self.deferred_sync:
                self.written = self.commits
            if not self.deferred_sync:
                self.synced = self.written
        except BaseException:
            self.rollback()
            raise
        self._end()

    def sync(self) -> int:
        """Make every commit so far durable (fsync the log); returns how many commits that
        covers (:attr:`written` when it started). Any thread; raises OSError if the disk
        refused (then nothing after :attr:`synced` may be taken as stored)."""
        with self._sync_lock:
            target = self.written  # commits that ended before the fsync starts: it covers them
            if target <= self.synced:
                return self.synced
            started = time.monotonic()
            if self._wal_fd is None:
                self._wal_fd = os.open(f"{self.path}-wal", os.O_RDONLY)
                # The log's name in its directory is durable too, once.
                directory = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(directory)
                finally:
                    os.close(directory)
            os.fsync(self._wal_fd)
            if self.commit_delay is not None:
                # The simulated card's time is the whole sync's, this disk's own included.
                time.sleep(max(0.0, self.commit_delay() - (time.monotonic() - started)))
            self.synced = target
            return target

    def rollback(self) -> None:
        """Give the batch up: nothing written in it stays."""
        self._rollback()
        self._end()

    def _rollback(self) -> None:
        if self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")

    def _end(self) -> None:
        if self._batch:
            self._batch = False
            self._lock.release()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction (one fsync) for everything written inside; rolled back on error.

        Writes inside do not commit on their own: who wrote acks only after this exits.
        Inside a batch already, it joins it.
        """
        with self._lock:
            if self._batch:
                yield
                return
            self.begin()
            try:
                yield
            except BaseException:
                self.rollback()
                raise
            self.commit()
            self.sync()  # durable before whoever wrote goes on (a no-op without deferral)

    def close(self) -> None:
        with self._lock:
            with self._sync_lock:
                if self._wal_fd is not None:
                    os.close(self._wal_fd)
                    self._wal_fd = None
            self._db.close()
            if self._lock_file is not None:
                self._lock_file.close()

    def check(self) -> None:
        """Refuse to go on if the file under us was deleted or replaced."""
        if self._batch:
            return  # checked when the batch began
        try:
            inode = self.path.stat().st_ino
        except OSError:
            inode = -1
        if inode != self._inode:
            raise StoreError(f"{self.path} was removed or replaced")

    def setting(self, key: str, default: str) -> str:
        """A persistent hub setting, created with ``default`` the first time."""
        with self.transaction():
            self._db.execute("INSERT OR IGNORE INTO settings VALUES (?, ?)", (key, default))
            row = self._db.execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return str(row[0])

    def get_setting(self, key: str) -> str | None:
        """A persistent hub setting, None if it was never kept (writes nothing)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_setting(self, key: str, value: str) -> None:
        """Keep a persistent hub setting (in the caller's batch, if one is open)."""
        self.check()
        with self.transaction():
            self._db.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", (key, value))

    def identity(self) -> Identity:
        """The hub's broker identity, kept here but bound to where this file lives.

        The token (the secret part of the broker client id) and the hub id (the public
        name in its claims) are made once; next to them the store records its home (this
        machine, its path, its inode). A store that finds itself elsewhere was copied (a
        cloned SD card, a copied file) or moved: it makes a new identity, so two hubs never
        share one and the broker never kicks one off for the other.
        """
        here = _home(self.path, self._inode)
        with self.transaction():
            rows = dict(self._db.execute("SELECT key, value FROM settings").fetchall())
            token, hub, home = rows.get("client_token"), rows.get("hub_id"), rows.get("home")
            copied_from = None
            if token is not None and home is not None and home != here:
                copied_from = json.loads(home)
                token = hub = None
            token = token or os.urandom(8).hex()
            hub = hub or os.urandom(4).hex()
            # A store from before homes were kept keeps its token (and its broker session).
            for key, value in (("client_token", token), ("hub_id", hub), ("home", here)):
                self._db.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", (key, value))
        return Identity(hub, token, copied_from)

    def answer(self, source_id: str) -> tuple[bool, str] | None:
        """The answer already given to an input or command id, if any."""
        stream, n = _stream(source_id)  # no stream: NULL, which no floor matches
        with self._lock:
            # One statement, not three: this runs for every input (a tenth of its cost at
            # 100 tables when it took three round trips into SQLite).
            row = self._db.execute(_ANSWER_SQL, (source_id, stream, n)).fetchone()
        if row is None:
            return None
        return bool(row[0]), TOO_LATE if row[1] is None else str(row[1])

    def remember(
        self,
        source_id: str,
        ok: bool,
        message: str,
        *,
        table_id: str = "",
        game_no: int = 0,
        keep: bool = False,
    ) -> None:
        """Record the answer to an input or command that is not an event (a refusal...).

        Only the newest REFUSALS_KEPT of a table's game are kept word for word; a ``keep``
        answer (a host command's: redoing one could end a game) is kept for good, whatever
        the stations send.
        """
        self.check()
        scope = f"{table_id}/{game_no}" if table_id and not keep else ""
        with self.transaction():
            self._db.execute(
                "INSERT OR IGNORE INTO answered VALUES (?, ?, ?, ?)",
                (source_id, int(ok), message, scope),
            )
            if scope:
                self._forget_old_answers(scope, table_id)

    def _forget_old_answers(self, scope: str, table_id: str) -> None:
        old = self._db.execute(
            "SELECT rowid, source_id FROM answered WHERE scope=? ORDER BY rowid DESC "
            "LIMIT -1 OFFSET ?",
            (scope, REFUSALS_KEPT),
        ).fetchall()
        for rowid, source_id in old:
            stream, n = _stream(source_id)
            if stream is not None:
                self._db.execute(
                    "INSERT INTO floors VALUES (?, ?, ?) ON CONFLICT (stream) "
                    "DO UPDATE SET n=MAX(n, excluded.n)",
                    (stream, table_id, n),
                )
            self._db.execute("DELETE FROM answered WHERE rowid=?", (rowid,))
        if old:
            self._db.execute(
                "DELETE FROM floors WHERE table_id=? AND stream NOT IN (SELECT stream FROM "
                "floors WHERE table_id=? ORDER BY rowid DESC LIMIT ?)",
                (table_id, table_id, FLOORS_KEPT),
            )

    def last_n(self, stream: str) -> int:
        """The highest ``n`` this store knows of ids ``<stream>:<n>`` (0: none)."""
        low, high = f"{stream}:", f"{stream};"  # ';' follows ':': the stream's ids only
        best = 0
        with self._lock:
            for sql in (
                "SELECT source_id FROM answered WHERE source_id >= ? AND source_id < ?",
                "SELECT source_id FROM events WHERE source_id >= ? AND source_id < ?",
            ):
                for (source_id,) in self._db.execute(sql, (low, high)):
                    best = max(best, _stream(str(source_id))[1])
            row = self._db.execute("SELECT n FROM floors WHERE stream=?", (stream,)).fetchone()
        return max(best, int(row[0])) if row is not None else best

    def remembered(self, table_id: str, game_no: int) -> int:
        """How many answers are kept word for word for one table's game."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM answered WHERE scope=?", (f"{table_id}/{game_no}",)
            ).fetchone()
        return int(row[0])

    def new_game(
        self,
        table_id: str,
        game: str,
        players: int,
        options: dict[str, Any],
        seed: int,
        seating: list[str],
    ) -> GameRecord:
        """Record a new game (ending any game still playing at that table)."""
        self.check()
        with self.transaction():
            self._db.execute(
                "UPDATE games SET status='aborted' WHERE table_id=? AND status='playing'",
                (table_id,),
            )
            row = self._db.execute(
                "SELECT COALESCE(MAX(game_no), 0) + 1 FROM games WHERE table_id=?", (table_id,)
            ).fetchone()
            game_no = int(row[0])
            self._db.execute(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, 'playing')",
                (table_id, game_no, game, players, json.dumps(options), seed, json.dumps(seating)),
            )
        return GameRecord(table_id, game_no, game, players, options, seed, seating, "playing")

    def append(
        self, table_id: str, game_no: int, body: dict[str, Any], source_id: str | None
    ) -> bool:
        """Append one event; False (and nothing written) if ``source_id`` was seen."""
        self.check()
        with self.transaction():
            try:
                # One statement, the event's number found inside it: each trip into SQLite
                # gives the interpreter lock up, and at 100 tables getting it back is most
                # of the cost.
                self._db.execute(
                    _APPEND_SQL, (table_id, game_no, json.dumps(body, sort_keys=True), source_id)
                )
            except sqlite3.IntegrityError:
                # Only this statement is undone: the rest of a batch stands.
                return False
        return True

    def set_status(self, table_id: str, game_no: int, status: str) -> None:
        """Mark a game over or aborted."""
        with self.transaction():
            self._db.execute(
                "UPDATE games SET status=? WHERE table_id=? AND game_no=?",
                (status, table_id, game_no),
            )

    def current_game(self, table_id: str) -> GameRecord | None:
        """The game still playing at a table, if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM games WHERE table_id=? AND status='playing' "
                "ORDER BY game_no DESC LIMIT 1",
                (table_id,),
            ).fetchone()
        return _record(row) if row else None

    def last_game(self, table_id: str) -> GameRecord | None:
        """The most recent game at a table, whatever its status."""
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM games WHERE table_id=? ORDER BY game_no DESC LIMIT 1",
                (table_id,),
            ).fetchone()
        return _record(row) if row else None

    def events(self, table_id: str, game_no: int) -> list[dict[str, Any]]:
        """A game's events in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM events WHERE table_id=? AND game_no=? ORDER BY n",
                (table_id, game_no),
            ).fetchall()
        return [json.loads(r[0]) for r in rows]


@dataclass(frozen=True)
class Identity:
    """Who the hub is to the broker (see :meth:`Store.identity`)."""

    hub: str
    token: str
    #: Where the store was made, when it found itself copied or moved (else None).
    copied_from: dict[str, Any] | None = None

    def moved(self, here: Path) -> str:
        """What changed, in a few words, for the warning of a copied store."""
        was = self.copied_from or {}
        if was.get("machine") != machine_id():
            return f"made on another machine (at {was.get('path')})"
        if was.get("path") != str(here.resolve()):
            return f"made at {was.get('path')}"
        return "replaced by a copy"


def machine_id() -> str:
    """This machine, hashed (its machine-id and, on a Pi, the board's serial number): a
    cloned SD card keeps the first, never the second."""
    parts = []
    for name in (
        "/etc/machine-id",
        "/var/lib/dbus/machine-id",
        "/sys/firmware/devicetree/base/serial-number",
    ):
        with contextlib.suppress(OSError):
            parts.append(Path(name).read_text(errors="replace").strip("\x00\n "))
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _home(path: Path, inode: int) -> str:
    return json.dumps(
        {"machine": machine_id(), "path": str(path.resolve()), "inode": inode}, sort_keys=True
    )


def _stream(source_id: str) -> tuple[str | None, int]:
    """``(stream, n)`` of an id ``<stream>:<n>``; ``(None, 0)`` for any other id."""
    stream, sep, n = source_id.rpartition(":")
    if not sep or not (n.isascii() and n.isdigit()) or len(n) > 10:
        return None, 0
    return stream, int(n)


def _record(row: tuple[Any, ...]) -> GameRecord:
    table_id, game_no, game, players, options, seed, seating, status = row
    return GameRecord(
        table_id,
        int(game_no),
        game,
        int(players),
        json.loads(options),
        int(seed),
        json.loads(seating),
        status,
    )


def _keep_private(path: Path) -> None:
    """Make a store made before its files were 0600 (or copied in by hand) the hub's alone
    again: it holds every player's secret. Said once, in the log, when it happens."""
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}.lock")):
        try:
            mode = name.stat().st_mode & 0o777
        except FileNotFoundError:
            continue
        if not mode & 0o077:
            continue
        try:
            name.chmod(0o600)
        except OSError:
            log.warning(
                "hub: %s can be read by other users (mode %o) and this user cannot change "
                "that: sudo chmod 600 %s (it holds every player's secret)",
                name,
                mode,
                name,
            )
        else:
            log.warning(
                "hub: %s could be read by other users (mode %o); now 0600 (it holds every "
                "player's secret)",
                name,
                mode,
            )
