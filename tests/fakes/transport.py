"""A transport without a process or a socket, for the client's own logic (as httpx's MockTransport).

    server = FakeServer(handler)
    client = McpClient("s", {"command": "unused"}, transport=server)

handler(message) is the server: it returns what the server sends in answer (a message, a list of
messages, or None for nothing), which reaches the client's inbox before send() returns, as an HTTP
answer does. server.push(message) sends one unasked, from any thread. Every message the client
sends is kept in server.sent, with what the client said of it (About).
"""
import threading

from beyond.wire.base import About, Transport, TransportError


def result(message: dict, value: dict) -> dict:
    """The reply to a request: this result."""
    return {"jsonrpc": "2.0", "id": message["id"], "result": value}


def error(message: dict, code: int, text: str, data: object = None) -> dict:
    """The error reply to a request."""
    reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": code, "message": text}}
    if data is not None:
        reply["error"]["data"] = data
    return reply


def legacy(tools: list[dict] | None = None, version: str = "2025-11-25", on_call=None):
    """A handler for a server with the handshake: its tools listed, each call answered by on_call(message)
    (an echo of the "text" argument unless given)."""
    def handle(message: dict):
        method = message.get("method")
        if method == "initialize":
            return result(message, {"protocolVersion": version, "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "fake", "version": "1"}})
        if method == "tools/list":
            return result(message, {"tools": tools if tools is not None else [{"name": "echo", "inputSchema": {}}]})
        if method == "tools/call":
            if on_call is not None:
                return on_call(message)
            text = message["params"]["arguments"].get("text", "")
            return result(message, {"content": [{"type": "text", "text": text}]})
        return None  # notifications, and anything else: no answer
    return handle


class FakeServer:
    """The client's transport factory (Kind(name, config, inbox)), and what passed through it."""

    def __init__(self, handler) -> None:
        self.handler = handler
        self.sent: list[tuple[dict, About]] = []
        self.transports: list[FakeTransport] = []
        self.lock = threading.Lock()

    def __call__(self, name: str, config, inbox) -> "FakeTransport":
        transport = FakeTransport(name, config, inbox, self)
        self.transports.append(transport)
        return transport

    def requests(self, method: str) -> list[dict]:
        """The requests of this method the client sent, in order."""
        with self.lock:
            return [m for m, _ in self.sent if m.get("method") == method and "id" in m]

    def notifications(self, method: str) -> list[dict]:
        with self.lock:
            return [m for m, _ in self.sent if m.get("method") == method and "id" not in m]

    def push(self, message: dict) -> None:
        """A message the server sends unasked, into the current transport's inbox."""
        self.transports[-1].inbox.deliver(message)


class FakeTransport(Transport):
    def __init__(self, name: str, config, inbox, server: FakeServer) -> None:
        super().__init__(name, config, inbox)
        self.server, self.started, self.stopped = server, False, False

    def start(self) -> None:
        self.started = True

    def send(self, message: dict, deadline: float, about: About) -> None:
        if self.stopped:
            raise TransportError("the connection is closed")
        with self.server.lock:
            self.server.sent.append((message, about))
        answer = self.server.handler(message)
        for reply in answer if isinstance(answer, list) else [answer] if answer else []:
            self.inbox.deliver(reply)

    def stop(self) -> None:
        self.stopped = True
