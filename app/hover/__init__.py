"""Hover to read's parts: the blocks around the pointer, the character under it, its view, its bench."""
