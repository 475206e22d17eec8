"""``coffre bench --pi-class``: tap to glass projected onto a Zero 2 W station and a Pi 4 hub.

Every station is a process of its own on emulated chips (the real MFRC522 and SSD1306
drivers, see :mod:`device.emulated`), the hub is ``coffre hub`` in a process of its own,
and mosquitto (TLS and ACL, as installed) runs beside it, as on the hub's Pi. Each of
them is confined to the CPU share of one core that a Zero 2 W (stations) or a Pi 4 (hub
and broker) gives Python, by a cgroup CPU quota (v2 ``cpu.max`` or v1
``cpu.cfs_quota_us``, whichever this machine lets root write). On top:

- the reader is polled at its real interval (the tag is laid at a random moment of it),
  and the MFRC522 chip timer runs in real time;
- the LED and the buzzer are the station's gpiozero devices over gpiozero's mock pins
  (:func:`mock_pin_controls`), so their Python is charged as on a Pi;
- the chips are silicon on a Pi: the emulated SSD1306 and the MFRC522's RF exchanges run
  on threads of the station process moved out of its quota group (cgroup v1 moves single
  threads), the real driver code stays in it (see :func:`wire`);
- the hub's store waits as an SD card does (``COFFRE_SIMULATE_DISK``: a delay per fsync,
  per commit before the writer thread, and a stall every few seconds);
- the SSD1306's I2C time is charged for the bytes the driver actually sent (address
  byte, control bytes and data, 9 clocks a byte at ``--i2c-hz``, 400 kHz by default: the
  datasheet's): the station thread sleeps that long after each frame, as it would block
  in the ``i2c_rdwr`` ioctl, and the frame is on the glass when that time is up, however
  late the quota lets the thread wake (:meth:`Buses.frame`); the MFRC522's SPI wire
  time is charged as the BCM2835 driver spends it (CPU when it polls, a sleep when it
  waits for an interrupt).

Each step is stamped with ``time.perf_counter()`` (CLOCK_MONOTONIC, one clock for every
process of the machine) so a tap's time splits into poll, station, network, hub,
commit, render and I2C. How the CPU shares were derived: ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import queue
import random
import runpy
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware.link.mqtt import BrokerConfig

#: The CPU time of the calibration loop (n-body, 200,000 steps) on each board, as a
#: share of this machine is computed at run time; these are the boards' own figures.
#: Pi 4 (Cortex-A72, 1.5 GHz): 5,000,000 n-body steps in 158.3 s of Python (see the notes).
PI4_NBODY_S_PER_STEP = 158.3 / 5_000_000
#: Zero 2 W (Cortex-A53, 1 GHz) against a Pi 4: 0.33 (single-core sysbench per clock,
#: A53 / A72, times 1.0 / 1.5 GHz; see the notes).
ZERO_VS_PI4 = 0.33
CALIBRATION_STEPS = 200_000

I2C_HZ = 400_000
I2C_BITS_PER_BYTE = 9  # 8 data bits and the ACK
I2C_FRAME_BITS = 2  # START and STOP

#: A plausible SD card under SQLite synchronous=FULL: 5 ms a commit, a 100 ms stall every 2 s.
SD_COMMIT_MS = 5.0
SD_STALL_MS = 100.0
SD_STALL_EVERY_S = 2.0

STEPS = ("poll", "station", "network", "hub", "commit", "render", "i2c")


# --- how much CPU a board gives Python -----------------------------------------------------


def nbody_seconds(steps: int = CALIBRATION_STEPS) -> float:
    """CPU seconds of ``steps`` steps of the benchmarks game's n-body (Python #1) here."""
    bodies = [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 39.47841760435743),
        ([4.84, -1.16, -0.10], [0.61, 2.81, -0.03], 0.037693674870389),
        ([8.34, 4.12, -0.40], [-1.01, 1.83, 0.01], 0.011286326131968),
        ([12.89, -15.11, -0.22], [1.08, 0.87, -0.01], 0.0017237240570597),
        ([15.38, -25.92, 0.18], [0.98, 0.59, -0.03], 0.0020336868699246),
    ]
    pairs = [(bodies[i], b) for i in range(len(bodies)) for b in bodies[i + 1 :]]
    dt = 0.01
    start = time.process_time()
    for _ in range(steps):
        for ([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1m, b2m = m1 * mag, m2 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for r, [vx, vy, vz], _m in bodies:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz
    return time.process_time() - start


@dataclass
class Shares:
    """The share of one of this machine's cores that each board's Python gets."""

    pi4: float
    zero: float
    here_s: float = 0.0  # the calibration loop's CPU time here

    @classmethod
    def calibrate(cls) -> Shares:
        here = nbody_seconds()
        pi4 = min(1.0, here / (PI4_NBODY_S_PER_STEP * CALIBRATION_STEPS))
        return cls(pi4, pi4 * ZERO_VS_PI4, here)


# --- cgroup CPU quotas -----------------------------------------------------------------------


class Cgroups:
    """CPU-quota groups for the bench's processes, made and removed by the bench."""

    V2 = Path("/sys/fs/cgroup")
    V1 = Path("/sys/fs/cgroup/cpu")

    def __init__(self) -> None:
        self.made: list[Path] = []
        self.kind = self._probe()

    def _probe(self) -> str | None:
        if os.geteuid() != 0:
            return None
        if (self.V2 / "cgroup.controllers").is_file():
            controllers = (self.V2 / "cgroup.controllers").read_text().split()
            return "v2" if "cpu" in controllers else None
        if (self.V1 / "cpu.cfs_quota_us").is_file():
            return "v1"
        return None

    def group(self, name: str, share: float) -> Path:
        """A group whose processes together get ``share`` of one core (1 ms slices at least:
        the kernel's smallest quota)."""
        assert self.kind is not None
        quota = 1000
        period = max(1000, min(1_000_000, round(quota / share)))
        base = self.V2 if self.kind == "v2" else self.V1
        path = base / f"coffre-bench-{os.getpid()}-{name}"
        path.mkdir(exist_ok=True)
        self.made.append(path)
        if self.kind == "v2":
            (path / "cpu.max").write_text(f"{quota} {period}\n")
        else:
            (path / "cpu.cfs_period_us").write_text(f"{period}\n")
            (path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        return path

    def chips(self) -> Path | None:
        """The ``tasks`` file of a group without a quota, for single threads (cgroup v1
        moves threads one by one; v2 only within a threaded subtree: not done, None)."""
        if self.kind != "v1":
            return None
        path = self.V1 / f"coffre-bench-{os.getpid()}-chips"
        path.mkdir(exist_ok=True)
        self.made.append(path)
        (path / "cpu.cfs_quota_us").write_text("-1\n")
        return path / "tasks"

    @staticmethod
    def enter(path: Path, pid: int) -> None:
        (path / "cgroup.procs").write_text(f"{pid}\n")

    def remove(self) -> None:
        """Remove the groups (their processes have ended: a group with members stays)."""
        for path in reversed(self.made):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
        self.made.clear()


# --- the station process -----------------------------------------------------------------------


class _Events:
    """JSON lines to stdout, one writer at a time."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.lock = threading.Lock()

    def __call__(self, **event: Any) -> None:
        line = json.dumps(event)
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()


def station_main(ns: argparse.Namespace) -> int:
    """One station on emulated chips; stdin says ``lay UID`` / ``lift`` / ``quit``."""
    from device.emulated import open_emulated_station
    from firmware.link.mqtt import BrokerConfig
    from firmware.station.service import Station

    emit = _Events(sys.stdout)
    emu = open_emulated_station(timer="realtime")
    emu.devices.controls = mock_pin_controls()
    buses = wire(emu, ns.share, Path(ns.chips) if ns.chips else None, ns.i2c_hz)
    spent = buses.spent

    def snapshot() -> dict[str, float]:
        buses.update()
        return dict(spent)

    display = emu.display
    show = display.show

    def timed_show(image: Any) -> None:
        emit(ev="frame", **buses.frame(show, image))

    display.show = timed_show
    reader = emu.reader
    poll = reader.poll

    def timed_poll() -> Any:
        buses.spi_owed = buses.spi_polled = 0.0
        try:
            return poll()
        finally:
            # The poll's wire time, at its end (one charge, not one a transfer): short
            # transfers busy the CPU (the Zero's, so scaled to its share of this one's),
            # longer ones are slept as the driver awaits their interrupt.
            spin_cpu(buses.spi_polled * ns.share)
            if buses.spi_owed:
                time.sleep(buses.spi_owed)

    reader.poll = timed_poll

    class TracedStation(Station):
        def _send(self, fields: dict[str, Any]) -> None:
            super()._send(fields)
            if fields.get("kind") == "tag":
                emit(ev="sent", id=f"{self.boot}:{self.seq}", read=self.read_at,
                     sent=time.perf_counter(), spent=snapshot())  # fmt: skip

    broker = BrokerConfig(ns.host, ns.port, ns.username, ns.password, tls_ca=ns.ca)
    station = TracedStation(
        broker, ns.table, ns.id, emu.devices, poll_interval=ns.poll, show_link=False
    )
    screen_topic = station.topics.station(ns.id, "screen")
    inbox = station.client.inbox
    put = inbox.put

    def stamped_put(item: Any, block: bool = True, timeout: float | None = None) -> None:
        if getattr(item, "topic", None) == screen_topic:
            emit(ev="screen", t=time.perf_counter())
        put(item, block, timeout)

    inbox.put = stamped_put  # type: ignore[method-assign]
    station.start()
    emit(ev="up", chips_outside=buses.outside, controls=type(emu.devices.controls).__name__)
    try:
        for line in sys.stdin:
            words = line.split()
            if not words or words[0] == "quit":
                break
            if words[0] == "lay":
                time.sleep(random.uniform(0, ns.poll))  # any moment of the poll interval
                emit(ev="laid", t=time.perf_counter(), spent=snapshot())
                emu.field.place(words[1])
            elif words[0] == "lift":
                emu.field.remove()
                while emu.reader.current is not None:
                    time.sleep(ns.poll / 2)
                emit(ev="lifted")
    finally:
        station.stop()
        emu.close()
    return 0


def mock_pin_controls() -> Any:
    """The station's real controls (gpiozero's LED, buzzer, knob and buttons, as
    :class:`device.gpio.GpioControls` drives them) over gpiozero's mock pins: a read's
    blink and tick and an answer's beep cost the station what gpiozero's code costs, in
    its quota (the emulated station's ``MockControls`` cost nothing). The flap is closed
    (its reed pulled low, as the magnet does) and the peek button released: mock pins
    idle high, which reads as a lifted flap and would show the secret."""
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from device.gpio import GpioControls
    from hardware.pins import StationPins

    pins, factory = StationPins(), MockFactory(pin_class=MockPWMPin)
    controls = GpioControls(pins, pin_factory=factory)
    closed_is_pressed = not pins.flap.open_when_pressed
    pressed_is_low = pins.flap.pull_up
    flap = factory.pin(pins.flap.pin)
    if closed_is_pressed == pressed_is_low:
        flap.drive_low()
    else:
        flap.drive_high()
    return controls


# --- the chips' emulation and their buses ------------------------------------------------------

#: The BCM2835 SPI driver (drivers/spi/spi-bcm2835.c) polls, in the calling thread, a
#: transfer it estimates under ``polling_limit_us`` (30 us by default, at 9 clocks a byte):
#: at the MFRC522's 1 MHz, transfers of 1 and 2 bytes. Longer ones wait for an interrupt.
SPI_POLLING_LIMIT_US = 30
SPI_HZ_PER_BYTE = 9 * 1_000_000 // SPI_POLLING_LIMIT_US  # the driver's hz_per_byte
SPI_BITS_PER_BYTE = 8


class ChipThread:
    """A thread that runs emulated chips' work handed to it by the bus calls.

    On a Pi the SSD1306 and the MFRC522 (and the card in its field) are silicon: the
    driver's thread waits in an ioctl while the controller moves the bytes, and none of
    the chips' work runs on the CPU. Here they are Python; their work is handed to this
    thread, which cgroup v1 lets the bench move out of the station's quota group alone
    (``tasks``: one thread), so it is not charged to the Zero's share. ``put`` queues a
    job without waiting (a write-only chip answers nothing); ``call`` waits for its
    result (~15 us of the caller's CPU here: worth it only for heavy work). ``cpu`` is
    the thread's CPU time on the jobs (host seconds).
    """

    def __init__(self, name: str, tasks: Path | None) -> None:
        self.cpu = 0.0
        self.outside = False
        self.error: BaseException | None = None
        self._jobs: queue.SimpleQueue[tuple[Any, tuple[Any, ...]]] = queue.SimpleQueue()
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(tasks, ready), name=f"chips-{name}", daemon=True
        )
        self._thread.start()
        ready.wait()

    def _run(self, tasks: Path | None, ready: threading.Event) -> None:
        if tasks is not None:
            with contextlib.suppress(OSError):
                tasks.write_text(f"{threading.get_native_id()}\n")
                self.outside = True
        ready.set()
        while True:
            fn, args = self._jobs.get()
            t0 = time.thread_time()
            try:
                fn(*args)
            except BaseException as exc:  # raised to the next caller
                self.error = self.error or exc
            self.cpu += time.thread_time() - t0

    def put(self, fn: Any, *args: Any) -> None:
        """Queue ``fn(*args)``; raise what an earlier job raised, if any."""
        self._raise()
        self._jobs.put((fn, args))

    def call(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on this thread, after the jobs queued before; its result."""
        done = threading.Lock()
        done.acquire()
        got: list[Any] = [None, None]

        def job() -> None:
            try:
                got[0] = fn(*args)
            except BaseException as exc:
                got[1] = exc
            finally:
                done.release()

        self.put(job)
        done.acquire()
        if got[1] is not None:
            raise got[1]
        return got[0]

    def drain(self) -> None:
        """Wait until every queued job is done."""
        self.call(lambda: None)

    def queued(self) -> bool:
        """Whether jobs wait to be taken (non-blocking)."""
        return not self._jobs.empty()

    def _raise(self) -> None:
        error, self.error = self.error, None
        if error is not None:
            raise error


def spin_cpu(seconds: float) -> None:
    """Burn ``seconds`` of this thread's CPU (charged to its group's quota)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class Buses:
    """The station process's fake buses, as a Zero's would cost (see :func:`wire`)."""

    def __init__(self, i2c_hz: int, tasks: Path | None) -> None:
        self.i2c_hz = i2c_hz
        self.panel_thread = ChipThread("ssd1306", tasks)
        self.rf_thread = ChipThread("mfrc522", tasks)
        #: host CPU seconds: ``spi``, the emulated MFRC522's register work and the hand-offs
        #: of its RF exchanges (in the quota); ``rf``, those exchanges (the chip and the
        #: card, outside it when moved); ``i2c``, the emulated SSD1306 (outside it when
        #: moved); ``i2c_queue``, handing it the frames (in the quota). ``spi_wire``: seconds.
        self.spent = dict.fromkeys(("spi", "rf", "i2c", "i2c_queue", "spi_wire"), 0.0)
        self.i2c_owed = 0.0  # seconds of I2C wire time the frame being drawn owes
        self.i2c_bytes = 0
        self.spi_owed = 0.0  # seconds of SPI wire time (interrupt mode) the poll owes
        self.spi_polled = 0.0  # seconds of SPI wire time (polled mode) the poll owes
        self.spi_transfers = 0
        self.spi_cost = 0.0  # host CPU seconds of one transfer's register emulation
        self.rf_handoff = 0.0  # host CPU seconds the callers spent handing RF exchanges
        #: a frame's I2C writes, handed to the SSD1306's thread at once when it is drawn
        self.batch: list[tuple[Any, bytes]] | None = None

    @property
    def outside(self) -> bool:
        """Whether the chips' threads left the quota group."""
        return self.panel_thread.outside and self.rf_thread.outside

    def update(self) -> None:
        """Bring the chips' threads' CPU time and the transfers' count into ``spent``."""
        self.spent["i2c"] = self.panel_thread.cpu
        self.spent["rf"] = self.rf_thread.cpu
        self.spent["spi"] = self.spi_transfers * self.spi_cost + self.rf_handoff

    def flush(self) -> None:
        """Hand the frame's writes to the SSD1306's thread (one job: ~1 us here a frame)."""
        batch, self.batch = self.batch, None
        if batch:
            t0 = time.thread_time()
            self.panel_thread.put(_write_all, batch)
            self.spent["i2c_queue"] += time.thread_time() - t0

    def drain(self) -> None:
        """Wait until the emulated SSD1306 has taken every byte (counted as queueing)."""
        self.flush()
        t0 = time.thread_time()
        self.panel_thread.drain()
        self.spent["i2c_queue"] += time.thread_time() - t0

    def behind(self) -> bool:
        """Whether the SSD1306's thread still has work (non-blocking)."""
        return self.panel_thread.queued()

    def frame(
        self,
        show: Callable[[Any], None],
        image: Any,
        sleep: Callable[[float], None] = time.sleep,
    ) -> dict[str, Any]:
        """Draw ``image`` through the driver's ``show`` as the station would on a Zero:
        the frame's stamps and costs. ``t0``/``t1``: the driver's Python; ``glass``: when
        its last byte is on the panel, ``t1`` plus the bytes' I2C time. The thread waits
        that long (as in ``i2c_rdwr``), but the glass does not wait for it to wake: in the
        quota it may wake a period late, and the bytes landed anyway. A frame the emulated
        panel had not taken by then (host speed) is stamped when it has."""
        self.i2c_owed, self.i2c_bytes = 0.0, 0
        self.update()
        chips, queued = self.spent["i2c"], self.spent["i2c_queue"]
        self.batch = []
        t0 = time.perf_counter()
        try:
            show(image)
        finally:
            self.flush()
        t1 = time.perf_counter()
        glass = t1 + self.i2c_owed
        if self.i2c_owed:
            sleep(self.i2c_owed)  # the bus is busy: the station thread waits in i2c_rdwr
        late = self.behind()
        self.drain()
        if late:
            glass = max(glass, time.perf_counter())
        self.update()
        return {
            "t0": t0, "t1": t1, "glass": glass, "i2c_bytes": self.i2c_bytes, "late": late,
            "emulated": self.spent["i2c"] - chips, "queued": self.spent["i2c_queue"] - queued,
        }  # fmt: skip


def _write_all(batch: list[tuple[Any, bytes]]) -> None:
    for chip, data in batch:
        chip.i2c_write(data)


def wire(emu: Any, share: float, tasks: Path | None, i2c_hz: int) -> Buses:
    """Charge this process's emulated buses as a Zero's: what is silicon or wire on a Pi.

    - **SSD1306**: a frame's I2C writes are handed to a :class:`ChipThread` (outside the
      quota with cgroup v1) in one job when the frame is drawn; with a fault armed they
      run inline, so a NACK is raised where the driver wrote. The bytes sent are counted
      (address, control and data bytes, 9 clocks a byte plus START/STOP at ``i2c_hz``):
      the caller sleeps that long after the frame, as it waits in ``i2c_rdwr``. The
      emulated glass's frame log goes to the same thread.
    - **MFRC522**: the register work of each transfer stays in the caller (~2 us here:
      less than a hand-off), counted (transfers times a cost measured at the start);
      each RF exchange (the chip's transceive or authentication with the virtual card:
      ~75 us here) is handed to a second thread and waited for. The wire time (8 clocks
      a byte at the driver's ``max_speed_hz``) is owed as the BCM2835 driver spends it: a
      polled transfer (:data:`SPI_POLLING_LIMIT_US`) busies the caller, ``wire * share`` of
      host CPU under the Zero's quota; a longer one is slept (the driver waits for its
      interrupt). The station process pays both at the end of each poll.
    """
    from device.emulated import EmulatedStation, rack

    buses = Buses(i2c_hz, tasks)
    spent = buses.spent
    transfer = rack.FakeSpiDev._transfer
    glass = EmulatedStation.glass_written
    panel, chip = emu.panel, emu.chip
    rf = buses.rf_thread

    def handed(exchange: Any) -> Any:
        def call() -> Any:
            t0 = time.thread_time()
            try:
                return rf.call(exchange)
            finally:
                buses.rf_handoff += time.thread_time() - t0

        return call

    for name in ("_transceive", "_authenticate"):
        setattr(chip, name, handed(getattr(chip, name)))

    def _transfer(self: Any, values: Any) -> list[int]:
        buses.spi_transfers += 1
        hz = self.max_speed_hz or 500_000
        seconds = len(values) * SPI_BITS_PER_BYTE / hz
        spent["spi_wire"] += seconds
        if len(values) < hz // SPI_HZ_PER_BYTE:  # the driver's byte_limit
            buses.spi_polled += seconds  # the driver polls the FIFO: the CPU is busy
        else:
            buses.spi_owed += seconds  # the driver sleeps until the interrupt
        return transfer(self, values)

    def _write(self: Any, address: int, data: bytes) -> None:
        if self.port is None or self.fd is None:
            raise OSError(errno.EBADF, "Bad file descriptor")
        target = rack.RACK.i2c_chip(self.port, address)  # an empty address NACKs here
        buses.i2c_owed += ((1 + len(data)) * I2C_BITS_PER_BYTE + I2C_FRAME_BITS) / i2c_hz
        buses.i2c_bytes += 1 + len(data)
        if getattr(target, "fail_next", 0):
            buses.drain()
            target.i2c_write(data)  # an armed fault: raised here, as the ioctl would
        elif buses.batch is not None and target is panel:
            buses.batch.append((target, data))
        else:
            buses.panel_thread.put(target.i2c_write, data)

    def _glass(self: Any) -> None:
        if self.panel is panel:
            buses.flush()
            buses.panel_thread.put(glass, self)
        else:
            glass(self)

    # The register work of a transfer (fake spidev and chip: ~2 us here), measured once:
    # timing each transfer would cost the caller as much again (thread_time is a system
    # call here). Reading VersionReg changes nothing.
    spi = emu.reader._dev.spi
    read_version = [0x80 | (0x37 << 1), 0]
    t0 = time.thread_time()
    for _ in range(2000):
        transfer(spi, read_version)
    buses.spi_cost = (time.thread_time() - t0) / 2000
    rack.FakeSpiDev._transfer = _transfer  # type: ignore[method-assign]
    rack.FakeSMBus._write = _write  # type: ignore[method-assign]
    EmulatedStation.glass_written = _glass  # type: ignore[method-assign]
    return buses


# --- the hub process -------------------------------------------------------------------------


def hub_main(ns: argparse.Namespace) -> int:
    """``coffre hub`` with its inputs, commits and screens stamped into ``--trace``."""
    from firmware.hub import service
    from firmware.hub.store import Store
    from firmware.link import mqtt

    trace = open(ns.trace, "a", buffering=1)  # noqa: SIM115 - the process's whole life
    lock = threading.Lock()

    def note(**event: Any) -> None:
        with lock:
            trace.write(json.dumps(event) + "\n")

    on_message = mqtt.Client._on_message

    def _on_message(self: Any, c: Any, u: Any, msg: Any) -> None:
        if msg.topic.endswith("/input"):
            with contextlib.suppress(ValueError, AttributeError):
                note(ev="in", id=json.loads(msg.payload).get("id"), t=time.perf_counter())
        on_message(self, c, u, msg)

    commit = Store.commit
    sync = getattr(Store, "sync", None)  # the writer thread's fsync (absent before it)

    def _commit(self: Store) -> None:
        t0 = time.perf_counter()
        commit(self)
        note(ev="commit", t0=t0, t1=time.perf_counter())

    def _sync(self: Store) -> int:
        before = self.synced
        t0 = time.perf_counter()
        done = int(sync(self))  # type: ignore[misc]
        if done > before:
            note(ev="sync", t0=t0, t1=time.perf_counter())
        return done

    send_held = service.Hub._send_held

    def _send_held(self: Any, item: Any) -> None:
        # Stamped as it is handed to the client: a station may have the screen before
        # the publish call returns (a stamp after it made "network" negative at times).
        t = time.perf_counter()
        send_held(self, item)
        if item.topic.endswith("/screen"):
            note(ev="pub", topic=item.topic, t=t)

    mqtt.Client._on_message = _on_message  # type: ignore[method-assign,assignment]
    Store.commit = _commit  # type: ignore[method-assign]
    if sync is not None:
        Store.sync = _sync  # type: ignore[method-assign]
    service.Hub._send_held = _send_held  # type: ignore[method-assign]
    # The real command line, as the unit runs it (tools never import the CLI module).
    sys.argv = ["coffre", "hub", "--config", ns.config]
    try:
        runpy.run_module("firmware.cli", run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


# --- the run -------------------------------------------------------------------------------------


class StationProc:
    """A station process and the events it printed."""

    def __init__(self, args: list[str], log: Path, group: Path) -> None:
        self.log = log
        with log.open("ab") as err:
            # In its group from the start: a later move of the whole process would take
            # the chips' threads back into the quota.
            self.proc = subprocess.Popen(
                args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                bufsize=1, preexec_fn=lambda: Cgroups.enter(group, os.getpid()),
            )  # fmt: skip
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.kept: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with contextlib.suppress(ValueError):
                self.events.put(json.loads(line))

    def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def next(self, kind: str, timeout: float = 20.0, *, keep: str | None = None) -> dict[str, Any]:
        """The next event of that kind (earlier ones of other kinds are dropped, but those
        of kind ``keep``, which go to ``kept``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {kind} from the station")
            try:
                event = self.events.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.proc.poll() is not None:
                    tail = self.log.read_text(errors="replace")[-2000:]
                    code = self.proc.returncode
                    raise ChildProcessError(f"a station ended ({code}): {tail}") from None
                continue
            if event.get("ev") == kind:
                return event
            if keep is not None and event.get("ev") == keep:
                self.kept.append(event)

    def drain(self) -> list[dict[str, Any]]:
        got = []
        with contextlib.suppress(queue.Empty):
            while True:
                got.append(self.events.get_nowait())
        return got

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.say("quit")
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Tap:
    """One tap's stamps (perf_counter seconds)."""

    station: str
    laid: float
    read: float
    sent: float
    input_id: str
    screen_in: float
    draw0: float
    draw1: float
    glass: float
    i2c_bytes: int
    #: CPU seconds (host) spent in the emulated MFRC522 while polling (in the quota), in
    #: the emulated SSD1306 for the frame (outside it, when moved), queueing the frame's
    #: I2C writes to it (in the quota); the SPI wire seconds of the poll.
    poll_emulated: float = 0.0
    render_emulated: float = 0.0
    render_queued: float = 0.0
    spi_wire: float = 0.0
    #: CPU seconds (host) of the RF exchanges during the poll (outside the quota, when
    #: moved); whether the frame reached the emulated panel after its wire time.
    poll_rf: float = 0.0
    late: bool = False
    hub_in: float = 0.0
    commit0: float = 0.0
    commit1: float = 0.0
    pub: float = 0.0
    stalled: bool = False

    def split(self) -> dict[str, float]:
        """Milliseconds in each step; they add up to the tap's total."""
        ms = 1000.0
        return {
            "poll": (self.read - self.laid) * ms,
            "station": ((self.sent - self.read) + (self.draw0 - self.screen_in)) * ms,
            "network": ((self.hub_in - self.sent) + (self.screen_in - self.pub)) * ms,
            "hub": ((self.commit0 - self.hub_in) + (self.pub - self.commit1)) * ms,
            "commit": (self.commit1 - self.commit0) * ms,
            "render": (self.draw1 - self.draw0) * ms,
            "i2c": (self.glass - self.draw1) * ms,
        }

    @property
    def total(self) -> float:
        return (self.glass - self.laid) * 1000.0

    def emulation_ms(self, share: float, outside: bool) -> float:
        """What the chips' emulation charged to the quota cost this tap at the station's
        CPU share (ms): silicon on a Pi, so the tap less this is the estimate without it."""
        charged = self.poll_emulated
        if not outside:
            charged += self.render_emulated + self.poll_rf
        return charged / share * 1000.0


@dataclass
class PiClassResult:
    shares: Shares
    confined: str
    poll_ms: float
    disk: tuple[float, float, float]
    i2c_hz: int = I2C_HZ
    #: Whether every station's chips ran outside its quota (cgroup v1 threads).
    chips_outside: bool = False
    taps: list[Tap] = field(default_factory=list)
    #: the stations' controls' class (``GpioControls``: gpiozero over mock pins)
    controls: str = ""

    def totals(self) -> list[float]:
        return [t.total for t in self.taps]

    def by_stall(self) -> tuple[list[float], list[float]]:
        """The totals of the taps that met no SD stall, and of those that met one."""
        clear = [t.total for t in self.taps if not t.stalled]
        stalled = [t.total for t in self.taps if t.stalled]
        return clear, stalled

    def lines(self) -> list[str]:
        from firmware.tools.bench import percentile

        def p50_p99(values: list[float]) -> str:
            if not values:
                return "none"
            return f"p50 {statistics.median(values):.1f} ms, p99 {percentile(values, 0.99):.1f} ms"

        totals = self.totals()
        commit, stall, every = self.disk
        zero = self.shares.zero
        beyond = " (beyond the SSD1306 datasheet's 400 kHz)" if self.i2c_hz > I2C_HZ else ""
        chips = (
            "the chips' emulation outside the Zero's quota (a thread of its own)"
            if self.chips_outside
            else "the chips' emulation inside the Zero's quota"
        )
        clear, stalled = self.by_stall()
        out = [
            f"Pi-class: stations as a Zero 2 W ({zero * 100:.1f} % of a core here), "
            f"hub and mosquitto as a Pi 4 ({self.shares.pi4 * 100:.1f} % each) by {self.confined}; "
            f"reader polled every {self.poll_ms:g} ms; SD card {commit:g} ms a commit, "
            f"a {stall:g} ms stall every {every:g} s; SSD1306 I2C at {self.i2c_hz / 1000:g} kHz"
            f"{beyond}; MFRC522 SPI wire time charged; {chips}"
            + (
                "; LED and buzzer through gpiozero (mock pins)"
                if self.controls == "GpioControls"
                else ""
            ),
            f"(calibration: {CALIBRATION_STEPS:,} n-body steps took {self.shares.here_s:.2f} s of "
            f"CPU here, {PI4_NBODY_S_PER_STEP * CALIBRATION_STEPS:.2f} s on a Pi 4)",
            f"{len(totals)} taps, tap to glass: p50 {statistics.median(totals):.1f} ms, "
            f"p99 {percentile(totals, 0.99):.1f} ms, max {max(totals):.1f} ms "
            f"({len(stalled)} taps met an SD stall)",
            f"  the {len(clear)} taps that met no stall: {p50_p99(clear)}; "
            f"the {len(stalled)} that met one: {p50_p99(stalled)}",
            "where the time goes (ms): step p50 / mean / p99",
        ]
        splits = [t.split() for t in self.taps]
        for step in STEPS:
            values = [s[step] for s in splits]
            out.append(
                f"  {step:<8} {statistics.median(values):7.2f} / {statistics.mean(values):7.2f}"
                f" / {percentile(values, 0.99):7.2f}"
            )
        us = 1e6
        where = "outside the quota" if self.chips_outside else "in the quota"

        def p50_us(values: list[float]) -> str:
            return f"{statistics.median(values) * us:.0f} us"

        out.append(
            f"  chips' emulation a tap, CPU here (p50): MFRC522 registers and hand-offs "
            f"{p50_us([t.poll_emulated for t in self.taps])} in the quota, its RF exchanges "
            f"{p50_us([t.poll_rf for t in self.taps])} {where}; SSD1306 "
            f"{p50_us([t.render_emulated for t in self.taps])} {where}, handing it the frame "
            f"{p50_us([t.render_queued for t in self.taps])} in the quota; SPI wire time "
            f"during the poll {p50_us([t.spi_wire for t in self.taps])}; "
            f"{sum(t.late for t in self.taps)} frames reached the emulated panel after "
            f"their I2C time (stamped when it had them)"
        )
        less = [t.total - t.emulation_ms(zero, self.chips_outside) for t in self.taps]
        chips_ms = [t.emulation_ms(zero, self.chips_outside) for t in self.taps]
        out.append(
            f"  the emulation left in the quota, at the Zero's share: p50 "
            f"{statistics.median(chips_ms):.2f} ms; tap to glass without it: {p50_p99(less)}"
        )
        sent = [t.i2c_bytes for t in self.taps]
        out.append(
            f"  (I2C bytes a frame: median {statistics.median(sent):.0f}, max {max(sent)}; "
            f"mean of the sum of steps {statistics.mean(totals):.2f} ms)"
        )
        return out


def _module_args(*extra: str) -> list[str]:
    return [sys.executable, "-m", "firmware.tools.piclass", *extra]


def run_pi_class(
    taps: int = 40,
    *,
    stations: int = 8,
    poll_interval: float = 0.02,
    disk: tuple[float, float, float] = (SD_COMMIT_MS, SD_STALL_MS, SD_STALL_EVERY_S),
    shares: Shares | None = None,
    workdir: Path | None = None,
    i2c_hz: int = I2C_HZ,
) -> PiClassResult:
    """The Pi-class tap run; raises RuntimeError when this machine has no CPU quotas."""
    from firmware.hub.brokerconf import HOST_USER
    from firmware.tools.bench import BENCH_GAME, stop_process
    from firmware.tools.brokers import start_broker
    from firmware.tools.simtable import PublicWatcher, SimTable

    cgroups = Cgroups()
    if cgroups.kind is None:
        raise RuntimeError(
            "no cgroup CPU control here (it needs root and a writable cpu controller)"
        )
    shares = shares or Shares.calibrate()
    workdir = workdir or Path(tempfile.mkdtemp(prefix="coffre-piclass-"))
    sim = SimTable(players=stations, workdir=workdir, embedded=False, seed=1, hub_mode="process")
    result = PiClassResult(
        shares, f"cgroup {cgroups.kind} CPU quotas", poll_interval * 1000, disk, i2c_hz
    )
    procs: list[StationProc] = []
    hub: subprocess.Popen[bytes] | None = None
    trace = workdir / "hub-trace.jsonl"
    broker = start_broker(workdir, sim.names, embedded=False)
    sim.broker = broker
    watch = PublicWatcher(broker.config(HOST_USER))
    try:
        chips = cgroups.chips()
        pi4_broker = cgroups.group("pi4-broker", shares.pi4)
        mosquitto = getattr(broker.process, "proc", None)
        if mosquitto is not None:
            cgroups.enter(pi4_broker, mosquitto.pid)
        watch.start()
        sim.watch = watch
        (workdir / "hub.toml").write_text(sim.hub_toml())
        pi4_hub = cgroups.group("pi4-hub", shares.pi4)
        env = {**os.environ, "COFFRE_SIMULATE_DISK": ",".join(f"{x:g}" for x in disk)}
        log = (workdir / "hub.log").open("ab")
        hub = subprocess.Popen(
            _module_args("hub", "--config", str(workdir / "hub.toml"), "--trace", str(trace)),
            stdout=log,
            stderr=log,
            env=env,
            preexec_fn=lambda: Cgroups.enter(pi4_hub, os.getpid()),
        )
        watch.wait_hub_ready(60)
        for name in sim.names:
            args = station_args(
                broker.station_config(name), name, poll_interval, shares.zero, i2c_hz, chips
            )
            group = cgroups.group(f"zero-{name}", shares.zero)
            procs.append(StationProc(_module_args(*args), workdir / f"station-{name}.log", group))
        outside, controls = [], set()
        for proc in procs:
            up = proc.next("up", 120)
            outside.append(bool(up.get("chips_outside")))
            controls.add(str(up.get("controls")))
            proc.next("frame", 120)  # the hub's first screen is on the glass
        result.chips_outside = all(outside)
        result.controls = controls.pop() if len(controls) == 1 else ""
        sim.host({"cmd": "start", "game": BENCH_GAME, "players": stations})
        watch.wait(lambda p: p.get("game") == BENCH_GAME, 30)
        time.sleep(1.0)
        for i in range(taps):
            k = i % stations
            uid = sim.keys.uid_for("mystery", None, 1 + k)
            result.taps.append(_one_tap(sim, watch, procs[k], sim.names[k], uid))
    finally:
        for proc in procs:
            proc.stop()
        stop_process(hub)
        with contextlib.suppress(Exception):
            watch.stop()
        broker.stop()
        cgroups.remove()
    _match_hub(result.taps, trace, disk)
    return result


def _one_tap(sim: Any, watch: Any, proc: StationProc, name: str, uid: str) -> Tap:
    proc.drain()
    proc.say(f"lay {uid}")
    laid_event = proc.next("laid")
    laid, before = laid_event["t"], laid_event["spent"]
    # The screen is stamped on the station's network thread, the input's publish on its
    # station thread: under the quota the answer can be stamped before "sent" is.
    proc.kept.clear()
    sent = proc.next("sent", keep="screen")
    early = [e for e in proc.kept if e["t"] >= sent["read"]]
    screen_in = early[0]["t"] if early else proc.next("screen")["t"]
    frame = proc.next("frame")
    while frame["t0"] < screen_in:
        frame = proc.next("frame")
    proc.say("lift")
    proc.next("lifted")
    version = watch.public["version"]
    proc.drain()
    sim.host({"cmd": "undo"})
    watch.wait(lambda p: bool(p["version"] != version), 30)
    proc.next("frame")  # the undone screen is drawn: the table is still again
    time.sleep(0.05)
    return Tap(
        name,
        laid,
        sent["read"],
        sent["sent"],
        sent["id"],
        screen_in,
        frame["t0"],
        frame["t1"],
        frame["glass"],
        frame["i2c_bytes"],
        poll_emulated=sent["spent"]["spi"] - before["spi"],
        render_emulated=frame["emulated"],
        render_queued=frame["queued"],
        poll_rf=sent["spent"]["rf"] - before["rf"],
        late=bool(frame["late"]),
        spi_wire=sent["spent"]["spi_wire"] - before["spi_wire"],
    )


def _match_hub(taps: list[Tap], trace: Path, disk: tuple[float, float, float]) -> None:
    """Fill in each tap's hub stamps from the hub's trace."""
    events = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    arrived = {e["id"]: e["t"] for e in events if e["ev"] == "in"}
    commits = [e for e in events if e["ev"] == "commit"]
    syncs = [e for e in events if e["ev"] == "sync"]
    pubs = [e for e in events if e["ev"] == "pub"]
    for tap in taps:
        tap.hub_in = arrived.get(tap.input_id, tap.sent)
        done = next((c for c in commits if c["t0"] >= tap.hub_in), None)
        if done is None:
            continue
        tap.commit0, tap.commit1 = done["t0"], done["t1"]
        # With a writer thread, the commit is durable at the end of the first fsync that
        # started after it ended (the SD card's time is there).
        synced = next((x for x in syncs if x["t0"] >= done["t1"]), None)
        if synced is not None:
            tap.commit1 = synced["t1"]
        tap.stalled = disk[1] > 0 and (tap.commit1 - tap.commit0) * 1000 > disk[0] + disk[1] / 2
        topic = f"/station/{tap.station}/screen"
        pub = next((p for p in pubs if p["t"] >= tap.commit1 and p["topic"].endswith(topic)), None)
        tap.pub = pub["t"] if pub is not None else tap.commit1


def report(args: Any) -> int:
    """``coffre bench --pi-class``: print the run's figures."""
    disk = (
        args.commit_delay or SD_COMMIT_MS,
        args.stall or SD_STALL_MS,
        args.stall_every or SD_STALL_EVERY_S,
    )
    runs, i2c_hz = getattr(args, "runs", 1), getattr(args, "i2c_hz", I2C_HZ)
    results = []
    for k in range(runs):
        if runs > 1:
            print(f"--- run {k + 1} of {runs}", flush=True)
        try:
            result = run_pi_class(args.taps, stations=args.stations, disk=disk, i2c_hz=i2c_hz)
        except RuntimeError as exc:
            print(f"coffre: bench --pi-class: {exc}", file=sys.stderr)
            return 2
        for line in result.lines():
            print(line, flush=True)
        results.append(result)
    if runs > 1:
        print(summary(results))
    return 0


def summary(results: list[PiClassResult]) -> str:
    """The median over whole runs of each run's p50 and p99: one run moves by ~10-30 ms
    with the quota's period against a tap's steps (docs/benchmarks.md), so two trees are
    compared by several runs each, calibrated afresh."""
    from firmware.tools.bench import percentile

    def median_of(figures: list[float]) -> str:
        listed = ", ".join(f"{f:.1f}" for f in figures)
        return f"median {statistics.median(figures):.1f} ms ({listed})"

    p50s = [statistics.median(r.totals()) for r in results]
    p99s = [percentile(r.totals(), 0.99) for r in results]
    clear_p99s = [percentile(c, 0.99) for r in results if (c := r.by_stall()[0])]
    line = f"{len(results)} runs: tap to glass p50 {median_of(p50s)}; p99 {median_of(p99s)}"
    if clear_p99s:
        line += f"; taps that met no stall, p99 {median_of(clear_p99s)}"
    return line


def station_args(
    config: BrokerConfig,
    name: str,
    poll_interval: float,
    share: float = 1.0,
    i2c_hz: int = I2C_HZ,
    chips: Path | None = None,
) -> list[str]:
    """A station process's arguments (its broker's as bench gives them: whole)."""
    from firmware.tools.bench import broker_args
    from firmware.tools.brokers import TABLE

    args = ["station", "--table", TABLE, "--id", name, "--poll", str(poll_interval)]
    args += ["--share", repr(share), "--i2c-hz", str(i2c_hz)]
    if chips is not None:
        args += ["--chips", str(chips)]
    return args + broker_args(config)


def parser() -> argparse.ArgumentParser:
    """The command line of this module's processes (a station, the hub)."""
    parser = argparse.ArgumentParser(description="coffre bench --pi-class's processes")
    sub = parser.add_subparsers(dest="role", required=True)
    st = sub.add_parser("station")
    st.add_argument("--table", required=True)
    st.add_argument("--id", required=True)
    st.add_argument("--poll", type=float, default=0.02)
    st.add_argument("--host", default="127.0.0.1")
    st.add_argument("--port", type=int, required=True)
    st.add_argument("--username")
    st.add_argument("--password")
    st.add_argument("--ca")
    st.add_argument("--share", type=float, default=1.0, help="the Zero's share of a core here")
    st.add_argument("--i2c-hz", type=int, default=I2C_HZ)
    st.add_argument("--chips", help="a cgroup v1 tasks file for the chips' threads")
    hb = sub.add_parser("hub")
    hb.add_argument("--config", required=True)
    hb.add_argument("--trace", required=True)
    return parser


if __name__ == "__main__":
    ns = parser().parse_args()
    sys.exit(station_main(ns) if ns.role == "station" else hub_main(ns))
