"""The demo MCP server of tutorial Day 15, section 4.2: the twin of demo-server.mjs.

The smallest MCP server: JSON-RPC on stdin/stdout, one message per line, two tools (word_count and
dice). A separate program that imports nothing of the project; try it by hand (see README). Its few
extensions, each marked "Beyond the tutorial", make it usable by official clients and by hand.
"""
import json
import random
import re
import sys

# What JavaScript's \s matches: word_count splits on these only (str.split() differs at the edges).
JS_SPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")

TOOLS = [
    {"name": "word_count", "description": "Count the characters and the words (split on whitespace) of a text.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "description": "the text to count"}},
                     "required": ["text"]},
     "run": lambda args: count(args.get("text") if isinstance(args, dict) else None)},
    {"name": "dice", "description": "Roll a six-sided die and return the number rolled.",
     "inputSchema": {"type": "object", "properties": {}},
     "run": lambda args: f"rolled {random.randint(1, 6)}"},
]


def count(text) -> str:
    """word_count as JavaScript runs it: text.length (UTF-16 units; a list's items), String(text)'s words."""
    if text is None:  # Beyond the tutorial: demo-server.mjs crashes here (text.length of undefined)
        return "no text to count"
    length = len(text.encode("utf-16-le", "surrogatepass")) // 2 if isinstance(text, str) else \
        len(text) if isinstance(text, list) else "undefined"
    return f"{length} characters, {len([w for w in JS_SPACE.split(js_string(text)) if w])} words"


def js_string(value) -> str:
    """String(value), as JavaScript writes it."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]" if isinstance(value, dict) else str(value)


def handle(method: str, params) -> dict | None:
    given = params if isinstance(params, dict) else {}  # params.x of a string or a list is undefined in JS
    if method == "initialize":  # Beyond the tutorial: "tools" declared, or official clients list none
        version = {"protocolVersion": given["protocolVersion"]} if "protocolVersion" in given else {}
        return {**version, "capabilities": {"tools": {}}, "serverInfo": {"name": "geekagent-demo", "version": "1.0.0"}}
    if method == "ping":  # Beyond the tutorial: the specification's answer to a ping is an empty result
        return {}
    if method == "tools/list":
        return {"tools": [{key: tool[key] for key in ("name", "description", "inputSchema")} for tool in TOOLS]}
    if method == "tools/call":
        tool = next((t for t in TOOLS if t["name"] == given.get("name")), None)
        if tool is None:
            name = js_string(given["name"]) if "name" in given else "undefined"
            return {"content": [{"type": "text", "text": f"unknown tool: {name}"}], "isError": True}
        arguments = given.get("arguments")
        return {"content": [{"type": "text", "text": tool["run"]({} if arguments is None else arguments)}]}
    return None


def main() -> None:
    # As Node: UTF-8 whatever the locale, lines end at \n, \r\n or \r, a lone surrogate written as \udc00.
    sys.stdin.reconfigure(encoding="utf-8", errors="replace", newline=None)
    sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")
    for line in sys.stdin:
        if not line.strip(" \t\n\r"):
            continue  # the tutorial's JSON.parse fails on a blank line and skips it too
        try:
            msg = json.loads(line, parse_constant=not_json)  # NaN and Infinity are not JSON to JSON.parse
        except (ValueError, RecursionError):  # Beyond the tutorial: a parse error, so a person sees why
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: not JSON"}})
            continue
        if not isinstance(msg, dict) or "id" not in msg:  # a notification (initialized) needs no reply;
            continue  # Beyond the tutorial: demo-server.mjs crashes on a null line (null.id)
        result = handle(msg.get("method"), {} if msg.get("params") is None else msg["params"])
        if result is not None:
            write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        else:  # Beyond the tutorial: -32601 for an unknown method, so nobody waits for a reply
            write({"jsonrpc": "2.0", "id": msg["id"],
                   "error": {"code": -32601, "message": f"method not found: {msg.get('method')}"}})


def not_json(constant: str):
    raise ValueError(f"{constant} is not JSON")


def write(message: dict) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")  # as JSON.stringify
    sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Beyond the tutorial: Ctrl-C in the agent's terminal ends us quietly
        sys.exit(130)
