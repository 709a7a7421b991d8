"""A stdio MCP server that tries what a sandbox refuses, for tests/wire/test_sandbox*.py. Its one tool,
probe, does {"op": "read" | "write" | "open" | "connect" | "udp" | "unix" | "socketpair" | "caps" | "env" | "syscall" |
"chmod" | "fchmod" | "truncate" | "open_trunc" | "rename" | "signal" | "keyring" | "fail" | "child_read",
"path", "port"} and answers "ok ..." or "refused: <why>"; child_read reads through a child process of its
own (which the sandbox confines too); caps says CapEff, CapPrm, CapBnd and CapAmb of /proc/self/status;
keyring reads the key numbered `port`; fail reads `path` and, refused, says so on stderr and as an error
result, as a real server's failing call does."""
import ctypes
import json
import os
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
        if op == "udp":
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                udp.sendto(b"probe", ("127.0.0.1", port))
            return "ok sent"
        if op == "unix":
            with socket.socket(socket.AF_UNIX) as unix:
                unix.connect(path)
            return "ok connected"
        if op == "open":  # without reading: a terminal would wait for a key
            os.close(os.open(path, os.O_RDWR | os.O_NOCTTY))
            return "ok opened"
        if op == "syscall":  # a bare system call, its arguments all 0: what errno it fails with
            libc = ctypes.CDLL(None, use_errno=True)
            done = libc.syscall(ctypes.c_long(port), 0, 0, 0)
            return f"ok {done}" if done >= 0 else f"errno {ctypes.get_errno()}"
        if op == "chmod":
            os.chmod(path, 0o644)
            return "ok changed"
        if op == "fchmod":  # through a file opened to read
            with open(path) as f:
                os.fchmod(f.fileno(), 0o4777)
            return "ok changed"
        if op == "open_trunc":  # opened to read, with O_TRUNC
            os.close(os.open(path, os.O_RDONLY | os.O_TRUNC))
            return "ok opened"
        if op == "rename":  # to the same name with "-moved"
            os.rename(path, path + "-moved")
            return "ok renamed"
        if op == "truncate":
            os.truncate(path, 0)
            return "ok truncated"
        if op == "signal":  # signal 0 to a process: whether it could be signalled
            os.kill(port, 0)
            return "ok signalled"
        if op == "keyring":  # keyctl(KEYCTL_READ, key, buffer, size)
            libc, buffer = ctypes.CDLL(None, use_errno=True), ctypes.create_string_buffer(64)
            libc.syscall.restype = ctypes.c_long
            done = libc.syscall(ctypes.c_long(250 if os.uname().machine == "x86_64" else 219), 11,
                                ctypes.c_long(port), buffer, 64)
            return f"ok {buffer.value.decode()}" if done >= 0 else f"refused: errno {ctypes.get_errno()}"
        if op == "env":
            return "ok " + os.environ.get(path, "")
        if op == "socketpair":
            for end in socket.socketpair():
                end.close()
            return "ok paired"
        if op == "caps":
            with open("/proc/self/status") as f:
                return "ok " + " ".join(line.split()[0] + line.split()[1] for line in f
                                        if line.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb")))
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
    elif method == "tools/call" and params.get("arguments", {}).get("op") == "fail":
        try:
            with open(params["arguments"]["path"]) as f:
                result = {"content": [{"type": "text", "text": "ok " + f.read(40)}]}
        except OSError as e:
            print(f"error: {e}", file=sys.stderr, flush=True)
            result = {"content": [{"type": "text", "text": str(e)}], "isError": True}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": probe(**params.get("arguments", {}))}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        print(json.dumps(answer(message)), flush=True)
