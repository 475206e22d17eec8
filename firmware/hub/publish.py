"""What the hub publishes for a table: screens, ``public``, its status and the host screen.

A topic is sent only when its content changed (screens are compared without their
revision), so an input that changes one seat's screen costs one message to that seat.
The hub display on the panel shows the host screen of the table the panel drives.

While the hub works a batch, :meth:`Publisher.hold` keeps what it would send, in order
(each input's screens, then its answer), until the batch is committed.

The hub display is drawn by a thread of its own (:class:`Painter`): a real panel takes
tens of milliseconds of I2C a frame, which must not delay any table's answers. The
newest screen wins; one the painter had no time for is skipped.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from device.panel import Panel
from firmware.hub import backup_stamp, health
from firmware.hub.actor import NOTE_SECONDS, PAGE_SECONDS, TableActor
from firmware.hub.backup_state import Backups
from firmware.hub.bindings.common import LAST_MARK, LAST_SECONDS, host_hint, seconds_shown
from firmware.hub.bindings.numbered import numbered
from firmware.hub.claim import Verdict
from firmware.hub.hostmenu import SOUND_NAMES, value_text
from firmware.hub.table import Table
from firmware.hub.throttle import Throttle
from firmware.link import protocol as proto
from firmware.link.lang import N_, _, refusal, short_colours, speaking
from firmware.link.mqtt import LinkState
from firmware.link.render import BODY_LINES, CHARS, glass, render_lines
from rules import get_info
from rules.declare import Option

log = logging.getLogger(__name__)


class Painter:
    """Draws the hub display off the hub's thread; the newest screen wins."""

    def __init__(self, panel: Panel) -> None:
        self.panel = panel
        self.drawn = 0
        self._wanted: tuple[str, list[str]] | None = None
        self._busy = False
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="hub-display", daemon=True)
        self._thread.start()

    def paint(self, title: str, lines: list[str]) -> None:
        """Ask for this screen (returns at once)."""
        with self._cond:
            self._wanted = (title, list(lines))
            self._cond.notify()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until the last screen asked for is on the glass."""
        with self._cond:
            return self._cond.wait_for(lambda: self._wanted is None and not self._busy, timeout)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join(2)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._wanted is not None or self._closed)
                if self._wanted is None:
                    return
                (title, lines), self._wanted = self._wanted, None
                self._busy = True
            try:
                self.panel.display.show(render_lines(title, lines))
                self.drawn += 1
            except Exception as exc:  # the display is the host's; the tables go on
                log.warning("hub display: %s", exc)
            with self._cond:
                self._busy = False
                self._cond.notify_all()


@dataclass
class Held:
    """A message kept until the batch is committed (an answer stays an Ack until then)."""

    actor: TableActor
    topic: str
    payload: bytes | proto.Ack
    retain: bool
    qos: int = proto.QOS

    def encoded(self) -> bytes:
        return self.payload if isinstance(self.payload, bytes) else proto.encode(self.payload)


class Publisher:
    """Publishes a table's state on its own connection; the panel follows ``panel_actor``."""

    def __init__(self, clock: Callable[[], float], panel: Panel | None = None) -> None:
        self.clock = clock
        self.panel = panel
        self.panel_actor: TableActor | None = None
        #: The hub's claim, in every hub status (see firmware.hub.claim).
        self.claim: proto.Claim | None = None
        #: How many tables the hub has: with more than one, the panel's title names the
        #: table it drives.
        self.tables = 1
        self.painter = Painter(panel) if panel is not None else None
        self.throttle = Throttle()
        #: While holding: what to send once the batch is committed, in order.
        self.held: list[Held] | None = None
        self._paint: tuple[str, list[str]] | None = None  # held for the painter
        #: Per table: (table, state, countdown second), its public and status payloads.
        self._publics: dict[str, tuple[tuple[Any, ...], bytes, bytes]] = {}
        #: The store whose backup stamp (firmware.hub.backup_stamp) every hub status carries.
        self.store: Path | None = None
        self.backup: proto.BackupStamp | None = None
        self._stamp_seen: tuple[int, int, int] | None = None
        self._stamp_of: Path | None = None
        self._stamp = ""
        #: Per table: the backup stamp its last hub status carried.
        self._told: dict[str, proto.BackupStamp | None] = {}
        #: The backup the host asked for, and its key while the glass shows it.
        self.backups = Backups()

    def look_backup(self) -> bool:
        """Whether the last backup's stamp changed since last looked at (one lstat: the
        file is read again only when it was replaced)."""
        if self.store is None:
            return False
        if self._stamp_of is not self.store:  # built once: at each look it cost twice the lstat
            self._stamp_of, self._stamp = self.store, str(backup_stamp.stamp_path(self.store))
        try:
            info = os.lstat(self._stamp)
            seen: tuple[int, int, int] | None = (info.st_ino, info.st_mtime_ns, info.st_size)
        except OSError:
            seen = None
        if seen == self._stamp_seen:
            return False
        self._stamp_seen = seen
        was, self.backup = self.backup, backup_stamp.last_backup(self.store)
        return self.backup != was

    def behind_backup(self, actor: TableActor) -> bool:
        """Whether ``actor``'s last hub status predates the last backup's stamp (a look from
        another table's publish saw it first)."""
        told = self._told.get(actor.config.name, self.backup)
        return told != self.backup

    def hold(self) -> None:
        """From now on, keep what would be sent (see :meth:`release`)."""
        self.held = []

    def release(self, *, paint: bool = True) -> list[Held]:
        """Stop holding; what was held, for the caller to send (or drop with ``paint=False``)."""
        held, self.held = self.held or [], None
        if paint and self._paint is not None and self.painter is not None:
            self.painter.paint(*self._paint)
        self._paint = None
        return held

    def close(self) -> None:
        if self.painter is not None:
            self.painter.close()

    def all(self, actor: TableActor, *, hub_ready: bool = False, seat: int | None = None) -> None:
        """Every seat's screen, ``public``, the hub status and the host screen, if changed.

        ``seat``: after a ``ui`` event of that seat (a knob turn), only its station's
        screen is built again: a binding's ``ui`` state is per seat, and neither another
        seat's screen nor the host's reads it (tests/firmware/test_bindings_ui.py holds
        every game to that), nor does ``public`` (built from the game state alone).
        """
        with speaking(actor.language):
            self._all(actor, hub_ready=hub_ready, only=seat)

    def _all(self, actor: TableActor, *, hub_ready: bool, only: int | None = None) -> None:
        t = actor.topics
        table = actor.table
        if only is None:  # a lone seat's screen sends no status
            self.look_backup()
        if hub_ready:  # the claim first (see firmware.hub.claim), then what it owns
            self.retained(actor, t.hub_status, self._public(actor)[1], force=True)
        rev = (actor.record.game_no * 1_000_000 + table.events) if table and actor.record else 0
        if table is not None:
            due = actor.timer_due
            table.timer_left = None if due is None else max(0.0, due - self.clock())
            if only is None:  # what every station shows (a lone seat's may be a second on)
                actor.shown_left = None if table.timer_left is None else math.ceil(table.timer_left)
        step, turn = step_and_turn(table) if table is not None else ("", None)
        quiet = actor.menu.sound == "off"  # the host's "off" silences the stations' turn buzz
        stations = list(enumerate(actor.config.stations))
        for seat, station in stations if only is None else stations[only : only + 1]:
            if table is not None and seat < table.players:
                screen = table.binding.station_screen(table, seat)
                screen = msgspec.structs.replace(screen, phase=step, turn=seat == turn, quiet=quiet)
            else:
                screen = idle_screen(actor, station)
            # Compare without the revision: a station is sent a screen only when it changed.
            topic = t.station(station, "screen")
            content = proto.encode(screen)
            if actor.published.get(topic) != content:
                actor.published[topic] = content
                self.send(
                    actor,
                    topic,
                    proto.encode(msgspec.structs.replace(screen, rev=rev)),
                    retain=True,
                    qos=proto.ANSWER_QOS,
                )
        if only is not None:
            return
        public, status = self._public(actor)
        self.retained(actor, t.public, public)
        if not hub_ready:
            self.retained(actor, t.hub_status, status)
        self.host(actor)

    def claim_on(self, actor: TableActor) -> proto.Claim | None:
        """This hub's claim on the actor's table (naming the run it took it over from)."""
        if self.claim is None or actor.taken_from is None:
            return self.claim
        return msgspec.structs.replace(self.claim, took=actor.taken_from.run)

    def _public(self, actor: TableActor) -> tuple[bytes, bytes]:
        """``public`` and the hub status, built again only when the game state (or the
        countdown's second) moved: a knob turn changes neither."""
        self._told[actor.config.name] = self.backup
        table = actor.table
        if table is None:
            public: dict[str, Any] = {
                "game": None,
                "version": 0,
                "over": False,
                "menu": game_menu(actor.menu.games),
                "sound": actor.menu.sound,
            }
            status = proto.HubStatus(
                state="ready",
                claim=self.claim_on(actor),
                language=actor.language,
                stations=health.report(actor),
                selected=actor.menu.game_id if actor.menu.games else None,
                selected_players=actor.menu.players if actor.menu.games else None,
                backup=self.backup,
            )
            return proto.encode(public), proto.encode(status)
        seats = health.report(actor)
        stamp = self.backup
        key = (table, table.state, actor.shown_left, actor.language, actor.menu.sound, seats, stamp)
        cached = self._publics.get(actor.config.name)
        if cached is not None:
            (
                (was_table, was_state, was_left, was_language, was_sound, was_seats, was_stamp),
                public_bytes,
                status_bytes,
            ) = cached
            # Identity, not equality (a deep compare would cost what it saves; states are
            # frozen, so the same object is the same state).
            if (
                was_table is table
                and was_state is table.state
                and was_left == actor.shown_left
                and was_language == actor.language
                and was_sound == actor.menu.sound
                and was_seats == seats
                and was_stamp is stamp
            ):
                return public_bytes, status_bytes
        status = proto.HubStatus(
            state="ready",
            game=table.game_id,
            claim=self.claim_on(actor),
            language=actor.language,
            stations=seats,
            backup=stamp,
        )
        # What the table hears is the host's, not the game's: the TV's page obeys it.
        public = {**table.public(), "sound": actor.menu.sound}
        payloads = proto.encode(public), proto.encode(status)
        self._publics[actor.config.name] = (key, *payloads)
        return payloads

    def send(
        self,
        actor: TableActor,
        topic: str,
        payload: bytes,
        *,
        retain: bool = False,
        qos: int = proto.QOS,
    ) -> Any:
        if actor.state != "live":
            return None  # not this hub's table (yet): nothing goes out on it
        if len(payload) > proto.MAX_OUTPUT_BYTES:
            # The protocol's limit, well under the broker's packet limit: a broker that
            # drops the hub for an oversized packet would drop it again at every
            # reconnect. The last good copy stays; the table goes on.
            self.throttle.error(
                ("too big", topic),
                f"hub: {topic} not published: {len(payload)} bytes, over the protocol's "
                f"{proto.MAX_OUTPUT_BYTES} (a card set with very long texts?)",
            )
            return None
        if self.held is not None:
            self.held.append(Held(actor, topic, payload, retain, qos))
            return None
        assert actor.client is not None
        return actor.client.publish(topic, payload, retain=retain, qos=qos)

    def answer(self, actor: TableActor, station: str | None, ack: proto.Ack) -> None:
        """Answer a station's input, or the host's command when ``station`` is None (held
        like the rest while holding)."""
        if station is None:  # no host tool sends a command again by itself: QoS 1
            topic, qos = actor.topics.host_ack, proto.QOS
        else:
            topic, qos = actor.topics.station(station, "ack"), proto.ANSWER_QOS
        if actor.state != "live":
            return
        if self.held is not None:
            self.held.append(Held(actor, topic, ack, False, qos))
        else:
            self.send(actor, topic, proto.encode(ack), qos=qos)

    def retained(
        self, actor: TableActor, topic: str, payload: bytes, *, force: bool = False
    ) -> None:
        if not force and actor.published.get(topic) == payload:
            return
        actor.published[topic] = payload
        self.send(actor, topic, payload, retain=True)

    def note(self, actor: TableActor, msgid: str, params: dict[str, Any] | None = None) -> None:
        """A short note on the hub display's title, for NOTE_SECONDS (spoken when shown)."""
        actor.message, actor.message_at = msgid, self.clock()
        actor.message_params = dict(params or {})

    def host(self, actor: TableActor) -> None:
        """The host screen; the whole table when a backup was made since the last look
        (its status says so: a host command or a phone's console report shows it)."""
        if self.look_backup():
            self.all(actor)  # the host screen too
            return
        with speaking(actor.language):
            self._host(actor)

    def _host(self, actor: TableActor) -> None:
        if actor.refused is not None:
            self._paint_panel(actor, *refused_screen(actor.refused, several=self.tables > 1))
            return
        now = self.clock()
        table = actor.table
        hint = ""
        if table is not None and actor.menu.dismissed is not table:
            title, lines, hint = game_screen(table)
        else:
            title, lines = actor.menu.title(), actor.menu.lines(now)
        if actor.message and now - actor.message_at > NOTE_SECONDS:
            actor.message = ""  # a note is news, not a fixture: it gives its line back
        prompt = actor.menu.prompt(now)  # "back again: undo", what the next press does
        note = prompt or (refusal(actor.message, actor.message_params) if actor.message else "")
        if prompt or (note and not title.startswith(LAST_MARK)):
            # The title, so no seat's line on the track is ever hidden; but a clock in its
            # last seconds stays over a note (which lasts as long as they do).
            title = note
        shout = health.host_title(
            actor, noted=bool(note), now=now
        )  # a pairing code, the seats not ready
        if shout is not None:
            title = _(shout[0], **shout[1])
        # Which table the panel drives (the idle menu's title names it itself).
        named = self.tables > 1 and (table is not None or note or shout is not None)
        shown = _named(actor, title) if named else title
        actor.host_pages = page_count(lines, hint)
        held = actor.menu.held(actor.host_pages, now) if actor.playing else None
        if held == "help":  # ok stepped past the last page: what each button does
            title = shown = sound_title(actor.menu.sound)  # and what the table hears
            lines, hint, actor.host_pages = help_lines(hint), "", 1
        page = int(now // PAGE_SECONDS) if held is None or held == "help" else int(held)
        title, lines = paged(title, lines, hint, page)
        shown, _lines = paged(shown, [], "", page, pages=actor.host_pages)
        actor.host_page_at = now
        screen: dict[str, Any] = {"title": title, "lines": lines}
        codes = health.waiting_codes(actor)
        if codes:  # every waiting code, not only the title's: the host's console shows them
            screen["pairing"] = codes
        payload = proto.encode(screen)
        self.retained(actor, actor.topics.host_screen, payload)
        key = self.backups.glass(lambda: health.code_waits(actor))  # never in host/screen
        if key is not None:
            shown, lines = _("Backup key"), [*key, _("ok: written down")]
        self._paint_panel(actor, shown, lines)

    def _paint_panel(self, actor: TableActor, title: str, lines: list[str]) -> None:
        """The hub display, if the panel drives this table."""
        if self.painter is not None and actor is self.panel_actor:
            if self.held is not None:
                self._paint = (title, lines)  # drawn once the batch is committed
            else:
                self.painter.paint(title, lines)


def game_screen(table: Table) -> tuple[str, list[str], str]:
    """The hub display's title, lines and last line (what the host's next press does)
    for a game, running or over; a running timer's last seconds mark the title."""
    if table.over:
        return _("Game over"), final_ranking(table), _("ok: back to the menu")
    title, lines = table.binding.host_screen(table)
    left = table.timer_left
    if left is not None and seconds_shown(left, 0) <= LAST_SECONDS:
        # The binding's title says the seconds; in the last ones it is marked too, the
        # same for every game (the table display's clock turns red then).
        title = LAST_MARK + title
    return title, lines, next_hint(table)


def page_count(lines: list[str], hint: str) -> int:
    """How many pages ``lines`` take on the glass (a hint keeps the last line)."""
    return max(1, math.ceil(len(lines) / (BODY_LINES - 1 if hint else BODY_LINES)))


def paged(
    title: str, lines: list[str], hint: str, page: int, pages: int | None = None
) -> tuple[str, list[str]]:
    """One page of a screen (``page`` taken modulo the pages): its title ends "2/3" when
    there are several, no seat is ever dropped, and the hint is always the last line."""
    room = BODY_LINES - 1 if hint else BODY_LINES
    pages = page_count(lines, hint) if pages is None else pages
    if pages > 1:
        page %= pages
        title = f"{title[: CHARS - 4]} {page + 1}/{pages}"
        lines = lines[page * room : (page + 1) * room]
    if hint:
        lines = [*lines, *[""] * (room - len(lines)), hint]
    return title, lines


def next_hint(table: Table) -> str:
    """The hub display's last line during a game: what the host's next press does now
    ("next:close vote ok:?"), from the binding when it says, else from ``advance``."""
    said = getattr(table.binding, "next_hint", None)
    what = said(table) if said is not None else None
    if what is None:
        what = _("go on") if table.binding.advance(table) is not None else _("nothing now")
    return host_hint(what)


def sound_title(sound: str) -> str:
    """The help page's title: the table's sound setting ("Sound: cues+speech"), the one
    place the glass shows it during a game (the menu's Sound row sets it between games,
    ``coffre host sound`` at any time)."""
    return fit(_("Sound: {name}", name=_(SOUND_NAMES.get(sound, sound))))


def help_lines(hint: str) -> list[str]:
    """The page ``ok`` shows during a game: every button the host has."""
    return [hint, _("back twice: undo"), _("stop twice: end game"), _("ok: pages, this help")]


def fit(text: str) -> str:
    """A line cut to the glass, as the renderer measures it."""
    return text if len(glass(text)) <= CHARS else glass(text)[: CHARS - 1] + "."


def step_and_turn(table: Table) -> tuple[str, int | None]:
    """The round and phase a table is in ("2/vote": a station's toast ends with it), and
    the seat it waits on (the engine's ``to_play``; that seat's station buzzes when its
    turn begins), None when it waits on nobody in particular (everyone at once, or the
    game is over). One engine context for both: this runs at every publish."""
    ctx = table.engine.context(table.view(None))
    turn = ctx["to_play"]
    if table.over or not isinstance(turn, int) or isinstance(turn, bool):
        turn = None
    return proto.step(ctx["round"], ctx["phase"]), turn


def final_ranking(table: Table) -> list[str]:
    """The final ranking, winner first, two seats a line (places shared by a tie)."""
    pub = table.public()
    scores = pub["scores"] or []
    shorts = short_colours([s["colour"] for s in pub["seats"]])
    cells, place = [], 1
    for group in pub["ranking"] or []:
        for seat in group:
            cells.append(f"{place}.{numbered(shorts[seat], seat)} {scores[seat]}")
        place += len(group)
    if len(cells) % 2:
        cells.append("")
    rows = [f"{a:<11}{b}".rstrip() for a, b in zip(cells[::2], cells[1::2], strict=True)]
    return rows


def _named(actor: TableActor, title: str) -> str:
    """The title with the table's name first, cut to the glass."""
    text = f"{actor.config.name[:8]}: {title}"
    return text if len(text) <= CHARS else text[: CHARS - 1] + "~"


def refused_screen(verdict: Verdict, *, several: bool) -> tuple[str, list[str]]:
    """The hub display of a table this hub does not run (see firmware.hub.claim)."""
    title = _("Table {table} refused", table=verdict.table)
    if verdict.owner is not None:
        owner = verdict.owner
        lines = [_("Hub {hub} runs it", hub=owner.hub), _("on {host}", host=owner.host)[:CHARS]]
    else:
        lines = [_("The broker refuses"), _("this hub here")]
    lines.append(_("See the hub's log"))
    if several:
        lines.append(_("ok: next table"))
    return title, lines


#: What a connection problem is called on the hub display (the client's own words are
#: English, for the log).
_LINK_WORDS = {
    "not-found": N_("Broker not found"),
    "refused": N_("Broker not running"),
    "wrong-password": N_("Wrong password"),
    "wrong-ca": N_("Certificate: wrong CA"),
    "wrong-name": N_("Certificate: wrong name"),
    "tls": N_("TLS failed"),
    "disconnected": N_("Broker lost"),
}


def link_screen(actor: TableActor, state: LinkState, host: str) -> tuple[str, list[str]]:
    """The hub display while the hub's connection is not up (the first screen a host may
    see), in the table's language."""
    with speaking(actor.language):
        title = _("coffre hub {table}", table=actor.config.name)
        if state.state == "connecting":
            return title, [_("Connecting to"), f"{host}..."]
        words = _(_LINK_WORDS[state.state]) if state.state in _LINK_WORDS else state.text
        return title, [words, _("Retrying..."), _("See: journalctl"), "-u coffre-hub"]


def idle_screen(actor: TableActor, station: str) -> proto.Screen:
    """What a station shows when it has no seat in a running game."""
    return proto.Screen(
        rev=0,
        title=f"coffre {actor.config.name}",
        lines=(_("Station {name}", name=station), _("Waiting for the host")),
        led=(0, 0, 0),
    )


def game_menu(games: list[str]) -> list[dict[str, Any]]:
    """The games the host may start, as the idle table display lists them: each game's
    declaration (name, player range, its rules on one card), texts as message ids."""
    menu = []
    for game in games:
        info = get_info(game)
        menu.append(
            {
                "id": info.id,
                "name": info.name,
                "min": info.min_players,
                "max": info.max_players,
                "summary": info.summary,
                "options": [option_menu(o, info.max_players) for o in info.options],
            }
        )
    return menu


def option_menu(option: Option, max_players: int) -> dict[str, Any]:
    """One declared option as the host's console offers it: the values the panel offers
    (JSON, as ``-o`` reads them, with how each reads), or a range for a free number.
    Its label and each value's text are message ids, as the game declares them, for the
    console to say in its own language: ``[raw, text]``, or ``[raw, text, fields]`` for a
    text with fields (``["20", "{n} s", {"n": 20}]``)."""
    values: list[Any] = list(option.menu) or list(option.choices)
    if option.kind == "flag" and not values:
        values = [False, True]
    if option.kind == "seat":
        values = list(range(max_players))
    return {
        "name": option.name,
        "kind": option.kind,
        "label": option.label,
        "values": [[json.dumps(v), *_said(*value_text(option, v))] for v in values],
        "lo": option.lo,
        "hi": None if math.isinf(option.hi) else option.hi,
    }


def _said(msgid: str, params: dict[str, Any]) -> list[Any]:
    """A value's text as the menu carries it: ``[msgid]``, or ``[msgid, fields]``."""
    return [msgid, params] if params else [msgid]
