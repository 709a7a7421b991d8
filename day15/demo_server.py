"""The demo MCP server (tutorial Day 15, section 3: demo-server.mjs).

A separate program: it reads one JSON-RPC message per line on stdin and writes one reply per
line on stdout, offering two tools, word_count and dice. It imports nothing of the project.
Try it by hand: pipe an initialize and a tools/list request into `python day15/demo_server.py`.
"""
import json
import random
import sys

SERVER_INFO = {"name": "geekagent-demo", "version": "0.1.0"}
# Revisions whose messages this server understands; it echoes the client's if it is one of them.
KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

TOOLS = [
    {"name": "word_count",
     "description": "Count the characters and words (split on whitespace) of a text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "dice",
     "description": "Roll a six-sided die and return a number from 1 to 6.",
     "inputSchema": {"type": "object", "properties": {}}},
]


def word_count(args: dict) -> str:
    text = str(args.get("text", ""))
    return f"{len(text)} characters, {len(text.split())} words"


def dice(args: dict) -> str:
    return str(random.randint(1, 6))


TOOL_FUNCTIONS = {"word_count": word_count, "dice": dice}


def initialize(params: dict) -> dict:
    asked = params.get("protocolVersion")
    version = asked if asked in KNOWN_VERSIONS else KNOWN_VERSIONS[-1]
    return {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}


def call_tool(params: dict) -> dict:
    """Run a tool; an unknown tool is a tool error the model can read, not a protocol error."""
    function = TOOL_FUNCTIONS.get(params.get("name"))
    if function is None:
        text, is_error = f"unknown tool: {params.get('name')}", True
    else:
        text, is_error = function(params.get("arguments") or {}), False
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


HANDLERS = {
    "initialize": initialize,
    "tools/list": lambda params: {"tools": TOOLS},
    "tools/call": call_tool,
    "ping": lambda params: {},
}


# Beyond the tutorial: unknown methods, non-JSON lines and bad requests get an error reply
# instead of silence, so a client never waits for its timeout.
def handle(message: object) -> dict | None:
    """The reply to one message, or None for a notification (which needs none)."""
    if not isinstance(message, dict) or "method" not in message:
        return error_reply(None, -32600, "invalid request")
    if "id" not in message:
        return None
    handler = HANDLERS.get(message["method"])
    if handler is None:
        return error_reply(message["id"], -32601, f"method not found: {message['method']}")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": handler(params)}


def error_reply(request_id: object, code: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}


def main() -> None:
    # The protocol is UTF-8 whatever the locale the client gave us.
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    sys.stdout.reconfigure(encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = handle(json.loads(line))
        except ValueError:
            reply = error_reply(None, -32700, "parse error: the line is not JSON")
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
