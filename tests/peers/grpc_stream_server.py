"""A streaming gRPC server volley did not write (tests/grpc_streams.rs), on Python's grpcio.

`python3 grpc_stream_server.py` prints its port, then serves two methods of
proto/volley_target.proto's `volley.target.v1.Streams` with grpcio's generic handlers (no
generated code; the few protobuf fields are written and read by hand):
- Ticks (server streaming): `count` Ticks, one every `gap_ms`, after `first_ms`;
- Chat (bidirectional): each EchoRequest echoed as soon as it arrives.
"""

import struct
import sys
import time
from concurrent import futures

import grpc


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fields(data):
    """(field number, value) of a message: varints as int, doubles as float, bytes as bytes."""
    i = 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 1:
            value = struct.unpack("<d", data[i : i + 8])[0]
            i += 8
        elif wire == 2:
            n, i = read_varint(data, i)
            value = data[i : i + n]
            i += n
        elif wire == 5:
            value = data[i : i + 4]
            i += 4
        else:
            raise ValueError("unsupported wire type")
        yield number, value


def read_varint(data, i):
    n, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def ticks(request, context):
    f = dict(fields(request))
    count, gap, first = f.get(1, 0), f.get(2, 0.0), f.get(3, 0.0)
    start = time.monotonic()
    for seq in range(count):
        due = start + (first + seq * gap) / 1000.0
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        # Tick { seq = 1 }
        yield b"\x08" + varint(seq)


def chat(requests, context):
    for request in requests:
        f = dict(fields(request))
        message = f.get(1, b"")
        # EchoReply { message = 1 }
        yield b"\x0a" + varint(len(message)) + message


def main():
    handler = grpc.method_handlers_generic_handler(
        "volley.target.v1.Streams",
        {
            "Ticks": grpc.unary_stream_rpc_method_handler(ticks),
            "Chat": grpc.stream_stream_rpc_method_handler(chat),
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    sys.exit(main())
