"""An HTTP/3 client that volley did not write: aioquic's (PyPI `aioquic`), for the interop tests.

Usage: python3 h3_client.py HOST PORT CA_PEM PATH [BODY]

Connects over QUIC (ALPN h3), verifying the server with CA_PEM, sends one request (GET, or
POST with BODY), and prints `status N`, each response header as `NAME: VALUE`, and then
`body ` and the body. Exits 1 when it gets no response within 10 s.
"""

import asyncio
import sys

from aioquic.asyncio import QuicConnectionProtocol, connect
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.headers = []
        self.body = b""
        self.done = asyncio.get_event_loop().create_future()

    def quic_event_received(self, event):
        for e in self.http.handle_event(event):
            if isinstance(e, HeadersReceived):
                self.headers += e.headers
            elif isinstance(e, DataReceived):
                self.body += e.data
            if isinstance(e, (HeadersReceived, DataReceived)) and e.stream_ended:
                self.done.set_result(True)

    async def request(self, authority, path, body):
        stream_id = self._quic.get_next_available_stream_id()
        method = b"POST" if body is not None else b"GET"
        self.http.send_headers(
            stream_id,
            [(b":method", method), (b":scheme", b"https"), (b":authority", authority.encode()),
             (b":path", path.encode()), (b"user-agent", b"aioquic")],
            end_stream=body is None,
        )
        if body is not None:
            self.http.send_data(stream_id, body.encode(), end_stream=True)
        self.transmit()
        await asyncio.wait_for(self.done, 10)


async def main(host, port, ca, path, body):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    config.load_verify_locations(ca)
    async with connect(host, port, configuration=config, create_protocol=Client) as client:
        await client.request(f"{host}:{port}", path, body)
        status = dict(client.headers).get(b":status", b"?").decode()
        print(f"status {status}")
        for name, value in client.headers:
            if not name.startswith(b":"):
                print(f"{name.decode()}: {value.decode()}")
        print("body " + client.body.decode(errors="replace"))


if __name__ == "__main__":
    args = sys.argv[1:]
    try:
        asyncio.run(main(args[0], int(args[1]), args[2], args[3], args[4] if len(args) > 4 else None))
    except (asyncio.TimeoutError, ConnectionError) as e:
        print(f"no response: {e!r}", file=sys.stderr)
        sys.exit(1)
