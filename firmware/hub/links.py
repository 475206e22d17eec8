"""The hub's links to the broker: one connection for all its tables, one will per table.

Everything the hub hears and sends goes over **one** connection (its persistent session,
acked by hand after each commit; see :mod:`firmware.link.mqtt`). Each table the hub runs
subscribes there in a SUBSCRIBE of its own, so a refusal (SUBACK 0x80: the broker user
has no rights on that table) names the table; the broker's ACL still decides, per table,
what this hub's user may read and write.

MQTT gives a connection one will, and every table needs its own: its ``hub/status`` says
``lost`` (with this hub's claim) when the hub vanishes, which stations, displays and other
hubs' claim probes act on. So each table also has a **will connection**: a clean session
that subscribes to nothing and sends nothing but its keepalive, except while one of the
table's stations floods (below). The hub keeps it tied to the shared connection:

- a table is up once the shared connection has its subscriptions *and* its will
  connection is up (then :class:`~firmware.hub.events.Connected`: the hub sends its claim
  and everything it shows again);
- the shared connection lost, every will connection is dropped as a crash drops it, so
  the broker says ``lost`` on every table at once: a hub that cannot hear its tables does
  not leave them reading ``ready``; they come back with the shared connection;
- a table left (refused, or the hub stopping) unsubscribes and closes its will connection
  cleanly: no will overwrites another hub's claim or the hub's goodbye.

One connection is one stream: what one sender floods in (a station's credentials
publishing at full speed) would queue every other table, and every other seat of its own
table, behind it. The hub's mailbox drops a sender's messages beyond its share and says who
floods (see :mod:`firmware.hub.inbox`), but that is not enough: decoding every message of a
flood keeps paho's thread busy far behind the broker (a seat's answers waited 15 s with
the mailbox alone). So the links then stop hearing **that sender alone** for MUTE_SECONDS:
the table's wildcard subscription that brings it (``station/+/input``, say) is replaced by
one subscription per other station of the table, and the broker stops sending the
flooder's messages at all. The table's other seats are heard throughout; the flooding
station's own inputs are heard again afterwards (a real station keeps them until
answered, so nothing acked is lost). A subscription that is not per station (the host's
commands) has one sender: it is muted whole.

At QoS 1 the cut is not enough: before it, the broker had queued up to
``max_queued_messages`` of the flood in the hub's persistent session, in one line before
whatever the table's other stations send next, and the hub's answers went out on that same
connection behind thousands of PUBACKs for that backlog (a seat's answers took p95 10 s).
So while a station of a table is shed, the table's **will connection** (a clean session
of the hub's own user, already open) also subscribes the table's other stations' topics
(the ones the wildcard was narrowed to). Once the broker confirms them there, the shared
connection drops them, so their inputs no longer queue behind the backlog, and the answers
to the table's stations (``station/<id>/ack``) go out on the will connection too. Screens
and everything else stay on the shared connection (a retained screen sent on two
connections could arrive out of order). When the flooder is heard again, the wildcard is
subscribed on the shared connection first, and the will connection lets the stations go
once the broker has confirmed it. A will connection that drops hands its stations back to
the shared connection at once, and hears them again once it is back.

Why not one connection per table: each would have a network thread of its own, and at
100 tables the hub would spend its time handing the interpreter lock between them and fighting
over its mailbox's lock (docs/benchmarks.md). A will connection keeps a network thread
too, but an idle one: no message passes over it, only a keepalive every few seconds,
but while a station of its table floods.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

import paho.mqtt.client as paho

from firmware.hub.events import Connected, Denied, Item, LinkChanged
from firmware.hub.throttle import Throttle
from firmware.link.mqtt import BrokerConfig, Client, LinkState, Will
from firmware.link.protocol import QOS

log = logging.getLogger(__name__)

#: QoS 1 messages the shared connection sends before waiting for PUBACKs: none, no limit.
#: A burst of screens for many tables goes out at once (paho's default of 20 made the hub
#: wait a broker round trip per 20 messages, for all its tables), and with any limit paho
#: walks every message in flight at each PUBACK (a burst of n costs n*n/2 steps).
SEND_WINDOW = 0
#: How long a flooding sender stays unheard (seconds), then it is heard again.
MUTE_SECONDS = 10.0
#: Who a muted subscription sheds: every sender (a subscription muted whole).
EVERYONE = ""


def station_wildcard(sub: str) -> bool:
    """Whether ``sub`` is one of a table's per-station wildcards (``coffre/<t>/station/+/x``)."""
    parts = sub.split("/")
    return len(parts) == 5 and parts[2] == "station" and parts[3] == "+"


