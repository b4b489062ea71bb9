"""One module per way of listening for global hotkeys; `app.hotkey.main.REGISTRY` orders them."""
