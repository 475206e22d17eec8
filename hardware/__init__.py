"""Pin maps, key sets and other hardware data, shipped as TOML files."""
