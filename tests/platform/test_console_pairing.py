"""Pairing from the host's console, in Chromium at phone size: a real mosquitto (TLS,
broker-config's files, the ACL), the hub that pairs, stations that ask over the enrol
user, and the display serving ``/host`` as the host user, which reads the hub's host
screen for every waiting code (docs/host-guide.md, docs/pairing.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from firmware.display.console import SESSION_COOKIE, Console
from firmware.hub import pairing as hub_pairing
from tests.support.browser import chromium, new_page
from tests.support.console_display import PHONE, granted, shot, start_console
from tests.support.pairing import (
    TABLE,
    Asker,
    Rig,
    T,
    latest,
    pair_in_background,
    rig_fixture,
    stranger,
)

__all__ = ["rig_fixture"]  # the fixture "rig"

#: Notes, as each swap of the live part lands, every Pair beside a code and whether it
#: could be pressed then.
PAIRS = """
window.__pairs = [];
new MutationObserver(function () {
  document.querySelectorAll('#live form.pair[data-code]').forEach(function (f) {
    var pair = f.querySelector('button[type=submit]');
    window.__pairs.push([f.dataset.station, f.dataset.code, pair.disabled]);
  });
}).observe(document, {childList: true, subtree: true});
"""


@pytest.fixture(name="phone")
def phone_fixture(rig: Rig) -> Iterator[tuple[Any, Console]]:
    """The console of the rig's table, signed in, in Chromium at phone size."""
    console, display, url = start_console(rig.broker, TABLE)
    try:
        with chromium() as browser:
            page = new_page(browser, PHONE)
            page.add_init_script(PAIRS)
            token = granted(console, TABLE)
            page.context.add_cookies([{"name": SESSION_COOKIE, "value": token, "url": url}])
            page.goto(url)
            yield page, console
    finally:
        display.stop()


def seat(page: Any, station: str) -> Any:
    return page.locator(f"#live form.pair[data-station={station}]")


def test_both_waiting_codes_show_beside_their_seats_and_pair_grants_the_one_pressed(
    rig: Rig, phone: tuple[Any, Console]
) -> None:
    """p1 and p2 ask at once: the console shows each seat's code (the hub's, as on its
    glass) large beside it with "Same code on p1's screen?"; a Pair that just appeared
    cannot be pressed for a moment (it may have come under the host's finger). Pair
    beside p1 pairs p1's station; Refuse beside p2 refuses p2's."""
    page, _console = phone
    first, result1, _stop1, thread1 = pair_in_background(rig.station_toml("p1"))
    second, result2, _stop2, thread2 = pair_in_background(rig.station_toml("p2"))
    codes = {"p1": first.code(), "p2": second.code()}
    for station, code in codes.items():
        expect(seat(page, station).locator(".hub-code")).to_have_text(code, timeout=10_000)
        expect(seat(page, station).locator(".same")).to_have_text(
            f"Same code on {station}'s screen?"
        )
    assert seat(page, "p3").count() == 0
    assert page.locator("#live input[name=code]:not([type=hidden])").count() == 0  # no typing
    noted: list[list[Any]] = page.evaluate("window.__pairs")
    for station, code in codes.items():
        appeared = next(p for p in noted if p[:2] == [station, code])
        assert appeared[2] is True, noted  # held back as it appeared
    expect(seat(page, "p1").locator("button[type=submit]")).to_be_enabled()
    expect(seat(page, "p2").locator("button[type=submit]")).to_be_enabled()
    shot(page, "pairing")
    seat(page, "p1").locator("button[type=submit]").click()
    expect(page.locator("#said")).to_have_text("p1 paired", timeout=10_000)
    thread1.join(15)
    assert result1 == [True] and "Paired" in first.lines
    seat(page, "p2").locator("button.refuse").click()
    expect(page.locator("#said")).to_have_text("p2: pairing refused", timeout=10_000)
    thread2.join(15)
    assert result2 == [False] and "Refused by the host" in second.lines
    expect(page.locator("#live form.pair")).to_have_count(0, timeout=10_000)
    assert len(rig.reloads) == 1  # one station's password written: p1's


def test_a_request_replaced_between_the_look_and_the_press_is_not_paired(
    rig: Rig, phone: tuple[Any, Console], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page shows p1's code; before the host presses Pair (the phone's Wi-Fi holds the
    page's refresh back), someone on the Wi-Fi asks to be p1 (both requests refused),
    then asks again once the seat cooled down, with a code of his. Pair sends the code
    the host looked at: the hub grants nothing (`p1 asks with another code: not paired`)
    and the new request stays for the host, its own code beside p1 once the page
    refreshes."""
    monkeypatch.setattr(hub_pairing, "SEAT_COOLDOWN", 0.2)
    page, _console = phone
    screens = rig.watch(T.host_screen)
    glass, result, _stop, thread = pair_in_background(rig.station_toml("p1"))
    looked = glass.code()
    pair = seat(page, "p1").locator("button[type=submit]")
    expect(seat(page, "p1").locator(".hub-code")).to_have_text(looked, timeout=10_000)
    expect(pair).to_be_enabled()
    page.route("**/live", lambda route: route.abort())  # no refresh reaches the page
    attacker = Asker(stranger(rig))
    attacker.hello("p1", "evil-0")
    assert (told := attacker.reply("evil-0")) is not None and told.step == "refused"
    thread.join(15)
    assert result == [False] and "Two requests" in glass.lines
    theirs, attempt = looked, 0
    while theirs == looked:  # his code differs from the one looked at (1 in 10,000 not)
        if attempt:
            assert rig.host("refuse", "p1").ok
        attempt += 1
        time.sleep(hub_pairing.SEAT_COOLDOWN + 0.1)
        session = f"evil-{attempt}"
        attacker.hello("p1", session)
        challenge = attacker.reply(session)
        assert challenge is not None and challenge.step == "challenge", challenge
        attacker.reveal("p1", session)
        theirs = attacker.code(challenge)
    latest(screens, T.host_screen, f'"pairing":{{"p1":"{theirs}"}}')
    passwd = (rig.broker.conf_dir / "passwd").read_bytes()  # type: ignore[operator]
    expect(seat(page, "p1").locator(".hub-code")).to_have_text(looked)  # the page's look
    pair.click()
    expect(page.locator("#said")).to_have_text("p1 asks with another code: not paired")
    assert attacker.reply(session, timeout=1.0) is None  # neither granted nor refused
    assert rig.reloads == [] and (rig.broker.conf_dir / "passwd").read_bytes() == passwd  # type: ignore[operator]
    page.unroute("**/live")
    expect(seat(page, "p1").locator(".hub-code")).to_have_text(theirs, timeout=10_000)
