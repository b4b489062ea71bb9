"""One module per way of reading the screen; `app.capture.main.REGISTRY` orders them."""
