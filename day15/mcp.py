"""MCP servers as registry tools (tutorial Day 15, section 4.4: the rest of mcp.ts).

Starts every server configured in .geekagent/mcp.json (each an mcp_client.McpClient), registers
its tools as mcp_<server>_<tool>, keeps the registry in step with the server, and stops them all.
Config lives in mcp_config.py, the session in mcp_client.py, prompts in permissions.py.
"""
import json
import re
import threading
import time
import zlib

import permissions
from mcp_client import McpClient
from mcp_config import MCP_CONFIG_PATH, McpError, load_mcp_config
from mcp_stdio import shorten
from tools import Tool, get_tool, register_tool, unregister_tool

# The OpenAI API refuses longer function names.
MAX_TOOL_NAME = 64
# The permission prompt shows at most this much of the arguments, so a huge payload stays readable.
PROMPT_ARGS_CHARS = 500


# --- the registry adapter ------------------------------------------------------------------

def registry_name(server: str, tool: str, hashed: bool = False) -> str:
    """mcp_<server>_<tool>, every character outside [a-zA-Z0-9_-] replaced by _."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp_{server}_{tool}")
    # Beyond the tutorial: a name over 64 characters (or, with hashed=True, one that collides) is
    # cut and ends in a short hash of server and tool, so it is valid for the API and stays distinct.
    if len(name) <= MAX_TOOL_NAME and not hashed:
        return name
    digest = f"{zlib.crc32(f'{server}/{tool}'.encode()):08x}"
    return f"{name[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def as_registry_tool(server: str, client: McpClient, info: dict, name: str | None = None) -> Tool:
    """Wrap one server tool as a registry tool that asks before every call."""
    name = name or registry_name(server, info["name"])

    def run(args: dict) -> str:
        shown = shorten(json.dumps(args, ensure_ascii=False), PROMPT_ARGS_CHARS)
        prompt = f"MCP server '{server}' wants to run tool '{info['name']}' ({name}) with {shown}. Allow?"
        if not permissions.authorize(name, prompt):
            return f"call cancelled: the user declined {name}."
        return client.call_tool(info["name"], args)

    description = f"[MCP:{server}] {info.get('description') or info['name']}"
    parameters = info.get("inputSchema") or {"type": "object", "properties": {}}
    return Tool(name, description, parameters, run, authorizes=True)


# --- the set of connected servers ------------------------------------------------------------

class ServerStatus:
    """One configured server as /mcp shows it: its registered tool names, or its error."""

    def __init__(self, name: str, client: McpClient | None = None, tools: list[str] | None = None,
                 error: str | None = None, connect_ms: float = 0.0, disabled: bool = False) -> None:
        self.name = name
        self.client = client  # only for a connected server
        self.tools = [] if tools is None else tools
        self.error = error
        self.connect_ms = connect_ms
        self.disabled = disabled


_statuses: dict[str, ServerStatus] = {}
# _servers_lock guards _statuses and the MCP part of the registry, which a server's tool-list
# change updates from a helper thread.
_servers_lock = threading.RLock()


def connect_mcp_servers(path: str = MCP_CONFIG_PATH) -> list[ServerStatus]:
    """Start every configured server and register its tools; one failure never stops the others."""
    configs = load_mcp_config(path)
    clients = {name: McpClient(name, config, on_tools_changed=_sync_tools)
               for name, config in configs.items() if not config.disabled}
    outcomes: dict[str, tuple[float, str | None]] = {}
    # Beyond the tutorial: servers start in parallel, so start-up takes as long as the slowest.
    threads = [threading.Thread(target=lambda c=c: outcomes.__setitem__(c.name, _start(c)),
                                name=f"mcp-{c.name}-connect") for c in clients.values()]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with _servers_lock:
            for name in configs:  # registered in config order, so names are stable
                _statuses[name] = _connected(name, clients.get(name), outcomes.get(name))
    except BaseException:  # Ctrl-C or SIGTERM during start-up: no server may outlive the agent
        for client in clients.values():
            client.stop()  # a start still under way then fails at its next request and cleans up
        raise
    return mcp_statuses()


def _start(client: McpClient) -> tuple[float, str | None]:
    """(connect time in ms, None), or (0, the error)."""
    started = time.monotonic()
    try:
        client.start()
    except McpError as e:
        return 0.0, str(e).removeprefix(f"{client.name}: ")
    return (time.monotonic() - started) * 1000, None


def _connected(name: str, client: McpClient | None, outcome: tuple | None) -> ServerStatus:
    if client is None:
        return ServerStatus(name, disabled=True)
    connect_ms, error = outcome or (0.0, "failed to start; see the error above")
    if error:
        return ServerStatus(name, error=error)
    return ServerStatus(name, client, _register_all(name, client), connect_ms=connect_ms)


# Beyond the tutorial: the registry follows a server's new tool list; policies stay.
def _sync_tools(client: McpClient) -> None:
    """Replace a server's registered tools by its current list."""
    with _servers_lock:
        status = _statuses.get(client.name)
        if status is None or status.client is not client:
            return  # stopped meanwhile
        for tool in status.tools:
            unregister_tool(tool)
        status.tools = _register_all(client.name, client)


def _register_all(server: str, client: McpClient) -> list[str]:
    """Register every tool of a server with default policy ask; returns the names they got."""
    names = []
    for info in client.tools:
        if not isinstance(info.get("name"), str):
            client.log(f"skipped a tool without a name: {shorten(json.dumps(info))}")
            continue
        name = registry_name(server, info["name"])
        if get_tool(name):  # Beyond the tutorial: a colliding name gets a distinct hashed one
            name = registry_name(server, info["name"], hashed=True)
        try:
            register_tool(as_registry_tool(server, client, info, name))
        except ValueError as e:
            client.log(f"skipped tool {info['name']}: {e}")
            continue
        permissions.ensure_tool_policy(name, "ask")
        names.append(name)
    return names


def mcp_statuses() -> list[ServerStatus]:
    """Per server, in config order: its registered tool names, or its error."""
    with _servers_lock:
        return list(_statuses.values())


def stop_mcp_servers() -> None:
    """Stop every server and remove its tools from the registry."""
    with _servers_lock:
        statuses = list(_statuses.values())
        _statuses.clear()
        for status in statuses:
            for tool in status.tools:
                unregister_tool(tool)
    for status in statuses:
        if status.client:
            status.client.stop()
