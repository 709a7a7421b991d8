"""What a server asks of the user (elicitation, sampling, roots), in both eras of MCP.

  handlers.py  the answers the agent gives the client: the questions, asked through the console
  form.py      the terminal form an elicitation is answered with, field by field
"""
