"""The benchmark's common MCP server: tools echo {"text"} and blob {"size"}, nothing else.

Deliberately minimal so its own cost is small and the same for every client measured.
`python echo_server.py [startup-delay-seconds]`.
"""
import json
import sys
import time

TOOLS = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
         {"name": "blob", "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}}}]


def result(params: dict) -> dict:
    args = params.get("arguments") or {}
    text = "x" * int(args["size"]) if params.get("name") == "blob" else args.get("text", "")
    return {"content": [{"type": "text", "text": text}]}


def answer(message: dict) -> dict:
    """The result for a request (this server and http_echo_server.py answer alike)."""
    method = message.get("method")
    if method == "initialize":
        return {"protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return result(message["params"])
    return {}


def main() -> None:
    if len(sys.argv) > 1:
        time.sleep(float(sys.argv[1]))  # a server that is slow to start, for the parallel start-up figure
    read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
    while line := read():
        message = json.loads(line)
        if "id" in message:
            write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}).encode() + b"\n")
            flush()


if __name__ == "__main__":
    main()
