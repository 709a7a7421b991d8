"""The demo MCP server of tutorial Day 15, section 4.2: the twin of demo-server.mjs.

JSON-RPC on stdin/stdout, a message a line, two tools; a program of its own, its words in English.
What it does beyond demo-server.mjs (each marked) is for official MCP clients: with section 3.2's
"capabilities": {} they list no tools, so this one declares "tools"; it answers ping, -32700 to a
line that is no JSON and -32601 to an unknown method, where the Node server is silent."""
import json
import random
import sys

UNKNOWN_METHOD = {"code": -32601, "message": "method not found"}
TOOLS = [
    {"name": "word_count",
     "description": "Count the characters and the words (split on whitespace) of a text.",
     "inputSchema": {"type": "object", "properties": {
         "text": {"type": "string", "description": "the text to count"}}, "required": ["text"]},
     "run": lambda args: f"{len(args['text'])} characters, {len(args['text'].split())} words"},
    {"name": "dice", "description": "Roll a six-sided die and return the number rolled.",
     "inputSchema": {"type": "object", "properties": {}},
     "run": lambda args: f"rolled {random.randint(1, 6)}"},
]


def handle(method: str, params: dict) -> dict | None:
    if method == "initialize":  # Beyond the tutorial: "tools", or official clients list none
        result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "geekagent-demo", "version": "1.0.0"}}
        return {key: value for key, value in result.items() if value is not None}  # as Node does
    if method == "ping":  # Beyond the tutorial: official clients ping
        return {}
    if method == "tools/list":
        return {"tools": [{k: t[k] for k in ("name", "description", "inputSchema")} for t in TOOLS]}
    if method == "tools/call":
        tool = next((t for t in TOOLS if t["name"] == params.get("name")), None)
        if tool is None:
            return {"content": [{"type": "text", "text": f"unknown tool: {params.get('name')}"}],
                    "isError": True}
        try:
            text = tool["run"](params.get("arguments") or {})
        except (KeyError, TypeError, AttributeError):  # word_count without a string "text"
            return {"content": [{"type": "text", "text": "bad arguments"}], "isError": True}
        return {"content": [{"type": "text", "text": text}]}
    return None


def main() -> None:
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")  # UTF-8 on the pipe, whatever locale
    sys.stdout.reconfigure(encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue  # a blank line is no message
        try:
            msg = json.loads(line)
        except ValueError:  # Beyond the tutorial: -32700, so whoever typed it sees why
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "not JSON"}})
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue  # a notification (initialized) needs no reply
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        result = handle(msg.get("method"), params)
        if result is None:  # Beyond the tutorial: -32601, so an official client does not wait
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
