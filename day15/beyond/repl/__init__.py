"""The REPL around the agent.

  shell.py       the REPL index.py runs: section 4.5 with the agent's console; the command line read
  commands.py    /tools, /call, /logs, /history, /last, /audit, /reset, /mcp login and logout
  resources.py   resources and prompts: /resources, /read, @server:uri, /prompts, /prompt
  options.py     the command line: flags, -p and --json, --help and --version
  unattended.py  -p and --json: one prompt to its end, nobody asked
  tasks.py       /tasks: the folder's tasks not seen to their end (a crash, Ctrl-C, taskTimeout)
  tutorial.py    --tutorial: index.py's own program, behind the folder's trust question
"""
