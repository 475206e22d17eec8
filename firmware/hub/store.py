"""The hub's event store: SQLite, append-only, committed before any ack.

A game is its setup (game id, players, options, seed, seating) plus the list of
table events applied to it. Nothing is ever updated in place except a game's
status; undo is an event like any other.
"""

from __future__ import annotations

import fcntl
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

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

    def __init__(self, path: str | Path, *, exclusive: bool = False) -> None:
        """Open (or create) the store; ``exclusive``: the hub's, refusing a second hub."""
        self.path = Path(path)
        self._lock = threading.Lock()
        self._lock_file: IO[str] | None = None
        if exclusive:
            # One hub per store: a second one (systemd plus a manual run) would split the table.
            self._lock_file = open(f"{self.path}.lock", "w")  # noqa: SIM115 - held while open
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self._lock_file.close()
                raise StoreError(f"another hub is using {self.path}") from None
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # A few inputs a minute: durability is worth an fsync each.
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)
        self._inode = self.path.stat().st_ino

    def close(self) -> None:
        with self._lock:
            self._db.close()
            if self._lock_file is not None:
                self._lock_file.close()

    def check(self) -> None:
        """Refuse to go on if the file under us was deleted or replaced."""
        try:
            inode = self.path.stat().st_ino
        except OSError:
            inode = -1
        if inode != self._inode:
            raise StoreError(f"{self.path} was removed or replaced")

    def setting(self, key: str, default: str) -> str:
        """A persistent hub setting, created with ``default`` the first time."""
        with self._lock, self._db:
            self._db.execute("INSERT OR IGNORE INTO settings VALUES (?, ?)", (key, default))
            row = self._db.execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return str(row[0])

    def answer(self, source_id: str) -> tuple[bool, str] | None:
        """The answer already given to an input or command id, if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT ok, message FROM answered WHERE source_id=?", (source_id,)
            ).fetchone()
            if row is not None:
                return bool(row[0]), str(row[1])
            row = self._db.execute(
                "SELECT 1 FROM events WHERE source_id=?", (source_id,)
            ).fetchone()
        return (True, "") if row is not None else None

    def remember(self, source_id: str, ok: bool, message: str) -> None:
        """Record the answer to an input or command that is not an event (a refusal...)."""
        self.check()
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO answered VALUES (?, ?, ?)", (source_id, int(ok), message)
            )

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
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
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
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute(
                "SELECT COALESCE(MAX(n), 0) + 1 FROM events WHERE table_id=? AND game_no=?",
                (table_id, game_no),
            ).fetchone()
            try:
                self._db.execute(
                    "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                    (table_id, game_no, int(row[0]), json.dumps(body, sort_keys=True), source_id),
                )
            except sqlite3.IntegrityError:
                self._db.execute("ROLLBACK")
                return False
        return True

    def set_status(self, table_id: str, game_no: int, status: str) -> None:
        """Mark a game over or aborted."""
        with self._lock, self._db:
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
