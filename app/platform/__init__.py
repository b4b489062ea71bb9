"""What the desktop and the OS offer: backends, display, portal, Wayland, per-user files, the one instance."""
