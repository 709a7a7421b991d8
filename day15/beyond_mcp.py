"""The full client's published entry for scripts (`import beyond_mcp` with day15/ on the path).

Beyond the tutorial: everything lives in the beyond/ package; this hands on its public face, so
scripts written against this module keep working.
"""
from beyond import McpClient, McpError, connect_mcp_servers, mcp_statuses, stop_mcp_servers

__all__ = ["McpClient", "McpError", "connect_mcp_servers", "mcp_statuses", "stop_mcp_servers"]
