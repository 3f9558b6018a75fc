"""A WebSocket echo server volley did not write (tests/websocket.rs), on Python's `websockets`.

`python3 ws_echo_server.py` prints its port, then echoes every message at once on any path.
It pings each client every 20 ms and closes the connection (1011) when a pong is 200 ms late,
so a client that does not answer pings fails its longer streams.
"""

import asyncio

from websockets.asyncio.server import serve


async def echo(websocket):
    async for message in websocket:
        await websocket.send(message)


async def main():
    async with serve(
        echo, "127.0.0.1", 0, ping_interval=0.02, ping_timeout=0.2
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        await asyncio.get_running_loop().create_future()


asyncio.run(main())