def is_answer(topic: str) -> bool:
    """Whether ``topic`` is a station's answer topic (``coffre/<t>/station/<s>/ack``)."""
    parts = topic.split("/")
    return len(parts) == 5 and parts[2] == "station" and parts[4] == "ack"


def for_station(sub: str, station: str) -> str:
    """A station wildcard narrowed to one station's topic."""
    parts = sub.split("/")
    parts[3] = station
    return "/".join(parts)


class TableLink:
    """A table's share of the hub's links: what it sends goes over the shared connection,
    and its will connection says ``lost`` for it. What the hub's code talks to."""

    def __init__(
        self,
        hub: HubLinks,
        name: str,
        topics: list[str],
        will: Will,
        stations: Sequence[str] = (),
    ) -> None:
        self.hub = hub
        self.name = name
        self.topics = topics
        self.will = will
        #: The table's stations: what a station wildcard is narrowed to while one floods.
        self.stations = list(stations)
        #: Who each of ``topics`` is not heard from for now (a station, or EVERYONE), each
        #: with the token of the timer that lifts it (see HubLinks.mute).
        self.shed: dict[str, dict[str, object]] = {}
        #: Set while the table is up (see the module), cleared when either link goes.
        self.connected = threading.Event()
        self.will_link: Client | None = None
        #: What the will connection is asked to hear while a station is shed (see the
        #: module), and of those what the broker confirmed: the shared connection drops them.
        self.side_asked: set[str] = set()
        self.aside: set[str] = set()
        #: The will connection's SUBSCRIBEs, with the topics each asked (its own message
        #: ids: each connection counts its own).
        self.side_mids: dict[int, list[str]] = {}
        self.subscribed = False
        self.joined = False

    @property
    def client_id(self) -> str:
        return self.hub.data.client_id

    @property
    def state(self) -> LinkState:
        """The table's link as the host should see it: the shared connection's trouble
        first, then the will connection's."""
        data = self.hub.data.state
        if not data.ok:
            return data
        will = self.will_link.state if self.will_link is not None else LinkState("idle", "")
        return will if not will.ok and will.state != "idle" else data

    def start(self) -> None:
        """Run the table: subscribe it on the shared connection, open its will connection."""
        self.hub.join(self)

    def leave(self) -> None:
        """Leave the table: unsubscribe, and close its will connection cleanly (no will)."""
        self.hub.part(self)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = QOS) -> Any:
        side = self.will_link
        if self.aside and is_answer(topic) and side is not None and side.connected.is_set():
            # Not behind the flood's backlog on the shared connection (see the module).
            return side.publish(topic, payload, retain=retain, qos=qos)
        return self.hub.data.publish(topic, payload, retain=retain, qos=qos)

    def wait_connected(self, timeout: float = 10.0) -> bool:
        return self.connected.wait(timeout)

    def heard(self, sub: str) -> list[str]:
        """What is subscribed for ``sub`` now, less whom it sheds (see the module)."""
        shed = self.shed.get(sub)
        if not shed:
            return [sub]
        if EVERYONE in shed or not station_wildcard(sub):
            return []
        return [for_station(sub, s) for s in self.stations if s not in shed]

    def on_shared(self, sub: str) -> list[str]:
        """What the shared connection is to hear for ``sub`` now: what is heard, less what
        the will connection hears instead."""
        return [t for t in self.heard(sub) if t not in self.aside]

    def for_side(self) -> list[str]:
        """What the will connection is to hear: every station topic narrowed by a flood."""
        return [
            t
            for sub in self.topics
            if station_wildcard(sub) and self.shed.get(sub) and EVERYONE not in self.shed[sub]
            for t in self.heard(sub)
        ]

    def narrowed(self) -> list[str]:
        """Every per-station topic a station wildcard of this table may be narrowed to."""
        wildcards = [t for t in self.topics if station_wildcard(t)]
        return [for_station(t, s) for t in wildcards for s in self.stations]


