"""Benchmarks: ``coffre bench`` in each of its modes, and what they share.

Run by: developers on any Linux box (``coffre bench``), ``tests/bench/`` and the tests.
Holds: one module a mode (``tap``, ``load`` for the load and venue modes, ``pi_class``),
the processes they start (``echo``, ``sniffer``, ``traced_hub``, the station of
``pi_zero_model``), the models they run under (``cpu_quota``, ``pi_zero_model``,
``sd_card``), and ``command``, which picks the mode from the options.
May import: anything of ours; nothing imports ``firmware.bench`` but ``firmware.cli`` and
the tests.
"""
