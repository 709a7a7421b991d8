"""The tool registry and the built-in tools (tutorial Day 4, extended by Day 15).

Owns one dict of tools, the OpenAI `tools` array built from it, and run_tool(), the single place
where a tool call's failure becomes text for the model. MCP tools are added by mcp.py (the full
agent's by beyond/servers/registry.py).
"""
import fnmatch
import json
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import permissions


@dataclass
class Tool:
    """One callable tool as the model sees it; run takes the parsed arguments and returns text."""
    name: str
    description: str
    parameters: dict
    run: Callable[[dict], str]
    # True when run() asks permissions.authorize() itself with a richer prompt (MCP tools do).
    authorizes: bool = False


# _registry maps tool name -> Tool in registration order. _registry_lock guards it, because MCP
# servers may change their tools from a reader thread while the REPL builds a request.
_registry: dict[str, Tool] = {}
_registry_lock = threading.Lock()


def register_tool(tool: Tool) -> None:
    """Add a tool; a name that is already taken is an error, never a silent replacement."""
    with _registry_lock:
        if tool.name in _registry:
            raise ValueError(f"tool {tool.name!r} is already registered")
        _registry[tool.name] = tool


def unregister_tool(name: str) -> None:
    """Remove a tool if present."""
    with _registry_lock:
        _registry.pop(name, None)


def get_tool(name: str) -> Tool | None:
    with _registry_lock:
        return _registry.get(name)


def all_tools() -> list[Tool]:
    """A snapshot of the registry in registration order."""
    with _registry_lock:
        return list(_registry.values())


def openai_tools() -> list[dict]:
    """The Chat Completions `tools` array."""
    return [
        {"type": "function",
         "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in all_tools()
        if permissions.policy_for(t.name) != "deny"  # Beyond the tutorial: a denied tool is not offered
    ]


# Beyond the tutorial: a tool result adds at most this much text to the conversation (about 25,000
# tokens); the rest is cut with a note saying how much, so one tool cannot flood the context.
MAX_RESULT_CHARS = 100_000


# Beyond the tutorial: how a longer result is shortened: cut here; the full agent keeps it whole
# and lets the model read it back (beyond/servers/results.py).
_long_result: Callable[[str, str], str] = lambda name, text: cut(text, MAX_RESULT_CHARS)


def set_long_results(shorten: Callable[[str, str], str]) -> None:
    """Choose what shorten(tool name, result) makes of a result over MAX_RESULT_CHARS."""
    global _long_result
    _long_result = shorten


# Beyond the tutorial: every call is reported here (for the audit log), when set.
_audit: Callable[..., None] | None = None


def set_audit(record: Callable[..., None] | None) -> None:
    """Choose what every tool call is reported to: record(name, arguments, decision, outcome, seconds, size)."""
    global _audit
    _audit = record


def run_tool(name: str, arguments_json: str) -> str:
    """Run one tool call from the model; every failure comes back as text, never as an exception."""
    began, outcome, result = time.monotonic(), "cancelled", ""
    permissions.last_decision(clear=True)
    try:
        result, outcome = _run_tool(name, arguments_json)
        return result
    finally:
        if _audit:
            _audit(name, arguments_json, permissions.last_decision(), outcome, time.monotonic() - began, len(result))


def _run_tool(name: str, arguments_json: str) -> tuple[str, str]:
    """(the text for the model, the outcome: ok, error or cancelled)."""
    tool = get_tool(name)
    if tool is None:
        return f"Error: unknown tool {name[:100]!r}.", "error"
    try:
        args = json.loads(arguments_json or "{}")
    except (ValueError, RecursionError) as e:  # RecursionError: nested deeper than Python parses
        return f"Error: the arguments for {name} are not valid JSON ({e}); send a JSON object.", "error"
    if not isinstance(args, dict):
        return f"Error: the arguments for {name} must be a JSON object.", "error"
    if permissions.policy_for(name) == "deny":
        permissions.authorize(name, "")  # records the decision: deny, never asked
        return f"Denied: the tool {name} is not allowed by the user's policy; do not retry it.", "cancelled"
    prompt = f"Run {name} with {json.dumps(args, ensure_ascii=False)}?"
    if not tool.authorizes and not permissions.authorize(name, prompt):
        return permissions.declined(name), "cancelled"
    try:
        result = tool.run(args)
    except Exception as e:  # any failure of any tool becomes text for the model, here and only here
        return permissions.mask_secrets(cut(f"Error: {name} failed: {e}", MAX_RESULT_CHARS)), "error"
    outcome = "cancelled" if permissions.last_decision() == "asked-no" else "ok"
    if len(result) > MAX_RESULT_CHARS:
        result = _long_result(name, result)
    return permissions.mask_secrets(result), outcome


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, ending in a note of how many were cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters cut: the result was {len(text):,} long]"


# --- built-in tools: read-only, confined to the project root -------------------------------

# A page of `read` is this many lines, and at most this many bytes (a file may be one huge line),
# so one call cannot flood the model's context or the agent's memory.
READ_PAGE_LINES = 200
READ_PAGE_BYTES = 64 * 1024


def register_builtin_tools(root: str = ".") -> None:
    """Register get_current_time, ls and read, confined to root (the working directory)."""
    base = os.path.realpath(root)
    register_tool(Tool("get_current_time", "The current local date and time.",
                       {"type": "object", "properties": {}}, lambda args: _current_time()))
    register_tool(Tool("ls", "List a directory inside the project.",
                       _path_schema(), lambda args: _ls(base, args.get("path", "."))))
    register_tool(Tool("read", f"Read a text file inside the project, {READ_PAGE_LINES} lines per page.",
                       _path_schema(offset={"type": "integer", "description": "first line, from 0"}),
                       lambda args: _read_asking(base, args), authorizes=True))


