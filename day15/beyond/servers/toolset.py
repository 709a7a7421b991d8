"""Beyond the tutorial: the full agent's tools. The lesson's registry (tools.py) only grows, which is all
the tutorial needs. The full agent's servers come, go and change their lists, so it keeps its own set
on top of the lesson's: the built-ins as the lesson registered them, a guarded one in place of a built-in
(`read`, folder/secret_files.py), and the servers' tools, which leave with their server.
"""
from collections.abc import Callable
from dataclasses import dataclass

import tools
from tools import Tool


@dataclass(kw_only=True)
class Asking(Tool):
    """A tool that words its own question: question(args) is (what the user is asked, whether it is asked
    even when the tool is allowed). Calls asks it through the approvals, before run(args)."""
    question: Callable[[dict], tuple[str, bool]]


@dataclass(kw_only=True)
class Gated(Tool):
    """A tool with a check and a question of its own (a skill's load: skills/loading.py), asked with the
    questions of its reply, before any call of it runs: gate(args) returns what runs it (a function giving its
    text), or raises with why it does not run."""
    gate: Callable[[dict], Callable[[], str]]


# Tool name -> Tool: what the agent added, in order; a built-in's replacement keeps the built-in's place.
_own: dict[str, Tool] = {}


def add(tool: Tool) -> None:
    """Add a tool; a name that is already taken is an error, never a silent replacement."""
    if get(tool.name) is not None:
        raise ValueError(f"tool {tool.name!r} is already registered")
    _own[tool.name] = tool


def replace_builtin(tool: Tool) -> None:
    """Put `tool` where the lesson's built-in of that name is; remove() never brings the built-in back."""
    if tools.get_tool(tool.name) is None:
        raise ValueError(f"no built-in tool {tool.name!r}")
    _own[tool.name] = tool


def remove(name: str) -> None:
    """Take a tool the agent added (a server's) out of the set; a built-in and its replacement stay."""
    if tools.get_tool(name) is None:
        _own.pop(name, None)


def get(name: str) -> Tool | None:
    return _own.get(name) or tools.get_tool(name)


def every() -> list[Tool]:
    """A snapshot of the set: the built-ins in the lesson's order, then the agent's in theirs."""
    own, builtins = dict(_own), tools.all_tools()
    names = {tool.name for tool in builtins}
    return [own.get(tool.name, tool) for tool in builtins] + [tool for tool in own.values() if tool.name not in names]


def specs() -> list[dict]:
    """The Chat Completions `tools` array of the whole set, as the lesson's openai_tools() makes its own."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in every()]

