"""A Raspberry Pi Zero 2 W station, modelled on emulated chips for ``coffre bench --pi-class``.

The station process (:func:`station_main`) runs the real station service and the real
MFRC522 and SSD1306 driver code on emulated chips (:mod:`device.emulated`), in a cgroup
quota of the Zero's CPU share (:mod:`firmware.bench.cpu_quota`). What is silicon or wire on
a Pi is charged as a Pi pays it (:func:`wire`):

- the emulated SSD1306 and the MFRC522's RF exchanges run on threads that cgroup v1 moves
  out of the quota (:class:`ChipThread`), the real driver code stays in it;
- the SSD1306's I2C time is charged for the bytes the driver actually sent (address byte,
  control bytes and data, 9 clocks a byte at ``--i2c-hz``, 400 kHz by default: the
  datasheet's): the station thread sleeps that long after each frame, as it would block in
  the ``i2c_rdwr`` ioctl, and the frame is on the glass when that time is up, however late
  the quota lets the thread wake (:meth:`Buses.frame`);
- the MFRC522's SPI wire time is charged as the BCM2835 driver spends it (CPU when it
  polls, a sleep when it waits for an interrupt);
- the LED and the buzzer are the station's gpiozero devices over gpiozero's mock pins
  (:func:`mock_pin_controls`), so their Python is charged as on a Pi.

The process prints its stamps (``time.perf_counter()``) as JSON lines: the Pi-class run
(:mod:`firmware.bench.pi_class`) reads them.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import queue
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

#: The SSD1306's I2C clock unless told otherwise: its datasheet's rating.
I2C_HZ = 400_000
I2C_BITS_PER_BYTE = 9  # 8 data bits and the ACK
I2C_FRAME_BITS = 2  # START and STOP


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
