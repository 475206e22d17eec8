"""Host commands (start, next, undo, abort, sound, language, backup), from ``host/command``
or the panel's menu.

A command is deduplicated on its id like a station's input, every one is answered on
``host/ack`` (the command line waits for it) and shows a short note on the hub display.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from firmware.hub import backup_ask, console, health, pairing
from firmware.hub.actor import TableActor
from firmware.hub.bindings import bound_games
from firmware.hub.cardsets import own_card_set
from firmware.hub.context import Batch, HubContext
from firmware.hub.hostmenu import (
    LANGUAGE_NAMES,
    SOUND_NAMES,
    language_key,
    language_setting,
    sound_key,
)
from firmware.hub.inputs import bad_payload
from firmware.hub.moves import NOT_SAVED, STORE_ERRORS, apply, new_table, remember
from firmware.hub.publish import step_and_turn
from firmware.link import protocol as proto
from firmware.link.lang import LANGUAGES, N_
from rules import get_game, get_info
from rules.core import IllegalAction, RulesError

log = logging.getLogger(__name__)


def host_payload(ctx: HubContext, batch: Batch, actor: TableActor, payload: bytes) -> None:
    """A command as ``host/command`` carries it: decoded, run, the host screen redrawn."""
    try:
        cmd = proto.decode_host_command(payload)
    except proto.ProtocolError as exc:
        bad_payload(ctx, actor, "host", exc)
        ctx.out.note(actor, str(exc))
        if exc.id is not None:
            ctx.out.answer(actor, None, proto.Ack(exc.id, False, str(exc)))
        ctx.out.host(actor)
        return
    host_command(ctx, batch, actor, cmd)
    ctx.out.host(actor)


def host_command(ctx: HubContext, batch: Batch, actor: TableActor, cmd: proto.HostCommand) -> None:
    """Run one command once (a resent one gets its first answer again) and answer it."""
    # Host ids live apart from station ids (a station may be called "host").
    source_id = f"{actor.config.name}!host/{cmd.id}"

    def answer(ok: bool, message: str, params: dict[str, Any] | None = None) -> None:
        """Every command is answered on host/ack (the command line waits); a message with
        fields carries its id and their values too, for a console to say in its language."""
        ctx.out.answer(actor, None, proto.answer(cmd.id, ok, message, params))

    # Nothing stored: a pairing lives only while it waits. ``pair`` grants only the
    # request whose code the host compared (``pair p6 4721``), never "whatever waits".
    if cmd.cmd == "pair":
        answer(*pairing.confirm(ctx, actor, cmd.station, code=cmd.code))
        return
    if cmd.cmd == "refuse":
        answer(*pairing.refuse(ctx, actor, cmd.station))
        return
    if cmd.cmd == "backup":  # made by root, its key on the glass (firmware/hub/backup_ask.py)
        ctx.out.answer(actor, None, backup_ask.command(ctx, actor, cmd))
        return
    # A phone's request for the console is answered when the host has said yes or no; the
    # display's report of its phones when the host ends one (firmware/hub/console.py).
    if cmd.cmd.startswith("console"):
        said = console.command(ctx, actor, cmd)
        if said is not None:
            answer(*said)
        return
    prior = ctx.store.answer(source_id)
    if prior is not None:
        answer(*prior)  # a resent command: the first answer again, nothing redone
        return
    try:
        if cmd.cmd in ("sound", "language"):
            # "Sound: cues+speech": the setting as the glass names it, which a console
            # says in its own language.
            if cmd.cmd == "sound":
                setting = set_sound(ctx, batch, actor, cmd.sound)
            else:
                setting = set_language(ctx, batch, actor, cmd.language)
            ack = proto.answer(cmd.id, True, *setting)
            remember(ctx, batch, actor, source_id, True, ack.message, keep=True)
            ctx.out.answer(actor, None, ack)
            return
        if cmd.cmd == "start":
            start(ctx, batch, actor, cmd)
            remember(ctx, batch, actor, source_id, True, "Game started", keep=True)
            ctx.out.note(actor, N_("Game started"))
            answer(True, "Game started")
            return
        table = actor.table
        if table is None or table.over:
            raise IllegalAction("No game running")
        if cmd.cmd == "next":
            if cmd.step is not None and cmd.step != step_and_turn(table)[0]:
                raise IllegalAction("The game moved on: look again")
            body = table.binding.advance(table)
            if body is None:
                raise IllegalAction("Nothing to skip now")
            apply(ctx, batch, actor, body, source_id)
        elif cmd.cmd == "undo":
            apply(ctx, batch, actor, {"undo": True}, source_id)
        elif cmd.cmd == "abort":
            assert actor.record is not None
            ctx.store.set_status(actor.record.table_id, actor.record.game_no, "aborted")
            log.info("%s: game %d aborted by the host", actor.config.name, actor.record.game_no)
            batch.touch(actor)
            remember(ctx, batch, actor, source_id, True, "", keep=True)
            actor.table = None
            actor.record = None
            actor.timer_due = None
            ctx.out.all(actor)
        actor.message = ""
        answer(True, "")
    except IllegalAction as exc:
        remember(ctx, batch, actor, source_id, False, exc.message, keep=True)
        ctx.out.note(actor, exc.msgid, exc.params)
        answer(False, exc.msgid, exc.params)
    except RulesError as exc:
        remember(ctx, batch, actor, source_id, False, str(exc)[:63], keep=True)
        ctx.out.note(actor, str(exc))
        answer(False, str(exc)[:63])
    except STORE_ERRORS as exc:
        batch.broken = exc
        ctx.out.note(actor, NOT_SAVED)
        answer(False, NOT_SAVED)
    except Exception:
        log.exception("hub: host command %s failed", cmd.cmd)
        ctx.out.note(actor, N_("Hub error: see its log"))
        answer(False, "Hub error: see its log")


def set_sound(
    ctx: HubContext, batch: Batch, actor: TableActor, sound: str | None
) -> tuple[str, dict[str, Any]]:
    """What the table hears from now on, kept in the store (a restarted hub keeps it):
    published in ``public`` (the TV obeys it) and, when off, on every seat's screen as
    ``quiet`` (no station buzzes a turn). Any time, a game running or not."""
    if sound not in proto.SOUNDS:
        raise IllegalAction("Sound: off, cues or narration")
    ctx.store.put_setting(sound_key(actor.config.name), sound)
    batch.touch(actor)  # a batch rolled back reads the setting back from the store
    actor.menu.sound = sound
    log.info("%s: sound %s, set by the host", actor.config.name, sound)
    said = N_("Sound: {name}"), {"name": SOUND_NAMES[sound]}
    ctx.out.note(actor, *said)
    ctx.out.all(actor)
    return said


def set_language(
    ctx: HubContext, batch: Batch, actor: TableActor, language: str | None
) -> tuple[str, dict[str, Any]]:
    """What the table speaks from now on (its stations, the hub's glass, the TV through the
    hub's status), kept in the store beside the hub.toml language it overrides: a
    restarted hub keeps it, and a hub.toml edited to another language wins again (see
    firmware.hub.moves.resume). Any time, a game running or not."""
    if language not in LANGUAGES:
        raise IllegalAction("Language: one of {choices}", choices=", ".join(LANGUAGES))
    ctx.store.put_setting(
        language_key(actor.config.name), language_setting(language, actor.config.language)
    )
    batch.touch(actor)  # a batch rolled back reads the setting back from the store
    actor.menu.language = language
    log.info("%s: language %s, set by the host", actor.config.name, language)
    said = N_("Language: {name}"), {"name": LANGUAGE_NAMES[language]}
    ctx.out.note(actor, *said)
    ctx.out.all(actor)
    return said


def start(ctx: HubContext, batch: Batch, actor: TableActor, cmd: proto.HostCommand) -> None:
    """A new game on the table, stored before anything shows it."""
    if actor.playing:
        # Only an explicit abort ends a game: a second panel, a script or a stray command
        # line must not wipe one out with a start.
        raise IllegalAction("A game is running: abort it first")
    game = cmd.game or actor.menu.games[actor.menu.game]
    players = cmd.players or actor.menu.players
    if game not in bound_games():
        raise IllegalAction("No table binding for {game}", game=game)
    if players > len(actor.config.stations):
        raise IllegalAction("Only {n} stations here", n=len(actor.config.stations))
    seed = cmd.seed if cmd.seed is not None else actor.config.seed
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "big") >> 1  # 63 bits: no brute force
    stations = actor.config.stations[:players]
    missing = health.may_start(actor, stations, ctx.clock())
    if missing:
        raise IllegalAction(
            "Not online: {stations}. Start again to go ahead", stations=" ".join(missing)
        )
    # The record keeps the data files' content (a deck, a card set): a restarted hub
    # replays the game from it even if the owner's file changed or is gone.
    # What the host left unsaid follows the table (Incognito's words speak its language).
    given = {**get_info(game).table_defaults(actor.language), **cmd.options}
    options = get_game(game).pin_options(own_card_set(actor.config, game, given))
    # Validate by setting up before anything is stored.
    get_game(game).setup(players, options, seed)
    record = ctx.store.new_game(actor.config.name, game, players, options, seed, stations)
    batch.touch(actor)
    actor.record = record
    actor.table = new_table(ctx, actor, record)
    actor.timer_due = None
    log.info(
        "%s: game %d (%s) started for %d players",
        actor.config.name,
        record.game_no,
        game,
        players,
    )
    ctx.out.all(actor)
