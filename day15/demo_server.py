"""The demo MCP server of tutorial Day 15, section 4.2: the twin of demo-server.mjs.

The smallest MCP server: JSON-RPC on stdin/stdout, one message per line, offering two tools,
word_count and dice. A separate program that imports nothing of the project. Try it by hand:
pipe an initialize and a tools/list request into `python3 day15/demo_server.py` (see README).
Its few extensions, each marked "Beyond the tutorial", make it usable by official clients and by hand.
"""
import json
import random
import sys

TOOLS = [
    {
        "name": "word_count",
        "description": "Count the characters and the words (split on whitespace) of a text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "the text to count"}},
            "required": ["text"],
        },
        "run": lambda args: f"{len(str(args.get('text', '')))} characters, "
                            f"{len(str(args.get('text', '')).split())} words",
    },
    {
        "name": "dice",
        "description": "Roll a six-sided die and return the number rolled.",
        "inputSchema": {"type": "object", "properties": {}},
        "run": lambda args: f"rolled {random.randint(1, 6)}",
    },
]


def handle(method: str, params: dict) -> dict | None:
    if method == "initialize":
        # Beyond the tutorial: "tools" is declared (the tutorial's server declares nothing), as the
        # specification asks of a server with tools; official clients list none without it.
        return {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "geekagent-demo", "version": "1.0.0"}}
    if method == "ping":  # Beyond the tutorial: the specification's answer to a ping is an empty result
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
    try:
        serve()
    except KeyboardInterrupt:  # Beyond the tutorial: Ctrl-C in the agent's terminal ends us quietly
        sys.exit(130)


def serve() -> None:
    # The protocol is UTF-8 whatever locale we were started in (Node's streams are UTF-8 already).
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    sys.stdout.reconfigure(encoding="utf-8")
    for line in sys.stdin:
        if not line.strip():
            continue  # the tutorial's JSON.parse fails on a blank line and skips it too
        try:
            msg = json.loads(line)
        except ValueError:
            # Beyond the tutorial: a line that is not JSON gets a parse error instead of silence,
            # so a person typing by hand sees what went wrong.
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: not JSON"}})
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue  # a notification (such as initialized) needs no reply
        result = handle(msg.get("method"), msg.get("params") or {})
        if result is not None:
            write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        else:
            # Beyond the tutorial: an unknown method is answered with -32601 instead of silence,
            # so a client (or a person) does not wait for a reply that never comes.
            write({"jsonrpc": "2.0", "id": msg["id"],
                   "error": {"code": -32601, "message": f"method not found: {msg.get('method')}"}})


def write(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
