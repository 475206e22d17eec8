"""The console's backup in Chromium at phone size, on a real table (mosquitto with its ACL,
the real hub with its panel, the display as the host user): the phone asks, root makes it
(``coffre backup --requested``, run here as the test's user), the hub's glass shows the
key, the phone downloads the sealed file, and the key restores it. The page never shows
the key. Screenshots go to ``$COFFRE_SHOTS`` when it is set."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from playwright.sync_api import expect

from device.mock import MockDisplay
from firmware.cli import main
from firmware.display.console import SESSION_COOKIE
from firmware.hub.backup_request import REQUEST
from firmware.hub.sealed import shown
from firmware.link.render import render_lines
from firmware.tools.simtable import SimTable
from tests.support.browser import chromium, new_page
from tests.support.console_display import PHONE, console_display, granted, shot, until
from tests.support.tables import TableFactory


def _glass_shows(sim: SimTable, title: str, lines: list[str]) -> bool:
    """Whether the hub's panel shows exactly this screen."""
    assert sim.hub is not None and sim.hub.out.painter is not None
    sim.hub.out.painter.wait_idle(5)
    display = sim.panel.display
    assert isinstance(display, MockDisplay)
    frame = display.last
    return frame is not None and frame.tobytes() == render_lines(title, lines).tobytes()


def test_the_phone_asks_the_glass_shows_the_key_the_phone_downloads_it_sealed(
    make_table: TableFactory, tmp_path: Path
) -> None:
    sim = make_table(players=3)
    console, url = console_display(sim)
    backups = tmp_path / "backups"
    backups.mkdir()
    assert sim.hub is not None
    sim.hub.out.backups.folder = backups  # hub.toml's [backup] dir
    console.backups = backups  # display.toml's [console] backups
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "hub.toml").write_text(sim.hub_toml())
    with chromium() as browser:
        page = new_page(browser, PHONE)
        page.context.add_cookies([{"name": SESSION_COOKIE, "value": granted(console), "url": url}])
        page.goto(url)
        expect(page.locator("section.care .last-backup")).to_have_text("No backup made yet")
        expect(page.locator("#download")).to_be_hidden()
        page.click("section.care button.backup")
        said = page.locator("section.care .said")
        expect(said).to_have_text("Backup asked: the key shows on the hub")
        request = backups / REQUEST
        assert until(request.is_file)
        assert sim.broker.conf_dir is not None
        assert main(["backup", "--requested", str(request), "--store", str(sim.store_path),
                     "--broker-dir", str(sim.broker.conf_dir), "--etc", str(etc)]) == 0  # fmt: skip
        (archive,) = backups.glob("*.sealed")
        asked = sim.hub.out.backups.asked
        assert asked is not None
        key = asked.key
        assert until(lambda: _glass_shows(sim, "Backup key", [*shown(key), "ok: written down"]))
        download = page.locator("#download a")
        expect(download).to_have_text("Download the sealed backup", timeout=10_000)
        expect(page.locator("section.care .last-backup")).to_contain_text(archive.name)
        shot(page, "backup")
        with page.expect_download() as started:
            download.click()
        got = started.value
        assert got.suggested_filename == archive.name
        saved = tmp_path / "phone" / got.suggested_filename
        got.save_as(saved)
        assert saved.read_bytes() == archive.read_bytes()
        for form in (key, *shown(key), key.lower()):
            assert form not in page.content(), "the key is on the hub's glass only"
        page.click("section.care button.backup")  # a second ask, too soon
        expect(said).to_have_text("Next backup in 10 min")
    time.sleep(1.6)  # an ok this soon after the key came would be held
    sim.panel.press("ok")
    assert until(lambda: sim.hub is not None and sim.hub.out.backups.asked is None)
    assert until(lambda: not _glass_shows(sim, "Backup key", [*shown(key), "ok: written down"]))
    key_file = tmp_path / "key.txt"
    key_file.write_text(" ".join(shown(key)).lower())
    fresh = tmp_path / "fresh"
    assert main(["restore", str(saved), "--key-file", str(key_file),
                 "--store", str(fresh / "hub.sqlite3"), "--broker-dir", str(fresh / "broker"),
                 "--etc", str(fresh / "etc")]) == 0  # fmt: skip
    with sqlite3.connect(fresh / "hub.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
    users = sim.broker.conf_dir / "passwd"  # every broker user: the stations stay paired
    assert (fresh / "broker" / "passwd").read_bytes() == users.read_bytes()
