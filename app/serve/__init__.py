"""`hayai serve`: the engine behind an OpenAI-compatible HTTP API (docs/server.md).

cli.py      the command: checks, loads the model, runs uvicorn
api.py      the Starlette application: routes, request parsing, OpenAI-style errors
batcher.py  concurrent requests decoded together (continuous batching) on the model thread
model_thread.py  the ONE thread that loads, warms up and reads the model
images.py   request bytes → RGB image (the one place where the server decodes images)
bench.py    `hayai bench --serve`: crops/s, time to first token, latency at several concurrencies
"""
