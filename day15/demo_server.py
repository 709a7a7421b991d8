"""The demo MCP server of tutorial Day 15, section 4.2: the twin of demo-server.mjs.

JSON-RPC on stdin/stdout, a message a line, two tools; a program of its own. Unlike demo-server.mjs,
for official clients: it declares "capabilities": {"tools": {}} (section 3.2: {}, so they list no
tools), answers ping, -32700 to a line that is no JSON and -32601 to an unknown method, where the
Node server is silent (so neither a client nor a person typing waits in vain)."""
import json
import random
import sys

UNKNOWN_METHOD = {"code": -32601, "message": "method not found"}
TOOLS = [
    {"name": "word_count",
     "description": "Count the characters and the words (split on whitespace) of a text.",
     "inputSchema": {"type": "object", "required": ["text"], "properties": {
         "text": {"type": "string", "description": "the text to count"}}},
     "run": lambda args: f"{len(args['text'])} characters, {len(args['text'].split())} words"},
    {"name": "dice", "description": "Roll a six-sided die and return the number rolled.",
     "inputSchema": {"type": "object", "properties": {}},
     "run": lambda args: f"rolled {random.randint(1, 6)}"},
]


def handle(method: str, params: dict) -> dict | None:
    if method == "initialize":
        version = {"protocolVersion": params["protocolVersion"]} if "protocolVersion" in params \
            else {}
        return {**version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "geekagent-demo", "version": "1.0.0"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [{k: t[k] for k in ("name", "description", "inputSchema")} for t in TOOLS]}
    if method == "tools/call":
        tool = next((t for t in TOOLS if t["name"] == params.get("name")), None)
        if tool is None:
            return {"content": [{"type": "text", "text": f"unknown tool: {params.get('name')}"}],
                    "isError": True}
        return {"content": [{"type": "text", "text": tool["run"](params.get("arguments") or {})}]}
    return None


def main() -> None:
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")  # UTF-8 on the pipe, whatever locale
    sys.stdout.reconfigure(encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue  # a blank line is no message
        try:
            msg = json.loads(line)
        except ValueError:
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "not JSON"}})
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue  # a notification (initialized) needs no reply
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            result = handle(msg.get("method"), params)
        except (KeyError, TypeError, AttributeError):  # no text to count, or no string: it fails
            result = {"content": [{"type": "text", "text": "bad arguments"}], "isError": True}
        if result is None:
            write({"jsonrpc": "2.0", "id": msg["id"], "error": UNKNOWN_METHOD})
        else:
            write({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def write(message: dict) -> None:
    print(json.dumps(message, ensure_ascii=False, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C in the agent's terminal ends us quietly
        sys.exit(130)
