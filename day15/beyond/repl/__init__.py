"""The REPL around the agent (shell.py runs it).

  commands.py    /tools, /call, /logs, /history, /last, /audit, /reset, /mcp login and logout
  resources.py   resources and prompts: /resources, /read, @server:uri, /prompts, /prompt
  options.py     the command line: flags, -p and --json, --help and --version
  unattended.py  -p and --json: one prompt to its end, nobody asked
  tasks.py       /tasks: the folder's tasks not seen to their end (a crash, Ctrl-C, taskTimeout)
  model.py       the model as the agent speaks to it (ModelChat): streamed, retried, bounded; sampling
  hints.py       what start-up says of the model endpoint: no key, plain http to another machine
  exits.py       SIGTERM and SIGHUP leave cleanly; what escaped a server's group is stopped
  tutorial.py    --tutorial: index.py's own program, behind the folder's trust question
"""
