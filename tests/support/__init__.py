"""Shared test support: fixtures, harnesses and helpers; tests import only from here.

- ``golden``: the golden switch (COFFRE_REGEN_GOLDEN, read once) and picture comparisons.
- ``tables``: whole tables on a real mosquitto (fixtures the conftests register, spies,
  score and refusal checks).
- ``tls``: a TLS mosquitto for link tests.
- ``hubrig``: a hub without a broker, fed messages directly.
- ``screens``: whole games on an in-process table, screen by screen.
- ``games``: per-game engine helpers (builders, bots, re-deals of what a seat cannot know).
- ``playouts``: random games of every engine and the public payload the hub would send.
- ``browser``: headless Chromium and the table display.
- ``sniffer``: a TCP hop that records or cuts MQTT traffic.
- ``leaks``: English words on a French screen.
- ``emulated``: reader events and pixel-exact image equality for emulated chips.
- ``keysets``: the generator of hardware/keysets/default.toml.
"""
