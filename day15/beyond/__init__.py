"""Everything the tutorial leaves out: the Day 15 agent made ready for real servers, models and folders.

The parts, each a folder named for what it owns (imports point down this list; tests/test_layers.py
holds the arrows):
  agent.py    the one object index.py builds for the full agent
  repl/       the REPL around the agent: commands, resources and prompts, -p, the ways out
  servers/    many servers as registry tools: parallel start, names, pins, tool search, kept results
  folder/     the project folder and the user's own files: trust, approvals, the audit log
  asks/       what a server asks of the user: the handlers, the terminal form
  client/     one MCP session over the twin (mcp.py): revisions, what a server sends unasked, restarts
  auth/       OAuth for remote servers: discovery, the login, tokens, where a login may go
  wire/       bytes in, messages out, knowing no MCP: stdio and Streamable HTTP
  console.py  the one owner of the terminal
  text.py, waits.py, dirs.py   the bottom: text made safe to show, deadlines and waits, the XDG folders

The public face, for scripts: McpClient(name, entry).start(login=...), call_tool, stop, McpError,
connect_mcp_servers, mcp_statuses, stop_mcp_servers.
"""
from beyond.servers.servers import McpClient, McpError, connect_mcp_servers, mcp_statuses, stop_mcp_servers

__all__ = ["McpClient", "McpError", "connect_mcp_servers", "mcp_statuses", "stop_mcp_servers"]
