"""A scripted OpenAI-compatible Chat Completions server for tests (http.server on 127.0.0.1).

Each POST to /v1/chat/completions takes the next item of the script: an assistant message
(dict), a function of the request body returning one, an HttpError, a Hang, Raw bytes or a
Trickle. Every request is first checked as the real API checks it; a violation is recorded and
answered with 400. A request with "stream": true gets the message as Server-Sent Events, written
in pieces cut at odd places, with the quirks of real endpoints chosen by `quirks` (see QUIRKS).
"""
import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The rule the OpenAI API applies to function names.
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# What real streaming endpoints do that a client must tolerate, each one an option.
QUIRKS = {"no_index",           # tool-call deltas without "index"
          "repeat_id",          # the call's id (and name) on every delta, not only the first
          "no_finish",          # no finish_reason at all
          "wrong_finish",       # finish_reason "stop" although there are tool calls
          "null_choices",       # chunks with "choices": null and with "choices": []
          "no_done",            # the stream ends without data: [DONE]
          "cr_lines",           # lines end in CR alone (the SSE format allows CR, LF and CRLF)
          "crlf_lines",         # lines end in CRLF
          "bom",                # the stream starts with a UTF-8 byte order mark (allowed, and to be dropped)
          "refuse_stream"}      # a streamed request is refused with a 400 that names "stream"
# Streamed replies are written in pieces of this many bytes, so lines and events arrive cut.
PIECE_BYTES = 7


@dataclass
class HttpError:
    """Answer with this status and body instead of a completion (and a Retry-After header, if given)."""
    status: int
    body: str = '{"error": {"message": "scripted failure"}}'
    retry_after: str | None = None


@dataclass
class Hang:
    """Hold the request until the server stops or `release` is set (for timeouts and Ctrl-C)."""
    release: threading.Event


@dataclass
class Raw:
    """Answer with these bytes as they are, status line and headers included (a broken server)."""
    data: bytes


@dataclass
class Trickle:
    """A 200 with a long body sent one byte every 0.1 s, until `release` is set (a deadline test)."""
    release: threading.Event


