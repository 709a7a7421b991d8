"""Many servers as registry tools.

  connect.py     the set of servers: parallel start, the registry following list changes
  logins.py      /mcp login and /mcp logout of a remote server
  status.py      one server's status as /mcp shows it: up with its tools, starting, failed, needing a login
  toolset.py     the agent's tools: the lesson's built-ins (`read` guarded) and the servers', which come and go
  registry.py    a server's tools as registry tools: names, prompts, the resource reader, pins
  toolsearch.py  with many tools the model gets a few, and tool_search for the others
  results.py     a long result kept whole and read back by pages
  reading.py     the built-in `read` by pages: bounded in lines and bytes, regular files only
  calls.py       the model's tool calls run: asked through the approvals, masked, reported to the audit
  exits.py       SIGTERM and SIGHUP leave cleanly; what escaped a server's group is stopped
"""
