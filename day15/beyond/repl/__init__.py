"""The REPL around the agent.

  shell.py       the REPL beyond_agent.py runs: section 4.5 with the agent's console; the command line read
  commands.py    /tools, /call, /logs, /history, /last, /audit, /skills, /skill, /reset, /mcp login and logout
  resources.py   resources and prompts: /resources, /read, @server:uri, /prompts, /prompt
  options.py     the command line: flags, -p and --json, --help and --version
  unattended.py  -p and --json: one prompt to its end, nobody asked
  tasks.py       /tasks: the folder's tasks not seen to their end (a crash, Ctrl-C, taskTimeout)
  manage.py      `beyond_agent.py mcp add/add-json/remove/enable/disable/reset-project-choices`: the scopes
                 edited (local, project, user, as Claude Code's), nothing started
  listing.py     `mcp list` and `mcp get`: the entries of the three scopes, as a name is looked up
  validate.py    `mcp validate`: each server started, its lists counted, everything stopped; exit 1 if any fails
  imports.py     `mcp import`: the servers of Claude Desktop, Claude Code, Cursor, VS Code, Gemini or Codex
  verbs.py       what the verbs share: their failures and the reading of their command lines
  reload.py      /mcp reload, /mcp enable and disable: a running session follows the files
"""
