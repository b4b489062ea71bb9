"""Whole pages read block by block: the read, `hayai page`, `hayai bench --page`."""
