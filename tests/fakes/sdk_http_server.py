"""A small server built with the official MCP Python SDK, served over Streamable HTTP.

For `make interop` only: run with the interop venv's Python, `python sdk_http_server.py PORT`
(or `python sdk_http_server.py stdio` for the same server over stdio).
`unlock` adds the tool `secret` at run time and announces it, which reaches a client on its GET
stream (MCP 2025-11-25 and earlier) or its subscriptions/listen stream (2026-07-28); `ask_twice`
asks the user twice, as input rounds with a changing requestState in 2026-07-28.
"""
import sys

from typing import Annotated

from pydantic import BaseModel

try:
    from mcp.server.mcpserver import Context, MCPServer as Server  # SDK 2.x
    from mcp.server.mcpserver.resolve import Elicit, Resolve
except ImportError:
    from mcp.server.fastmcp import Context, FastMCP as Server  # SDK 1.x
    Elicit = Resolve = None

PORT = int(sys.argv[1]) if sys.argv[1] != "stdio" else None
server = Server("interop-http")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def secret(word: str) -> str:
    """Say a word back, reversed."""
    return word[::-1]


class Name(BaseModel):
    name: str = "Ada"


class Count(BaseModel):
    count: int = 3


def ask_name() -> "Elicit[Name]":
    return Elicit("Your name?", Name)


def ask_count(name: "Annotated[Name, Resolve(ask_name)]") -> "Elicit[Count]":
    return Elicit(f"How many, {name.name}?", Count)  # asked only once the name is known: a second round


if Resolve is not None:  # SDK 2.x: resolvers ask the client, as input rounds in 2026-07-28
    @server.tool()
    async def ask_twice(name: Annotated[Name, Resolve(ask_name)], count: Annotated[Count, Resolve(ask_count)]) -> str:
        """Ask for a name, then for a count."""
        return f"accept:{name.name} accept:{count.count}"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Add the tool `secret` and tell the client its tool list changed."""
    server.add_tool(secret)
    if getattr(ctx, "protocol_version", None) == "2026-07-28":
        await ctx.notify_tools_changed()  # to subscriptions/listen streams (SDK 2.x)
    else:
        await ctx.session.send_tool_list_changed()  # to the session's GET stream
    return "unlocked"


if __name__ == "__main__":
    if PORT is None:
        server.run("stdio")
        sys.exit()
    try:
        server.run("streamable-http", host="127.0.0.1", port=PORT)
    except TypeError:  # SDK 1.x takes host and port as settings
        server.settings.host, server.settings.port = "127.0.0.1", PORT
        server.run("streamable-http")
