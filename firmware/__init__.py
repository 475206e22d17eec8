"""The programs: station, hub, protocol, table bindings, store, simulator, CLI."""
