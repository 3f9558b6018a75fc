"""An HTTP/3 server that volley did not write: aioquic's (PyPI `aioquic`), for the interop tests.

Usage: python3 h3_server.py [--zero-rtt accept|reject] CA_PEM_OUT

Makes a self-signed certificate for 127.0.0.1 (written to CA_PEM_OUT for volley's --cacert),
listens on 127.0.0.1 at a port the kernel picks, prints the port alone, and serves:

- `GET /delay?ms=N`: 200 `ok` after N ms (asyncio's timer: about a millisecond late at most)
- `GET /status/CODE`: that status
- `POST /echo`: the request body back
- anything else: 200 `ok`

Every response carries `server: aioquic`. Stops on SIGTERM.

With `--zero-rtt`, it hands out session tickets that allow 0-RTT early data, and then either
takes each back once (`accept`: a client resuming with it has its early data read) or never
finds them (`reject`: as a server that lost its ticket store, a full handshake, the early data
dropped).
"""

import asyncio
import datetime
import ipaddress
import signal
import sys
from urllib.parse import parse_qs, urlsplit

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def certificate(ca_out):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "aioquic peer")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    with open(ca_out, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


class Peer(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = None
        self.requests = {}

    def quic_event_received(self, event):
        if isinstance(event, ProtocolNegotiated):
            self.http = H3Connection(self._quic)
        if self.http is None:
            return
        for e in self.http.handle_event(event):
            if isinstance(e, HeadersReceived):
                self.requests[e.stream_id] = [dict(e.headers), b""]
            elif isinstance(e, DataReceived) and e.stream_id in self.requests:
                self.requests[e.stream_id][1] += e.data
            else:
                continue
            if e.stream_ended:
                headers, body = self.requests.pop(e.stream_id)
                asyncio.ensure_future(self.answer(e.stream_id, headers, body))

    async def answer(self, stream_id, headers, body):
        url = urlsplit(headers.get(b":path", b"/").decode())
        query = parse_qs(url.query)
        status, out = 200, b"ok"
        if url.path == "/delay":
            await asyncio.sleep(float(query.get("ms", ["0"])[0]) / 1000)
        elif url.path.startswith("/status/"):
            status = int(url.path.rsplit("/", 1)[1])
        elif url.path == "/echo":
            out = body
        self.http.send_headers(
            stream_id,
            [(b":status", str(status).encode()), (b"server", b"aioquic"),
             (b"content-length", str(len(out)).encode())],
        )
        self.http.send_data(stream_id, out, end_stream=True)
        self.transmit()


async def main(ca_out, zero_rtt):
    cert, key = certificate(ca_out)
    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN)
    config.certificate = cert
    config.private_key = key
    tickets = {}
    resumption = {}
    if zero_rtt is not None:
        resumption["session_ticket_handler"] = lambda t: tickets.__setitem__(t.ticket, t)
        resumption["session_ticket_fetcher"] = (
            (lambda label: tickets.pop(label, None)) if zero_rtt == "accept" else (lambda label: None)
        )
    server = await serve(
        "127.0.0.1", 0, configuration=config, create_protocol=Peer, **resumption
    )
    port = server._transport.get_extra_info("sockname")[1]
    print(port, flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    server.close()


if __name__ == "__main__":
    args = sys.argv[1:]
    mode = None
    if args[0] == "--zero-rtt":
        mode = args[1]
        if mode not in ("accept", "reject"):
            sys.exit(f"--zero-rtt takes accept or reject, not {mode!r}")
        args = args[2:]
    asyncio.run(main(args[0], mode))
