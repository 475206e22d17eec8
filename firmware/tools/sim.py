"""``coffre sim``: a simulated table plays a whole game, and every screen is saved.

It starts a broker (mosquitto when installed, else an embedded one), the hub and one
station per player (:mod:`firmware.tools.simtable`), then the game's bots
(:mod:`firmware.tools.bots`) play by tapping keys on the stations' mock readers,
turning and pressing their knobs and lifting their flaps.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from PIL import Image

from firmware.link.lang import ranks
from firmware.tools.simtable import TABLE, SimTable

# --- saving screens -------------------------------------------------------------------------


def save_frames(frames: list[Image.Image], folder: Path) -> int:
    """One PNG per distinct screen, plus an animated GIF of them all."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, frame in enumerate(frames):
        frame.convert("1").save(folder / f"{i:04d}.png")
    if frames:
        big = [f.convert("L").resize((256, 128), Image.Resampling.NEAREST) for f in frames]
        big[0].save(
            folder / "screens.gif", save_all=True, append_images=big[1:], duration=400, loop=0
        )
    return len(frames)


def save_texts(log: list[dict[str, Any]], path: Path) -> None:
    """One JSON line per saved screen: time, station (or hub), frame, title, lines, secret."""
    with path.open("w", encoding="utf-8") as f:
        for entry in log:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def recorded_frames(sim: SimTable, station: str) -> list[Image.Image]:
    display = sim.devices[station].display
    frames: list[Image.Image] = getattr(display, "frames", [])
    return frames


# --- the command ------------------------------------------------------------------------------


@contextlib.contextmanager
def running_table(sim: SimTable) -> Iterator[SimTable]:
    try:  # a stop half-way through start still ends what had started
        sim.start()
        yield sim
    finally:
        sim.stop()


#: What ends the sim as Ctrl-C does: `timeout`, CI runners and scripts send SIGTERM, a
#: closed terminal SIGHUP.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(SystemExit):
    """The sim was told to stop by a signal; its table is stopped on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.name = signal.Signals(signum).name


@contextlib.contextmanager
def ended_by_signals() -> Iterator[None]:
    """SIGTERM or SIGHUP raise :class:`Stopped` in the main thread, so every ``finally`` on
    the way out runs: without this the process would vanish at once and leave the mosquitto
    it started running. A second signal during that clean-up is ignored (SIGKILL is not)."""

    def stop(signum: int, _frame: Any) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


#: Written into ``--out``: the folder is the sim's, and these are the files it wrote.
MANIFEST = ".coffre-sim"


def claim_out(out: Path) -> str | None:
    """Make ``out`` ready for a new run; the reason if it is not the sim's to clear.

    A new or empty folder is taken; a folder an earlier run wrote loses only the files
    that run listed in its manifest; any other folder is refused untouched.
    """
    manifest = out / MANIFEST
    if out.exists() and not out.is_dir():
        return f"--out {out} is a file, not a folder"
    if out.is_dir() and any(out.iterdir()) and not manifest.is_file():
        return f"--out {out} is not empty and was not written by coffre sim: choose another"
    if manifest.is_file():
        for line in manifest.read_text().splitlines():
            name = Path(line)
            if line and not name.is_absolute() and ".." not in name.parts:
                (out / name).unlink(missing_ok=True)
        for folder in sorted((p for p in out.rglob("*") if p.is_dir()), reverse=True):
            with contextlib.suppress(OSError):  # only the ones left empty
                folder.rmdir()
    out.mkdir(parents=True, exist_ok=True)
    manifest.write_text("")
    return None


def _record_written(out: Path) -> None:
    written = sorted(
        str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != MANIFEST
    )
    (out / MANIFEST).write_text("".join(f"{name}\n" for name in written))


def main(args: Any) -> int:
    """``coffre sim``: play a whole simulated game and save the screens."""
    from firmware.hub.bindings import bound_games
    from firmware.tools.bots import has_bot
    from rules import GAMES, get_game

    args.game = args.game or GAMES[0]
    engine = get_game(args.game)
    if not engine.min_players <= args.players <= engine.max_players:
        print(
            f"coffre: sim: {args.game} is for {engine.min_players} to {engine.max_players} "
            f"players, not {args.players}",
            file=sys.stderr,
        )
        return 2
    if args.game not in bound_games() or not has_bot(args.game):
        print(f"coffre sim: {args.game} has no table binding or bots yet (try {GAMES[0]})")
        return 2
    options = _options(args)
    if options is None:
        return 2
    out = Path(args.out)
    refusal = claim_out(out)
    if refusal is not None:
        print(f"coffre: sim: {refusal}", file=sys.stderr)
        return 2
    try:
        with ended_by_signals():
            return _play(args, options, out)
    except Stopped as stopped:
        print(
            f"coffre: sim: stopped by {stopped.name}; its broker and table are stopped too",
            file=sys.stderr,
        )
        return int(stopped.code or 1)


def _play(args: Any, options: dict[str, Any], out: Path) -> int:
    """Start the table, let the bots play, save the screens; the table stops however it ends."""
    workdir = Path(tempfile.mkdtemp(prefix="coffre-sim-"))
    try:
        return _play_in(args, options, out, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _play_in(args: Any, options: dict[str, Any], out: Path, workdir: Path) -> int:
    from firmware.tools.bots import bot_class

    sim = SimTable(
        players=args.players,
        workdir=workdir,
        embedded=True if args.embedded_broker else None,
        device_backend="emulated" if args.emulate_chips else "mock",
        language=getattr(args, "language", "en"),
    )
    rng = random.Random(args.seed)
    started = time.monotonic()
    with running_table(sim):
        kind = "mosquitto with ACL over TLS" if sim.broker.access else "embedded amqtt"
        print(f"broker: {kind} on 127.0.0.1:{sim.broker.port}")
        print(f"hub and {len(sim.names)} stations ({sim.device_backend} hardware) are up")
        display = start_display(sim, getattr(args, "display", None))
        bot = bot_class(args.game)(sim, sim.watch, rng)
        if args.pace and hasattr(bot, "reveal_pause"):
            bot.reveal_pause = args.pace
        # The bots' own defaults (Ultra Secret's bots declare under declare=any) give way.
        bot.options = {**bot.options, **options}
        bot.start_game(args.players)
        print(f"host started {args.game} for {args.players} players, options: {_shown(bot)}")
        final = bot.play()
        time.sleep(0.2)
        linger(getattr(args, "linger", 0.0), display)
        saved = 0
        for name in sim.names:
            saved += save_frames(_frames(sim, name), out / name)
        saved += save_frames(list(getattr(sim.panel.display, "frames", [])), out / "hub")
        save_texts(sim.screen_log, out / "screens.jsonl")
    _record_written(out)
    print(f"game over in {time.monotonic() - started:.1f} s", end="")
    view = final.get("view") or {}
    if view.get("mode") == "coop":
        _print_team(view)
    else:
        _print_ranking(args.game, final)
    print(f"saved {saved} screens under {out}/ (one folder per station, hub/ for the host)")
    print(f"and their text in {out / 'screens.jsonl'}")
    return 0


def _options(args: Any) -> dict[str, Any] | None:
    """The ``-o key=value`` options, checked by the engine as ``coffre play`` does."""
    from firmware.tools.scenario import parse_options
    from rules import get_game
    from rules.core import RulesError

    options = parse_options(args.option or [], args.game)
    try:
        get_game(args.game).setup(args.players, options, args.seed)
    except RulesError as exc:
        print(f"coffre sim: {exc}")
        return None
    return options


def _shown(bot: Any) -> str:
    options: dict[str, Any] = bot.options
    shown = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in options.items()]
    return " ".join(sorted(shown)) or "defaults"


def _print_team(view: dict[str, Any]) -> None:
    """Co-op: the team's right answers and its result band."""
    result = view.get("result") or {}
    lo, hi = result.get("band", [0, 0])
    turns = len(view.get("history") or [])
    print(f"; the team found {result.get('right', 0)} keys in {turns} turns")
    print(f"team result band {lo}-{hi} right answers: {result.get('text', '')}")


