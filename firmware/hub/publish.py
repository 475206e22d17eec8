"""What the hub publishes for a table: screens, ``public``, its status and the host screen.

A topic is sent only when its content changed (screens are compared without their
revision), so an input that changes one seat's screen costs one message to that seat.
The hub display on the panel shows the host screen of the table the panel drives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import msgspec

from device.panel import Panel
from firmware.hub.actor import NOTE_SECONDS, PAGE_SECONDS, TableActor
from firmware.hub.table import Table
from firmware.link import protocol as proto
from firmware.link.render import BODY_LINES, CHARS, render_lines


class Publisher:
    """Publishes a table's state on its own connection; the panel follows ``panel_actor``."""

    def __init__(self, clock: Callable[[], float], panel: Panel | None = None) -> None:
        self.clock = clock
        self.panel = panel
        self.panel_actor: TableActor | None = None

    def all(self, actor: TableActor, *, hub_ready: bool = False) -> None:
        """Every seat's screen, ``public``, the hub status and the host screen, if changed."""
        t = actor.topics
        table = actor.table
        rev = (actor.record.game_no * 1_000_000 + table.events) if table and actor.record else 0
        if table is not None:
            due = actor.timer_due
            table.timer_left = None if due is None else max(0.0, due - self.clock())
            actor.shown_left = None if table.timer_left is None else math.ceil(table.timer_left)
        for seat, station in enumerate(actor.config.stations):
            if table is not None and seat < table.players:
                screen = table.binding.station_screen(table, seat)
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
                )
        public = table.public() if table else {"game": None, "version": 0, "over": False}
        self.retained(actor, t.public, proto.encode(public))
        view = table.view(None) if table else {}
        status = proto.HubStatus(
            state="ready",
            version=table.state.version if table else 0,
            game=table.game_id if table else None,
            phase=view.get("phase"),
        )
        self.retained(actor, t.hub_status, proto.encode(status), force=hub_ready)
        self.host(actor)

    def send(self, actor: TableActor, topic: str, payload: bytes, *, retain: bool = False) -> Any:
        assert actor.client is not None
        return actor.client.publish(topic, payload, retain=retain)

    def retained(
        self, actor: TableActor, topic: str, payload: bytes, *, force: bool = False
    ) -> None:
        if not force and actor.published.get(topic) == payload:
            return
        actor.published[topic] = payload
        self.send(actor, topic, payload, retain=True)

    def note(self, actor: TableActor, text: str) -> None:
        """A short note on the hub display's last line, for NOTE_SECONDS."""
        actor.message, actor.message_at = text, self.clock()

    def host(self, actor: TableActor) -> None:
        now = self.clock()
        table = actor.table
        if table is not None:
            title, lines = table.binding.host_screen(table)
            if table.over:
                title, lines = "Game over", final_ranking(table)
        else:
            title, lines = "coffre: new game", actor.menu.lines(now)
        if actor.message and now - actor.message_at > NOTE_SECONDS:
            actor.message = ""  # a note is news, not a fixture: it gives its line back
        note = actor.menu.prompt(now) or actor.message
        if note:
            title = note  # the title, so no seat's line on the track is ever hidden
        if actor.offline:
            title = "Offline: " + " ".join(sorted(actor.offline))
        actor.host_pages = max(1, math.ceil(len(lines) / BODY_LINES))
        if actor.host_pages > 1:  # no seat is ever dropped: the pages take turns
            page = int(now // PAGE_SECONDS) % actor.host_pages
            title = f"{title[: CHARS - 4]} {page + 1}/{actor.host_pages}"
            lines = lines[page * BODY_LINES : (page + 1) * BODY_LINES]
        actor.host_page_at = now
        payload = proto.encode({"title": title, "lines": lines})
        self.retained(actor, actor.topics.host_screen, payload)
        if self.panel is not None and actor is self.panel_actor:
            self.panel.display.show(render_lines(title, lines))


def final_ranking(table: Table) -> list[str]:
    """The final ranking, winner first, two seats a line (places shared by a tie)."""
    pub = table.public()
    scores = pub["scores"] or []
    own = pub["view"].get("colours") if table.game_id == "ultra-secret" else None
    cells, place = [], 1
    for group in pub["ranking"] or []:
        for seat in group:
            name = own[seat] if own else table.seating.colours[seat]
            cells.append(f"{place}.{name.capitalize()[:5]} {scores[seat]}")
        place += len(group)
    if len(cells) % 2:
        cells.append("")
    rows = [f"{a:<11}{b}".rstrip() for a, b in zip(cells[::2], cells[1::2], strict=True)]
    return rows


def idle_screen(actor: TableActor, station: str) -> proto.Screen:
    """What a station shows when it has no seat in a running game."""
    return proto.Screen(
        rev=0,
        title=f"coffre {actor.config.name}",
        lines=(f"Station {station}", "Waiting for the host"),
        led=(0, 0, 0),
    )
