"""What the hub's handlers are handed: the hub's parts they use, and the batch they work in.

The handlers (:mod:`~firmware.hub.inputs`, :mod:`~firmware.hub.hostcmd`,
:mod:`~firmware.hub.ownership`, :mod:`~firmware.hub.pairing`, :mod:`~firmware.hub.panel`,
:mod:`~firmware.hub.moves`) sit below the service (:mod:`firmware.hub.service`), which
builds one :class:`HubContext` and passes it: they see its tables, its store, its
publisher, its clock and the broker's door for pairing, never the service itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from firmware.hub.actor import TableActor
from firmware.hub.publish import Publisher
from firmware.hub.store import Store
from firmware.hub.throttle import Throttle
from firmware.link import protocol as proto
from firmware.link.mqtt import BrokerConfig, LinkState
from hardware.keys import KeySet


class Door(Protocol):
    """The broker's users, as far as pairing touches them (firmware.hub.pairing.BrokerDoor)."""

    def ca_pem(self) -> str:
        """The table's CA certificate (public), or "" without TLS."""
        ...

    def grant(self, table: str, station: str, password: str) -> str:
        """Give the station's user ``password``; returns the user."""
        ...


@dataclass
class HubContext:
    """The hub's parts a handler may use. The callables read the hub as it is at the
    call (a test may swap its clock or its claim)."""

    #: This hub's tables, by name (in hub.toml's order).
    actors: dict[str, TableActor]
    store: Store
    out: Publisher
    throttle: Throttle
    keys: KeySet
    #: The broker, as the hub connects to it (pairing checks a new password on it).
    broker: BrokerConfig
    #: The broker's users for stations that pair (None: this hub cannot pair).
    door: Door | None
    clock: Callable[[], float]
    #: This process's claim on its tables.
    claim: Callable[[], proto.Claim]
    #: Wakes the hub's thread from another one (its loop ticks soon after).
    wake: Callable[[], None]
    #: The claim probe's link state while no table is claimed yet (None: no probe).
    probe_state: Callable[[], LinkState | None]
    #: Called with one line once no table is left to run.
    give_up: Callable[[str], None]

    def live(self) -> list[TableActor]:
        """The tables this hub runs now."""
        return [a for a in self.actors.values() if a.state == "live"]


@dataclass
class Batch:
    """What one batch (one store transaction) did so far, handed to every handler in it."""

    #: The tables it changed: rebuilt from the store if the batch cannot be committed.
    touched: dict[str, TableActor] = field(default_factory=dict)
    #: The store error that breaks the batch (rolled back, its answers taken back).
    broken: BaseException | None = None

    def touch(self, actor: TableActor) -> None:
        self.touched[actor.config.name] = actor
