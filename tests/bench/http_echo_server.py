"""The benchmark's Streamable HTTP server: the same echo tool as echo_server.py, one JSON answer per POST
(with --sse: a chunked event stream of one event, then its end, as the official SDKs answer by default).

Stdlib only (ThreadingHTTPServer, HTTP/1.1 so connections stay alive); no session, no GET stream
(405), so what is measured is the client's cost per call. It prints its URL, then serves until its
input closes; a POST of method bench/connections answers how many connections it has accepted
before that one.
`python http_echo_server.py [--sse]`.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from echo_server import answer

connections = 0
counted = threading.Lock()
SSE = "--sse" in sys.argv


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm the body would wait for the
    # client's delayed ACK, 40 ms a call, for every client alike.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        global connections
        super().setup()
        with counted:
            connections += 1

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if "id" not in message:
            return self.reply(202, b"")
        if message.get("method") == "bench/connections":
            result = {"connections": connections - 1}  # not counting the asker's own
        else:
            result = answer(message)
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        if not SSE:
            return self.reply(200, body)
        event = b"event: message\ndata: " + body + b"\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))

    def do_GET(self) -> None:
        self.reply(405, b"")

    def do_DELETE(self) -> None:
        self.reply(200, b"")

    def reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    sys.stdin.read()  # until the benchmark closes our input


if __name__ == "__main__":
    main()
