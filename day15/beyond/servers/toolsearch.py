"""Beyond the tutorial: with many MCP tools the model gets a few, and searches for the others.

Five real servers already give a model 40 tool specs in every request, and an API takes 128 at most.
Past MAX_MCP_TOOLS MCP tools (or MAX_TOOL_SPECS_BYTES of specs), a request offers the agent's
own tools, the MCP tools that are always loaded (allowed by GeekAgent.json or by an `a`, or named in
their entry's "alwaysLoad": [...] or all of them with "alwaysLoad": true), then tool_search, then
what the searches of this conversation loaded, in the order they loaded it: the request's prefix
stays the same from turn to turn. What a search loaded is read from the conversation itself (the
first line of each tool_search result), so /reset forgets it. chat.py asks ToolSearch.choose() for
the specs; a search gives each matching server's best tool before any server's second.
"""
import json
import re
import sys
from collections.abc import Callable

from beyond.folder import approvals
from beyond.servers import toolset
from beyond.text import shorten
from tools import Tool

NAME = "tool_search"
# Past this many MCP tools the others wait for a search.
MAX_MCP_TOOLS = 40
# A search loads this many matches at most, and describes each in this many characters.
MATCHES = 5
SHOWN_DESCRIPTION_CHARS = 300
LOADED = "Loaded for this conversation: "

# The API refuses more tools than this in one request; the rest are left out, with a warning.
MAX_TOOLS = 128
# The tool specs of one request take at most this many bytes (about 50,000 tokens), so a server with
# huge descriptions or schemas cannot fill the model's context.
MAX_TOOL_SPECS_BYTES = 200_000
# A warning names at most this many of the tools it leaves out.
NAMES_SHOWN = 20


class Offered:
    """Never more tools than the API takes, nor more bytes of them than the budget; in registration
    order, so the request's prefix stays the same; one warning, each time the tools left out change."""

    def __init__(self) -> None:
        self.warned: list[str] = []  # what was left out when a warning last said so

    def __call__(self, specs: list[dict]) -> list[dict]:
        offered, left_out, size = [], [], 0
        for spec in specs:
            spec_size = len(json.dumps(spec))
            if len(offered) < MAX_TOOLS and size + spec_size <= MAX_TOOL_SPECS_BYTES:
                offered.append(spec)
                size += spec_size
            else:
                left_out.append(spec["function"]["name"])
        if left_out and left_out != self.warned:
            self.warned = left_out
            more = f" and {len(left_out) - NAMES_SHOWN:,} more" if len(left_out) > NAMES_SHOWN else ""
            print(f"warning: a request offers at most {MAX_TOOLS} tools and {MAX_TOOL_SPECS_BYTES:,} bytes of them; "
                  f"left out: {', '.join(left_out[:NAMES_SHOWN])}{more}", file=sys.stderr)
        return offered


class ToolSearch:
    """tool_search for one agent: always_loaded() names the MCP tools their entries always load
    (Servers.always_loaded), server_of(tool) the server a tool comes from, so one server cannot take
    every match, policy_for(tool) its policy now (Approvals.policy_for)."""

    def __init__(self, always_loaded: Callable[[], set[str]] = set,
                 server_of: Callable[[str], str] = lambda name: name,
                 policy_for: Callable[[str], str] = approvals.policy_for) -> None:
        self.always_loaded, self.server_of, self.policy_for = always_loaded, server_of, policy_for
        self.offered = Offered()

    def register(self) -> None:
        """Register tool_search (allowed unless GeekAgent.json says otherwise: it only reads the tool list)."""
        if toolset.get(NAME) is None:
            schema = {"type": "object", "required": ["query"], "properties": {"query": {
                "type": "string", "description": "words the tool's name or description would have, or its exact name"}}}
            toolset.add(Tool(NAME, "Find and load tools of the MCP servers that are not offered yet: the best "
                                     f"{MATCHES} matches of the query, with their descriptions; from then on they "
                                     "can be called like any other tool.", schema, self.search))
            approvals.ensure(NAME, "allow")

    def choose(self, specs: list[dict], messages: list[dict]) -> list[dict]:
        """The specs one request offers (ModelChat's choice): none that is denied (never run, so never
        offered); all others while they are few, else the loaded ones and tool_search; never more than the
        API takes."""
        allowed = [spec for spec in specs if self.policy_for(spec["function"]["name"]) != "deny"]
        return self.offered(choose(allowed, messages, self.always_loaded(), self.policy_for))

    def search(self, args: dict) -> str:
        return search(args, self.server_of, self.policy_for)


