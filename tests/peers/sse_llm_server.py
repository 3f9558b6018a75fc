"""An OpenAI-compatible streaming chat server volley did not write (tests/streams.rs).

Python's standard library only: `python3 sse_llm_server.py` prints its port, then serves
POST /v1/chat/completions: `max_tokens` content chunks 5 ms apart after 20 ms, then
`data: [DONE]`, without a usage report (so tokens are counted from the deltas). The body is
chunked, or, on a path ending in `close`, delimited by the connection's close (HTTP/1.0 style).
"""

import http.server
import json
import socket
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        # As streaming servers do (uvicorn, hyper): without it, on a reused connection Nagle's
        # algorithm holds the first chunk until the client's delayed ACK of the head, ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        tokens = int(body.get("max_tokens", 8))
        close = self.path.endswith("close")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        if close:
            self.send_header("connection", "close")
            self.close_connection = True
        else:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()

        def write(data):
            if close:
                self.wfile.write(data)
            else:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        time.sleep(0.02)
        for i in range(tokens):
            chunk = {"object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": {"content": "t%d " % i}}]}
            write(("data: %s\n\n" % json.dumps(chunk)).encode())
            time.sleep(0.005)
        write(b"data: [DONE]\n\n")
        if not close:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
