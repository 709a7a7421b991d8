"""A small server built with the official MCP Python SDK, served over Streamable HTTP.

For `make interop` only: run with the interop venv's Python, `python sdk_http_server.py PORT`.
"""
import sys

try:
    from mcp.server.mcpserver import MCPServer as Server  # SDK 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server  # SDK 1.x

PORT = int(sys.argv[1])
server = Server("interop-http")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    try:
        server.run("streamable-http", host="127.0.0.1", port=PORT)
    except TypeError:  # SDK 1.x takes host and port as settings
        server.settings.host, server.settings.port = "127.0.0.1", PORT
        server.run("streamable-http")
