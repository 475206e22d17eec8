"""The Pi-class run's model of a station's buses (``firmware.bench.pi_zero_model.wire``) and its
report: the chips' work moved to threads changes nothing the station sees, and the report
splits the taps by whether they met an SD stall."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from device.base import TagPresent
from device.emulated import EmulatedStation, open_emulated_station, rack
from firmware.bench import pi_class, pi_zero_model
from firmware.bench.cpu_quota import Shares

GOLDEN = Path(__file__).resolve().parent.parent / "platform" / "golden" / "si-5p" / "p1"


@pytest.fixture
def wired(monkeypatch: pytest.MonkeyPatch) -> object:
    """Restore the fake buses' methods that ``wire`` replaces, after the test."""
    for owner, name in (
        (rack.FakeSpiDev, "_transfer"),
        (rack.FakeSMBus, "_write"),
        (EmulatedStation, "glass_written"),
    ):
        monkeypatch.setattr(owner, name, getattr(owner, name))
    return None


def frames() -> list[Image.Image]:
    return [Image.open(p).convert("1") for p in sorted(GOLDEN.glob("*.png"))[:6]]


def shown(station: EmulatedStation, buses: pi_zero_model.Buses | None) -> list[bytes]:
    """Show the golden frames as the Pi-class station does; what the glass showed."""
    for image in frames():
        if buses is not None:
            buses.batch = []
        station.display.show(image)
        if buses is not None:
            buses.flush()
    if buses is not None:
        buses.drain()
    return [f.tobytes() for f in station.display.frames]


def test_the_glass_shows_the_same_frames_with_the_panel_on_its_thread(wired: object) -> None:
    """The SSD1306 emulated on its own thread ends with the same frames on the glass, and
    the bytes charged to the bus are the bytes the panel took (plus an address byte each)."""
    with open_emulated_station() as plain:
        expected = shown(plain, None)
    with open_emulated_station() as station:
        buses = pi_zero_model.wire(station, 0.08, None, 400_000)
        before = station.panel.bytes_written + station.panel.writes
        got = shown(station, buses)
        taken = station.panel.bytes_written + station.panel.writes - before
        charged = buses.i2c_bytes
        buses.update()
    assert got == expected and len(got) > 1
    assert charged == taken
    assert buses.spent["i2c"] > 0


def test_the_glass_is_when_the_bytes_are_sent_not_when_the_thread_wakes(wired: object) -> None:
    """A frame is on the glass when the driver is done plus its bytes' I2C time; a
    station thread that wakes late from that wait (a quota's throttled part) does not move
    it. A frame the emulated panel takes later than that is stamped when it takes it."""
    with open_emulated_station() as station:
        buses = pi_zero_model.wire(station, 0.08, None, 400_000)
        slept: list[float] = []

        def wake_late(seconds: float) -> None:
            slept.append(seconds)
            time.sleep(seconds + 0.05)

        image = frames()[1]
        stamps = buses.frame(station.display.show, image, sleep=wake_late)
        woke = time.perf_counter()
        assert station.display.frames[-1].tobytes() == image.tobytes()
        assert not stamps["late"]
        assert slept == [pytest.approx(stamps["glass"] - stamps["t1"])]
        assert slept[0] >= stamps["i2c_bytes"] * 9 / 400_000 > 0
        assert woke - stamps["glass"] >= 0.05

        # The panel's thread busy past the wire time: the glass waits for the panel.
        busy = threading.Event()
        buses.panel_thread.put(busy.wait, 5.0)
        released: list[float] = []

        def release_later(seconds: float) -> None:
            time.sleep(seconds)
            released.append(time.perf_counter() + 0.05)
            threading.Timer(0.05, busy.set).start()

        stamps = buses.frame(station.display.show, frames()[2], sleep=release_later)
        assert stamps["late"]
        assert stamps["glass"] >= released[0]
        assert station.display.frames[-1].tobytes() == frames()[2].tobytes()


def test_a_nack_is_raised_where_the_driver_wrote(wired: object) -> None:
    """With a fault armed, the write runs inline: the driver sees the NACK and sends the
    frame again, as on a Pi."""
    with open_emulated_station() as station:
        buses = pi_zero_model.wire(station, 0.08, None, 400_000)
        station.panel.fail_writes(1)
        image = frames()[1]
        buses.batch = []
        station.display.show(image)
        buses.flush()
        buses.drain()
        assert station.display.failures == 1
        assert station.display.frames[-1].tobytes() == image.tobytes()


def test_a_card_is_read_with_its_rf_exchanges_on_their_thread(wired: object) -> None:
    """The reader reads a 7-byte UID while the chip's RF exchanges run on the other
    thread; the poll's SPI wire time is counted."""
    with open_emulated_station(timer="realtime") as station:
        buses = pi_zero_model.wire(station, 0.08, None, 400_000)
        station.field.place("04A1B2C3D4E5F6")
        assert station.reader.poll() == TagPresent("04A1B2C3D4E5F6")
        buses.update()
        assert buses.spent["rf"] > 0 and buses.spent["spi_wire"] > 0
        assert buses.spi_polled > 0 and buses.spi_owed > 0  # short and long transfers


