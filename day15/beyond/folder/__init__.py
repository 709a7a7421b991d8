"""The project folder and the user's own files.

  project.py    the folder found upward, adopted only when it is yours; reads and writes that follow no link
  trust.py      the folder's mcp.json, .env and GeekAgent.json take effect only once trusted
  mcp_files.py  the two mcp.json files, edited as a person would: locked, whole, never through a link
  question.py   what the trust question shows of each entry: the command line or URL, where variables go
  dotenv.py     the settings of a .env file
  skill_files.py  skills kept as folders (the project's .geekagent/skills/, yours), read once, bounded
  approvals.py  every "Allow?": asked through the console, `a` answers and pins kept in the user's state
  secret_files.py  `read` asks for a file of secrets even when it is allowed
  audit.py      one JSON line per tool call and per question a server asked
  tasks.py      the tasks whose outcome was not delivered yet, in the user's state, for /tasks
"""
