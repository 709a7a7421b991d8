"""One MCP session over the tutorial's client (mcp.py), through the twin's hooks.

  session.py      McpClient: timeouts and cancellation, progress, pagination, strict replies
  revisions.py    the handshake, the 2026-07-28 revision without one, and "auto"
  from_server.py  what a server sends unasked: its requests, log lines, progress, list changes
  link.py         the transport of a session, restarted after a crash, renewed when a server forgot it
  config.py       the entries of mcp.json, checked
  schema.py       a tool's structured result checked against its outputSchema
"""