def _is_mcp(name: str) -> bool:
    return name.startswith("mcp_")


def choose(specs: list[dict], messages: list[dict], always: set[str],
           policy_for: Callable[[str], str]) -> list[dict]:
    """The specs one request offers: all of them while they are few, else the loaded ones and tool_search."""
    mcp = [spec for spec in specs if _is_mcp(spec["function"]["name"])]
    size = sum(len(json.dumps(spec)) for spec in specs)
    if len(mcp) <= MAX_MCP_TOOLS and size <= MAX_TOOL_SPECS_BYTES:
        return [spec for spec in specs if spec["function"]["name"] != NAME]
    by_name = {spec["function"]["name"]: spec for spec in specs}
    first = [spec for spec in specs if not _is_mcp(spec["function"]["name"]) and spec["function"]["name"] != NAME]
    first += [spec for spec in mcp if spec["function"]["name"] in always
              or policy_for(spec["function"]["name"]) == "allow"]
    offered = {spec["function"]["name"] for spec in first}
    found = [by_name[name] for name in dict.fromkeys(loaded(messages)) if name in by_name and name not in offered]
    return first + ([by_name[NAME]] if NAME in by_name else []) + found


def loaded(messages: list[dict]) -> list[str]:
    """The tools the searches of this conversation loaded, in the order they loaded them."""
    searches = {call.get("id") for m in messages if m.get("role") == "assistant"
                for call in m.get("tool_calls") or [] if call.get("function", {}).get("name") == NAME}
    names = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "tool" and message.get("tool_call_id") in searches and isinstance(content, str) \
                and content.startswith(LOADED):
            names += content[len(LOADED):].split("\n", 1)[0].split(", ")
    return names


def fair(ranked: list[Tool], server_of: Callable[[str], str]) -> list[Tool]:
    """The best match of each server first (in the order of those), then each one's second, and so on:
    a server whose tools are stuffed with keywords gets one place before every other server has one."""
    rounds: dict[str, int] = {}
    keyed = []
    for position, tool in enumerate(ranked):
        server = server_of(tool.name)
        rounds[server] = rounds.get(server, -1) + 1
        keyed.append((rounds[server], position, tool))
    return [tool for _, _, tool in sorted(keyed)]


def search(args: dict, server_of: Callable[[str], str],
           policy_for: Callable[[str], str]) -> str:
    """The best matches of the query among the MCP tools (or the one it names), loaded from now on."""
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError('"query" must be a few words (or a tool\'s name)')
    words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w and w != "mcp"]
    candidates = [t for t in toolset.every() if _is_mcp(t.name) and policy_for(t.name) != "deny"]
    matches = [t for t in candidates if t.name == query.strip()]  # an exact name loads that tool alone
    if not matches:
        scored = [(-score, order, tool) for order, tool in enumerate(candidates)
                  if (score := sum(3 * (w in tool.name.lower()) + (w in tool.description.lower()) for w in words))]
        matches = fair([tool for _, _, tool in sorted(scored)], server_of)[:MATCHES]
    if not matches:
        return (f"No tool matches {shorten(query, 100)!r}; try other words (there are "
                f"{sum(_is_mcp(t.name) for t in toolset.every())} MCP tools).")
    return LOADED + ", ".join(t.name for t in matches) + "\n" + "\n".join(
        f"- {t.name}: {shorten(t.description, SHOWN_DESCRIPTION_CHARS)}" for t in matches)
