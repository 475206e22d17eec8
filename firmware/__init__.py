"""The programs, by who runs them.

- ``firmware.link``: what hub and station both speak (protocol, MQTT, TLS client, screens).
- ``firmware.hub``: the referee on the hub Pi (tables, store, bindings, broker set-up).
- ``firmware.station``: the terminal on each station Pi.
- ``firmware.tools``: the simulator, bots, benchmarks and replay, for developers.
- ``firmware.cli``: the ``coffre`` command on top of them all.

Imports point one way: tools -> hub, station -> link. ``tests/test_layout.py`` checks it.
"""
