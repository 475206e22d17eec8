"""What hub and station both speak: the link between them.

Run by: every coffre process (station, hub, tools).
Holds: the MQTT protocol (topics, payload types, size limits), the MQTT client, the
client side of TLS, the screen model's renderer for a 128x64 glass, the config
pieces both configuration files share, and what every coffre process shares (its version,
exit statuses, one-line failure and stop signals: ``process``).
May import: the standard library, paho-mqtt, msgspec, Pillow — never ``firmware.hub``,
``firmware.station``, ``firmware.tools``, ``rules`` or ``device``.
"""