def _path_schema(**extra: dict) -> dict:
    props = {"path": {"type": "string", "description": "relative to the project root"}, **extra}
    return {"type": "object", "properties": props}


# Beyond the tutorial: files that usually hold secrets; `read` asks for them even when it is allowed.
SECRET_FILES = (".env*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*", ".netrc", ".git-credentials",
                ".npmrc", ".pypirc", ".pgpass", "credentials.json", "*_history")
SECRET_FOLDERS = (".ssh", ".aws", ".kube", ".gnupg")
SECRET_PATHS = (".docker/config.json", ".git/config")


def looks_secret(path: str) -> bool:
    """True for a path whose file name matches SECRET_FILES, that lies under a SECRET_FOLDERS folder,
    or that ends in one of SECRET_PATHS."""
    parts = path.replace("\\", "/").split("/")
    return (any(fnmatch.fnmatch(parts[-1], pattern) for pattern in SECRET_FILES)
            or any(part in SECRET_FOLDERS for part in parts[:-1]) or "/".join(parts[-2:]) in SECRET_PATHS)


def _read_asking(base: str, args: dict) -> str:
    """read asks as its policy says, and always for a secret-looking file (by its name, where it
    leads, or as another name, a hard link, of one)."""
    path = args.get("path", "")
    target = _inside(base, path)
    if looks_secret(path) or looks_secret(os.path.relpath(target, base)) or _links_to_secret(target, base):
        allowed = permissions.ask(f"read wants {path!r}, which looks like a file of secrets. Allow?")
    else:
        allowed = permissions.authorize("read", f"Run read with {json.dumps(args, ensure_ascii=False)}?")
    if not allowed:
        return permissions.declined("read")
    return _read(base, path, args.get("offset", 0))


def _links_to_secret(target: str, base: str) -> bool:
    """True for a file with other names (hard links) one of which is a secret-looking file in the
    home folder or the project (compared by device and inode: a hard link has no target to follow)."""
    try:
        info = os.stat(target)
    except OSError:
        return False  # read reports it
    if info.st_nlink < 2:
        return False
    return (info.st_dev, info.st_ino) in {(s.st_dev, s.st_ino) for s in _secret_files(os.path.expanduser("~"))
                                          + _secret_files(base)}


def _secret_files(folder: str) -> list[os.stat_result]:
    """The secret-looking files at the top of a folder and in its SECRET_FOLDERS and SECRET_PATHS."""
    found = []
    places = [(folder, False)] + [(os.path.join(folder, name), True) for name in SECRET_FOLDERS]
    places += [(os.path.join(folder, os.path.dirname(name)), False) for name in SECRET_PATHS]
    for place, every in places:
        try:
            with os.scandir(place) as entries:
                found += [e.stat() for e in entries if e.is_file() and (every or looks_secret(
                    os.path.relpath(e.path, folder)))]
        except OSError:
            continue  # no such folder
    return found


def _skip_line(f) -> bool:
    """Read past one line, in pieces of at most a page; False at the end of the file."""
    part = f.readline(READ_PAGE_BYTES)
    if not part:
        return False
    while not part.endswith(b"\n") and (part := f.readline(READ_PAGE_BYTES)):
        pass
    return True


def _current_time() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z (UTC%z)")


def _inside(base: str, path: str) -> str:
    """Resolve path under base; refuse absolute paths, '..' and symlinks that lead outside."""
    if not isinstance(path, str) or os.path.isabs(path) or ".." in path.replace("\\", "/").split("/"):
        raise ValueError(f"path {path!r} must be relative to the project root, without '..'")
    target = os.path.realpath(os.path.join(base, path))
    if os.path.commonpath([base, target]) != base:
        raise ValueError(f"path {path!r} leads outside the project root")
    return target


def _ls(base: str, path: str) -> str:
    with os.scandir(_inside(base, path)) as entries:
        names = sorted(e.name + ("/" if e.is_dir() else "") for e in entries)
    return "\n".join(names) or "(empty directory)"


def _read(base: str, path: str, offset: int) -> str:
    """One page from line `offset`: at most READ_PAGE_LINES lines and READ_PAGE_BYTES bytes."""
    target, start = _inside(base, path), max(int(offset), 0)
    info = os.stat(target)
    # Beyond the tutorial: only regular files (a FIFO would block forever, a device never end).
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path!r} is not a regular file")
    if start > info.st_size:  # a line takes a byte at least: answered at once, however big the offset
        return f"(offset {start} is past the end of {path!r}, which has {info.st_size:,} bytes)"
    with open(target, "rb") as f:
        for skipped in range(start):  # skip whole lines in bounded steps, however long they are
            if not _skip_line(f):
                return f"(offset {start} is past the end of {path!r}, which has {skipped} lines)"
        page, lines = b"", 0
        while lines < READ_PAGE_LINES and len(page) < READ_PAGE_BYTES:
            line = f.readline(READ_PAGE_BYTES - len(page))
            if not line:
                break
            page += line
            lines += line.endswith(b"\n")
        more = f.read(1) != b""
    text = page.decode("utf-8", "replace").removesuffix("\n")
    if more and lines:
        text += f"\n... more follows; call read with offset {start + lines}"
    elif more:
        text += f"\n... line {start} is longer than {READ_PAGE_BYTES:,} bytes; this is its start"
    return text
