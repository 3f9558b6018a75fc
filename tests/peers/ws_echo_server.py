"""A WebSocket echo server volley did not write (tests/websocket.rs), on Python's `websockets`.

`python3 ws_echo_server.py` prints its port, then echoes every message on any path: at once,
or, for a JSON object with a number `delay_ms`, that long after it arrived (so replies can
overtake each other). It pings each client every 20 ms and closes the connection (1011) when a
pong is 200 ms late, so a client that does not answer pings fails its longer streams.
"""

import asyncio
import json

from websockets.asyncio.server import serve


def delay_of(message):
    try:
        value = json.loads(message)
    except ValueError:
        return 0
    delay = value.get("delay_ms", 0) if isinstance(value, dict) else 0
    return delay / 1000 if isinstance(delay, (int, float)) else 0


async def echo(websocket):
    async def later(message, delay):
        await asyncio.sleep(delay)
        await websocket.send(message)

    pending = set()
    async for message in websocket:
        delay = delay_of(message)
        if delay == 0:
            await websocket.send(message)
            continue
        task = asyncio.create_task(later(message, delay))
        pending.add(task)
        task.add_done_callback(pending.discard)


async def main():
    async with serve(
        echo, "127.0.0.1", 0, ping_interval=0.02, ping_timeout=0.2
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        await asyncio.get_running_loop().create_future()


asyncio.run(main())
