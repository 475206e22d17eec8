"""The MQTT protocol between stations, hub and host: topics and payload schemas.

Everything that crosses the broker is one of the ``msgspec`` structs below, so a
payload is validated (types, sizes) in one place before anything acts on it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar, get_args

import msgspec

ROOT = "coffre"
NAME_RE = re.compile(r"^[a-z0-9-]{1,32}$")

#: Largest payload the hub accepts from a station or the host (bytes).
MAX_INPUT_BYTES = 512
#: Largest payload the hub publishes (a screen or the public table).
MAX_OUTPUT_BYTES = 16 * 1024

QOS = 1
#: The QoS of the hub's answers to a station: its screen and its acks. At 0 the hub and
#: the station skip a PUBACK each (a third of the packets the hub handled per input),
#: and nothing is lost that QoS 1 would keep: the two are lost only with a connection,
#: and each comes back by itself. A screen is retained and a station subscribes at every
#: connection (the broker sends it the newest screen then); the hub sends every screen
#: again once its own connection is back (``ownership.connected``); an input whose ack
#: was lost stays pending on its station, which sends it again and is answered again
#: (the store keeps every answer). Everything else keeps QoS 1.
ANSWER_QOS = 0

#: Longest id a station input's answer can carry (its pattern allows 27).
INPUT_ID_CHARS = 32
#: Longest id a host command may carry (HostCommand.id).
HOST_ID_CHARS = 64

Name = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9-]{1,32}$")]
ShortText = Annotated[str, msgspec.Meta(max_length=64)]
InputId = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9]{1,16}:[0-9]{1,10}$")]
Uid = Annotated[str, msgspec.Meta(pattern=r"^[0-9A-F]{8}([0-9A-F]{6}){0,2}$")]


class ProtocolError(ValueError):
    """A payload that does not follow the protocol; the message is player-readable.

    ``id`` is the id the payload carried, when one could be read (to address the answer).
    """

    def __init__(self, message: str, id: str | None = None) -> None:
        super().__init__(message)
        self.id = id


@functools.lru_cache(maxsize=4096)  # the hub builds a station's topics on every publish
def check_name(name: str, what: str = "name") -> str:
    """Validate a table or station name (``[a-z0-9-]{1,32}``)."""
    if not NAME_RE.match(name):
        raise ValueError(f"bad {what} {name!r}: use a-z, 0-9 and '-', at most 32")
    return name


class Topics:
    """Topic builders for one table."""

    def __init__(self, table: str) -> None:
        self.table = check_name(table, "table")
        self.base = f"{ROOT}/{table}"

    @property
    def hub_status(self) -> str:
        return f"{self.base}/hub/status"

    @property
    def public(self) -> str:
        return f"{self.base}/public"

    @property
    def host_command(self) -> str:
        return f"{self.base}/host/command"

    @property
    def host_screen(self) -> str:
        return f"{self.base}/host/screen"

    @property
    def host_ack(self) -> str:
        """The hub's answer to a host command that carries an id (an :class:`Ack`)."""
        return f"{self.base}/host/ack"

    def station(self, station: str, leaf: str) -> str:
        """``station/<id>/<leaf>`` for leaf in status, input, screen, ack."""
        return f"{self.base}/station/{check_name(station, 'station')}/{leaf}"

    @property
    def all_station_inputs(self) -> str:
        return f"{self.base}/station/+/input"

    @property
    def all_station_status(self) -> str:
        return f"{self.base}/station/+/status"

    def parse_station_topic(self, topic: str) -> tuple[str, str] | None:
        """``(station, leaf)`` for a station topic of this table, else None."""
        prefix = f"{self.base}/station/"
        if not topic.startswith(prefix):
            return None
        rest = topic[len(prefix) :].split("/")
        if len(rest) != 2 or not NAME_RE.match(rest[0]):
            return None
        return rest[0], rest[1]


# --- station -> hub -----------------------------------------------------------------


