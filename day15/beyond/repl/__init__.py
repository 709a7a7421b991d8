"""The REPL around the agent (index.py runs it).

  commands.py    /tools, /call, /logs, /history, /last, /audit, /reset, /mcp login and logout
  resources.py   resources and prompts: /resources, /read, @server:uri, /prompts, /prompt
  unattended.py  -p and --json: one prompt to its end, nobody asked
  exits.py       SIGTERM and SIGHUP leave cleanly; what escaped a server's group is stopped
"""
