"""The agent's half of skills (the protocol's half is the client's: client/skills.py).

  catalog.py   every skill the agent can load (MCP servers', the folder's, yours), each named apart
  loading.py   load_skill, read_skill_file and /skill: the user's answer, bound to the skill's files
  cache.py     MCP servers' skill files, kept once verified, checked again on every use
"""
