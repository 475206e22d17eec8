"""Phase names shared by the hub's screens and the table display (which may not import the
hub): message ids, said in the table's language through :func:`firmware.link.lang.label`."""

from __future__ import annotations

from firmware.link.lang import N_

#: Ultra Secret's phases, on the stations, the hub display and the table display alike.
ULTRA_SECRET_PHASES = {
    "hide": N_("Hide"),
    "bug": N_("Bug"),
    "dial": N_("Dial"),
    "informant": N_("Informant"),
    "search": N_("Search"),
    "file": N_("File"),
    "flight": N_("Flight"),
    "over": N_("Over"),
}
