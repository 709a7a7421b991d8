"""Bytes in, messages out: the transports, which know no MCP.

  base.py    the Transport every kind is, the inbox it reports into, its errors, the message limit
  stdio.py   a server as a subprocess: its lines, its stderr drained, its exit noticed
  process.py starting and stopping it: its own process group, a safe environment, SIGTERM, SIGKILL
  sandbox.py a sandboxed stdio server ("sandbox", --sandbox): its grants shown, its launcher, its failures
  grants.py  what a sandboxed server may reach, every path resolved; never the home or the agent's own
  inside.py  what stays out of a granted folder: the user's secrets, and what runs later, read only
  walls.py   the walls this kernel gives (or the server does not start), the gaps it says, the launcher's rules
  confine.py the launcher that enforces them: limits, namespaces, Landlock, seccomp, no capabilities, then exec
  http.py    Streamable HTTP: one POST per message, kept-alive connections
  headers.py the MCP headers of a message (the version; in 2026-07-28 method, name, arguments)
  stream.py  the stream that stays open (the GET stream, or subscriptions/listen), read by one thread
"""
