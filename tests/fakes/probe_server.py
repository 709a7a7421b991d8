"""A stdio MCP server that tries what a sandbox refuses, for tests/wire/test_sandbox.py. Its one tool,
probe, does {"op": "read" | "write" | "connect" | "child_read", "path", "port"} and answers "ok ..." or
"refused: <why>"; child_read reads through a child process of its own (which the sandbox confines too)."""
import json
import socket
import subprocess
import sys


def probe(op: str, path: str = "", port: int = 0) -> str:
    try:
        if op == "read":
            with open(path) as f:
                return "ok " + f.read(40)
        if op == "write":
            with open(path, "w") as f:
                f.write("written")
            return "ok written"
        if op == "connect":
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return "ok connected"
        done = subprocess.run(["cat", path], capture_output=True, text=True, timeout=10)
        return "ok " + done.stdout[:40] if done.returncode == 0 else "refused: " + done.stderr.strip()
    except OSError as e:
        return f"refused: {e.strerror or e}"


def answer(message: dict) -> dict:
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "probe", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "probe", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": probe(**params.get("arguments", {}))}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        print(json.dumps(answer(message)), flush=True)
