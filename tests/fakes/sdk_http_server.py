"""A small server built with the official MCP Python SDK, served over Streamable HTTP.

For `make interop` only: run with the interop venv's Python, `python sdk_http_server.py PORT`
(or `python sdk_http_server.py stdio` for the same server over stdio).
`unlock` adds the tool `secret` at run time and announces it, which reaches a client on its GET
stream (MCP 2025-11-25 and earlier) or its subscriptions/listen stream (2026-07-28).
"""
import sys

try:
    from mcp.server.mcpserver import Context, MCPServer as Server  # SDK 2.x
except ImportError:
    from mcp.server.fastmcp import Context, FastMCP as Server  # SDK 1.x

PORT = int(sys.argv[1]) if sys.argv[1] != "stdio" else None
server = Server("interop-http")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def secret(word: str) -> str:
    """Say a word back, reversed."""
    return word[::-1]


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
