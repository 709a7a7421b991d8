"""The tool registry and the built-in tools (tutorial Day 4, extended by Day 15).

Owns one dict of tools, the OpenAI `tools` array built from it, and run_tool(), the single place
where a tool call's failure becomes text for the model. MCP tools are added by mcp.py.
"""
import json
import os
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


# Tool name -> Tool, in registration order.
_registry: dict[str, Tool] = {}


def register_tool(tool: Tool) -> None:
    """Add a tool; a name that is already taken is an error, never a silent replacement."""
    if tool.name in _registry:
        raise ValueError(f"tool {tool.name!r} is already registered")
    _registry[tool.name] = tool


def get_tool(name: str) -> Tool | None:
    return _registry.get(name)


def all_tools() -> list[Tool]:
    """A snapshot of the registry in registration order."""
    return list(_registry.values())


def openai_tools() -> list[dict]:
    """The Chat Completions `tools` array: every tool, a denied one too (run_tool refuses it)."""
    return [{"type": "function",
             "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in all_tools()]


# Beyond the tutorial: a tool result adds at most this much text to the conversation (about 25,000
# tokens); the rest is cut with a note saying how much, so one tool cannot flood the context.
MAX_RESULT_CHARS = 100_000
# What the model reads for a call the user did not allow.
DECLINED = "call cancelled: the user declined {name}."


def run_tool(name: str, arguments_json: str) -> str:
    """Run one tool call from the model; every failure comes back as text, never as an exception."""
    tool = get_tool(name)
    if tool is None:
        return f"Error: unknown tool {name[:100]!r}."
    args = parse_arguments(name, arguments_json)
    if isinstance(args, str):
        return args
    if permissions.policy_for(name) == "deny":
        return f"Denied: the tool {name} is not allowed by the user's policy; do not retry it."
    prompt = f"Run {name} with {json.dumps(args, ensure_ascii=False)}?"
    if not tool.authorizes and not permissions.authorize(name, prompt):
        return DECLINED.format(name=name)
    try:
        return cut(tool.run(args), MAX_RESULT_CHARS)
    except Exception as e:  # any failure of any tool becomes text for the model, here and only here
        return cut(f"Error: {name} failed: {e}", MAX_RESULT_CHARS)


def parse_arguments(name: str, arguments_json: str) -> dict | str:
    """The call's arguments as a dict, or the error text for the model."""
    try:
        args = json.loads(arguments_json or "{}")
    except (ValueError, RecursionError) as e:  # RecursionError: nested deeper than Python parses
        return f"Error: the arguments for {name} are not valid JSON ({e}); send a JSON object."
    if not isinstance(args, dict):
        return f"Error: the arguments for {name} must be a JSON object."
    return args


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, ending in a note of how many were cut."""
    if len(text) <= limit:
        return text
    note = f"[... {len(text) - limit:,} more characters cut: the result was {len(text):,} long]"
    return f"{text[:limit]}\n{note}"


# --- built-in tools: read-only, confined to the project root -------------------------------

def register_builtin_tools(root: str = ".") -> None:
    """Register get_current_time, ls and read, confined to root (the working directory)."""
    base = os.path.realpath(root)
    register_tool(Tool("get_current_time", "The current local date and time.",
                       {"type": "object", "properties": {}}, lambda args: _current_time()))
    register_tool(Tool("ls", "List a directory inside the project.",
                       _path_schema(), lambda args: _ls(base, args.get("path", "."))))
    register_tool(Tool("read", "Read a text file inside the project.",
                       _path_schema(), lambda args: _read(base, args.get("path", ""))))


def _path_schema() -> dict:
    path = {"type": "string", "description": "relative to the project root"}
    return {"type": "object", "properties": {"path": path}}


def _current_time() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z (UTC%z)")


def inside(base: str, path: str) -> str:
    """Resolve path under base; refuse absolute paths, '..' and symlinks that lead outside."""
    if not isinstance(path, str) or os.path.isabs(path) \
            or ".." in path.replace("\\", "/").split("/"):
        raise ValueError(f"path {path!r} must be relative to the project root, without '..'")
    target = os.path.realpath(os.path.join(base, path))
    if os.path.commonpath([base, target]) != base:
        raise ValueError(f"path {path!r} leads outside the project root")
    return target


def _ls(base: str, path: str) -> str:
    with os.scandir(inside(base, path)) as entries:
        names = sorted(e.name + ("/" if e.is_dir() else "") for e in entries)
    return "\n".join(names) or "(empty directory)"


def _read(base: str, path: str) -> str:
    """The start of the file's text: at most MAX_RESULT_CHARS characters."""
    with open(inside(base, path), encoding="utf-8", errors="replace") as f:
        return f.read(MAX_RESULT_CHARS)
