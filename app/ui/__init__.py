"""Windows and widgets of the tray app (Qt lives here)."""
