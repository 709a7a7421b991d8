"""The demo MCP server of tutorial Day 15, section 4.2: the twin of demo-server.mjs.

The smallest MCP server: JSON-RPC on stdin/stdout, one message per line, two tools (word_count and dice).
A separate program that imports nothing of the project; the README shows how to talk to it by hand.
"""
import json
import random
import sys

TOOLS = [
    {"name": "word_count", "description": "Count the characters and the words (split on whitespace) of a text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "description": "the text to count"}},
                     "required": ["text"]},
     "run": lambda args: f"{len(args['text'])} characters, {len(args['text'].split())} words"},
    {"name": "dice", "description": "Roll a six-sided die and return the number rolled.",
     "inputSchema": {"type": "object", "properties": {}},
     "run": lambda args: f"rolled {random.randint(1, 6)}"},
]


def handle(method: str, params: dict) -> dict | None:
    if method == "initialize":  # Beyond the tutorial: "tools" declared, or official clients list none
        version = {"protocolVersion": params["protocolVersion"]} if "protocolVersion" in params else {}
        return {**version, "capabilities": {"tools": {}}, "serverInfo": {"name": "geekagent-demo", "version": "1.0.0"}}
    if method == "ping":  # Beyond the tutorial: official clients ping; the answer is an empty result
        return {}
    if method == "tools/list":
        return {"tools": [{key: tool[key] for key in ("name", "description", "inputSchema")} for tool in TOOLS]}
    if method == "tools/call":
        tool = next((t for t in TOOLS if t["name"] == params.get("name")), None)
        if tool is None:
            return {"content": [{"type": "text", "text": f"unknown tool: {params.get('name')}"}], "isError": True}
        return {"content": [{"type": "text", "text": tool["run"](params.get("arguments") or {})}]}
    return None


def main() -> None:
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")  # UTF-8 on the pipe, whatever the locale
    sys.stdout.reconfigure(encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue  # a blank line is no message
        try:
            msg = json.loads(line)
        except ValueError:  # Beyond the tutorial: -32700, so whoever typed it sees why nothing came back
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: not JSON"}})
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue  # a notification (initialized) needs no reply
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            result = handle(msg.get("method"), params)
        except (KeyError, TypeError, AttributeError):  # no text to count, or no string: that call fails
            result = {"content": [{"type": "text", "text": "bad arguments"}], "isError": True}
        if result is not None:
            write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        else:  # Beyond the tutorial: -32601 for an unknown method, so an official client does not wait
            write({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "method not found"}})


def write(message: dict) -> None:
    print(json.dumps(message, ensure_ascii=False, separators=(",", ":")), flush=True)  # as JSON.stringify


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C in the agent's terminal ends us quietly
        sys.exit(130)