def _print_ranking(game: str, final: dict[str, Any]) -> None:
    seats = final["seats"]
    scores = final["scores"]
    tie_break = (final.get("labels") or {}).get("tie_break")
    print(f"; final ranking ({tie_break}):" if tie_break else "; final ranking:")
    places = ranks(final["ranking"])  # ties share a place, the next skips: 1, 2, 2, 4
    for group in final["ranking"]:
        for seat in group:
            place = places[seat]
            extra = ""
            seat_view = (final.get("view") or {}).get("seats") or []
            if seat < len(seat_view) and "pictos_left" in seat_view[seat]:
                left = seat_view[seat]["pictos_left"]
                extra = f"  ({left} picto card{'' if left == 1 else 's'} left)"
            name = seats[seat]["colour"]  # the game's own colour where it has one
            unit = "point" if scores[seat] == 1 else "points"
            print(f"  {place}. {name:<7} {scores[seat]:>3} {unit}{extra}")
    view = final.get("view") or {}
    for key in ("outcome", "winners", "result"):
        if view.get(key) not in (None, [], {}):
            print(f"{key}: {json.dumps(view[key], ensure_ascii=False)}")


def start_display(sim: SimTable, port: int | None) -> Any:
    """``--display PORT``: the table display of the simulated table (None: no display)."""
    if port is None:
        return None
    from firmware.display.server import Display
    from firmware.hub.brokerconf import SPECTATOR_USER

    display = Display(
        sim.broker.config(SPECTATOR_USER),
        [TABLE],
        host="127.0.0.1",
        port=port,
        language=sim.language,
    )
    display.start()
    sim.on_stop.append(display.stop)
    print(f"table display: {display.url}table/{TABLE}", flush=True)
    return display


def linger(seconds: float, display: Any) -> None:
    """``--linger SECONDS``: keep everything up so a person can look at the final state."""
    if seconds > 0:
        where = f" (the display: {display.url}table/{TABLE})" if display else ""
        print(f"game over; staying up {seconds:g} s{where}", flush=True)
        time.sleep(seconds)


def _frames(sim: SimTable, name: str) -> list[Image.Image]:
    if sim.device_backend == "emulated":
        emu = sim.emulated[name]
        frames: list[Image.Image] = list(getattr(emu, "frames", []) or [])
        return frames or [emu.screen()]
    return recorded_frames(sim, name)
