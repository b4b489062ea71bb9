"""`hayai serve`: the engine behind an OpenAI-compatible HTTP API (docs/server.md).

cli.py      the command: checks, loads the model, runs uvicorn
api.py      the Starlette application: routes, request parsing, OpenAI-style errors
batcher.py  ONE model thread: concurrent requests decoded together (continuous batching)
images.py   request bytes → RGB image (the one place where the server decodes images)
bench.py    `hayai bench --serve`: crops/s, time to first token, latency at several concurrencies
"""
