"""A scripted Streamable HTTP MCP server for tests (http.server on 127.0.0.1, port 0).

Modes: "json" answers every request with one JSON body; "sse" answers tools/call with an event
stream that carries a progress notification and a ping request before the result; "expire"
forgets the session once (404) at the first tools/call; "unauthorized" wants
`Authorization: Bearer good-token` and answers 401 with a JSON-RPC error otherwise; "hang"
never answers tools/call; "error500" answers tools/call with a 500 and a plain-text body;
"trickle" answers tools/call with an event stream that sends one byte every 0.1 s and never a newline;
"tail_trickle" sends the reply, then an SSE comment every 50 ms (for 60 s at most), counting in `hung_up`
the answers whose reader closed the connection meanwhile;
"expire400" forgets the session once and says so with a 400, as some servers do; "html403" answers
everything with an HTML 403 page; "push" offers a GET stream, on which the test sends messages with
push(), and which it ends with drop() (other modes answer GET with 405); "context" offers
resources, a resource template and a prompt as well; "modern" speaks only the
2026-07-28 revision: no session, no handshake, and headers that must match the body; "cut" (and in
2026-07-28 "modern_cut", once) breaks the connection in the middle of a tools/call answer stream (chunked,
without its last chunk) after event ev-1, and "cut" answers the GET that resumes it. Every event
of a stream comes after a priming event without data. Every mode but "modern" issues session ids
and answers 400 to a request without one.
"""
import base64
import contextlib
import json
import queue
import select
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# "unauthorized" lets in a bearer token, or user "agent" with password "good-pw" (Basic).
GOOD_AUTHORIZATION = ("Bearer good-token", "Basic YWdlbnQ6Z29vZC1wdw==")
TOOLS = [{"name": "echo", "description": "Echo the text.",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]
# "context": resources, a template and a prompt too.
CONTEXT = {
    "resources/list": lambda params: {"resources": [{"uri": "remote://motd", "name": "message of the day"}]},
    "resources/templates/list": lambda params: {"resourceTemplates": [{"uriTemplate": "remote://logs/{day}",
                                                                       "name": "logs"}]},
    "resources/read": lambda params: {"contents": [{"uri": params["uri"], "text": f"text of {params['uri']}"}]},
    "prompts/list": lambda params: {"prompts": [{"name": "greet", "arguments": [{"name": "who", "required": True}]}]},
    "prompts/get": lambda params: {"messages": [{"role": "user", "content": {
        "type": "text", "text": f"Say hello to {params['arguments']['who']}."}}]},
}
# "modern": the version it speaks, and the parameter each method's Mcp-Name header must repeat.
MODERN = "2026-07-28"
META = "io.modelcontextprotocol/"
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def decoded(value: str | None) -> str | None:
    """A 2026-07-28 header value: =?base64?...?= decoded, anything else as it is."""
    if value and value.startswith("=?base64?") and value.endswith("?="):
        return base64.b64decode(value[9:-2]).decode()
    return value


def mirrored(schema: dict, arguments: dict):
    """(header name, text) of each present argument whose property carries x-mcp-header, through properties."""
    for prop, sub in (schema.get("properties") or {}).items():
        value = arguments.get(prop) if isinstance(arguments, dict) else None
        if "x-mcp-header" in sub and value is not None:
            yield sub["x-mcp-header"], str(value).lower() if isinstance(value, bool) else str(value)
        yield from mirrored(sub, value)


class FakeHttpMcp:
    """Start with `with FakeHttpMcp(mode) as server:`; server.url goes into mcp.json."""

    def __init__(self, mode: str = "json") -> None:
        self.mode = mode
        self.sessions: set[str] = set()
        self.expired_once = False
        self.pending: dict | None = None            # "resume": the reply the answer stream did not bring
        self.posts: list[tuple[dict, dict]] = []   # (headers, message) of every POST
        self.deletes: list[str] = []               # session ids ended with DELETE
        self.cancelled: list[dict] = []
        self.client_replies: dict = {}
        self.tools = list(TOOLS)                   # what tools/list answers; a test may change it
        self.gets: list[tuple[float, dict]] = []   # (time.monotonic(), headers) of every GET
        self.get_status: int | None = None         # "push": answer GETs with this status instead of a stream
        self.close_streams_at_once = False         # "push": end every GET stream right after its priming event
        self.streams_opened = self.streams_closed_by_client = 0
        self.connections = self.connections_ended = 0  # connections accepted, and those it has closed
        self.close_after_answer = False             # close each connection after one answer, unannounced
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()  # messages for the open GET stream
        self.changed = threading.Condition()       # notified on every POST, for bounded waits
        self.release = threading.Event()           # lets "hang" requests go when the test ends
        self.hung_up = 0                           # "tail_trickle": answers the client stopped reading
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    def __enter__(self) -> "FakeHttpMcp":
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, condition, timeout: float = 10) -> bool:
        with self.changed:
            return self.changed.wait_for(condition, timeout)

    # --- answers ----------------------------------------------------------------------------

    def answer(self, handler, message: dict) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self.changed:
            self.posts.append((headers, message))
            self.changed.notify_all()
        if self.mode == "unauthorized" and headers.get("authorization") not in GOOD_AUTHORIZATION:
            return self.send(handler, 401, {"jsonrpc": "2.0", "id": message.get("id"),
                                            "error": {"code": -32001, "message": "invalid token"}})
        method = message.get("method")
        if self.mode in ("modern", "modern_cut"):
            return self.modern(handler, headers, message)
        if self.mode == "html403":
            page = b"<!DOCTYPE html>\n<html><head><title>403 Forbidden: Access is only allowed at localhost</title>" \
                   b"</head>\n<body><h1>Forbidden</h1>\n<p>nope</p></body></html>"
            handler.send_response(403)
            handler.send_header("Content-Type", "text/html")
            handler.send_header("Content-Length", str(len(page)))
            handler.end_headers()
            return handler.wfile.write(page)
        if method == "initialize":
            session = uuid.uuid4().hex
            self.sessions.add(session)
            return self.send(handler, 200, self.result(message, {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, **({"resources": {}, "prompts": {}} if self.mode == "context" else {})},
                "serverInfo": {"name": "fake-http", "version": "1"}}), session=session)
        session = headers.get("mcp-session-id")
        if session is None:
            return self.send(handler, 400, {"error": "Mcp-Session-Id required"})
        if session not in self.sessions:
            return self.send(handler, 404, {"error": "unknown session"})
        if "method" not in message or "id" not in message:
            return self.accepted(handler, message)
        if method == "tools/list":
            return self.send(handler, 200, self.result(message, {"tools": self.tools}))
        if method in CONTEXT:
            return self.send(handler, 200, self.result(message, CONTEXT[method](message["params"])))
        return self.call(handler, message, session)

    def modern(self, handler, headers: dict, message: dict) -> None:
        """2026-07-28: each request stands alone; its headers must say what its body says."""
        meta = (message.get("params") or {}).get("_meta") or {}
        version, method = meta.get(f"{META}protocolVersion"), message.get("method")
        if not isinstance(version, str) or not isinstance(meta.get(f"{META}clientCapabilities"), dict):
            return self.rpc_error(handler, 400, message, -32602, "params._meta must carry the protocol envelope keys")
        if version != MODERN:
            return self.rpc_error(handler, 400, message, -32022, "Unsupported protocol version",
                                  {"supported": [MODERN], "requested": version})
        named, sent = message["params"].get(NAMED_BY.get(method, "")), decoded(headers.get("mcp-name"))
        if headers.get("mcp-protocol-version") != version or headers.get("mcp-method") != method or sent != named:
            return self.rpc_error(handler, 400, message, -32020, "Header mismatch")
        tool = next((t for t in self.tools if t["name"] == named), {}) if method == "tools/call" else {}
        for name, value in mirrored(tool.get("inputSchema") or {}, message["params"].get("arguments") or {}):
            if decoded(headers.get(f"mcp-param-{name.lower()}")) != value:
                return self.rpc_error(handler, 400, message, -32020, f"Header mismatch: Mcp-Param-{name}")
        done = {"resultType": "complete"}
        if method == "server/discover":
            return self.send(handler, 200, self.result(message, {**done, "supportedVersions": [MODERN],
                                                                 "capabilities": {"tools": {"listChanged": True}}}))
        if method == "tools/list":
            return self.send(handler, 200, self.result(message, {**done, "tools": self.tools}))
        if method == "subscriptions/listen":  # its answer is a stream that stays open
            ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
                "_meta": {f"{META}subscriptionId": message["id"]}, "notifications": message["params"]["notifications"]}}
            return self.stream_out(handler, f"data: {json.dumps(ack)}\n\n".encode())
        if method == "tools/call" and self.mode == "modern_cut" and not self.expired_once:
            self.expired_once = True
            return self.cut(handler)
        if method == "tools/call":
            text = message["params"]["arguments"].get("text", "")
            return self.send(handler, 200, self.result(message, {**done, "content": [{"type": "text", "text": text}]}))
        self.rpc_error(handler, 404, message, -32601, f"Method not found: {method}")

    def rpc_error(self, handler, status: int, message: dict, code: int, text: str, data: object = None) -> None:
        self.send(handler, status, {"jsonrpc": "2.0", "id": message.get("id"), "error": {
            "code": code, "message": text, **({} if data is None else {"data": data})}})

    def listen(self, handler) -> None:
        """A GET: in "push" mode, an event stream that carries what push() sends until drop() or the client
        closes it."""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self.changed:
            self.gets.append((time.monotonic(), headers))
            self.changed.notify_all()
        if self.mode in ("resume", "cut") and headers.get("last-event-id") == "ev-1" and self.pending:
            handler.send_response(200)  # the rest of the answer stream, from after ev-1
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()
            handler.wfile.write(f"id: ev-2\ndata: {json.dumps(self.pending)}\n\n".encode())
            handler.close_connection = True
            return None
        if self.mode != "push" or self.get_status:
            return self.send(handler, self.get_status or 405, {"error": "no stream here"})
        if headers.get("mcp-session-id") not in self.sessions:
            return self.send(handler, 404, {"error": "unknown session"})
        time.sleep(0.2)  # a stream that takes a moment to open, as across a network: start-up must wait for it
        self.stream_out(handler, f"id: get-{len(self.gets)}-0\ndata: \n\n".encode())

    def stream_out(self, handler, first: bytes) -> None:
        """An event stream that starts with `first`, then carries what push() sends until drop() or the client
        hangs up."""
        with self.changed:  # open before the client can know it is: nothing pushed from then on is lost
            self.outbox = outbox = queue.SimpleQueue()
            self.streams_opened += 1
            self.changed.notify_all()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        handler.wfile.write(first)
        handler.wfile.flush()
        handler.close_connection = True
        while not self.close_streams_at_once and not self.release.is_set():
            try:
                item = outbox.get(timeout=0.05)
            except queue.Empty:
                if select.select([handler.connection], [], [], 0)[0] and not handler.connection.recv(1):
                    with self.changed:  # the client hung up
                        self.streams_closed_by_client += 1
                        self.changed.notify_all()
                    return
                continue
            if item is None:
                return  # drop()
            message, event_id = item
            handler.wfile.write((f"id: {event_id}\n" if event_id else "").encode()
                                + f"data: {json.dumps(message)}\n\n".encode())
            handler.wfile.flush()

    def push(self, message: dict, event_id: str | None = None) -> None:
        self.outbox.put((message, event_id))

    def drop(self) -> None:
        """End the open GET stream from the server's side."""
        self.outbox.put(None)

    def call(self, handler, message: dict, session: str) -> None:
        if self.mode in ("expire", "expire400") and not self.expired_once:
            self.expired_once = True
            self.sessions.discard(session)
            if self.mode == "expire400":  # as server-everything answers after a restart
                return self.send(handler, 400, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32000, "message": "Bad Request: No valid session ID provided"}})
            return self.send(handler, 404, {"error": "session expired"})
        if self.mode == "hang":
            self.release.wait(30)
            return
        if self.mode == "trickle":  # an event stream that never ends its line
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()
            handler.wfile.write(b"data: ")
            while not self.release.wait(0.1):
                handler.wfile.write(b"x")
                handler.wfile.flush()
            return
        if self.mode == "tail_trickle":
            return self.tail_trickle(handler, message)
        if self.mode == "error500":
            handler.send_response(500)
            handler.send_header("Content-Length", "17")
            handler.end_headers()
            return handler.wfile.write(b"upstream exploded")
        text = message["params"]["arguments"].get("text", "")
        if self.mode == "cut":
            self.pending = self.result(message, {"content": [{"type": "text", "text": f"{text} (resumed)"}]})
            return self.cut(handler)
        if self.mode in ("resume", "resume_without_ids"):  # the answer stream ends before the reply
            self.pending = self.result(message, {"content": [{"type": "text", "text": f"{text} (resumed)"}]})
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()
            handler.wfile.write((b"id: ev-1\n" if self.mode == "resume" else b"") + b"retry: 50\ndata: \n\n")
            handler.close_connection = True
            return None
        if self.mode != "sse":
            return self.send(handler, 200, self.result(message, {"content": [{"type": "text", "text": text}]}))
        self.stream(handler, message, text)

    def stream(self, handler, message: dict, text: str) -> None:
        """Progress, then a ping the client must answer by POST, then the result."""
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        ping_id = f"ping-{message['id']}"
        self.event(handler, {"jsonrpc": "2.0", "method": "notifications/progress",
                             "params": {"progressToken": 1, "progress": 1, "total": 2}})
        self.event(handler, {"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
        pinged = self.wait_for(lambda: ping_id in self.client_replies)
        self.event(handler, self.result(message, {"content": [
            {"type": "text", "text": f"{text} (ping answered: {pinged})"}]}))
        handler.close_connection = True

    def tail_trickle(self, handler, message: dict) -> None:
        """The reply, then comments that keep the (chunked, kept-alive) stream going until the reader hangs up."""
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        reply = self.result(message, {"content": [{"type": "text", "text": "answered"}]})
        chunks = [f"event: message\ndata: {json.dumps(reply)}\n\n".encode()] + [b": still here\n"] * 1200
        handler.close_connection = True
        for chunk in chunks:
            try:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
            except OSError:
                self.hung_up += 1
                return
            if self.release.wait(0.05):
                return

    @staticmethod
    def cut(handler) -> None:
        """A chunked answer stream: one event (ev-1, retry 50 ms), then the connection breaks before
        the last chunk (the client reads IncompleteRead)."""
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        event = b"id: ev-1\nretry: 50\ndata: \n\n"
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        handler.close_connection = True

    def accepted(self, handler, message: dict) -> None:
        with self.changed:
            if message.get("method") == "notifications/cancelled":
                self.cancelled.append(message["params"])
            elif "method" not in message:
                self.client_replies[message.get("id")] = message
            self.changed.notify_all()
        handler.send_response(202)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    @staticmethod
    def result(message: dict, result: dict) -> dict:
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    @staticmethod
    def event(handler, message: dict) -> None:
        handler.wfile.write(b"id: priming-1\ndata: \n\n")  # an event store's priming event: no data
        handler.wfile.write(f"event: message\ndata: {json.dumps(message)}\n\n".encode())
        handler.wfile.flush()

    @staticmethod
    def send(handler, status: int, body: dict, session: str | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        if session:
            handler.send_header("Mcp-Session-Id", session)
        handler.end_headers()
        handler.wfile.write(data)

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms wait for an ACK

            def handle(self):
                with fake.changed:
                    fake.connections += 1
                try:
                    super().handle()
                except ConnectionError:
                    pass  # the client cut the connection (a deadline, or stop() closing a stream)
                finally:
                    with contextlib.suppress(OSError):  # the end is sent before it is counted as ended
                        self.connection.shutdown(socket.SHUT_WR)
                    with fake.changed:
                        fake.connections_ended += 1
                        fake.changed.notify_all()

            def do_POST(self):
                self.close_connection = fake.close_after_answer  # without a Connection: close header
                message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                try:
                    fake.answer(self, message)
                except OSError:
                    pass  # the client gave up (a timeout test); nothing left to answer

            def do_GET(self):
                try:
                    fake.listen(self)
                except OSError:
                    pass  # the client went away mid-stream

            def do_DELETE(self):
                fake.deletes.append(self.headers.get("Mcp-Session-Id"))
                fake.sessions.discard(self.headers.get("Mcp-Session-Id"))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass  # keep test output quiet

        return Handler
