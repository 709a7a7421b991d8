"""A scripted server of the MCP skills extension for tests: `python skills_server.py ROOT [MODE]`.

Speaks the handshake over stdio, declares io.modelcontextprotocol/skills and serves every skill folder
of ROOT (`<name>/SKILL.md` and its files, read from disk at each request, so a test changes them
between calls). Every request's method and URI is appended to $SKILLS_LOG: what the client read, and
when. MODE: "normal"; "tamper" (SKILL.md's bytes differ from what the entry says); "unlisted" (the entry
leaves out a file that is served); "nested" (one skill's entry is served twice, under two paths);
"dynamic" (resources: "dynamic"); "nolist" (skills/list answers -32601). Exits after LIFETIME_S.
"""
import base64
import hashlib
import json
import os
import sys
import threading

LIFETIME_S = 60
ROOT, MODE = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "normal"
SKILLS = "io.modelcontextprotocol/skills"


def files_of(name: str) -> list[str]:
    folder = os.path.join(ROOT, name)
    return sorted(os.path.relpath(os.path.join(b, f), folder) for b, _, fs in os.walk(folder) for f in fs)


def entry(name: str, prefix: str = "") -> dict:
    front = {}
    with open(os.path.join(ROOT, name, "SKILL.md"), encoding="utf-8") as f:
        block = f.read().split("---")[1]
    for line in block.strip().splitlines():  # the tests' front matter: one `key: value` a line
        key, _, value = line.partition(":")
        front[key.strip()] = value.strip()
    resources = []
    for path in files_of(name):
        data = open(os.path.join(ROOT, name, path), "rb").read()
        resources.append({"uri": f"skill://{prefix}{name}/{path}", "size": len(data),
                          "digest": "sha256:" + hashlib.sha256(data).hexdigest()})
    if MODE == "unlisted":
        resources = [r for r in resources if r["uri"].endswith("SKILL.md")]
    return {"uri": f"skill://{prefix}{name}/SKILL.md", "frontmatter": front,
            "resources": "dynamic" if MODE == "dynamic" else resources}


def every() -> list[dict]:
    names = sorted(n for n in os.listdir(ROOT) if os.path.isfile(os.path.join(ROOT, n, "SKILL.md")))
    found = [entry(n) for n in names]
    return found + ([entry(names[0], "team/")] if MODE == "nested" and names else [])


def read(uri: str) -> dict:
    if uri == "note://one":
        return {"contents": [{"uri": uri, "text": "a note of this server's"}]}
    path = uri.split("://", 1)[1].removeprefix("team/")
    data = open(os.path.join(ROOT, path), "rb").read()
    if MODE == "tamper" and path.endswith("SKILL.md"):
        data = data.replace(b"Body", b"Evil")
    if path.endswith(".bin"):
        return {"contents": [{"uri": uri, "blob": base64.b64encode(data).decode()}]}
    return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": data.decode("utf-8")}]}


def answer(method: str, params: dict) -> dict:
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "serverInfo": {"name": "skills-fake", "version": "1"},
                "capabilities": {"tools": {}, "resources": {}, "extensions": {SKILLS: {}}}}
    if method == "tools/list":
        return {"tools": []}
    if method in ("resources/list", "resources/templates/list"):  # one resource that is no skill's
        return {"resources": [{"uri": "note://one", "name": "one"}], "resourceTemplates": []}
    if method == "skills/list":
        if MODE == "nolist":
            raise LookupError
        return {"skills": every()}
    if method == "skills/get":
        return {"skill": next(e for e in every() if e["uri"] == params.get("uri"))}
    if method == "resources/read":
        return read(params["uri"])
    raise LookupError


def log(method: str, params: dict) -> None:
    with open(os.environ.get("SKILLS_LOG", os.devnull), "a") as f:
        f.write(f"{method} {params.get('uri', '')}\n")


def main() -> None:
    threading.Timer(LIFETIME_S, lambda: os._exit(0)).start()
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        params = message.get("params") or {}
        log(message["method"], params)
        try:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message["method"], params)}
        except (LookupError, StopIteration, OSError):
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
