"""Configuration pieces that hub and station files share: errors, reading, the [broker] section.

Files are decoded into msgspec structs that refuse unknown keys: ``hots = "hub"`` or a
key under the wrong heading stops the program with the key's path (``$.broker.hots``)
instead of quietly dialling 127.0.0.1. Every failure is a :class:`ConfigError` whose
message is one line naming the file and what is wrong in it.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from firmware.link import tls
from firmware.link.mqtt import BrokerConfig
from firmware.link.process import EX_CONFIG as EX_CONFIG  # the config's exit status

#: MQTT 3.1.1 keep alive is a 16-bit number of seconds (0: none).
MAX_KEEPALIVE = 65535

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


class MissingFile(ConfigError):
    """A file the configuration names is missing or unreadable: it may yet arrive (copied,
    handed over with chown, delivered by pairing), so a station waits for it."""

    def __init__(self, message: str, path: Path, reason: str) -> None:
        super().__init__(message)
        self.path = path
        #: What is wrong with it, short: "does not exist", "is not readable".
        self.reason = reason


class BrokerSection(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[broker]``: where the broker is and who we are to it."""

    host: str = "127.0.0.1"
    port: int | None = None
    username: str | None = None
    password: str | None = None
    password_file: str | None = None
    ca_file: str | None = None
    keepalive: int = 10


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The TOML document at ``path``, or a ConfigError saying why it cannot be read."""
    text = read_text(path, what)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deep") from None


def read_text(path: Path, what: str) -> str:
    """A file's text; a missing or unreadable file is one line naming it and the fix."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingFile(f"{what} {path} does not exist", path, "does not exist") from None
    except PermissionError:
        raise MissingFile(
            f"{what} {path} is not readable by this user "
            f"(hand it over: sudo chown coffre: {path} && sudo chmod 0600 {path})",
            path,
            "is not readable (chown coffre:)",
        ) from None
    except IsADirectoryError:
        raise ConfigError(f"{what} {path} is a folder, not a file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {path} is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{what} {path}: {exc.strerror}") from None


def decode(data: dict[str, Any], kind: type[T], path: Path, hints: dict[str, str]) -> T:
    """``data`` as a ``kind`` struct; unknown keys and wrong types name their place.

    ``hints`` maps an unknown key's name to advice (a key that belongs elsewhere), and
    ``"=name"`` to advice on a wrong value of that key.
    """
    try:
        return msgspec.convert(data, type=kind, strict=True)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{path}: {explain(str(exc), hints)}") from None


def explain(message: str, hints: dict[str, str] | None = None) -> str:
    """msgspec's validation message in the file's own terms.

    ``Object contains unknown field `hots` - at `$.broker``` becomes
    ``unknown key hots in [broker]``; ``$.table[0]`` becomes ``[[table]] 1``.
    """
    match = re.fullmatch(r"(.*?)(?: - at `\$(.*)`)?", message, re.S)
    assert match is not None  # the pattern matches any text
    what, where = match.group(1), match.group(2) or ""
    keys: list[tuple[str, int | None]] = []
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", where):
        if name:
            keys.append((name, None))
        elif keys:  # an index belongs to the array key before it
            keys[-1] = (keys[-1][0], int(index) + 1)
    unknown = re.fullmatch(r"Object contains unknown field `(.*)`", what)
    if unknown:
        key = unknown.group(1)
        hint = (hints or {}).get(key)
        return f"unknown key {key} in {_place(keys)}" + (f" ({hint})" if hint else "")
    missing = re.fullmatch(r"Object missing required field `(.*)`", what)
    if missing:
        return f"{_place(keys)} needs {missing.group(1)}"
    what = what[:1].lower() + what[1:]
    if keys and keys[-1][1] is None:  # a key's value is wrong: name the key
        name = keys[-1][0]
        hint = (hints or {}).get(f"={name}")
        what += f" ({hint})" if hint else ""
        return f"{_place(keys[:-1])} {name}: {what}" if len(keys) > 1 else f"{name}: {what}"
    return f"{_place(keys)}: {what}"


def _place(keys: list[tuple[str, int | None]]) -> str:
    """Where a path points, as written in TOML: ``[broker]``, ``[[table]] 2``."""
    if not keys:
        return "the top level"
    first, index = keys[0]
    words = [f"[[{first}]] {index}" if index is not None else f"[{first}]"]
    words += [name if index is None else f"{name} item {index}" for name, index in keys[1:]]
    return " ".join(words)


def broker_config(section: BrokerSection, path: Path) -> BrokerConfig:
    """The MQTT client's settings from a ``[broker]`` section (reads the password file)."""
    password = section.password
    if section.password_file is not None:
        password = read_text(Path(section.password_file), f"{path}: [broker] password_file").strip()
    ca_file = section.ca_file
    if ca_file is not None and not Path(ca_file).is_file():
        raise MissingFile(
            f"{path}: [broker] ca_file {ca_file} is not a file "
            "(a station gets it by pairing: docs/pairing.md; or copy the hub's ca.crt)",
            Path(ca_file),
            "is not there",
        )
    if ca_file is not None:
        try:
            tls.check_ca_file(ca_file)
        except ValueError as exc:
            raise ConfigError(f"{path}: [broker] ca_file {ca_file} {exc}") from None
    port = section.port if section.port is not None else (8883 if ca_file else 1883)
    if not 0 < port < 65536:
        raise ConfigError(f"{path}: [broker] port {port} is not a TCP port")
    if not section.host.strip() or any(c.isspace() for c in section.host):
        raise ConfigError(f"{path}: [broker] host {section.host!r} is not a host name or address")
    if not 0 <= section.keepalive <= MAX_KEEPALIVE:
        raise ConfigError(
            f"{path}: [broker] keepalive {section.keepalive} is not 0 to {MAX_KEEPALIVE} seconds"
        )
    return BrokerConfig(
        host=section.host,
        port=port,
        username=section.username,
        password=password,
        keepalive=section.keepalive,
        tls_ca=ca_file,
        password_file=section.password_file,
    )