class HubLinks:
    """The shared connection and the tables' will connections (see the module).

    Callbacks come on paho's threads; they only change this object's bookkeeping (under
    its lock) and put events in the hub's mailbox."""

    def __init__(
        self,
        broker: BrokerConfig,
        client_id: str,
        inbox: queue.Queue[Item | None],
        *,
        will_id: Callable[[str], str],
        label: str = "",
    ) -> None:
        self.broker = broker
        self.inbox = inbox
        self.will_id = will_id
        #: What the logs call the shared connection (the client ids hold a secret token).
        self.label = label
        self.tables: dict[str, TableLink] = {}
        self._lock = threading.RLock()
        self._mids: dict[int, str] = {}
        #: Shared-connection SUBSCRIBEs that give a will connection's topics back: once
        #: the broker confirms one, the will connection lets them go.
        self._handover: dict[int, TableLink] = {}
        self._started = False
        #: Tables this hub no longer runs whose subscriptions it dropped (see forget).
        self.forgotten: set[str] = set()
        #: Says the will connections' trouble (they log nothing above DEBUG themselves).
        self.throttle = Throttle()
        self.data = Client(
            broker,
            client_id,
            [],  # each table subscribes on its own (see join)
            # A persistent session: inputs sent while the hub is down wait in the broker.
            clean_session=False,
            on_connected=self._data_up,
            # The client puts only its messages in the shared mailbox.
            inbox=inbox,  # type: ignore[arg-type]
            on_state=self._data_state,
            manual_ack=True,  # acked to the broker after the commit, not on arrival
            label=label,
            on_subscribed=self._subscribed,
            # Every table's screens and answers, without a broker round trip per 20.
            inflight=SEND_WINDOW,
        )

    def table(
        self, name: str, topics: list[str], will: Will, stations: Sequence[str] = ()
    ) -> TableLink:
        link = self.tables[name] = TableLink(self, name, topics, will, stations)
        return link

    # --- the hub's thread ------------------------------------------------------------

    def join(self, link: TableLink) -> None:
        with self._lock:
            link.joined = True
            if not self._started:
                self._started = True
                self.data.start()  # its connection subscribes every joined table
                return
            if self.data.connected.is_set():
                self._subscribe(link)
                self._open_will(link)

    def part(self, link: TableLink) -> None:
        with self._lock:
            was = link.joined
            link.joined = False
            link.connected.clear()
            if was and self.data.connected.is_set():
                self.data.unsubscribe([h for t in link.topics for h in link.on_shared(t)])
            link.shed.clear()
        self.close_will(link, clean=True)

    def close_will(self, link: TableLink, *, clean: bool) -> None:
        with self._lock:
            will, link.will_link = link.will_link, None
            self._give_back(link)
        if will is not None:
            will.stop(clean=clean, last=False)

    def stop(self) -> None:
        """Close every will connection cleanly (after the hub's goodbye), then the shared one."""
        for link in list(self.tables.values()):
            self.close_will(link, clean=True)
        self.data.stop()

    def crash(self) -> None:
        """Drop every connection as a dying process would (tests: the wills go out)."""
        for link in list(self.tables.values()):
            self.close_will(link, clean=False)
        self.data.stop(clean=False)

    def forget(self, name: str, topics: list[str]) -> None:
        """A table this hub no longer runs still sends to its persistent session (it ran
        the table before its configuration changed): drop those subscriptions, once."""
        with self._lock:
            if name in self.tables or name in self.forgotten:
                return
            self.forgotten.add(name)
            self.data.unsubscribe(topics)
        log.info(
            "hub: table %s is not in this hub's configuration (any more): its broker "
            "subscriptions are dropped",
            name,
        )

    def mute(self, topic: str) -> None:
        """A sender floods with ``topic``: stop hearing that sender for MUTE_SECONDS (any
        thread; the mailbox calls this). A station is cut out of the table's wildcard
        subscription that brings it; any other subscription is muted whole."""
        with self._lock:
            link = self.tables.get(topic.partition("/")[2].partition("/")[0])  # coffre/<table>/...
            if link is None or not link.joined:
                return
            sub = next((s for s in link.topics if paho.topic_matches_sub(s, topic)), None)
            if sub is None:
                return
            who = topic.split("/")[3] if station_wildcard(sub) and link.stations else EVERYONE
            shed = link.shed.setdefault(sub, {})
            if who in shed or EVERYONE in shed:
                return
            token = object()
            self._reshape(link, sub, lambda: shed.__setitem__(who, token))
        if who == EVERYONE:
            log.warning(
                "hub: table %s: %s floods the hub; not hearing %s for %.0f s",
                link.name,
                topic,
                sub,
                MUTE_SECONDS,
            )
        else:
            log.warning(
                "hub: table %s: station %s floods the hub (%s); not hearing it for %.0f s "
                "(the table's other stations are heard)",
                link.name,
                who,
                topic,
                MUTE_SECONDS,
            )
        timer = threading.Timer(MUTE_SECONDS, self._unmute, (link, sub, who, token))
        timer.daemon = True
        timer.start()

    def _unmute(self, link: TableLink, sub: str, who: str, token: object) -> None:
        with self._lock:
            shed = link.shed.get(sub, {})
            if shed.get(who) is not token:
                return  # lifted already: the connection or the table started over
            self._reshape(link, sub, lambda: shed.pop(who))
        log.info("hub: table %s: hearing %s again", link.name, who or sub)

    def _reshape(self, link: TableLink, sub: str, change: Callable[[], object]) -> None:
        """Apply ``change`` to whom ``sub`` sheds, and tell the broker: on the shared
        connection the new subscriptions first, then the old ones dropped, so no message of
        a seat still heard falls between them (one may come twice: the hub answers an input
        again under its id, and the station takes the first answer); then the will
        connection (see _side_sync). Under the lock."""
        before = link.on_shared(sub)
        change()
        link.aside &= set(link.for_side())  # a topic no longer narrowed is the shared one's
        after = link.on_shared(sub)
        if not (link.joined and self.data.connected.is_set()):
            return  # subscribed afresh on (re)connection
        new = [t for t in after if t not in before]
        mid = self.data.subscribe(new) if new else -1
        self.data.unsubscribe([t for t in before if t not in after])
        if mid >= 0:
            # What the will connection gives back is heard on the shared one first.
            self._handover[mid] = link
            self._side_sync(link, drop=False)
        else:
            self._side_sync(link, drop=True)

    def _side_sync(self, link: TableLink, *, drop: bool) -> None:
        """Ask the table's will connection to hear what a flood narrowed the table's
        subscriptions to; ``drop``: let go what it is not to hear any more too. Under the
        lock."""
        side = link.will_link
        if side is None or not side.connected.is_set():
            return  # it asks for what is wanted once up (_side_up)
        wanted = link.for_side()
        new = [t for t in wanted if t not in link.side_asked]
        if new:
            mid = side.subscribe(new)
            if mid >= 0:
                link.side_mids[mid] = new
            link.side_asked.update(new)
        if drop:
            gone = sorted(t for t in link.side_asked if t not in wanted)
            side.unsubscribe(gone)
            link.side_asked.difference_update(gone)

    def _give_back(self, link: TableLink) -> None:
        """What the will connection heard is the shared connection's again (it is gone, or
        going). Under the lock."""
        back = sorted(link.aside)
        link.aside.clear()
        link.side_asked.clear()
        link.side_mids.clear()
        if back and link.joined and self.data.connected.is_set():
            self.data.subscribe(back)

    def clients(self) -> list[Client]:
        """The shared connection and the open will connections."""
        with self._lock:
            wills = [t.will_link for t in self.tables.values() if t.will_link is not None]
        return [self.data, *wills]

    # --- paho's threads --------------------------------------------------------------

    def _data_up(self) -> None:
        with self._lock:
            self._mids.clear()
            self._handover.clear()
            for link in self.tables.values():
                link.shed.clear()  # a new connection hears everything again
                link.aside.clear()
                if link.will_link is not None and link.side_asked:
                    link.will_link.unsubscribe(sorted(link.side_asked))
                link.side_asked.clear()
                link.side_mids.clear()
                if link.joined:
                    self._subscribe(link)
                    # A persistent session keeps what a flood had narrowed, even that of a
                    # hub that died meanwhile: such a topic would bring every input twice.
                    self.data.unsubscribe(link.narrowed())
                    self._open_will(link)

    def _subscribe(self, link: TableLink) -> None:
        link.subscribed = False
        mid = self.data.subscribe(link.topics)
        if mid >= 0:
            self._mids[mid] = link.name

    def _subscribed(self, mid: int, refused: list[str]) -> None:
        with self._lock:
            handed = self._handover.pop(mid, None)
            if handed is not None:
                self._side_sync(handed, drop=True)
            name = self._mids.pop(mid, None)
            link = self.tables.get(name) if name is not None else None
            if link is None or not link.joined:
                return
            if refused:
                self.inbox.put(Denied(link.name))
                return
            link.subscribed = True
            self._maybe_up(link)

    def _side_up(self, link: TableLink, side: Client) -> None:
        """The will connection is (back) up: it hears again what a flood narrowed its
        table's subscriptions to, if anything."""
        with self._lock:
            if link.will_link is not side:
                return
            asked = sorted(set(link.for_side()))
            link.side_asked = set(asked)
            if asked:
                mid = side.subscribe(asked)
                if mid >= 0:
                    link.side_mids[mid] = asked

    def _side_subscribed(self, link: TableLink, side: Client, mid: int, refused: list[str]) -> None:
        """The will connection hears ``mid``'s topics: the shared connection drops them,
        so they no longer queue behind the flood there."""
        with self._lock:
            asked = link.side_mids.pop(mid, [])
            if link.will_link is not side:
                return
            wanted = set(link.for_side())
            granted = [t for t in asked if t not in refused and t in wanted and t not in link.aside]
            link.aside.update(granted)
            if granted and self.data.connected.is_set():
                self.data.unsubscribe(granted)

    def _open_will(self, link: TableLink) -> None:
        """Open the table's will connection, unless one is open (or opening)."""
        if link.will_link is not None:
            return
        will = Client(
            self.broker,
            self.will_id(link.name),
            [],
            will=link.will,
            clean_session=True,
            on_connected=lambda: self._will_up(link, will),
            on_state=lambda state: self._will_state(link, will, state),
            quiet=True,  # its trouble is said in _will_state, one line for all tables
            label=f"{self.label} {link.name} will" if self.label else "",
            # While a station of the table is shed it hears the table's other stations
            # (see the module): into the hub's mailbox, acked after the commit.
            inbox=self.inbox,  # type: ignore[arg-type]
            manual_ack=True,
            on_subscribed=lambda mid, refused: self._side_subscribed(link, will, mid, refused),
            inflight=SEND_WINDOW,
        )
        link.will_link = will
        will.start()

    def _will_up(self, link: TableLink, will: Client) -> None:
        with self._lock:
            if link.will_link is will:
                self._maybe_up(link)
        self._side_up(link, will)

    def _will_state(self, link: TableLink, will: Client, state: LinkState) -> None:
        with self._lock:
            if link.will_link is not will or not link.joined:
                return
            if not state.ok:
                link.connected.clear()  # its will may be out: the hub says ready again
                self._give_back(link)  # nobody unheard while it reconnects
            if not state.calm:
                # Trouble for one is mostly trouble for all (a broker restarting): one line
                # per kind every LOG_EVERY seconds for every table's will connection.
                self.throttle.warning(
                    ("will", state.state),
                    f"hub: table {link.name}'s will connection: {state.detail or state.text}",
                )
        self.inbox.put(LinkChanged(link.name))

    def _maybe_up(self, link: TableLink) -> None:
        will = link.will_link
        if (
            link.joined
            and link.subscribed
            and will is not None
            and will.connected.is_set()
            and self.data.connected.is_set()
            and not link.connected.is_set()
        ):
            link.connected.set()
            self.inbox.put(Connected(link.name))

    def _data_state(self, state: LinkState) -> None:
        with self._lock:
            joined = [t for t in self.tables.values() if t.joined]
            if not state.ok:
                for link in joined:
                    link.connected.clear()
                    link.subscribed = False
        # The hub cannot hear its tables: their wills say so (see the module). Not on our
        # own stop (a goodbye was said), nor before the first connection.
        if state.state not in ("connected", "stopped", "connecting"):
            for link in joined:
                self.close_will(link, clean=False)
        for link in joined:
            self.inbox.put(LinkChanged(link.name))
