"""One MCP session: the tutorial's client (mcp.py) made real, with the twin's public methods and a request path
of its own.

  session.py      Session, the full client: the public operations: tools, resources, prompts, progress, pagination
  requests.py     the request path: per-server timeouts, cancellation, strict replies, what the transport reads
  pending.py      the requests awaiting replies: ids, their waiters, why none can come
  revisions.py    the handshake, the 2026-07-28 revision without one, and "auto"
  skills.py       the skills extension: skills listed, loaded and their files read, each checked
  skill_entries.py  a skill's entry (front matter, every file's digest and size), checked; the limits
  frontmatter.py  a SKILL.md's YAML front matter, read to compare it with what the server said of it
  frontmatter_values.py  the two compared field by field, each value as a YAML loader may have read it
  tasks.py        a tool call the server runs as a task (2026-07-28): polled, its questions answered, cancelled
  from_server.py  what a server sends unasked: its requests, log lines, progress, list changes
  link.py         the transport of a session, restarted after a crash, renewed when a server forgot it
  errors.py       the errors a caller tells apart: an error reply, no reply in time, a request refused
  capabilities.py what a server may ask and the client declares: the handlers it is given (Asks)
  roots.py        the folders a server is given as roots, from its entry and the project folder
  content.py      what a server answers, as text: content of every kind, messages parsed, lists paged
  config.py       the entries of mcp.json, checked
  schema.py       a tool's structured result checked against its outputSchema; x-mcp-header
"""