def tool_calls(*calls: tuple[str, dict]) -> dict:
    """An assistant message calling the given (name, arguments) pairs, ids call_1, call_2..."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls, 1)]}


def answer_from_tools(request: dict) -> dict:
    """A final answer quoting every tool result since the last user message."""
    results = []
    for message in reversed(request["messages"]):
        if message["role"] == "user":
            break
        if message["role"] == "tool":
            results.insert(0, message["content"])
    return {"role": "assistant", "content": "Results: " + " | ".join(results)}


def answer(text: str) -> dict:
    return {"role": "assistant", "content": text}


def check_request(body: object) -> list[str]:
    """What the real API would reject in this request body."""
    if not isinstance(body, dict) or not body.get("model") or not isinstance(body.get("messages"), list):
        return ["model and messages are required"]
    return _check_tools(body.get("tools")) + _check_tool_messages(body["messages"])


def _check_tools(specs: object) -> list[str]:
    if specs is None:
        return []
    if not isinstance(specs, list) or not specs:
        return ["tools must be a non-empty list when present"]
    names = [s.get("function", {}).get("name", "") for s in specs]
    problems = [f"invalid tool name {n!r}" for n in names if not TOOL_NAME.match(n)]
    problems += [f"duplicate tool name {n!r}" for n in set(names) if names.count(n) > 1]
    problems += [f"parameters of {s['function'].get('name')} is not an object schema" for s in specs
                 if s.get("function", {}).get("parameters", {}).get("type") != "object"]
    return problems


def _check_tool_messages(messages: list) -> list[str]:
    """Every tool message answers a call of the assistant message before it; every call is answered."""
    problems, open_ids = [], set()
    for message in messages + [{"role": "end"}]:
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in open_ids:
                problems.append(f"tool message for unknown call {message.get('tool_call_id')!r}")
            open_ids.discard(message.get("tool_call_id"))
            continue
        if open_ids:
            problems.append(f"tool calls without a tool message: {sorted(open_ids)}")
            open_ids = set()
        if message.get("role") == "assistant":
            open_ids = {c.get("id") for c in message.get("tool_calls") or []}
            if not open_ids and not isinstance(message.get("content"), str):
                problems.append("an assistant message needs text content or tool calls")
    return problems


class FakeOpenAI:
    """Start with `with FakeOpenAI(script) as fake:`; fake.base_url goes into OPENAI_BASE_URL."""

    def __init__(self, script: list, quirks: set[str] = frozenset()) -> None:
        assert set(quirks) <= QUIRKS, set(quirks) - QUIRKS
        self.script = list(script)
        self.quirks = set(quirks)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.violations: list[str] = []
        # received is set at every request, so a test can wait for one without sleeping.
        self.received = threading.Condition()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.hangs: list[threading.Event] = []

    def __enter__(self) -> "FakeOpenAI":
        threading.Thread(target=self.server.serve_forever, args=(0.05,), name="fake-openai", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        for release in self.hangs:
            release.set()
        self.server.shutdown()
        self.server.server_close()

    def wait_for_requests(self, count: int, timeout: float = 10) -> bool:
        with self.received:
            return self.received.wait_for(lambda: len(self.requests) >= count, timeout)

    def _next_reply(self, body: dict) -> tuple[int, str]:
        problems = check_request(body)
        if not problems and body.get("stream") and "refuse_stream" in self.quirks:
            return 400, '{"error": {"message": "stream is not supported by this endpoint", "param": "stream"}}'
        if problems:
            self.violations.extend(problems)
            return 400, json.dumps({"error": {"message": "; ".join(problems)}})
        if not self.script:
            self.violations.append("script exhausted")
            return 500, '{"error": {"message": "script exhausted"}}'
        item = self.script.pop(0)
        if isinstance(item, HttpError) and item.retry_after is not None:
            data = item.body.encode()
            return 0, Raw(f"HTTP/1.1 {item.status} Scripted\r\nRetry-After: {item.retry_after}\r\nContent-Type: "
                          f"application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
        if isinstance(item, HttpError):
            return item.status, item.body
        if isinstance(item, Hang):
            self.hangs.append(item.release)
            item.release.wait(30)
            return 500, '{"error": {"message": "released"}}'
        if isinstance(item, (Raw, Trickle)):
            if isinstance(item, Trickle):
                self.hangs.append(item.release)
            return 0, item
        message = item(body) if callable(item) else item
        if body.get("stream"):
            return 200, Raw(self.stream(message))
        return 200, json.dumps({"id": "chatcmpl-test", "object": "chat.completion",
                                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                "usage": {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}})

    def stream(self, message: dict) -> bytes:
        """The message as a Chat Completions event stream, with this fake's quirks."""
        q = self.quirks
        chunks = [{"role": "assistant", "content": ""}]
        content = message.get("content") or ""
        step = max(3, len(content) // 200)  # three characters a chunk; a long text in 200 chunks
        chunks += [{"content": content[i:i + step]} for i in range(0, len(content), step)]
        for index, call in enumerate(message.get("tool_calls") or []):
            name = call["function"]["name"]
            head = {"id": call["id"], "type": "function", "function": {"name": name, "arguments": ""}}
            args = call["function"]["arguments"]
            parts = [head] + [{"function": {"arguments": args[i:i + 4]}} for i in range(0, len(args), 4)]
            for part in parts:
                if "repeat_id" in q:
                    part = {**part, "id": call["id"], "function": {"name": name, **part.get("function", {})}}
                if "no_index" not in q:
                    part = {"index": index, **part}
                chunks.append({"tool_calls": [part]})
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        finish = "stop" if "wrong_finish" in q else None if "no_finish" in q else finish
        ends = [None] * len(chunks) + [finish]  # the last chunk, empty, says why the answer ended
        events = [{"id": "c", "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": d, "finish_reason": f}]} for d, f in zip(chunks + [{}], ends)]
        if "null_choices" in q:
            events[1:1] = [{"id": "c", "choices": None}, {"id": "c", "choices": []}]
        events.append({"id": "c", "choices": [], "usage": {"prompt_tokens": 1234, "completion_tokens": 56}})
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + ("" if "no_done" in q else "data: [DONE]\n\n")
        text = text.replace("\n", "\r" if "cr_lines" in q else "\r\n" if "crlf_lines" in q else "\n")
        text = ("\ufeff" if "bom" in q else "") + text
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        return (head + text).encode()

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with fake.received:
                    fake.requests.append(body)
                    fake.headers.append(dict(self.headers))
                    fake.received.notify_all()
                status, text = (fake._next_reply(body) if self.path == "/v1/chat/completions"
                                else (404, '{"error": {"message": "not found"}}'))
                if isinstance(text, (Raw, Trickle)):
                    return self.misbehave(text)
                data = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout or Ctrl-C); nothing to answer

            def misbehave(self, item) -> None:
                try:
                    if isinstance(item, Raw):
                        piece = max(PIECE_BYTES, len(item.data) // 500)  # cut at odd places, big ones in 500
                        for i in range(0, len(item.data), piece):
                            self.wfile.write(item.data[i:i + piece])
                            self.wfile.flush()
                        return
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: 1000000\r\n\r\n")
                    while not item.release.wait(0.1):  # one byte at a time, bounded by the release
                        self.wfile.write(b" ")
                        self.wfile.flush()
                except OSError:
                    pass  # the client gave up, as it should
                self.close_connection = True

            def log_message(self, *args):
                pass  # keep test output quiet

        return Handler
