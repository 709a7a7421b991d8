"""The model as the full agent speaks to it, extending the lesson's chat.py.

  client.py       ModelChat: streamed, retried, bounded, kept-alive; tool search's choice of tools; sampling
  reply.py        a streamed reply assembled from its chunks; the history stored as the API wants it back
  reply_calls.py  the tool calls of one reply: bounded, at once where nobody asks, cancelled with the turn
  hints.py        what start-up says of the model endpoint: no key, plain http to another machine
"""