class Input(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A raw input from a station: a tag, a knob turn or press, a button."""

    id: InputId
    kind: Literal["tag", "knob", "press", "button"]
    uid: Uid | None = None
    step: Annotated[int, msgspec.Meta(ge=-8, le=8)] | None = None
    button: Name | None = None

    @property
    def boot(self) -> str:
        return self.id.split(":", 1)[0]


class Hardware(msgspec.Struct, frozen=True):
    reader: ShortText = "unknown"
    display: ShortText = "unknown"
    controls: ShortText = "unknown"


class StationStatus(msgspec.Struct, frozen=True):
    """A station's retained status (its LWT says ``lost``)."""

    state: Literal["online", "lost", "offline", "error"]
    #: ``error``: the station's own one-line reason (no reader, display missing...).
    reason: ShortText = ""
    fw: ShortText = ""
    boot: ShortText = ""
    hw: Hardware = msgspec.field(default_factory=Hardware)
    tag: Uid | None = None  # what lies on the reader now (rebirth)


# --- hub -> station -----------------------------------------------------------------


class Secret(msgspec.Struct, frozen=True, omit_defaults=True):
    """The part of a screen shown only while the flap is open or peek held."""

    title: str = ""
    big: str = ""
    lines: tuple[str, ...] = ()


class Screen(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a station draws: a title bar, up to four lines, an optional secret."""

    rev: int
    title: str = ""
    lines: tuple[str, ...] = ()
    secret: Secret | None = None
    led: tuple[int, int, int] | None = None  # 0..255 per channel; None: leave as is
    #: Which step of the game this screen belongs to (round and phase, filled by the hub):
    #: a toast shown under one step ends when the next one begins.
    phase: str = ""
    #: The table waits on this seat now: the station buzzes when this turns on.
    turn: bool = False
    #: The host turned the table's sounds off: the station never buzzes for a turn.
    quiet: bool = False


#: A filled-in answer's field values, as an :class:`Ack` carries them (a station's name,
#: a count: words and numbers, never a structure).
Param = str | int | float


class Ack(msgspec.Struct, frozen=True, omit_defaults=True):
    """The hub's answer to one input; shown or beeped by the station at once.

    ``message`` is the line itself: a station's in its table's language, a host
    command's in English (``coffre host`` prints it). A host command's answer with fields
    (``Only 3 stations here``) also carries its message id and their values (``Only {n}
    stations here``, ``{"n": 3}``), so a console says it in its own language: see
    :func:`answer`. Left empty they are not sent: a station's ack is the same bytes as
    ever (``message`` has no default, so it is always sent, even empty).
    """

    id: str | None
    ok: bool
    message: str
    msgid: str = ""
    params: dict[str, Param] = {}


#: The longest message id and field value an answer carries (a refusal is one line).
ANSWER_TEXT_CHARS = 128


def answer(id: str | None, ok: bool, msgid: str, params: Mapping[str, Any] | None = None) -> Ack:
    """A host command's answer: ``msgid`` with its ``{fields}`` filled from ``params``
    as the message, and, when it has fields, the id and their values too (a console
    translates the id and fills it). Fields that are not words or numbers, or a text
    too long for one line, leave only the English message."""
    fields = dict(params or {})
    # A field that is a message id itself reads in English without its "|context" suffix
    # (the catalogues' convention: "off|sound" reads "off").
    english = {k: v.split("|", 1)[0] if isinstance(v, str) else v for k, v in fields.items()}
    try:
        message = msgid.format(**english) if fields else msgid
    except (KeyError, IndexError, ValueError):
        return Ack(id, ok, msgid)
    plain = all(
        isinstance(v, str | int | float)
        and not isinstance(v, bool)
        and len(str(v)) <= ANSWER_TEXT_CHARS
        for v in fields.values()
    )
    if not fields or not plain or len(msgid) > ANSWER_TEXT_CHARS:
        return Ack(id, ok, message)
    return Ack(id, ok, message, msgid, fields)


class Claim(msgspec.Struct, frozen=True):
    """Which hub process owns a table: carried by its hub status (and its will).

    ``hub`` is the hub's broker identity (stable across restarts, new for a copied store),
    ``run`` is new at every start, ``host`` the machine's name, for people; ``keepalive``
    (seconds) says when the broker publishes the will of an owner that vanished. No secret.
    """

    hub: Annotated[str, msgspec.Meta(max_length=32)]
    run: Annotated[str, msgspec.Meta(max_length=32)]
    host: ShortText = ""
    keepalive: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 10
    #: The run whose claim this hub was told to take the table over from (``coffre hub
    #: --take-over``); that run, alive after all, keeps the table.
    took: Annotated[str, msgspec.Meta(max_length=32)] = ""

    def same_run(self, other: Claim | None) -> bool:
        """``other`` is this very run of this hub."""
        return other is not None and (self.hub, self.run) == (other.hub, other.run)

    def beats(self, other: Claim) -> bool:
        """Two live claims on one table: the lower identity keeps it (the same on both hubs)."""
        return (self.hub, self.run) < (other.hub, other.run)


class SeatHealth(msgspec.Struct, frozen=True, omit_defaults=True):
    """One station's health in ``hub/status``: never-seen, pairing, online, offline or
    error (then ``reason``, the station's own line)."""

    state: Literal["never-seen", "pairing", "online", "offline", "error"]
    reason: ShortText = ""
    #: A pairing request waits for this seat while it is online or in error (it does not
    #: change the seat's state: a stranger may send one).
    asking: bool = False


class BackupStamp(msgspec.Struct, frozen=True, omit_defaults=True):
    """When the hub's last ``coffre backup`` was made (firmware/hub/backup.py writes it
    beside the store): Unix seconds, the archive's file name without its folder, its size
    in bytes. Only a time and a name: the archive itself never leaves the hub this way."""

    at: Annotated[int, msgspec.Meta(ge=0, le=2**40)]
    name: ShortText
    size: Annotated[int, msgspec.Meta(ge=0, le=2**50)]
    #: Sealed with a key the hub showed on its glass (the console asked for it): the
    #: console offers it for download (firmware/hub/backup_request.py).
    sealed: bool = False


#: How root names the console's sealed backups (``coffre-backup-<host>-<when>.sealed``,
#: firmware/hub/backup_request.py); the display serves the newest so named.
SEALED_BACKUP = ("coffre-backup-", ".sealed")


class HubStatus(msgspec.Struct, frozen=True):
    """The hub's retained status (LWT ``lost``); ``claim`` names the owner (absent from an
    older hub; stations and displays ignore it).

    It holds only what changes between moves, not with them: a move's version and phase
    are ``public``'s. Every station, the display and the hub itself hear each status,
    so one that changed with every move would cost each station a message at every tap,
    in the time its screen is drawn. An older hub's ``version`` and ``phase`` are
    ignored when read."""

    state: Literal["ready", "lost", "disconnected"]
    game: str | None = None
    claim: Claim | None = None
    #: What the table speaks (``fr``/``en``): the table display follows it.
    language: str | None = None
    #: Every station's health (firmware.hub.health): the table display marks a seat
    #: offline from it.
    stations: dict[str, SeatHealth] | None = None
    #: Between games, the game the host has picked on the panel and the number of players
    #: set there (the table display shows that game's rules); None while a game runs.
    selected: str | None = None
    selected_players: int | None = None
    #: The last backup made on the hub (None: none yet, or its stamp unreadable).
    backup: BackupStamp | None = None


# --- host -> hub --------------------------------------------------------------------


#: A table's sound setting, quietest first: nothing (the TV silent, the stations never
#: buzz a turn), cues (the TV's short sounds, the stations' turn buzz), cues and the TV's
#: spoken narration. Kept by the hub per table, published in ``public["sound"]``.
Sound = Literal["off", "cues", "narration"]
SOUNDS: tuple[str, ...] = get_args(Sound)

#: What a host command may ask (:class:`HostCommand`'s ``cmd``).
HostCmd = Literal[
    "start",
    "next",
    "undo",
    "abort",
    "pair",
    "refuse",
    "console",
    "console-ok",
    "console-refuse",
    "console-report",
    "console-sessions",
    "console-end",
    "sound",
    "language",
    "backup",
]
#: The commands only the display's console sends for a phone (a sign-in request, the
#: report of its signed-in phones); the others a host may type (``coffre host``).
CONSOLE_ONLY = ("console", "console-report")
HOST_ACTIONS: tuple[str, ...] = tuple(c for c in get_args(HostCmd) if c not in CONSOLE_ONLY)


def step(round_: object, phase: object) -> str:
    """The round and phase a table is in, as one word ("2/vote"): a station screen's
    ``phase`` and what ``next`` may carry (the hub and the console build it alike)."""
    return f"{round_ or ''}/{phase or ''}"


class HostCommand(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A host command: start a game, next, undo, abort; pair or refuse a station; ask for,
    grant or refuse the host's console; set what the table hears and the language it
    speaks (docs/host-guide.md).

    ``id`` is required: the hub remembers the answer under it, so a command the broker
    delivers again (the hub died before acking it) is answered again, not redone. Without
    one, a redelivered "undo" would undo two moves.
    """

    cmd: HostCmd
    id: ShortText
    #: ``pair`` and ``refuse``: the station whose pairing the host answers (``refuse``
    #: without one: the one the hub display shows). ``console-end``: the console session
    #: to end (its id as ``console-sessions`` lists it), or ``all``.
    station: Name | None = None
    #: ``pair``: the code the host compared on the station's glass; the hub grants only
    #: the request whose code it is. ``console`` (a phone asks for the host's console; the
    #: hub answers it when the host has said yes or no) and ``console-ok`` carry one too.
    code: Annotated[str, msgspec.Meta(pattern=r"^[0-9]{4}$")] | None = None
    game: Name | None = None
    players: Annotated[int, msgspec.Meta(ge=1, le=16)] | None = None
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)] | None = None
    #: ``sound``: what the table hears from now on (see :data:`SOUNDS`).
    sound: Sound | None = None
    #: ``language``: what the table speaks from now on (one of
    #: :data:`firmware.link.lang.LANGUAGES`; the hub refuses another in one line).
    language: Annotated[str, msgspec.Meta(max_length=8)] | None = None
    #: ``next``: the round and phase the host saw (``"2/vote"``, as a station screen's
    #: ``phase``); the hub refuses the skip once the table is elsewhere, so a second tap
    #: (or a second host) never skips the step after the one meant. None: no check.
    step: ShortText | None = None


_encoder = msgspec.json.Encoder(order="deterministic")
_T = TypeVar("_T")


def encode(obj: Any) -> bytes:
    """Deterministic JSON bytes of any protocol struct or plain data."""
    return _encoder.encode(obj)


def decode_input(payload: bytes) -> Input:
    """Parse a station input or raise ProtocolError with a readable message."""
    return _decode(payload, Input)


def decode_host_command(payload: bytes) -> HostCommand:
    """Parse a host command or raise ProtocolError with a readable message."""
    try:
        return _decode(payload, HostCommand, longest=HOST_ID_CHARS)
    except ProtocolError as exc:
        if "missing required field `id`" in str(exc):
            raise ProtocolError("Host command needs an id") from None
        raise


def decode_hub_status(payload: bytes) -> HubStatus:
    """Parse a hub's status (another hub's claim) or raise ProtocolError."""
    return _parse(payload, HubStatus)


def decode_status(payload: bytes) -> StationStatus:
    """Parse a station's status or raise ProtocolError with a readable message."""
    return _decode(payload, StationStatus)


def _decode(payload: bytes, kind: type[_T], *, longest: int = INPUT_ID_CHARS) -> _T:
    try:
        return _parse(payload, kind)
    except ProtocolError as exc:
        exc.id = salvage_id(payload, longest=longest)
        raise


def _parse(payload: bytes, kind: type[_T]) -> _T:
    if len(payload) > MAX_INPUT_BYTES:
        raise ProtocolError("Message too big")
    try:
        # msgspec checks UTF-8 only where it builds a str (not in a key it skips), and
        # lets UnicodeDecodeError escape: check the whole payload first.
        payload.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("Bad message: not UTF-8") from None
    try:
        return msgspec.json.decode(payload, type=kind)
    except msgspec.ValidationError as exc:  # a DecodeError subclass: catch it first
        raise ProtocolError(f"Bad message: {exc}"[:63]) from None
    except msgspec.DecodeError:
        raise ProtocolError("Bad message: not JSON") from None


def salvage_id(payload: bytes, *, longest: int = INPUT_ID_CHARS) -> str | None:
    """Best-effort id from a payload that failed validation (to address the answer).

    Whatever else is wrong (bytes that are not UTF-8, a number JSON cannot hold, a lone
    surrogate escape), an ``"id": "..."`` of at most ``longest`` plain characters names
    the input or command it was; an id that was itself broken is not an id, nor is one of
    several different ones. An oversized payload is not read at all.
    """
    if len(payload) > MAX_INPUT_BYTES:
        return None
    try:
        data = msgspec.json.decode(payload.decode("utf-8", errors="replace").encode())
    except msgspec.DecodeError:
        pass  # not JSON as a whole (1e999, a lone surrogate): the raw bytes may name it
    else:
        value = data.get("id") if isinstance(data, dict) else None
        ok = isinstance(value, str) and 0 < len(value) <= longest and "\ufffd" not in value
        return value if ok else None
    found = {m.group(1) for m in _RAW_ID.finditer(payload)}
    if len(found) != 1:
        return None
    value = found.pop().decode("ascii", errors="replace")
    return value if len(value) <= longest and "\ufffd" not in value else None


#: An id in raw bytes: printable ASCII without quotes or escapes (what real ids are).
_RAW_ID = re.compile(rb'"id"\s*:\s*"([\x20-\x21\x23-\x5b\x5d-\x7e]{1,64})"')


#: A pairing code as the hub shows it (four digits).
PAIR_CODE_RE = re.compile(r"[0-9]{4}")


def pairing_codes(screen: bytes) -> dict[str, str]:
    """The waiting pairing codes a host screen names (``"pairing": {"p6": "4721"}``): a
    station's name and four digits each; anything else is left out (the console shows
    them, ``coffre host status`` prints them)."""
    try:
        said: Any = msgspec.json.decode(screen)
    except msgspec.DecodeError:
        return {}
    codes = said.get("pairing") if isinstance(said, dict) else None
    if not isinstance(codes, dict):
        return {}
    return {
        seat: code
        for seat, code in codes.items()
        if NAME_RE.fullmatch(seat) and isinstance(code, str) and PAIR_CODE_RE.fullmatch(code)
    }
