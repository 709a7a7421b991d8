"""A scripted MCP server for tests: `python fake_server.py MODE [ARG]`.

Speaks newline-delimited JSON-RPC like a real server, but misbehaves on purpose according to
MODE. Every mode exits by itself after LIFETIME_S, so a failing test never leaves it behind.
"""
import json
import os
import signal
import subprocess
import sys
import threading

# Upper bound on the life of any fake, so a broken test cannot leak it for long.
LIFETIME_S = 60

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""

TOOLS = [
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "child_pid", "description": "The pid of a child process the server started."},
]

out_lock = threading.Lock()
held: list[dict] = []  # out_of_order: calls kept until enough have arrived
child: subprocess.Popen | None = None


def send(message: dict | str) -> None:
    line = message if isinstance(message, str) else json.dumps(message)
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def reply(request: dict, result: dict) -> None:
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def text_result(text: str, is_error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def on_initialize(request: dict) -> None:
    if MODE == "stderr_flood":
        for i in range(20000):  # about 1.4 MB, far more than a pipe buffer holds
            sys.stderr.write(f"log line {i:06d} of the flood\n")
        sys.stderr.flush()
    reply(request, {"protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}})


def on_call(request: dict) -> None:
    name, args = request["params"]["name"], request["params"].get("arguments") or {}
    if MODE == "exit_during_call":
        sys.stderr.write("fatal: the fake server crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE == "hang":
        return
    if MODE == "garbage":
        send("this is not JSON")
        send({"jsonrpc": "2.0", "id": 999999, "result": {}})
        send("[1, 2, 3]")
    if MODE == "is_error":
        return reply(request, text_result("the tool refused: bad input", is_error=True))
    if MODE == "rpc_error":
        return send({"jsonrpc": "2.0", "id": request["id"],
                     "error": {"code": -32602, "message": "invalid params: text is required"}})
    if MODE == "empty":
        return reply(request, {"content": []})
    if MODE == "out_of_order":
        return hold_then_answer_reversed(request)
    if name == "child_pid":
        return reply(request, text_result(str(start_child())))
    reply(request, text_result(str(args.get("text", ""))))


def hold_then_answer_reversed(request: dict) -> None:
    """Keep calls until ARG of them are waiting, then answer them last-first."""
    held.append(request)
    if len(held) >= int(ARG or 8):
        for waiting in reversed(held):
            reply(waiting, text_result(str(waiting["params"]["arguments"]["text"])))
        held.clear()


def start_child() -> int:
    """A long sleeper in our process group, like the children npx leaves behind."""
    global child
    if child is None:
        child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({LIFETIME_S})"])
    return child.pid


HANDLERS = {"initialize": on_initialize, "tools/call": on_call,
            "tools/list": lambda request: reply(request, {"tools": TOOLS}),
            "ping": lambda request: reply(request, {})}


def main() -> None:
    deadline = threading.Timer(LIFETIME_S, lambda: os._exit(9))
    deadline.daemon = True
    deadline.start()
    if MODE == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "start_child":
        start_child()
    for line in sys.stdin:
        message = json.loads(line)
        handler = HANDLERS.get(message.get("method"))
        if handler and "id" in message:
            handler(message)
    if MODE == "ignore_term":
        threading.Event().wait()  # stays after its input closes, until SIGKILL (or the lifetime)


if __name__ == "__main__":
    main()