def tap(total_ms: float, stalled: bool) -> pi_class.Tap:
    s = total_ms / 1000
    return pi_class.Tap(
        "p1", 0.0, 0.01, 0.012, "x:1", s - 0.03, s - 0.029, s - 0.02, s, 846,
        hub_in=0.013, commit0=0.014, commit1=0.02, pub=0.021, stalled=stalled,
    )  # fmt: skip


def test_the_report_splits_the_taps_by_stall() -> None:
    """The report gives p50/p99 over all taps, over those that met no stall, and how
    many met one; a clock beyond 400 kHz is said to be beyond the datasheet."""
    taps = [tap(60 + i, False) for i in range(9)] + [tap(170, True)]
    result = pi_class.PiClassResult(
        Shares(0.25, 0.08, 1.5), "cgroup v1 CPU quotas", 20, (5, 100, 2), 1_000_000,
        True, taps,
    )  # fmt: skip
    text = "\n".join(result.lines())
    assert "10 taps, tap to glass: p50 64.5 ms" in text
    assert "(1 taps met an SD stall)" in text
    assert "the 9 taps that met no stall: p50 64.0 ms" in text
    assert "the 1 that met one: p50 170.0 ms" in text
    assert "I2C at 1000 kHz (beyond the SSD1306 datasheet's 400 kHz)" in text
    assert "beyond" not in "\n".join(
        pi_class.PiClassResult(result.shares, "x", 20, (5, 100, 2), 400_000, True, taps).lines()
    )


def test_several_runs_are_summed_up_by_the_median_of_their_figures() -> None:
    """With several runs the last line gives the median of the runs' p50s and p99s (each
    run listed), and of the p99s over the taps that met no stall."""

    def result(base: float, stalled: int) -> pi_class.PiClassResult:
        taps = [tap(base + i, False) for i in range(10 - stalled)]
        taps += [tap(200 + i, True) for i in range(stalled)]
        return pi_class.PiClassResult(
            Shares(0.25, 0.08, 1.5), "x", 20, (5, 100, 2), 400_000, True, taps
        )

    line = pi_class.summary([result(40, 0), result(70, 2), result(50, 1)])
    # p50s: 44.5, 74.5, 54.5; p99s (nearest rank): 49.0, 201.0, 200.0; no stall: 49, 77, 58
    assert line == (
        "3 runs: tap to glass p50 median 54.5 ms (44.5, 74.5, 54.5); "
        "p99 median 200.0 ms (49.0, 201.0, 200.0); "
        "taps that met no stall, p99 median 58.0 ms (49.0, 77.0, 58.0)"
    )


def test_a_pi_class_option_without_pi_class_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--runs`` or ``--i2c-hz`` without ``--pi-class`` would be ignored: the bench says so
    in one line and runs nothing."""
    from firmware.bench import command
    from firmware.cli import build_parser

    args = build_parser().parse_args(["bench", "--runs", "3", "--i2c-hz", "1000000"])
    assert command.main(args) == 2
    err = capsys.readouterr().err
    assert err == "coffre: bench: --runs and --i2c-hz work only with --pi-class\n"
    assert command.main(build_parser().parse_args(["bench", "--runs", "2"])) == 2
    assert capsys.readouterr().err == "coffre: bench: --runs works only with --pi-class\n"


def test_an_answer_stamped_before_the_sent_input_is_kept(tmp_path: Path) -> None:
    """A station may stamp the hub's screen (network thread) before it stamps its input as
    sent (station thread): waiting for "sent" keeps that screen instead of dropping it."""
    events = [{"ev": "screen", "t": 2.0}, {"ev": "frame", "t0": 2.5}, {"ev": "sent", "read": 1}]
    script = f"import json\nfor e in {events!r}: print(json.dumps(e), flush=True)\ninput()"
    # A plain folder stands in for the quota group (its cgroup.procs is then a plain file).
    proc = pi_class.StationProc([sys.executable, "-c", script], tmp_path / "log", tmp_path)
    try:
        assert proc.next("sent", 10, keep="screen") == events[2]
        assert proc.kept == [events[0]]
    finally:
        proc.stop()


def test_the_stations_controls_are_gpiozero_with_the_flap_closed() -> None:
    """The Pi-class station's controls are gpiozero's (over mock pins) with the flap
    closed and the peek button released: a lifted flap would draw the secret, a frame
    no tap draws; a beep still sounds and ends on the buzzer's pin."""
    from device.gpio import GpioControls

    controls = pi_zero_model.mock_pin_controls()
    try:
        assert isinstance(controls, GpioControls)
        assert not controls.flap_open and not controls.peek_held
        controls.beep("tick")
        assert controls.wait_beep(timeout=10)
    finally:
        controls.close()
